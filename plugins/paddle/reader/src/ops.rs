//! Every op a Paddle program names, judged by what it does when the program runs: the one
//! table both program formats (`.pdmodel`'s `OpDesc.type`, a PIR program's `dialect.op`) are
//! judged by, against the ops PaddlePaddle 3.3.1 registers (`ops/legacy.txt`, `ops/pir.txt`,
//! written from the installed wheel by `codegen/gen.py`).
//!
//! None of the ops that read or write files belong in a saved program: `paddle.jit.load`,
//! `paddle.static.load_inference_model` (python/paddle/static/io.py `load_vars`) and the
//! inference predictor (`AnalysisPredictor::LoadParameters`,
//! paddle/fluid/inference/api/analysis_predictor.cc) build their own `load_combine` program to
//! read the `.pdiparams` beside the model, and `save_inference_model` prunes the program to
//! what computes the fetch targets (it never holds a `save`).

use socair_plugin_kit::Severity;
use std::sync::OnceLock;

/// What an op does, as far as an airlock cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Computes on tensors (and `feed`/`fetch`, control flow over the program's own blocks).
    Compute,
    /// Runs Python: `py_func` calls the callable registered under its `forward_callable_id`
    /// in the loading process (paddle/fluid/operators/py_func_op.cc).
    Code,
    /// Reads or writes the file its attribute names (`file_path`, `filename`).
    Files,
    /// Prints, or reads from a Python-fed reader queue.
    Io,
    /// Opens connections to the endpoints its attributes name (id exchange, RPC).
    Network,
    /// Communicates with the other processes of a communication group the loading program set
    /// up (`ring_id`): nothing in the file names an address, but it is no model's compute.
    Collective,
    /// A custom operator, from a shared library the loading program must load itself.
    Custom,
    /// Not an op PaddlePaddle 3.3.1 registers.
    Unknown,
}

impl Class {
    /// The severity of a finding about an op of this class, if any.
    pub fn severity(self) -> Option<Severity> {
        match self {
            Class::Compute => None,
            Class::Code | Class::Files | Class::Io | Class::Network => Some(Severity::Fail),
            Class::Collective | Class::Custom | Class::Unknown => Some(Severity::Lead),
        }
    }

    /// The finding kind of an op class.
    pub fn kind(self) -> &'static str {
        match self {
            Class::Code => "ops that run Python",
            Class::Files => "ops that read or write files",
            Class::Io => "ops that print or read reader queues",
            Class::Network => "ops that reach the network",
            Class::Collective => "collective communication ops",
            Class::Custom => "custom ops",
            Class::Unknown | Class::Compute => "ops Paddle 3.3.1 does not define",
        }
    }

    /// Why, for a finding.
    pub fn why(self) -> &'static str {
        match self {
            Class::Compute => "computes",
            Class::Code => "runs a Python callable of the loading process",
            Class::Files => "reads or writes the file its attributes name",
            Class::Io => "prints to the process's output or reads from a Python-fed queue",
            Class::Network => "connects to the endpoints its attributes name",
            Class::Collective => "communicates with the other processes of a communication group; no single-process model needs it",
            Class::Custom => "is a custom operator from a shared library the loader must load: this reader cannot judge it",
            Class::Unknown => "is not an op PaddlePaddle 3.3.1 registers: this reader cannot judge it",
        }
    }
}

/// Ops that run Python.
const CODE: &[&str] = &["py_func"];
/// Ops that read or write files (`save`/`load` and their combined forms, `read_file`), and the
/// older checkpoint ops of the parameter server.
const FILES: &[&str] = &[
    "checkpoint_notify",
    "load",
    "load_combine",
    "read_file",
    "recv_save",
    "save",
    "save_combine",
];
/// Ops that print or read from reader queues fed by Python.
const IO: &[&str] = &[
    "create_custom_reader",
    "create_double_buffer_reader",
    "create_py_reader",
    "print",
    "read",
];
/// Ops that open connections: the NCCL/XCCL id exchange (TCP to `endpoint`,
/// `other_endpoints`), communicator set-up, and the parameter server's RPC ops of older Paddle
/// (`send`, `recv`, `listen_and_serv`...), which 3.3.1 no longer registers.
const NETWORK: &[&str] = &[
    "c_comm_init",
    "c_comm_init_all",
    "c_comm_init_multitrainer",
    "c_gen_bkcl_id",
    "c_gen_nccl_id",
    "c_gen_xccl_id",
    "comm_init_all",
    "distributed_lookup_table",
    "distributed_push_sparse",
    "fetch_barrier",
    "gen_bkcl_id",
    "gen_nccl_id",
    "listen_and_serv",
    "prefetch",
    "recv",
    "send",
    "send_and_recv",
    "send_barrier",
];
/// Collective communication over a group the loader set up.
const COLLECTIVE: &[&str] = &[
    "all_gather",
    "all_reduce",
    "all_to_all",
    "barrier",
    "broadcast",
    "c_allgather",
    "c_allreduce_max",
    "c_allreduce_min",
    "c_allreduce_prod",
    "c_allreduce_sum",
    "c_broadcast",
    "c_concat",
    "c_reduce_sum",
    "c_reducescatter",
    "c_scatter",
    "c_sync_calc_stream",
    "c_sync_comm_stream",
    "c_wait_comm",
    "c_wait_compute",
    "global_gather",
    "global_scatter",
    "mp_allreduce_sum",
    "p_recv",
    "p_recv_array",
    "p_send",
    "p_send_array",
    "partial_allgather",
    "partial_recv",
    "partial_send",
    "recv_v2",
    "reduce_scatter",
    "send_v2",
];

