//! A `.pdiparams`: the combined parameters `save_combine` writes next to an inference program,
//! the serialized dense tensors one after another with nothing between them or after the last
//! (`load_combine` refuses trailing bytes: paddle/fluid/operators/load_combine_op.h,
//! "You are not allowed to load partial data via load_combine_op"). Each tensor is, as
//! `SerializeToStream` (paddle/phi/core/framework/dense_tensor_serialize.cc at v3.3.1) writes
//! it and `DeserializeFromStream` reads it:
//!
//! * `u32` version, 0 (the only one Paddle reads);
//! * `u64` LoD levels, and for each a `u64` byte length and that many bytes of `u64` offsets;
//! * `u32` version, 0 (`TensorToStream`);
//! * `i32` length, then that many bytes of a `VarType.TensorDesc` protobuf (element type,
//!   dimensions);
//! * the elements' bytes, little-endian, row-major: the dimensions' product times the type's
//!   width.
//!
//! Every length is checked against what remains before it is used; every tensor is located
//! as a byte range of the file. The file names no tensor: the program beside it does (its
//! persistable tensors, sorted), and read alone the tensors are named by their index.

use crate::proto::TensorDesc;
use crate::schema::{MESSAGES, VAR_TYPE_TENSOR_DESC};
use crate::wire::decode;
use socair_plugin_api::{ByteOrder, ByteRange, OpenedFile, RowStatus};
use socair_plugin_kit::bounded::thousands;
use socair_plugin_kit::protobuf::head;

/// The format name.
pub const FORMAT: &str = "paddle-params";

/// Most LoD levels accepted (Paddle stores a level per nesting of sequences; parameters have
/// none).
const MAX_LOD_LEVELS: u64 = 32;
/// Most dimensions accepted (phi's `DDim` holds at most 9).
const MAX_RANK: usize = 9;
/// Longest `TensorDesc` accepted: an element type and nine dimensions take at most 101 bytes.
const MAX_DESC: u32 = 4096;

/// One tensor, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// The element type's code (`VarType.Type`).
    pub data_type: i32,
    /// The dimensions.
    pub dims: Vec<u64>,
    /// Where its bytes start.
    pub offset: u64,
    /// How many bytes.
    pub len: u64,
}

/// Why a `.pdiparams` is refused: the tensor and the byte where it goes wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tensor {index} (byte {offset}): {what}")]
pub struct ParamsError {
    /// The tensor's index in the file.
    pub index: usize,
    /// The byte offset.
    pub offset: u64,
    /// What is wrong.
    pub what: String,
}

/// An element type: Paddle's name, its width, and socair's element type where it has one.
pub fn dtype(code: i32) -> Option<(&'static str, u64, Option<&'static str>)> {
    Some(match code {
        0 => ("BOOL", 1, Some("BOOL")),
        1 => ("INT16", 2, Some("I16")),
        2 => ("INT32", 4, Some("I32")),
        3 => ("INT64", 8, Some("I64")),
        4 => ("FP16", 2, Some("F16")),
        5 => ("FP32", 4, Some("F32")),
        6 => ("FP64", 8, Some("F64")),
        20 => ("UINT8", 1, Some("U8")),
        21 => ("INT8", 1, Some("I8")),
        22 => ("BF16", 2, Some("BF16")),
        // Two binary32 values, real first.
        23 => ("COMPLEX64", 8, Some("C64")),
        24 => ("COMPLEX128", 16, None),
        32 => ("FP8_E4M3FN", 1, Some("F8_E4M3")),
        33 => ("FP8_E5M2", 1, Some("F8_E5M2")),
        36 => ("UINT16", 2, Some("U16")),
        37 => ("UINT32", 4, Some("U32")),
        38 => ("UINT64", 8, Some("U64")),
        _ => return None,
    })
}

/// Reads `buf.len()` bytes at an offset of the file.
pub type ReadAt<'r> = &'r mut dyn FnMut(u64, &mut [u8]) -> Result<(), String>;

struct Cursor<'r> {
    len: u64,
    at: u64,
    index: usize,
    read: ReadAt<'r>,
}

impl Cursor<'_> {
    fn err(&self, at: u64, what: impl Into<String>) -> ParamsError {
        ParamsError {
            index: self.index,
            offset: at,
            what: what.into(),
        }
    }

    /// Steps over `n` bytes, refusing what runs past the end.
    fn skip(&mut self, n: u64, what: &str) -> Result<u64, ParamsError> {
        let left = self.len - self.at;
        if n > left {
            return Err(self.err(
                self.at,
                format!("{what} needs {n} bytes but only {left} remain: it runs past the end of the file"),
            ));
        }
        let start = self.at;
        self.at += n;
        Ok(start)
    }

    /// Reads `n` bytes (a header's, at most [`MAX_DESC`]).
    fn take(&mut self, n: u64, what: &str) -> Result<Vec<u8>, ParamsError> {
        let start = self.skip(n, what)?;
        let mut buf = vec![0u8; n as usize];
        (self.read)(start, &mut buf)
            .map_err(|e| self.err(start, format!("reading {what}: {e}")))?;
        Ok(buf)
    }

    fn u32(&mut self, what: &str) -> Result<u32, ParamsError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, ParamsError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(&b);
        Ok(u64::from_le_bytes(a))
    }
}

