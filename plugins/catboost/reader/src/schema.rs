//! The FlatBuffers schema of a `.cbm` model at CatBoost 1.2.10 (tag v1.2.10, commit b1bd2a6d,
//! the build the `catboost` 1.2.10 wheel names in every model it writes), walked table by table
//! over a [`Buffer`]: `catboost/libs/model/flatbuffers/model.fbs` (`TModelCore`, `TModelTrees`,
//! `TKeyValue`, the structs `TNonSymmetricTreeStepNode` and `TRepackedBin`), `features.fbs`
//! (`TFloatFeature`, `TCatFeature`, `TTextFeature`, `TEmbeddingFeature`, `TEstimatedFeature`,
//! `TOneHotFeature`, the structs `TFloatSplit`, `TOneHotSplit`), `ctr_data.fbs`
//! (`TModelCtrBase`, `TModelCtr`, `TCtrFeature`, `TCtrValueTable`, `TFeatureCombination`) and
//! `catboost/libs/helpers/flatbuffers/guid.fbs` (`TGuid`, four `uint32`).
//!
//! Field ids are the schema's declaration order. What the loader does with each is in
//! `catboost/libs/model/model.cpp` (`TModelTrees::FBDeserializeOwning`, `DeserializeFeatures`,
//! `SetScaleAndBias`), `features.cpp` (each feature's `FBDeserialize`) and `ctr_value_table.cpp`
//! (`TCtrValueTable::LoadSolid`, which reads a CTR table with `GetRoot` and no verifier).
//! Values are kept only where a check needs them; arrays are kept as [`Vector`]s (their bytes
//! are the tensors).

use crate::flatbuf::{Buffer, Res, Table, Vector};
use std::collections::HashMap;
use std::rc::Rc;

/// A feature combination (`TFeatureCombination`): what a CTR is computed over.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Combination {
    /// Categorical features, by their index among categorical features.
    pub cat_features: Vec<i32>,
    /// Float splits: a float feature's index and a border's bits.
    pub float_splits: Vec<(i32, u32)>,
    /// One-hot splits: a categorical feature's index and a value.
    pub one_hot_splits: Vec<(i32, i32)>,
}

/// `TModelCtrBase`: the key CatBoost's CTR tables are found by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CtrBase {
    /// Its projection.
    pub combination: Rc<Combination>,
    /// `ECtrType` (0 Borders .. 5 FeatureFreq).
    pub ctr_type: i8,
    /// `TargetBorderClassifierIdx`.
    pub target_border_classifier: i32,
    /// Where it lies in the file.
    pub at: u64,
}

impl CtrBase {
    /// The key without its place: two bases are the same CTR when these are equal.
    pub fn key(&self) -> (Rc<Combination>, i8, i32) {
        (
            self.combination.clone(),
            self.ctr_type,
            self.target_border_classifier,
        )
    }
}

/// `TCtrFeature`: a CTR and its borders.
#[derive(Debug, Clone)]
pub struct CtrFeature {
    /// `Ctr.Base`, when the `TModelCtr` and its base are present.
    pub base: Option<Rc<CtrBase>>,
    /// `Ctr.TargetBorderIdx`.
    pub target_border: i32,
    /// `Borders`.
    pub borders: Option<Vector>,
}

/// A float feature (`TFloatFeature`).
#[derive(Debug, Clone)]
pub struct FloatFeature {
    /// `Index`.
    pub index: i32,
    /// `FlatIndex`.
    pub flat_index: i32,
    /// `Borders`.
    pub borders: Option<Vector>,
    /// `FeatureId`.
    pub name: Option<String>,
    /// `NanValueTreatment` (0 AsIs, 1 AsFalse, 2 AsTrue).
    pub nan_treatment: i8,
    /// Where the table lies.
    pub at: u64,
}

/// A categorical, text or embedding feature (`TCatFeature`, `TTextFeature`, `TEmbeddingFeature`).
#[derive(Debug, Clone)]
pub struct SourceFeature {
    /// `Index`.
    pub index: i32,
    /// `FlatIndex`.
    pub flat_index: i32,
    /// `FeatureId`.
    pub name: Option<String>,
    /// `Dimension` (embedding features).
    pub dimension: i32,
    /// Where the table lies.
    pub at: u64,
}

