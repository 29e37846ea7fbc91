//! The values a read yields: the file, its objects, datasets and attributes, the findings and
//! the errors, shared by every module of the reader.

/// A byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

/// A datatype, as far as this reader models it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// An integer of `size` bytes.
    Int {
        /// Bytes.
        size: u32,
        /// Signed (two's complement).
        signed: bool,
        /// Byte order.
        order: Order,
    },
    /// An integer of `size` bytes whose value is `precision` bits at bit `offset` (the rest
    /// padding), read as the integer of its size ([`Type::widen`]).
    PackedInt {
        /// Bytes.
        size: u32,
        /// Signed (two's complement, its sign the top significant bit).
        signed: bool,
        /// Byte order.
        order: Order,
        /// Significant bits.
        precision: u16,
        /// The first significant bit.
        offset: u16,
    },
    /// An IEEE 754 float of `size` bytes (binary16, binary32, binary64).
    Float {
        /// Bytes.
        size: u32,
        /// Byte order.
        order: Order,
    },
    /// A complex number as h5py stores NumPy's `complex64` and `complex128`: a compound of
    /// two IEEE floats of `size / 2` bytes named `r` and `i`, in that order, unpadded.
    Complex {
        /// Bytes of both parts.
        size: u32,
        /// Byte order.
        order: Order,
    },
    /// h5py's boolean: an `int8` enum with exactly `FALSE = 0` and `TRUE = 1`.
    Bool,
    /// A fixed-length string of `size` bytes.
    FixedString {
        /// Bytes.
        size: u32,
        /// Padding: 0 null-terminated, 1 null-padded, 2 space-padded.
        pad: u8,
    },
    /// A variable-length string (its elements are global heap references).
    VarString,
    /// An opaque type of `size` bytes (what h5py stores for a NumPy `void` dtype, such as
    /// `ml_dtypes.bfloat16`, which Keras marks with a `dtype` attribute).
    Opaque {
        /// Bytes.
        size: u32,
    },
    /// An array of a fixed shape of a numeric element (`H5T_ARRAY`), which h5py reads as
    /// that many more dimensions of its base type (NumPy's subarray dtype).
    Array {
        /// The base type: one with an [`Type::element`].
        base: Box<Type>,
        /// The array's dimensions.
        dims: Vec<u64>,
        /// Bytes of the whole array.
        size: u32,
    },
    /// Any other type: what it is, and its element size.
    Other {
        /// What it is, for a reason.
        what: String,
        /// Bytes per element.
        size: u32,
    },
}

impl Type {
    /// Bytes per element as stored.
    pub fn size(&self, offsets: u8) -> u64 {
        match self {
            Type::Int { size, .. }
            | Type::PackedInt { size, .. }
            | Type::Float { size, .. }
            | Type::Complex { size, .. }
            | Type::FixedString { size, .. }
            | Type::Opaque { size }
            | Type::Array { size, .. }
            | Type::Other { size, .. } => u64::from(*size),
            Type::Bool => 1,
            // Length (4), collection address, object index (4).
            Type::VarString => 8 + u64::from(offsets),
        }
    }

    /// The element type in socair's vocabulary (safetensors' dtype names), for a tensor.
    pub fn element(&self) -> Option<(&'static str, Order)> {
        let name = match self {
            Type::Float { size: 2, order } => ("F16", *order),
            Type::Float { size: 4, order } => ("F32", *order),
            Type::Float { size: 8, order } => ("F64", *order),
            Type::Complex { size: 8, order } => ("C64", *order),
            Type::Complex { size: 16, order } => ("C128", *order),
            Type::Int {
                size,
                signed,
                order,
            }
            | Type::PackedInt {
                size,
                signed,
                order,
                ..
            } => {
                let n = match (size, signed) {
                    (1, true) => "I8",
                    (2, true) => "I16",
                    (4, true) => "I32",
                    (8, true) => "I64",
                    (1, false) => "U8",
                    (2, false) => "U16",
                    (4, false) => "U32",
                    (8, false) => "U64",
                    _ => return None,
                };
                (n, *order)
            }
            Type::Bool => ("BOOL", Order::Little),
            _ => return None,
        };
        Some(name)
    }

