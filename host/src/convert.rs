//! Conversion: `socair-convert/1` (seed `convert-and-derivation-record.txt`) and the
//! explicit-format conversions between the formats the plugins read and write.
//!
//! A conversion reads each tensor's bytes from where its reader located them and copies them
//! into the layout the destination writer plans; it runs nothing from the input. What cannot
//! be carried exactly is refused, with the reason: a tensor that is not contiguous, carries
//! torch's conj/neg bit, overlaps another without being the same tensor, or has a dtype the
//! destination lacks. Exact aliases (the same bytes, dtype and shape, such as tied embeddings)
//! are written once, under the first name in byte order, with `name: kept name` in the
//! safetensors metadata; disjoint views of one storage are each written. The safetensors
//! metadata holds `"format": "pt"` first when the input is a torch checkpoint, then the
//! aliases in byte order. Big-endian inputs are swapped to little-endian.
//!
//! The output is written to a temporary file, fsynced, and verified: the destination's own
//! reader must find it sound with the planned tensors, and every tensor's bytes must hash equal
//! to its bytes read from the input by a second path (for torch checkpoints, the `zip` crate
//! reading the storage record, independently of the plugin that located it).

use crate::artifact::FileJob;
use crate::fingerprint::hex;
use crate::plugins::PluginSet;
use crate::source::InputFile;
use sha2::{Digest, Sha256};
use socair_plugin_api::{
    abi_stable::std_types::{RString, RVec, Tuple2},
    ByteOrder, OpenedFile, PlanTensor, RowStatus,
};
use std::io::{Read, Write};
use std::path::Path;

/// The conversion rules' id.
pub const RULES: &str = "socair-convert/1";

inventory::submit! {
    crate::rules::RuleSet {
        name: "socair-convert",
        version: "1",
        id: RULES,
        summary: "torch zip checkpoint to safetensors without unpickling: contiguous tensors only, exact aliases once, byte-stable",
    }
}

/// Bytes per element of a safetensors dtype name, and the unit a byte swap works on (a
/// complex number swaps each of its two parts).
pub fn element_layout(dtype: &str) -> Option<(u64, usize)> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" | "F8_E4M3FNUZ"
        | "F8_E5M2FNUZ" => (1, 1),
        "I16" | "U16" | "F16" | "BF16" => (2, 2),
        "I32" | "U32" | "F32" => (4, 4),
        "I64" | "U64" | "F64" => (8, 8),
        "C64" => (8, 4),
        _ => return None,
    })
}

/// Unquantized dtypes GGUF can hold (ggml names equal the safetensors names here).
const GGUF_DTYPES: &[&str] = &["F32", "F16", "BF16", "F64", "I8", "I16", "I32", "I64"];

/// One tensor to carry.
#[derive(Debug, Clone)]
pub struct PlannedTensor {
    /// Index of the input file holding its bytes, in [`Conversion::sources`].
    pub input: usize,
    /// Its name in the output.
    pub name: String,
    /// Its dtype in the output's names.
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Where its bytes are in the input file.
    pub offset: u64,
    /// How many.
    pub len: u64,
    /// Swap unit when the input is big-endian (1 when nothing to swap).
    pub swap: usize,
    /// The format's own place for it (zip record, offset in it).
    pub origin: Option<(String, u64)>,
}

/// A planned conversion.
#[derive(Debug, Clone)]
pub struct Conversion {
    /// The tensors written, in the order given to the writer.
    pub tensors: Vec<PlannedTensor>,
    /// Output header bytes.
    pub header: Vec<u8>,
    /// `(tensor index, output offset)`.
    pub placements: Vec<(usize, u64)>,
    /// Output length.
    pub total_len: u64,
    /// `(alias, kept name)`, by alias in byte order.
    pub aliases: Vec<(String, String)>,
    /// What was not carried.
    pub not_carried: Vec<String>,
    /// Whether any input was big-endian (swapped).
    pub swapped: bool,
    /// The metadata written.
    pub metadata: Vec<(String, String)>,
    /// The files tensors are read from, relative to the artifact: each opened file, and the
    /// files holding ONNX external data.
    pub sources: Vec<String>,
}

