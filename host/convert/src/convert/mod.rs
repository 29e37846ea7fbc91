//! Conversion: `socair-convert/1` (seed `convert-and-derivation-record.txt`) and the
//! explicit-format conversions between the formats the plugins read and write.
//!
//! A conversion reads each tensor's bytes from where its reader located them and copies them
//! into the layout the destination writer plans; it runs nothing from the input. What cannot
//! be carried exactly is refused, with the reason: a tensor that is not contiguous, carries
//! torch's conj/neg bit, overlaps another without being the same tensor, or has a dtype the
//! destination lacks. Exact aliases (the same bytes, dtype and shape, such as tied embeddings)
//! are written once, with `name: kept name` in the safetensors metadata: under the first name
//! in byte order (`/1`, `/2`), or the name transformers keeps (`/3`, [`tied`]); disjoint views
//! of one storage are each written. The safetensors
//! metadata holds `"format": "pt"` first when the input is a torch checkpoint, then the
//! aliases in byte order. Big-endian inputs are swapped to little-endian.
//!
//! The output is written to a temporary file, fsynced, and verified: the destination's own
//! reader must find it sound with the planned tensors, and every tensor's bytes must hash equal
//! to its bytes read from the input by a second path (for torch checkpoints, the `zip` crate
//! reading the storage record, independently of the plugin that located it). For a torch
//! checkpoint the plugin reads headers only and the `zip` crate checks the CRC-32 of every
//! storage record, so that the input is read once by the writer and once by the second path.
//!
//! Lives here: the rule sets ([`rules`]), the planner ([`plan`]), `/3`'s choice of kept names
//! ([`tied`], with transformers' pairs in [`tied_table`]), the writer ([`write`]),
//! verification ([`verify`]) and the zip reader of the second path ([`second_path`]), each its
//! own file; this file runs them in order. May use `base`, `read` and `fingerprint`; never
//! `report`, `airlock` or `cli`.

pub mod plan;
pub mod rules;
pub mod second_path;
pub mod tied;
pub mod tied_table;
pub mod verify;
pub mod write;

use crate::base::{fault, scratch};
use crate::read::artifact::{Artifact, ReaderChoice};
use crate::read::plugins::{effective_rules, PluginSet};
use crate::read::source::InputFile;
use plan::{plan, Conversion, Refusal};
use rules::Rules;
use std::path::Path;
use tied::ModelConfig;

/// For the fault tests (`SOCAIR_FAULT=convert.flip-output`): flips the last byte of the tensor
/// placed last in the written output, as a disk or a bug would, before verification reads it.
fn flip_last_tensor_byte(conv: &Conversion, out: &Path) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let Some(at) = conv
        .placements
        .iter()
        .filter(|(i, _)| conv.tensors[*i].len > 0)
        .map(|(i, off)| off + conv.tensors[*i].len - 1)
        .max()
    else {
        return Ok(());
    };
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(out)?;
    let mut b = [0u8; 1];
    f.seek(SeekFrom::Start(at))?;
    f.read_exact(&mut b)?;
    f.seek(SeekFrom::Start(at))?;
    f.write_all(&[b[0] ^ 0x01])
}

/// Formats `--from` may name, and what each means.
pub const FROM_FORMATS: &[&str] = &[
    "torch-zip",
    "torch-legacy",
    "safetensors",
    "gguf",
    "onnx",
    "model-dir",
    // TensorFlow: a SavedModel directory (its variables), and the files of its plugin.
    "savedmodel",
    "tf-checkpoint",
    "tf-graphdef",
    "tflite",
    // Keras: a `.keras` archive (its stored model.weights.h5), and an HDF5 file (a legacy
    // `.h5` model or a `.weights.h5`), each read by the keras plugin.
    "keras",
    "hdf5",
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
    /// The rule sets the input's readers ran (`socair-wo` and its version, for a pickle).
    pub read_rules: std::collections::BTreeMap<String, String>,
}

