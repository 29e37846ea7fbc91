//! What CatBoost 1.2.10 does with a model once its buffers are read, checked on the values:
//! the places where its loader or evaluator indexes one array by another without a bounds check
//! (a FAIL: the loader reads outside the model, or readers compute different models), and the
//! places where the file says something CatBoost recomputes or ignores (a LEAD).
//!
//! Sources, all at tag v1.2.10: `catboost/libs/model/model.cpp` (`TModelTrees::CalcBinFeatures`,
//! which indexes `BinFeatures` by every `TreeSplits` entry and recomputes `RepackedBins`;
//! `CalcFirstLeafOffsets`, `1 << TreeSizes[i]` leaves of `ApproxDimension` values per oblivious
//! tree; `SetScaleAndBias`, which refuses non-finite values and a `Bias` that does not fit the
//! dimension); `static_ctr_provider.cpp` (`TStaticCtrProvider::CalcCtrs`, which reads a CTR
//! table's blob at the bucket's index without a bounds check); `dense_hash_view.h`
//! (`TDenseIndexHashView::GetIndex`, which probes `hash & (buckets - 1)` until it meets the hash
//! or an empty bucket, `Hash == Max<ui64>()`); `ctr_data.cpp` (`TCtrData::Load`, which keys the
//! tables by their `TModelCtrBase`, the last of two equal keys winning).

use crate::container::{Container, PlacedCtrTable};
use crate::flatbuf::Vector;
use crate::schema::{CtrBase, Trees};
use socair_plugin_kit::model::Findings;
use socair_plugin_kit::Severity;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// `MAX_VALUES_PER_BIN` (`model.h`): borders per bin feature bucket.
const MAX_VALUES_PER_BIN: u64 = 254;

/// `TBucket` (`dense_hash_view.h`), packed: a `ui64` hash and a `ui32` index.
pub const BUCKET_LEN: usize = 12;

/// An array of a buffer, read from the whole file.
#[derive(Debug, Clone, Copy)]
pub struct Arr<'a> {
    data: &'a [u8],
    start: usize,
    /// Elements.
    pub len: usize,
    elem: usize,
}

impl<'a> Arr<'a> {
    /// The array `v` of the buffer whose first byte is byte `base` of `data` (none: empty).
    pub fn new(data: &'a [u8], base: u64, v: Option<Vector>) -> Self {
        match v {
            Some(v) => Arr {
                data,
                start: base as usize + v.data(),
                len: v.len,
                elem: v.elem,
            },
            None => Arr {
                data,
                start: 0,
                len: 0,
                elem: 1,
            },
        }
    }

    fn bytes<const N: usize>(&self, i: usize, at: usize) -> [u8; N] {
        let p = self.start + i * self.elem + at;
        self.data
            .get(p..p + N)
            .and_then(|b| b.try_into().ok())
            .unwrap_or([0; N])
    }

    /// Element `i` as an `int`.
    pub fn i32(&self, i: usize) -> i32 {
        i32::from_le_bytes(self.bytes(i, 0))
    }

    /// Element `i` as a `uint`.
    pub fn u32(&self, i: usize) -> u32 {
        u32::from_le_bytes(self.bytes(i, 0))
    }

    /// The `u32` at byte `at` of element `i`.
    pub fn u32_in(&self, i: usize, at: usize) -> u32 {
        u32::from_le_bytes(self.bytes(i, at))
    }

    /// The `u16` at byte `at` of element `i`.
    pub fn u16_in(&self, i: usize, at: usize) -> u16 {
        u16::from_le_bytes(self.bytes(i, at))
    }

    /// The `u8` at byte `at` of element `i`.
    pub fn u8_in(&self, i: usize, at: usize) -> u8 {
        self.bytes::<1>(i, at)[0]
    }

    /// Element `i` as a `double`.
    pub fn f64(&self, i: usize) -> f64 {
        f64::from_le_bytes(self.bytes(i, 0))
    }

    /// The `u64` at byte `at` of element `i`.
    pub fn u64_in(&self, i: usize, at: usize) -> u64 {
        u64::from_le_bytes(self.bytes(i, at))
    }
}

