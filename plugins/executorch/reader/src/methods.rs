//! Each method (`ExecutionPlan`) read as ExecuTorch v1.4.1 loads it: `validate_program`
//! (runtime/executor/program_validation.cpp), `Program::method_meta`, then `Method::init`
//! (runtime/executor/method.cpp): its values (`parseTensor`,
//! runtime/executor/tensor_parser_portable.cpp, and `getTensorDataPtr`,
//! tensor_parser_exec_aten.cpp, which locate each constant), its delegates
//! (`BackendDelegate::Init`, `GetProcessedData`), and its chains' instructions
//! (`gen_instruction_arguments`, `resolve_operator`).

use crate::context::{Constant, Constants, Ctx};
use crate::flatbuffer::{Table, Vector};
use crate::kernels::{full_name, is_executorch_kernel, MAX_OPERATOR_NAME};
use crate::scalar_type::scalar_type;
use crate::schema::{plan, program as pslot, tensor as tslot};
use crate::schema::{
    INSTRUCTION_DELEGATE_CALL, INSTRUCTION_KERNEL_CALL, KERNEL_TYPE_TENSOR, KERNEL_TYPE_TENSOR_LIST,
};

/// `kTensorDimensionLimit` (runtime/core/exec_aten/util/tensor_dimension_limit.h).
pub const MAX_DIMS: usize = 16;
/// Method names kept for the summary.
const METHODS_LISTED: usize = 64;
/// Distinct operator names kept.
const OPERATORS_LISTED: usize = 1024;
/// Distinct backend ids kept.
const BACKENDS_LISTED: usize = 64;
/// External tensor names kept.
const EXTERNAL_LISTED: usize = 1024;

/// Reads every method.
pub(crate) fn read_methods(ctx: &mut Ctx<'_>) {
    let Some(plans) = ctx.root.vector(pslot::EXECUTION_PLAN) else {
        ctx.fail(
            "Program.execution_plan",
            "the program has no execution_plan: the runtime refuses it (validate_program)",
        );
        return;
    };
    ctx.reading.method_count = plans.len as u64;
    for p in 0..plans.len {
        if ctx.reading.stopped || !ctx.spend(1) {
            return;
        }
        let Some(t) = plans.table(p) else { continue };
        let name = t.text(plan::NAME);
        let place = format!("method {}", name.as_deref().unwrap_or("(unnamed)"));
        if ctx.reading.methods.len() < METHODS_LISTED {
            ctx.reading
                .methods
                .push(name.clone().unwrap_or_else(|| format!("(plan {p})")));
        }
        for (slot, what) in [
            (plan::NAME, "name"),
            (plan::NON_CONST_BUFFER_SIZES, "non_const_buffer_sizes"),
            (plan::INPUTS, "inputs"),
            (plan::OUTPUTS, "outputs"),
        ] {
            let absent = if slot == plan::NAME {
                t.string(slot).is_none()
            } else {
                t.vector(slot).is_none()
            };
            if absent {
                ctx.fail(
                    &place,
                    format!("the method has no {what}: the runtime cannot load it (Program::method_meta)"),
                );
            }
        }
        let label = name.unwrap_or_else(|| format!("plan{p}"));
        let Some(values) = t.vector(plan::VALUES) else {
            ctx.fail(
                &place,
                "the method has no values table: the runtime refuses the program (validate_program)",
            );
            continue;
        };
        read_values(ctx, &t, values, &label, &place);
        read_operators(ctx, &t, &place);
        read_delegates(ctx, &t, &place);
        read_chains(ctx, &t, values.len, &place);
    }
}

/// Whether value `i` is one of the method's inputs with a dynamic shape (validate_program
/// leaves those to `Method::set_input`).
fn is_dynamic_input(ctx: &mut Ctx<'_>, t: &Table<'_>, i: usize, tensor: &Table<'_>) -> bool {
    let Some(inputs) = t.vector(plan::INPUTS) else {
        return false;
    };
    if !ctx.spend(inputs.len as u64) {
        return false;
    }
    (0..inputs.len).any(|k| inputs.u32(k).map(|v| v as i32 as i64) == Some(i as i64))
        && tensor.u8(8, 0) != 0
}

