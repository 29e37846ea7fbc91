//! Planning a conversion: which tensors are carried, under which names and dtypes, which are
//! exact aliases written once, and where the destination writer places each; or the reason
//! the input cannot be carried exactly.

use crate::convert::rules::{Rules, RULES_V1, RULES_V2};
use crate::convert::tied::{self, ModelConfig};
use crate::read::artifact::{data_path, FileJob};
use crate::read::layout::{self, element_layout};
use crate::read::plugins::PluginSet;
use socair_plugin_api::{
    abi_stable::std_types::{RString, RVec, Tuple2},
    ByteOrder, FormatWriterBox, OpenedFile, OutputLayout, PlanTensor, RowStatus, TensorDescriptor,
};

// The metadata keys under which the torch readers name an input's `byteorder` record and
// what torch.load returns each tensor as.
use socair_plugin_api::facts::Fact;

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
    pub gather: Option<layout::Strided>,
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
    /// Under `socair-convert/3`, `(kept name, the rule that kept it)` for each alias group, by
    /// kept name in byte order; empty under `/1` and `/2`, which keep the first name in byte
    /// order.
    pub alias_rules: Vec<(String, String)>,
    /// What was not carried.
    pub not_carried: Vec<String>,
    /// Whether any input was big-endian (swapped).
    pub swapped: bool,
    /// Each torch input's `byteorder` record as its reader named it (`little`, `big`,
    /// `absent`, `legacy`), in input order.
    pub byteorder_records: Vec<String>,
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
/// prefixes messages with each file's path (model directories); `config` is what a model
/// directory's `config.json` says, which `socair-convert/3` reads for tied weights.
pub fn plan(
    inputs: &[(&FileJob<'_>, OpenedFile)],
    to: &str,
    plugins: &PluginSet,
    multi_file_names: bool,
    rules: Rules,
    config: &ModelConfig,
) -> Result<Conversion, Refusal> {
    let (_, writer) = plugins
        .writer(to)
        .ok_or_else(|| format!("no loaded plugin writes {to}"))?;
    let mut tensors = Vec::new();
    let mut not_carried = Vec::new();
    let mut swapped = false;
    let mut byteorder_records: Vec<String> = Vec::new();
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
        not_carried_unread(opened, &prefix, &mut not_carried)?;
        not_carried.extend(opened.not_carried.iter().map(|s| format!("{prefix}{s}")));
        read_metadata(opened, &prefix, &mut not_carried, &mut byteorder_records);
        for t in opened.tensors.iter() {
            // Outside the format's model (an optimizer's state): fingerprinted, never carried;
            // the plugin names it in `not_carried`.
            if t.outside_model {
                continue;
            }
            let input = Input {
                job,
                prefix: &prefix,
                sources: &mut sources,
                swapped: &mut swapped,
            };
            tensors.push(plan_tensor(t, input, to, rules)?);
        }
    }

    let Sharing {
        dropped,
        aliases,
        alias_rules,
    } = share(&tensors, rules, config)?;
    if !aliases.is_empty() {
        not_carried.push(
            "memory sharing: exact aliases are written once and named in the metadata".into(),
        );
    }

    let kept = kept_tensors(tensors, dropped)?;
    let mut metadata = Vec::new();
    if to == "safetensors" {
        if from_torch {
            metadata.push(("format".to_owned(), "pt".to_owned()));
        }
        metadata.extend(aliases.iter().cloned());
    }
    let layout = lay_out(writer, to, &kept, &metadata)?;
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
        alias_rules,
        not_carried,
        swapped,
        byteorder_records,
        metadata,
        sources,
    })
}

/// What one input could not locate: a tensor outside the format's model is named as not
/// carried; anything else refuses the conversion.
fn not_carried_unread(
    opened: &OpenedFile,
    prefix: &str,
    not_carried: &mut Vec<String>,
) -> Result<(), Refusal> {
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
    Ok(())
}

