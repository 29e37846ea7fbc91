//! What each pickle global means to `socair-wo/1`: part of the grammar (with its typed
//! meaning), evidence of code execution, or unknown.
//!
//! Sources for the accepted set (torch v2.14 sources; see `GRAMMAR.md` beside this crate):
//! * `collections.OrderedDict`: the state dict container and every tensor's empty
//!   `backward_hooks` (torch/_utils.py, "Note [Don't serialize hooks]").
//! * `torch._utils._rebuild_tensor_v2` / `_rebuild_tensor_v3`: `Tensor._reduce_ex_internal`
//!   (torch/_tensor.py) picks v3 for the dtypes of `_new_dtypes()` over an untyped storage,
//!   v2 otherwise.
//! * `torch._utils._rebuild_parameter` / `_rebuild_parameter_with_state`:
//!   `Parameter.__reduce_ex__` (torch/nn/parameter.py).
//! * `torch.<X>Storage`: `_dtype_to_storage_type_map` (torch/storage.py), the storage class
//!   `persistent_id` names for a typed storage (torch/serialization.py `_save`).
//! * `torch.storage.UntypedStorage` and the dtype globals `torch.<dtype>`: the v3 path.
//! * `_codecs.encode`: how pickle protocol 2 writes `bytes` (allowed by
//!   torch/_weights_only_unpickler.py).

/// A dtype as torch names it, with the safetensors name `socair-convert/1` pairs it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtype {
    /// torch's name (`float32`).
    pub torch: &'static str,
    /// The safetensors dtype name (`F32`); complex128 has none and is called `C128`.
    pub safetensors: &'static str,
    /// Bytes per element.
    pub size: u64,
}

const fn dt(torch: &'static str, safetensors: &'static str, size: u64) -> Dtype {
    Dtype {
        torch,
        safetensors,
        size,
    }
}

/// Every dtype the grammar models (safetensors' own pairs, `parse_dtype_str` in
/// bindings/python/src/lib.rs, plus complex128).
pub const DTYPES: &[Dtype] = &[
    dt("float64", "F64", 8),
    dt("float32", "F32", 4),
    dt("float16", "F16", 2),
    dt("bfloat16", "BF16", 2),
    dt("int64", "I64", 8),
    dt("int32", "I32", 4),
    dt("int16", "I16", 2),
    dt("int8", "I8", 1),
    dt("uint8", "U8", 1),
    dt("bool", "BOOL", 1),
    dt("complex64", "C64", 8),
    dt("complex128", "C128", 16),
    dt("uint16", "U16", 2),
    dt("uint32", "U32", 4),
    dt("uint64", "U64", 8),
    dt("float8_e4m3fn", "F8_E4M3", 1),
    dt("float8_e5m2", "F8_E5M2", 1),
    dt("float8_e4m3fnuz", "F8_E4M3FNUZ", 1),
    dt("float8_e5m2fnuz", "F8_E5M2FNUZ", 1),
    dt("float8_e8m0fnu", "F8_E8M0", 1),
];

/// The typed storage classes and their dtypes (`_dtype_to_storage_type_map`).
pub const TYPED_STORAGES: &[(&str, &str)] = &[
    ("DoubleStorage", "float64"),
    ("FloatStorage", "float32"),
    ("HalfStorage", "float16"),
    ("LongStorage", "int64"),
    ("IntStorage", "int32"),
    ("ShortStorage", "int16"),
    ("CharStorage", "int8"),
    ("ByteStorage", "uint8"),
    ("BoolStorage", "bool"),
    ("BFloat16Storage", "bfloat16"),
    ("ComplexDoubleStorage", "complex128"),
    ("ComplexFloatStorage", "complex64"),
];

/// The dtype named `torch_name`.
pub fn dtype(torch_name: &str) -> Option<&'static Dtype> {
    DTYPES.iter().find(|d| d.torch == torch_name)
}

