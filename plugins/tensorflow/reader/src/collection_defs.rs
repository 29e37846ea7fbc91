//! The collections of a MetaGraphDef as `import_scoped_meta_graph_with_return_elements`
//! (`tensorflow/python/framework/meta_graph.py`, tensorflow-cpu 2.21.0) restores them, for a
//! TF1 `.meta` file ([`crate::metagraph`]) and a TF1 SavedModel's meta graphs
//! ([`crate::savedmodel`]) alike: a `bytes_list` whose name has a registered `from_proto`
//! function parsed as that function's proto, any other kept as its values are.

use crate::decode::{offset_in, walk_as, ProtoError};
use crate::outcome::{listed, Reading};
use crate::proto::schema::{
    COND_CONTEXT_DEF, MESSAGES, SAVER_DEF, VARIABLE_DEF, WHILE_CONTEXT_DEF,
};
use crate::proto::tensorflow::{collection_def, MetaGraphDef};
use bytes::Bytes;
use socair_plugin_kit::bounded::short;
use socair_plugin_kit::protobuf::schema::{Field, Kind, MessageSchema};
use socair_plugin_kit::protobuf::walk::Severity;

/// The collection `import_meta_graph` does not restore (its `unbound_inputs_col_name`).
const UNBOUND_INPUTS: &str = "unbound_inputs";

/// `tensorflow.QueueRunnerDef` (`tensorflow/core/protobuf/queue_runner.proto` in the
/// tensorflow-cpu 2.21.0 wheel's `queue_runner_pb2` descriptor): kept here rather than in the
/// generated table, whose imports (`error_codes.proto`) would bring two packages for one enum.
static QUEUE_RUNNER: &[MessageSchema] = &[MessageSchema {
    name: "QueueRunnerDef",
    size: 3 * std::mem::size_of::<String>()
        + std::mem::size_of::<Vec<String>>()
        + std::mem::size_of::<Vec<i32>>(),
    fields: &[
        Field {
            number: 1,
            name: "queue_name",
            kind: Kind::String,
            repeated: false,
        },
        Field {
            number: 2,
            name: "enqueue_op_name",
            kind: Kind::String,
            repeated: true,
        },
        Field {
            number: 3,
            name: "close_op_name",
            kind: Kind::String,
            repeated: false,
        },
        Field {
            number: 4,
            name: "cancel_op_name",
            kind: Kind::String,
            repeated: false,
        },
        Field {
            number: 5,
            name: "queue_closed_exception_types",
            kind: Kind::Varint,
            repeated: true,
        },
    ],
}];

/// A proto a `from_proto` function reads: its table, its index there, its name, and the
/// function.
type ProtoOf = (&'static [MessageSchema], usize, &'static str, &'static str);

const VARIABLE: ProtoOf = (
    MESSAGES,
    VARIABLE_DEF,
    "VariableDef",
    "ref_variable._from_proto_fn (a Variable looked up by name in the imported graph)",
);

/// Every collection name with a registered `from_proto` function in a process that imported
/// tensorflow 2.21.0 (`ops._proto_function_registry`, measured by
/// `fixtures/tensorflow/meta/make_meta.py` into its `expected.json`; registered by
/// `ops/ref_variable.py`, `ops/control_flow_ops.py`, `training/saver.py`,
/// `training/queue_runner_impl.py`), sorted, with the proto each value is parsed as. Each
/// function builds a Python object that refers to graph elements by name: none imports or runs
/// code, reads a file or runs an op.
pub const FROM_PROTO: &[(&str, ProtoOf)] = &[
    (
        "cond_context",
        (
            MESSAGES,
            COND_CONTEXT_DEF,
            "CondContextDef",
            "CondContext.from_proto (a control-flow context over tensors named in the graph)",
        ),
    ),
    ("global_step", VARIABLE),
    ("local_variables", VARIABLE),
    // meta_graph.py reads metric_variables with the global_variables function.
    ("metric_variables", VARIABLE),
    ("model_variables", VARIABLE),
    ("moving_average_variables", VARIABLE),
    (
        "queue_runners",
        (
            QUEUE_RUNNER,
            0,
            "QueueRunnerDef",
            "QueueRunner.from_proto (ops named in the graph, run only by start_queue_runners)",
        ),
    ),
    (
        "savers",
        (
            MESSAGES,
            SAVER_DEF,
            "SaverDef",
            "Saver.from_proto (a Saver over the graph's own save and restore ops)",
        ),
    ),
    ("trainable_variables", VARIABLE),
    ("variables", VARIABLE),
    (
        "while_context",
        (
            MESSAGES,
            WHILE_CONTEXT_DEF,
            "WhileContextDef",
            "WhileContext.from_proto (a control-flow context over tensors named in the graph)",
        ),
    ),
];

/// What restoring the collections takes.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Restored {
    /// Values parsed as their `from_proto` function's proto.
    pub(crate) protos: u64,
    /// Collections of bytes that no `from_proto` function reads: kept as bytes.
    pub(crate) bytes: u64,
}