/// What a conversion does not carry of an input's metadata (every key: the file's own), and
/// the byte order record its reader gives as a fact ([`Fact::ByteOrderRecord`], for the
/// derivation record); what torch.load returns tensors as ([`Fact::TorchTensorKind`]) is for
/// loaders, and the torch readers name those types as not carried themselves.
fn read_metadata(
    opened: &OpenedFile,
    prefix: &str,
    not_carried: &mut Vec<String>,
    byteorder_records: &mut Vec<String>,
) {
    for Tuple2(k, v) in opened.metadata.iter() {
        not_carried.push(format!("{prefix}metadata {k:?} = {v:?}"));
    }
    for fact in opened.facts.iter() {
        if let Fact::ByteOrderRecord(record) = fact {
            byteorder_records.push(record.as_str().to_owned());
        }
    }
}

/// Where a tensor is planned from: its input and that input's message prefix, the files
/// tensors are read from so far (each tensor names its file by index), and whether any was
/// big-endian.
struct Input<'a, 'j> {
    /// The input file.
    job: &'a FileJob<'j>,
    /// Its path and `: ` when the conversion reads several files, else empty.
    prefix: &'a str,
    /// The files tensors are read from, in first-use order.
    sources: &'a mut Vec<String>,
    /// Set when a tensor is swapped from big-endian.
    swapped: &'a mut bool,
}

