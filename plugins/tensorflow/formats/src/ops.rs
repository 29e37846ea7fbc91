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
        ] {
            assert_eq!(lookup(op).map(|o| o.class), Some(class), "{op}");
        }
        assert!(lookup("NotAnOp").is_none());
    }
}
