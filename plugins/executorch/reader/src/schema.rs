//! ExecuTorch's program schema (`schema/program.fbs` at v1.4.1, file identifier `ET12`) as the
//! verifier walks it: every table, every field in declaration order (a union takes two slots,
//! its type then its value), so that [`crate::flatbuffer::verify`] checks what the generated
//! `Verify` functions check. Slot numbers used by the reader are the constants below.

/// What a field holds, as far as verification goes.
#[derive(Debug, Clone, Copy)]
pub enum Field {
    /// A scalar of this many bytes (aligned to its size).
    Scalar(usize),
    /// A string.
    String,
    /// A table.
    Table(&'static TableSchema),
    /// A vector of scalars of this many bytes.
    ScalarVector(usize),
    /// A vector of tables.
    TableVector(&'static TableSchema),
    /// A union's value; its type is the slot before. Indexed by the type's value.
    Union(&'static [Option<&'static TableSchema>]),
}

/// A table: its name, its fields by slot, and their names (for places in messages).
#[derive(Debug)]
pub struct TableSchema {
    /// The table's name.
    pub name: &'static str,
    /// The fields, by slot.
    pub fields: &'static [Field],
    /// The fields' names, by slot.
    pub field_names: &'static [&'static str],
}

use Field::{Scalar, ScalarVector, String as Str, Table as Tab, TableVector, Union};

macro_rules! table {
    ($id:ident, $name:literal, [$($f:literal : $k:expr),* $(,)?]) => {
        /// The schema's table of this name.
        pub static $id: TableSchema = TableSchema {
            name: $name,
            fields: &[$($k),*],
            field_names: &[$($f),*],
        };
    };
}

table!(CONTAINER_METADATA, "ContainerMetadata", ["encoded_inp_str": Str, "encoded_out_str": Str]);
table!(NULL, "Null", []);
table!(ALLOCATION_DETAILS, "AllocationDetails", [
    "memory_id": Scalar(4), "memory_offset_low": Scalar(4), "memory_offset_high": Scalar(4)]);
table!(EXTRA_TENSOR_INFO, "ExtraTensorInfo", [
    "mutable_data_segments_idx": Scalar(8), "fully_qualified_name": Str, "location": Scalar(1),
    "device_type": Scalar(1), "device_index": Scalar(1)]);
table!(TENSOR, "Tensor", [
    "scalar_type": Scalar(1), "storage_offset": Scalar(4), "sizes": ScalarVector(4),
    "dim_order": ScalarVector(1), "requires_grad": Scalar(1), "data_buffer_idx": Scalar(4),
    "allocation_info": Tab(&ALLOCATION_DETAILS), "layout": Scalar(1),
    "shape_dynamism": Scalar(1), "extra_tensor_info": Tab(&EXTRA_TENSOR_INFO)]);
table!(INT, "Int", ["int_val": Scalar(8)]);
table!(BOOL, "Bool", ["bool_val": Scalar(1)]);
table!(DOUBLE, "Double", ["double_val": Scalar(8)]);
table!(STRING, "String", ["string_val": Str]);
table!(INT_LIST, "IntList", ["items": ScalarVector(8)]);
table!(DOUBLE_LIST, "DoubleList", ["items": ScalarVector(8)]);
table!(BOOL_LIST, "BoolList", ["items": ScalarVector(1)]);
table!(TENSOR_LIST, "TensorList", ["items": ScalarVector(4)]);
table!(OPTIONAL_TENSOR_LIST, "OptionalTensorList", ["items": ScalarVector(4)]);

/// `union KernelTypes`, by type value.
pub static KERNEL_TYPES: [Option<&TableSchema>; 12] = [
    None,
    Some(&NULL),
    Some(&INT),
    Some(&BOOL),
    Some(&DOUBLE),
    Some(&TENSOR),
    Some(&STRING),
    Some(&INT_LIST),
    Some(&DOUBLE_LIST),
    Some(&BOOL_LIST),
    Some(&TENSOR_LIST),
    Some(&OPTIONAL_TENSOR_LIST),
];
/// `KernelTypes::Tensor`.
pub const KERNEL_TYPE_TENSOR: u8 = 5;
/// `KernelTypes::TensorList`.
pub const KERNEL_TYPE_TENSOR_LIST: u8 = 10;

table!(EVALUE, "EValue", ["val_type": Scalar(1), "val": Union(&KERNEL_TYPES)]);
table!(OPERATOR, "Operator", ["name": Str, "overload": Str]);
table!(KERNEL_CALL, "KernelCall", ["op_index": Scalar(4), "args": ScalarVector(4)]);
table!(DELEGATE_CALL, "DelegateCall", ["delegate_index": Scalar(4), "args": ScalarVector(4)]);
table!(MOVE_CALL, "MoveCall", ["move_from": Scalar(4), "move_to": Scalar(4)]);
table!(JUMP_FALSE_CALL, "JumpFalseCall", [
    "cond_value_index": Scalar(4), "destination_instruction": Scalar(4)]);
table!(FREE_CALL, "FreeCall", ["value_index": Scalar(4)]);

/// `union InstructionArguments`, by type value.
pub static INSTRUCTION_ARGUMENTS: [Option<&TableSchema>; 6] = [
    None,
    Some(&KERNEL_CALL),
    Some(&DELEGATE_CALL),
    Some(&MOVE_CALL),
    Some(&JUMP_FALSE_CALL),
    Some(&FREE_CALL),
];
/// `InstructionArguments::KernelCall`.
pub const INSTRUCTION_KERNEL_CALL: u8 = 1;
/// `InstructionArguments::DelegateCall`.
pub const INSTRUCTION_DELEGATE_CALL: u8 = 2;

