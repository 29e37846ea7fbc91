//! What reading one program shares between the program's tables ([`crate::program`]) and its
//! methods ([`crate::methods`]): the constants located, the reading's findings, and the state
//! both walk with (the layout, the segments, the work bound).

use crate::flatbuffer::{Table, Vector};
use crate::header::Layout;
use crate::scalar_type::ScalarType;
use socair_plugin_kit::model::Findings;
pub use socair_plugin_kit::model::Severity;
use std::collections::HashSet;

/// A constant tensor located in the file (or a named blob, as bytes: `named_data/<key>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constant {
    /// Its fully qualified name when the program gives one, else `method.values[i]`.
    pub name: String,
    /// Its scalar type.
    pub scalar_type: &'static ScalarType,
    /// Its sizes.
    pub shape: Vec<u64>,
    /// Its first byte in the file.
    pub offset: u64,
    /// Its length (`numel × elementSize`, what the runtime hands the kernel).
    pub len: u64,
}

/// What the reader found.
#[derive(Debug, Default)]
pub struct Reading {
    /// Where the parts lie, once the header was read.
    pub layout: Option<Layout>,
    /// `Program.version`.
    pub version: u32,
    /// The methods' names (the first 64).
    pub methods: Vec<String>,
    /// How many methods.
    pub method_count: u64,
    /// Constant tensors located in the file.
    pub constants: Vec<Constant>,
    /// Tensors whose data lies outside the file (`TensorDataLocation::EXTERNAL`): their names.
    pub external: Vec<String>,
    /// The backends delegated to, in order met, each once.
    pub backends: Vec<String>,
    /// The distinct operators the methods name (`name.overload`).
    pub operators: Vec<String>,
    /// Named blobs (`Program.named_data`, read by backends by key through the `PteDataMap`),
    /// located and fingerprinted as bytes among [`Reading::constants`].
    pub named_blobs: u64,
    /// Where the constants are (`constant segment`, `constant_buffer`).
    pub constant_source: &'static str,
    /// What is wrong or outside what socair proves.
    pub findings: Findings,
    /// True when reading stopped (a refusal: nothing past it was read).
    pub stopped: bool,
}

/// Where constant data is (`Program::load`'s choice).
pub(crate) enum Constants<'a> {
    /// No constants.
    None,
    /// `constant_segment`: the segment's absolute start and size, and the offsets.
    Segment {
        start: u64,
        size: u64,
        offsets: Vector<'a>,
    },
    /// The deprecated `constant_buffer`.
    Buffer(Vector<'a>),
}

/// The state shared while reading one program.
pub(crate) struct Ctx<'a> {
    pub layout: Layout,
    pub root: Table<'a>,
    /// `Program.segments` as (offset, size), raw.
    pub segments: Option<Vec<(u64, u64)>>,
    pub constants: Constants<'a>,
    pub reading: Reading,
    pub referenced: HashSet<usize>,
    pub located: HashSet<(u64, u64, u8, Vec<u64>)>,
    pub operators_seen: HashSet<String>,
    pub work: u64,
    pub budget: u64,
    pub constant_limit: u64,
    /// Whether the constants past [`Ctx::constant_limit`] were said.
    pub constants_capped: bool,
}

impl Ctx<'_> {
    /// Counts `n` element visits against the work bound; false once past it (said once).
    pub fn spend(&mut self, n: u64) -> bool {
        self.work = self.work.saturating_add(n);
        if self.work > self.budget {
            if !self.reading.stopped {
                self.reading.findings.add(
                    Severity::Lead,
                    "(the whole program)",
                    format!("the program's tables refer to the same data so often that reading it would visit more than {} elements ({} per byte of the file): socair stopped reading it, nothing past here was checked", self.budget, WORK_PER_BYTE),
                );
                self.reading.stopped = true;
            }
            return false;
        }
        true
    }

    pub fn fail(&mut self, place: impl Into<String>, reason: impl Into<String>) {
        self.reading.findings.add(Severity::Fail, place, reason);
    }

    pub fn lead(&mut self, place: impl Into<String>, reason: impl Into<String>) {
        self.reading.findings.add(Severity::Lead, place, reason);
    }

    /// Segment `index`'s absolute range, checked against the file, when it exists.
    pub fn segment(&self, index: usize) -> Result<(u64, u64), String> {
        let Some(segments) = &self.segments else {
            return Err("the program has no segments".into());
        };
        let Some(&(offset, size)) = segments.get(index) else {
            return Err(format!(
                "segment index {index} is past the program's {} segments",
                segments.len()
            ));
        };
        let base = self.layout.segment_base_offset;
        let start = base
            .checked_add(offset)
            .ok_or_else(|| format!("segment {index}: base {base} + offset {offset} overflows"))?;
        match start.checked_add(size) {
            Some(end) if end <= self.layout.file_len => Ok((start, size)),
            _ => Err(format!(
                "segment {index} (bytes {start}..+{size}) runs past the end of the {}-byte file: the data loader refuses to load it",
                self.layout.file_len
            )),
        }
    }
}

/// Element visits allowed per byte of the file (plus [`WORK_BASE`]).
pub const WORK_PER_BYTE: u64 = 8;
/// Element visits allowed on top of [`WORK_PER_BYTE`].
pub const WORK_BASE: u64 = 1 << 20;
