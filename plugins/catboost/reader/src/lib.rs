//! `socair-catboost`: CatBoost's binary model (`.cbm`, `CatBoost.save_model(fname)` and
//! `load_model(fname)` of the `catboost` package 1.2.10, `TFullModel::Save` / `Load` in
//! `catboost/libs/model/model.cpp` at tag v1.2.10) read as data, strictly, without CatBoost.
//!
//! The container ([`container`]) is the `CBM1` magic, a FlatBuffers core ([`schema`], read by a
//! hand-written strict FlatBuffers reader, [`flatbuf`]) and the model parts the core lists: the
//! static CTR provider's tables (read like the core), and the text and embedding processing
//! collections (not modeled: a LEAD naming them). [`checks`] then holds the values to what
//! CatBoost's loader and evaluator index without bounds checks. Every numeric array (leaf
//! values and weights, tree splits and sizes, borders, one-hot values, non-symmetric tree
//! nodes, biases, CTR hash tables and blobs) is a tensor, its bytes a range of the file.
//!
//! What a `.cbm` can carry that runs or reaches out, from the source: nothing. The core holds
//! numbers, feature names and `InfoMap`, string pairs: `params` (the training options as JSON,
//! which `IModelLoader::CheckModel` parses and checks with stub objective and metric
//! descriptors, and the Python package's `_get_params` reads back as JSON), `model_guid`,
//! `training`, `output_options`, `class_params`, `train_finish_time`, `catboost_version_info`,
//! and any user metadata. A Python custom objective or metric is stored by name only
//! (`PythonUserDefinedPerObject`...): the Python object is never serialized, and loading a model
//! never imports, evaluates or opens anything it names (paths in `output_options` or
//! `system_options` are for training). All of it is data; socair lists some of it as metadata.
//! The processing collections hold tokenizer options, dictionaries and calcer weights, data too,
//! but in serializations socair does not read.

pub mod checks;
pub mod container;
pub mod flatbuf;
#[doc(hidden)]
pub mod fuzzing;
pub mod schema;

use abi_stable::std_types::{ROption, RString, RVec, Tuple2};
use checks::Facts;
use container::Container;
use flatbuf::{Fault, Vector};
use socair_plugin_api::{
    ByteOrder, ByteRange, ByteSourceRef, OpenedFile, PluginError, PluginErrorKind, ReadOptions,
    ReportRow, RowStatus, TensorDescriptor, Unread,
};
use socair_plugin_kit::bounded;
use socair_plugin_kit::export::Reader;
use socair_plugin_kit::json::Json;
use socair_plugin_kit::model::Findings;
use socair_plugin_kit::report::{
    refused, refused_as, tensor_in_file, PAST_BOUNDS, STRUCTURE_CHECK,
};
use socair_plugin_kit::Severity;

/// The format's name.
pub const FORMAT: &str = "catboost";

/// The largest file read (into memory, whole).
pub const MAX_FILE: u64 = 1 << 30;

/// One tensor: a range of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Its name (`trees.leaf_values`, `float_features.0.borders`, `ctr_tables.1.blob`).
    pub name: String,
    /// The FlatBuffers schema's name of its element type (`double`, `float`, `int`, a struct).
    pub dtype: &'static str,
    /// socair's element type.
    pub element_type: &'static str,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Its first byte.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
}

/// What one read found.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// LEADs and FAILs.
    pub findings: Findings,
    /// The tensors described.
    pub tensors: Vec<Tensor>,
    /// Tensors past the budget of a file of this size.
    pub not_described: u64,
    /// The part of the file left unread, and why.
    pub unread: Option<String>,
    /// File-level metadata.
    pub metadata: Vec<(String, String)>,
    /// What the file holds, in one phrase.
    pub what: String,
    /// The fault that refused the whole file.
    pub refused: Option<Fault>,
}

/// Whether `head` starts like a `.cbm`: `CBM1`, a core size, and a root offset that is
/// non-zero, 4-aligned and inside the core (the first thing the FlatBuffers verifier checks).
/// A core size past the file's end is still claimed, so that `open` refuses it with its reason.
pub fn looks_like_cbm(head: &[u8], file_len: u64) -> bool {
    let word = |at: usize| {
        head.get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
    };
    if file_len < 12 || head.get(..4) != Some(container::MAGIC.as_slice()) {
        return false;
    }
    match (word(4), word(8)) {
        (Some(core), Some(root)) => root != 0 && root.is_multiple_of(4) && root < core,
        _ => false,
    }
}

