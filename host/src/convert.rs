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

/// The first conversion rules' id.
pub const RULES_V1: &str = "socair-convert/1";
/// The second conversion rules' id.
pub const RULES_V2: &str = "socair-convert/2";

inventory::submit! {
    crate::rules::RuleSet {
        name: "socair-convert",
        version: "1",
        id: RULES_V1,
        summary: "torch zip checkpoint to safetensors without unpickling: contiguous tensors only, exact aliases once, byte-stable",
    }
}

inventory::submit! {
    crate::rules::RuleSet {
        name: "socair-convert",
        version: "2",
        id: RULES_V2,
        summary: "socair-convert/1, plus torch-legacy inputs and non-contiguous tensors gathered into row-major order (same bytes as /1 wherever /1 converts)",
    }
}

/// A version of the conversion rules. Both are built in; each conversion runs under one and
/// names it. `/2` accepts everything `/1` does and writes the same bytes for it; it adds legacy
/// (non-zip) torch inputs and gathers non-contiguous tensors into row-major order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rules {
    /// `socair-convert/1`.
    V1,
    /// `socair-convert/2`.
    V2,
}

impl Rules {
    /// Every version, oldest first.
    pub const ALL: [Rules; 2] = [Rules::V1, Rules::V2];

    /// How outputs name it.
    pub fn id(self) -> &'static str {
        match self {
            Rules::V1 => RULES_V1,
            Rules::V2 => RULES_V2,
        }
    }

    /// Its version number.
    pub fn version(self) -> u64 {
        match self {
            Rules::V1 => 1,
            Rules::V2 => 2,
        }
    }

    /// `socair-convert/N` or `N`.
    pub fn parse(text: &str) -> Result<Rules, String> {
        let n = text.strip_prefix("socair-convert/").unwrap_or(text);
        Rules::ALL
            .into_iter()
            .find(|r| r.version().to_string() == n)
            .ok_or_else(|| {
                format!(
                    "--rules {text:?}: this socair implements {}",
                    Rules::ALL.map(Rules::id).join(" and ")
                )
            })
    }

    /// The rules to run: the one asked for (`--rules`), or else the newest; either way the
    /// deployment's pins must accept it (`pins.rules["socair-convert"]`; none without a store).
    pub fn select(asked: Option<&str>, pins: &crate::store::Pins) -> Result<Rules, String> {
        let pin = pins.rules.get("socair-convert").map_or("", String::as_str);
        let allowed = |r: Rules| pins.check_rule("socair-convert", &r.version().to_string());
        match asked {
            Some(text) => {
                let r = Rules::parse(text)?;
                allowed(r).map_err(|e| {
                    format!(
                        "--rules {}: the store pins socair-convert to {pin} ({e})",
                        r.id()
                    )
                })?;
                Ok(r)
            }
            None => {
                let mut last_refusal = String::new();
                for r in Rules::ALL.into_iter().rev() {
                    match allowed(r) {
                        Ok(()) => return Ok(r),
                        Err(e) => last_refusal = e,
                    }
                }
                Err(format!(
                    "the store pins socair-convert to {pin}, which no built-in version ({}) satisfies: {last_refusal}",
                    Rules::ALL.map(Rules::id).join(", ")
                ))
            }
        }
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
    /// For a non-contiguous tensor gathered under `socair-convert/2`: its layout. `offset` is
    /// then where its element `(0, …)` lies and `len` its row-major size.
    pub gather: Option<crate::layout::Strided>,
    /// Bytes of the input it touches from `offset` (its span when gathered, else `len`).
    pub extent: u64,
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
    rules: Rules,
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
        if format == "torch-legacy" && rules < Rules::V2 {
            return Err(format!(
                "{prefix}a torch-legacy checkpoint is converted under {} or later; this conversion runs under {}",
                RULES_V2,
                rules.id()
            ));
        }
        if format == "torch-zip" || format == "torch-legacy" {
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
            if t.strides.is_some() && t.file.is_some() {
                return Err(format!(
                    "{prefix}tensor {name:?} is strided and lies in another file: no format writes that, and socair does not read it"
                ));
            }
            let gather = crate::layout::strided(t, job.input.len())
                .map_err(|e| format!("{prefix}tensor {name:?}: {e}"))?;
            if let (Some(g), Rules::V1) = (&gather, rules) {
                return Err(format!(
                    "{prefix}tensor {name:?} is not contiguous (shape {:?}, stride {:?}): {} carries contiguous tensors only; {} gathers them into row-major order",
                    g.shape, g.strides, RULES_V1, RULES_V2
                ));
            }
            let [range] = t.ranges.as_slice() else {
                return Err(format!(
                    "{prefix}tensor {name:?} is split into {} byte ranges",
                    t.ranges.len()
                ));
            };
            let len = match &gather {
                Some(g) => g
                    .numel
                    .checked_mul(g.elem)
                    .ok_or_else(|| format!("{prefix}tensor {name:?}: its size overflows"))?,
                None => range.len,
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
                len,
                swap,
                origin: t
                    .origin
                    .as_ref()
                    .map(|o| (o.container.to_string(), o.offset))
                    .into_option(),
                extent: range.len,
                gather,
            });
        }
    }

    // Sharing: exact aliases are written once; overlapping non-aliases are refused.
    let mut order: Vec<usize> = (0..tensors.len()).filter(|&i| tensors[i].len > 0).collect();
    order.sort_by_key(|&i| (tensors[i].input, tensors[i].offset, tensors[i].extent));
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
                    && t.extent == h.extent
                    && t.dtype == h.dtype
                    && t.shape == h.shape
                    && t.gather == h.gather;
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
        group_end = t.offset + t.extent;
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
    let mut writer = HashedWriter::new(&mut file, conv.total_len);
    writer.put(&conv.header, 1).map_err(io)?;
    // Placements are planned in order without overlap; a plan that says otherwise is refused
    // here rather than written wrongly.
    let gap = |from: u64, to: u64| {
        to.checked_sub(from)
            .ok_or_else(|| format!("the plan places bytes at {to}, before {from}"))
    };
    let mut at = conv.header.len() as u64;
    let mut order = conv.placements.clone();
    order.sort_by_key(|&(_, off)| off);
    for (i, offset) in order {
        let t = &conv.tensors[i];
        writer.zeros(gap(at, offset)?).map_err(io)?;
        let mut failure = None;
        let input = inputs[t.input];
        let each = |chunk: &[u8]| {
            if failure.is_none() {
                if let Err(e) = writer.put(chunk, t.swap) {
                    failure = Some(e);
                }
            }
        };
        match &t.gather {
            None => input.for_each_chunk(t.offset, t.len, each),
            Some(g) => crate::layout::gather(input, g, each),
        }
        .map_err(|e| format!("reading {:?} from the input: {e}", t.name))?;
        if let Some(e) = failure {
            return Err(io(e));
        }
        at = offset + t.len;
    }
    writer.zeros(gap(at, conv.total_len)?).map_err(io)?;
    let digest = writer.finish().map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(hex(&digest))
}

