//! The parts of Paddle's `framework.proto` (v3.3.1) this plugin decodes, as prost messages:
//! what the wire pre-pass ([`crate::schema`], every field of every message) has already
//! checked. Fields left out here are skipped by prost and were walked by the pre-pass.

/// `ProgramDesc`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProgramDesc {
    /// Its blocks; block 0 is the global block.
    #[prost(message, repeated, tag = "1")]
    pub blocks: Vec<BlockDesc>,
    /// The program's version.
    #[prost(message, optional, tag = "4")]
    pub version: Option<Version>,
}

/// `Version`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Version {
    /// The version.
    #[prost(int64, optional, tag = "1")]
    pub version: Option<i64>,
}

/// `BlockDesc`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BlockDesc {
    /// Its index.
    #[prost(int32, optional, tag = "1")]
    pub idx: Option<i32>,
    /// Its parent's index (-1 for the global block).
    #[prost(int32, optional, tag = "2")]
    pub parent_idx: Option<i32>,
    /// Its variables.
    #[prost(message, repeated, tag = "3")]
    pub vars: Vec<VarDesc>,
    /// Its ops, in the order they run.
    #[prost(message, repeated, tag = "4")]
    pub ops: Vec<OpDesc>,
}

/// `VarDesc`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct VarDesc {
    /// Its name.
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// Its type.
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<VarType>,
    /// Whether it outlives a run (a parameter or a buffer: what `save_combine` writes).
    #[prost(bool, optional, tag = "3")]
    pub persistable: Option<bool>,
}

/// `VarType`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct VarType {
    /// The kind of variable (`DENSE_TENSOR` = 7, `FEED_MINIBATCH` = 9, `FETCH_LIST` = 10...).
    #[prost(int32, optional, tag = "1")]
    pub r#type: Option<i32>,
    /// A dense tensor's description.
    #[prost(message, optional, tag = "3")]
    pub dense_tensor: Option<DenseTensorDesc>,
}

/// `VarType.DenseTensorDesc`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DenseTensorDesc {
    /// Its element type and shape.
    #[prost(message, optional, tag = "1")]
    pub tensor: Option<TensorDesc>,
}

/// `VarType.TensorDesc`: what a `.pdiparams` holds before each tensor's bytes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorDesc {
    /// The element type (`VarType.Type`).
    #[prost(int32, optional, tag = "1")]
    pub data_type: Option<i32>,
    /// The dimensions (-1 for one not known until run time).
    #[prost(int64, repeated, packed = "false", tag = "2")]
    pub dims: Vec<i64>,
}

/// `OpDesc`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpDesc {
    /// Its inputs, by parameter.
    #[prost(message, repeated, tag = "1")]
    pub inputs: Vec<OpVar>,
    /// Its outputs, by parameter.
    #[prost(message, repeated, tag = "2")]
    pub outputs: Vec<OpVar>,
    /// The op's type: what it does.
    #[prost(string, optional, tag = "3")]
    pub r#type: Option<String>,
    /// Its attributes.
    #[prost(message, repeated, tag = "4")]
    pub attrs: Vec<OpAttr>,
}

/// `OpDesc.Var`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpVar {
    /// The parameter (`X`, `Out`).
    #[prost(string, optional, tag = "1")]
    pub parameter: Option<String>,
    /// The variables bound to it.
    #[prost(string, repeated, tag = "2")]
    pub arguments: Vec<String>,
}

/// `OpDesc.Attr`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpAttr {
    /// Its name.
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// Its type (`AttrType`: `STRING` = 2, `BLOCK` = 8, `BLOCKS` = 10...).
    #[prost(int32, optional, tag = "2")]
    pub r#type: Option<i32>,
    /// An `INT`.
    #[prost(int32, optional, tag = "3")]
    pub i: Option<i32>,
    /// A `STRING`.
    #[prost(string, optional, tag = "5")]
    pub s: Option<String>,
    /// A `STRINGS`.
    #[prost(string, repeated, tag = "8")]
    pub strings: Vec<String>,
    /// A `BLOCK`: the index of a block of the program.
    #[prost(int32, optional, tag = "12")]
    pub block_idx: Option<i32>,
    /// A `BLOCKS`.
    #[prost(int32, repeated, packed = "false", tag = "14")]
    pub blocks_idx: Vec<i32>,
}
