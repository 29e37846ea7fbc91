//! Conversion inside the airlock: the input gate, the copy into `work/` hashed while copied,
//! the conversion itself, and the signed derivation record (`https://socair.ai/derivation/v1`)
//! that binds the output to the input; and the recheck a reviewer runs from the input alone.

use crate::airlock::error::StoreError;
use crate::airlock::files::copy_hashing_with;
use crate::airlock::gate::verify_scan_attestation;
use crate::airlock::log::LogEntry;
use crate::airlock::policy::Policy;
use crate::airlock::review::check_covered;
use crate::airlock::signing::{self, Statement};
use crate::airlock::store::{Area, Store, DERIVATION, DERIVATIONS};
use crate::base::digest::hex;
use crate::base::{fault, output};
use crate::convert::rules::Rules;
use crate::convert::second_path::SecondPath;
use crate::convert::write::check_room;
use crate::convert::Done;
use crate::fingerprint::manifest::{self, TensorEntry};
use crate::read::artifact::ReaderChoice;
use crate::read::layout::{self, element_layout};
use crate::read::plugins::PluginSet;
use crate::read::source::sha256_of_path;
use crate::report::document::{Report, PICKLE_CHECK};
use ed25519_dalek::SigningKey;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The derivation record's predicate (`https://socair.ai/derivation/v1`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivationPredicate {
    /// Rule sets, name → version.
    pub rules: std::collections::BTreeMap<String, String>,
    /// The input.
    pub input: DerivationInput,
    /// The input's byte order and what was done about it.
    pub byte_order: String,
    /// Every tensor written.
    pub tensors: Vec<DerivedTensor>,
    /// `alias → kept name`.
    pub aliases: std::collections::BTreeMap<String, String>,
    /// `kept name → the rule that kept it`, for each alias group (`socair-convert/3`, which
    /// keeps the name transformers keeps; docs/convert-v3.md). Absent under `/1` and `/2`,
    /// which keep the first name in byte order.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub alias_rules: std::collections::BTreeMap<String, String>,
    /// What the input held that the output does not carry.
    pub not_carried: Vec<String>,
}

/// The input of a derivation.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivationInput {
    /// Its file name.
    pub name: String,
    /// Its sha256 (the attested subject).
    pub sha256: String,
    /// sha256 of the attestation envelope the conversion relied on.
    pub attestation_sha256: String,
    /// The attestation's NOT_TESTED checks (conversion does not require them accepted).
    pub not_tested: Vec<String>,
}

/// One tensor of a derivation.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivedTensor {
    /// Its name in the output.
    pub name: String,
    /// Its dtype.
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// sha256 of its bytes (little-endian, as in the output).
    pub sha256: String,
    /// Where they are in the input.
    pub source: DerivedSource,
    /// For a tensor gathered into row-major order (`socair-convert/2`): how, so a reviewer can
    /// redo it from the input alone. Absent for every tensor copied as it lies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gathered: Option<Gathered>,
}

/// How a non-contiguous tensor was gathered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gathered {
    /// Its shape, outermost first.
    pub shape: Vec<u64>,
    /// Its strides in elements, outermost first, as the checkpoint records them.
    pub strides: Vec<u64>,
    /// Its storage offset in elements (the source's `offset_bytes` / `element_size`).
    pub storage_offset_elements: u64,
    /// Bytes per element.
    pub element_size: u64,
    /// The procedure, in words.
    pub procedure: String,
}

/// What `gathered.procedure` says: the check a reviewer runs (docs/convert-v2.md).
pub const GATHER_PROCEDURE: &str = "for each flat index i from 0 to numel-1 in row-major order: split i into an index per dimension (innermost dimension varies fastest); the element's byte offset in the record is offset_bytes + element_size * sum(index[k] * strides[k]); read element_size bytes there (reversing each swap unit when byte_order says the input is big-endian); the sha256 of the concatenation is the tensor's sha256";

/// A tensor's place in the input.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivedSource {
    /// The zip record.
    pub record: String,
    /// Offset of the first byte in the record.
    pub offset_bytes: u64,
    /// Length (for a gathered tensor: the span from its first element to the end of its
    /// furthest one).
    pub size_bytes: u64,
    /// Where `offset_bytes` of the record lies in the input file, for inputs whose records are
    /// not zip records (torch-legacy storages). Absent for zip inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_offset_bytes: Option<u64>,
}