/// Judges the collections as `import_scoped_meta_graph_with_return_elements` restores them
/// (the TF1 SavedModel loader restores them the same way: `loader_impl.py`,
/// `SavedModelLoader.load_graph`). A value its proto does not parse is a FAIL: TensorFlow
/// raises `DecodeError` and refuses the file, while a reader that ignores collections (the C++
/// loader) loads it. A collection of bytes that no function is registered for is data:
/// `import_meta_graph` adds its values to the graph's collection unparsed, and the registry
/// of a process that imported TensorFlow holds only [`FROM_PROTO`] (a library that registers
/// more does so for its own collections).
pub(crate) fn collections(
    mg: &MetaGraphDef,
    prefix: &str,
    data: &Bytes,
    out: &mut Reading,
) -> Restored {
    let mut restored = Restored::default();
    let mut kept = Vec::new();
    for (key, col) in &mg.collection_def {
        if key == UNBOUND_INPUTS {
            continue;
        }
        let Some(collection_def::Kind::BytesList(list)) = &col.kind else {
            continue;
        };
        let Ok(at) = FROM_PROTO.binary_search_by_key(&key.as_str(), |(k, _)| k) else {
            kept.push(key.as_str());
            restored.bytes += 1;
            continue;
        };
        let Some((_, (messages, root, proto, function))) = FROM_PROTO.get(at) else {
            continue;
        };
        for (i, value) in list.value.iter().enumerate() {
            let at = offset_in(data, value).map_or(String::new(), |o| format!(" (byte {o})"));
            let place = || {
                format!(
                    "{prefix}collection_def[{:?}].bytes_list.value[{i}]{at}",
                    short(key)
                )
            };
            match walk_as(value, messages, *root, "value") {
                Ok(walked) => {
                    restored.protos += 1;
                    for f in &walked.findings {
                        out.note(
                            "collection values",
                            f.severity,
                            || format!("{} {}", place(), f.place),
                            || f.reason.clone(),
                        );
                    }
                }
                Err(e) => {
                    let error = ProtoError::Wire {
                        message: proto,
                        error: e,
                    };
                    let severity = if error.is_bound() {
                        Severity::Lead
                    } else {
                        Severity::Fail
                    };
                    out.note("collection values", severity, place, || {
                        format!(
                            "import_meta_graph parses it as a {proto} for {function}: {error}; TensorFlow refuses the file, a loader that ignores collections (the C++ one) does not"
                        )
                    });
                }
            }
        }
    }
    if !mg.collection_def.is_empty() {
        out.metadata.push((
            "tensorflow.collections".into(),
            listed(mg.collection_def.keys().map(String::as_str), 50),
        ));
    }
    if !kept.is_empty() {
        out.metadata.push((
            "tensorflow.collections_kept_as_bytes".into(),
            listed(kept, 50),
        ));
    }
    restored
}