/// Converts `src` (read as `from`) into a new file `dst` in format `to`: written to a
/// temporary name beside it, verified, fsynced and renamed; nothing is left on failure.
pub fn convert_path(
    src: &Path,
    dst: &Path,
    from: &str,
    to: &str,
    plugins: &PluginSet,
    choice: &ReaderChoice,
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
        Artifact::resolve_with(src, plugins, choice, false).map_err(|e| e.to_string())?;
    // A SavedModel is a directory: read as a model directory whose saved_model.pb the
    // SavedModel reader reads (its variables are the tensors carried).
    let dir_format = from == "model-dir" || from == "savedmodel";
    if from == "savedmodel" && artifact.is_dir {
        let read = artifact
            .jobs
            .iter()
            .any(|j| j.rel == "saved_model.pb" && j.reader.1.format().as_str() == "savedmodel");
        if !read {
            return Ok(Err(format!(
                "{} holds no saved_model.pb the SavedModel reader reads: not a SavedModel directory",
                src.display()
            )));
        }
    }
    if artifact.is_dir != dir_format {
        return Ok(Err(format!(
            "{} is {}, not {from}",
            src.display(),
            if artifact.is_dir {
                "a directory (--from model-dir, or savedmodel)"
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
    // A torch checkpoint's reader reads its headers only: the second path reads every storage
    // record whole through the `zip` crate, which checks its CRC-32 (those no tensor carries
    // too, `SecondPaths::check_storage_records`), so the reader's own CRC-32 pass would read
    // every byte once more, and before the first is written. Other formats' readers check
    // what only they know (a TensorFlow checkpoint's CRC-32Cs, say), so read in full.
    let storage_records_by_second_path = from == "torch-zip";
    let options = socair_plugin_api::ReadOptions {
        header_only: storage_records_by_second_path,
        ..Default::default()
    };
    let opened = artifact.open_all(&options).map_err(|e| e.to_string())?;
    // A model directory's config.json says whether transformers ties its weights (/3).
    let config = match artifact.files.iter().find(|f| f.rel == "config.json") {
        Some(f) if artifact.is_dir && rules >= Rules::V3 => ModelConfig::read(&f.path),
        _ => ModelConfig::Absent,
    };
    let conversion = match plan(&opened, to, plugins, artifact.is_dir, rules, &config) {
        Ok(c) => c,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let dir = dst
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Scratch left in this directory by a conversion that was killed is removed first; this
    // one's is named after this process, so a later run can do the same for it.
    scratch::remove_stale(dir, ".socair-");
    let tmp = scratch::scratch_dir(dir, ".socair-convert-")
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    fault::point("convert.scratch");
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
    let (sha256, tensor_sha256) = match write_and_check(
        &conversion,
        to,
        &inputs,
        &tmp_out,
        plugins,
        storage_records_by_second_path,
    )? {
        Ok(done) => done,
        Err(refusal) => return Ok(Err(refusal)),
    };
    // No-clobber rename: a destination created meanwhile is not replaced.
    std::fs::hard_link(&tmp_out, dst).map_err(|e| format!("{}: {e}", dst.display()))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    let read_rules = artifact
        .jobs
        .iter()
        .flat_map(|job| effective_rules(job.reader.0, &artifact.rules))
        .collect();
    Ok(Ok(Done {
        conversion,
        sha256,
        tensor_sha256,
        rules,
        read_rules,
    }))
}

/// Writes the output and checks it, side by side: each tensor, once the writer has put it in
/// the file, is read back and compared with the input read by a second path (on the other
/// cores, while the writer goes on, hashing what it writes); the output is written back to the
/// disk as it is written, and the last fsync runs beside the output's own reader reading it.
/// With `storage_records`, the second path also checks the CRC-32 of every storage record no
/// tensor carries ([`verify::SecondPaths::check_storage_records`]). Returns the output's sha256
/// and each tensor's, or the refusal; `Err` for an error that is no refusal.
fn write_and_check(
    conv: &Conversion,
    to: &str,
    inputs: &[&InputFile],
    out: &Path,
    plugins: &PluginSet,
    storage_records: bool,
) -> Result<Result<(String, Vec<String>), Refusal>, String> {
    use rayon::prelude::*;
    let failed = |e: Refusal| Ok(Err(format!("verification of the output failed: {e}")));
    let second = match verify::SecondPaths::open(conv, inputs, storage_records) {
        Ok(s) => s,
        Err(e) => return failed(e),
    };
    let planned = verify::planned_ranges(conv);
    // The tensor placed last: the fault test flips its last byte once it is written.
    let flip = fault::armed("convert.flip-output")
        .then(|| {
            conv.placements
                .iter()
                .filter(|(i, _)| conv.tensors[*i].len > 0)
                .max_by_key(|(i, off)| off + conv.tensors[*i].len)
                .map(|&(i, _)| i)
        })
        .flatten();
    let progress = crate::base::progress::Progress::bytes(
        conv.total_len + conv.tensors.iter().map(|t| t.len).sum::<u64>(),
        "writing and verifying",
    );
    let (written, checked) = std::thread::scope(|scope| {
        let (ready, tensors) = std::sync::mpsc::channel::<usize>();
        let checking = scope.spawn(|| {
            let mut tensors = tensors.into_iter().peekable();
            // The file exists, at its final length, once the first tensor is ready.
            tensors.peek()?;
            let file = match InputFile::open_with(out, false) {
                Ok(f) => f,
                Err(e) => return Some(Err(format!("{}: {e}", out.display()))),
            };
            let mut checked: Vec<(usize, Result<String, Refusal>)> = tensors
                .par_bridge()
                .map(|i| (i, second.check(i, &file, &planned[i], &progress)))
                .collect();
            checked.sort_by_key(|(i, _)| *i);
            Some(Ok(checked))
        });
        let mut flip_failed = None;
        let written = write::write(conv, inputs, out, &progress, &mut |i| {
            if flip == Some(i) {
                flip_failed = flip_last_tensor_byte(conv, out).err();
            }
            let _ = ready.send(i);
        });
        drop(ready);
        let checked = checking.join();
        (written.map(|w| (w, flip_failed)), checked)
    });
    let ((sha256, syncing), flip_failed) = match written {
        Ok(w) => w,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if let Some(e) = flip_failed {
        return Err(e.to_string());
    }
    if let Err(e) = second.check_storage_records() {
        return failed(e);
    }
    // The last fsync beside the output's own reader reading it back; both before it is kept.
    let found = verify::reader_check(conv, to, out, plugins);
    syncing
        .wait()
        .map_err(|e| format!("{}: {e}", out.display()))?;
    let found = match found {
        Ok(f) => f,
        Err(e) => return failed(e),
    };
    let checked = match checked {
        Ok(Some(Ok(c))) if found == planned && c.len() == conv.tensors.len() => c,
        Ok(Some(Err(e))) => return failed(e),
        // The reader places a tensor elsewhere than the writer planned (or nothing was
        // checked): every tensor is checked again where the reader places it.
        _ => {
            return match verify::check_all(&second, out, &found) {
                Ok(h) => Ok(Ok((sha256, h))),
                Err(e) => failed(e),
            }
        }
    };
    let mut tensor_sha256 = Vec::with_capacity(checked.len());
    for (_, result) in checked {
        match result {
            Ok(h) => tensor_sha256.push(h),
            Err(e) => return failed(e),
        }
    }
    Ok(Ok((sha256, tensor_sha256)))
}
