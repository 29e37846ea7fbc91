//! socair reader for ExecuTorch programs (`.pte`): a FlatBuffers `Program` (file identifier
//! `ET12`), an optional extended header `eh00` locating the data segments that follow it, read
//! as ExecuTorch v1.4.1's runtime loads them (runtime/executor/program.cpp, method.cpp,
//! schema/program.fbs, schema/extended_header.cpp, exir/_serialize/_program.py).
//!
//! An ExecuTorch program carries no code: it names kernels the runtime was built with and hands
//! delegate blobs to backends compiled into it. So a program whose kernels are ExecuTorch's own
//! and whose constants are plain tensors PASSes, its constants located and fingerprinted; a
//! delegate (its blob interpreted by a backend's native code) or a kernel outside ExecuTorch's
//! libraries is a LEAD naming it; what the runtime refuses is a FAIL.
//!
//! The reading is pure ([`program::read`]); this file exports it through `socair-plugin-api`.

mod context;
pub mod flatbuffer;
#[doc(hidden)]
pub mod fuzzing;
pub mod header;
pub mod kernels;
mod methods;
pub mod program;
mod refusal;
pub mod scalar_type;
pub mod schema;

use abi_stable::std_types::{ROption, RSliceMut, RString, RVec, Tuple2};
use socair_plugin_api::{
    ByteOrder, ByteRange, ByteSourceRef, OpenedFile, PluginError, ReadOptions, ReportRow,
    RowStatus, Unread,
};
use socair_plugin_kit::bounded::thousands;
use socair_plugin_kit::export::Reader;
use socair_plugin_kit::report::tensor_in_file;

/// The format name.
pub const FORMAT: &str = "executorch";

/// The check every reader reports.
pub use socair_plugin_kit::report::STRUCTURE_CHECK;

pub use refusal::Refusal;

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct ExecutorchReader;

impl Reader for ExecutorchReader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        looks_like_executorch(head)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        open_source(source)
    }
}

/// Whether `head` carries ExecuTorch's FlatBuffers identifier `ET12` at bytes 4..8 (where
/// `Program::check_header` and `ProgramBufferHasIdentifier` look), whatever the file's name.
pub fn looks_like_executorch(head: &[u8]) -> bool {
    head.get(4..8) == Some(&header::IDENTIFIER[..])
}

fn read_prefix(source: &ByteSourceRef<'_>, len: u64) -> Result<Vec<u8>, PluginError> {
    let len = usize::try_from(len).map_err(|_| {
        PluginError::new(
            socair_plugin_api::PluginErrorKind::InvalidInput,
            "length over usize",
        )
    })?;
    let mut buf = vec![0u8; len];
    source
        .read_at(0, RSliceMut::from_mut_slice(&mut buf))
        .into_result()?;
    Ok(buf)
}

fn open_source(source: &ByteSourceRef<'_>) -> Result<OpenedFile, PluginError> {
    let file_len = source.file_len();
    let head = read_prefix(source, file_len.min(header::NUM_HEAD_BYTES))?;
    // Only the program (the flatbuffer) is read; segments are located, never loaded. The
    // layout bounds the program by the file's length before anything is allocated.
    let wanted = match header::layout(&head, file_len) {
        Ok(l) => l.program_size,
        Err(_) => head.len() as u64,
    };
    let prefix = if wanted > head.len() as u64 {
        read_prefix(source, wanted)?
    } else {
        head
    };
    Ok(opened_file(program::read(&prefix, file_len)))
}

/// Turns a reading into what the plugin API reports.
pub fn opened_file(r: program::Reading) -> OpenedFile {
    let status = r.findings.status();
    let summary = summary(&r, status);
    let mut unread: Vec<Unread> = Vec::new();
    if r.stopped && status == RowStatus::Fail {
        unread.push(Unread {
            tensor: ROption::RNone,
            reason: "the runtime refuses this program: its constants were not located".into(),
            outside_model: false,
        });
    }
    for name in &r.external {
        unread.push(Unread {
            tensor: ROption::RSome(name.as_str().into()),
            reason: "stored outside the .pte (TensorDataLocation::EXTERNAL: a .ptd data file the application supplies)".into(),
            outside_model: true,
        });
    }
    let tensors = r
        .constants
        .iter()
        .map(|c| {
            tensor_in_file(
                &c.name,
                c.scalar_type.name,
                c.scalar_type.element,
                c.shape.clone(),
                vec![ByteRange {
                    offset: c.offset,
                    len: c.len,
                }],
                ByteOrder::Little,
            )
        })
        .collect::<Vec<_>>();
    let mut metadata: Vec<Tuple2<RString, RString>> = Vec::new();
    if !r.backends.is_empty() {
        metadata.push(Tuple2("backends".into(), r.backends.join(", ").into()));
    }
    if !r.methods.is_empty() {
        metadata.push(Tuple2("methods".into(), r.methods.join(", ").into()));
    }
    OpenedFile {
        format: FORMAT.into(),
        tensors: tensors.into(),
        unread: unread.into(),
        rows: RVec::from(vec![ReportRow {
            check: STRUCTURE_CHECK.into(),
            status,
            summary: summary.into(),
            findings: r.findings.to_api("findings"),
            names_severities: false,
        }]),
        metadata: metadata.into(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}

fn summary(r: &program::Reading, status: RowStatus) -> String {
    if r.stopped && status == RowStatus::Fail {
        return "not an ExecuTorch program the runtime (v1.4.1) loads: it refuses it, or would read it out of bounds".into();
    }
    let tensors = r.constants.len() as u64 - r.named_blobs.min(r.constants.len() as u64);
    let constants = if tensors == 0 {
        "no constant tensors".to_owned()
    } else {
        format!(
            "{} constant tensor(s) in {} located and fingerprinted",
            thousands(tensors),
            r.constant_source
        )
    };
    let mut s = format!(
        "ExecuTorch program (ET12, schema version {}{}) with {} method(s) ({}); {constants}; {} distinct operator(s)",
        r.version,
        if r.layout.is_some_and(|l| l.header.is_some()) {
            ", extended header"
        } else {
            ""
        },
        thousands(r.method_count),
        r.methods.join(", "),
        thousands(r.operators.len() as u64),
    );
    if r.named_blobs > 0 {
        s.push_str(&format!(
            "; {} named data blob(s) that backends read by key, fingerprinted as bytes",
            thousands(r.named_blobs)
        ));
    }
    if !r.backends.is_empty() {
        s.push_str(&format!(
            "; delegates to {} (backend native code interprets their blobs)",
            r.backends.join(", ")
        ));
    }
    if !r.external.is_empty() {
        s.push_str(&format!(
            "; {} tensor(s) stored outside the file",
            thousands(r.external.len() as u64)
        ));
    }
    if status == RowStatus::Fail {
        s.push_str("; the runtime refuses part of it (see the findings)");
    }
    s
}
