//! What `socair-wo/3` adds to the grammar's globals: the rest of what torch's weights-only
//! unpickler loads, mirrored from torch v2.15.0 (`torch/_weights_only_unpickler.py`
//! `_get_allowed_globals` and `_tensor_rebuild_functions`), and the few plain-data classes
//! torch's own writers put in pickles that `torch.load(weights_only=True)` does not list
//! (`pathlib` paths in saved arguments, the metadata dataclasses of
//! `torch.distributed.checkpoint`'s `.metadata` file, which `pickle.load` reads).
//!
//! [`TORCH_ALLOWED`] is `sorted(_get_allowed_globals())` as torch 2.15.0 computes it
//! (`make_weights_only.py allowed` writes it, into `torch_allowed.rs`); [`known_v3`] gives each its meaning, or leaves it to the
//! generic rule (a LEAD) with the reason `GRAMMAR.md` gives ("In the grammar", `/3`). A test
//! keeps every entry of the list out of the dangerous classification under `/3`.

use super::dtypes::{dt, dtype, Dtype, TYPED_STORAGES};
use super::known::{Builtin, Known, PathClass};

/// The storages of quantized tensors (`_dtype_to_storage_type_map` at v2.15.0: `QInt8Storage`
/// and the rest), each with the dtype of its elements. Their `safetensors` name is that of the
/// integer representation a quantized tensor's `int_repr()` gives; `size` is torch's element
/// size.
pub const QUANTIZED_DTYPES: &[Dtype] = &[
    dt("qint8", "I8", 1),
    dt("quint8", "U8", 1),
    dt("qint32", "I32", 4),
    dt("quint4x2", "U8", 1),
    dt("quint2x4", "U8", 1),
];

/// The quantized storage classes and their dtypes.
pub const QUANTIZED_STORAGES: &[(&str, &str)] = &[
    ("QInt8Storage", "qint8"),
    ("QUInt8Storage", "quint8"),
    ("QInt32Storage", "qint32"),
    ("QUInt4x2Storage", "quint4x2"),
    ("QUInt2x4Storage", "quint2x4"),
];

/// A quantized dtype by torch's name.
pub fn quantized_dtype(name: &str) -> Option<&'static Dtype> {
    QUANTIZED_DTYPES.iter().find(|d| d.torch == name)
}

/// Whether `d` is one of [`QUANTIZED_DTYPES`].
pub fn is_quantized(d: &Dtype) -> bool {
    QUANTIZED_DTYPES.iter().any(|q| q.torch == d.torch)
}

/// The dtype of a quantized dtype's integer representation (`int_repr()`): `None` for the
/// sub-byte ones, whose elements pack several values.
pub fn int_repr_dtype(d: &Dtype) -> Option<&'static Dtype> {
    match d.torch {
        "qint8" => dtype("int8"),
        "quint8" => dtype("uint8"),
        "qint32" => dtype("int32"),
        _ => None,
    }
}

/// Dtype globals the weights-only unpickler lists that no tensor of the grammar has (a
/// safetensors name would be needed to read one): values only, as in a saved configuration.
const OTHER_DTYPES: &[&str] = &[
    "complex32",
    "bcomplex32",
    "bits16",
    "bits1x8",
    "bits2x4",
    "bits4x2",
    "bits8",
    "qint8",
    "qint32",
    "quint8",
    "quint4x2",
    "quint2x4",
    "uint1",
    "uint2",
    "uint3",
    "uint4",
    "uint5",
    "uint6",
    "uint7",
    "int1",
    "int2",
    "int3",
    "int4",
    "int5",
    "int6",
    "int7",
];

/// The quantization schemes (`torch.per_tensor_affine`, …), `str(qscheme)` less `torch.`.
const QSCHEMES: &[&str] = &[
    "per_tensor_affine",
    "per_tensor_symmetric",
    "per_channel_affine",
    "per_channel_symmetric",
    "per_channel_affine_float_qparams",
];

/// `torch.memory_format` constants: `torch.save` of a `memory_format` pickles its name
/// (`torch/csrc/MemoryFormat.cpp` `THPMemoryFormat_reduce`), as dcp's `TensorProperties` did
/// before torch 2.3 encoded it as `_MEM_FORMAT_ENCODING`.
const MEMORY_FORMATS: &[&str] = &[
    "contiguous_format",
    "channels_last",
    "channels_last_3d",
    "preserve_format",
];

/// The element types of torch's legacy tensor classes (`torch._tensor_classes`).
const TENSOR_CLASSES: &[&str] = &[
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
];

