//! Writing a planned conversion: the header, each tensor's bytes (swapped to little-endian
//! when needed), zeros elsewhere, hashed on a second core while written.

use crate::base::digest::hex;
use crate::base::hashpipe::HashPipe;
use crate::base::progress::Progress;
use crate::convert::plan::{Conversion, Refusal};
use crate::read::layout;
use crate::read::source::InputFile;
use std::io::Write;
use std::path::Path;

/// Checks there is room for `bytes` more in the directory holding `path`.
pub fn check_room(path: &Path, bytes: u64) -> Result<(), Refusal> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match fs4::available_space(dir) {
        Ok(free) if free < bytes => Err(format!(
            "{}: {bytes} bytes are needed but only {free} are free",
            dir.display()
        )),
        _ => Ok(()),
    }
}

/// Writes the output to `out` (a new file): header, each tensor's bytes (swapped to
/// little-endian when needed), zeros elsewhere; fsyncs. Returns the output's sha256.
pub fn write(conv: &Conversion, inputs: &[&InputFile], out: &Path) -> Result<String, Refusal> {
    check_room(out, conv.total_len)?;
    let io = |e: std::io::Error| format!("{}: {e}", out.display());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(out)
        .map_err(io)?;
    let mut writer = HashedWriter::new(&mut file, conv.total_len);
    writer.put(&conv.header, 1).map_err(io)?;
    // Placements are planned in order without overlap; a plan that says otherwise is refused
    // here rather than written wrongly.
    let gap = |from: u64, to: u64| {
        to.checked_sub(from)
            .ok_or_else(|| format!("the plan places bytes at {to}, before {from}"))
    };
    let mut at = conv.header.len() as u64;
    let mut order = conv.placements.clone();
    order.sort_by_key(|&(_, off)| off);
    for (i, offset) in order {
        let t = &conv.tensors[i];
        writer.zeros(gap(at, offset)?).map_err(io)?;
        let mut failure = None;
        let input = inputs[t.input];
        let each = |chunk: &[u8]| {
            if failure.is_none() {
                if let Err(e) = writer.put(chunk, t.swap) {
                    failure = Some(e);
                }
            }
        };
        match &t.gather {
            None => input.for_each_chunk(t.offset, t.len, each),
            Some(g) => layout::gather(input, g, each),
        }
        .map_err(|e| format!("reading {:?} from the input: {e}", t.name))?;
        if let Some(e) = failure {
            return Err(io(e));
        }
        at = offset + t.len;
    }
    writer.zeros(gap(at, conv.total_len)?).map_err(io)?;
    let digest = writer.finish().map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(hex(&digest))
}

/// Writes a file through the buffers of a [`HashPipe`](crate::base::hashpipe::HashPipe): each buffer
/// is filled (and its elements swapped to little-endian when asked), written, then hashed on a
/// second core while the next one fills.
struct HashedWriter<'f> {
    file: &'f mut std::fs::File,
    pipe: HashPipe,
    pending: Vec<u8>,
    progress: Progress,
}

impl<'f> HashedWriter<'f> {
    const CHUNK: usize = 1 << 20;

    fn new(file: &'f mut std::fs::File, total: u64) -> Self {
        let pipe = HashPipe::new(Self::CHUNK);
        let pending = pipe.buffer();
        Self {
            file,
            pipe,
            pending,
            progress: Progress::bytes(total, "writing"),
        }
    }

    /// Appends `bytes`, reversing each `swap`-byte element when `swap > 1` (`bytes` holds whole
    /// elements: tensor lengths and read chunks are multiples of the element size).
    fn put(&mut self, bytes: &[u8], swap: usize) -> std::io::Result<()> {
        let unit = swap.max(1);
        let mut rest = bytes;
        while !rest.is_empty() {
            let room = Self::CHUNK - self.pending.len();
            let take = rest.len().min(room - room % unit);
            let start = self.pending.len();
            self.pending.extend_from_slice(&rest[..take]);
            if swap > 1 {
                for e in self.pending[start..].chunks_exact_mut(swap) {
                    e.reverse();
                }
            }
            rest = &rest[take..];
            if Self::CHUNK - self.pending.len() < unit {
                self.flush()?;
            }
        }
        Ok(())
    }

    fn zeros(&mut self, mut n: u64) -> std::io::Result<()> {
        const ZEROS: [u8; 4096] = [0; 4096];
        while n > 0 {
            let k = n.min(ZEROS.len() as u64) as usize;
            self.put(&ZEROS[..k], 1)?;
            n -= k as u64;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let full = std::mem::replace(&mut self.pending, self.pipe.buffer());
        self.file.write_all(&full)?;
        self.progress.add(full.len() as u64);
        self.pipe.send(full);
        Ok(())
    }

    /// Writes what is pending and returns the SHA-256 of everything written.
    fn finish(mut self) -> std::io::Result<[u8; 32]> {
        self.flush()?;
        self.pipe.finish()
    }
}