/// `socair airlock convert`: converts an attested torch checkpoint into the store's staging
/// with a signed derivation record (seed `convert-and-derivation-record.txt`), and logs the
/// outcome. Returns the output's sha256, its file name and the rules it ran under.
pub fn convert(
    store: &Store,
    checkpoint: &Path,
    attestation: &Path,
    key: &SigningKey,
    rules: Option<&str>,
    plugins: &PluginSet,
) -> Result<(String, String, Rules), StoreError> {
    let keyid = signing::keyid(&key.verifying_key());
    let mut subject = None;
    let result = convert_checked(
        store,
        checkpoint,
        attestation,
        (key, &keyid),
        rules,
        plugins,
        &mut subject,
    );
    // A refusal before the attestation named the subject (a key without the role, a pin) is
    // logged with the input's own sha256 (a local file's: an object is not fetched for it).
    if result.is_err() && subject.is_none() && !crate::read::source::is_remote(checkpoint) {
        subject = sha256_of_path(checkpoint).ok();
    }
    let mut e = LogEntry::new("convert", if result.is_ok() { "ok" } else { "refused" });
    e.subject = subject;
    e.key = Some(keyid);
    e.name = checkpoint
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    match &result {
        Ok((out_sha, _, _)) => e.output = Some(out_sha.clone()),
        Err(err) => e.detail = Some(err.to_string()),
    }
    store.append(e)?;
    result
}

/// The conversion's steps, in order: the deployment admits the key and plugins, the
/// attestation admits the input, the input is copied and converted, and the signed
/// derivation record is staged with the output.
fn convert_checked(
    store: &Store,
    checkpoint: &Path,
    attestation: &Path,
    (key, keyid): (&SigningKey, &str),
    rules: Option<&str>,
    plugins: &PluginSet,
    subject: &mut Option<String>,
) -> Result<(String, String, Rules), StoreError> {
    let refused = StoreError::Refused;
    let policy = store.policy()?;
    let rules = admit_deriver(&policy, keyid, rules, plugins)?;
    // 1. The attestation verifies through the gate's own check.
    let att = std::fs::read(attestation)
        .map_err(|e| StoreError::Unusable(format!("{}: {e}", attestation.display())))?;
    let (statement, report) = verify_scan_attestation(&policy, &att)?;
    check_covered(store, &policy, &report)?;
    let sha = statement.subject_sha256().unwrap_or_default().to_owned();
    *subject = Some(sha.clone());
    check_attested(&report)?;
    let name = report.artifact.name.clone();
    let (_work, copy) = copy_attested(store, checkpoint, &name, &sha)?;
    // 5. Conversion re-runs the Pickle check on the copy with no reviewed classes.
    let stem = Path::new(&name)
        .file_stem()
        .map_or(name.clone(), |s| s.to_string_lossy().into_owned());
    let out_name = format!("{stem}.safetensors");
    fault::point("convert.copied");
    let tmp = store.scratch(".tmp", "convert-")?;
    let out = tmp.path().join(&out_name);
    let from = match report.artifact.format.as_str() {
        f @ ("torch-zip" | "torch-legacy") => f,
        other => {
            return Err(refused(format!(
                "the attested artifact is {other}; airlock convert takes torch checkpoints (torch-zip, torch-legacy)"
            )))
        }
    };
    let done = crate::convert::convert_path(
        &copy,
        &out,
        from,
        "safetensors",
        plugins,
        &policy.pins.reader_choice(plugins),
        rules,
    )
    .map_err(StoreError::Unusable)?
    .map_err(refused)?;

    let input = DerivationInput {
        name: name.clone(),
        sha256: sha.clone(),
        attestation_sha256: hex(&Sha256::digest(&att)),
        not_tested: report
            .rows
            .iter()
            .filter(|r| r.status == "NOT_TESTED")
            .map(|r| r.check.clone())
            .collect(),
    };
    let predicate = derivation_predicate(&done, from, input, rules);
    let statement = Statement::new(
        &out_name,
        &done.sha256,
        signing::DERIVATION_PREDICATE,
        serde_json::to_value(&predicate).expect("plain data"),
    );
    let envelope = output::to_json_bytes(&signing::sign(
        &serde_json::to_vec(&statement).expect("plain data"),
        key,
    ));
    // Every input's record is kept under its own name: two inputs can convert to the same
    // bytes. The first one is also `derivation.dsse.json`.
    let record = format!("{DERIVATIONS}/{sha}.dsse.json");
    output::write_new(&tmp.path().join(DERIVATION), &envelope)
        .and_then(|()| std::fs::create_dir(tmp.path().join(DERIVATIONS)))
        .and_then(|()| output::write_new(&tmp.path().join(&record), &envelope))
        .map_err(|e| StoreError::Unusable(e.to_string()))?;
    fault::point("convert.written");
    let staged = stage_output(store, &done.sha256, tmp, &out_name, &record, &envelope)?;
    Ok((done.sha256, staged, rules))
}