/// Plans one tensor of the format's model: its dtype in the output's names, the one byte
/// range it is carried from (gathered when strided, under the rules that allow it), its
/// source file and its byte swap; or why it cannot be carried exactly.
fn plan_tensor(
    t: &TensorDescriptor,
    input: Input<'_, '_>,
    to: &str,
    rules: Rules,
) -> Result<PlannedTensor, Refusal> {
    let prefix = input.prefix;
    let name = t.name.to_string();
    let element = t
        .element_type
        .as_ref()
        .map(|e| e.to_string())
        .into_option()
        .ok_or_else(|| {
            format!(
                "{prefix}tensor {name:?} is {} (block-quantized): it has no exact form in {to}",
                t.dtype
            )
        })?;
    let dtype = match to {
        "safetensors" => (element_layout(&element).is_some()
            || layout::packed_bits(&element).is_some())
        .then(|| element.clone()),
        "gguf" => GGUF_DTYPES
            .contains(&element.as_str())
            .then(|| element.clone()),
        _ => None,
    }
    .ok_or_else(|| format!("{prefix}tensor {name:?} is {element}, which {to} cannot hold"))?;
    let (_, swap_unit) = element_layout(&element).unwrap_or((1, 1));
    if t.inline.is_some() {
        return Err(format!(
            "{prefix}tensor {name:?} has no bytes in the file as they are (its reader decoded them from varints, or inflated or assembled them: a compressed member, HDF5 compact storage or chunks out of row-major order): socair converts only bytes it can read twice from the input itself"
        ));
    }
    if t.strides.is_some() && t.file.is_some() {
        return Err(format!(
            "{prefix}tensor {name:?} is strided and lies in another file: no format writes that, and socair does not read it"
        ));
    }
    let gather = layout::strided(t, input.job.input.len())
        .map_err(|e| format!("{prefix}tensor {name:?}: {e}"))?;
    if let (Some(g), Rules::V1) = (&gather, rules) {
        return Err(format!(
            "{prefix}tensor {name:?} is not contiguous (shape {:?}, stride {:?}): {} carries contiguous tensors only; {} gathers them into row-major order",
            g.shape, g.strides, RULES_V1, RULES_V2
        ));
    }
    let [range] = t.ranges.as_slice() else {
        return Err(format!(
            "{prefix}tensor {name:?} is split into {} byte ranges (such as HDF5 chunks): a conversion carries a tensor from one range of the input",
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
        None => input.job.rel.clone(),
        Some(file) => data_path(&input.job.rel, file)
            .map_err(|why| format!("{prefix}tensor {name:?}: {why}"))?,
    };
    let index = input
        .sources
        .iter()
        .position(|s| *s == source)
        .unwrap_or_else(|| {
            input.sources.push(source);
            input.sources.len() - 1
        });
    let swap = if t.byte_order == ByteOrder::Big && swap_unit > 1 {
        *input.swapped = true;
        swap_unit
    } else {
        1
    };
    Ok(PlannedTensor {
        input: index,
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
    })
}

/// Which planned tensors are written once under another's name.
struct Sharing {
    /// Per tensor: whether it is an alias, not written itself.
    dropped: Vec<bool>,
    /// `(alias, kept name)`, by alias in byte order.
    aliases: Vec<(String, String)>,
    /// `(kept name, the rule that kept it)` under `socair-convert/3`, by kept name.
    alias_rules: Vec<(String, String)>,
}

/// Sharing: exact aliases are written once; overlapping non-aliases are refused.
fn share(
    tensors: &[PlannedTensor],
    rules: Rules,
    config: &ModelConfig,
) -> Result<Sharing, Refusal> {
    let groups = overlap_groups(tensors)?;
    // Each group of more than one name is written once, under the name the rules keep: the
    // first in byte order under /1 and /2, transformers' choice under /3.
    let mut dropped = vec![false; tensors.len()];
    let mut aliases = Vec::new();
    let mut alias_rules = Vec::new();
    for mut group in groups.into_iter().filter(|g| g.len() > 1) {
        group.sort_by(|&a, &b| tensors[a].name.as_bytes().cmp(tensors[b].name.as_bytes()));
        let kept_at = if rules >= Rules::V3 {
            let names: Vec<&str> = group.iter().map(|&i| tensors[i].name.as_str()).collect();
            let kept = tied::choose(&names, config)?;
            alias_rules.push((names[kept.index].to_owned(), kept.rule));
            kept.index
        } else {
            0
        };
        let kept = tensors[group[kept_at]].name.clone();
        for (at, &i) in group.iter().enumerate() {
            if at != kept_at {
                dropped[i] = true;
                aliases.push((tensors[i].name.clone(), kept.clone()));
            }
        }
    }
    alias_rules.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    aliases.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(Sharing {
        dropped,
        aliases,
        alias_rules,
    })
}

/// The tensors with bytes grouped by the storage they share, in input and offset order; a
/// tensor that overlaps another without being the same tensor refuses the conversion.
fn overlap_groups(tensors: &[PlannedTensor]) -> Result<Vec<Vec<usize>>, Refusal> {
    let mut order: Vec<usize> = (0..tensors.len()).filter(|&i| tensors[i].len > 0).collect();
    order.sort_by_key(|&i| (tensors[i].input, tensors[i].offset, tensors[i].extent));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group: Vec<usize> = Vec::new();
    let mut group_end = 0u64;
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
            groups.push(std::mem::take(&mut group));
        }
        group.push(i);
        group_end = t.offset + t.extent;
    }
    groups.push(group);
    Ok(groups)
}

/// The tensors written (aliases dropped): at least one, and no two of one name.
fn kept_tensors(
    tensors: Vec<PlannedTensor>,
    dropped: Vec<bool>,
) -> Result<Vec<PlannedTensor>, Refusal> {
    let kept: Vec<PlannedTensor> = tensors
        .into_iter()
        .zip(dropped)
        .filter(|(_, d)| !d)
        .map(|(t, _)| t)
        .collect();
    if kept.is_empty() {
        return Err(
            "no tensor to carry: the input holds no tensor a conversion writes (nothing of its model, or nothing at all), and an empty file is never written"
                .into(),
        );
    }
    let mut names = std::collections::HashSet::new();
    for t in &kept {
        if !names.insert(t.name.as_str()) {
            return Err(format!(
                "two tensors are named {:?} (in different files)",
                t.name
            ));
        }
    }
    Ok(kept)
}

/// Asks the destination's writer to place `kept` with `metadata`, and checks its answer.
fn lay_out(
    writer: &FormatWriterBox,
    to: &str,
    kept: &[PlannedTensor],
    metadata: &[(String, String)],
) -> Result<OutputLayout, Refusal> {
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
    check_layout(&layout.header, &layout.placements, layout.total_len, kept)?;
    Ok(layout)
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
