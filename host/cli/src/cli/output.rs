//! Documents on standard output, or atomically into the file `--out` names.

use crate::base::output::write_atomically;
use crate::cli::exit::Fatal;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Whether to write for a person: standard output is a terminal, and neither `--json` nor
/// `--out` asked for the document.
pub fn for_a_person(json: bool, out: Option<&Path>) -> bool {
    !json && out.is_none() && std::io::stdout().is_terminal()
}

/// Writes a document to `out`, or to standard output when `out` is `None`. A reader that
/// closed the pipe early (`socair scan x | head`) ends the output quietly: the exit code still
/// carries the verdict.
pub fn emit(out: Option<&Path>, bytes: &[u8]) -> Result<(), Fatal> {
    let written = match out {
        Some(path) => write_atomically(path, bytes),
        None => {
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                other => other,
            }
        }
    };
    written.map_err(|e| match out {
        Some(p) => Fatal(format!("{}: cannot write: {e}", p.display())),
        None => Fatal(format!("cannot write to standard output: {e}")),
    })
}
