//! llama2.c checkpoints (`.bin`): the format logic, pure functions over [`ReadAt`].
//!
//! Mirrored from karpathy/llama2.c at commit 350e04fe35433e6d2941dce5a1f53308f87058eb:
//! `export.py` writes version 0 (`legacy_export`) and version 1 (`version1_export`), `run.c`
//! reads version 0 (`read_checkpoint`, `memory_map_weights`), `model.py` names the tensors and
//! gives their shapes (an `nn.Linear` weight is `(out, in)`). Every value is a little-endian
//! int32 or float32, as `struct.pack` writes them on the machines llama2.c runs on.

use socair_plugin_api::{Finding, ReadAt, RowStatus, Severity};

/// `version1_export`'s magic, `struct.pack('I', 0x616b3432)` ("ak42").
pub const MAGIC: u32 = 0x616b_3432;
/// The seven int32 params, in the order of `run.c`'s `Config`.
pub const PARAMS: &str = "dim hidden_dim n_layers n_heads n_kv_heads vocab_size seq_len";
/// The most this reader accepts of each: above every published Llama, and low enough that no
/// size overflows and the tensor list stays short (at most 9 × 1024 + 5 tensors). Version 0
/// has no magic: params within these bounds, and a file exactly as long as they imply, are
/// what claims one.
pub const BOUNDS: [i32; 7] = [1 << 16, 1 << 18, 1 << 10, 1 << 10, 1 << 10, 1 << 21, 1 << 20];
/// The order `legacy_export` writes; a per-layer key is one tensor per layer, layer 0 first.
const V0_ORDER: &str = "tok_embeddings.weight attention_norm attention.wq attention.wk \
    attention.wv attention.wo ffn_norm feed_forward.w1 feed_forward.w2 feed_forward.w3 \
    norm.weight freqs_cos freqs_sin";
/// The order `version1_export` writes (no RoPE tables: nothing reads them).
const V1_ORDER: &str = "attention_norm ffn_norm norm.weight tok_embeddings.weight \
    attention.wq attention.wk attention.wv attention.wo feed_forward.w1 feed_forward.w2 \
    feed_forward.w3";

/// One float32 tensor and where its bytes lie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Its name in `model.py`, such as `layers.0.attention.wq.weight`.
    pub name: String,
    /// Its shape, outermost first.
    pub shape: Vec<u64>,
    /// Its first byte in the file.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
}

/// What [`read`] made of a file: its tensors (none unless it was read whole) and the verdict,
/// summary and findings of its `Format and structure` row.
#[derive(Debug)]
pub struct Outcome {
    /// PASS: read whole; FAIL: a file its exporter could not have written; LEAD: version 2.
    pub status: RowStatus,
    /// One sentence for a person.
    pub summary: String,
    /// Each with its place; none for a PASS.
    pub findings: Vec<Finding>,
    /// Every tensor in file order; together they cover every byte after the header.
    pub tensors: Vec<Tensor>,
}

/// A finding of a file its exporter could not have written: a FAIL.
fn finding(place: impl Into<String>, reason: impl Into<String>) -> Finding {
    Finding::new(Severity::Fail, place, reason)
}

/// The version after the magic, when the file starts with the magic.
fn magic_version<S: ReadAt + ?Sized>(src: &S) -> Option<i32> {
    let mut b = [0; 8];
    src.read_exact_at(0, &mut b).ok()?;
    let [m0, m1, m2, m3, v0, v1, v2, v3] = b;
    (u32::from_le_bytes([m0, m1, m2, m3]) == MAGIC).then_some(i32::from_le_bytes([v0, v1, v2, v3]))
}