/// The metadata dataclasses `torch.distributed.checkpoint` pickles into a checkpoint's
/// `.metadata` file (`FileSystemWriter.finish` does `pickle.dump(metadata, metadata_file)`,
/// `FileSystemReader.read_metadata` does `pickle.load`; torch/distributed/checkpoint/
/// filesystem.py at v2.15.0), from `torch/distributed/checkpoint/metadata.py` (`__all__`) and
/// the storage information `filesystem.py` keeps per item. Plain dataclasses: NEWOBJ with no
/// arguments, then BUILD with their `__dict__` (`TensorProperties` has a `__setstate__` of a
/// 5- or 6-tuple).
pub const DCP_DATACLASSES: &[&str] = &[
    "torch.distributed.checkpoint.metadata.Metadata",
    "torch.distributed.checkpoint.metadata.TensorStorageMetadata",
    "torch.distributed.checkpoint.metadata.BytesStorageMetadata",
    "torch.distributed.checkpoint.metadata.ChunkStorageMetadata",
    "torch.distributed.checkpoint.metadata.TensorProperties",
    "torch.distributed.checkpoint.metadata.StorageMeta",
    "torch.distributed.checkpoint.metadata.MetadataIndex",
    "torch.distributed.checkpoint.filesystem._StorageInfo",
];

/// The enum dcp pickles for a `TensorProperties`' memory format, with its member count.
pub const DCP_ENUMS: &[(&str, i64)] = &[(
    "torch.distributed.checkpoint.metadata._MEM_FORMAT_ENCODING",
    3,
)];

/// The meaning `/3` gives `module.name` beyond `/1`'s (see [`super::known`]), before danger is
/// judged: exact pairs only.
pub fn known_v3(module: &str, name: &str) -> Option<Known> {
    let k = match (module, name) {
        ("collections", "Counter") => Known::Counter,
        ("torch", "Size") => Known::TorchSize,
        ("torch", "device") => Known::TorchDevice,
        ("torch", "Tensor") => Known::TorchTensor,
        ("torch.nn.parameter", "Parameter") => Known::Parameter,
        ("torch.serialization", "_get_layout") => Known::GetLayout,
        ("builtins", "set") => Known::Builtin(Builtin::Set),
        ("builtins", "complex") => Known::Builtin(Builtin::Complex),
        ("builtins", "bytearray") => Known::Builtin(Builtin::Bytearray),
        ("torch.storage", "TypedStorage") => Known::TypedStorageClass,
        ("torch._utils", "_rebuild_tensor") => Known::RebuildTensor,
        ("torch._utils", "_rebuild_qtensor") => Known::RebuildQTensor,
        ("torch._utils", "_rebuild_sparse_tensor") => Known::RebuildSparse,
        ("torch._utils", "_rebuild_meta_tensor_no_storage") => Known::RebuildMeta,
        ("torch._utils", "_rebuild_wrapper_subclass") => Known::RebuildWrapperSubclass,
        ("torch._utils", "_rebuild_device_tensor_from_numpy") => Known::RebuildFromNumpy,
        ("torch._utils", "_rebuild_device_tensor_from_cpu_tensor") => Known::RebuildFromCpu,
        ("torch._tensor", "_rebuild_from_type_v2") => Known::RebuildFromTypeV2,
        ("pathlib" | "pathlib._local", n) => Known::Path(match n {
            "PurePath" | "PurePosixPath" | "PureWindowsPath" => PathClass::Pure,
            "Path" | "PosixPath" => PathClass::Concrete,
            "WindowsPath" => PathClass::Windows,
            _ => return None,
        }),
        ("torch", n) => {
            if let Some(d) = QUANTIZED_STORAGES
                .iter()
                .find(|(c, _)| *c == n)
                .and_then(|(_, d)| quantized_dtype(d))
            {
                Known::TypedStorage(d)
            } else if let Some(&d) = OTHER_DTYPES.iter().find(|&&d| d == n) {
                Known::OtherDtype(d)
            } else if let Some(&q) = QSCHEMES.iter().find(|&&q| q == n) {
                Known::QScheme(q)
            } else if let Some(&m) = MEMORY_FORMATS.iter().find(|&&m| m == n) {
                Known::MemoryFormat(m)
            } else if let Some(&c) = TENSOR_CLASSES.iter().find(|&&c| c == n) {
                Known::TensorClass(c)
            } else {
                return None;
            }
        }
        ("torch.cuda", n) => {
            if let Some(d) = TYPED_STORAGES
                .iter()
                .find(|(c, _)| *c == n)
                .and_then(|(_, d)| dtype(d))
            {
                Known::TypedStorage(d)
            } else if let Some(&c) = TENSOR_CLASSES.iter().find(|&&c| c == n) {
                Known::TensorClass(c)
            } else {
                return None;
            }
        }
        ("torch.sparse" | "torch.cuda.sparse", n) => {
            let &c = TENSOR_CLASSES
                .iter()
                .filter(|&&c| c != "BoolTensor")
                .find(|&&c| c == n)?;
            Known::TensorClass(c)
        }
        (m, n) => {
            let dotted = format!("{m}.{n}");
            if let Some(&c) = DCP_DATACLASSES.iter().find(|&&c| c == dotted) {
                Known::DataClass(c)
            } else if let Some(&(e, members)) = DCP_ENUMS.iter().find(|(e, _)| *e == dotted) {
                Known::DataEnum(e, members)
            } else {
                return None;
            }
        }
    };
    Some(k)
}

// [`TORCH_ALLOWED`], as `make_weights_only.py allowed` writes it.
include!("torch_allowed.rs");