/// Reads a whole `.cbm` file.
pub fn read(data: &[u8]) -> Model {
    let mut m = Model::default();
    let (c, _shared) = match container::read(data) {
        Ok(read) => read,
        Err(fault) => {
            m.refused = Some(fault);
            return m;
        }
    };
    info(&c, &mut m);
    buffers(&c, &mut m);
    if let Some(col) = &c.collection {
        let reason = format!(
            "the {} processing collection ({} bytes from byte {} to the end of the file: {}) is not modeled by socair: its contents, and anything after them, are not checked",
            col.kind,
            data.len() as u64 - col.at,
            col.at,
            if col.kind == "text" {
                "tokenizers, dictionaries and text feature calcers"
            } else {
                "embedding feature calcers, such as LDA and KNN, with their fitted data"
            }
        );
        m.findings
            .add(Severity::Lead, format!("byte {}", col.at), reason.clone());
        m.unread = Some(reason);
    }
    let facts = checks::check(&c, data, &mut m.findings);
    describe(&c, data.len() as u64, &mut m);
    m.what = what(&c, &facts);
    m
}

/// Findings of the buffers as a whole: fields the schema does not define, bytes no object holds.
fn buffers(c: &Container, m: &mut Model) {
    if c.undefined_total > 0 {
        let listed: Vec<String> = c
            .undefined
            .iter()
            .map(|u| format!("field {} of a {} at byte {}", u.id, u.table, u.at))
            .collect();
        m.findings.add(
            Severity::Lead,
            format!("byte {}", c.undefined.first().map_or(0, |u| u.at)),
            format!(
                "{} field(s) the CatBoost 1.2.10 schema does not define ({}{}): its loader ignores them, so they carry data no reader uses",
                c.undefined_total,
                listed.join(", "),
                if c.undefined_total > listed.len() as u64 { ", …" } else { "" }
            ),
        );
    }
    for (what, unheld) in &c.unheld {
        m.findings.add(
            Severity::Lead,
            format!("byte {}", unheld.first),
            format!(
                "{what} has {} non-zero byte(s) that no object of it holds (the first at byte {}): a FlatBuffers builder pads with zeros, and no reader reads these bytes",
                unheld.nonzero, unheld.first
            ),
        );
    }
}

/// `InfoMap`: keys once each (`TFullModel::DefaultFullModelInit` keeps the last of two), text,
/// `params` JSON; some of it as metadata.
fn info(c: &Container, m: &mut Model) {
    let core = &c.core;
    let mut seen = std::collections::HashSet::new();
    for (k, _, at) in &core.info {
        if !seen.insert(k.as_str()) {
            m.findings.add(
                Severity::Fail,
                format!("byte {at}"),
                format!("InfoMap holds the key {:?} twice: CatBoost keeps the last value, a reader that looks the key up by binary search (it is the table's key) may find the other", bounded::short(k)),
            );
        }
    }
    if core.info_not_utf8 {
        m.findings.add(
            Severity::Lead,
            "InfoMap",
            "an InfoMap key or value is not UTF-8: CatBoost keeps the bytes, the Python package decodes them as text",
        );
    }
    let meta = &mut m.metadata;
    meta.push((
        "catboost.format_version".into(),
        String::from_utf8_lossy(container::FORMAT_VERSION).into_owned(),
    ));
    meta.push(("catboost.parts".into(), c.parts.join(", ")));
    let keys: Vec<&str> = core.info.iter().map(|(k, _, _)| k.as_str()).collect();
    meta.push((
        "catboost.info_keys".into(),
        socair_plugin_kit::reading::listed(keys, 32),
    ));
    for (k, v, at) in &core.info {
        match k.as_str() {
            "params" => params(v, *at, meta, &mut m.findings),
            "catboost_version_info" => {
                if let Some(branch) = v.lines().find_map(|l| l.trim().strip_prefix("Branch: ")) {
                    meta.push(("catboost.written_by".into(), bounded::short(branch)));
                }
            }
            "training" | "output_options" | "class_params" | "multiclass_params" => {}
            _ if meta.len() < 64 => meta.push((
                format!("catboost.info.{}", bounded::short(k)),
                bounded::short(v),
            )),
            _ => {}
        }
    }
}

