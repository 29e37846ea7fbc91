//! The facts a reader hands the host besides tensors and rows, typed: what the host's own
//! steps act on (a conversion's derivation record, the Python loader, the reads of a
//! distributed checkpoint's files). Metadata strings are the file's own (safetensors'
//! `__metadata__`, GGUF's keys) and are never read as facts, so no file can forge one.

use abi_stable::{
    std_types::{ROption, RString, RVec},
    StableAbi,
};

/// A fact about the opened file.
#[repr(C, u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// What the input's `byteorder` record says (the torch readers'), for the derivation
    /// record.
    ByteOrderRecord(ByteOrderRecord),
    /// A tensor `torch.load` returns as more than a plain tensor (the torch readers'), for a
    /// loader that gives tensors as torch gives them (the Python package's `socair.torch.load`).
    TorchTensorKind {
        /// The tensor's name, as its descriptor names it.
        tensor: RString,
        /// What torch returns it as.
        kind: TorchTensorKind,
    },
    /// A distributed checkpoint's `.metadata` and its items, in `storage_data`'s order (the
    /// torch-zip reader's), which the host reads the `.distcp` files by.
    DcpItems(RVec<DcpItem>),
}

/// A torch checkpoint's `byteorder` record.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrderRecord {
    /// `little`.
    Little,
    /// `big`.
    Big,
    /// No record: `torch.load` reads the storages as little-endian.
    Absent,
    /// A legacy (pre-zip) file, which has no such record.
    Legacy,
}

impl ByteOrderRecord {
    /// The word the derivation record writes.
    pub fn as_str(self) -> &'static str {
        match self {
            ByteOrderRecord::Little => "little",
            ByteOrderRecord::Big => "big",
            ByteOrderRecord::Absent => "absent",
            ByteOrderRecord::Legacy => "legacy",
        }
    }
}

/// What `torch.load` returns a tensor as, beyond a plain tensor.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TorchTensorKind {
    /// An `nn.Parameter` with `requires_grad=True`.
    Parameter,
    /// An `nn.Parameter` with `requires_grad=False`.
    FrozenParameter,
    /// A tensor with `requires_grad=True`.
    RequiresGrad,
}

impl TorchTensorKind {
    /// Its name in documents (`parameter`, `parameter-frozen`, `requires-grad`).
    pub fn as_str(self) -> &'static str {
        match self {
            TorchTensorKind::Parameter => "parameter",
            TorchTensorKind::FrozenParameter => "parameter-frozen",
            TorchTensorKind::RequiresGrad => "requires-grad",
        }
    }
}

/// What a distributed checkpoint's item is loaded as.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DcpItemKind {
    /// A tensor (loaded with `weights_only=True`).
    Tensor,
    /// Bytes, a pickled Python value (loaded with `weights_only=False`).
    Bytes,
}

impl DcpItemKind {
    /// `tensor` or `bytes`.
    pub fn as_str(self) -> &'static str {
        match self {
            DcpItemKind::Tensor => "tensor",
            DcpItemKind::Bytes => "bytes",
        }
    }
}

/// One item of a distributed checkpoint's `.metadata` (torch's `MetadataIndex` with its
/// `_StorageInfo`).
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct DcpItem {
    /// The state dict's fully qualified name (`MetadataIndex.fqn`).
    pub fqn: RString,
    /// A tensor chunk's offsets in the whole tensor (`MetadataIndex.offset`); none for a bytes
    /// item.
    pub chunk: ROption<RVec<i64>>,
    /// The chunk's sizes (the shape `torch.load` must give); none for a bytes item.
    pub sizes: ROption<RVec<i64>>,
    /// The whole tensor's size, when the chunk is not all of it.
    pub whole: ROption<RVec<i64>>,
    /// What it loads as.
    pub kind: DcpItemKind,
    /// `_StorageInfo.relative_path`.
    pub file: RString,
    /// `_StorageInfo.offset`.
    pub offset: u64,
    /// `_StorageInfo.length`.
    pub length: u64,
    /// Whether it names stream transforms (an extension such as compression).
    pub transformed: bool,
}