/// What the checks learnt about the model, for its summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Trees.
    pub trees: usize,
    /// Whether every tree is oblivious (symmetric).
    pub oblivious: bool,
    /// The deepest oblivious tree, or the largest non-symmetric one in nodes.
    pub largest: i64,
    /// Leaf values.
    pub leaf_values: usize,
    /// Bin features (the splits a tree may use).
    pub bin_features: usize,
}

/// The file offset of the core's first byte.
const CORE_BASE: u64 = 8;

fn fail(f: &mut Findings, at: u64, reason: impl Into<String>) {
    f.add(Severity::Fail, format!("byte {at}"), reason);
}

fn lead(f: &mut Findings, at: u64, reason: impl Into<String>) {
    f.add(Severity::Lead, format!("byte {at}"), reason);
}

/// Every check of a read container.
pub fn check(c: &Container, data: &[u8], f: &mut Findings) -> Facts {
    let mut facts = Facts::default();
    if let Some(t) = &c.core.trees {
        facts = trees(t, data, f);
        bias(t, data, f);
        features(t, c, f);
        let bins = bin_features(t);
        facts.bin_features = bins.len();
        splits(t, data, &bins, facts.oblivious, f);
    }
    ctr_tables(c, data, f);
    facts
}

/// The tree arrays agree: sizes, start offsets, splits, leaves.
fn trees(t: &Trees, data: &[u8], f: &mut Findings) -> Facts {
    let sizes = Arr::new(data, CORE_BASE, t.tree_sizes);
    let starts = Arr::new(data, CORE_BASE, t.tree_start_offsets);
    let splits = Arr::new(data, CORE_BASE, t.tree_splits);
    let values = Arr::new(data, CORE_BASE, t.leaf_values);
    let weights = Arr::new(data, CORE_BASE, t.leaf_weights);
    let steps = Arr::new(data, CORE_BASE, t.step_nodes);
    let to_leaf = Arr::new(data, CORE_BASE, t.node_to_leaf);
    let oblivious = steps.len == 0 && to_leaf.len == 0;
    let mut facts = Facts {
        trees: sizes.len,
        oblivious,
        leaf_values: values.len,
        ..Facts::default()
    };
    let at = t.at;
    let dim = t.approx_dimension;
    if dim < 1 {
        fail(
            f,
            at,
            format!("ApproxDimension is {dim}: CatBoost divides and multiplies leaf offsets by it"),
        );
        return facts;
    }
    let dim = dim as usize;
    if !values.len.is_multiple_of(dim) {
        fail(
            f,
            at,
            format!(
                "{} leaf values do not divide into ApproxDimension {dim}",
                values.len
            ),
        );
    }
    if weights.len != 0 && weights.len * dim != values.len {
        fail(f, at, format!("{} leaf weights for {} leaf values of dimension {dim}: CatBoost reads one weight per leaf", weights.len, values.len));
    }
    if starts.len != sizes.len {
        fail(
            f,
            at,
            format!("{} tree start offsets for {} trees", starts.len, sizes.len),
        );
        return facts;
    }
    let mut running = 0i64;
    for i in 0..sizes.len {
        let (size, start) = (sizes.i32(i), starts.i32(i));
        if size < 0 || i64::from(start) != running {
            fail(f, at, format!("tree {i} has size {size} and starts at split {start}, where the sizes before it put it at {running}: CatBoost reads its splits from the start offset"));
            return facts;
        }
        running += i64::from(size);
        facts.largest = facts.largest.max(i64::from(size));
    }
    if running != splits.len as i64 {
        fail(
            f,
            at,
            format!(
                "the trees' sizes add up to {running} splits, and TreeSplits holds {}",
                splits.len
            ),
        );
        return facts;
    }
    if oblivious {
        oblivious_leaves(&sizes, values.len, dim, at, f);
    } else {
        non_symmetric(&sizes, &starts, &steps, &to_leaf, values.len, dim, at, f);
    }
    facts
}