/// The deployment admits this conversion: the plugins loaded are the ones it pins, the rules
/// (`--rules` or the newest) are within its pin, and the key has the role `derive`.
fn admit_deriver(
    policy: &Policy,
    keyid: &str,
    rules: Option<&str>,
    plugins: &PluginSet,
) -> Result<Rules, StoreError> {
    let refused = StoreError::Refused;
    // The plugins loaded must be the ones the deployment pins.
    policy.pins.check_loaded(plugins).map_err(refused)?;
    // The rules: --rules or the newest, within the deployment's pin.
    let rules = Rules::select(
        rules,
        policy.pins.rules.get("socair-convert").map(String::as_str),
    )
    .map_err(refused)?;
    if !policy
        .roles_of(keyid)
        .is_some_and(|r| r.iter().any(|r| r == "derive"))
    {
        return Err(refused(format!(
            "key {keyid} is not in the store's trust policy with role `derive`"
        )));
    }
    Ok(rules)
}

/// The attested report admits its file to conversion: one checkpoint file's, with no FAIL
/// or LEAD row and a PASSing Pickle opcode scan row.
fn check_attested(report: &Report) -> Result<(), StoreError> {
    let refused = StoreError::Refused;
    if report.artifact.format == "model directory" {
        return Err(refused(
            "the attestation is a model directory's: convert takes one checkpoint file and that file's own attestation".into(),
        ));
    }
    // 2. No FAIL or LEAD row. 3. The Pickle row PASSes.
    if let Some(r) = report
        .rows
        .iter()
        .find(|r| r.status == "FAIL" || r.status == "LEAD")
    {
        return Err(refused(format!(
            "the attestation's {:?} row is {}",
            r.check, r.status
        )));
    }
    if !report
        .rows
        .iter()
        .any(|r| r.check == PICKLE_CHECK && r.status == "PASS")
    {
        return Err(refused(
            "the attestation has no PASSing Pickle opcode scan row".into(),
        ));
    }
    Ok(())
}

/// Step 4: copies the checkpoint into the work area as `name`, hashing while copying, so
/// only the attested bytes (`sha`) are read from then on. The work directory lives as long
/// as the returned handle.
fn copy_attested(
    store: &Store,
    checkpoint: &Path,
    name: &str,
    sha: &str,
) -> Result<(tempfile::TempDir, PathBuf), StoreError> {
    let size = if crate::read::source::is_remote(checkpoint) {
        crate::read::source::InputFile::open_remote(checkpoint.to_str().unwrap_or_default())
            .map_err(|e| StoreError::Unusable(format!("{}: {e}", checkpoint.display())))?
            .len()
    } else {
        std::fs::metadata(checkpoint)
            .map_err(|e| StoreError::Unusable(format!("{}: {e}", checkpoint.display())))?
            .len()
    };
    let work = store.scratch("work", "convert-")?;
    check_room(&work.path().join("x"), size).map_err(StoreError::Refused)?;
    let copy = work.path().join(name);
    // Scratch: a crash discards it, so it is not fsynced.
    let copied = copy_hashing_with(checkpoint, &copy, false)?;
    if copied != sha {
        return Err(StoreError::Refused(format!(
            "{} hashes to {copied}, not the attested subject {sha}: it is not the file that was scanned",
            checkpoint.display()
        )));
    }
    Ok((work, copy))
}