/// Every tensor of a `.pdiparams` held in `data`, read to its end.
pub fn parse(data: &[u8]) -> Result<Vec<Tensor>, ParamsError> {
    parse_at(data.len() as u64, &mut slice_reader(data))
}

/// A [`ReadAt`] over bytes in memory.
pub fn slice_reader(data: &[u8]) -> impl FnMut(u64, &mut [u8]) -> Result<(), String> + '_ {
    move |at, buf| {
        let at = usize::try_from(at).map_err(|_| "offset past memory".to_string())?;
        let src = at
            .checked_add(buf.len())
            .and_then(|end| data.get(at..end))
            .ok_or("read past the end")?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// Every tensor of a `.pdiparams` of `len` bytes, reading only the headers through `read`
/// (the elements are located, never read): to the end of the file.
pub fn parse_at(len: u64, read: ReadAt<'_>) -> Result<Vec<Tensor>, ParamsError> {
    let mut c = Cursor {
        len,
        at: 0,
        index: 0,
        read,
    };
    let mut out = Vec::new();
    while c.at < len {
        out.push(tensor(&mut c)?);
        c.index += 1;
    }
    if out.is_empty() {
        return Err(c.err(0, "the file is empty: it holds no tensor"));
    }
    Ok(out)
}

fn tensor(c: &mut Cursor<'_>) -> Result<Tensor, ParamsError> {
    let at = c.at;
    let version = c.u32("the tensor's version")?;
    if version != 0 {
        return Err(c.err(
            at,
            format!("version {version}; Paddle reads only version 0"),
        ));
    }
    let at = c.at;
    let levels = c.u64("the LoD level count")?;
    if levels > MAX_LOD_LEVELS {
        return Err(c.err(
            at,
            format!("{levels} LoD levels; this reader accepts at most {MAX_LOD_LEVELS}"),
        ));
    }
    for level in 0..levels {
        let at = c.at;
        let n = c.u64("a LoD level's length")?;
        if n % 8 != 0 {
            return Err(c.err(
                at,
                format!("LoD level {level} holds {n} bytes, not a whole number of 8-byte offsets"),
            ));
        }
        c.skip(n, "a LoD level")?;
    }
    let at = c.at;
    let version = c.u32("the tensor data's version")?;
    if version != 0 {
        return Err(c.err(
            at,
            format!("tensor data version {version}; Paddle reads only version 0"),
        ));
    }
    let at = c.at;
    let desc_len = c.u32("the TensorDesc's length")?;
    if desc_len as i32 <= 0 || desc_len > MAX_DESC {
        return Err(c.err(
            at,
            format!(
                "a TensorDesc of {} bytes; one is 1 to {MAX_DESC} bytes",
                desc_len as i32
            ),
        ));
    }
    let desc_at = c.at;
    let bytes = c.take(u64::from(desc_len), "the TensorDesc")?;
    let (desc, _walked): (TensorDesc, _) = decode(&bytes, VAR_TYPE_TENSOR_DESC, "tensor_desc")
        .map_err(|e| c.err(desc_at, format!("its TensorDesc (at byte {desc_at}): {e}")))?;
    let code = desc.data_type.ok_or_else(|| {
        c.err(
            desc_at,
            "its TensorDesc has no data_type (a required field)",
        )
    })?;
    let (name, width, _) = dtype(code).ok_or_else(|| {
        c.err(
            desc_at,
            format!("element type {code} is not one a parameter holds"),
        )
    })?;
    if desc.dims.len() > MAX_RANK {
        return Err(c.err(
            desc_at,
            format!(
                "{} dimensions; Paddle's tensors have at most {MAX_RANK}",
                desc.dims.len()
            ),
        ));
    }
    let mut dims = Vec::with_capacity(desc.dims.len());
    let mut numel = 1u64;
    for &d in &desc.dims {
        let d = u64::try_from(d).map_err(|_| {
            c.err(
                desc_at,
                format!("dimension {d} is negative: a stored tensor's shape is known"),
            )
        })?;
        numel = numel
            .checked_mul(d)
            .ok_or_else(|| c.err(desc_at, "its element count overflows 64 bits"))?;
        dims.push(d);
    }
    let len = numel
        .checked_mul(width)
        .ok_or_else(|| c.err(desc_at, "its byte length overflows 64 bits"))?;
    let offset = c.skip(len, &format!("its {} {name} elements", thousands(numel)))?;
    Ok(Tensor {
        data_type: code,
        dims,
        offset,
        len,
    })
}

/// Whether the head of a file is a `.pdiparams`' first tensor: both versions 0, a TensorDesc
/// the head holds whole that parses with a known element type, and data within the file.
pub fn looks_like_params(head: &[u8], file_len: u64) -> bool {
    let mut read = slice_reader(head);
    let mut c = Cursor {
        len: head.len() as u64,
        at: 0,
        index: 0,
        read: &mut read,
    };
    let mut probe = || -> Option<()> {
        (c.u32("").ok()? == 0).then_some(())?;
        let levels = c.u64("").ok()?;
        (levels <= 4).then_some(())?;
        for _ in 0..levels {
            let n = c.u64("").ok()?;
            c.take(n, "").ok()?;
        }
        (c.u32("").ok()? == 0).then_some(())?;
        let n = c.u32("").ok()?;
        (n as i32 > 0).then_some(())?;
        // The TensorDesc as far as the head holds it: its first field is the element type
        // (field 1, written first), a type a parameter holds. A length past the end of the
        // file is claimed here and refused by the read, naming the byte.
        let left = c.len - c.at;
        let desc = c.take(u64::from(n).min(left), "").ok()?;
        (desc.first() == Some(&0x08)).then_some(())?;
        let mut at = 1;
        let code = socair_plugin_kit::protobuf::read_varint(&desc, &mut at, desc.len())?;
        dtype(i32::try_from(code).ok()?)?;
        if u64::from(n) <= left {
            head::fields(&desc, desc.len() as u64, MESSAGES, VAR_TYPE_TENSOR_DESC)?;
        }
        (c.at <= file_len).then_some(())
    };
    probe().is_some()
}

/// Reads a `.pdiparams`, naming its tensors by `names` when given (the program's parameters)
/// and by their index otherwise.
pub fn read(len: u64, read: ReadAt<'_>, names: Option<&[String]>) -> OpenedFile {
    let tensors = match parse_at(len, read) {
        Ok(t) => t,
        Err(e) => {
            return socair_plugin_kit::report::refused(
                FORMAT,
                "not a sound PaddlePaddle parameters file: Paddle's load_combine would refuse it or read other tensors",
                e.to_string(),
                socair_plugin_api::Finding::new(
                    socair_plugin_api::Severity::Fail,
                    format!("tensor {} (byte {})", e.index, e.offset),
                    e.what,
                ),
            )
        }
    };
    let mut out = crate::outcome::read(FORMAT, len);
    let n = tensors.len() as u64;
    for (i, t) in tensors.into_iter().enumerate() {
        let Some((dtype_name, _, element)) = dtype(t.data_type) else {
            continue;
        };
        let name = names
            .and_then(|n| n.get(i).cloned())
            .unwrap_or_else(|| i.to_string());
        out.describe(socair_plugin_kit::report::tensor_in_file(
            &name,
            dtype_name,
            element,
            t.dims,
            vec![ByteRange {
                offset: t.offset,
                len: t.len,
            }],
            ByteOrder::Little,
        ));
    }
    out.finish(|status| match status {
        RowStatus::Pass => format!(
            "PaddlePaddle parameters: {} dense tensors, each read whole to the end of the file",
            thousands(n)
        ),
        _ => "PaddlePaddle parameters with findings".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(desc: &[u8], data: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend(0u32.to_le_bytes());
        f.extend((desc.len() as u32).to_le_bytes());
        f.extend(desc);
        f.extend(data);
        f
    }

    #[test]
    fn reads_tensors_and_refuses_what_runs_past_the_end() {
        // FP32, dims [3].
        let f = one(&[0x08, 0x05, 0x10, 0x03], &[0; 12]);
        let mut two = f.clone();
        two.extend(&f);
        let t = parse(&two).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[1].offset, t[1].len, t[1].dims.clone()),
            (f.len() as u64 + 24, 12, vec![3])
        );
        assert!(looks_like_params(&two, two.len() as u64));
        let e = parse(&f[..f.len() - 1]).unwrap_err();
        assert!(e.what.contains("past the end"), "{e}");
        // A negative dimension, an unknown type, a trailing partial tensor.
        assert!(parse(&one(&[0x08, 0x05, 0x10, 0x7f], &[])).is_err());
        let neg = one(
            &[
                0x08, 0x05, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
            &[],
        );
        assert!(parse(&neg).unwrap_err().what.contains("negative"));
        assert!(parse(&one(&[0x08, 0x63], &[]))
            .unwrap_err()
            .what
            .contains("element type"));
        let mut trailing = f.clone();
        trailing.push(0);
        assert!(parse(&trailing).is_err());
        assert!(!looks_like_params(&[0u8; 64], 64));
    }
}