/// Writes a file through the buffers of a [`HashPipe`](crate::hashpipe::HashPipe): each buffer
/// is filled (and its elements swapped to little-endian when asked), written, then hashed on a
/// second core while the next one fills.
struct HashedWriter<'f> {
    file: &'f mut std::fs::File,
    pipe: crate::hashpipe::HashPipe,
    pending: Vec<u8>,
    progress: crate::progress::Progress,
}

impl<'f> HashedWriter<'f> {
    const CHUNK: usize = 1 << 20;

    fn new(file: &'f mut std::fs::File, total: u64) -> Self {
        let pipe = crate::hashpipe::HashPipe::new(Self::CHUNK);
        let pending = pipe.buffer();
        Self {
            file,
            pipe,
            pending,
            progress: crate::progress::Progress::bytes(total, "writing"),
        }
    }

    /// Appends `bytes`, reversing each `swap`-byte element when `swap > 1` (`bytes` holds whole
    /// elements: tensor lengths and read chunks are multiples of the element size).
    fn put(&mut self, bytes: &[u8], swap: usize) -> std::io::Result<()> {
        let unit = swap.max(1);
        let mut rest = bytes;
        while !rest.is_empty() {
            let room = Self::CHUNK - self.pending.len();
            let take = rest.len().min(room - room % unit);
            let start = self.pending.len();
            self.pending.extend_from_slice(&rest[..take]);
            if swap > 1 {
                for e in self.pending[start..].chunks_exact_mut(swap) {
                    e.reverse();
                }
            }
            rest = &rest[take..];
            if Self::CHUNK - self.pending.len() < unit {
                self.flush()?;
            }
        }
        Ok(())
    }