/// The derivation record's predicate for a conversion done from a `from` checkpoint.
fn derivation_predicate(
    done: &Done,
    from: &str,
    input: DerivationInput,
    rules: Rules,
) -> DerivationPredicate {
    let tensors = done
        .conversion
        .tensors
        .iter()
        .zip(&done.tensor_sha256)
        .map(|(t, sha)| DerivedTensor {
            name: t.name.clone(),
            dtype: t.dtype.clone(),
            shape: t.shape.clone(),
            sha256: sha.clone(),
            source: DerivedSource {
                record: t.origin.as_ref().map_or_else(String::new, |o| o.0.clone()),
                offset_bytes: t.origin.as_ref().map_or(0, |o| o.1),
                size_bytes: t.extent,
                file_offset_bytes: (from == "torch-legacy").then_some(t.offset),
            },
            gathered: t.gather.as_ref().map(|g| Gathered {
                shape: g.shape.clone(),
                strides: g.strides.clone(),
                storage_offset_elements: t.origin.as_ref().map_or(0, |o| o.1) / g.elem,
                element_size: g.elem,
                procedure: GATHER_PROCEDURE.into(),
            }),
        })
        .collect();
    DerivationPredicate {
        rules: [
            ("socair-convert".to_owned(), rules.version().to_string()),
            (
                "socair-wo".to_owned(),
                done.read_rules
                    .get("socair-wo")
                    .cloned()
                    .unwrap_or_else(|| "1".to_owned()),
            ),
        ]
        .into(),
        input,
        byte_order: byte_order_text(done.conversion.swapped, &done.conversion.byteorder_records),
        tensors,
        aliases: done.conversion.aliases.iter().cloned().collect(),
        alias_rules: done.conversion.alias_rules.iter().cloned().collect(),
        not_carried: done.conversion.not_carried.clone(),
    }
}

/// Stages the output `tmp` (holding `out_name` and its records) as `incoming/<sha>`, or, when
/// those bytes are staged already, puts the record beside them; returns the staged file's name.
fn stage_output(
    store: &Store,
    sha: &str,
    tmp: tempfile::TempDir,
    out_name: &str,
    record: &str,
    envelope: &[u8],
) -> Result<String, StoreError> {
    let refused = StoreError::Refused;
    if !store.is_staged(sha)? {
        fault::point("convert.checked");
        if store.stage_converted(sha, tmp, out_name)? {
            fault::point("convert.renamed");
            return Ok(out_name.to_owned());
        }
        // Another process staged the same bytes between the check and the rename.
    }
    // The same bytes are staged already: converted by an earlier run (from this input or
    // another that converts to the same bytes), or pulled. The record goes beside them.
    let staged = store.staged(sha).map_err(|e| {
        refused(format!(
            "incoming/{sha} exists but holds no single staged artifact ({e}); it must be looked at by a person"
        ))
    })?;
    if store.rehash(sha)? != sha {
        return Err(refused(format!(
            "incoming/{sha}/{staged} no longer hashes to its name: the store was changed by hand"
        )));
    }
    if store
        .read_beside(Area::Incoming, sha, DERIVATION)?
        .is_none()
    {
        store.put_beside(sha, DERIVATION, envelope)?;
    }
    store.put_beside(sha, record, envelope)?;
    Ok(staged)
}

/// The record's `byte_order`: `big …` when the input was swapped, `little …` otherwise
/// (`recheck_derivation` reads the first word), followed by what the input's `byteorder`
/// record said — present, absent (read as little-endian, as `torch.load` does by default), or
/// a legacy file, which has none.
fn byte_order_text(swapped: bool, records: &[String]) -> String {
    let has = |v: &str| records.iter().any(|r| r == v);
    if swapped {
        return "big (byteorder record \"big\": swapped to little-endian; tensor hashes are of the little-endian bytes)".into();
    }
    let mut said = Vec::new();
    if has("little") {
        said.push("byteorder record \"little\"");
    }
    if has("absent") {
        said.push("no byteorder record: read as little-endian, as torch.load does");
    }
    if has("legacy") {
        said.push("legacy format, which has no byteorder record: storages read as little-endian");
    }
    if said.is_empty() {
        "little".into()
    } else {
        format!("little ({})", said.join("; "))
    }
}