fn read_values(ctx: &mut Ctx<'_>, t: &Table<'_>, values: Vector<'_>, label: &str, place: &str) {
    for i in 0..values.len {
        if ctx.reading.stopped || !ctx.spend(1) {
            return;
        }
        let Some(v) = values.table(i) else { continue };
        let vplace = format!("{place} value {i}");
        match v.u8(0, 0) {
            KERNEL_TYPE_TENSOR => {
                let Some(tensor) = v.table(1) else {
                    ctx.fail(&vplace, "a tensor value with no tensor: the runtime refuses the program (validate_program: \"Tensor is null\")");
                    continue;
                };
                read_tensor(ctx, t, &tensor, i, label, &vplace);
            }
            KERNEL_TYPE_TENSOR_LIST => {
                let items = v.table(1).and_then(|l| l.vector(0));
                let Some(items) = items else {
                    ctx.fail(&vplace, "a tensor list with no items: the runtime refuses the program (validate_program)");
                    continue;
                };
                if !ctx.spend(items.len as u64) {
                    return;
                }
                for k in 0..items.len {
                    let idx = items.u32(k).unwrap_or(u32::MAX) as i32;
                    let target = usize::try_from(idx).ok().and_then(|x| values.table(x));
                    let ok = target.is_some_and(|x| x.u8(0, 0) == KERNEL_TYPE_TENSOR);
                    if !ok {
                        ctx.fail(&vplace, format!("tensor list item {k} refers to value {idx}, which is not a tensor of the method: the runtime refuses the program (validate_program)"));
                        break;
                    }
                }
            }
            1..=11 => {}
            other => ctx.fail(
                &vplace,
                format!("value type {other} is not one of the schema's KernelTypes: the runtime refuses the method (Method::parse_values)"),
            ),
        }
    }
}

/// `validate_tensor`, `parseTensor`, and where `getTensorDataPtr` finds a constant's bytes.
fn read_tensor(
    ctx: &mut Ctx<'_>,
    t: &Table<'_>,
    tensor: &Table<'_>,
    i: usize,
    label: &str,
    place: &str,
) {
    let id = tensor.u8(tslot::SCALAR_TYPE, 0);
    let Some(st) = scalar_type(id) else {
        if !is_dynamic_input(ctx, t, i, tensor) {
            ctx.fail(place, format!("scalar type {} is not one ExecuTorch knows: the runtime refuses the program (validate_tensor)", id as i8));
        }
        return;
    };
    let Some(sizes) = tensor.vector(tslot::SIZES) else {
        ctx.fail(
            place,
            "a tensor with no sizes: the runtime refuses the program (validate_tensor)",
        );
        return;
    };
    if sizes.len > MAX_DIMS {
        ctx.fail(place, format!("a tensor of rank {} (ExecuTorch's limit is {MAX_DIMS}): the runtime refuses the method (parseTensor)", sizes.len));
        return;
    }
    let mut shape = Vec::with_capacity(sizes.len);
    let mut numel: Option<i64> = Some(1);
    for k in 0..sizes.len {
        let s = sizes.u32(k).unwrap_or(0) as i32;
        if s < 0 {
            ctx.fail(place, format!("dimension {k} has size {s}: the runtime refuses the program (validate_tensor: sizes must be non-negative)"));
            return;
        }
        shape.push(s as u64);
        numel = numel.and_then(|n| n.checked_mul(i64::from(s)));
    }
    let nbytes = numel.and_then(|n| (n as u64).checked_mul(st.size));
    let Some(nbytes) = nbytes else {
        if !is_dynamic_input(ctx, t, i, tensor) {
            ctx.fail(place, "the tensor's element count or byte size overflows: the runtime refuses the program (validate_tensor)");
        }
        return;
    };
    let storage_offset = tensor.u32(tslot::STORAGE_OFFSET, 0) as i32;
    if storage_offset != 0 {
        ctx.fail(place, format!("storage_offset {storage_offset}: the runtime supports only zero and refuses the method (parseTensor)"));
    }
    if tensor.u8(8, 0) == 2 {
        ctx.fail(place, "a fully dynamic (DYNAMIC_UNBOUND) tensor: the runtime refuses the method (parseTensor)");
    }
    let dim_order = tensor.vector(3);
    if dim_order.map(|d| d.len) != Some(sizes.len) {
        ctx.fail(place, "the tensor's dim_order is missing or not one entry per dimension: the runtime refuses the method (parseTensor)");
    }
    let extra = tensor.table(tslot::EXTRA_TENSOR_INFO);
    let fqn = extra.and_then(|e| e.text(tslot::EXTRA_FQN));
    let external = extra.is_some_and(|e| e.u8(tslot::EXTRA_LOCATION, 0) == 1);
    let idx = tensor.u32(tslot::DATA_BUFFER_IDX, 0) as usize;
    let planned = tensor.table(tslot::ALLOCATION_INFO).is_some();
    let name = fqn.unwrap_or_else(|| format!("{label}.values[{i}]"));
    if external {
        if ctx.reading.external.len() < EXTERNAL_LISTED {
            ctx.reading.external.push(name);
        }
        return;
    }
    let located = match (idx, planned) {
        (0, _) => return,
        (_, false) => constant_range(ctx, idx, nbytes),
        (_, true) => mutable_range(ctx, idx, nbytes),
    };
    match located {
        Ok(offset) => {
            let key = (offset, nbytes, st.id, shape.clone());
            if ctx.located.insert(key) {
                if ctx.reading.constants.len() as u64 >= ctx.constant_limit {
                    if !ctx.constants_capped {
                        ctx.constants_capped = true;
                        ctx.lead(place, format!("more constant tensors than socair describes for a file of this size ({}): the rest are not fingerprinted", ctx.constant_limit));
                    }
                    return;
                }
                ctx.reading.constants.push(Constant {
                    name,
                    scalar_type: st,
                    shape,
                    offset,
                    len: nbytes,
                });
            }
        }
        Err(why) => ctx.fail(place, why),
    }
}