    fn zeros(&mut self, mut n: u64) -> std::io::Result<()> {
        const ZEROS: [u8; 4096] = [0; 4096];
        while n > 0 {
            let k = n.min(ZEROS.len() as u64) as usize;
            self.put(&ZEROS[..k], 1)?;
            n -= k as u64;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let full = std::mem::replace(&mut self.pending, self.pipe.buffer());
        self.file.write_all(&full)?;
        self.progress.add(full.len() as u64);
        self.pipe.send(full);
        Ok(())
    }

    /// Writes what is pending and returns the SHA-256 of everything written.
    fn finish(mut self) -> std::io::Result<[u8; 32]> {
        self.flush()?;
        self.pipe.finish()
    }
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
    // By name, once: a linear search per tensor made checkpoints of many tensors quadratic.
    let by_name: std::collections::HashMap<&str, &socair_plugin_api::TensorDescriptor> = opened
        .tensors
        .iter()
        .map(|o| (o.name.as_str(), o))
        .collect();
    let mut found = Vec::with_capacity(conv.tensors.len());
    for t in &conv.tensors {
        let o = by_name
            .get(t.name.as_str())
            .ok_or_else(|| format!("the output lacks {:?}", t.name))?;
        if o.dtype.as_str() != t.dtype || o.shape.as_slice() != t.shape.as_slice() {
            return Err(format!(
                "the output's {:?} has another dtype or shape",
                t.name
            ));
        }
        found.push(o.ranges.to_vec());
    }
    // The zip inputs, each opened once by the `zip` crate for the second path.
    let second_paths = inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            // Zip inputs: the `zip` crate reads their records. Other inputs (safetensors, GGUF,
            // torch-legacy) have no container to read through: they are re-read directly.
            if conv
                .tensors
                .iter()
                .any(|t| t.input == i && t.origin.is_some())
                && is_zip(input.path())
            {
                SecondPath::open(input.path()).map(Some)
            } else {
                Ok(None)
            }
        })
        .collect::<Result<Vec<_>, Refusal>>()?;
    // Each tensor, across cores: its bytes read back from the output and, in step, the same
    // tensor read from the input by a second path; they must be equal byte for byte, and the
    // output's bytes are hashed once. (A gathered tensor's second path computes each element's
    // place itself, so there the two are compared by hash.)
    conv.tensors
        .par_iter()
        .zip(found.par_iter())
        .map(|(t, ranges)| {
            let input = inputs[t.input].path();
            let in_input = |e: std::io::Error| format!("{}: {e}", input.display());
            match (&t.origin, &second_paths[t.input], &t.gather) {
                (Some((record, offset)), Some(zip), None) => {
                    zip.compare(record, *offset, t.len, t.swap, &file, ranges, &t.name)
                }
                (_, None, None) => {
                    let mut direct = std::fs::File::open(input).map_err(in_input)?;
                    std::io::Seek::seek(&mut direct, std::io::SeekFrom::Start(t.offset))
                        .map_err(in_input)?;
                    compare_in_step(&file, ranges, &mut direct.take(t.len), t.swap, &t.name)
                }
                (origin, zip, Some(g)) => {
                    let mut h = Sha256::new();
                    for r in ranges {
                        file.for_each_chunk(r.offset, r.len, |c| h.update(c))
                            .map_err(|e| format!("{}: {e}", out.display()))?;
                    }
                    let in_output = hex(&h.finalize());
                    let second = match (origin, zip) {
                        (Some((record, offset)), Some(zip)) => {
                            zip.hash_gathered(record, *offset, g, t.swap)?
                        }
                        _ => {
                            let direct = std::fs::File::open(input).map_err(in_input)?;
                            crate::layout::gathered_sha256_by_index(g, t.swap, |at, buf| {
                                std::os::unix::fs::FileExt::read_exact_at(&direct, buf, at)
                            })
                            .map_err(in_input)?
                        }
                    };
                    if second != in_output {
                        return Err(format!(
                            "{:?} gathered from the input by a second path hashes {second}, but the output holds {in_output}",
                            t.name
                        ));
                    }
                    Ok(in_output)
                }
                (None, Some(_), None) => Err(format!(
                    "{:?}: a zip input's tensor without its record",
                    t.name
                )),
            }
        })
        .collect()
}

