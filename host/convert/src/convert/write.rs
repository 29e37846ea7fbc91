//! Writing a planned conversion: the header, each tensor's bytes (swapped to little-endian
//! when needed), zeros elsewhere, hashed as written.

use crate::base::digest::hex;
use crate::base::progress::Progress;
use crate::convert::plan::{Conversion, Refusal};
use crate::read::layout;
use crate::read::source::InputFile;
use sha2::{Digest, Sha256};
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

/// Writes the output to `out` (a new file, given its final length first): header, each
/// tensor's bytes (swapped to little-endian when needed), zeros elsewhere. Calls `ready(i)`
/// once all of tensor `i`'s bytes are in the file, so that it can be checked while the rest is
/// written. Returns the output's sha256, and its fsync, under way (the file is written back to
/// the disk as it is written, [`Syncing`]): the caller waits for it before keeping the file.
/// `progress` counts the bytes written.
pub fn write(
    conv: &Conversion,
    inputs: &[&InputFile],
    out: &Path,
    progress: &Progress,
    ready: &mut dyn FnMut(usize),
) -> Result<(String, Syncing), Refusal> {
    check_room(out, conv.total_len)?;
    let io = |e: std::io::Error| format!("{}: {e}", out.display());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(out)
        .map_err(io)?;
    // Its final length from the start: a tensor already written can be read back (opened
    // once, its reads checked against that length) while the next is written.
    file.set_len(conv.total_len).map_err(io)?;
    let syncing = Syncing::start(&file).map_err(io)?;
    let mut writer = HashedWriter::new(&mut file, progress, ready, &syncing);
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
        writer.ready_at(i, at);
    }
    writer.zeros(gap(at, conv.total_len)?).map_err(io)?;
    let digest = writer.finish().map_err(io)?;
    Ok((hex(&digest), syncing))
}

/// The output written back to the disk while it is written: a thread calls `fdatasync` each
/// time [`SYNC_EVERY`] more bytes are written, so that the disk works beside the copy and the
/// checks instead of after them, and `fsync` once writing is over ([`Syncing::wait`]).
/// Written back without it, 1 GiB waited 0.5–1.4 s for the disk after everything else.
pub struct Syncing {
    more: Option<std::sync::mpsc::SyncSender<()>>,
    thread: std::thread::JoinHandle<std::io::Result<()>>,
}

/// Bytes written between two requests to write back.
const SYNC_EVERY: u64 = 64 << 20;

impl std::fmt::Debug for Syncing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Syncing")
    }
}

impl Syncing {
    fn start(file: &std::fs::File) -> std::io::Result<Syncing> {
        let file = file.try_clone()?;
        let (more, asked) = std::sync::mpsc::sync_channel::<()>(1);
        let thread = std::thread::spawn(move || {
            let mut failed = None;
            for () in asked {
                if let Err(e) = file.sync_data() {
                    failed.get_or_insert(e);
                }
            }
            match failed {
                Some(e) => Err(e),
                None => file.sync_all(),
            }
        });
        Ok(Syncing {
            more: Some(more),
            thread,
        })
    }

    /// Asks for what is written so far to be written back (unless a request is waiting).
    fn kick(&self) {
        if let Some(more) = &self.more {
            let _ = more.try_send(());
        }
    }

    /// The last fsync, once everything is written: waits for the disk.
    pub fn wait(mut self) -> std::io::Result<()> {
        drop(self.more.take());
        self.thread
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the fsync thread died")))
    }
}

/// Writes a file through one buffer: filled (and its elements swapped to little-endian when
/// asked), written, and hashed in this thread while it is still in this core's cache. The other
/// core checks the tensors already written. (Measured on 1 GiB, 2 cores, 2026-12-02: hashed on
/// a thread of its own from a pipe of buffers, 1.61 s and 2.65 CPU-seconds; read back and
/// hashed by a thread of its own, 1.57 s and 2.7; hashed here, 1.60 s and 2.4.) Says which
/// tensors are in the file as they get there.
struct HashedWriter<'f> {
    file: &'f mut std::fs::File,
    hash: Sha256,
    pending: Vec<u8>,
    progress: &'f Progress,
    /// Bytes in the file so far.
    written: u64,
    /// Tensors whose bytes are not all in the file yet, with where they end, in order.
    waiting: std::collections::VecDeque<(usize, u64)>,
    ready: &'f mut dyn FnMut(usize),
    syncing: &'f Syncing,
    /// Bytes written when write-back was last asked for.
    synced: u64,
}

impl<'f> HashedWriter<'f> {
    const CHUNK: usize = crate::read::source::CHUNK;

    fn new(
        file: &'f mut std::fs::File,
        progress: &'f Progress,
        ready: &'f mut dyn FnMut(usize),
        syncing: &'f Syncing,
    ) -> Self {
        Self {
            file,
            hash: Sha256::new(),
            pending: Vec::with_capacity(Self::CHUNK),
            progress,
            written: 0,
            waiting: Default::default(),
            ready,
            syncing,
            synced: 0,
        }
    }

    /// Tensor `i`'s bytes end at `end`: it is ready once the file holds them.
    fn ready_at(&mut self, i: usize, end: u64) {
        self.waiting.push_back((i, end));
        self.hand_over();
    }

    /// Says which waiting tensors the file now holds.
    fn hand_over(&mut self) {
        while let Some(&(i, end)) = self.waiting.front() {
            if end > self.written {
                break;
            }
            self.waiting.pop_front();
            (self.ready)(i);
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
        self.file.write_all(&self.pending)?;
        self.hash.update(&self.pending);
        self.progress.add(self.pending.len() as u64);
        self.written += self.pending.len() as u64;
        self.pending.clear();
        self.hand_over();
        if self.written - self.synced >= SYNC_EVERY {
            self.syncing.kick();
            self.synced = self.written;
        }
        Ok(())
    }

    /// Writes what is pending and returns the SHA-256 of everything written.
    fn finish(mut self) -> std::io::Result<[u8; 32]> {
        self.flush()?;
        Ok(self.hash.finalize().into())
    }
}