/// What the params must be for `export.py` to have written them and `run.c` to read them. Each
/// finding names the param's byte (the params start at `base`).
fn check(p: &[i32; 7], base: u64, v0: bool) -> Vec<Finding> {
    let place = |i: u64| format!("header byte {}", base.saturating_add(i.saturating_mul(4)));
    let mut f = Vec::new();
    for (i, ((&v, name), max)) in (0..).zip(p.iter().zip(PARAMS.split(' ')).zip(BOUNDS)) {
        // legacy_export says "not shared" with a negative vocab_size (run.c takes abs()).
        let abs = if v0 && name == "vocab_size" { v.checked_abs() } else { Some(v) };
        if !abs.is_some_and(|a| (1..=max).contains(&a)) {
            f.push(finding(place(i), format!("{name} {v}: must be 1 to {max}")));
        }
    }
    let [dim, _, _, heads, kv, _, _] = *p;
    if !f.is_empty() {
        return f;
    }
    // run.c: head_size = dim / n_heads, and wq holds dim × (n_heads × head_size) floats.
    let head = dim.checked_div(heads).unwrap_or(0);
    if dim.checked_rem(heads) != Some(0) {
        let why = format!("n_heads {heads} does not divide dim {dim} (head_size = dim / n_heads)");
        f.push(finding(place(3), why));
    } else if head.checked_rem(2) != Some(0) {
        // RoPE rotates pairs; export.py writes seq_len × (head_size / 2) floats of each table,
        // run.c skips seq_len × head_size / 2, which differ when both are odd.
        f.push(finding(place(3), format!("head_size {head} (dim / n_heads) is odd")));
    }
    if heads.checked_rem(kv) != Some(0) {
        let why = format!("n_kv_heads {kv} does not divide n_heads {heads} (model.py asserts it)");
        f.push(finding(place(4), why));
    }
    f
}

/// The tensors in file order from `start`, sized in checked arithmetic: none when a size
/// overflows 64 bits (never within [`BOUNDS`]; but no header can make this panic).
fn layout(p: &[i32; 7], version: i32, shared: bool, start: u64) -> Option<Vec<Tensor>> {
    let [dim, hidden, layers, heads, kv, vocab, seq] = p.map(|v| u64::from(v.unsigned_abs()));
    let head = dim.checked_div(heads)?;
    let (q, kv) = (heads.checked_mul(head)?, kv.checked_mul(head)?);
    let shape = |key: &str| match key {
        "tok_embeddings.weight" | "output.weight" => (false, vec![vocab, dim]),
        "norm.weight" => (false, vec![dim]),
        "freqs_cos" | "freqs_sin" => (false, vec![seq, head / 2]),
        "attention_norm" | "ffn_norm" => (true, vec![dim]),
        "attention.wq" => (true, vec![q, dim]),
        "attention.wk" | "attention.wv" => (true, vec![kv, dim]),
        "attention.wo" => (true, vec![dim, q]),
        "feed_forward.w2" => (true, vec![dim, hidden]),
        _ => (true, vec![hidden, dim]), // feed_forward.w1, feed_forward.w3
    };
    let order = if version == 0 { V0_ORDER } else { V1_ORDER };
    let (mut tensors, mut at) = (Vec::new(), start);
    for key in order.split_whitespace().chain((!shared).then_some("output.weight")) {
        let (stacked, shape) = shape(key);
        let len = shape.iter().try_fold(4u64, |n, &d| n.checked_mul(d))?;
        for i in 0..if stacked { layers } else { 1 } {
            let name = if stacked { format!("layers.{i}.{key}.weight") } else { key.to_owned() };
            let offset = at;
            at = at.checked_add(len)?;
            tensors.push(Tensor { name, shape: shape.clone(), offset, len });
        }
    }
    Some(tensors)
}