/// Reads a tensor's bytes from the output (`ranges` of `out`) and, in step, as many bytes from
/// `second` (swapped in `swap`-byte units like the output); they must be equal. Returns the
/// sha256 of the bytes, hashed once.
fn compare_in_step(
    out: &InputFile,
    ranges: &[socair_plugin_api::ByteRange],
    second: &mut dyn Read,
    swap: usize,
    name: &str,
) -> Result<String, Refusal> {
    let mut h = Sha256::new();
    let mut theirs = Vec::new();
    let mut at = 0u64;
    let mut failure: Option<Refusal> = None;
    for r in ranges {
        out.for_each_chunk(r.offset, r.len, |chunk| {
            if failure.is_some() {
                return;
            }
            theirs.resize(chunk.len(), 0);
            if let Err(e) = second.read_exact(&mut theirs) {
                failure = Some(format!(
                    "{name:?}: the second path ends at byte {at} of the tensor: {e}"
                ));
                return;
            }
            if swap > 1 {
                for e in theirs.chunks_exact_mut(swap) {
                    e.reverse();
                }
            }
            if theirs != chunk {
                let first = theirs.iter().zip(chunk).position(|(a, b)| a != b).unwrap_or(0);
                failure = Some(format!(
                    "{name:?} read from the input by a second path differs from the output at byte {} of the tensor",
                    at + first as u64
                ));
                return;
            }
            h.update(chunk);
            at += chunk.len() as u64;
        })
        .map_err(|e| format!("reading the output back: {e}"))?;
    }
    if let Some(f) = failure {
        return Err(f);
    }
    let mut more = [0u8; 1];
    if second.read(&mut more).map_err(|e| e.to_string())? != 0 {
        return Err(format!(
            "{name:?}: the second path holds more bytes than the output's {at}"
        ));
    }
    Ok(hex(&h.finalize()))
}

/// A zip archive opened once for the second path; [`SecondPath::hash`] may be called from many
/// threads, each reading through its own clone (the central directory is shared, not re-read:
/// re-reading it per tensor made checkpoints of many tensors quadratic).
#[derive(Clone, Debug)]
pub struct SecondPath {
    archive: zip::ZipArchive<SharedFile>,
    path: std::path::PathBuf,
}

impl SecondPath {
    /// Opens `zip_path` with the `zip` crate.
    pub fn open(zip_path: &Path) -> Result<Self, Refusal> {
        let f =
            std::fs::File::open(zip_path).map_err(|e| format!("{}: {e}", zip_path.display()))?;
        let archive = zip::ZipArchive::new(SharedFile {
            file: std::sync::Arc::new(f),
            pos: 0,
        })
        .map_err(|e| format!("{}: the zip crate cannot read it: {e}", zip_path.display()))?;
        Ok(Self {
            archive,
            path: zip_path.to_owned(),
        })
    }

    /// Reads `len` bytes at `offset` of `record` with the `zip` crate, handing them to `use_bytes`
    /// as a reader, then reads the rest of the record so the crate checks its CRC-32.
    fn with_record<T>(
        &self,
        record: &str,
        offset: u64,
        len: u64,
        use_bytes: impl FnOnce(&mut dyn Read) -> Result<T, Refusal>,
    ) -> Result<T, Refusal> {
        let mut archive = self.archive.clone();
        let mut entry = archive
            .by_name(record)
            .map_err(|e| format!("{}: record {record}: {e}", self.path.display()))?;
        let size = entry.size();
        if offset.checked_add(len).is_none_or(|e| e > size) {
            return Err(format!(
                "record {record} holds {size} bytes, not {offset}+{len}"
            ));
        }
        std::io::copy(&mut (&mut entry).take(offset), &mut std::io::sink())
            .map_err(|e| format!("record {record}: {e}"))?;
        let result = use_bytes(&mut (&mut entry).take(len))?;
        std::io::copy(&mut entry, &mut std::io::sink())
            .map_err(|e| format!("record {record}: {e}"))?;
        Ok(result)
    }

