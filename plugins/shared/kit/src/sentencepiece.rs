//! SentencePiece models (`tokenizer.model`, `spiece.model`, `sentencepiece.bpe.model`, …): the
//! vocabulary file of Llama, Mistral, T5, XLM-R and most other models whose tokenizer
//! transformers' slow tokenizers and `tokenizers`' converters load with the `sentencepiece`
//! library or the protobuf module (`SentencePieceProcessor.Load`, `sentencepiece_model_pb2`).
//! Either parses the file as a `ModelProto` message: data, nothing in it runs.
//!
//! A file is judged data only when the whole of it is the message `spm_train` writes
//! (sentencepiece's `src/sentencepiece_model.proto`, read at v0.2.1): a sequence of the
//! top-level fields `pieces` (1), `trainer_spec` (2), `normalizer_spec` (3), `self_test_data`
//! (4) and `denormalizer_spec` (5), each length-delimited, with at least one piece; each piece
//! only `piece` (1, UTF-8 text, not empty), `score` (2, a float) and `type` (3, one of the six
//! types: NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE); and each spec a sequence of
//! well-formed fields to its last byte. The specs' own fields are not pinned (their set grows
//! with each sentencepiece release, and a protobuf reader skips a field it does not know) and
//! their length-delimited values are not walked (strings and bytes cannot be told from
//! messages without the schema); everything else (a field outside that shape, a truncated or
//! trailing byte, a piece that is not UTF-8) is a LEAD with its byte offset. One pass, no
//! recursion, nothing allocated.

use crate::protobuf::read_varint;

/// The file names transformers' slow tokenizers give their SentencePiece models
/// (`VOCAB_FILES_NAMES` of the Llama, T5, XLNet, ALBERT, XLM-RoBERTa, CamemBERT, DeBERTa-v2,
/// BigBird and other tokenizers; Marian's `source.spm`/`target.spm` by extension).
pub const NAMES: &[&str] = &[
    "tokenizer.model",
    "spiece.model",
    "sentencepiece.model",
    "sentencepiece.bpe.model",
    "spm.model",
];

/// Largest file judged here (the largest real vocabularies are a few MiB).
pub const MAX_SIZE: u64 = 64 << 20;

/// The name of each `ModelProto` top-level field.
const TOP_LEVEL: [&str; 5] = [
    "pieces",
    "trainer_spec",
    "normalizer_spec",
    "self_test_data",
    "denormalizer_spec",
];

/// What a well-formed model holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Model {
    /// The number of pieces.
    pub pieces: u64,
    /// Whether a `trainer_spec` is present.
    pub trainer_spec: bool,
}

/// Why a file is not the `ModelProto` sentencepiece writes: the byte offset and what is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAModel {
    /// Where.
    pub offset: usize,
    /// What.
    pub what: String,
}

impl std::fmt::Display for NotAModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.what)
    }
}

fn not(offset: usize, what: impl Into<String>) -> NotAModel {
    NotAModel {
        offset,
        what: what.into(),
    }
}

/// One field's tag and where its value lies.
struct Tag {
    number: u64,
    wire: u8,
    at: usize,
}

/// Reads the tag at `*at` (before `end`).
fn tag(buf: &[u8], at: &mut usize, end: usize) -> Result<Tag, NotAModel> {
    let start = *at;
    let key = read_varint(buf, at, end).ok_or_else(|| not(start, "a truncated field tag"))?;
    let number = key >> 3;
    if number == 0 {
        return Err(not(start, "field number 0, which protobuf never writes"));
    }
    Ok(Tag {
        number,
        wire: (key & 7) as u8,
        at: start,
    })
}

/// The end of the length-delimited value at `*at`, which must lie before `end`.
fn length_delimited(buf: &[u8], at: &mut usize, end: usize) -> Result<usize, NotAModel> {
    let start = *at;
    let len = read_varint(buf, at, end).ok_or_else(|| not(start, "a truncated length"))?;
    let len = usize::try_from(len).map_err(|_| not(start, "a length past the file"))?;
    let value_end = at.checked_add(len).filter(|&e| e <= end).ok_or_else(|| {
        not(
            start,
            format!("a length of {len} bytes past its message's end"),
        )
    })?;
    Ok(value_end)
}