    /// A short description, for reasons.
    pub fn describe(&self) -> String {
        match self {
            Type::Int { size, signed, .. } => {
                format!(
                    "{}int{}",
                    if *signed { "" } else { "u" },
                    u64::from(*size) * 8
                )
            }
            Type::PackedInt {
                size,
                signed,
                precision,
                ..
            } => format!(
                "{}int{} of {precision} significant bits",
                if *signed { "" } else { "u" },
                u64::from(*size) * 8
            ),
            Type::Float { size, .. } => format!("float{}", u64::from(*size) * 8),
            Type::Complex { size, .. } => format!("complex{}", u64::from(*size) * 8),
            Type::Bool => "bool".into(),
            Type::FixedString { size, .. } => format!("a string of {size} bytes"),
            Type::VarString => "a variable-length string".into(),
            Type::Opaque { size } => format!("an opaque type of {size} bytes"),
            Type::Array { base, dims, .. } => format!("an array {dims:?} of {}", base.describe()),
            Type::Other { what, .. } => what.clone(),
        }
    }

    /// The element type of the tensor h5py reads (an array's base type's: see
    /// [`Type::tensor_dims`]).
    pub fn tensor_element(&self) -> Option<(&'static str, Order)> {
        match self {
            Type::Array { base, .. } => base.element(),
            t => t.element(),
        }
    }

    /// The dimensions h5py appends to a dataset's for each element (an array's shape).
    pub fn tensor_dims(&self) -> &[u64] {
        match self {
            Type::Array { dims, .. } => dims,
            _ => &[],
        }
    }
}

impl Type {
    /// `bytes` (whole elements of this type) as h5py reads them: a [`Type::PackedInt`]'s
    /// significant bits moved to the bottom and extended by its sign (or zeros), as the
    /// library's integer conversion does (`H5T__conv_i_i`, `H5Tconv_integer.c`); any other
    /// type's bytes are left as they are.
    pub fn widen(&self, bytes: &mut [u8]) {
        let &Type::PackedInt {
            size,
            signed,
            order,
            precision,
            offset,
        } = self
        else {
            return;
        };
        let size = size as usize;
        let keep = if precision >= 64 {
            u64::MAX
        } else {
            (1u64 << precision) - 1
        };
        for element in bytes.chunks_exact_mut(size) {
            let mut word = [0u8; 8];
            match order {
                Order::Little => word[..size].copy_from_slice(element),
                Order::Big => word[..size]
                    .iter_mut()
                    .zip(element.iter().rev())
                    .for_each(|(w, &b)| *w = b),
            }
            let mut value = (u64::from_le_bytes(word) >> offset) & keep;
            if signed && precision < 64 && value >> (precision - 1) & 1 == 1 {
                value |= !keep;
            }
            let out = value.to_le_bytes();
            match order {
                Order::Little => element.copy_from_slice(&out[..size]),
                Order::Big => element
                    .iter_mut()
                    .zip(out[..size].iter().rev())
                    .for_each(|(e, &b)| *e = b),
            }
        }
    }
}

/// Why a chunk's filters were not undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A filter socair does not decode (a plugin's; scale-offset or szip with parameters
    /// outside what is decoded exactly): its name.
    Unsupported(String),
    /// The chunk does not decode: the library refuses to read it too (a wrong checksum, a
    /// broken stream).
    Corrupt(String),
    /// It decodes to more than the limit.
    TooLarge(String),
}

/// HDF5's undefined address (all bits set).
pub const UNDEFINED: u64 = u64::MAX;

/// Why a file is refused: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {reason}")]
pub struct Hdf5Error {
    /// The place: a structure and its address, an object's path.
    pub place: String,
    /// What is wrong there.
    pub reason: String,
}

impl Hdf5Error {
    /// An error at `place`.
    pub fn new(place: impl Into<String>, reason: impl Into<String>) -> Self {
        Hdf5Error {
            place: place.into(),
            reason: reason.into(),
        }
    }
}

/// How bad a finding is: the scale every first-party reader shares (a FAIL here: the HDF5
/// library would open another file, or load a plugin, reading this one).
pub use socair_plugin_kit::Severity;

/// One finding: the reading model every first-party reader shares.
pub use socair_plugin_kit::model::Finding;

