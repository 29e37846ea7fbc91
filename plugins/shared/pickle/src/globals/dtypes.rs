//! The dtypes the grammar models: torch's names, the safetensors names a conversion pairs
//! them with, their sizes, and the typed storage classes of `_dtype_to_storage_type_map`.
//! Apart from the globals that name them.

/// A dtype as torch names it, with the safetensors name `socair-convert/1` pairs it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtype {
    /// torch's name (`float32`).
    pub torch: &'static str,
    /// The safetensors dtype name (`F32`); complex128 has none and is called `C128`.
    pub safetensors: &'static str,
    /// Bytes per element of torch's storage.
    pub size: u64,
    /// Values per storage element: 2 for `float4_e2m1fn_x2`, whose one byte holds two F4
    /// values. safetensors writes such a tensor with its last dimension multiplied by this
    /// (the `TensorSpec` constructor of safetensors 0.8 "transparently doubles the last
    /// dimension" of packed dtypes), so the manifest's shape is that logical shape.
    pub packed: u64,
}

pub(crate) const fn dt(torch: &'static str, safetensors: &'static str, size: u64) -> Dtype {
    Dtype {
        torch,
        safetensors,
        size,
        packed: 1,
    }
}

/// Every dtype the grammar models: the torch dtypes safetensors 0.8's torch binding writes
/// (`safetensors/torch.py` `_SIZE`, and the names its Rust `TensorSpec` accepts: "bool, int8,
/// uint8, int16, uint16, int32, uint32, int64, uint64, float16, float32, float64, bfloat16,
/// float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu,
/// float4_e2m1fn_x2, complex64"), each with the header name safetensors gives it, plus
/// complex128, which safetensors cannot hold.
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
    Dtype {
        torch: "float4_e2m1fn_x2",
        safetensors: "F4",
        size: 1,
        packed: 2,
    },
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
