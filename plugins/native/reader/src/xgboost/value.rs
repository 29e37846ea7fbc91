//! The document both XGBoost encodings parse to, bounded: objects keep one value per key (the
//! one XGBoost keeps), arrays of numbers are held decoded and compact, UBJSON's typed arrays
//! as the byte ranges they are.

/// A parsed value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null` / `Z`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A number with a fraction or exponent (XGBoost keeps it as a 32-bit float), or a UBJSON
    /// `d`/`D`.
    Float(f64),
    /// A string.
    Str(String),
    /// An array of other values.
    Array(Vec<Value>),
    /// A JSON array whose elements are all numbers, decoded (integers within 2^53).
    Nums {
        /// The values.
        values: Vec<f64>,
        /// Whether every element was written as an integer.
        all_int: bool,
        /// The array's `[`.
        offset: u64,
    },
    /// A UBJSON typed array `[$<marker>#L<count>`: its elements are big-endian in the file.
    Typed {
        /// The element marker (`d`, `D`, `i`, `U`, `I`, `l`, `L`).
        marker: u8,
        /// The first element's byte.
        offset: u64,
        /// How many elements.
        count: u64,
    },
    /// An object, one entry per key (the value XGBoost keeps), in file order.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The value of `key`, when this is an object holding it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// How many elements, when this is an array of any kind.
    pub fn array_len(&self) -> Option<u64> {
        match self {
            Value::Array(a) => Some(a.len() as u64),
            Value::Nums { values, .. } => Some(values.len() as u64),
            Value::Typed { count, .. } => Some(*count),
            _ => None,
        }
    }

    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Array(_) | Value::Nums { .. } | Value::Typed { .. } => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// The element type, width and XGBoost's name of a UBJSON typed array's marker.
pub fn typed_element(marker: u8) -> Option<(&'static str, u64, &'static str)> {
    Some(match marker {
        b'd' => ("F32", 4, "F32Array"),
        b'D' => ("F64", 8, "F64Array"),
        b'i' => ("I8", 1, "I8Array"),
        b'U' => ("U8", 1, "U8Array"),
        b'I' => ("I16", 2, "I16Array"),
        b'l' => ("I32", 4, "I32Array"),
        b'L' => ("I64", 8, "I64Array"),
        _ => return None,
    })
}

/// Why a document was not parsed: the byte and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The byte where parsing stopped.
    pub offset: u64,
    /// Why.
    pub reason: String,
    /// Past socair's bounds only (not evidence against the file).
    pub past_bounds: bool,
}

impl ParseError {
    /// A fault at `offset`.
    pub fn at(offset: usize, reason: impl Into<String>) -> Self {
        ParseError {
            offset: offset as u64,
            reason: reason.into(),
            past_bounds: false,
        }
    }
}

/// A key XGBoost holds twice, and which occurrence it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The path of the object and the key.
    pub path: String,
    /// The byte of the occurrence XGBoost drops.
    pub offset: u64,
}

/// No XGBoost model nests deeper than 8; XGBoost's recursive parsers have no limit (a deep
/// document overflows their stack), socair stops here.
pub const MAX_DEPTH: usize = 64;

/// At most this many values besides numbers in arrays (each holds a few dozen bytes): a
/// million plus one per 16 bytes of input.
pub fn max_nodes(input_len: usize) -> usize {
    1_000_000 + input_len / 16
}

/// A parsed document: its value, the keys written twice, and where it ended.
#[derive(Debug)]
pub struct Parsed {
    /// The value.
    pub value: Value,
    /// Keys written twice.
    pub duplicates: Vec<Duplicate>,
    /// The first byte after the document.
    pub end: usize,
}

/// What both parsers track: the position, the values counted against [`max_nodes`], the path
/// of the value being read, the duplicates met.
#[derive(Debug)]
pub struct State<'a> {
    /// The document.
    pub data: &'a [u8],
    /// The next byte.
    pub pos: usize,
    nodes: usize,
    max_nodes: usize,
    /// The keys and indices down to the value being read.
    pub path: Vec<String>,
    /// Keys written twice.
    pub duplicates: Vec<Duplicate>,
}

impl<'a> State<'a> {
    /// The state at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        State {
            data,
            pos: 0,
            nodes: 0,
            max_nodes: max_nodes(data.len()),
            path: Vec::new(),
            duplicates: Vec::new(),
        }
    }

    /// A fault at the current byte.
    pub fn err(&self, reason: impl Into<String>) -> ParseError {
        ParseError::at(self.pos, reason)
    }

    /// Counts one more value, past [`max_nodes`] an error past bounds.
    pub fn node(&mut self) -> Result<(), ParseError> {
        self.nodes += 1;
        if self.nodes > self.max_nodes {
            return Err(ParseError {
                past_bounds: true,
                ..self.err(format!("more than {} values", self.max_nodes))
            });
        }
        Ok(())
    }

    /// The document read: `value`, ending here.
    pub fn finish(self, value: Value) -> Parsed {
        Parsed {
            value,
            duplicates: self.duplicates,
            end: self.pos,
        }
    }
}