/// A version 0 or 1 checkpoint of `file_len` bytes, read from its header (28 bytes; 256 for
/// version 1: magic, version, params, a flag byte, zeros): a summary and its tensors, which
/// must end exactly where the file does.
fn checkpoint(
    src: &(impl ReadAt + ?Sized),
    version: i32,
    file_len: u64,
) -> Result<(String, Vec<Tensor>), Vec<Finding>> {
    let (base, start) = if version == 0 { (0, 28) } else { (8, 256) };
    let mut h = vec![0; start];
    if src.read_exact_at(0, &mut h).is_err() {
        let why = format!("the file ends inside the {start}-byte version {version} header");
        return Err(vec![finding(format!("byte {file_len}"), why)]);
    }
    let mut p = [0; 7];
    for (v, b) in p.iter_mut().zip(h.get(base..).unwrap_or_default().chunks_exact(4)) {
        *v = b.try_into().map_or(0, i32::from_le_bytes);
    }
    let mut f = check(&p, base as u64, version == 0);
    let [dim, hidden, layers, heads, kv, vocab, seq] = p;
    let flag = h.get(36).copied().unwrap_or(0);
    if version == 1 && flag > 1 {
        let why = format!("shared_classifier {flag}: version1_export writes 0 or 1");
        f.push(finding("header byte 36", why));
    }
    if let Some((i, b)) = (37u64..).zip(h.iter().skip(37)).find(|(_, &b)| b != 0) {
        let why = format!("padding byte 0x{b:02x}: version1_export pads the header with zeros");
        f.push(finding(format!("header byte {i}"), why));
    }
    if !f.is_empty() {
        return Err(f);
    }
    let (start, shared) = (start as u64, if version == 0 { vocab > 0 } else { flag == 1 });
    let overflow = || vec![finding(format!("byte {start}"), "the sizes overflow 64 bits")];
    let tensors = layout(&p, version, shared, start).ok_or_else(overflow)?;
    let end = |t: &Tensor| t.offset.saturating_add(t.len);
    let (last, total) = tensors.last().map_or(("the header", start), |t| (&t.name, end(t)));
    if let Some(t) = tensors.iter().find(|t| end(t) > file_len) {
        let (a, b, name) = (t.offset, end(t), &t.name);
        let why =
            format!("the file ends inside {name} (bytes {a}..{b}) of a {total}-byte checkpoint");
        return Err(vec![finding(format!("byte {file_len}"), why)]);
    }
    if total < file_len {
        let extra = file_len.saturating_sub(total);
        let why = format!("{extra} bytes after the last tensor ({last}), which run.c never reads");
        return Err(vec![finding(format!("byte {total}"), why)]);
    }
    let writer = if version == 0 { "legacy_export" } else { "version1_export" };
    let classifier = match shared {
        true => "classifier shared with tok_embeddings.weight (no output.weight)",
        false => "classifier output.weight",
    };
    let summary = format!(
        "llama2.c version {version} checkpoint ({writer}): dim {dim}, hidden_dim {hidden}, \
         n_layers {layers}, n_heads {heads}, n_kv_heads {kv}, vocab_size {}, seq_len {seq}; \
         {classifier}; {} float32 tensors cover every byte after the header",
        vocab.unsigned_abs(),
        tensors.len()
    );
    Ok((summary, tensors))
}

/// Whether a file is a llama2.c checkpoint, from its first bytes and its length: versions 1
/// and 2 by their magic and version; version 0 only when it is read whole without a finding.
pub fn detect(head: &[u8], file_len: u64) -> bool {
    match magic_version(head) {
        Some(version) => version == 1 || version == 2,
        None => checkpoint(head, 0, file_len).is_ok(),
    }
}

