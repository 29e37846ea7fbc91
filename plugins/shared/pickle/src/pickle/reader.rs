//! How the bytes of a pickle reach the machine: exactly as CPython's C unpickler
//! (`Modules/_pickle.c`) reads them, including what it does with frames that disagree with
//! the opcodes they hold.
//!
//! The C unpickler keeps no frame state. `load_frame` reads the 8-byte length, makes sure
//! that many bytes are in its input buffer, and rewinds; opcodes then read on regardless of
//! where frames end. What is in the buffer depends on the source:
//!
//! * `pickle.loads(bytes)`, or a file object whose `peek` already holds the frame: the buffer
//!   runs on past the frame's end, so reading is **contiguous** (a *window* frame here).
//! * a file object without `peek` (the `io.BytesIO` torch.load hands `data.pkl` to), or a
//!   frame larger than `peek` gives: `read(frame_len)` fills the buffer with **exactly the
//!   frame** (an *exact* frame here). A read that no longer fits (`_Unpickler_ReadImpl`,
//!   `_Unpickler_Readline`) replaces the buffer with bytes read from the file, which is at the
//!   frame's end: the rest of the frame is skipped and the opcode's argument comes from after
//!   it. `_Unpickler_ReadInto` (the payload of BINBYTES and BYTEARRAY8) first copies what is
//!   left in the buffer, so it reads on contiguously. A FRAME inside an exact frame that fits
//!   in it changes nothing; one that does not skips to the outer frame's end and starts there.
//!   A frame longer than what is left raises ("pickle data was truncated") before anything in
//!   it runs. After STOP, a file is positioned at the exact frame's end (the whole frame was
//!   read), so the next `pickle.load` of a stream starts there, not after STOP.
//!
//! Pure Python's `_Unframer` (`Lib/pickle.py`) differs: a read past a frame's end raises
//! ("pickle exhausted before end of frame"), a FRAME before the current frame is exhausted
//! raises ("beginning of a new frame before end of current frame"), and a frame longer than
//! the data is run as far as it goes before the read that finds it short raises. Everything
//! pure Python runs is a prefix of the contiguous reading.
//!
//! Which frames a real file reader reads whole depends on its buffering, so the machine
//! follows the contiguous reading first and records every frame whose being read whole would
//! change what follows ([`Reader::ambiguous`]); the caller then replays the pickle with such
//! frames read exactly (a bounded number of times), so that no call hides in either reading.

use std::ops::Range;

/// Most frames tracked as open at once in the contiguous reading; more is itself a finding.
pub const MAX_OPEN_FRAMES: usize = 32;

/// Most ambiguous frames a reading lists for replays (the rest are only counted): no more can
/// be replayed anyway.
pub const MAX_AMBIGUOUS: usize = 64;

/// Why reading stopped: CPython raises here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Raise {
    /// The data ends inside an opcode or its argument (`pickle data was truncated`).
    Truncated(String),
    /// Anything else the unpickler raises on; the text says what.
    Invalid(String),
}

/// Something the framing did that readers disagree on, at the current opcode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameEvent {
    /// A read of this opcode crosses the end of a frame. `c_skips`: the C unpickler reading the
    /// frame whole would skip to the frame's end (false for the payload of BINBYTES and
    /// BYTEARRAY8, which it reads on contiguously).
    Straddle { frame_end: usize, c_skips: bool },
    /// A FRAME before the current frame's end.
    Nested { outer_end: usize, overflows: bool },
    /// A FRAME longer than what is left of the data.
    PastData { len: u64 },
    /// STOP before the end of a frame.
    StopInFrame { frame_end: usize },
    /// More frames open at once than are tracked.
    TooManyFrames,
}