/// `CalcFirstLeafOffsets`: an oblivious tree of depth `d` owns `2^d * ApproxDimension` leaf
/// values, in order; together they must be exactly the leaf values (more and the evaluator reads
/// past them, fewer and values are left that no tree uses).
fn oblivious_leaves(sizes: &Arr, values: usize, dim: usize, at: u64, f: &mut Findings) {
    let mut needed = 0u64;
    for i in 0..sizes.len {
        let depth = sizes.i32(i);
        if depth > 30 {
            fail(f, at, format!("oblivious tree {i} has depth {depth}: CatBoost computes its leaf count as 1 << depth in an int"));
            return;
        }
        needed = needed.saturating_add((1u64 << depth).saturating_mul(dim as u64));
    }
    if needed != values as u64 {
        fail(f, at, format!("the oblivious trees own {needed} leaf values and the model holds {values}: the evaluator indexes leaf values by the trees' depths without a bounds check"));
    }
}

/// Non-symmetric trees (`TNonSymmetricTreeStepNode`: a step to the left and right child, 0
/// where the path ends and the node's leaf is taken): every step stays in its tree, every node
/// where a path ends has a leaf inside the leaf values, and every leaf value belongs to exactly
/// one node.
#[allow(clippy::too_many_arguments)]
fn non_symmetric(
    sizes: &Arr,
    starts: &Arr,
    steps: &Arr,
    to_leaf: &Arr,
    values: usize,
    dim: usize,
    at: u64,
    f: &mut Findings,
) {
    let nodes: usize = (0..sizes.len).map(|i| sizes.i32(i).max(0) as usize).sum();
    if steps.len != nodes || to_leaf.len != nodes {
        fail(
            f,
            at,
            format!(
                "{} step nodes and {} node-to-leaf entries for {nodes} tree nodes",
                steps.len, to_leaf.len
            ),
        );
        return;
    }
    let mut owned = vec![false; values / dim];
    for tree in 0..sizes.len {
        let start = starts.i32(tree) as usize;
        let end = start + sizes.i32(tree) as usize;
        if start == end {
            fail(f, at, format!("non-symmetric tree {tree} has no nodes: the evaluator reads its root from the next tree"));
            return;
        }
        for node in start..end {
            let (left, right) = (
                steps.u16_in(node, 0) as usize,
                steps.u16_in(node, 2) as usize,
            );
            if (left != 0 && node + left >= end) || (right != 0 && node + right >= end) {
                fail(f, at, format!("node {node} of tree {tree} steps to node {} or {}, outside its tree (nodes {start}..{end})", node + left, node + right));
                return;
            }
            if left != 0 && right != 0 {
                continue;
            }
            let leaf = to_leaf.u32(node) as usize;
            if !leaf.is_multiple_of(dim) || leaf + dim > values {
                fail(f, at, format!("node {node} of tree {tree} takes leaf value {leaf}, outside the {values} leaf values or off the dimension {dim}"));
                return;
            }
            let slot = &mut owned[leaf / dim];
            if *slot {
                fail(f, at, format!("leaf value {leaf} is taken by two nodes: readers that count leaves per tree and those that follow the nodes disagree"));
                return;
            }
            *slot = true;
        }
    }
    if let Some(unused) = owned.iter().position(|o| !o) {
        fail(f, at, format!("leaf value {} belongs to no node: CatBoost's leaf counts per tree and its evaluator disagree on it", unused * dim));
    }
}