/// Reads the file's header and lays out its tensors; reads no tensor data.
pub fn read(src: &(impl ReadAt + ?Sized)) -> Outcome {
    let version = magic_version(src).unwrap_or(0);
    let (status, reason) = match version {
        0 | 1 => match checkpoint(src, version, src.size()) {
            Ok((summary, tensors)) => {
                return Outcome { status: RowStatus::Pass, summary, findings: vec![], tensors };
            }
            Err(findings) => {
                let summary = format!("llama2.c version {version} checkpoint, malformed: not read");
                return Outcome { status: RowStatus::Fail, summary, findings, tensors: vec![] };
            }
        },
        // version2_export: int8 Q8_0 weights and their scales, which runq.c reads.
        2 => (RowStatus::Lead, "int8 Q8_0 (runq.c's): this plugin reads versions 0 and 1 only"),
        _ => (RowStatus::Fail, "export.py writes versions 0, 1 and 2 only"),
    };
    let summary = format!("llama2.c version {version} checkpoint: nothing in it was checked");
    let findings = vec![Finding::new(
        status.finding_severity(),
        "header byte 4",
        format!("version {version}: {reason}"),
    )];
    Outcome { status, summary, findings, tensors: vec![] }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub(crate) mod tests {
    use super::*;

    /// dim 8, hidden_dim 16, 2 layers, 2 heads, 1 kv head, vocab 32, seq_len 4; and its floats
    /// in version 0, shared: embedding 256, two layers of 592, norm 8, RoPE tables 2 × 8.
    pub const P: [i32; 7] = [8, 16, 2, 2, 1, 32, 4];
    pub const FLOATS: usize = 1464;

    /// A checkpoint of `floats` zeros after its header: version 0, or 1 with this flag byte.
    pub fn file(version: i32, p: &[i32; 7], flag: u8, floats: usize) -> Vec<u8> {
        let mut f = [MAGIC, version as u32].map(u32::to_le_bytes).concat();
        f.truncate(if version == 0 { 0 } else { 8 });
        f.extend(p.iter().flat_map(|v| v.to_le_bytes()));
        if version > 0 {
            f.push(flag);
            f.resize(256, 0);
        }
        f.resize(f.len() + 4 * floats, 0);
        f
    }

    /// Each tensor as `name shape offset`, or each finding as `place: reason`.
    fn read_(file: &[u8]) -> Vec<String> {
        let o = read(file);
        let f = o.findings.iter().map(|f| format!("{}: {}", f.place, f.reason));
        f.chain(o.tensors.iter().map(|t| format!("{} {:?} {}", t.name, t.shape, t.offset)))
            .collect()
    }

    #[test]
    fn version_0_is_laid_out_as_run_c_maps_it() {
        let v0 = read_(&file(0, &P, 0, FLOATS));
        assert_eq!(v0.len(), 1 + 2 * 9 + 3);
        assert_eq!(v0[0], "tok_embeddings.weight [32, 8] 28");
        assert_eq!(v0[2], "layers.1.attention_norm.weight [8] 1084");
        assert_eq!(v0[5], "layers.0.attention.wk.weight [4, 8] 1628", "kv_dim = 1 × head_size");
        assert_eq!(v0[21], "freqs_sin [4, 2] 5852");
        let o = read(file(0, &P, 0, FLOATS).as_slice());
        assert!(o.summary.starts_with("llama2.c version 0 checkpoint (legacy_export): dim 8,"));
        let unshared = file(0, &[8, 16, 2, 2, 1, -32, 4], 0, FLOATS + 256);
        assert_eq!(read_(&unshared)[22], "output.weight [32, 8] 5884");
        let long = read_(&[unshared.as_slice(), &[0]].concat()).join("");
        assert!(long.starts_with("byte 6908: 1 bytes after the last tensor (output.weight)"));
    }

    #[test]
    fn version_0_is_claimed_only_when_every_byte_fits() {
        let claims = |p: &[i32; 7], n: usize| detect(&file(0, p, 0, n), 28 + 4 * n as u64);
        let v0 = file(0, &P, 0, FLOATS);
        assert!(claims(&P, FLOATS) && detect(&v0[..28], v0.len() as u64));
        assert!(!detect(&v0, v0.len() as u64 - 1) && !detect(&v0, v0.len() as u64 + 4));
        assert!(!detect(&v0[..27], 27) && !claims(&[1 << 17, 16, 2, 2, 1, 32, 4], 0));
        for (i, v) in [(0, 0), (0, 6), (1, -1), (2, 0), (3, 3), (4, 2), (5, 0), (5, i32::MIN)] {
            let mut p = P;
            p[i] = v;
            assert!(!claims(&p, FLOATS) && !claims(&p, FLOATS + 256), "{p:?}");
        }
        let heads = |dim, heads| read_(&file(0, &[dim, 16, 2, heads, 1, 32, 4], 0, 0)).join("");
        assert!(heads(8, 3).starts_with("header byte 12: n_heads 3 does not divide dim 8"));
        assert_eq!(heads(6, 2), "header byte 12: head_size 3 (dim / n_heads) is odd");
        assert!(!claims(&[i32::MAX; 7], 10));
        assert_eq!(layout(&[i32::MAX; 7], 0, false, 28), None, "an overflow is none, not a panic");
    }

    #[test]
    fn version_1_is_claimed_by_its_magic_and_refused_with_places() {
        let v1 = file(1, &P, 1, FLOATS - 16);
        let ts = read_(&v1);
        assert_eq!((ts.len(), ts[0].as_str()), (20, "layers.0.attention_norm.weight [8] 256"));
        assert_eq!(ts[5], "tok_embeddings.weight [32, 8] 416");
        assert_eq!(read_(&file(1, &P, 0, FLOATS - 16 + 256))[20], "output.weight [32, 8] 6048");
        let poke = |at: usize, b: u8| read_(&[&v1[..at], &[b], &v1[at + 1..]].concat()).join("; ");
        assert!(poke(36, 2).starts_with("header byte 36: shared_classifier 2: "));
        assert!(poke(255, 7).starts_with("header byte 255: padding byte 0x07: "));
        assert!(poke(24, 3).starts_with("header byte 24: n_kv_heads 3 does not divide n_heads 2"));
        assert_eq!(poke(28, 0), "header byte 28: vocab_size 0: must be 1 to 2097152");
        let cut = |n: usize| read_(&v1[..n]).join("");
        assert_eq!(cut(100), "byte 100: the file ends inside the 256-byte version 1 header");
        assert!(
            cut(300).starts_with("byte 300: the file ends inside layers.1.attention_norm.weight")
        );
        let (v2, v3) = (file(2, &P, 1, 0), file(3, &P, 1, 0));
        assert!(detect(&v1[..8], 0) && detect(&v2, 0) && !detect(&v3, 0));
        assert!(read_(&v2)[0].starts_with("header byte 4: version 2: int8 Q8_0 (runq.c's)"));
    }
}