/// The bytes of one pickle, read the way one C-unpickler source reads them.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// The end of the frame the buffer holds exactly, if any.
    exact_end: Option<usize>,
    /// FRAME opcodes executed so far, in order.
    frames_executed: usize,
    /// Which executed frames (by index) are read whole; all others through a window.
    exact_frames: &'a [usize],
    /// Whether a frame longer than the data stops the reading (the C unpickler) or is read as
    /// far as it goes (pure Python, for the contiguous reading that covers it).
    raise_on_short_frame: bool,
    /// Window frames still open: (end, index).
    open: Vec<(usize, usize)>,
    /// Window frames (by index) that, read whole, would have changed what follows (the first
    /// [`MAX_AMBIGUOUS`]), and how many more there were.
    ambiguous: Vec<usize>,
    ambiguous_more: usize,
    /// Whether this reading has gone where the contiguous one does not.
    diverged: bool,
    /// Whether the current opcode's arguments did not come from right after it.
    skipped_in_op: bool,
    events: Vec<FrameEvent>,
}

impl<'a> Reader<'a> {
    /// A reader from byte `start`; `exact_frames` lists the frames (by execution index) read
    /// whole.
    pub fn new(data: &'a [u8], start: usize, exact_frames: &'a [usize]) -> Self {
        Reader {
            data,
            pos: start.min(data.len()),
            exact_end: None,
            frames_executed: 0,
            exact_frames,
            raise_on_short_frame: !exact_frames.is_empty(),
            open: Vec::new(),
            ambiguous: Vec::new(),
            ambiguous_more: 0,
            diverged: false,
            skipped_in_op: false,
            events: Vec::new(),
        }
    }

    /// Where the next read starts.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Whether every byte has been read.
    pub fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// Marks the start of an opcode.
    pub fn begin_op(&mut self) {
        self.skipped_in_op = false;
    }

    /// Whether the current opcode's arguments were read from somewhere other than right
    /// after it (an exact frame's end).
    pub fn skipped_in_op(&self) -> bool {
        self.skipped_in_op
    }

    /// Whether this reading has diverged from the contiguous one.
    pub fn diverged(&self) -> bool {
        self.diverged
    }

    /// Window frames that, read whole, change what follows, and how many more than listed.
    pub fn ambiguous(&self) -> (&[usize], usize) {
        (&self.ambiguous, self.ambiguous_more)
    }

    fn mark_ambiguous(&mut self, index: usize) {
        if self.ambiguous.len() < MAX_AMBIGUOUS {
            self.ambiguous.push(index);
        } else {
            self.ambiguous_more += 1;
        }
    }

    /// Takes the framing events of the current opcode.
    pub fn take_events(&mut self) -> Vec<FrameEvent> {
        std::mem::take(&mut self.events)
    }

    /// Whether the current opcode raised framing events.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// Leaves an exact frame before a read that does not fit in it: `skip` when the C
    /// unpickler drops the rest of the frame (`_Unpickler_Read`, `_Unpickler_Readline`).
    fn leave_exact(&mut self, end: usize, skip: bool) {
        self.exact_end = None;
        if self.pos < end {
            self.events.push(FrameEvent::Straddle {
                frame_end: end,
                c_skips: skip,
            });
            if skip {
                self.pos = end;
                self.diverged = true;
                self.skipped_in_op = true;
            }
        }
    }

    /// Checks a contiguous read `range` against the open window frames.
    fn cross_windows(&mut self, range: &Range<usize>, c_skips: bool) {
        let mut i = 0;
        while i < self.open.len() {
            let (end, index) = self.open[i];
            if range.start < end && end < range.end {
                self.events.push(FrameEvent::Straddle {
                    frame_end: end,
                    c_skips,
                });
                if c_skips {
                    self.mark_ambiguous(index);
                }
                self.open.swap_remove(i);
            } else if range.end >= end {
                self.open.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    fn contiguous(&mut self, n: usize, c_skips: bool) -> Result<&'a [u8], Raise> {
        let data = self.data;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| {
                Raise::Truncated(format!(
                    "needs {n} bytes at byte {} but the pickle ends at byte {}",
                    self.pos,
                    data.len()
                ))
            })?;
        let range = self.pos..end;
        if !self.open.is_empty() {
            self.cross_windows(&range, c_skips);
        }
        self.pos = end;
        Ok(&data[range])
    }

    /// `_Unpickler_Read`: `n` bytes.
    pub fn read(&mut self, n: usize) -> Result<&'a [u8], Raise> {
        if let Some(end) = self.exact_end {
            if self.pos.checked_add(n).is_some_and(|e| e <= end) {
                let start = self.pos;
                self.pos += n;
                return Ok(&self.data[start..self.pos]);
            }
            self.leave_exact(end, true);
        }
        self.contiguous(n, true)
    }