static LEGACY: &str = include_str!("../../ops/legacy.txt");
static PIR: &str = include_str!("../../ops/pir.txt");

static LEGACY_NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
static PIR_NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();

/// The names of a list (sorted by codegen/gen.py; a test checks), after its header line.
fn names(list: &'static str) -> Vec<&'static str> {
    list.lines().filter(|l| !l.starts_with('#')).collect()
}

fn listed(cell: &'static OnceLock<Vec<&'static str>>, list: &'static str, name: &str) -> bool {
    cell.get_or_init(|| names(list))
        .binary_search(&name)
        .is_ok()
}

/// The class of an op by its base name (no dialect), when the tables name it.
fn by_name(base: &str) -> Option<Class> {
    // An op's in-place form (`save_combine_`) does what the op does.
    let base = base.strip_suffix('_').unwrap_or(base);
    for (list, class) in [
        (CODE, Class::Code),
        (FILES, Class::Files),
        (IO, Class::Io),
        (NETWORK, Class::Network),
        (COLLECTIVE, Class::Collective),
    ] {
        if list.contains(&base) {
            return Some(class);
        }
    }
    None
}

/// The class of a `.pdmodel` op type (`OpDesc.type`).
pub fn legacy(op: &str) -> Class {
    by_name(op).unwrap_or(if listed(&LEGACY_NAMES, LEGACY, op) {
        Class::Compute
    } else {
        Class::Unknown
    })
}

/// The dialects of a serialized PIR program by their ids, as Paddle writes an op name
/// (`1.matmul`: DialectIdMap in paddle/fluid/pir/serialize_deserialize/src/schema.cc).
const DIALECTS: &[(&str, &str)] = &[
    ("0", "builtin"),
    ("1", "pd_op"),
    ("2", "cf"),
    ("3", "custom_op"),
    ("4", "dist_op"),
];

/// A PIR op's full name (`pd_op.matmul`) from the name a serialized program gives it (`1.matmul`,
/// `p` for `builtin.parameter`), or none when its dialect id is not one Paddle defines.
pub fn pir_name(written: &str) -> Option<String> {
    if written == "p" {
        return Some("builtin.parameter".into());
    }
    let (id, op) = written.split_once('.')?;
    let dialect = DIALECTS.iter().find(|(i, _)| *i == id)?.1;
    Some(format!("{dialect}.{op}"))
}

/// The class of a PIR op by its full name.
pub fn pir(full: &str) -> Class {
    let (dialect, base) = full.split_once('.').unwrap_or(("", full));
    if let Some(c) = by_name(base) {
        return c;
    }
    if dialect == "custom_op" {
        return Class::Custom;
    }
    if listed(&PIR_NAMES, PIR, full) {
        Class::Compute
    } else {
        Class::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_sorted_and_hold_what_paddle_writes() {
        for list in [LEGACY, PIR] {
            let v = names(list);
            assert!(v.len() > 500);
            assert!(v.windows(2).all(|w| w[0] < w[1]));
        }
        for op in [
            "feed",
            "fetch",
            "mul",
            "elementwise_add",
            "relu",
            "conditional_block",
            "while",
        ] {
            assert_eq!(legacy(op), Class::Compute, "{op}");
        }
        assert_eq!(legacy("py_func"), Class::Code);
        assert_eq!(legacy("save_combine"), Class::Files);
        assert_eq!(legacy("print"), Class::Io);
        assert_eq!(legacy("c_gen_nccl_id"), Class::Network);
        assert_eq!(legacy("send_v2"), Class::Collective);
        assert_eq!(legacy("socair_no_such_op"), Class::Unknown);
        for op in [
            "p",
            "1.matmul",
            "1.data",
            "1.fetch",
            "0.shadow_output",
            "2.yield",
            "1.if",
        ] {
            let full = pir_name(op).unwrap();
            assert_eq!(pir(&full), Class::Compute, "{op}");
        }
        assert_eq!(pir("pd_op.save_combine"), Class::Files);
        assert_eq!(pir("pd_op.print"), Class::Io);
        assert_eq!(pir("custom_op.my_op"), Class::Custom);
        assert_eq!(pir("pd_op.no_such"), Class::Unknown);
        assert_eq!(pir_name("9.relu"), None);
        assert_eq!(pir_name("pd_op.relu"), None);
    }
}