/// `SetScaleAndBias`: a finite scale, a finite bias per dimension (`MultiBias`, or `Bias` when
/// the dimension is 1).
fn bias(t: &Trees, data: &[u8], f: &mut Findings) {
    if !t.scale.is_finite() {
        fail(
            f,
            t.at,
            format!(
                "Scale is {}: CatBoost's loader refuses it (\"Invalid scale\")",
                t.scale
            ),
        );
    }
    let multi = Arr::new(data, CORE_BASE, t.multi_bias);
    if multi.len == 0 {
        if !t.bias.is_finite() || (t.approx_dimension != 1 && t.bias != 0.0) {
            fail(
                f,
                t.at,
                format!(
                    "Bias is {} for dimension {}: CatBoost's loader refuses it",
                    t.bias, t.approx_dimension
                ),
            );
        }
        return;
    }
    if multi.len as i64 != i64::from(t.approx_dimension) {
        fail(f, t.at, format!("MultiBias holds {} values for dimension {}: CatBoost's loader refuses it (\"Inappropraite dimension of bias\")", multi.len, t.approx_dimension));
    }
    if (0..multi.len).any(|i| !multi.f64(i).is_finite()) {
        fail(
            f,
            t.at,
            "MultiBias holds a non-finite value: CatBoost's loader refuses it (\"Invalid bias\")",
        );
    }
}

/// Each feature's own values, and what the others refer to.
fn features(t: &Trees, c: &Container, f: &mut Findings) {
    for ff in &t.float_features {
        if ff.index < 0 || ff.flat_index < 0 {
            fail(f, ff.at, format!("a float feature has index {} and flat index {}: CatBoost sizes its feature vectors by them", ff.index, ff.flat_index));
        }
        if !(0..=2).contains(&ff.nan_treatment) {
            fail(
                f,
                ff.at,
                format!(
                    "a float feature's NanValueTreatment is {}, outside AsIs, AsFalse, AsTrue",
                    ff.nan_treatment
                ),
            );
        }
    }
    for s in t
        .cat_features
        .iter()
        .chain(&t.text_features)
        .chain(&t.embedding_features)
    {
        if s.index < 0 || s.flat_index < 0 {
            fail(f, s.at, format!("a feature has index {} and flat index {}: CatBoost sizes its feature vectors by them", s.index, s.flat_index));
        }
    }
    let cat: HashSet<i32> = t.cat_features.iter().map(|c| c.index).collect();
    let float: HashSet<i32> = t.float_features.iter().map(|c| c.index).collect();
    let text: HashSet<i32> = t.text_features.iter().map(|c| c.index).collect();
    let embedding: HashSet<i32> = t.embedding_features.iter().map(|c| c.index).collect();
    for oh in &t.one_hot_features {
        if !cat.contains(&oh.cat_index) {
            fail(f, oh.at, format!("a one-hot feature splits categorical feature {}, which the model does not have", oh.cat_index));
        }
    }
    for e in &t.estimated_features {
        if !e.has_calcer {
            fail(f, e.at, "an estimated feature has no CalcerId, which CatBoost's loader reads without checking (a null dereference)");
        }
        let (kind, part, collection) = match e.source_type {
            0 => ("text", &text, "text_process"),
            1 => ("embedding", &embedding, "embed_process"),
            other => {
                fail(f, e.at, format!("an estimated feature's SourceFeatureType is {other}, neither Text nor Embedding"));
                continue;
            }
        };
        if !c.parts.iter().any(|p| p.starts_with(collection)) {
            fail(f, e.at, format!("an estimated feature is computed from a {kind} feature, and the model has no {kind} processing collection to compute it"));
        }
        if !part.contains(&e.source_index) {
            fail(f, e.at, format!("an estimated feature is computed from {kind} feature {}, which the model does not have", e.source_index));
        }
    }
    // A base CatBoost's caching serializer shares is checked once, whatever refers to it.
    let mut checked = HashSet::new();
    for cf in &t.ctr_features {
        let Some(base) = &cf.base else {
            fail(f, t.at, "a CTR feature has no TModelCtr or no Base, which CatBoost's loader reads without checking (a null dereference)");
            continue;
        };
        if checked.insert(Rc::as_ptr(base) as usize) {
            ctr_base(base, &cat, &float, f);
        }
    }
}

