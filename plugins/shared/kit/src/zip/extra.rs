//! Extra fields: the `(id, body)` blocks that must tile a header's extra field, and the values
//! a zip64 block holds for the 32-bit fields that defer to it (APPNOTE 4.5.3).

use super::Fields;

/// Why an extra field does not split into blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraError {
    /// Fewer than four bytes are left for a block's id and length.
    EndsInBlockHeader,
    /// Block `id` declares `len` bytes, past the end of the field.
    RunsPast {
        /// The block's id.
        id: u16,
        /// Its declared length.
        len: u16,
    },
}

/// The `(id, body)` blocks of `extra`, in order, which must tile it exactly: an error ends
/// the iteration. Repeated or unknown ids are the caller's to judge, as each block comes (or
/// after all of them split: `.collect::<Result<Vec<_>, _>>()`).
pub fn blocks(extra: &[u8]) -> Blocks<'_> {
    Blocks { rest: extra }
}

/// The iterator [`blocks`] returns.
#[derive(Debug, Clone)]
pub struct Blocks<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Blocks<'a> {
    type Item = Result<(u16, &'a [u8]), ExtraError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let rest = std::mem::take(&mut self.rest);
        if rest.len() < 4 {
            return Some(Err(ExtraError::EndsInBlockHeader));
        }
        let mut f = Fields::new(rest);
        let (id, len) = (f.u16(), f.u16());
        let end = 4 + usize::from(len);
        let Some(body) = rest.get(4..end) else {
            return Some(Err(ExtraError::RunsPast { id, len }));
        };
        self.rest = rest.get(end..).unwrap_or_default();
        Some(Ok((id, body)))
    }
}

/// Why a zip64 block does not give the values its header defers to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zip64Error {
    /// Some fields are saturated but there is no zip64 block.
    Missing,
    /// The block holds `have` bytes where the saturated fields need `want`.
    Length {
        /// Its length.
        have: usize,
        /// Eight bytes per saturated field.
        want: usize,
    },
}

/// The values a zip64 block (`body`, if the header has one) gives for the fields marked
/// `saturated`, in the order the format gives them (uncompressed size, compressed size, local
/// header offset): exactly eight bytes for each saturated field, and none for the others. A
/// field that is not saturated gets `None`.
pub fn zip64_values(
    body: Option<&[u8]>,
    saturated: [bool; 3],
) -> Result<[Option<u64>; 3], Zip64Error> {
    let want = 8 * saturated.iter().filter(|&&s| s).count();
    let Some(body) = body else {
        return if want > 0 {
            Err(Zip64Error::Missing)
        } else {
            Ok([None; 3])
        };
    };
    if body.len() != want {
        return Err(Zip64Error::Length {
            have: body.len(),
            want,
        });
    }
    let mut f = Fields::new(body);
    let mut out = [None; 3];
    for (slot, s) in out.iter_mut().zip(saturated) {
        if s {
            *slot = Some(f.u64());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_tile_the_field() {
        let extra = [1, 0, 2, 0, 9, 9, 0x46, 0x42, 0, 0];
        fn all(e: &[u8]) -> Result<Vec<(u16, &[u8])>, ExtraError> {
            blocks(e).collect()
        }
        assert_eq!(
            all(&extra).unwrap(),
            vec![(1, &[9u8, 9][..]), (0x4246, &[][..])]
        );
        assert_eq!(all(&extra[..3]), Err(ExtraError::EndsInBlockHeader));
        assert_eq!(
            all(&extra[..5]),
            Err(ExtraError::RunsPast { id: 1, len: 2 })
        );
        assert_eq!(all(&[]).unwrap(), vec![]);
        // The blocks before a bad one come first, then the error, then nothing.
        let mut it = blocks(&extra[..9]);
        assert_eq!(it.next(), Some(Ok((1, &[9u8, 9][..]))));
        assert_eq!(it.next(), Some(Err(ExtraError::EndsInBlockHeader)));
        assert_eq!(it.next(), None);
    }

    #[test]
    fn zip64_gives_the_saturated_fields_in_order() {
        let body: Vec<u8> = [7u64, 8].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            zip64_values(Some(&body), [true, false, true]),
            Ok([Some(7), None, Some(8)])
        );
        assert_eq!(
            zip64_values(Some(&body), [true, false, false]),
            Err(Zip64Error::Length { have: 16, want: 8 })
        );
        assert_eq!(
            zip64_values(None, [false, true, false]),
            Err(Zip64Error::Missing)
        );
        assert_eq!(zip64_values(None, [false; 3]), Ok([None; 3]));
    }
}