/// `Program::get_constant_buffer_data`: the constant's first byte in the file.
fn constant_range(ctx: &Ctx<'_>, idx: usize, nbytes: u64) -> Result<u64, String> {
    match &ctx.constants {
        Constants::Segment {
            start,
            size,
            offsets,
        } => {
            let Some(offset) = (idx < offsets.len).then(|| offsets.u64(idx)).flatten() else {
                return Err(format!("constant index {idx} is past constant_segment.offsets ({} entries): the runtime refuses the method (get_constant_buffer_data)", offsets.len));
            };
            if offset > *size || nbytes > size - offset {
                return Err(format!("constant {idx} at offset {offset} with {nbytes} bytes runs past the {size}-byte constant segment: the runtime refuses the method (get_constant_buffer_data)"));
            }
            Ok(start + offset)
        }
        Constants::Buffer(buffers) => {
            let storage = (idx < buffers.len)
                .then(|| buffers.table(idx))
                .flatten()
                .map(|b| b.vector(0));
            let Some(storage) = storage else {
                return Err(format!("constant index {idx} is past constant_buffer ({} entries): the runtime refuses the method (get_constant_buffer_data)", buffers.len));
            };
            let (start, len) = storage.map_or((0, 0), |s| (s.start as u64, s.len as u64));
            if nbytes > len {
                return Err(format!("constant {idx} needs {nbytes} bytes but its buffer holds {len}: the runtime refuses the method (get_constant_buffer_data)"));
            }
            Ok(start)
        }
        Constants::None => Err(format!("the tensor names constant {idx} but the program has no constant data: the runtime refuses the method (get_constant_buffer_data)")),
    }
}

/// `Program::load_mutable_subsegment_into` with `mutable_data_segments[0]` (what
/// `getTensorDataPtr` asks for): a planned tensor's initial state in the file.
fn mutable_range(ctx: &Ctx<'_>, idx: usize, nbytes: u64) -> Result<u64, String> {
    let refuse = |why: String| {
        Err(format!(
            "{why}: the runtime refuses the method (load_mutable_subsegment_into)"
        ))
    };
    if ctx.layout.segment_base_offset == 0 {
        return refuse(format!("the tensor's initial state is in data segment offset {idx} but the file has no segments"));
    }
    let sub = ctx
        .root
        .vector(pslot::MUTABLE_DATA_SEGMENTS)
        .and_then(|v| (v.len > 0).then(|| v.table(0)).flatten());
    let Some(sub) = sub else {
        return refuse(
            "the tensor has an initial state but the program has no mutable_data_segments".into(),
        );
    };
    let offsets = sub.vector(1);
    let Some(offset) = offsets.and_then(|o| (idx < o.len).then(|| o.u64(idx)).flatten()) else {
        return refuse(format!(
            "offset index {idx} is past mutable_data_segments[0].offsets"
        ));
    };
    let (start, size) = match ctx.segment(sub.u32(0, 0) as usize) {
        Ok(s) => s,
        Err(why) => return refuse(why),
    };
    match offset.checked_add(nbytes) {
        Some(end) if end <= size => Ok(start + offset),
        _ => refuse(format!(
            "offset {offset} + {nbytes} bytes runs past the {size}-byte segment"
        )),
    }
}