/// A CTR's base: its type, and the features its projection names.
fn ctr_base(base: &CtrBase, cat: &HashSet<i32>, float: &HashSet<i32>, f: &mut Findings) {
    if !(0..=5).contains(&base.ctr_type) {
        fail(
            f,
            base.at,
            format!(
                "a CTR's type is {}, outside ECtrType (Borders .. FeatureFreq)",
                base.ctr_type
            ),
        );
    }
    let combination = &base.combination;
    if let Some(missing) = combination.cat_features.iter().find(|i| !cat.contains(i)) {
        fail(f, base.at, format!("a CTR is computed over categorical feature {missing}, which the model does not have (CatBoost's CalcCtrs throws)"));
    }
    if let Some((missing, _)) = combination
        .float_splits
        .iter()
        .find(|(i, _)| !float.contains(i))
    {
        fail(
            f,
            base.at,
            format!(
                "a CTR's projection splits float feature {missing}, which the model does not have"
            ),
        );
    }
    if let Some((missing, _)) = combination
        .one_hot_splits
        .iter()
        .find(|(i, _)| !cat.contains(i))
    {
        fail(f, base.at, format!("a CTR's projection splits categorical feature {missing}, which the model does not have"));
    }
}

/// One bin feature: its bucket (`FeatureIndex`), its split within the bucket, and whether it is
/// a one-hot value.
type Bin = (u32, u8, bool);

/// `CalcBinFeatures`: the bin features in CatBoost's order (used float features, estimated
/// features, one-hot features, CTRs), each border or value one split, 254 to a bucket.
fn bin_features(t: &Trees) -> Vec<Bin> {
    let mut groups: Vec<(usize, bool)> = Vec::new();
    groups.extend(
        t.float_features
            .iter()
            .map(|x| (x.borders.map_or(0, |v| v.len), false)),
    );
    groups.extend(
        t.estimated_features
            .iter()
            .map(|x| (x.borders.map_or(0, |v| v.len), false)),
    );
    groups.extend(
        t.one_hot_features
            .iter()
            .map(|x| (x.values.map_or(0, |v| v.len), true)),
    );
    groups.extend(
        t.ctr_features
            .iter()
            .map(|x| (x.borders.map_or(0, |v| v.len), false)),
    );
    let mut bins = Vec::new();
    let mut bucket = 0u64;
    for (count, one_hot) in groups {
        for b in 0..count as u64 {
            // A bucket count fits 32 bits: borders are 4-byte elements of a buffer under 2 GiB.
            let feature = (bucket + b / MAX_VALUES_PER_BIN) as u32;
            bins.push((feature, (b % MAX_VALUES_PER_BIN + 1) as u8, one_hot));
        }
        bucket += (count as u64).div_ceil(MAX_VALUES_PER_BIN);
    }
    bins
}

/// Every `TreeSplits` entry indexes the bin features (`CalcBinFeatures` indexes without a bounds
/// check); `RepackedBins`, which the loader recomputes from them and never reads, says the same.
fn splits(t: &Trees, data: &[u8], bins: &[Bin], oblivious: bool, f: &mut Findings) {
    let splits = Arr::new(data, CORE_BASE, t.tree_splits);
    let mut expected: Vec<(u16, u8, u8)> = Vec::with_capacity(splits.len);
    if bins.is_empty() && splits.len > 0 {
        if oblivious || (0..splits.len).any(|i| splits.i32(i) != 0) {
            fail(f, t.at, "the trees split on features the model does not have (no float borders, one-hot values or CTR borders): CatBoost's loader refuses it");
            return;
        }
        expected.resize(splits.len, (0, 0, 0));
    } else {
        for i in 0..splits.len {
            let s = splits.i32(i);
            let Some(&(feature, split, one_hot)) =
                usize::try_from(s).ok().and_then(|s| bins.get(s))
            else {
                fail(f, t.at, format!("split {i} of the trees is bin feature {s}, and the model has {} (CatBoost indexes them without a bounds check)", bins.len()));
                return;
            };
            let Ok(feature) = u16::try_from(feature) else {
                fail(f, t.at, format!("split {i} of the trees is in bin feature bucket {feature}, past 0xffff: CatBoost's loader throws (\"Too many features in model\")"));
                return;
            };
            expected.push(if one_hot {
                (feature, !split, 0xff)
            } else {
                (feature, 0, split)
            });
        }
    }
    let stored = Arr::new(data, CORE_BASE, t.repacked_bins);
    if stored.len == 0 {
        return;
    }
    let same = stored.len == expected.len()
        && expected
            .iter()
            .enumerate()
            .all(|(i, &(feature, xor, split))| {
                (stored.u16_in(i, 0), stored.u8_in(i, 2), stored.u8_in(i, 3))
                    == (feature, xor, split)
            });
    if !same {
        lead(f, t.at, "RepackedBins differ from what CatBoost 1.2.10 computes from the splits on load (it replaces them): a reader that trusts the stored bins evaluates another model");
    }
}

