//! The types of a generated field table: what a wire walk knows of each message type of a
//! `.proto` schema (ONNX's `plugins/onnx/reader/src/proto/schema.rs`, TensorFlow's
//! `plugins/tensorflow/reader/src/proto/schema.rs`, each written by its plugin's codegen).

/// How a field is encoded on the wire, and what it decodes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A varint (int32, int64, uint64, bool, enum): wire type 0, or packed when repeated.
    Varint,
    /// Four little-endian bytes (float): wire type 5, or packed when repeated.
    Fixed32,
    /// Eight little-endian bytes (double): wire type 1, or packed when repeated.
    Fixed64,
    /// UTF-8 text, length-delimited (copied into a `String` when decoded).
    String,
    /// Bytes, length-delimited (a zero-copy `Bytes` slice when decoded).
    Bytes,
    /// An embedded message: its index in the table's `MESSAGES`.
    Message(usize),
}

/// One field of a message.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Its number.
    pub number: u32,
    /// Its name in the `.proto` file.
    pub name: &'static str,
    /// Its encoding.
    pub kind: Kind,
    /// Whether it is `repeated`.
    pub repeated: bool,
}

/// One message type.
#[derive(Debug)]
pub struct MessageSchema {
    /// Its name in the `.proto` file (`TensorProto`, `TensorProto.Segment`).
    pub name: &'static str,
    /// The size of the Rust struct prost decodes it into.
    pub size: usize,
    /// Its fields, sorted by number.
    pub fields: &'static [Field],
}

impl MessageSchema {
    /// The field numbered `number`.
    pub fn field(&self, number: u32) -> Option<&'static Field> {
        self.fields
            .binary_search_by_key(&number, |f| f.number)
            .ok()
            .map(|i| &self.fields[i])
    }
}

impl Kind {
    /// The wire type a singular field of this kind has (a repeated scalar may also be packed,
    /// wire type 2).
    pub fn wire_type(self) -> u8 {
        match self {
            Kind::Varint => 0,
            Kind::Fixed64 => 1,
            Kind::Fixed32 => 5,
            Kind::String | Kind::Bytes | Kind::Message(_) => 2,
        }
    }
}