fn read_operators(ctx: &mut Ctx<'_>, t: &Table<'_>, place: &str) {
    let Some(ops) = t.vector(plan::OPERATORS) else {
        return;
    };
    for k in 0..ops.len {
        if !ctx.spend(1) {
            return;
        }
        let Some(op) = ops.table(k) else { continue };
        let Some(name) = op.string(0) else {
            ctx.fail(
                format!("{place} operator {k}"),
                "an operator with no name: the runtime refuses the method (populate_operator_name)",
            );
            continue;
        };
        let overload = op.string(1).unwrap_or_default();
        let len = name.len()
            + if overload.is_empty() {
                0
            } else {
                1 + overload.len()
            };
        if len > MAX_OPERATOR_NAME {
            let shown = String::from_utf8_lossy(
                name.get(..MAX_OPERATOR_NAME.min(name.len()))
                    .unwrap_or_default(),
            );
            ctx.fail(format!("{place} operator {k}"), format!("the operator name {shown:?}… is {len} bytes; the runtime's buffer holds {MAX_OPERATOR_NAME} and it refuses the method (populate_operator_name)"));
            continue;
        }
        let full = full_name(
            &String::from_utf8_lossy(name),
            &String::from_utf8_lossy(overload),
        );
        if !ctx.operators_seen.insert(full.clone()) {
            continue;
        }
        if !is_executorch_kernel(&full) {
            ctx.lead(format!("{place} operator {k}"), format!("operator {full:?} is not one ExecuTorch's kernel libraries (portable, optimized, quantized, primitive) register: the runtime runs it only with a kernel someone registered under that name, native code outside the file that socair cannot see (without one the method fails to load with OperatorMissing)"));
        }
        if ctx.reading.operators.len() < OPERATORS_LISTED {
            ctx.reading.operators.push(full);
        }
    }
}

fn read_delegates(ctx: &mut Ctx<'_>, t: &Table<'_>, place: &str) {
    let Some(delegates) = t.vector(plan::DELEGATES) else {
        ctx.fail(
            place,
            "the method has no delegates field: the runtime refuses it (Method::init)",
        );
        return;
    };
    for k in 0..delegates.len {
        if !ctx.spend(1) {
            return;
        }
        let Some(d) = delegates.table(k) else {
            continue;
        };
        let dplace = format!("{place} delegate {k}");
        let Some(id) = d.text(0) else {
            ctx.fail(
                &dplace,
                "a delegate with no backend id: the runtime refuses the method (BackendDelegate::Init)",
            );
            continue;
        };
        let blob = match d.table(1) {
            None => Err("a delegate with no processed data reference".to_owned()),
            Some(r) => delegate_blob(ctx, r.u8(0, 0), r.u32(1, 0) as usize),
        };
        let specs = d.vector(2).map_or(0, |v| v.len);
        match blob {
            Ok(where_) => ctx.lead(&dplace, format!("the method delegates to backend {id:?}: that backend's native code interprets its blob ({where_}) and {specs} compile spec(s); the blob is opaque to socair and to ExecuTorch's own checks")),
            Err(why) => ctx.fail(&dplace, format!("backend {id:?}: {why}: the runtime refuses the method (BackendDelegate::GetProcessedData)")),
        }
        if ctx.reading.backends.len() < BACKENDS_LISTED && !ctx.reading.backends.contains(&id) {
            ctx.reading.backends.push(id);
        }
    }
}