/// A row's findings, bounded, the worst of all kept (one type for the HDF5 walk and the Keras
/// checks built on it): the reading model's.
pub use socair_plugin_kit::model::Findings;

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Strings (fixed-length ones with their padding removed), decoded as UTF-8 with
    /// replacement.
    Strings(Vec<String>),
    /// Signed integers.
    Ints(Vec<i64>),
    /// Unsigned integers.
    UInts(Vec<u64>),
    /// Floats.
    Floats(Vec<f64>),
    /// Booleans.
    Bools(Vec<bool>),
    /// Not decoded: why.
    Other(String),
}

/// An attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: Value,
}

/// Where a dataset's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// Absolute `(offset, len)` ranges of the file, in row-major order.
    Ranges(Vec<(u64, u64)>),
    /// The bytes themselves (compact storage, or chunks assembled in row-major order).
    Inline(Vec<u8>),
    /// No elements.
    Empty,
    /// `(offset, len)` ranges, in row-major order, of another file (external raw storage:
    /// [`crate::external`]), named as the file names it.
    Elsewhere {
        /// The file, as the External Data Files message names it.
        file: String,
        /// Its ranges holding the elements.
        ranges: Vec<(u64, u64)>,
    },
    /// Located, but assembling its bytes (chunks in tiles, filtered, or never written) needs
    /// the data, which a read of headers only does not read: why.
    Deferred(String),
    /// Elements that are data of a type that is no tensor's (compound records, strings,
    /// enumerations, references, arrays, long doubles): what they are. h5py reads them as
    /// values and runs nothing; they are listed, not fingerprinted.
    Data(String),
    /// Not located: why.
    Unread(String),
}

/// A dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dataset {
    /// Its type.
    pub ty: Type,
    /// Its dimensions (empty for a scalar).
    pub dims: Vec<u64>,
    /// Its bytes.
    pub storage: Storage,
}

/// What an object is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A group.
    Group,
    /// A dataset.
    Dataset(Dataset),
    /// Something else (a committed datatype): what.
    Other(String),
}

/// One object, reached by one path.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// Its path from the root, `/`-separated, without a leading `/` (the root is ``).
    pub path: String,
    /// What it is.
    pub kind: Kind,
    /// Its attributes, in header order.
    pub attributes: Vec<Attribute>,
}

impl Object {
    /// The attribute named `name`.
    pub fn attribute(&self, name: &str) -> Option<&Value> {
        self.attributes
            .iter()
            .find(|a| a.name == name)
            .map(|a| &a.value)
    }
}

/// What a read found.
#[derive(Debug, Clone)]
pub struct File {
    /// The superblock's offset (a user block's size).
    pub superblock_at: u64,
    /// The superblock's version.
    pub superblock_version: u8,
    /// Every object, depth first, each group's links by name.
    pub objects: Vec<Object>,
    /// What lies outside the subset or opens other files.
    pub findings: Findings,
    /// Metadata bytes read.
    pub metadata_read: u64,
}

impl File {
    /// The object at `path`.
    pub fn object(&self, path: &str) -> Option<&Object> {
        self.objects.iter().find(|o| o.path == path)
    }

    /// The worst finding's severity.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.worst
    }
}

/// Options of one read.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Read what does not lie in the file in row-major order (chunks in tiles, filtered
    /// chunks, fill values) and assemble it (within [`walk::inline_budget`]); without it such
    /// datasets are left unread.
    pub read_data: bool,
    /// User-defined filters (ids 256 and up) the deployment accepts: an operator reviewed the
    /// plugin library the HDF5 library would load for each ([`accepted_filters`]). A chunk
    /// through one is then a LEAD (socair does not decode it), not a FAIL.
    pub accepted_filters: Vec<u16>,
}

/// The prefix under which a reviewed list (`--reviewed-classes`, a store's reviews) names an
/// accepted HDF5 filter: `hdf5.filter.32001` (Blosc).
pub const ACCEPTED_FILTER_PREFIX: &str = "hdf5.filter.";

/// The filter ids a reviewed list accepts: its entries `hdf5.filter.N` (N a user-defined
/// filter id, 256 to 65535); other entries are pickle globals and not this reader's.
pub fn accepted_filters(reviewed: &[String]) -> Vec<u16> {
    reviewed
        .iter()
        .filter_map(|r| r.strip_prefix(ACCEPTED_FILTER_PREFIX)?.parse::<u16>().ok())
        .filter(|&id| id >= 256)
        .collect()
}
