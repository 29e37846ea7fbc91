//! What a global means to the grammar: part of it ([`Known`], with the part it denotes), code
//! that runs or does I/O, or unknown ([`Class`]). Apart from the tables that classify names.

use super::dtypes::Dtype;
pub use super::profiles::Builtin;

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
    // What `socair-wo/3` adds ([`weights_only::known_v3`]).
    /// `collections.Counter`.
    Counter,
    /// `torch.Size`.
    TorchSize,
    /// `torch.device`.
    TorchDevice,
    /// `torch.Tensor`.
    TorchTensor,
    /// A legacy tensor class (`torch.FloatTensor`, `torch.cuda.…`, `torch.sparse.…`), by name.
    TensorClass(&'static str),
    /// `torch.nn.parameter.Parameter`.
    Parameter,
    /// `torch.serialization._get_layout`.
    GetLayout,
    /// `builtins.set`, `complex` or `bytearray`.
    Builtin(Builtin),
    /// A dtype global no tensor of the grammar has (`torch.complex32`, `torch.qint8`, …).
    OtherDtype(&'static str),
    /// A quantization scheme (`torch.per_tensor_affine`, …).
    QScheme(&'static str),
    /// A `torch.memory_format` constant (`torch.contiguous_format`, …).
    MemoryFormat(&'static str),
    /// `torch.storage.TypedStorage`, the class.
    TypedStorageClass,
    /// `torch._utils._rebuild_tensor` (what torch before 0.4 wrote for every tensor).
    RebuildTensor,
    /// `torch._utils._rebuild_qtensor`.
    RebuildQTensor,
    /// `torch._utils._rebuild_sparse_tensor`.
    RebuildSparse,
    /// `torch._utils._rebuild_meta_tensor_no_storage`.
    RebuildMeta,
    /// `torch._utils._rebuild_wrapper_subclass`.
    RebuildWrapperSubclass,
    /// `torch._utils._rebuild_device_tensor_from_numpy`.
    RebuildFromNumpy,
    /// `torch._utils._rebuild_device_tensor_from_cpu_tensor`.
    RebuildFromCpu,
    /// `torch._tensor._rebuild_from_type_v2`.
    RebuildFromTypeV2,
    /// A `pathlib` path class.
    Path(PathClass),
    /// A plain dataclass the grammar lists (`module.name`).
    DataClass(&'static str),
    /// An enum the grammar lists (`module.name`), with its member count.
    DataEnum(&'static str, i64),
    /// A global a library profile (or joblib mode) adds ([`super::profiles`]).
    Profile(super::profiles::ProfileGlobal),
}

impl Known {
    /// Whether this global of the grammar's own tables is data under a library profile:
    /// `OrderedDict` and `_codecs.encode` (CPython's reducers write them for plain data) and
    /// what the profile adds; torch's rebuild functions, storages, dtypes and classes are not
    /// (`pickle.load` imports torch for them).
    pub fn is_profile_data(&self) -> bool {
        matches!(
            self,
            Known::OrderedDict | Known::CodecsEncode | Known::Profile(_)
        )
    }
}

/// How the grammar classifies a global.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// Part of `socair-wo/1`.
    Known(Known),
    /// Evidence of code execution, I/O or scanner tampering; the reason says what it does.
    Dangerous(&'static str),
    /// A class the analysis (`callables`) flags through its constructor alone: what the
    /// reason says happens when the class is called. A pickle that calls it (REDUCE, OBJ,
    /// INST; NEWOBJ too when `__new__` does it) is FAIL; one that only names it, or makes it
    /// by NEWOBJ when its `__init__` does it (`cls.__new__(cls)`: pickle's default for an
    /// instance, as `torch.save` stores a `TrainingArguments`), gets a LEAD no reviewer can
    /// clear.
    Constructs(&'static str, Via),
    /// Outside the grammar: not known to be bad.
    Unknown,
}

/// Which constructor of a [`Class::Constructs`] class reaches the sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `__init__` (or a dataclass's `__post_init__`): runs when the class is called.
    Init,
    /// `__new__`: runs when the class is called and on NEWOBJ.
    New,
}

impl Via {
    /// Whether a call of the class runs it: `newobj` for NEWOBJ (`cls.__new__(cls, *args)`).
    pub fn runs_on(self, newobj: bool) -> bool {
        !newobj || self == Via::New
    }
}

/// A `pathlib` class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathClass {
    /// `PurePath`, `PurePosixPath`, `PureWindowsPath`: never touch the file system.
    Pure,
    /// `Path`, `PosixPath`: constructing one only parses the text (Lib/pathlib.py
    /// `PurePath.__new__`/`_from_parts` in 3.8-3.11, `PurePath.__init__` from 3.12): no I/O.
    Concrete,
    /// `WindowsPath`: constructing one on POSIX raises (`NotImplementedError` to 3.12,
    /// `UnsupportedOperation` from 3.13, "cannot instantiate 'WindowsPath' on your system").
    Windows,
}