    /// The tensor's bytes read from its storage record with the `zip` crate (which checks the
    /// record's CRC-32 as it reads), swapped like the output, hashed.
    pub fn hash(
        &self,
        record: &str,
        offset: u64,
        len: u64,
        swap: usize,
    ) -> Result<String, Refusal> {
        self.with_record(record, offset, len, |bytes| {
            let mut h = Sha256::new();
            let mut buf = vec![0u8; 1 << 20];
            let mut left = len;
            while left > 0 {
                let n = left.min(buf.len() as u64) as usize;
                bytes
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
            Ok(hex(&h.finalize()))
        })
    }

    /// The tensor's bytes read from its storage record with the `zip` crate and compared, in
    /// step, with the output's (see [`compare_in_step`]); the rest of the record is read so the
    /// crate checks its CRC-32. Returns the sha256 of the bytes.
    #[allow(clippy::too_many_arguments)]
    pub fn compare(
        &self,
        record: &str,
        offset: u64,
        len: u64,
        swap: usize,
        out: &InputFile,
        out_ranges: &[socair_plugin_api::ByteRange],
        name: &str,
    ) -> Result<String, Refusal> {
        self.with_record(record, offset, len, |bytes| {
            compare_in_step(out, out_ranges, bytes, swap, name)
        })
    }

    /// A gathered tensor: the `zip` crate finds the record and checks its CRC-32 over all its
    /// bytes; the elements are then read at the record's data offset, each one's place computed
    /// from its index ([`crate::layout::gathered_sha256_by_index`]), swapped like the output.
    pub fn hash_gathered(
        &self,
        record: &str,
        offset: u64,
        g: &crate::layout::Strided,
        swap: usize,
    ) -> Result<String, Refusal> {
        let mut archive = self.archive.clone();
        let mut entry = archive
            .by_name(record)
            .map_err(|e| format!("{}: record {record}: {e}", self.path.display()))?;
        let data_start = entry.data_start();
        std::io::copy(&mut entry, &mut std::io::sink())
            .map_err(|e| format!("record {record}: {e}"))?;
        let located = crate::layout::Strided {
            base: data_start
                .checked_add(offset)
                .ok_or_else(|| format!("record {record}: offset {offset} overflows"))?,
            ..g.clone()
        };
        let file = self.archive.clone().into_inner().file;
        crate::layout::gathered_sha256_by_index(&located, swap, |at, buf| {
            std::os::unix::fs::FileExt::read_exact_at(&*file, buf, at)
        })
        .map_err(|e| format!("record {record}: {e}"))
    }
}

/// Whether the file starts like a zip archive.
fn is_zip(path: &Path) -> bool {
    let mut head = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && head == *b"PK\x03\x04"
}

/// A file shared between clones, each with its own position (reads are positioned, `pread`).
#[derive(Clone, Debug)]
struct SharedFile {
    file: std::sync::Arc<std::fs::File>,
    pos: u64,
}

impl Read for SharedFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for SharedFile {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let len = self.file.metadata()?.len();
        let target = match to {
            std::io::SeekFrom::Start(n) => Some(n),
            std::io::SeekFrom::End(d) => len.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.pos)
    }
}

/// For the fault tests (`SOCAIR_FAULT=convert.flip-output`): flips the last byte of the tensor
/// placed last in the written output, as a disk or a bug would, before verification reads it.
fn flip_last_tensor_byte(conv: &Conversion, out: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let Some(at) = conv
        .placements
        .iter()
        .filter(|(i, _)| conv.tensors[*i].len > 0)
        .map(|(i, off)| off + conv.tensors[*i].len - 1)
        .max()
    else {
        return Ok(());
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(out)?;
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at)?;
    f.write_all_at(&[b[0] ^ 0x01], at)
}

/// Formats `--from` may name, and what each means.
pub const FROM_FORMATS: &[&str] = &[
    "torch-zip",
    "torch-legacy",
    "safetensors",
    "gguf",
    "onnx",
    "model-dir",
];
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
    /// The rules it ran under.
    pub rules: Rules,
}

/// Converts `src` (read as `from`) into a new file `dst` in format `to`: written to a
/// temporary name beside it, verified, fsynced and renamed; nothing is left on failure.
pub fn convert_path(
    src: &Path,
    dst: &Path,
    from: &str,
    to: &str,
    plugins: &PluginSet,
    rules: Rules,
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
    let conversion = match plan(&opened, to, plugins, artifact.is_dir, rules) {
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
    if crate::fault::armed("convert.flip-output") {
        flip_last_tensor_byte(&conversion, &tmp_out).map_err(|e| e.to_string())?;
    }
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
        rules,
    }))
}
