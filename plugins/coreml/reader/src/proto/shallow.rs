//! One message's own fields as they lie in the file, without entering the messages they hold:
//! what the reader decides a message's role by (a layer's name, a blob's file and offset), and
//! what its oneof groups are checked on. The kit's wire walk checks every byte of the same
//! message before or after; this look stops quietly at the first thing that walk refuses.

use socair_plugin_kit::protobuf::read_varint;

/// A span `(start, end)` of the input.
pub type Span = (usize, usize);

/// One field of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireField {
    /// Its number.
    pub number: u32,
    /// Its wire type (0 varint, 1 eight bytes, 2 length-delimited, 5 four bytes).
    pub wire: u8,
    /// Where its tag starts.
    pub tag_at: usize,
    /// Its payload: a length-delimited field's bytes, a fixed-width value's bytes, a varint's
    /// bytes.
    pub payload: Span,
    /// A varint's value (0 for the other wire types).
    pub varint: u64,
}

/// The fields of the message `buf[span]`, in file order.
pub fn fields(buf: &[u8], span: Span) -> Fields<'_> {
    Fields {
        buf,
        at: span.0,
        end: span.1.min(buf.len()),
    }
}

/// The iterator [`fields`] returns.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    buf: &'a [u8],
    at: usize,
    end: usize,
}

impl Iterator for Fields<'_> {
    type Item = WireField;

    fn next(&mut self) -> Option<WireField> {
        let field = self.step();
        if field.is_none() {
            self.at = self.end;
        }
        field
    }
}

impl Fields<'_> {
    fn step(&mut self) -> Option<WireField> {
        if self.at >= self.end {
            return None;
        }
        let tag_at = self.at;
        let key = read_varint(self.buf, &mut self.at, self.end)?;
        let number = u32::try_from(key >> 3).ok().filter(|n| *n > 0)?;
        let wire = (key & 7) as u8;
        let start = self.at;
        let mut varint = 0;
        let payload = match wire {
            0 => {
                varint = read_varint(self.buf, &mut self.at, self.end)?;
                (start, self.at)
            }
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                let stop = start.checked_add(n).filter(|s| *s <= self.end)?;
                self.at = stop;
                (start, stop)
            }
            2 => {
                let len = read_varint(self.buf, &mut self.at, self.end)?;
                let len = usize::try_from(len).ok()?;
                let stop = self.at.checked_add(len).filter(|s| *s <= self.end)?;
                let p = (self.at, stop);
                self.at = stop;
                p
            }
            _ => return None,
        };
        Some(WireField {
            number,
            wire,
            tag_at,
            payload,
            varint,
        })
    }
}

/// The payload of the length-delimited field whose tag is at `tag_at`: an embedded message's
/// span, as the wire walk hands the message to its visitor.
pub fn payload_at(buf: &[u8], tag_at: usize) -> Option<Span> {
    let mut f = fields(buf, (tag_at, buf.len()));
    f.next().filter(|w| w.wire == 2).map(|w| w.payload)
}

/// The last occurrence of length-delimited field `number` in `span` (protobuf keeps the last
/// of a singular field).
pub fn last_bytes(buf: &[u8], span: Span, number: u32) -> Option<Span> {
    fields(buf, span)
        .filter(|f| f.number == number && f.wire == 2)
        .last()
        .map(|f| f.payload)
}

/// The last occurrence of varint field `number` in `span`.
pub fn last_varint(buf: &[u8], span: Span, number: u32) -> Option<u64> {
    fields(buf, span)
        .filter(|f| f.number == number && f.wire == 0)
        .last()
        .map(|f| f.varint)
}

/// The text `buf[span]`, when it is UTF-8.
pub fn text(buf: &[u8], span: Span) -> Option<&str> {
    std::str::from_utf8(buf.get(span.0..span.1)?).ok()
}

/// The last occurrence of string field `number` in `span`, as text.
pub fn last_text(buf: &[u8], span: Span, number: u32) -> Option<&str> {
    last_bytes(buf, span, number).and_then(|s| text(buf, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_listed_in_order_and_a_cut_one_ends_the_list() {
        // 1: varint 150; 2: "ab"; 5: four bytes; 3: eight bytes.
        let mut buf = vec![0x08, 0x96, 0x01, 0x12, 0x02, b'a', b'b', 0x2d, 1, 2, 3, 4];
        buf.extend([0x19, 0, 0, 0, 0, 0, 0, 0, 0]);
        let all: Vec<WireField> = fields(&buf, (0, buf.len())).collect();
        assert_eq!(all.len(), 4);
        assert_eq!((all[0].number, all[0].varint), (1, 150));
        assert_eq!(all[1].payload, (5, 7));
        assert_eq!(last_text(&buf, (0, buf.len()), 2), Some("ab"));
        assert_eq!(last_varint(&buf, (0, buf.len()), 1), Some(150));
        assert_eq!(payload_at(&buf, 3), Some((5, 7)));
        // A length past the end, a group, field number 0: the list stops.
        assert_eq!(fields(&[0x12, 0x05, b'a'], (0, 3)).count(), 0);
        assert_eq!(fields(&[0x0b, 0x08, 0x01], (0, 3)).count(), 0);
        assert_eq!(fields(&[0x00, 0x01], (0, 2)).count(), 0);
        // A span past the input is cut to it.
        assert_eq!(fields(&buf, (0, 1000)).count(), 4);
    }
}
