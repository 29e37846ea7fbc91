//! TensorFlow 2.21.0's op registry, each op with the class the reader judges it by:
//! `plugins/tensorflow/ops/ops-2.21.0.tsv`, written by `ops/registry.py` from the runtime's
//! own registry (`TF_GetAllOpList`) and the rules of `ops/OPS.md`, which cites the registry
//! source of every op that is not plain computation.

use std::sync::OnceLock;

/// What an op does, as far as a verdict goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Reads, writes or lists files: FAIL.
    File,
    /// Runs Python, or a graph the file does not show: FAIL.
    Code,
    /// Reaches a network address the graph names: FAIL.
    Net,
    /// A checkpoint op: PASS inside the saver's subgraph over the loader's filename.
    Checkpoint,
    /// Fills a lookup table from a file: data when the file is one of the model's assets.
    TableFile,
    /// PrintV2: FAIL when it prints to a file.
    Print,
    /// tfdbg: FAIL when it names a debug URL.
    Debug,
    /// Its kernel opens the file an attribute names ([`attr_file`]), whatever its OpDef's
    /// statefulness: FAIL unless the attribute holds the value that opens nothing.
    AttrFile,
    /// Talks to other devices or tasks of the cluster: LEAD.
    Cluster,
    /// A stateful op of the allow-list: PASS.
    State,
    /// Stateless computation: PASS.
    Compute,
    /// Stateful, not on the allow-list: LEAD.
    Lead,
}

/// One op of the registry.
#[derive(Debug, Clone, Copy)]
pub struct Op {
    /// Its name.
    pub name: &'static str,
    /// Its class.
    pub class: Class,
    /// Why (with the registry file, for the classes that are not plain computation).
    pub why: &'static str,
}

const TABLE: &str = include_str!("../../ops/ops-2.21.0.tsv");

fn parse_class(s: &str) -> Option<Class> {
    Some(match s {
        "file" => Class::File,
        "code" => Class::Code,
        "net" => Class::Net,
        "checkpoint" => Class::Checkpoint,
        "table-file" => Class::TableFile,
        "print" => Class::Print,
        "debug" => Class::Debug,
        "attr-file" => Class::AttrFile,
        "cluster" => Class::Cluster,
        "state" => Class::State,
        "compute" => Class::Compute,
        "lead" => Class::Lead,
        _ => return None,
    })
}

fn registry() -> &'static [Op] {
    static OPS: OnceLock<Vec<Op>> = OnceLock::new();
    OPS.get_or_init(|| {
        let mut ops: Vec<Op> = TABLE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| {
                let mut parts = l.splitn(3, '\t');
                let name = parts.next()?;
                let class = parse_class(parts.next()?)?;
                Some(Op {
                    name,
                    class,
                    why: parts.next().unwrap_or(""),
                })
            })
            .collect();
        ops.sort_by(|a, b| a.name.cmp(b.name));
        ops
    })
}

/// The op `name` of TensorFlow 2.21.0's registry.
pub fn lookup(name: &str) -> Option<&'static Op> {
    let ops = registry();
    ops.binary_search_by(|o| o.name.cmp(name))
        .ok()
        .and_then(|i| ops.get(i))
}

/// The attribute through which an [`Class::AttrFile`] op's kernel opens a file.
#[derive(Debug, Clone, Copy)]
pub struct AttrFile {
    /// The attribute.
    pub attr: &'static str,
    /// Its value when the node does not set it (the OpDef's default).
    pub default: &'static str,
    /// Whether a value of the attribute opens nothing.
    pub opens_nothing: fn(&str) -> bool,
}