/// An estimated feature (`TEstimatedFeature`): one computed from a text or embedding feature
/// by a calcer of a processing collection.
#[derive(Debug, Clone)]
pub struct EstimatedFeature {
    /// `SourceFeatureIndex`.
    pub source_index: i32,
    /// Whether `CalcerId` is present (the loader reads it without checking).
    pub has_calcer: bool,
    /// `Borders`.
    pub borders: Option<Vector>,
    /// `SourceFeatureType` (0 Text, 1 Embedding).
    pub source_type: i8,
    /// Where the table lies.
    pub at: u64,
}

/// A one-hot feature (`TOneHotFeature`).
#[derive(Debug, Clone)]
pub struct OneHotFeature {
    /// `Index`: the categorical feature it splits.
    pub cat_index: i32,
    /// `Values`.
    pub values: Option<Vector>,
    /// Where the table lies.
    pub at: u64,
}

/// `TModelTrees`.
#[derive(Debug, Clone, Default)]
pub struct Trees {
    /// `ApproxDimension`.
    pub approx_dimension: i32,
    /// `TreeSplits`, `TreeSizes`, `TreeStartOffsets` (`int`).
    pub tree_splits: Option<Vector>,
    /// See `tree_splits`.
    pub tree_sizes: Option<Vector>,
    /// See `tree_splits`.
    pub tree_start_offsets: Option<Vector>,
    /// `LeafValues`, `LeafWeights` (`double`).
    pub leaf_values: Option<Vector>,
    /// See `leaf_values`.
    pub leaf_weights: Option<Vector>,
    /// `NonSymmetricStepNodes` (two `uint16` each).
    pub step_nodes: Option<Vector>,
    /// `NonSymmetricNodeIdToLeafId` (`uint32`).
    pub node_to_leaf: Option<Vector>,
    /// `Scale`, `Bias`.
    pub scale: f64,
    /// See `scale`.
    pub bias: f64,
    /// `MultiBias` (`double`).
    pub multi_bias: Option<Vector>,
    /// `RepackedBins` (`uint16`, `uint8`, `uint8` each).
    pub repacked_bins: Option<Vector>,
    /// The features.
    pub float_features: Vec<FloatFeature>,
    /// See `float_features`.
    pub cat_features: Vec<SourceFeature>,
    /// See `float_features`.
    pub text_features: Vec<SourceFeature>,
    /// See `float_features`.
    pub embedding_features: Vec<SourceFeature>,
    /// See `float_features`.
    pub estimated_features: Vec<EstimatedFeature>,
    /// See `float_features`.
    pub one_hot_features: Vec<OneHotFeature>,
    /// See `float_features`.
    pub ctr_features: Vec<CtrFeature>,
    /// Where the table lies.
    pub at: u64,
}

/// `TModelCore`: the root of the core buffer.
#[derive(Debug, Clone, Default)]
pub struct Core {
    /// `FormatVersion`.
    pub format_version: Option<Vec<u8>>,
    /// `ModelTrees`.
    pub trees: Option<Trees>,
    /// `InfoMap`: key, value, and where the pair lies.
    pub info: Vec<(String, String, u64)>,
    /// Whether an `InfoMap` key or value is not UTF-8 (shown lossily).
    pub info_not_utf8: bool,
    /// `ModelPartIds`, and where each lies.
    pub part_ids: Vec<(Vec<u8>, u64)>,
}