/// Ints per entry of a CTR table's blob, by the CTR type (`TStaticCtrProvider::CalcCtrs`).
fn ints_per_entry(ctr_type: i8, classes: i32) -> Option<usize> {
    match ctr_type {
        0 => Some(classes.max(2) as usize),
        1 if classes >= 1 => Some(classes as usize),
        2 | 3 => Some(2),
        4 | 5 => Some(1),
        _ => None,
    }
}

/// The CTR tables: one per CTR base the model's CTR features use, each a sound hash table.
fn ctr_tables(c: &Container, data: &[u8], f: &mut Findings) {
    let mut by_key: HashMap<_, usize> = HashMap::new();
    for (i, t) in c.ctr_tables.iter().enumerate() {
        if by_key.insert(t.table.base.key(), i).is_some() {
            fail(f, t.base, format!("CTR table {i} has the same CTR base as an earlier one: CatBoost keeps the last, readers that keep the first compute other CTRs"));
        }
        ctr_table(i, t, data, f);
    }
    let ctrs = c
        .core
        .trees
        .as_ref()
        .map(|t| t.ctr_features.as_slice())
        .unwrap_or_default();
    let mut used = HashSet::new();
    // Each distinct base is looked up once (hashing a base hashes its whole combination).
    let mut table_of: HashMap<usize, Option<usize>> = HashMap::new();
    for cf in ctrs {
        let Some(base) = &cf.base else { continue };
        let table = *table_of
            .entry(Rc::as_ptr(base) as usize)
            .or_insert_with(|| by_key.get(&base.key()).copied());
        match table {
            Some(i) => {
                used.insert(i);
                target_border(cf.target_border, base, &c.ctr_tables[i], f);
            }
            None if !c.has_ctr_part => {
                fail(f, base.at, "the model has CTR features and no static CTR provider part: CatBoost cannot compute them");
                return;
            }
            None => fail(
                f,
                base.at,
                "a CTR feature has no CTR table with its base: CatBoost's evaluator throws on it",
            ),
        }
    }
    for (i, t) in c.ctr_tables.iter().enumerate() {
        if !used.contains(&i) {
            lead(f, t.base, format!("CTR table {i} is used by no CTR feature of the model: data no evaluation reads"));
        }
    }
}

/// A CTR's `TargetBorderIdx` picks a count inside each entry of its table.
fn target_border(border: i32, base: &Rc<CtrBase>, t: &PlacedCtrTable, f: &mut Findings) {
    let classes = t.table.target_classes;
    let inside = match base.ctr_type {
        1 => border >= 0 && border < classes,
        0 if classes > 2 => border >= 0 && border < classes,
        _ => true,
    };
    if !inside {
        fail(f, base.at, format!("a CTR reads count {border} of entries holding {classes}: CatBoost reads it without a bounds check"));
    }
}

