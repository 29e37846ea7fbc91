//! Verifying a written output before it is kept: the destination's own reader must find it
//! sound with exactly the planned tensors, and every tensor must equal the same tensor read
//! from the input by a second path, byte for byte.

use crate::base::digest::hex;
use crate::base::progress::Progress;
use crate::convert::plan::{Conversion, Refusal};
use crate::convert::second_path::{is_zip, SecondPath};
use crate::read::layout;
use crate::read::plugins::PluginSet;
use crate::read::source::InputFile;
use sha2::{Digest, Sha256};
use socair_plugin_api::RowStatus;
use std::io::Read;
use std::path::Path;

/// Checks every tensor of a written output at the ranges its format's reader placed it
/// (`found`, from [`reader_check`]) against the same tensor read from the input by a second
/// path (the zip record through the `zip` crate, for torch inputs), in parallel; returns each
/// tensor's hash.
pub fn check_all(
    second: &SecondPaths<'_>,
    out: &Path,
    found: &[Vec<socair_plugin_api::ByteRange>],
) -> Result<Vec<String>, Refusal> {
    use rayon::prelude::*;
    let file = InputFile::open_with(out, false).map_err(|e| format!("{}: {e}", out.display()))?;
    let progress = Progress::bytes(
        second.conv.tensors.iter().map(|t| t.len).sum(),
        "verifying the output",
    );
    (0..second.conv.tensors.len())
        .into_par_iter()
        .map(|i| second.check(i, &file, &found[i], &progress))
        .collect()
}

/// Where the writer placed each tensor: one range each, `(offset, len)`, by tensor index.
pub fn planned_ranges(conv: &Conversion) -> Vec<Vec<socair_plugin_api::ByteRange>> {
    let mut ranges = vec![Vec::new(); conv.tensors.len()];
    for &(i, offset) in &conv.placements {
        ranges[i] = vec![socair_plugin_api::ByteRange {
            offset,
            len: conv.tensors[i].len,
        }];
    }
    ranges
}

/// The output's own reader must find it sound with exactly the planned tensors (names, dtypes
/// and shapes); returns the byte ranges it places each one at, by tensor index.
pub fn reader_check(
    conv: &Conversion,
    to: &str,
    out: &Path,
    plugins: &PluginSet,
) -> Result<Vec<Vec<socair_plugin_api::ByteRange>>, Refusal> {
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
    Ok(found)
}

/// The second paths into a conversion's inputs: each zip input opened once by the `zip`
/// crate; other inputs (safetensors, GGUF, torch-legacy), which have no container to read
/// through, re-read directly.
pub struct SecondPaths<'c> {
    conv: &'c Conversion,
    inputs: Vec<std::path::PathBuf>,
    zips: Vec<Option<SecondPath>>,
    /// Whether every storage record is checked here ([`SecondPaths::check_storage_records`]).
    storage_records: bool,
}

impl<'c> SecondPaths<'c> {
    /// Opens the zip inputs of `conv` with the `zip` crate: those a tensor is read from, and
    /// every one when `storage_records` (their reader read headers only, so the CRC-32s of the
    /// storage records no tensor carries are checked here too).
    pub fn open(
        conv: &'c Conversion,
        inputs: &[&InputFile],
        storage_records: bool,
    ) -> Result<Self, Refusal> {
        let zips = inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                if (storage_records
                    || conv
                        .tensors
                        .iter()
                        .any(|t| t.input == i && t.origin.is_some()))
                    && is_zip(input.path())
                {
                    SecondPath::open(input.path()).map(Some)
                } else {
                    Ok(None)
                }
            })
            .collect::<Result<Vec<_>, Refusal>>()?;
        Ok(SecondPaths {
            conv,
            inputs: inputs.iter().map(|i| i.path().to_owned()).collect(),
            zips,
            storage_records,
        })
    }

    /// When opened with `storage_records`: the storage records of each zip input that no
    /// tensor's check reads (a tensor the conversion does not carry, say) are read through the
    /// `zip` crate, which checks their CRC-32s; with the tensors' checks, every storage record
    /// is checked. At most 64 MiB + 8x the input is read, as the reader's own pass allows.
    pub fn check_storage_records(&self) -> Result<(), Refusal> {
        if !self.storage_records {
            return Ok(());
        }
        for (i, zip) in self.zips.iter().enumerate() {
            let Some(zip) = zip else { continue };
            let read: std::collections::HashSet<&str> = self
                .conv
                .tensors
                .iter()
                .filter(|t| t.input == i)
                .filter_map(|t| t.origin.as_ref().map(|(record, _)| record.as_str()))
                .collect();
            let size = std::fs::metadata(&self.inputs[i])
                .map_err(|e| format!("{}: {e}", self.inputs[i].display()))?
                .len();
            let budget = socair_plugin_kit::model::memory_bound(size);
            zip.check_storage_records(&read, budget)?;
        }
        Ok(())
    }

    /// Checks tensor `i`: its bytes read back from `out` at `ranges` and, in step, the same
    /// tensor read from the input by a second path must be equal byte for byte, and the
    /// output's bytes are hashed once. (A gathered tensor's second path computes each
    /// element's place itself, so there the two are compared by hash.) Returns the hash.
    pub fn check(
        &self,
        i: usize,
        file: &InputFile,
        ranges: &[socair_plugin_api::ByteRange],
        progress: &Progress,
    ) -> Result<String, Refusal> {
        let t = &self.conv.tensors[i];
        let _counted = Counted(progress, t.len);
        let input = &self.inputs[t.input];
        let in_input = |e: std::io::Error| format!("{}: {e}", input.display());
        match (&t.origin, &self.zips[t.input], &t.gather) {
            (Some((record, offset)), Some(zip), None) => {
                zip.with_record(record, *offset, t.len, |bytes| {
                    compare_in_step(file, ranges, bytes, t.swap, &t.name)
                })
            }
            (_, None, None) => {
                let mut direct = std::fs::File::open(input).map_err(in_input)?;
                std::io::Seek::seek(&mut direct, std::io::SeekFrom::Start(t.offset))
                    .map_err(in_input)?;
                compare_in_step(file, ranges, &mut direct.take(t.len), t.swap, &t.name)
            }
            (origin, zip, Some(g)) => {
                let mut h = Sha256::new();
                for r in ranges {
                    file.for_each_chunk(r.offset, r.len, |c| h.update(c))
                        .map_err(|e| format!("{}: {e}", file.path().display()))?;
                }
                let in_output = hex(&h.finalize());
                let second = match (origin, zip) {
                    (Some((record, offset)), Some(zip)) => {
                        zip.hash_gathered(record, *offset, g, t.swap)?
                    }
                    _ => {
                        let direct = std::fs::File::open(input).map_err(in_input)?;
                        layout::gathered_sha256_by_index(g, t.swap, |at, buf| {
                            crate::base::pread::read_exact_at(&direct, buf, at)
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
    }
}

/// Counts a tensor's bytes as verified when its check ends, whichever way it ends.
struct Counted<'p>(&'p Progress, u64);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.add(self.1);
    }
}

/// Reads a tensor's bytes from the output (`ranges` of `out`) and, in step, as many bytes from
/// `second` (swapped in `swap`-byte units like the output); they must be equal. Returns the
/// sha256 of the bytes, hashed once.
pub fn compare_in_step(
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
