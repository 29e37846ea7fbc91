//! Documents on standard output, or atomically into the file `--out` names.

use crate::base::output::write_atomically;
use crate::cli::exit::Fatal;
use std::io::Write;
use std::path::Path;

/// Writes a document to `out`, or to standard output when `out` is `None`.
pub fn emit(out: Option<&Path>, bytes: &[u8]) -> Result<(), Fatal> {
    let written = match out {
        Some(path) => write_atomically(path, bytes),
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(bytes).and_then(|()| stdout.flush())
        }
    };
    written.map_err(|e| match out {
        Some(p) => Fatal(format!("{}: cannot write: {e}", p.display())),
        None => Fatal(format!("cannot write to standard output: {e}")),
    })
}