/// Skips one field's value of wire type `t.wire` at `*at`.
fn skip(buf: &[u8], at: &mut usize, end: usize, t: &Tag) -> Result<(), NotAModel> {
    match t.wire {
        0 => read_varint(buf, at, end)
            .map(|_| ())
            .ok_or_else(|| not(t.at, "a truncated varint")),
        1 | 5 => {
            let width = if t.wire == 1 { 8 } else { 4 };
            *at = at
                .checked_add(width)
                .filter(|&e| e <= end)
                .ok_or_else(|| not(t.at, "a truncated fixed-width value"))?;
            Ok(())
        }
        2 => {
            *at = length_delimited(buf, at, end)?;
            Ok(())
        }
        _ => Err(not(
            t.at,
            format!(
                "wire type {} (a group or no type), which sentencepiece never writes",
                t.wire
            ),
        )),
    }
}

/// Walks `buf[start..end]` as a sequence of well-formed fields.
fn message(buf: &[u8], start: usize, end: usize) -> Result<(), NotAModel> {
    let mut at = start;
    while at < end {
        let t = tag(buf, &mut at, end)?;
        skip(buf, &mut at, end, &t)?;
    }
    Ok(())
}

/// Walks one `SentencePiece` message, `buf[start..end]`.
fn piece(buf: &[u8], start: usize, end: usize) -> Result<(), NotAModel> {
    let mut at = start;
    let mut text = false;
    while at < end {
        let t = tag(buf, &mut at, end)?;
        match (t.number, t.wire) {
            (1, 2) => {
                let value_end = length_delimited(buf, &mut at, end)?;
                let bytes = &buf[at..value_end];
                if bytes.is_empty() {
                    return Err(not(t.at, "an empty piece, which sentencepiece refuses"));
                }
                if std::str::from_utf8(bytes).is_err() {
                    return Err(not(t.at, "a piece that is not UTF-8 text"));
                }
                text = true;
                at = value_end;
            }
            (2, 5) => skip(buf, &mut at, end, &t)?,
            (3, 0) => {
                let v = read_varint(buf, &mut at, end)
                    .ok_or_else(|| not(t.at, "a truncated piece type"))?;
                if !(1..=6).contains(&v) {
                    return Err(not(
                        t.at,
                        format!("piece type {v}, which is none of the six sentencepiece defines"),
                    ));
                }
            }
            (n, w) => {
                return Err(not(
                    t.at,
                    format!(
                    "field {n} (wire type {w}) in a piece, which holds only piece, score and type"
                ),
                ))
            }
        }
    }
    if !text {
        return Err(not(start, "a piece without its text"));
    }
    Ok(())
}