/// Why a conversion is refused.
pub type Refusal = String;

/// Plans the conversion of the opened `inputs` into format `to`. A torch checkpoint's Pickle
/// opcode scan row must PASS (the grammar's model is complete only then); `multi_file_names`
/// prefixes messages with each file's path (model directories).
pub fn plan(
    inputs: &[(&FileJob<'_>, OpenedFile)],
    to: &str,
    plugins: &PluginSet,
    multi_file_names: bool,
) -> Result<Conversion, Refusal> {
    let (_, writer) = plugins
        .writer(to)
        .ok_or_else(|| format!("no loaded plugin writes {to}"))?;
    let mut tensors = Vec::new();
    let mut not_carried = Vec::new();
    let mut swapped = false;
    let mut from_torch = false;
    let mut sources: Vec<String> = Vec::new();
    for (job, opened) in inputs.iter() {
        let format = opened.format.as_str();
        let prefix = if multi_file_names {
            format!("{}: ", job.rel)
        } else {
            String::new()
        };
        for row in opened.rows.iter() {
            if row.status == RowStatus::Fail {
                return Err(format!(
                    "{prefix}the {} row is FAIL: {}",
                    row.check, row.summary
                ));
            }
        }
        if format == "torch-zip" {
            from_torch = true;
            let pickle = opened
                .rows
                .iter()
                .find(|r| r.check.as_str() == "Pickle opcode scan");
            if pickle.map(|r| r.status) != Some(RowStatus::Pass) {
                return Err(format!(
                    "{prefix}the Pickle opcode scan row is not PASS, so the grammar's model of the checkpoint is not complete"
                ));
            }
        }
        for u in opened.unread.iter() {
            let what = u.tensor.as_ref().map_or_else(
                || "the file".to_owned(),
                |t| format!("tensor {:?}", t.as_str()),
            );
            if u.outside_model {
                not_carried.push(format!(
                    "{prefix}{} ({})",
                    u.tensor.as_ref().map_or("?", |t| t.as_str()),
                    u.reason
                ));
            } else {
                return Err(format!(
                    "{prefix}{what} cannot be carried exactly: {}",
                    u.reason
                ));
            }
        }
        not_carried.extend(opened.not_carried.iter().map(|s| format!("{prefix}{s}")));
        for (k, v) in opened.metadata.iter().map(|Tuple2(k, v)| (k, v)) {
            not_carried.push(format!("{prefix}metadata {k:?} = {v:?}"));
        }
        for t in opened.tensors.iter() {
            let name = t.name.to_string();
            let element = t.element_type.as_ref().map(|e| e.to_string()).into_option().ok_or_else(|| {
                format!("{prefix}tensor {name:?} is {} (block-quantized): it has no exact form in {to}", t.dtype)
            })?;
            let dtype = match to {
                "safetensors" => element_layout(&element).map(|_| element.clone()),
                "gguf" => GGUF_DTYPES
                    .contains(&element.as_str())
                    .then(|| element.clone()),
                _ => None,
            }
            .ok_or_else(|| {
                format!("{prefix}tensor {name:?} is {element}, which {to} cannot hold")
            })?;
            let (_, swap_unit) = element_layout(&element).unwrap_or((1, 1));
            let [range] = t.ranges.as_slice() else {
                return Err(format!(
                    "{prefix}tensor {name:?} is split into {} byte ranges",
                    t.ranges.len()
                ));
            };
            let source = match t.file.as_ref().into_option() {
                None => job.rel.clone(),
                Some(file) => crate::artifact::data_path(&job.rel, file)
                    .map_err(|why| format!("{prefix}tensor {name:?}: {why}"))?,
            };
            let input = sources
                .iter()
                .position(|s| *s == source)
                .unwrap_or_else(|| {
                    sources.push(source);
                    sources.len() - 1
                });
            let swap = if t.byte_order == ByteOrder::Big && swap_unit > 1 {
                swapped = true;
                swap_unit
            } else {
                1
            };
            tensors.push(PlannedTensor {
                input,
                name,
                dtype,
                shape: t.shape.to_vec(),
                offset: range.offset,
                len: range.len,
                swap,
                origin: t
                    .origin
                    .as_ref()
                    .map(|o| (o.container.to_string(), o.offset))
                    .into_option(),
            });
        }
    }

    // Sharing: exact aliases are written once; overlapping non-aliases are refused.
    let mut order: Vec<usize> = (0..tensors.len()).filter(|&i| tensors[i].len > 0).collect();
    order.sort_by_key(|&i| (tensors[i].input, tensors[i].offset, tensors[i].len));
    let mut dropped = vec![false; tensors.len()];
    let mut aliases = Vec::new();
    let mut group: Vec<usize> = Vec::new();
    let mut group_end = 0u64;
    let flush =
        |group: &mut Vec<usize>, dropped: &mut Vec<bool>, aliases: &mut Vec<(String, String)>| {
            if group.len() > 1 {
                group.sort_by(|&a, &b| tensors[a].name.as_bytes().cmp(tensors[b].name.as_bytes()));
                let kept = tensors[group[0]].name.clone();
                for &i in &group[1..] {
                    dropped[i] = true;
                    aliases.push((tensors[i].name.clone(), kept.clone()));
                }
            }
            group.clear();
        };
    for &i in &order {
        let t = &tensors[i];
        if let Some(&head) = group.first() {
            let h = &tensors[head];
            let same_input = h.input == t.input;
            if same_input && t.offset < group_end {
                let exact = t.offset == h.offset
                    && t.len == h.len
                    && t.dtype == h.dtype
                    && t.shape == h.shape;
                if !exact {
                    return Err(format!(
                        "tensors {:?} and {:?} overlap in storage without being the same tensor: a partial view cannot be carried as an alias",
                        h.name, t.name
                    ));
                }
                group.push(i);
                continue;
            }
            flush(&mut group, &mut dropped, &mut aliases);
        }
        group.push(i);
        group_end = t.offset + t.len;
    }
    flush(&mut group, &mut dropped, &mut aliases);
    aliases.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    if !aliases.is_empty() {
        not_carried.push(
            "memory sharing: exact aliases are written once and named in the metadata".into(),
        );
    }

    let kept: Vec<PlannedTensor> = tensors
        .into_iter()
        .zip(dropped)
        .filter(|(_, d)| !d)
        .map(|(t, _)| t)
        .collect();
    let mut names = std::collections::HashSet::new();
    for t in &kept {
        if !names.insert(t.name.as_str()) {
            return Err(format!(
                "two tensors are named {:?} (in different files)",
                t.name
            ));
        }
    }
    let mut metadata = Vec::new();
    if to == "safetensors" {
        if from_torch {
            metadata.push(("format".to_owned(), "pt".to_owned()));
        }
        metadata.extend(aliases.iter().cloned());
    }
    let plan_tensors: Vec<PlanTensor> = kept
        .iter()
        .map(|t| PlanTensor {
            name: t.name.as_str().into(),
            dtype: t.dtype.as_str().into(),
            shape: t.shape.clone().into(),
            byte_len: t.len,
        })
        .collect();
    let meta: RVec<Tuple2<RString, RString>> = metadata
        .iter()
        .map(|(k, v)| Tuple2(RString::from(k.as_str()), RString::from(v.as_str())))
        .collect();
    let layout = writer
        .plan(plan_tensors.as_slice().into(), meta.as_slice().into())
        .into_result()
        .map_err(|e| format!("the {to} writer refused the plan: {}", e.message))?;
    check_layout(&layout.header, &layout.placements, layout.total_len, &kept)?;
    Ok(Conversion {
        header: layout.header.to_vec(),
        placements: layout
            .placements
            .iter()
            .map(|p| (p.tensor_index as usize, p.offset))
            .collect(),
        total_len: layout.total_len,
        tensors: kept,
        aliases,
        not_carried,
        swapped,
        metadata,
        sources,
    })
}

/// The host does not take the writer's word either: every tensor placed once, inside the
/// file, after the header, without overlaps.
fn check_layout(
    header: &[u8],
    placements: &[socair_plugin_api::Placement],
    total: u64,
    tensors: &[PlannedTensor],
) -> Result<(), Refusal> {
    let mut seen = vec![false; tensors.len()];
    let mut spans = Vec::new();
    for p in placements {
        let i = p.tensor_index as usize;
        if i >= tensors.len() || std::mem::replace(&mut seen[i], true) {
            return Err(
                "the writer's plan places a tensor twice or one that does not exist".into(),
            );
        }
        let end = p.offset.checked_add(tensors[i].len).filter(|&e| e <= total);
        if p.offset < header.len() as u64 || end.is_none() {
            return Err(format!(
                "the writer's plan puts {:?} outside the file",
                tensors[i].name
            ));
        }
        spans.push((p.offset, end.unwrap_or(0)));
    }
    if seen.iter().any(|s| !s) {
        return Err("the writer's plan leaves a tensor out".into());
    }
    spans.sort_unstable();
    if spans.windows(2).any(|w| w[1].0 < w[0].1) {
        return Err("the writer's plan overlaps two tensors".into());
    }
    Ok(())
}

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

/// Writes the output to `out` (a new file): header, each tensor's bytes (swapped to
/// little-endian when needed), zeros elsewhere; fsyncs. Returns the output's sha256.
pub fn write(conv: &Conversion, inputs: &[&InputFile], out: &Path) -> Result<String, Refusal> {
    check_room(out, conv.total_len)?;
    let io = |e: std::io::Error| format!("{}: {e}", out.display());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(out)
        .map_err(io)?;
    let mut whole = Sha256::new();
    let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut file);
    w.write_all(&conv.header).map_err(io)?;
    whole.update(&conv.header);
    let mut at = conv.header.len() as u64;
    let mut order = conv.placements.clone();
    order.sort_by_key(|&(_, off)| off);
    let zeros = [0u8; 4096];
    let progress = crate::progress::Progress::bytes(conv.total_len, "writing");
    let pad = |w: &mut std::io::BufWriter<&mut std::fs::File>,
               whole: &mut Sha256,
               from: u64,
               to: u64|
     -> Result<(), Refusal> {
        let mut at = from;
        while at < to {
            let n = (to - at).min(zeros.len() as u64) as usize;
            w.write_all(&zeros[..n]).map_err(io)?;
            whole.update(&zeros[..n]);
            at += n as u64;
        }
        Ok(())
    };
    for (i, offset) in order {
        let t = &conv.tensors[i];
        pad(&mut w, &mut whole, at, offset)?;
        let mut failure = None;
        let mut swapped = Vec::new();
        inputs[t.input]
            .for_each_chunk(t.offset, t.len, |chunk| {
                let bytes = if t.swap > 1 {
                    swapped.clear();
                    swapped.extend_from_slice(chunk);
                    for e in swapped.chunks_exact_mut(t.swap) {
                        e.reverse();
                    }
                    &swapped[..]
                } else {
                    chunk
                };
                whole.update(bytes);
                progress.add(bytes.len() as u64);
                if let Err(e) = w.write_all(bytes) {
                    failure.get_or_insert(e);
                }
            })
            .map_err(|e| format!("reading {:?} from the input: {e}", t.name))?;
        if let Some(e) = failure {
            return Err(io(e));
        }
        at = offset + t.len;
    }
    pad(&mut w, &mut whole, at, conv.total_len)?;
    w.flush().map_err(io)?;
    drop(w);
    file.sync_all().map_err(io)?;
    Ok(hex(&whole.finalize()))
}

/// Verifies a written output: its format's reader finds it sound with exactly the planned
/// tensors, each holding the bytes written; and each tensor read from the input by a second
/// path (the zip record through the `zip` crate, for torch inputs) hashes the same.
pub fn verify(
    conv: &Conversion,
    to: &str,
    out: &Path,
    inputs: &[&InputFile],
    plugins: &PluginSet,
) -> Result<Vec<String>, Refusal> {
    use rayon::prelude::*;
    let (_, reader) = plugins
        .reader(to)
        .ok_or_else(|| format!("no loaded plugin reads {to}"))?;
    let file = InputFile::open_with(out, false).map_err(|e| format!("{}: {e}", out.display()))?;
    let source = socair_plugin_api::ByteSource_TO::from_ptr(
        socair_plugin_api::abi_stable::sabi_types::RRef::new(&file),
        socair_plugin_api::abi_stable::sabi_trait::TD_Opaque,
    );
    let opened = reader
        .open(source, Default::default())
        .into_result()
        .map_err(|e| format!("reading the output back failed: {e}"))?;
    if let Some(r) = opened.rows.iter().find(|r| r.status != RowStatus::Pass) {
        return Err(format!(
            "the output is not sound: {} is {:?}: {}",
            r.check, r.status, r.summary
        ));
    }
    if opened.tensors.len() != conv.tensors.len() {
        return Err(format!(
            "the output holds {} tensors, the plan {}",
            opened.tensors.len(),
            conv.tensors.len()
        ));
    }
    let mut found = Vec::with_capacity(conv.tensors.len());
    for t in &conv.tensors {
        let o = opened
            .tensors
            .iter()
            .find(|o| o.name.as_str() == t.name)
            .ok_or_else(|| format!("the output lacks {:?}", t.name))?;
        if o.dtype.as_str() != t.dtype || o.shape.as_slice() != t.shape.as_slice() {
            return Err(format!(
                "the output's {:?} has another dtype or shape",
                t.name
            ));
        }
        found.push(o.ranges.to_vec());
    }
    // Each tensor: its bytes read back from the output, and the same tensor read from the
    // input by a second path, hashed side by side across cores.
    conv.tensors
        .par_iter()
        .zip(found.par_iter())
        .map(|(t, ranges)| {
            let mut h = Sha256::new();
            for r in ranges {
                file.for_each_chunk(r.offset, r.len, |c| h.update(c))
                    .map_err(|e| format!("{}: {e}", out.display()))?;
            }
            let in_output = hex(&h.finalize());
            let second = match &t.origin {
                Some((record, offset)) => hash_from_zip_record(inputs[t.input].path(), record, *offset, t.len, t.swap)?,
                None => {
                    let mut h = Sha256::new();
                    let direct = InputFile::open_with(inputs[t.input].path(), false)
                        .map_err(|e| format!("{}: {e}", inputs[t.input].path().display()))?;
                    direct
                        .for_each_chunk(t.offset, t.len, |c| h.update(c))
                        .map_err(|e| e.to_string())?;
                    hex(&h.finalize())
                }
            };
            if second != in_output {
                return Err(format!(
                    "{:?} read from the input by a second path hashes {second}, but the output holds {in_output}",
                    t.name
                ));
            }
            Ok(in_output)
        })
        .collect()
}

/// The second path: the tensor's bytes read from its storage record with the `zip` crate
/// (which checks the record's CRC-32 as it reads), swapped like the output.
pub fn hash_from_zip_record(
    zip_path: &Path,
    record: &str,
    offset: u64,
    len: u64,
    swap: usize,
) -> Result<String, Refusal> {
    let f = std::fs::File::open(zip_path).map_err(|e| format!("{}: {e}", zip_path.display()))?;
    let mut archive = zip::ZipArchive::new(f)
        .map_err(|e| format!("{}: the zip crate cannot read it: {e}", zip_path.display()))?;
    let mut entry = archive
        .by_name(record)
        .map_err(|e| format!("{}: record {record}: {e}", zip_path.display()))?;
    let size = entry.size();
    if offset.checked_add(len).is_none_or(|e| e > size) {
        return Err(format!(
            "record {record} holds {size} bytes, not {offset}+{len}"
        ));
    }
    std::io::copy(&mut (&mut entry).take(offset), &mut std::io::sink())
        .map_err(|e| e.to_string())?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        entry
            .read_exact(&mut buf[..n])
            .map_err(|e| format!("record {record}: {e}"))?;
        if swap > 1 {
            for e in buf[..n].chunks_exact_mut(swap) {
                e.reverse();
            }
        }
        h.update(&buf[..n]);
        left -= n as u64;
    }
    // Read the rest so the crate checks the record's CRC-32.
    std::io::copy(&mut entry, &mut std::io::sink()).map_err(|e| format!("record {record}: {e}"))?;
    Ok(hex(&h.finalize()))
}

