//! Whether a file's first bytes (the up to 4096 a reader's `detect` is shown) parse as a
//! message of a schema: the ground a claim on a protobuf file stands on, since protobuf has no
//! magic number.
//!
//! [`fields`] walks the head field by field with the schema's wire types, into every embedded
//! message as far as the head holds it (to [`HEAD_DEPTH`] levels), and answers with the root
//! message's fields, or none as soon as anything is not what the schema says: an undefined
//! field number, a wrong wire type, a group, a length past the end of the file or of the
//! enclosing message, text that is not UTF-8. What the head cuts short (the last field, a
//! message that runs past it) is taken as far as it goes.

use super::read_varint;
use super::schema::{Kind, MessageSchema};

/// Embedded messages are checked this deep; deeper ones are taken as they are.
pub const HEAD_DEPTH: usize = 24;

/// One field of the root message, as the head shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadField {
    /// Its number.
    pub number: u32,
    /// Its value, for a varint.
    pub varint: Option<u64>,
    /// Its declared length, for a length-delimited field.
    pub len: Option<u64>,
    /// Whether its payload lies wholly within the head.
    pub whole: bool,
}

/// The root message's fields in `head` (the first bytes of a file of `file_len` bytes), or
/// none when the head is not a prefix of message `root` of `messages`.
pub fn fields(
    head: &[u8],
    file_len: u64,
    messages: &[MessageSchema],
    root: usize,
) -> Option<Vec<HeadField>> {
    let mut out = Vec::new();
    let end = head.len();
    let cut = (end as u64) < file_len;
    message(
        head,
        0,
        end,
        file_len,
        messages,
        root,
        0,
        cut,
        &mut Some(&mut out),
    )?;
    Some(out)
}

/// Walks `head[start..end]` as message `msg`; `cut` says `end` is the head's end, not the
/// message's, so a field it cuts is taken as far as it goes.
#[allow(clippy::too_many_arguments)]
fn message(
    head: &[u8],
    start: usize,
    end: usize,
    file_len: u64,
    messages: &[MessageSchema],
    msg: usize,
    depth: usize,
    cut: bool,
    out: &mut Option<&mut Vec<HeadField>>,
) -> Option<()> {
    let schema = messages.get(msg)?;
    let mut at = start;
    while at < end {
        let Some(key) = read_varint(head, &mut at, end) else {
            // A tag the head cuts.
            return cut.then_some(());
        };
        let number = u32::try_from(key >> 3).ok().filter(|n| *n > 0)?;
        let wire = (key & 7) as u8;
        let field = schema.field(number)?;
        let expected = field.kind.wire_type();
        let packed = field.repeated && wire == 2 && expected != 2;
        if wire != expected && !packed {
            return None;
        }
        let mut record = HeadField {
            number,
            varint: None,
            len: None,
            whole: true,
        };
        match wire {
            0 => match read_varint(head, &mut at, end) {
                Some(v) => record.varint = Some(v),
                None => {
                    record.whole = false;
                    push(out, record);
                    return cut.then_some(());
                }
            },
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                if end - at < n {
                    record.whole = false;
                    push(out, record);
                    return cut.then_some(());
                }
                at += n;
            }
            _ => {
                let Some(len) = read_varint(head, &mut at, end) else {
                    record.whole = false;
                    push(out, record);
                    return cut.then_some(());
                };
                // Within the file at all, wherever the head ends.
                if len > file_len.saturating_sub(at as u64) {
                    return None;
                }
                record.len = Some(len);
                let stop = at.checked_add(usize::try_from(len).ok()?)?;
                let (p1, inner_cut) = if stop > end {
                    if !cut {
                        // Past the end of the enclosing message, which the head holds whole.
                        return None;
                    }
                    record.whole = false;
                    (end, true)
                } else {
                    (stop, false)
                };
                match field.kind {
                    Kind::Message(child) if depth + 1 < HEAD_DEPTH => {
                        message(
                            head,
                            at,
                            p1,
                            file_len,
                            messages,
                            child,
                            depth + 1,
                            inner_cut,
                            &mut None,
                        )?;
                    }
                    Kind::String => {
                        if let Err(e) = std::str::from_utf8(&head[at..p1]) {
                            // Only a character the head cuts may be incomplete.
                            if !(inner_cut && e.error_len().is_none()) {
                                return None;
                            }
                        }
                    }
                    _ => {}
                }
                push(out, record);
                if stop > end {
                    return Some(());
                }
                at = stop;
                continue;
            }
        }
        push(out, record);
    }
    Some(())
}

fn push(out: &mut Option<&mut Vec<HeadField>>, f: HeadField) {
    if let Some(v) = out {
        v.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::super::schema::{Field, Kind, MessageSchema};
    use super::*;

    static MESSAGES: &[MessageSchema] = &[
        MessageSchema {
            name: "Root",
            size: 0,
            fields: &[
                Field {
                    number: 1,
                    name: "version",
                    kind: Kind::Varint,
                    repeated: false,
                },
                Field {
                    number: 2,
                    name: "child",
                    kind: Kind::Message(1),
                    repeated: true,
                },
            ],
        },
        MessageSchema {
            name: "Child",
            size: 0,
            fields: &[Field {
                number: 1,
                name: "name",
                kind: Kind::String,
                repeated: false,
            }],
        },
    ];

    #[test]
    fn reads_the_root_fields_and_checks_what_is_inside() {
        // version 1, child { name "ab" }
        let head = [0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, b'a', b'b'];
        let f = fields(&head, head.len() as u64, MESSAGES, 0).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].varint, Some(1));
        assert_eq!((f[1].number, f[1].len, f[1].whole), (2, Some(4), true));
        // A child holding an undefined field.
        let bad = [0x08, 0x01, 0x12, 0x02, 0x10, 0x01];
        assert!(fields(&bad, bad.len() as u64, MESSAGES, 0).is_none());
        // A child cut by the head is checked as far as it goes.
        let cut = [0x08, 0x01, 0x12, 0x10, 0x0a, 0x0e, b'a'];
        let f = fields(&cut, 100, MESSAGES, 0).unwrap();
        assert!(!f[1].whole);
        // ... but the same bytes as a whole file run past its end.
        assert!(fields(&cut, cut.len() as u64, MESSAGES, 0).is_none());
        // A wrong wire type.
        assert!(fields(&[0x0a, 0x00], 2, MESSAGES, 0).is_none());
        // Not UTF-8.
        let text = [0x12, 0x03, 0x0a, 0x01, 0xff];
        assert!(fields(&text, 5, MESSAGES, 0).is_none());
    }
}