/// One CTR table: its buckets are a power of two with an empty one, each used bucket's index
/// inside the blob, no hash twice.
fn ctr_table(i: usize, t: &PlacedCtrTable, data: &[u8], f: &mut Findings) {
    let table = &t.table;
    let hash = &table.index_hash;
    if !hash.byte_len().is_multiple_of(BUCKET_LEN) {
        fail(
            f,
            t.base,
            format!(
                "CTR table {i}'s IndexHashRaw is {} bytes, not whole 12-byte buckets",
                hash.byte_len()
            ),
        );
        return;
    }
    let buckets = hash.byte_len() / BUCKET_LEN;
    if !buckets.is_power_of_two() {
        fail(f, t.base, format!("CTR table {i} has {buckets} buckets, not a power of two: CatBoost probes hash & (buckets - 1)"));
        return;
    }
    let Some(ints) = ints_per_entry(table.base.ctr_type, table.target_classes) else {
        fail(
            f,
            t.base,
            format!(
                "CTR table {i} has CTR type {} and {} target classes, which no entry size fits",
                table.base.ctr_type, table.target_classes
            ),
        );
        return;
    };
    let entry = 4 * ints;
    if !table.blob.byte_len().is_multiple_of(entry) {
        fail(
            f,
            t.base,
            format!(
                "CTR table {i}'s blob is {} bytes, not whole {entry}-byte entries",
                table.blob.byte_len()
            ),
        );
        return;
    }
    let entries = (table.blob.byte_len() / entry) as u64;
    let arr = Arr {
        data,
        start: t.base as usize + hash.data(),
        len: buckets,
        elem: BUCKET_LEN,
    };
    let mut seen = HashSet::new();
    let mut empty = false;
    for b in 0..buckets {
        let h = arr.u64_in(b, 0);
        if h == u64::MAX {
            empty = true;
            continue;
        }
        let index = u64::from(arr.u32_in(b, 8));
        if index >= entries {
            fail(f, t.base, format!("bucket {b} of CTR table {i} points at entry {index} of {entries}: CatBoost reads it without a bounds check"));
            return;
        }
        if !seen.insert(h) {
            fail(f, t.base, format!("CTR table {i} holds hash {h:#x} twice: lookups find one, readers that scan find the other"));
            return;
        }
    }
    if !empty {
        fail(f, t.base, format!("CTR table {i} has no empty bucket: CatBoost's lookup of a category it has not seen never ends"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{FloatFeature, OneHotFeature};

    fn vector(len: usize, elem: usize) -> Option<Vector> {
        Some(Vector { pos: 0, len, elem })
    }

    #[test]
    fn bin_features_fill_buckets_of_254_in_catboosts_order() {
        let t = Trees {
            float_features: vec![FloatFeature {
                index: 0,
                flat_index: 0,
                borders: vector(300, 4),
                name: None,
                nan_treatment: 0,
                at: 0,
            }],
            one_hot_features: vec![OneHotFeature {
                cat_index: 0,
                values: vector(2, 4),
                at: 0,
            }],
            ..Trees::default()
        };
        let bins = bin_features(&t);
        assert_eq!(bins.len(), 302);
        assert_eq!(bins[0], (0, 1, false));
        assert_eq!(bins[253], (0, 254, false));
        assert_eq!(bins[254], (1, 1, false));
        assert_eq!(bins[300], (2, 1, true));
        assert_eq!(bins[301], (2, 2, true));
    }

    #[test]
    fn oblivious_trees_own_exactly_their_leaves() {
        let mut data = vec![0u8; 4];
        data.extend_from_slice(&2i32.to_le_bytes());
        data.extend_from_slice(&3i32.to_le_bytes());
        let sizes = Arr::new(&data, 0, vector(2, 4));
        let mut f = Findings::default();
        oblivious_leaves(&sizes, 24, 2, 0, &mut f);
        assert!(f.is_empty());
        oblivious_leaves(&sizes, 23, 2, 0, &mut f);
        assert_eq!(f.status(), socair_plugin_api::RowStatus::Fail);
        assert!(f.shown[0].reason.contains("own 24 leaf values"));
    }

    #[test]
    fn ctr_entries_are_sized_by_type_and_classes() {
        assert_eq!(ints_per_entry(0, 2), Some(2));
        assert_eq!(ints_per_entry(0, 5), Some(5));
        assert_eq!(ints_per_entry(1, 0), None);
        assert_eq!(ints_per_entry(2, 0), Some(2));
        assert_eq!(ints_per_entry(4, 0), Some(1));
        assert_eq!(ints_per_entry(6, 2), None);
    }
}
