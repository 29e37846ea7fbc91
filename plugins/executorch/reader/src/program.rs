//! A `.pte` program read as ExecuTorch v1.4.1's runtime loads it: the layout
//! ([`crate::header`]), the verifier ([`crate::flatbuffer::verify`]), `validate_program`
//! (runtime/executor/program_validation.cpp), then what `Program::load` and
//! `Program::get_constant_buffer_data` (runtime/executor/program.cpp) do with the segments and
//! the constants. Each method is then read as `Method::init` loads it ([`crate::methods`]).
//!
//! A FAIL is something the runtime refuses (or, where its default `Verification::Minimal`
//! skips the check, reads out of bounds); a LEAD is something it reads but whose meaning lies in
//! native code socair cannot see (a backend's blob, a kernel outside ExecuTorch's libraries) or
//! bytes the writer (`serialize_pte_binary`, exir/_serialize/_program.py) never lays out so.

pub use crate::context::{Constant, Reading, Severity, WORK_BASE, WORK_PER_BYTE};
use crate::context::{Constants, Ctx};
use crate::flatbuffer::{verify, Table};
use crate::header::{layout, IDENTIFIER};
use crate::refusal::Refusal;
use crate::schema::{self, program as slot};
use std::collections::HashSet;

/// Reads the program in `file` (the file's bytes from offset 0, at least through the program's
/// end) of a file of `file_len` bytes.
pub fn read(file: &[u8], file_len: u64) -> Reading {
    let mut reading = Reading::default();
    let layout = match layout(file, file_len) {
        Ok(l) => l,
        Err(r) => return refused(reading, r),
    };
    reading.layout = Some(layout);
    let Some(fb) = usize::try_from(layout.program_size)
        .ok()
        .and_then(|n| file.get(..n))
    else {
        let r = Refusal::new("byte 0", "the program's bytes were not all read");
        return refused(reading, r);
    };
    if let Err(e) = verify(fb, IDENTIFIER, &schema::PROGRAM) {
        let r = Refusal::new(
            format!("byte {} ({})", e.offset, e.path),
            format!("{}: the FlatBuffers verifier refuses the program (Program::load with Verification::InternalConsistency; with the default Minimal verification the runtime would read out of bounds)", e.reason),
        );
        return refused(reading, r);
    }
    let Some(root) = Table::root(fb) else {
        return refused(reading, Refusal::new("byte 0", "no root table"));
    };
    reading.version = root.u32(slot::VERSION, 0);
    let mut ctx = Ctx {
        layout,
        root,
        segments: None,
        constants: Constants::None,
        reading,
        referenced: HashSet::new(),
        located: HashSet::new(),
        operators_seen: HashSet::new(),
        work: 0,
        budget: file_len
            .saturating_mul(WORK_PER_BYTE)
            .saturating_add(WORK_BASE),
        constant_limit: socair_plugin_kit::bounded::described_limit(file_len),
        constants_capped: false,
    };
    read_segments(&mut ctx);
    if !ctx.reading.findings.is_empty() && ctx.reading.findings.worst == Some(Severity::Fail) {
        ctx.reading.stopped = true;
        return ctx.reading;
    }
    crate::methods::read_methods(&mut ctx);
    check_named_data(&mut ctx);
    check_layout(&mut ctx);
    ctx.reading
}

fn refused(mut reading: Reading, r: Refusal) -> Reading {
    reading.findings.add(Severity::Fail, r.place, r.reason);
    reading.stopped = true;
    reading
}

/// `Program.segments` and the constant data's place (`Program::load`).
fn read_segments(ctx: &mut Ctx<'_>) {
    if let Some(v) = ctx.root.vector(slot::SEGMENTS) {
        let mut segs = Vec::new();
        for i in 0..v.len {
            if !ctx.spend(1) {
                return;
            }
            let t = v.table(i);
            let offset = t.map_or(0, |t| t.u64(0, 0));
            let size = t.map_or(0, |t| t.u64(1, 0));
            segs.push((offset, size));
        }
        ctx.segments = Some(segs);
    }
    let constant_segment = ctx.root.table(slot::CONSTANT_SEGMENT);
    let offsets = constant_segment.and_then(|t| t.vector(1));
    let buffer = ctx.root.vector(slot::CONSTANT_BUFFER);
    match (constant_segment, offsets) {
        (Some(cs), Some(offsets)) if offsets.len > 0 => {
            if offsets.len == 1 {
                ctx.reading.constant_source = "no constants";
                return;
            }
            if let Some(b) = buffer.filter(|b| b.len > 0) {
                ctx.fail(
                    "Program.constant_buffer",
                    format!("constant_buffer holds {} items and constant_segment.offsets {}: only one may be used, and the runtime refuses the program (Program::load)", b.len, offsets.len),
                );
                return;
            }
            if ctx.segments.is_none() {
                ctx.fail("Program.segments", "the program has constants in a segment but no segments: the runtime refuses it (Program::load: \"No segments in program\")");
                return;
            }
            let index = cs.u32(0, 0) as usize;
            ctx.referenced.insert(index);
            match ctx.segment(index) {
                Ok((start, size)) => {
                    ctx.reading.constant_source = "the constant segment";
                    ctx.constants = Constants::Segment {
                        start,
                        size,
                        offsets,
                    };
                }
                Err(why) => ctx.fail(
                    "Program.constant_segment",
                    format!("{why}: the runtime refuses the program (Program::load)"),
                ),
            }
        }
        _ => {
            // The deprecated constant_buffer path (ET_ENABLE_DEPRECATED_CONSTANT_BUFFER).
            if let Some(b) = buffer.filter(|b| b.len > 0) {
                ctx.reading.constant_source =
                    "constant_buffer (inside the flatbuffer; deprecated since ExecuTorch 0.7)";
                ctx.constants = Constants::Buffer(b);
            } else {
                ctx.reading.constant_source = "no constants";
            }
        }
    }
}