/// `GetProcessedData`: where a delegate's blob is.
fn delegate_blob(ctx: &mut Ctx<'_>, location: u8, index: usize) -> Result<String, String> {
    match location {
        0 => {
            let Some(list) = ctx.root.vector(pslot::BACKEND_DELEGATE_DATA) else {
                return Err("its inline blob is in backend_delegate_data, which the program lacks (the runtime dereferences the missing list)".into());
            };
            if index >= list.len {
                return Err(format!(
                    "inline blob index {index} is past backend_delegate_data ({} entries)",
                    list.len
                ));
            }
            match list.table(index).and_then(|b| b.vector(0)) {
                Some(data) => Ok(format!("{} bytes inline at byte {}", data.len, data.start)),
                None => Err(format!(
                    "inline blob {index} has no data (the runtime dereferences the missing vector)"
                )),
            }
        }
        1 => {
            ctx.referenced.insert(index);
            if ctx.layout.segment_base_offset == 0 {
                return Err("its blob is in a segment but the file has no extended header locating segments (Program::LoadSegment)".into());
            }
            let (start, size) = ctx.segment(index)?;
            Ok(format!("{size} bytes in segment {index} at byte {start}"))
        }
        other => Err(format!(
            "data location {other} is neither INLINE nor SEGMENT"
        )),
    }
}

fn read_chains(ctx: &mut Ctx<'_>, t: &Table<'_>, n_values: usize, place: &str) {
    let chains = t.vector(plan::CHAINS).filter(|c| c.len > 0);
    let Some(chains) = chains else {
        ctx.fail(
            place,
            "the method has no chains: the runtime refuses it (Method::init: \"No chains\")",
        );
        return;
    };
    let n_ops = t.vector(plan::OPERATORS).map_or(0, |v| v.len);
    let n_delegates = t.vector(plan::DELEGATES).map_or(0, |v| v.len);
    for c in 0..chains.len {
        let Some(instructions) = chains.table(c).and_then(|ch| ch.vector(2)) else {
            ctx.fail(
                place,
                format!(
                    "chain {c} has no instructions: the runtime refuses the method (Method::init)"
                ),
            );
            continue;
        };
        for k in 0..instructions.len {
            if ctx.reading.stopped || !ctx.spend(1) {
                return;
            }
            let iplace = format!("{place} chain {c} instruction {k}");
            let ins = instructions.table(k);
            let kind = ins.map_or(0, |i| i.u8(0, 0));
            let Some(args) = ins.and_then(|i| i.table(1)) else {
                ctx.fail(&iplace, "an instruction with no arguments: the runtime refuses the method (Method::init)");
                continue;
            };
            let why = check_instruction(ctx, kind, &args, n_values, n_ops, n_delegates);
            if let Some(why) = why {
                ctx.fail(
                    &iplace,
                    format!("{why}: the runtime refuses the method (Method::init)"),
                );
            }
        }
    }
}

/// An instruction's indices, as `Method::init` checks them (and `Method::execute_instruction`
/// for a delegate call's index).
fn check_instruction(
    ctx: &mut Ctx<'_>,
    kind: u8,
    args: &Table<'_>,
    n_values: usize,
    n_ops: usize,
    n_delegates: usize,
) -> Option<String> {
    let in_range = |v: u32, n: usize| usize::try_from(v as i32).is_ok_and(|v| v < n);
    match kind {
        INSTRUCTION_KERNEL_CALL | INSTRUCTION_DELEGATE_CALL => {
            let index = args.u32(0, 0);
            let (n, what) = if kind == INSTRUCTION_KERNEL_CALL {
                (n_ops, "operator")
            } else {
                (n_delegates, "delegate")
            };
            if !in_range(index, n) {
                return Some(format!(
                    "{what} index {} is past the method's {n} {what}s",
                    index as i32
                ));
            }
            let Some(list) = args.vector(1) else {
                return Some("a call with no argument list".into());
            };
            if !ctx.spend(list.len as u64) {
                return None;
            }
            (0..list.len)
                .map(|a| list.u32(a).unwrap_or(u32::MAX))
                .find(|&v| !in_range(v, n_values))
                .map(|v| {
                    format!(
                        "argument value index {} is past the method's {n_values} values",
                        v as i32
                    )
                })
        }
        3..=5 => {
            let slots: &[usize] = if kind == 3 { &[0, 1] } else { &[0] };
            slots
                .iter()
                .map(|&s| args.u32(s, 0))
                .find(|&v| !in_range(v, n_values))
                .map(|v| {
                    format!(
                        "value index {} is past the method's {n_values} values",
                        v as i32
                    )
                })
        }
        other => Some(format!(
            "instruction type {other} is not one the runtime knows"
        )),
    }
}