/// A CTR value table (`TCtrValueTable`), one per model part entry of the static CTR provider.
#[derive(Debug, Clone)]
pub struct CtrTable {
    /// `ModelCtrBase`.
    pub base: Rc<CtrBase>,
    /// `IndexHashRaw`: packed `TBucket`s (a `uint64` hash and a `uint32` index each).
    pub index_hash: Vector,
    /// `CTRBlob`.
    pub blob: Vector,
    /// `CounterDenominator`.
    pub counter_denominator: i32,
    /// `TargetClassesCount`.
    pub target_classes: i32,
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The shared tables CatBoost's `TModelPartsCachingSerializer` writes once and references from
/// every CTR that uses them (`flatbuffers_serializer_helper.h`), read once and remembered.
#[derive(Debug, Default)]
pub struct Shared {
    combinations: HashMap<usize, Rc<Combination>>,
    bases: HashMap<usize, Rc<CtrBase>>,
    ctrs: HashMap<usize, (Option<Rc<CtrBase>>, i32)>,
}

fn combination(fb: &mut Buffer, pos: usize, shared: &mut Shared) -> Res<Rc<Combination>> {
    let (t, first) = fb.table(pos, "TFeatureCombination", 3, true)?;
    if !first {
        if let Some(c) = shared.combinations.get(&pos) {
            return Ok(c.clone());
        }
    }
    let mut c = Combination::default();
    if let Some(v) = fb.vector_field(&t, 0, 4, "TFeatureCombination.CatFeatures")? {
        fb.step(v.len as u64, v.pos)?;
        for i in 0..v.len {
            c.cat_features.push(fb.i32_at(v.data() + 4 * i)?);
        }
    }
    if let Some(v) = fb.vector_field(&t, 1, 8, "TFeatureCombination.FloatSplits")? {
        fb.step(v.len as u64, v.pos)?;
        for i in 0..v.len {
            let p = v.data() + 8 * i;
            c.float_splits.push((fb.i32_at(p)?, fb.u32_at(p + 4)?));
        }
    }
    if let Some(v) = fb.vector_field(&t, 2, 8, "TFeatureCombination.OneHotSplits")? {
        fb.step(v.len as u64, v.pos)?;
        for i in 0..v.len {
            let p = v.data() + 8 * i;
            c.one_hot_splits.push((fb.i32_at(p)?, fb.i32_at(p + 4)?));
        }
    }
    let c = Rc::new(c);
    shared.combinations.insert(pos, c.clone());
    Ok(c)
}

/// `TModelCtrBase` at `pos`. The loader's `TModelCtrBase::FBDeserialize` reads its
/// `FeatureCombination` without checking it is there: one that is absent is refused.
pub fn ctr_base(fb: &mut Buffer, pos: usize, shared: &mut Shared) -> Res<Rc<CtrBase>> {
    let (t, first) = fb.table(pos, "TModelCtrBase", 3, true)?;
    if !first {
        if let Some(b) = shared.bases.get(&pos) {
            return Ok(b.clone());
        }
    }
    let Some(cpos) = fb.offset_field(&t, 0, "TModelCtrBase.FeatureCombination")? else {
        return Err(fb.fault(
            pos,
            "a TModelCtrBase has no FeatureCombination, which CatBoost's loader reads without checking (a null dereference)",
        ));
    };
    let combination = combination(fb, cpos, shared)?;
    let b = Rc::new(CtrBase {
        combination,
        ctr_type: fb.u8_field(&t, 1, 0)? as i8,
        target_border_classifier: fb.i32_field(&t, 2, 0)?,
        at: fb.at(pos),
    });
    shared.bases.insert(pos, b.clone());
    Ok(b)
}

/// `TModelCtr` at `pos`: its base and `TargetBorderIdx` (priors, shift and scale are read for
/// their bounds only).
fn model_ctr(fb: &mut Buffer, pos: usize, shared: &mut Shared) -> Res<(Option<Rc<CtrBase>>, i32)> {
    let (t, first) = fb.table(pos, "TModelCtr", 6, true)?;
    if !first {
        if let Some(b) = shared.ctrs.get(&pos) {
            return Ok(b.clone());
        }
    }
    let target_border = fb.i32_field(&t, 1, 0)?;
    for id in 2..6 {
        fb.f32_field(&t, id, 0.0)?;
    }
    let base = match fb.offset_field(&t, 0, "TModelCtr.Base")? {
        Some(b) => Some(ctr_base(fb, b, shared)?),
        None => None,
    };
    shared.ctrs.insert(pos, (base.clone(), target_border));
    Ok((base, target_border))
}

/// Each table of a vector-of-tables field, read by `each`.
fn tables<T>(
    fb: &mut Buffer,
    t: &Table,
    id: usize,
    what: &'static str,
    mut each: impl FnMut(&mut Buffer, usize) -> Res<T>,
) -> Res<Vec<T>> {
    let Some(v) = fb.vector_field(t, id, 4, what)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for i in 0..v.len {
        let p = fb.element(&v, i, what)?;
        out.push(each(fb, p)?);
    }
    Ok(out)
}

fn name(fb: &mut Buffer, t: &Table, id: usize, what: &'static str) -> Res<Option<String>> {
    Ok(fb.string_field(t, id, what)?.map(text))
}

fn float_feature(fb: &mut Buffer, pos: usize) -> Res<FloatFeature> {
    let (t, _) = fb.table(pos, "TFloatFeature", 6, false)?;
    fb.bool_field(&t, 0, false)?;
    Ok(FloatFeature {
        index: fb.i32_field(&t, 1, -1)?,
        flat_index: fb.i32_field(&t, 2, -1)?,
        borders: fb.vector_field(&t, 3, 4, "TFloatFeature.Borders")?,
        name: name(fb, &t, 4, "TFloatFeature.FeatureId")?,
        nan_treatment: fb.u8_field(&t, 5, 0)? as i8,
        at: fb.at(pos),
    })
}

/// `TCatFeature` and `TTextFeature` (`Index`, `FlatIndex`, `FeatureId`, `UsedInModel`), or
/// `TEmbeddingFeature` (`Dimension` before `UsedInModel`).
fn source_feature(fb: &mut Buffer, pos: usize, kind: &'static str) -> Res<SourceFeature> {
    let embedding = kind == "TEmbeddingFeature";
    let (t, _) = fb.table(pos, kind, if embedding { 5 } else { 4 }, false)?;
    let f = SourceFeature {
        index: fb.i32_field(&t, 0, -1)?,
        flat_index: fb.i32_field(&t, 1, -1)?,
        name: name(fb, &t, 2, "a feature's FeatureId")?,
        dimension: if embedding {
            fb.i32_field(&t, 3, 0)?
        } else {
            0
        },
        at: fb.at(pos),
    };
    fb.bool_field(&t, if embedding { 4 } else { 3 }, true)?;
    Ok(f)
}

fn estimated_feature(fb: &mut Buffer, pos: usize) -> Res<EstimatedFeature> {
    let (t, _) = fb.table(pos, "TEstimatedFeature", 5, false)?;
    fb.i32_field(&t, 2, -1)?;
    Ok(EstimatedFeature {
        source_index: fb.i32_field(&t, 0, -1)?,
        has_calcer: fb.field(&t, 1, 16, 4)?.is_some(),
        borders: fb.vector_field(&t, 3, 4, "TEstimatedFeature.Borders")?,
        source_type: fb.u8_field(&t, 4, 0)? as i8,
        at: fb.at(pos),
    })
}

fn one_hot_feature(fb: &mut Buffer, pos: usize) -> Res<OneHotFeature> {
    let (t, _) = fb.table(pos, "TOneHotFeature", 3, false)?;
    if let Some(v) = fb.vector_field(&t, 2, 4, "TOneHotFeature.StringValues")? {
        for i in 0..v.len {
            let p = fb.element(&v, i, "a one-hot string value")?;
            fb.string(p, "a one-hot string value")?;
        }
    }
    Ok(OneHotFeature {
        cat_index: fb.i32_field(&t, 0, -1)?,
        values: fb.vector_field(&t, 1, 4, "TOneHotFeature.Values")?,
        at: fb.at(pos),
    })
}

fn ctr_feature(fb: &mut Buffer, pos: usize, shared: &mut Shared) -> Res<CtrFeature> {
    let (t, _) = fb.table(pos, "TCtrFeature", 2, false)?;
    let (base, target_border) = match fb.offset_field(&t, 0, "TCtrFeature.Ctr")? {
        Some(p) => model_ctr(fb, p, shared)?,
        None => (None, 0),
    };
    Ok(CtrFeature {
        base,
        target_border,
        borders: fb.vector_field(&t, 1, 4, "TCtrFeature.Borders")?,
    })
}

/// `TModelTrees` at `pos` (its old name, `TObliviousTrees`, has the same first 15 fields).
pub fn trees(fb: &mut Buffer, pos: usize, shared: &mut Shared) -> Res<Trees> {
    let (t, _) = fb.table(pos, "TModelTrees", 20, false)?;
    let mut out = Trees {
        approx_dimension: fb.i32_field(&t, 0, 0)?,
        tree_splits: fb.vector_field(&t, 1, 4, "TModelTrees.TreeSplits")?,
        tree_sizes: fb.vector_field(&t, 2, 4, "TModelTrees.TreeSizes")?,
        tree_start_offsets: fb.vector_field(&t, 3, 4, "TModelTrees.TreeStartOffsets")?,
        leaf_values: fb.vector_field(&t, 8, 8, "TModelTrees.LeafValues")?,
        leaf_weights: fb.vector_field(&t, 9, 8, "TModelTrees.LeafWeights")?,
        step_nodes: fb.vector_field(&t, 10, 4, "TModelTrees.NonSymmetricStepNodes")?,
        node_to_leaf: fb.vector_field(&t, 11, 4, "TModelTrees.NonSymmetricNodeIdToLeafId")?,
        scale: fb.f64_field(&t, 14, 1.0)?,
        bias: fb.f64_field(&t, 15, 0.0)?,
        multi_bias: fb.vector_field(&t, 16, 8, "TModelTrees.MultiBias")?,
        repacked_bins: fb.vector_field(&t, 17, 4, "TModelTrees.RepackedBins")?,
        at: fb.at(pos),
        ..Trees::default()
    };
    out.cat_features = tables(fb, &t, 4, "TModelTrees.CatFeatures", |fb, p| {
        source_feature(fb, p, "TCatFeature")
    })?;
    out.float_features = tables(fb, &t, 5, "TModelTrees.FloatFeatures", float_feature)?;
    out.one_hot_features = tables(fb, &t, 6, "TModelTrees.OneHotFeatures", one_hot_feature)?;
    out.ctr_features = tables(fb, &t, 7, "TModelTrees.CtrFeatures", |fb, p| {
        ctr_feature(fb, p, shared)
    })?;
    out.text_features = tables(fb, &t, 12, "TModelTrees.TextFeatures", |fb, p| {
        source_feature(fb, p, "TTextFeature")
    })?;
    out.estimated_features = tables(
        fb,
        &t,
        13,
        "TModelTrees.EstimatedFeatures",
        estimated_feature,
    )?;
    out.embedding_features = tables(fb, &t, 18, "TModelTrees.EmbeddingFeatures", |fb, p| {
        source_feature(fb, p, "TEmbeddingFeature")
    })?;
    Ok(out)
}

/// `TKeyValue` at `pos`: both strings are `required` (`VerifyOffsetRequired`).
fn key_value(fb: &mut Buffer, pos: usize) -> Res<(Vec<u8>, Vec<u8>, u64)> {
    let (t, _) = fb.table(pos, "TKeyValue", 2, false)?;
    let key = fb.string_field(&t, 0, "an InfoMap key")?;
    let value = fb.string_field(&t, 1, "an InfoMap value")?;
    match (key, value) {
        (Some(k), Some(v)) => Ok((k.to_vec(), v.to_vec(), fb.at(pos))),
        _ => Err(fb.fault(
            pos,
            "an InfoMap entry lacks its Key or Value, which the schema requires (the verifier refuses it)",
        )),
    }
}

/// The core buffer's root, `TModelCore`.
pub fn core(fb: &mut Buffer, shared: &mut Shared) -> Res<Core> {
    let t = fb.root("TModelCore", 4)?;
    let mut out = Core {
        format_version: fb
            .string_field(&t, 0, "TModelCore.FormatVersion")?
            .map(<[u8]>::to_vec),
        ..Core::default()
    };
    if let Some(p) = fb.offset_field(&t, 1, "TModelCore.ModelTrees")? {
        out.trees = Some(trees(fb, p, shared)?);
    }
    for (k, v, at) in tables(fb, &t, 2, "TModelCore.InfoMap", key_value)? {
        out.info_not_utf8 |= std::str::from_utf8(&k).is_err() || std::str::from_utf8(&v).is_err();
        out.info.push((text(&k), text(&v), at));
    }
    if let Some(v) = fb.vector_field(&t, 3, 4, "TModelCore.ModelPartIds")? {
        for i in 0..v.len {
            let p = fb.element(&v, i, "a model part id")?;
            let at = fb.at(p);
            out.part_ids
                .push((fb.string(p, "a model part id")?.to_vec(), at));
        }
    }
    Ok(out)
}

/// A CTR table's root, `TCtrValueTable`. CatBoost's `TCtrValueTable::LoadSolid` reads
/// `ModelCtrBase`, `IndexHashRaw` and `CTRBlob` without checking they are there.
pub fn ctr_table(fb: &mut Buffer, shared: &mut Shared) -> Res<CtrTable> {
    let t = fb.root("TCtrValueTable", 5)?;
    let missing = |fb: &Buffer, what: &str| {
        fb.fault(
            t.pos,
            format!("it has no {what}, which CatBoost's loader reads without checking (a null dereference)"),
        )
    };
    let Some(bpos) = fb.offset_field(&t, 0, "TCtrValueTable.ModelCtrBase")? else {
        return Err(missing(fb, "ModelCtrBase"));
    };
    let base = ctr_base(fb, bpos, shared)?;
    let Some(index_hash) = fb.vector_field(&t, 1, 1, "TCtrValueTable.IndexHashRaw")? else {
        return Err(missing(fb, "IndexHashRaw"));
    };
    let Some(blob) = fb.vector_field(&t, 2, 1, "TCtrValueTable.CTRBlob")? else {
        return Err(missing(fb, "CTRBlob"));
    };
    Ok(CtrTable {
        base,
        index_hash,
        blob,
        counter_denominator: fb.i32_field(&t, 3, 0)?,
        target_classes: fb.i32_field(&t, 4, 0)?,
    })
}