    /// `_Unpickler_ReadInto`: `n` bytes of a BINBYTES or BYTEARRAY8 payload.
    pub fn read_into(&mut self, n: usize) -> Result<&'a [u8], Raise> {
        if let Some(end) = self.exact_end {
            if self.pos.checked_add(n).is_some_and(|e| e <= end) {
                let start = self.pos;
                self.pos += n;
                return Ok(&self.data[start..self.pos]);
            }
            self.leave_exact(end, false);
        }
        self.contiguous(n, false)
    }

    /// `_Unpickler_Readline`: a line, newline included.
    pub fn readline(&mut self) -> Result<&'a [u8], Raise> {
        let data = self.data;
        if let Some(end) = self.exact_end {
            if let Some(nl) = data[self.pos..end].iter().position(|&b| b == b'\n') {
                let start = self.pos;
                self.pos += nl + 1;
                return Ok(&data[start..self.pos]);
            }
            self.leave_exact(end, true);
        }
        let nl = data[self.pos..]
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| {
                Raise::Truncated(format!(
                    "a text argument at byte {} has no newline before the pickle ends",
                    self.pos
                ))
            })?;
        self.contiguous(nl + 1, true)
    }

    /// joblib's `file_handle.read(n)` between opcodes: the `n` raw bytes at the position, or,
    /// when a frame is open past the position (the frame Python's `_Unframer` read whole
    /// ends later, so the file is not here), `Err` with that frame's end.
    pub fn raw(&mut self, n: usize) -> Result<Result<Range<usize>, usize>, Raise> {
        if let Some(end) = self.exact_end.filter(|&e| e > self.pos) {
            return Ok(Err(end));
        }
        if let Some(&(end, _)) = self.open.iter().find(|(e, _)| *e > self.pos) {
            return Ok(Err(end));
        }
        self.exact_end = None;
        self.open.clear();
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| {
                Raise::Truncated(format!(
                    "needs {n} bytes of array data at byte {} but the data ends at byte {}",
                    self.pos,
                    self.data.len()
                ))
            })?;
        let r = self.pos..end;
        self.pos = end;
        Ok(Ok(r))
    }

    /// Goes on at `to` (after a nested pickle another run read).
    pub fn jump(&mut self, to: usize) {
        self.pos = to.min(self.data.len());
        self.exact_end = None;
        self.open.clear();
    }

    /// The bytes left, all of them: what pure Python's `readline` gives at the end of a file
    /// that has no newline left.
    pub fn rest(&mut self) -> &'a [u8] {
        let data = self.data;
        let start = self.pos.min(data.len());
        self.pos = data.len();
        self.exact_end = None;
        &data[start..]
    }

    /// `load_frame` after its 8-byte length: makes the next `len` bytes the current frame.
    pub fn frame(&mut self, len: u64) -> Result<(), Raise> {
        let index = self.frames_executed;
        self.frames_executed += 1;
        let len = usize::try_from(len)
            .ok()
            .filter(|&n| isize::try_from(n).is_ok())
            .ok_or_else(|| {
                Raise::Invalid(format!("FRAME length {len} exceeds the system's maximum"))
            })?;
        if let Some(outer) = self.exact_end {
            let fits = self.pos.checked_add(len).is_some_and(|e| e <= outer);
            self.events.push(FrameEvent::Nested {
                outer_end: outer,
                overflows: !fits,
            });
            if fits {
                return Ok(());
            }
            // The C unpickler reads the new frame from the file, which is at the outer end.
            self.leave_exact(outer, true);
            self.events
                .retain(|e| !matches!(e, FrameEvent::Straddle { .. }));
        } else {
            let mut i = 0;
            while i < self.open.len() {
                let (end, outer) = self.open[i];
                if self.pos < end {
                    let overflows = self.pos.checked_add(len).is_none_or(|e| e > end);
                    self.events.push(FrameEvent::Nested {
                        outer_end: end,
                        overflows,
                    });
                    if overflows {
                        // Read whole, the outer frame would end the reading here.
                        self.mark_ambiguous(outer);
                        self.open.swap_remove(i);
                        continue;
                    }
                }
                i += 1;
            }
        }
        let end = self.pos.checked_add(len).filter(|&e| e <= self.data.len());
        let Some(end) = end else {
            self.events.push(FrameEvent::PastData { len: len as u64 });
            if self.raise_on_short_frame {
                return Err(Raise::Truncated(format!(
                    "a FRAME of {len} bytes at byte {} runs past the end of the pickle",
                    self.pos
                )));
            }
            // Pure Python runs what the frame holds: read on contiguously.
            return Ok(());
        };
        if self.exact_frames.contains(&index) {
            self.exact_end = Some(end);
            self.diverged = true;
        } else if end > self.pos {
            if self.open.len() < MAX_OPEN_FRAMES {
                self.open.push((end, index));
            } else {
                self.events.push(FrameEvent::TooManyFrames);
            }
        }
        Ok(())
    }

    /// At STOP: where a file reader's next `pickle.load` starts when that is not right after
    /// STOP (STOP inside a frame read whole leaves the file at the frame's end).
    pub fn stop(&mut self) -> Option<usize> {
        if let Some(end) = self.exact_end.filter(|&e| e > self.pos) {
            self.events.push(FrameEvent::StopInFrame { frame_end: end });
            return Some(end);
        }
        let end = self
            .open
            .iter()
            .map(|&(end, _)| end)
            .filter(|&e| e > self.pos)
            .max()?;
        self.events.push(FrameEvent::StopInFrame { frame_end: end });
        Some(end)
    }

    /// Whether this reading reads frames whole (an alternative replay).
    pub fn is_replay(&self) -> bool {
        !self.exact_frames.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_frame_skips_the_rest_of_itself_on_a_straddling_read() {
        // A frame of 3 bytes holds "abc"; a 4-byte read at "c" takes "defg".
        let data = b"abcdefgh";
        let exact = [0usize];
        let mut r = Reader::new(data, 0, &exact);
        r.frame(3).unwrap();
        assert_eq!(r.read(2).unwrap(), b"ab");
        assert_eq!(r.read(4).unwrap(), b"defg");
        assert!(r.diverged());
        // The contiguous reading takes "cdef" and records the frame as ambiguous.
        let mut r = Reader::new(data, 0, &[]);
        r.frame(3).unwrap();
        r.read(2).unwrap();
        assert_eq!(r.read(4).unwrap(), b"cdef");
        assert_eq!(r.ambiguous(), (&[0][..], 0));
        // A payload read (ReadInto) reads on contiguously either way.
        let mut r = Reader::new(data, 0, &exact);
        r.frame(3).unwrap();
        r.read(2).unwrap();
        assert_eq!(r.read_into(4).unwrap(), b"cdef");
        assert!(!r.diverged() || r.pos() == 6);
    }

    #[test]
    fn lines_and_nested_frames_follow_the_c_unpickler() {
        let data = b"ab\ncd\nef\n";
        let exact = [0usize];
        let mut r = Reader::new(data, 0, &exact);
        r.frame(4).unwrap();
        assert_eq!(r.readline().unwrap(), b"ab\n");
        // "c" is left in the frame; the line read from the file is "d\n"... after the frame.
        assert_eq!(r.readline().unwrap(), b"d\n");
        let data = b"ab\ncd\nef\ngh\n";
        let mut r = Reader::new(data, 0, &exact);
        r.frame(6).unwrap();
        // A nested frame that fits changes nothing.
        r.frame(2).unwrap();
        assert_eq!(r.readline().unwrap(), b"ab\n");
        // One that does not fit skips to the outer end.
        r.frame(5).unwrap();
        assert_eq!(r.pos(), 6);
        assert_eq!(r.readline().unwrap(), b"ef\n");
        // A frame past the data raises for the C unpickler.
        let mut r = Reader::new(data, 0, &exact);
        assert!(r.frame(100).is_err());
        let mut r = Reader::new(data, 0, &[]);
        assert!(r.frame(100).is_ok());
    }
}
