//! Undoing llama.cpp's Q/K row permutation, so a GGUF's `attn_q`/`attn_k` can be compared
//! with the original projection.
//!
//! llama.cpp's converter (`LlamaModel.permute` in convert_hf_to_gguf.py) reorders the rows of
//! the Q and K projections of Llama-style models for its rotary-embedding layout:
//! `w.reshape(n_head, 2, rows // n_head // 2, *rest).swapaxes(1, 2).reshape(w.shape)`, with
//! `n_head` the KV head count for K when it differs. Row `h·2d + 2i + j` of the GGUF tensor is
//! row `h·2d + j·d + i` of the original (`d = rows / n_head / 2`). This module reads the GGUF
//! rows in the original's order, widens them with `float32-le-bits/v1`, and hashes that: equal
//! to the original's values hash exactly when the weights are the same.
//!
//! It applies only where the GGUF metadata says the architecture is one llama.cpp permutes
//! (`general.architecture`), with the head counts from `<arch>.attention.head_count[_kv]`.

use crate::base::digest::hex;
use crate::fingerprint::hashing::{encode_values, value_width};
use crate::read::artifact::FileJob;
use sha2::{Digest, Sha256};
use socair_plugin_api::{OpenedFile, TensorDescriptor};

/// Values hashes of GGUF Q/K projections with llama.cpp's row permutation undone, by
/// `(file, name)`.
pub type Unpermuted = std::collections::BTreeMap<(String, String), String>;

/// Architectures whose converter applies `LlamaModel.permute` to Q and K.
pub const PERMUTED_ARCHITECTURES: &[&str] = &["llama"];

fn metadata_value(opened: &OpenedFile, key: &str) -> Option<serde_json::Value> {
    opened
        .metadata
        .iter()
        .find(|kv| kv.0.as_str() == key)
        .and_then(|kv| serde_json::from_str::<serde_json::Value>(kv.1.as_str()).ok())
        .and_then(|v| v.get("value").cloned())
}

/// The head counts `(Q heads, K heads)` of a GGUF file whose architecture llama.cpp's
/// converter permutes, from its metadata.
pub fn permutation_heads(file: &OpenedFile) -> Option<(u64, u64)> {
    if file.format.as_str() != "gguf" {
        return None;
    }
    let arch = metadata_value(file, "general.architecture")?
        .as_str()?
        .to_owned();
    if !PERMUTED_ARCHITECTURES.contains(&arch.as_str()) {
        return None;
    }
    let heads = metadata_value(file, &format!("{arch}.attention.head_count"))?.as_u64()?;
    let kv_heads = metadata_value(file, &format!("{arch}.attention.head_count_kv"))
        .and_then(|v| v.as_u64())
        .unwrap_or(heads);
    Some((heads, kv_heads))
}

/// The heads a permuted tensor's rows split into, by its llama.cpp name: `Q heads` for
/// `blk.N.attn_q.*`, `K heads` for `blk.N.attn_k.*`, none for any other.
pub fn heads_for(name: &str, (heads, kv_heads): (u64, u64)) -> Option<u64> {
    if !name.starts_with("blk.") {
        return None;
    }
    if name.contains(".attn_q.") {
        Some(heads)
    } else if name.contains(".attn_k.") {
        Some(kv_heads)
    } else {
        None
    }
}

/// For every GGUF file of a permuted architecture, the unpermuted values hash of each F32,
/// F16 or BF16 `blk.N.attn_q.*` / `blk.N.attn_k.*` tensor.
pub fn hash_unpermuted(opened: &[(&FileJob<'_>, OpenedFile)]) -> Unpermuted {
    let mut out = Unpermuted::new();
    for (job, file) in opened {
        if file.format.as_str() != "gguf" {
            continue;
        }
        let Some(arch) = metadata_value(file, "general.architecture")
            .and_then(|v| v.as_str().map(str::to_owned))
        else {
            continue;
        };
        if !PERMUTED_ARCHITECTURES.contains(&arch.as_str()) {
            continue;
        }
        let heads =
            metadata_value(file, &format!("{arch}.attention.head_count")).and_then(|v| v.as_u64());
        let kv_heads = metadata_value(file, &format!("{arch}.attention.head_count_kv"))
            .and_then(|v| v.as_u64())
            .or(heads);
        for t in file.tensors.iter() {
            let name = t.name.as_str();
            let is_q = name.starts_with("blk.") && name.contains(".attn_q.");
            let is_k = name.starts_with("blk.") && name.contains(".attn_k.");
            let n_head = match (is_q, is_k) {
                (true, _) => heads,
                (_, true) => kv_heads,
                _ => continue,
            };
            if let Some(n_head) = n_head {
                if let Some(h) = unpermuted_values_hash(job, t, n_head) {
                    out.insert((job.rel.clone(), name.to_owned()), h);
                }
            }
        }
    }
    out
}

/// The values hash of `t` with its rows put back in the original order, or `None` when the
/// tensor is not one the encoding applies to or its rows do not split into heads.
pub fn unpermuted_values_hash(
    job: &FileJob<'_>,
    t: &TensorDescriptor,
    n_head: u64,
) -> Option<String> {
    let element = t.element_type.as_ref().into_option()?.as_str().to_owned();
    let width = value_width(&element)? as u64;
    let [range] = t.ranges.as_slice() else {
        return None;
    };
    // Rows are read straight from the range: only a row-major tensor has them there.
    if t.strides.is_some() {
        return None;
    }
    let rows = *t.shape.first()?;
    let row_elements = t
        .shape
        .iter()
        .skip(1)
        .try_fold(1u64, |a, &d| a.checked_mul(d))?;
    let row_bytes = row_elements.checked_mul(width)?;
    // Head counts come from the file's metadata: checked like any other number in it.
    let pair = n_head.checked_mul(2).filter(|&p| p > 0)?;
    if !rows.is_multiple_of(pair) || rows.checked_mul(row_bytes)? != range.len {
        return None;
    }
    let d = rows / n_head / 2;
    let mut hasher = Sha256::new();
    let mut raw = vec![0u8; usize::try_from(row_bytes).ok()?];
    let mut widened = vec![0u8; raw.len() / width as usize * 4];
    for h in 0..n_head {
        for j in 0..2 {
            for i in 0..d {
                let row = h * 2 * d + 2 * i + j;
                job.input
                    .read_exact_at(range.offset + row * row_bytes, &mut raw)
                    .ok()?;
                encode_values(&element, t.byte_order, &raw, &mut widened).ok()?;
                hasher.update(&widened);
            }
        }
    }
    Some(hex(&hasher.finalize()))
}
