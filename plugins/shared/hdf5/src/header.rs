//! Object headers, versions 1 and 2 (`H5Ocache.c`, HDF5 1.14): their messages, gathered from
//! the first block and every continuation block, each block read once.

use crate::io::{check_sum, Cursor, Source};
use crate::model::Hdf5Error;
use socair_plugin_api::ReadAt;
use std::collections::{HashSet, VecDeque};

/// Message type: continuation (another block of this header's messages).
pub const CONTINUATION: u16 = 0x10;

/// Blocks one header may span: far more than a writer makes (one, and one more per growth).
const MAX_BLOCKS: usize = 4096;

/// One header message.
#[derive(Debug, Clone)]
pub struct Message {
    /// Its type.
    pub kind: u16,
    /// Its flags (bit 1: the message is shared, stored elsewhere).
    pub flags: u8,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl Message {
    /// Whether the message is stored elsewhere (a shared message).
    pub fn shared(&self) -> bool {
        self.flags & 0b10 != 0
    }
}

/// Reads the object header at `addr`: all its messages but continuations, in order.
pub fn read<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    addr: u64,
    place: &str,
) -> Result<Vec<Message>, Hdf5Error> {
    let first = src.bytes(addr, 4, &format!("object header of {place}"))?;
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut pending: VecDeque<(u64, u64)> = VecDeque::new();
    let v2 = first == b"OHDR";
    if v2 {
        let fixed = src.bytes(addr, 6, place)?;
        let flags = fixed.get(5).copied().unwrap_or(0);
        if fixed.get(4) != Some(&2) {
            return Err(Hdf5Error::new(
                format!("object header of {place} at address {addr}"),
                "an OHDR header whose version is not 2",
            ));
        }
        let mut prefix = 6u64;
        if flags & 0x20 != 0 {
            prefix += 16;
        }
        if flags & 0x10 != 0 {
            prefix += 4;
        }
        let width = 1u64 << (flags & 3);
        let head = src.bytes(addr, prefix + width, place)?;
        let size = Cursor::with(head.get(prefix as usize..).unwrap_or_default(), 8, 8, place)
            .uint(width as usize)?;
        let what = format!("object header of {place} at address {addr}");
        // A size of 8 bytes could be anything: past the file, the read below refuses it.
        let total = size
            .checked_add(prefix + width + 4)
            .ok_or_else(|| Hdf5Error::new(&what, format!("a first block of {size} bytes")))?;
        // The first block (after its prefix), then every continuation block (after `OCHK`),
        // each ending in its checksum.
        pending.push_back((addr, total));
        while let Some((at, len)) = pending.pop_front() {
            let first = at == addr && seen.is_empty();
            if !seen.insert(at) || seen.len() > MAX_BLOCKS {
                return Err(Hdf5Error::new(
                    &what,
                    "its continuation blocks loop back or never end",
                ));
            }
            let block = src.bytes(at, len, &what)?;
            if !first && block.get(..4) != Some(b"OCHK") {
                return Err(Hdf5Error::new(
                    format!("continuation block at address {at} of {place}"),
                    "does not start with OCHK",
                ));
            }
            check_sum(&block, &what)?;
            let skip = if first { (prefix + width) as usize } else { 4 };
            let body = block
                .get(skip..block.len().saturating_sub(4))
                .unwrap_or_default();
            messages_v2(
                body,
                flags,
                (src.offsets, src.lengths),
                &what,
                &mut out,
                &mut pending,
            )?;
        }
        return Ok(out);
    }
    let fixed = src.bytes(addr, 16, &format!("object header of {place}"))?;
    let mut c = Cursor::with(&fixed, src.offsets, src.lengths, place);
    let version = c.u8()?;
    if version != 1 {
        return Err(Hdf5Error::new(
            format!("object header of {place} at address {addr}"),
            format!("version {version}: HDF5 writes version 1 headers or OHDR (version 2) ones"),
        ));
    }
    c.skip(1)?;
    let _count = c.u16()?;
    let _refs = c.u32()?;
    let size = u64::from(c.u32()?);
    let what = format!("object header of {place} at address {addr}");
    pending.push_back((addr.saturating_add(16), size));
    while let Some((at, len)) = pending.pop_front() {
        if !seen.insert(at) || seen.len() > MAX_BLOCKS {
            return Err(Hdf5Error::new(
                &what,
                "its continuation blocks loop back or never end",
            ));
        }
        let block = src.bytes(at, len, &what)?;
        let mut c = Cursor::with(&block, src.offsets, src.lengths, &what);
        while c.left() >= 8 {
            let kind = c.u16()?;
            let size = usize::from(c.u16()?);
            let flags = c.u8()?;
            c.skip(3)?;
            let data = c.take(size)?;
            push(
                kind,
                flags,
                data,
                &what,
                src.offsets,
                src.lengths,
                &mut out,
                &mut pending,
            )?;
        }
    }
    Ok(out)
}

fn messages_v2(
    body: &[u8],
    header_flags: u8,
    (offsets, lengths): (u8, u8),
    what: &str,
    out: &mut Vec<Message>,
    pending: &mut VecDeque<(u64, u64)>,
) -> Result<(), Hdf5Error> {
    let order = header_flags & 0x04 != 0;
    let fixed = if order { 6 } else { 4 };
    let mut c = Cursor::with(body, 8, 8, what);
    while c.left() >= fixed {
        let kind = u16::from(c.u8()?);
        let size = usize::from(c.u16()?);
        let flags = c.u8()?;
        if order {
            c.skip(2)?;
        }
        let data = c.take(size)?;
        push(kind, flags, data, what, offsets, lengths, out, pending)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn push(
    kind: u16,
    flags: u8,
    data: &[u8],
    what: &str,
    offsets: u8,
    lengths: u8,
    out: &mut Vec<Message>,
    pending: &mut VecDeque<(u64, u64)>,
) -> Result<(), Hdf5Error> {
    match kind {
        0 => {}
        CONTINUATION => {
            let mut c = Cursor::with(data, offsets, lengths, what);
            let at = c.addr()?;
            let len = c.length()?;
            pending.push_back((at, len));
        }
        _ => out.push(Message {
            kind,
            flags,
            data: data.to_vec(),
        }),
    }
    Ok(())
}