/// `params`: CatBoost parses it as JSON on load (`IModelLoader::CheckModel`).
fn params(v: &str, at: u64, meta: &mut Vec<(String, String)>, f: &mut Findings) {
    let Ok(Json::Object(fields)) = serde_json::from_str::<Json>(v) else {
        f.add(
            Severity::Lead,
            format!("byte {at}"),
            "InfoMap's params is not a JSON object socair reads strictly (no duplicate keys): CatBoost parses it on load with its own, lenient reader",
        );
        return;
    };
    let loss = fields
        .iter()
        .find(|(k, _)| k == "loss_function")
        .and_then(|(_, l)| match l {
            Json::Object(o) => o.iter().find(|(k, _)| k == "type").map(|(_, t)| t),
            _ => None,
        });
    if let Some(Json::String(loss)) = loss {
        meta.push(("catboost.loss_function".into(), bounded::short(loss)));
    }
}

/// The model in one phrase.
fn what(c: &Container, facts: &Facts) -> String {
    let Some(t) = &c.core.trees else {
        return "a CatBoost model with no trees table".into();
    };
    let shape = if facts.oblivious {
        format!("oblivious trees of depth up to {}", facts.largest)
    } else {
        format!("non-symmetric trees of up to {} nodes", facts.largest)
    };
    let mut features = vec![format!("{} float", t.float_features.len())];
    for (n, kind) in [
        (t.cat_features.len(), "categorical"),
        (t.text_features.len(), "text"),
        (t.embedding_features.len(), "embedding"),
        (t.estimated_features.len(), "estimated"),
    ] {
        if n > 0 {
            features.push(format!("{n} {kind}"));
        }
    }
    let mut s = format!(
        "a CatBoost model of {} {shape}, approx dimension {}, {} leaf values; features: {}",
        bounded::thousands(facts.trees as u64),
        t.approx_dimension,
        bounded::thousands(facts.leaf_values as u64),
        features.join(", ")
    );
    if !t.one_hot_features.is_empty() || !t.ctr_features.is_empty() {
        s.push_str(&format!(
            "; split on {} one-hot features and {} CTRs",
            t.one_hot_features.len(),
            t.ctr_features.len()
        ));
    }
    if c.has_ctr_part {
        s.push_str(&format!("; {} CTR tables", c.ctr_tables.len()));
    }
    s
}

/// The FlatBuffers type names of the arrays, socair's element types, and the elements of a
/// struct (the inner dimension).
const INT: (&str, &str, u64) = ("int", "I32", 1);
const FLOAT: (&str, &str, u64) = ("float", "F32", 1);
const DOUBLE: (&str, &str, u64) = ("double", "F64", 1);
const UBYTE: (&str, &str, u64) = ("ubyte", "U8", 1);

/// Tensors added within the budget of a file of this size.
struct Described<'m> {
    model: &'m mut Model,
    limit: u64,
}

impl Described<'_> {
    /// `v` (a non-empty array of the buffer at file offset `base`) as the tensor `name`.
    fn add(
        &mut self,
        name: String,
        v: Option<Vector>,
        base: u64,
        (dtype, element, inner): (&'static str, &'static str, u64),
    ) {
        let Some(v) = v.filter(|v| v.len > 0) else {
            return;
        };
        if self.model.tensors.len() as u64 >= self.limit {
            self.model.not_described += 1;
            return;
        }
        let shape = if inner > 1 {
            vec![v.len as u64, inner]
        } else {
            vec![v.len as u64]
        };
        self.model.tensors.push(Tensor {
            name,
            dtype,
            element_type: element,
            shape,
            offset: base + v.data() as u64,
            len: v.byte_len() as u64,
        });
    }
}

/// The core's arrays: the trees', then each feature's.
fn describe_trees(t: &schema::Trees, d: &mut Described) {
    let b = 8;
    let arrays = [
        ("tree_splits", t.tree_splits, INT),
        ("tree_sizes", t.tree_sizes, INT),
        ("tree_start_offsets", t.tree_start_offsets, INT),
        ("leaf_values", t.leaf_values, DOUBLE),
        ("leaf_weights", t.leaf_weights, DOUBLE),
        (
            "non_symmetric_step_nodes",
            t.step_nodes,
            ("TNonSymmetricTreeStepNode", "U16", 2),
        ),
        (
            "non_symmetric_node_id_to_leaf_id",
            t.node_to_leaf,
            ("uint", "U32", 1),
        ),
        ("multi_bias", t.multi_bias, DOUBLE),
        ("repacked_bins", t.repacked_bins, ("TRepackedBin", "U8", 4)),
    ];
    for (name, v, kind) in arrays {
        d.add(format!("trees.{name}"), v, b, kind);
    }
    for (i, f) in t.float_features.iter().enumerate() {
        d.add(format!("float_features.{i}.borders"), f.borders, b, FLOAT);
    }
    for (i, f) in t.estimated_features.iter().enumerate() {
        d.add(
            format!("estimated_features.{i}.borders"),
            f.borders,
            b,
            FLOAT,
        );
    }
    for (i, f) in t.one_hot_features.iter().enumerate() {
        d.add(format!("one_hot_features.{i}.values"), f.values, b, INT);
    }
    for (i, f) in t.ctr_features.iter().enumerate() {
        d.add(format!("ctr_features.{i}.borders"), f.borders, b, FLOAT);
    }
}