table!(INSTRUCTION, "Instruction", [
    "instr_args_type": Scalar(1), "instr_args": Union(&INSTRUCTION_ARGUMENTS)]);
table!(FRAME, "Frame", ["filename": Str, "lineno": Scalar(4), "name": Str, "context": Str]);
table!(FRAME_LIST, "FrameList", ["items": TableVector(&FRAME)]);
table!(BACKEND_DELEGATE_DATA_REFERENCE, "BackendDelegateDataReference", [
    "location": Scalar(1), "index": Scalar(4)]);
table!(COMPILE_SPEC, "CompileSpec", ["key": Str, "value": ScalarVector(1)]);
table!(BACKEND_DELEGATE, "BackendDelegate", [
    "id": Str, "processed": Tab(&BACKEND_DELEGATE_DATA_REFERENCE),
    "compile_specs": TableVector(&COMPILE_SPEC)]);
table!(CHAIN, "Chain", [
    "inputs": ScalarVector(4), "outputs": ScalarVector(4),
    "instructions": TableVector(&INSTRUCTION), "stacktrace": TableVector(&FRAME_LIST)]);
table!(NON_CONST_BUFFER_DEVICE, "NonConstBufferDevice", [
    "buffer_idx": Scalar(4), "device_type": Scalar(1), "device_index": Scalar(1)]);
table!(EXECUTION_PLAN, "ExecutionPlan", [
    "name": Str, "container_meta_type": Tab(&CONTAINER_METADATA),
    "values": TableVector(&EVALUE), "inputs": ScalarVector(4), "outputs": ScalarVector(4),
    "chains": TableVector(&CHAIN), "operators": TableVector(&OPERATOR),
    "delegates": TableVector(&BACKEND_DELEGATE), "non_const_buffer_sizes": ScalarVector(8),
    "non_const_buffer_device": TableVector(&NON_CONST_BUFFER_DEVICE)]);
table!(BUFFER, "Buffer", ["storage": ScalarVector(1)]);
table!(BACKEND_DELEGATE_INLINE_DATA, "BackendDelegateInlineData", ["data": ScalarVector(1)]);
table!(DATA_SEGMENT, "DataSegment", ["offset": Scalar(8), "size": Scalar(8)]);
table!(SUBSEGMENT_OFFSETS, "SubsegmentOffsets", [
    "segment_index": Scalar(4), "offsets": ScalarVector(8)]);
table!(NAMED_DATA, "NamedData", ["key": Str, "segment_index": Scalar(4)]);
table!(PROGRAM, "Program", [
    "version": Scalar(4), "execution_plan": TableVector(&EXECUTION_PLAN),
    "constant_buffer": TableVector(&BUFFER),
    "backend_delegate_data": TableVector(&BACKEND_DELEGATE_INLINE_DATA),
    "segments": TableVector(&DATA_SEGMENT), "constant_segment": Tab(&SUBSEGMENT_OFFSETS),
    "mutable_data_segments": TableVector(&SUBSEGMENT_OFFSETS),
    "named_data": TableVector(&NAMED_DATA)]);

/// Slots of `Program`.
pub mod program {
    /// `version`.
    pub const VERSION: usize = 0;
    /// `execution_plan`.
    pub const EXECUTION_PLAN: usize = 1;
    /// `constant_buffer`.
    pub const CONSTANT_BUFFER: usize = 2;
    /// `backend_delegate_data`.
    pub const BACKEND_DELEGATE_DATA: usize = 3;
    /// `segments`.
    pub const SEGMENTS: usize = 4;
    /// `constant_segment`.
    pub const CONSTANT_SEGMENT: usize = 5;
    /// `mutable_data_segments`.
    pub const MUTABLE_DATA_SEGMENTS: usize = 6;
    /// `named_data`.
    pub const NAMED_DATA: usize = 7;
}

/// Slots of `ExecutionPlan`.
pub mod plan {
    /// `name`.
    pub const NAME: usize = 0;
    /// `values`.
    pub const VALUES: usize = 2;
    /// `inputs`.
    pub const INPUTS: usize = 3;
    /// `outputs`.
    pub const OUTPUTS: usize = 4;
    /// `chains`.
    pub const CHAINS: usize = 5;
    /// `operators`.
    pub const OPERATORS: usize = 6;
    /// `delegates`.
    pub const DELEGATES: usize = 7;
    /// `non_const_buffer_sizes`.
    pub const NON_CONST_BUFFER_SIZES: usize = 8;
}

/// Slots of `Tensor`.
pub mod tensor {
    /// `scalar_type`.
    pub const SCALAR_TYPE: usize = 0;
    /// `storage_offset`.
    pub const STORAGE_OFFSET: usize = 1;
    /// `sizes`.
    pub const SIZES: usize = 2;
    /// `data_buffer_idx`.
    pub const DATA_BUFFER_IDX: usize = 5;
    /// `allocation_info`.
    pub const ALLOCATION_INFO: usize = 6;
    /// `extra_tensor_info`.
    pub const EXTRA_TENSOR_INFO: usize = 9;
    /// `ExtraTensorInfo.fully_qualified_name`.
    pub const EXTRA_FQN: usize = 1;
    /// `ExtraTensorInfo.location` (`TensorDataLocation::EXTERNAL` = 1).
    pub const EXTRA_LOCATION: usize = 2;
}