/// `descriptor_source` of DecodeProtoV2 and EncodeProto (TensorFlow 2.21.0,
/// `tensorflow/core/util/proto/descriptors.cc`, `GetDescriptorPool`): a name in the descriptor
/// pool registry is used as is, and the wheel registers only `local://`
/// (`local_descriptor_pool_registration.cc`); any other value is first handed to the file
/// system (`GetDescriptorPoolFromFile`: `FileExists`, `NewReadOnlyMemoryRegionFromFile`), a
/// local path or any URL scheme a file system is registered for (`gs://`, `s3://`, `hdfs://`…),
/// and only if that fails parsed as `bytes://<FileDescriptorSet>`. A `bytes://` value reaches
/// `FileExists` with a scheme no file system serves, which opens nothing.
/// An empty value reaches `FileExists("")`, which names no file.
fn descriptor_opens_nothing(v: &str) -> bool {
    v.is_empty() || v == "local://" || v.starts_with("bytes://")
}

/// `vocab_file` of FixedUnigramCandidateSampler (`candidate_sampler_ops.cc`; the kernel reads
/// the file with `FixedUnigramSampler::LoadFromFile`, `range_sampler.cc`, when it is set).
fn vocab_opens_nothing(v: &str) -> bool {
    v.is_empty()
}

/// The attribute an [`Class::AttrFile`] op's kernel opens, for the ops `ops/registry.py`
/// classes so.
pub fn attr_file(op: &str) -> Option<AttrFile> {
    Some(match op {
        "DecodeProtoV2" | "EncodeProto" => AttrFile {
            attr: "descriptor_source",
            default: "local://",
            opens_nothing: descriptor_opens_nothing,
        },
        "FixedUnigramCandidateSampler" => AttrFile {
            attr: "vocab_file",
            default: "",
            opens_nothing: vocab_opens_nothing,
        },
        _ => return None,
    })
}

/// How many ops the registry holds.
pub fn count() -> usize {
    registry().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_whole_and_classes_what_the_brief_names() {
        assert!(count() > 1800, "{}", count());
        for (op, class) in [
            ("ReadFile", Class::File),
            ("WriteFile", Class::File),
            ("MatchingFiles", Class::File),
            ("PyFunc", Class::Code),
            ("EagerPyFunc", Class::Code),
            ("PyFuncStateless", Class::Code),
            ("SaveV2", Class::Checkpoint),
            ("RestoreV2", Class::Checkpoint),
            ("SaveSlices", Class::Checkpoint),
            ("RestoreSlice", Class::Checkpoint),
            ("ImmutableConst", Class::File),
            ("LoadAndRemapMatrix", Class::File),
            ("TFRecordDataset", Class::File),
            ("FixedLengthRecordDataset", Class::File),
            ("TextLineDataset", Class::File),
            ("DebugIdentityV2", Class::Debug),
            ("InitializeTableFromTextFileV2", Class::TableFile),
            ("PrintV2", Class::Print),
            ("MatMul", Class::Compute),
            ("VarHandleOp", Class::State),
            ("StatefulPartitionedCall", Class::State),
            ("RemoteCall", Class::Cluster),
            ("RpcClient", Class::Net),
            ("DecodeProtoV2", Class::AttrFile),
            ("EncodeProto", Class::AttrFile),
            ("FixedUnigramCandidateSampler", Class::AttrFile),
        ] {
            assert_eq!(lookup(op).map(|o| o.class), Some(class), "{op}");
        }
        assert!(lookup("NotAnOp").is_none());
    }

    #[test]
    fn every_attr_file_op_has_its_attribute_and_only_they_do() {
        for op in registry() {
            assert_eq!(
                op.class == Class::AttrFile,
                attr_file(op.name).is_some(),
                "{}",
                op.name
            );
        }
        let d = attr_file("DecodeProtoV2").unwrap();
        assert!((d.opens_nothing)(d.default));
        assert!((d.opens_nothing)("bytes://\x0a"));
        for v in [
            "/tmp/d.binpb",
            "gs://b/d",
            "file:///d",
            "local:/",
            "LOCAL://",
            "./d",
        ] {
            assert!(!(d.opens_nothing)(v), "{v}");
        }
        let v = attr_file("FixedUnigramCandidateSampler").unwrap();
        assert!((v.opens_nothing)(v.default));
        assert!(!(v.opens_nothing)("vocab.txt"));
    }
}