/// Re-hashes every tensor of a verified derivation record from the input (its zip record)
/// and the output; the mismatches, if any.
pub fn recheck_derivation(
    statement: &Statement,
    input: &Path,
    output: &Path,
    plugins: &PluginSet,
) -> Result<Vec<String>, String> {
    let p: DerivationPredicate = serde_json::from_value(statement.predicate.clone())
        .map_err(|e| format!("not a derivation record: {e}"))?;
    let swapped = p.byte_order.starts_with("big");
    let out_sha = crate::read::source::sha256_of_path(output)
        .map_err(|e| format!("{}: {e}", output.display()))?;
    let mut problems = Vec::new();
    if statement.subject_sha256() != Some(out_sha.as_str()) {
        problems.push(format!(
            "{} hashes to {out_sha}, not the record's subject",
            output.display()
        ));
    }
    let manifest = manifest::fingerprint(output, plugins, &ReaderChoice::default())
        .map_err(|e| e.to_string())?;
    let output_tensors: std::collections::HashMap<&str, &TensorEntry> = manifest
        .tensors
        .iter()
        .map(|m| (m.name.as_str(), m))
        .collect();
    // Only zip inputs have records the `zip` crate can read (legacy records say where their
    // storages lie in the file instead).
    let second_path = if p
        .tensors
        .iter()
        .any(|t| t.source.file_offset_bytes.is_none())
    {
        SecondPath::open(input)
    } else {
        Err("not a zip input".to_owned())
    };
    for t in &p.tensors {
        let swap = if swapped {
            element_layout(&t.dtype).map_or(1, |(_, u)| u)
        } else {
            1
        };
        let from_input = rehash_source(input, second_path.as_ref(), t, swap)
            .unwrap_or_else(|e| format!("unreadable: {e}"));
        if from_input != t.sha256 {
            problems.push(format!(
                "{}: the input's bytes hash to {from_input}, the record says {}",
                t.name, t.sha256
            ));
        }
        match output_tensors.get(t.name.as_str()) {
            Some(m) if m.sha256 == t.sha256 => {}
            Some(m) => problems.push(format!(
                "{}: the output's bytes hash to {}, the record says {}",
                t.name, m.sha256, t.sha256
            )),
            None => problems.push(format!("{}: not in the output", t.name)),
        }
    }
    Ok(problems)
}

/// A derived tensor's bytes read again from the input as its record describes them: through
/// the `zip` crate for a zip record, or at `file_offset_bytes` for a torch-legacy storage; a
/// gathered tensor element by element ([`GATHER_PROCEDURE`]).
fn rehash_source(
    input: &Path,
    zip: Result<&SecondPath, &String>,
    t: &DerivedTensor,
    swap: usize,
) -> Result<String, String> {
    let strided = |base: u64, g: &Gathered| -> Result<layout::Strided, String> {
        if g.strides.len() != g.shape.len() || !(1..=16).contains(&g.element_size) {
            return Err(format!(
                "the record's layout is malformed: {} strides for {} dimensions, {}-byte elements",
                g.strides.len(),
                g.shape.len(),
                g.element_size
            ));
        }
        Ok(layout::Strided {
            base,
            shape: g.shape.clone(),
            strides: g.strides.clone(),
            elem: g.element_size,
            numel: g
                .shape
                .iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .ok_or("its shape overflows")?,
        })
    };
    let direct = || std::fs::File::open(input).map_err(|e| format!("{}: {e}", input.display()));
    match (&t.gathered, t.source.file_offset_bytes) {
        (None, None) => zip.map_err(Clone::clone)?.hash(
            &t.source.record,
            t.source.offset_bytes,
            t.source.size_bytes,
            swap,
        ),
        (Some(g), None) => zip.map_err(Clone::clone)?.hash_gathered(
            &t.source.record,
            t.source.offset_bytes,
            &strided(0, g)?,
            swap,
        ),
        (None, Some(at)) => {
            let file = direct()?;
            let mut h = Sha256::new();
            let mut buf = vec![0u8; 1 << 20];
            let mut left = t.source.size_bytes;
            let mut pos = at;
            while left > 0 {
                let n = left.min(buf.len() as u64) as usize;
                crate::base::pread::read_exact_at(&file, &mut buf[..n], pos)
                    .map_err(|e| format!("{}: {e}", input.display()))?;
                if swap > 1 {
                    for e in buf[..n].chunks_exact_mut(swap) {
                        e.reverse();
                    }
                }
                h.update(&buf[..n]);
                left -= n as u64;
                pos += n as u64;
            }
            Ok(hex(&h.finalize()))
        }
        (Some(g), Some(at)) => {
            let file = direct()?;
            layout::gathered_sha256_by_index(&strided(at, g)?, swap, |o, b| {
                crate::base::pread::read_exact_at(&file, b, o)
            })
            .map_err(|e| format!("{}: {e}", input.display()))
        }
    }
}