/// The part of the grammar a global denotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// `collections.OrderedDict`.
    OrderedDict,
    /// `torch._utils._rebuild_tensor_v2`.
    RebuildTensorV2,
    /// `torch._utils._rebuild_tensor_v3`.
    RebuildTensorV3,
    /// `torch._utils._rebuild_parameter`.
    RebuildParameter,
    /// `torch._utils._rebuild_parameter_with_state`.
    RebuildParameterWithState,
    /// A typed storage class.
    TypedStorage(&'static Dtype),
    /// `torch.storage.UntypedStorage`.
    UntypedStorage,
    /// A dtype global such as `torch.uint16`.
    Dtype(&'static Dtype),
    /// `_codecs.encode` (bytes under protocol 2).
    CodecsEncode,
}

/// How the grammar classifies a global.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// Part of `socair-wo/1`.
    Known(Known),
    /// Evidence of code execution (or of defeating a scanner); the reason says what it does.
    Dangerous(&'static str),
    /// Outside the grammar: not known to be bad.
    Unknown,
}

/// Modules whose every member is dangerous, with why. A global matches when its module is
/// the entry or inside it (`os.path` matches `os`). Drawn from the bypasses listed in the
/// research notes (picklescan, modelscan and fickling advisories) and CPython's own modules
/// that run code, spawn processes, load pickles or reach the network.
const DANGEROUS_MODULES: &[(&str, &str)] = &[
    ("os", "runs commands or touches the file system"),
    ("posix", "runs commands"),
    ("nt", "runs commands"),
    ("subprocess", "spawns processes"),
    ("pty", "spawns processes"),
    (
        "sys",
        "reaches the interpreter's internals (sys.modules overrides)",
    ),
    ("runpy", "runs code"),
    ("code", "runs code"),
    ("codeop", "compiles code"),
    ("marshal", "loads code objects"),
    ("pickle", "loads a nested pickle"),
    ("_pickle", "loads a nested pickle"),
    ("cPickle", "loads a nested pickle"),
    ("dill", "loads a nested pickle"),
    ("joblib", "loads a nested pickle"),
    ("shelve", "loads pickles"),
    ("shutil", "moves or deletes files"),
    ("socket", "opens network connections"),
    ("ctypes", "calls native code"),
    ("_ctypes", "calls native code"),
    ("importlib", "imports modules"),
    ("pkgutil", "resolves arbitrary names (pkgutil.resolve_name)"),
    ("pydoc", "resolves arbitrary names (pydoc.locate)"),
    ("webbrowser", "opens URLs with external programs"),
    ("multiprocessing", "spawns processes"),
    (
        "asyncio",
        "spawns processes (asyncio subprocess transports)",
    ),
    ("platform", "runs commands"),
    ("commands", "runs commands"),
    ("popen2", "runs commands"),
    ("pdb", "runs code"),
    ("bdb", "runs code"),
    ("cProfile", "runs code (cProfile.run)"),
    ("profile", "runs code (profile.run)"),
    ("trace", "runs code (trace.Trace.run)"),
    ("timeit", "runs code"),
    ("idlelib", "runs code"),
    ("lib2to3", "runs code"),
    ("ensurepip", "runs pip"),
    ("pip", "runs pip"),
    ("distutils", "writes files and runs commands"),
    ("setuptools", "runs commands"),
    ("urllib", "reaches the network"),
    ("urllib2", "reaches the network"),
    ("http", "reaches the network"),
    ("httplib", "reaches the network"),
    ("requests", "reaches the network"),
    ("ftplib", "reaches the network"),
    ("smtplib", "reaches the network"),
    ("telnetlib", "reaches the network"),
    ("_io", "opens files"),
    ("io", "opens files"),
    ("tempfile", "creates files"),
    ("glob", "lists files"),
    ("signal", "changes process signal handling"),
    ("threading", "starts threads"),
    ("_thread", "starts threads"),
    ("inspect", "reaches code objects"),
    ("gc", "reaches every live object"),
    ("uuid", "runs commands (uuid._get_command_stdout)"),
    ("_osx_support", "runs commands"),
    ("_aix_support", "runs commands"),
    ("_pyrepl", "runs code"),
    ("logging", "writes files (logging.FileHandler)"),
    ("numpy.f2py", "runs code"),
    ("numpy.testing", "runs code (runstring)"),
    (
        "torch.storage._load_from_bytes",
        "loads a nested pickle through torch.load",
    ),
    ("torch.serialization", "loads nested checkpoints"),
    ("torch.load", "loads a nested checkpoint"),
    ("torch.jit", "compiles and runs TorchScript"),
    ("torch.hub", "downloads and runs code"),
    ("torch.utils.collect_env", "runs commands"),
    ("torch.utils.bottleneck", "runs code"),
    ("torch.utils._config_module", "loads a nested pickle"),
    ("torch.utils.data.datapipes", "loads nested pickles"),
    ("torch._dynamo", "evaluates guard expressions"),
    ("torch._inductor", "compiles and runs code"),
    ("torch.fx", "evaluates expressions"),
    ("torch._C", "calls native internals"),
    ("fickling", "tampers with a scanner"),
    ("picklescan", "tampers with a scanner"),
    ("modelscan", "tampers with a scanner"),
    ("modelaudit", "tampers with a scanner"),
];

/// Members of otherwise ordinary modules that are dangerous.
const DANGEROUS_NAMES: &[(&str, &str, &str)] = &[
    ("builtins", "eval", "evaluates code"),
    ("builtins", "exec", "runs code"),
    ("builtins", "execfile", "runs code"),
    ("builtins", "compile", "compiles code"),
    (
        "builtins",
        "getattr",
        "reaches any attribute (gadget chains)",
    ),
    ("builtins", "setattr", "overwrites attributes"),
    ("builtins", "delattr", "deletes attributes"),
    ("builtins", "__import__", "imports modules"),
    ("builtins", "open", "opens files"),
    ("builtins", "input", "reads the terminal"),
    ("builtins", "breakpoint", "starts a debugger"),
    ("builtins", "globals", "reaches the interpreter's globals"),
    ("builtins", "locals", "reaches the interpreter's locals"),
    ("builtins", "vars", "reaches object internals"),
    ("builtins", "apply", "calls anything"),
    ("__builtin__", "eval", "evaluates code"),
    ("__builtin__", "exec", "runs code"),
    ("__builtin__", "execfile", "runs code"),
    ("__builtin__", "getattr", "reaches any attribute"),
    ("__builtin__", "__import__", "imports modules"),
    ("__builtin__", "open", "opens files"),
    ("__builtin__", "file", "opens files"),
    (
        "operator",
        "attrgetter",
        "reaches any attribute (gadget chains)",
    ),
    (
        "operator",
        "methodcaller",
        "calls any method (gadget chains)",
    ),
    (
        "_operator",
        "attrgetter",
        "reaches any attribute (gadget chains)",
    ),
    (
        "_operator",
        "methodcaller",
        "calls any method (gadget chains)",
    ),
    ("types", "CodeType", "builds code objects"),
    ("types", "FunctionType", "builds functions"),
    ("functools", "reduce", "calls anything"),
    ("copyreg", "_reconstructor", "constructs arbitrary classes"),
    ("torch", "load", "loads a nested checkpoint"),
];

fn in_module(module: &str, prefix: &str) -> bool {
    module == prefix
        || module
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Classifies the global `module.name` (names are matched exactly, never by substring).
pub fn classify(module: &str, name: &str) -> Class {
    let known = match (module, name) {
        ("collections", "OrderedDict") => Some(Known::OrderedDict),
        ("torch._utils", "_rebuild_tensor_v2") => Some(Known::RebuildTensorV2),
        ("torch._utils", "_rebuild_tensor_v3") => Some(Known::RebuildTensorV3),
        ("torch._utils", "_rebuild_parameter") => Some(Known::RebuildParameter),
        ("torch._utils", "_rebuild_parameter_with_state") => Some(Known::RebuildParameterWithState),
        ("torch.storage", "UntypedStorage") => Some(Known::UntypedStorage),
        ("_codecs", "encode") => Some(Known::CodecsEncode),
        ("torch", n) => TYPED_STORAGES
            .iter()
            .find(|(class, _)| *class == n)
            .map(|(_, dtype_name)| {
                Known::TypedStorage(dtype(dtype_name).expect("storage table names known dtypes"))
            })
            .or_else(|| dtype(n).map(Known::Dtype)),
        _ => None,
    };
    if let Some(k) = known {
        return Class::Known(k);
    }
    let qualified = format!("{module}.{name}");
    for (m, why) in DANGEROUS_MODULES {
        if in_module(module, m) || in_module(&qualified, m) {
            return Class::Dangerous(why);
        }
    }
    for (m, n, why) in DANGEROUS_NAMES {
        if module == *m && (name == *n || name.starts_with(&format!("{n}."))) {
            return Class::Dangerous(why);
        }
    }
    Class::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar_globals() {
        assert_eq!(
            classify("torch", "FloatStorage"),
            Class::Known(Known::TypedStorage(dtype("float32").unwrap()))
        );
        assert_eq!(
            classify("torch", "uint16"),
            Class::Known(Known::Dtype(dtype("uint16").unwrap()))
        );
        assert_eq!(
            classify("torch._utils", "_rebuild_tensor_v2"),
            Class::Known(Known::RebuildTensorV2)
        );
    }

    #[test]
    fn dangerous_by_module_and_name_never_by_substring() {
        assert!(matches!(classify("os", "system"), Class::Dangerous(_)));
        assert!(matches!(classify("os.path", "join"), Class::Dangerous(_)));
        assert!(matches!(classify("builtins", "eval"), Class::Dangerous(_)));
        assert!(matches!(
            classify("torch.storage", "_load_from_bytes"),
            Class::Dangerous(_)
        ));
        assert!(matches!(
            classify("torch.utils.collect_env", "run"),
            Class::Dangerous(_)
        ));
        // Substrings do not match: "osmosis" is not "os".
        assert_eq!(classify("osmosis", "x"), Class::Unknown);
        assert_eq!(classify("builtins", "set"), Class::Unknown);
        assert_eq!(classify("torch", "QInt8Storage"), Class::Unknown);
        assert_eq!(classify("argparse", "Namespace"), Class::Unknown);
    }
}