/// `PteDataMap::create` (runtime/executor/pte_data_map.cpp): every named blob's segment.
fn check_named_data(ctx: &mut Ctx<'_>) {
    let Some(v) = ctx.root.vector(slot::NAMED_DATA) else {
        return;
    };
    for i in 0..v.len {
        if !ctx.spend(1) {
            return;
        }
        let Some(t) = v.table(i) else { continue };
        let index = t.u32(1, 0) as usize;
        ctx.referenced.insert(index);
        if t.string(0).is_none() {
            ctx.fail(
                format!("Program.named_data[{i}]"),
                "a named blob without a key: the runtime refuses the program (PteDataMap)",
            );
        }
        match ctx.segment(index) {
            Err(why) => ctx.fail(
                format!("Program.named_data[{i}]"),
                format!("{why}: the runtime cannot load this named blob"),
            ),
            Ok((start, size)) => {
                ctx.reading.named_blobs += 1;
                let byte = &crate::scalar_type::SCALAR_TYPES[0];
                if (ctx.reading.constants.len() as u64) < ctx.constant_limit
                    && ctx.located.insert((start, size, byte.id, vec![size]))
                {
                    let key = t.text(0).unwrap_or_default();
                    ctx.reading.constants.push(Constant {
                        name: format!("named_data/{key}"),
                        scalar_type: byte,
                        shape: vec![size],
                        offset: start,
                        len: size,
                    });
                }
            }
        }
    }
}

/// What the writer never lays out: overlapping segments, segments nothing refers to, bytes
/// past the last segment. The runtime reads such a file; a person should look at why.
fn check_layout(ctx: &mut Ctx<'_>) {
    if ctx.reading.stopped {
        return;
    }
    let segments = ctx.segments.clone().unwrap_or_default();
    let base = ctx.layout.segment_base_offset;
    let mut spans: Vec<(u64, u64, usize)> = Vec::new();
    let mut end = ctx.layout.program_size;
    for (i, &(offset, size)) in segments.iter().enumerate() {
        let Some(start) = base.checked_add(offset) else {
            continue;
        };
        let Some(stop) = start.checked_add(size) else {
            continue;
        };
        end = end.max(stop);
        if stop > ctx.layout.file_len {
            if !ctx.referenced.contains(&i) {
                ctx.lead(
                    format!("Program.segments[{i}]"),
                    format!("segment {i} (bytes {start}..{stop}) runs past the end of the {}-byte file; nothing in the program loads it", ctx.layout.file_len),
                );
            }
            continue;
        }
        if size > 0 {
            spans.push((start, stop, i));
        }
        if !ctx.referenced.contains(&i) && size > 0 {
            ctx.lead(
                format!("Program.segments[{i}]"),
                format!("segment {i} (bytes {start}..{stop}) is referred to by nothing the runtime loads: bytes no reader reads"),
            );
        }
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        if let [(_, a_end, a), (b_start, _, b)] = *w {
            if b_start < a_end {
                ctx.lead(
                    format!("Program.segments[{b}]"),
                    format!("segments {a} and {b} overlap (bytes {b_start}..{a_end}): the runtime reads each where it points, so the same bytes serve two purposes; ExecuTorch's writer lays segments out one after another"),
                );
            }
        }
    }
    if let Some(h) = ctx.layout.header {
        if h.segment_base_offset > 0 && h.segment_data_size > 0 {
            end = end.max(h.segment_base_offset.saturating_add(h.segment_data_size));
        }
        if ctx.layout.file_len > end {
            ctx.lead(
                format!("byte {end}"),
                format!("{} bytes after the program and its segments that no reader reads (ExecuTorch's writer ends the file with the last segment)", ctx.layout.file_len - end),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_program_without_methods_is_refused_as_the_runtime_refuses_it() {
        let mut b = crate::flatbuffer::empty_program();
        b.resize(64, 0);
        let r = super::read(&b, 64);
        assert_eq!(r.findings.worst, Some(super::Severity::Fail));
        assert!(r.findings.shown[0].reason.contains("no execution_plan"));
    }
}