/// Reads `buf` as a sentencepiece `ModelProto`.
pub fn read(buf: &[u8]) -> Result<Model, NotAModel> {
    let end = buf.len();
    let mut at = 0;
    let mut model = Model {
        pieces: 0,
        trainer_spec: false,
    };
    while at < end {
        let t = tag(buf, &mut at, end)?;
        let known = usize::try_from(t.number)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| TOP_LEVEL.get(i));
        let Some(name) = known.filter(|_| t.wire == 2) else {
            return Err(not(
                t.at,
                format!(
                    "field {} (wire type {}), which a ModelProto does not hold",
                    t.number, t.wire
                ),
            ));
        };
        let value_end = length_delimited(buf, &mut at, end)?;
        match t.number {
            1 => {
                piece(buf, at, value_end)?;
                model.pieces += 1;
            }
            _ => {
                message(buf, at, value_end).map_err(|e| NotAModel {
                    offset: e.offset,
                    what: format!("in {name}: {}", e.what),
                })?;
                model.trainer_spec |= t.number == 2;
            }
        }
        at = value_end;
    }
    if model.pieces == 0 {
        return Err(not(
            0,
            "no pieces: sentencepiece refuses a model without a vocabulary",
        ));
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protobuf::write_varint;

    fn field(number: u64, payload: &[u8], out: &mut Vec<u8>) {
        write_varint(number << 3 | 2, out);
        write_varint(payload.len() as u64, out);
        out.extend_from_slice(payload);
    }

    fn piece_bytes(text: &[u8], kind: u64) -> Vec<u8> {
        let mut p = Vec::new();
        field(1, text, &mut p);
        p.push(0x15); // score, fixed32
        p.extend_from_slice(&0.5f32.to_le_bytes());
        p.push(0x18);
        write_varint(kind, &mut p);
        p
    }

    fn model(pieces: &[Vec<u8>], spec: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        for p in pieces {
            field(1, p, &mut m);
        }
        field(2, spec, &mut m);
        m
    }

    #[test]
    fn the_shape_sentencepiece_writes_is_read() {
        let mut spec = Vec::new();
        field(2, b"model_prefix", &mut spec);
        spec.extend_from_slice(&[0x20, 0x60]); // vocab_size 96
        let m = model(
            &[piece_bytes(b"<unk>", 2), piece_bytes("▁the".as_bytes(), 1)],
            &spec,
        );
        assert_eq!(
            read(&m),
            Ok(Model {
                pieces: 2,
                trainer_spec: true
            })
        );
    }

    #[test]
    fn anything_else_is_refused_with_its_offset() {
        let good = model(&[piece_bytes(b"a", 1)], b"");
        let mut trailing = good.clone();
        trailing.push(0x0a);
        let mut unknown = good.clone();
        field(9, b"x", &mut unknown);
        for (what, bytes, offset) in [
            ("trailing", trailing.clone(), good.len() + 1),
            ("unknown", unknown, good.len()),
            ("bad utf-8", model(&[piece_bytes(b"\xff", 1)], b""), 2),
            ("bad type", model(&[piece_bytes(b"a", 9)], b""), 10),
            ("empty piece", model(&[piece_bytes(b"", 1)], b""), 2),
            ("no pieces", model(&[], b""), 0),
            ("hello", b"\x0a\x05hello".to_vec(), 2),
        ] {
            let e = read(&bytes).expect_err(what);
            assert_eq!(e.offset, offset, "{what}: {e}");
        }
    }

    /// The models sentencepiece 0.2.1 wrote (fixtures/sentencepiece) are read, and every
    /// truncation and thousands of byte flips of them return without panicking, consistently
    /// (the fuzz target `sentencepiece` runs the same check on any bytes).
    #[test]
    fn real_models_are_read_and_their_mutations_return() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../fixtures/sentencepiece");
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for (name, pieces) in [
            ("unigram.model", 48),
            ("bpe.model", 300),
            ("char.model", 30),
        ] {
            let good = std::fs::read(dir.join(name)).unwrap();
            assert_eq!(read(&good).map(|m| m.pieces), Ok(pieces), "{name}");
            for cut in (0..good.len()).step_by(7) {
                if let Ok(m) = read(&good[..cut]) {
                    assert!(m.pieces >= 1);
                }
            }
            for _ in 0..3_000 {
                let mut m = good.clone();
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let at = (seed % m.len() as u64) as usize;
                m[at] ^= (seed >> 32) as u8 | 1;
                match read(&m) {
                    Ok(model) => assert!(model.pieces >= 1),
                    Err(e) => assert!(e.offset <= m.len()),
                }
            }
        }
    }

    #[test]
    fn a_flood_of_pieces_is_one_pass() {
        let pieces: Vec<Vec<u8>> = (0..200_000).map(|_| piece_bytes(b"ab", 1)).collect();
        let m = model(&pieces, b"");
        let t = std::time::Instant::now();
        assert_eq!(read(&m).unwrap().pieces, 200_000);
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
    }
}