/// Formats `--from` may name, and what each means.
pub const FROM_FORMATS: &[&str] = &["torch-zip", "safetensors", "gguf", "onnx", "model-dir"];
/// Formats `--to` may name.
pub const TO_FORMATS: &[&str] = &["safetensors", "gguf"];

/// What a finished conversion wrote.
#[derive(Debug, Clone)]
pub struct Done {
    /// The plan that was carried out.
    pub conversion: Conversion,
    /// The output's sha256.
    pub sha256: String,
    /// Each tensor's sha256, by tensor index.
    pub tensor_sha256: Vec<String>,
}

/// Converts `src` (read as `from`) into a new file `dst` in format `to`: written to a
/// temporary name beside it, verified, fsynced and renamed; nothing is left on failure.
pub fn convert_path(
    src: &Path,
    dst: &Path,
    from: &str,
    to: &str,
    plugins: &PluginSet,
) -> Result<Result<Done, Refusal>, String> {
    if !FROM_FORMATS.contains(&from) {
        return Err(format!(
            "--from {from:?}: formats are {}",
            FROM_FORMATS.join(", ")
        ));
    }
    if !TO_FORMATS.contains(&to) {
        return Err(format!(
            "--to {to:?}: formats are {}",
            TO_FORMATS.join(", ")
        ));
    }
    if dst.exists() {
        return Err(format!(
            "{}: already exists; socair does not overwrite",
            dst.display()
        ));
    }
    let artifact =
        crate::artifact::Artifact::resolve_with(src, plugins, false).map_err(|e| e.to_string())?;
    if artifact.is_dir != (from == "model-dir") {
        return Ok(Err(format!(
            "{} is {}, not {from}",
            src.display(),
            if artifact.is_dir {
                "a directory (--from model-dir)"
            } else {
                "a file"
            }
        )));
    }
    if let Some((file, why)) = artifact.unreadable.first() {
        return Ok(Err(format!("{file}: {why}")));
    }
    for job in &artifact.jobs {
        let format = job.reader.1.format().to_string();
        if !artifact.is_dir && format != from {
            return Ok(Err(format!("{} reads as {format}, not {from}: socair never guesses a format, and will not convert it as one", src.display())));
        }
    }
    if artifact.jobs.is_empty() {
        return Ok(Err(format!(
            "{}: no tensors to convert (no file a plugin reads)",
            src.display()
        )));
    }
    let opened = artifact
        .open_all(&Default::default())
        .map_err(|e| e.to_string())?;
    let conversion = match plan(&opened, to, plugins, artifact.is_dir) {
        Ok(c) => c,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let dir = dst
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".socair-convert-")
        .tempdir_in(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let tmp_out = tmp.path().join("output");
    let inputs: Vec<&InputFile> = match conversion
        .sources
        .iter()
        .map(|rel| {
            artifact
                .input_by_rel(rel)
                .ok_or_else(|| format!("{rel}: not a readable file of {}", src.display()))
        })
        .collect()
    {
        Ok(i) => i,
        Err(e) => return Ok(Err(e)),
    };
    let sha256 = match write(&conversion, &inputs, &tmp_out) {
        Ok(w) => w,
        Err(e) => return Ok(Err(e)),
    };
    let tensor_sha256 = match verify(&conversion, to, &tmp_out, &inputs, plugins) {
        Ok(h) => h,
        Err(e) => return Ok(Err(format!("verification of the output failed: {e}"))),
    };
    // No-clobber rename: a destination created meanwhile is not replaced.
    std::fs::hard_link(&tmp_out, dst).map_err(|e| format!("{}: {e}", dst.display()))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(Ok(Done {
        conversion,
        sha256,
        tensor_sha256,
    }))
}