/// Every array as a tensor, within the budget of a file of this size.
fn describe(c: &Container, file_len: u64, m: &mut Model) {
    let limit = bounded::described_limit(file_len);
    let mut d = Described { model: m, limit };
    if let Some(t) = &c.core.trees {
        describe_trees(t, &mut d);
    }
    for (i, t) in c.ctr_tables.iter().enumerate() {
        d.add(
            format!("ctr_tables.{i}.index_hash"),
            Some(t.table.index_hash),
            t.base,
            UBYTE,
        );
        d.add(
            format!("ctr_tables.{i}.blob"),
            Some(t.table.blob),
            t.base,
            UBYTE,
        );
    }
    if m.not_described > 0 {
        m.findings.add(
            Severity::Lead,
            "file",
            format!(
                "{} arrays past the {} socair describes for a file of this size are not fingerprinted",
                bounded::thousands(m.not_described),
                bounded::thousands(limit)
            ),
        );
    }
}

/// What the plugin API reports for a read.
pub fn opened_file(m: Model) -> OpenedFile {
    if let Some(fault) = m.refused {
        let finding = socair_plugin_api::Finding::new(
            if fault.past_bounds {
                socair_plugin_api::Severity::Lead
            } else {
                socair_plugin_api::Severity::Fail
            },
            format!("byte {}", fault.at),
            fault.reason.as_str(),
        );
        let unread = format!("byte {}: {}", fault.at, fault.reason);
        return if fault.past_bounds {
            refused_as(RowStatus::Lead, FORMAT, PAST_BOUNDS, unread, finding)
        } else {
            refused(
                FORMAT,
                "not a sound CatBoost model: CatBoost's loader refuses it or reads it otherwise than other readers",
                unread,
                finding,
            )
        };
    }
    let status = m.findings.status();
    let summary = match status {
        RowStatus::Pass => format!("read as data: {}", m.what),
        RowStatus::Fail => format!(
            "{}, with faults CatBoost's loader or evaluator would meet",
            m.what
        ),
        _ => format!(
            "{}; something in it needs a person (see the findings)",
            m.what
        ),
    };
    let mut unread: Vec<Unread> = Vec::new();
    if let Some(reason) = m.unread {
        unread.push(Unread {
            tensor: ROption::RNone,
            reason: reason.into(),
            outside_model: false,
        });
    }
    if m.not_described > 0 {
        unread.push(Unread {
            tensor: ROption::RNone,
            reason: format!(
                "{} arrays past the budget of a file of this size",
                m.not_described
            )
            .into(),
            outside_model: false,
        });
    }
    let tensors: RVec<TensorDescriptor> = m
        .tensors
        .iter()
        .map(|t| {
            tensor_in_file(
                &t.name,
                t.dtype,
                Some(t.element_type),
                t.shape.clone(),
                vec![ByteRange {
                    offset: t.offset,
                    len: t.len,
                }],
                ByteOrder::Little,
            )
        })
        .collect();
    OpenedFile {
        format: FORMAT.into(),
        tensors,
        unread: unread.into(),
        rows: RVec::from(vec![ReportRow {
            check: STRUCTURE_CHECK.into(),
            status,
            summary: summary.into(),
            findings: m.findings.to_api("findings"),
            names_severities: false,
        }]),
        metadata: m
            .metadata
            .into_iter()
            .map(|(k, v)| Tuple2(RString::from(k), RString::from(v)))
            .collect(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct CatBoostReader;

impl Reader for CatBoostReader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        looks_like_cbm(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let len = source.file_len();
        if len > MAX_FILE {
            return Ok(refused_as(
                RowStatus::Lead,
                FORMAT,
                PAST_BOUNDS,
                format!(
                    "the file is {len} bytes, past the {MAX_FILE} socair reads a CatBoost model in"
                ),
                socair_plugin_api::Finding::new(
                    socair_plugin_api::Severity::Lead,
                    "file",
                    format!(
                        "{} bytes, past the {} socair reads a CatBoost model in",
                        bounded::thousands(len),
                        bounded::thousands(MAX_FILE)
                    ),
                ),
            ));
        }
        let size = usize::try_from(len)
            .map_err(|_| PluginError::new(PluginErrorKind::InvalidInput, "length over usize"))?;
        let mut data = vec![0u8; size];
        source
            .read_at(
                0,
                abi_stable::std_types::RSliceMut::from_mut_slice(&mut data),
            )
            .into_result()?;
        Ok(opened_file(read(&data)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../fixtures/catboost/");
        std::fs::read(format!("{dir}{name}")).unwrap()
    }

    fn meta<'a>(m: &'a Model, key: &str) -> Option<&'a str> {
        m.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn claims_by_content() {
        let data = fixture("binary_classifier.cbm");
        let len = data.len() as u64;
        assert!(looks_like_cbm(&data[..64], len));
        // A truncated file is still claimed, to be refused with its reason.
        assert!(looks_like_cbm(&data[..64], 100));
        let mut other = data[..64].to_vec();
        other[3] = b'2';
        assert!(!looks_like_cbm(&other, len));
        let mut zero_root = data[..64].to_vec();
        zero_root[8..12].copy_from_slice(&0u32.to_le_bytes());
        assert!(!looks_like_cbm(&zero_root, len));
        assert!(!looks_like_cbm(b"CBM1", 4));
        assert!(!looks_like_cbm(b"CBM1\x10\x00\x00\x00\x20\x00\x00\x00", 12));
    }

    #[test]
    fn a_model_catboost_wrote_reads_as_data() {
        let m = read(&fixture("binary_classifier.cbm"));
        assert!(m.refused.is_none());
        assert!(m.findings.is_empty(), "{:?}", m.findings);
        assert!(
            m.what.contains("5 oblivious trees of depth up to 3"),
            "{}",
            m.what
        );
        assert_eq!(meta(&m, "catboost.loss_function"), Some("Logloss"));
        assert_eq!(meta(&m, "catboost.written_by"), Some("tags/v1.2.10"));
        let leaves = m
            .tensors
            .iter()
            .find(|t| t.name == "trees.leaf_values")
            .unwrap();
        assert_eq!(
            (leaves.dtype, leaves.element_type, leaves.shape.clone()),
            ("double", "F64", vec![40])
        );
        let bins = m
            .tensors
            .iter()
            .find(|t| t.name == "trees.repacked_bins")
            .unwrap();
        assert_eq!(bins.shape, vec![15, 4]);
        let f = opened_file(m);
        assert_eq!(f.rows[0].status, RowStatus::Pass);
        assert!(f.unread.is_empty());
    }

    #[test]
    fn a_python_objective_and_user_metadata_are_names_only() {
        let m = read(&fixture("custom_objective.cbm"));
        assert!(m.findings.is_empty(), "{:?}", m.findings);
        assert_eq!(
            meta(&m, "catboost.loss_function"),
            Some("PythonUserDefinedPerObject")
        );
        let m = read(&fixture("user_metadata.cbm"));
        assert!(m.findings.is_empty(), "{:?}", m.findings);
        assert_eq!(meta(&m, "catboost.info.owner"), Some("fixtures"));
    }

    #[test]
    fn processing_collections_are_named_unread() {
        for (name, kind) in [
            ("text_features.cbm", "text"),
            ("embedding_features.cbm", "embedding"),
        ] {
            let m = read(&fixture(name));
            assert_eq!(m.findings.status(), RowStatus::Lead, "{name}");
            assert!(m
                .unread
                .as_deref()
                .unwrap()
                .contains(&format!("the {kind} processing collection")));
            assert!(!m.tensors.is_empty());
            let f = opened_file(m);
            assert_eq!(f.unread.len(), 1);
            assert_eq!(f.rows[0].status, RowStatus::Lead);
        }
    }

    #[test]
    fn refusals_fail_and_bounds_lead() {
        let fault = |past_bounds| Model {
            refused: Some(Fault {
                at: 8,
                reason: "why".into(),
                past_bounds,
            }),
            ..Model::default()
        };
        let f = opened_file(fault(false));
        assert_eq!(f.rows[0].status, RowStatus::Fail);
        assert_eq!(f.rows[0].findings[0].place.as_str(), "byte 8");
        assert_eq!(opened_file(fault(true)).rows[0].status, RowStatus::Lead);
    }
}
