//! A torch zip checkpoint as a whole: the zip layer, the records torch.save writes, the
//! pickle run through `socair-wo/1`, and every storage matched to its record; then the
//! state-dict model (`ReadStateDict`) that `socair tensors` and conversion read.

use crate::pickle::{self, Object, Severity, TensorModel, Value};
use crate::zip::{self, ReadAt};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The largest `data.pkl` read into memory. State dicts take about 100 bytes of pickle per
/// tensor, so this leaves room for millions of tensors and large training checkpoints.
pub const MAX_PICKLE_LEN: u64 = 1 << 30;

/// Deepest nesting of mappings walked for tensor names.
pub const MAX_NAME_DEPTH: usize = 64;

/// Records torch.save writes besides `data.pkl` and the storages.
const KNOWN_RECORDS: &[&str] = &[
    "byteorder",
    "version",
    ".data/version",
    ".format_version",
    ".storage_alignment",
    ".data/serialization_id",
];

/// A tensor with its state-dict name.
pub type NamedTensor = (String, Rc<TensorModel>);

/// A finding with its place in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// Where (`zip record …`, `data.pkl byte 123 (GLOBAL)`).
    pub place: String,
    /// What.
    pub reason: String,
}

/// Byte order of the storages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Little-endian (also what an absent `byteorder` record means).
    Little,
    /// Big-endian.
    Big,
}

/// A named tensor of the state-dict model, located in the file.
#[derive(Debug, Clone)]
pub struct LocatedTensor {
    /// Its name (nested keys joined with `.`).
    pub name: String,
    /// The grammar's model of it.
    pub model: Rc<TensorModel>,
    /// Where its storage's first element lies in the file.
    pub record_offset: u64,
    /// The storage record's name (for a legacy file, `storages[<key>]`).
    pub record: String,
    /// Where its storage starts within the record: 0, except for a legacy storage view.
    pub record_base: u64,
}

/// Everything read from a checkpoint.
#[derive(Debug, Default)]
pub struct Analysis {
    /// The archive prefix, if the zip layer was sound.
    pub prefix: Option<String>,
    /// Every finding of the zip layer, the records and the pickle.
    pub findings: Vec<Finding>,
    /// The byte order (`None` when the `byteorder` record is absent: read as little-endian).
    pub byteorder_record: Option<Endian>,
    /// The pickle protocol.
    pub protocol: Option<u8>,
    /// Storages named by the pickle.
    pub storage_count: usize,
    /// Records whose CRC-32 was verified.
    pub crc_verified: usize,
    /// Records whose CRC-32 was not read (header-only).
    pub crc_skipped: usize,
    /// Tensors of the state-dict model that can be read in place.
    pub tensors: Vec<LocatedTensor>,
    /// Tensors (by name) or the whole file (`None`) that cannot be, with why.
    pub unread: Vec<(Option<String>, String)>,
    /// Tensors outside the state-dict model, with why.
    pub outside: Vec<(String, String)>,
    /// What the checkpoint holds besides its state dict's tensors.
    pub not_carried: Vec<String>,
    /// Reviewed globals the pickle used.
    pub reviewed_used: Vec<String>,
    /// Whether the archive looks like a TorchScript archive.
    pub torchscript: bool,
    /// Which pickle the findings' offsets count in (`data.pkl`, or the legacy main pickle).
    pub pickle_name: String,
    /// Whether the file is in torch's legacy (non-zip) format.
    pub legacy: bool,
    /// The legacy format's `sys_info`, as read.
    pub sys_info: Option<String>,
    /// Where the legacy main pickle starts in the file.
    pub main_pickle_offset: Option<u64>,
}

impl Analysis {
    /// The worst finding.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// The storages' byte order as read.
    pub fn endian(&self) -> Endian {
        self.byteorder_record.unwrap_or(Endian::Little)
    }

    pub(crate) fn add(
        &mut self,
        severity: Severity,
        place: impl Into<String>,
        reason: impl Into<String>,
    ) {
        self.findings.push(Finding {
            severity,
            place: place.into(),
            reason: reason.into(),
        });
    }
}

/// Options for [`analyze`].
#[derive(Debug, Clone, Default)]
pub struct AnalyzeOptions {
    /// Skip the CRC-32 of storage records (their bytes are not read).
    pub header_only: bool,
    /// Globals the operator reviewed.
    pub reviewed: Vec<String>,
}

const TORCHSCRIPT_FINDING: &str = "a TorchScript archive (torch.jit.save): torch.load hands it to the TorchScript loader, which compiles and runs its code; it is never a weights-only checkpoint";

/// Records only TorchScript archives hold: `<prefix>/code/…` and `<prefix>/constants.pkl`.
fn is_torchscript_record(name: &str) -> bool {
    match name.split_once('/') {
        Some((_, rel)) => rel.starts_with("code/") || rel == "constants.pkl",
        None => false,
    }
}

/// A file that does not start like a zip: if a zip end record lies near its end, it is a zip
/// with bytes in front (a polyglot: torch reads the front, zip readers the back) and the zip
/// layer refuses it with the details; a raw pickle stream (torch's legacy format, or a plain
/// pickle) is outside what this reader models; anything else is not a checkpoint at all.
fn not_a_zip(src: &(impl ReadAt + ?Sized)) -> Option<(Severity, String)> {
    let size = src.size();
    let mut head = [0u8; 8];
    let n = size.min(8) as usize;
    src.read_exact_at(0, &mut head[..n]).ok()?;
    let head = &head[..n];
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PYTORCH1") {
        return None;
    }
    // The end record is 22 bytes plus a comment of at most 65535.
    let tail_len = size.min(22 + 65_535);
    let mut tail = vec![0u8; tail_len as usize];
    src.read_exact_at(size - tail_len, &mut tail).ok()?;
    if tail.windows(4).any(|w| w == b"PK\x05\x06") {
        return None;
    }
    Some(if head.first() == Some(&0x80) {
        (
            Severity::Lead,
            "a raw pickle stream (torch's legacy format or a plain pickle), not a torch zip checkpoint: socair-wo/1 does not model it, so nothing has checked what loading it would run".into(),
        )
    } else {
        (
            Severity::Lead,
            "neither a zip archive nor a pickle: not a torch checkpoint, whatever its name".into(),
        )
    })
}

/// The first bytes of a file, as the host's detection sees them.
fn head_of(src: &(impl ReadAt + ?Sized)) -> Vec<u8> {
    let mut head = vec![0u8; src.size().min(4096) as usize];
    match src.read_exact_at(0, &mut head) {
        Ok(()) => head,
        Err(_) => Vec::new(),
    }
}

fn read_record(src: &(impl ReadAt + ?Sized), r: &zip::Record) -> Result<Vec<u8>, String> {
    let mut buf = vec![0u8; usize::try_from(r.len).map_err(|_| "record too large")?];
    src.read_exact_at(r.data_offset, &mut buf)?;
    Ok(buf)
}

/// Reads a checkpoint completely (or its headers only), without running its pickle.
pub fn analyze(src: &(impl ReadAt + ?Sized), options: &AnalyzeOptions) -> Analysis {
    let mut a = Analysis {
        pickle_name: "data.pkl".into(),
        ..Analysis::default()
    };
    if let Some((severity, reason)) = not_a_zip(src) {
        if crate::legacy::looks_like_pickle(&head_of(src), src.size()) {
            // A pickle stream handed to the zip reader (by its name): run as what it is.
            return crate::legacy::analyze(src, options);
        }
        a.add(severity, "byte 0", reason.clone());
        a.unread.push((None, reason));
        return a;
    }
    let archive = match zip::read_archive(src) {
        Ok(archive) => archive,
        Err(e) => {
            // torch.jit.save compresses its code records, so the zip layer refuses a
            // TorchScript archive before its records are looked at: say what it is anyway.
            let names = zip::central_names(src).unwrap_or_default();
            if names.iter().any(|n| is_torchscript_record(n)) {
                a.torchscript = true;
                a.add(Severity::Fail, "zip central directory", TORCHSCRIPT_FINDING);
            }
            a.add(Severity::Fail, format!("zip {}", e.place()), e.to_string());
            a.unread
                .push((None, format!("the zip structure is refused: {e}")));
            return a;
        }
    };
    a.prefix = Some(archive.prefix.clone());
    a.torchscript = archive
        .records
        .iter()
        .any(|r| is_torchscript_record(&r.name));
    if a.torchscript {
        a.add(
            Severity::Fail,
            format!("zip records {}/code/, constants.pkl", archive.prefix),
            TORCHSCRIPT_FINDING,
        );
    }

    // Integrity: every record's CRC-32 (storages only when their bytes are read).
    for r in &archive.records {
        let rel = archive.relative(r);
        if options.header_only && rel.starts_with("data/") {
            a.crc_skipped += 1;
            continue;
        }
        match zip::verify_crc(src, r) {
            Ok(()) => a.crc_verified += 1,
            Err(e) => a.add(Severity::Fail, format!("zip {}", e.place()), e.to_string()),
        }
    }

    match archive.get("byteorder") {
        None => a.byteorder_record = None,
        Some(r) if r.len <= 16 => match read_record(src, r).as_deref() {
            Ok(b"little") => a.byteorder_record = Some(Endian::Little),
            Ok(b"big") => a.byteorder_record = Some(Endian::Big),
            Ok(other) => a.add(
                Severity::Fail,
                format!("zip record {:?}", r.name),
                format!(
                    "byteorder is {:?}; torch accepts only \"little\" or \"big\"",
                    String::from_utf8_lossy(other)
                ),
            ),
            Err(e) => a.add(Severity::Fail, format!("zip record {:?}", r.name), e),
        },
        Some(r) => a.add(
            Severity::Fail,
            format!("zip record {:?}", r.name),
            format!("byteorder record of {} bytes", r.len),
        ),
    }

    let Some(pkl) = archive.get("data.pkl") else {
        a.add(
            Severity::Fail,
            format!("zip archive {:?}", archive.prefix),
            format!(
                "no {}/data.pkl: not a torch.save checkpoint",
                archive.prefix
            ),
        );
        a.unread
            .push((None, "no data.pkl: not a torch.save checkpoint".into()));
        return a;
    };
    if pkl.len > MAX_PICKLE_LEN {
        a.add(
            Severity::Lead,
            format!("zip record {:?}", pkl.name),
            format!(
                "data.pkl is {} bytes, over the {MAX_PICKLE_LEN}-byte limit",
                pkl.len
            ),
        );
        a.unread
            .push((None, "data.pkl is too large to model".into()));
        return a;
    }
    let bytes = match read_record(src, pkl) {
        Ok(b) => b,
        Err(e) => {
            a.add(
                Severity::Fail,
                format!("zip record {:?}", pkl.name),
                e.clone(),
            );
            a.unread.push((None, e));
            return a;
        }
    };
    let outcome = pickle::run(
        &bytes,
        &pickle::Options {
            reviewed: options.reviewed.clone(),
            legacy: false,
            input_len: src.size(),
        },
    );
    a.protocol = outcome.protocol;
    a.storage_count = outcome.storages.len();
    a.reviewed_used = outcome.reviewed_used.clone();
    for f in &outcome.findings {
        a.add(
            f.severity,
            format!("data.pkl byte {} ({})", f.offset, f.opcode),
            f.reason.clone(),
        );
    }

    // Every storage must match a record of exactly its size; every record must be expected.
    let mut referenced = HashSet::new();
    let mut record_of = HashMap::new();
    for s in &outcome.storages {
        let rel = format!("data/{}", s.key);
        referenced.insert(rel.clone());
        match archive.get(&rel) {
            None => a.add(
                Severity::Fail,
                format!("storage {:?}", s.key),
                format!(
                    "the pickle names storage {:?} but there is no record {}/{rel}",
                    s.key, archive.prefix
                ),
            ),
            Some(r) => {
                let expected = s.byte_len();
                if expected != Some(r.len) {
                    a.add(
                        Severity::Fail,
                        format!("zip record {:?}", r.name),
                        format!(
                            "the pickle declares storage {:?} as {} bytes ({} × {}) but its record holds {} (CVE-2026-24747: torch < 2.10 trusted the declared size)",
                            s.key,
                            expected.map_or("more than 2^64".into(), |e| e.to_string()),
                            s.numel,
                            match s.class {
                                pickle::StorageClass::Typed(d) => d.torch,
                                pickle::StorageClass::Untyped => "byte",
                            },
                            r.len
                        ),
                    );
                } else {
                    record_of.insert(s.key.clone(), (r.data_offset, r.name.clone()));
                }
            }
        }
    }
    for r in &archive.records {
        let rel = archive.relative(r);
        if rel == "data.pkl" || KNOWN_RECORDS.contains(&rel) || referenced.contains(rel) {
            continue;
        }
        if a.torchscript
            && (rel.starts_with("code/") || rel.ends_with(".pkl") || rel.starts_with("constants"))
        {
            continue;
        }
        let what = if rel.starts_with("data/") {
            "a storage record no tensor references"
        } else if rel.ends_with(".pkl") || rel.ends_with("_pkl") {
            "an extra pickle torch.load never reads"
        } else {
            "a record torch.save does not write"
        };
        a.add(
            Severity::Lead,
            format!("zip record {:?}", r.name),
            format!("{what}; something may be hidden there"),
        );
    }

    model_tensors(&mut a, &outcome, |storage| {
        record_of
            .get(&storage.key)
            .map(|(offset, record)| (*offset, record.clone(), 0))
    });
    a
}

/// After the pickle: unless something FAILs, walks the state-dict model and locates each of its
/// tensors with `locate` (storage → where its first element lies in the file, the record
/// holding it, and where it starts within that record).
pub fn model_tensors(
    a: &mut Analysis,
    outcome: &pickle::Outcome,
    locate: impl Fn(&pickle::StorageRef) -> Option<(u64, String, u64)>,
) {
    if a.worst() == Some(Severity::Fail) {
        a.unread.push((
            None,
            "the Pickle opcode scan FAILs: its tensors are not read".into(),
        ));
        return;
    }
    let Some(result) = outcome.result.clone() else {
        a.unread.push((
            None,
            "the pickle leaves socair-wo/1 before STOP: its state dict is not modeled".into(),
        ));
        return;
    };
    let sd = read_state_dict(outcome, &result);
    a.unread
        .extend(sd.unread.into_iter().map(|(n, r)| (Some(n), r)));
    a.outside = sd.outside;
    a.not_carried = sd.not_carried;
    for (name, model) in sd.named {
        match locate(&model.storage) {
            Some((record_offset, record, record_base)) => a.tensors.push(LocatedTensor {
                name,
                model,
                record_offset,
                record,
                record_base,
            }),
            None => a.unread.push((
                Some(name),
                format!(
                    "its storage {:?} does not match a record",
                    model.storage.key
                ),
            )),
        }
    }
}

/// The state-dict model of a checkpoint.
#[derive(Debug, Default)]
pub struct StateDict {
    /// Its tensors, by flattened name.
    pub named: Vec<NamedTensor>,
    /// Tensors that cannot be named (colliding names, too deep): refused by conversion.
    pub unread: Vec<(String, String)>,
    /// Tensors outside the model (in lists or tuples, under non-string keys): named as not
    /// carried by conversion.
    pub outside: Vec<(String, String)>,
    /// Everything else the checkpoint holds, as `path (what)`.
    pub not_carried: Vec<String>,
}

/// `ReadStateDict`: the tensors a checkpoint holds as a state dict. The root is the
/// top-level mapping, or its `state_dict` entry when that is a mapping (as safetensors'
/// convert.py reads training checkpoints); nested string-keyed mappings are flattened with
/// `.`. Tensors in lists or tuples or under non-string keys are outside the model; tensors
/// whose names collide are unread; every other value is named as not carried.
pub fn read_state_dict(outcome: &pickle::Outcome, result: &Value) -> StateDict {
    let dict_items = |v: &Value| match v {
        Value::Obj(id) => match &outcome.objects[*id] {
            Object::Dict(d) => Some(&d.items),
            Object::List(_) => None,
        },
        _ => None,
    };
    let mut walker = Walker {
        outcome,
        on_path: HashSet::new(),
        budget: 4 * (outcome.objects.len() + outcome.tensors.len()) + 1024,
        sd: StateDict::default(),
    };
    let mut root = result;
    if let Some(items) = dict_items(result) {
        if let Some((_, v)) = items.iter().find(|(k, v)| {
            matches!(k, Value::Str(s) if &**s == "state_dict") && dict_items(v).is_some()
        }) {
            root = v;
            for (k, v) in items {
                match k {
                    Value::Str(k) if &**k == "state_dict" => {}
                    Value::Str(k) => walker
                        .sd
                        .not_carried
                        .push(format!("{k} ({}, beside state_dict)", kind(outcome, v))),
                    _ => walker.sd.not_carried.push(format!(
                        "a value under a non-string key ({})",
                        kind(outcome, v)
                    )),
                }
            }
        }
    }
    walker.walk(root, String::new(), 0, None);
    let mut sd = walker.sd;

    // Names that collide ("a.b" as a key and as a path) are ambiguous: none of them is read.
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (n, _) in &sd.named {
        *counts.entry(n.as_str()).or_default() += 1;
    }
    let colliding: HashSet<String> = counts
        .into_iter()
        .filter(|(_, c)| *c > 1)
        .map(|(n, _)| n.to_owned())
        .collect();
    let mut unread = std::mem::take(&mut sd.unread);
    sd.named.retain(|(n, _)| {
        if colliding.contains(n) {
            unread.push((
                n.clone(),
                "two tensors get this name when nested keys are joined with '.'".into(),
            ));
            false
        } else {
            true
        }
    });
    sd.unread = unread;
    if sd.named.iter().any(|(_, t)| t.requires_grad || t.parameter) {
        sd.not_carried
            .push("requires_grad and nn.Parameter types (safetensors holds plain tensors)".into());
    }
    sd
}

/// What a value is, for not_carried entries.
fn kind(outcome: &pickle::Outcome, v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(_) => "bool".into(),
        Value::Int(_) | Value::BigInt => "int".into(),
        Value::Float(_) => "float".into(),
        Value::Str(_) => "str".into(),
        Value::Bytes(_) => "bytes".into(),
        Value::Tuple(..) => "tuple".into(),
        Value::Obj(id) => match &outcome.objects[*id] {
            Object::List(_) => "list".into(),
            Object::Dict(d) if d.ordered => "OrderedDict".into(),
            Object::Dict(_) => "dict".into(),
        },
        Value::Global(g) => format!("the global {}.{}", g.module, g.name),
        Value::Storage(_) => "a bare storage".into(),
        Value::Tensor(_) => "tensor".into(),
        Value::Opaque(what) => format!("an object built by {what}"),
    }
}

/// Walks the result for tensors. A container reached twice is walked twice (Python would
/// see its tensors under both paths), a cycle is not followed, and the total work is bounded
/// by a budget proportional to the pickle's objects.
struct Walker<'a> {
    outcome: &'a pickle::Outcome,
    on_path: HashSet<usize>,
    budget: usize,
    sd: StateDict,
}

impl Walker<'_> {
    /// `excluded` says why tensors found below are not part of the model.
    fn walk(&mut self, value: &Value, path: String, depth: usize, excluded: Option<&'static str>) {
        let join = |path: &str, key: &str| {
            if path.is_empty() {
                key.to_owned()
            } else {
                format!("{path}.{key}")
            }
        };
        if self.budget == 0 {
            self.sd.unread.push((
                path,
                "the checkpoint's containers are too shared to walk".into(),
            ));
            return;
        }
        self.budget -= 1;
        let outcome = self.outcome;
        match value {
            Value::Tensor(t) => match excluded {
                Some(why) => self.sd.outside.push((path, why.into())),
                None => self.sd.named.push((path, t.clone())),
            },
            Value::Tuple(..) | Value::Obj(_) if depth >= MAX_NAME_DEPTH => {
                self.sd.unread.push((
                    path,
                    format!("nested deeper than {MAX_NAME_DEPTH} levels; not walked"),
                ));
            }
            Value::Tuple(items, _) => {
                if excluded.is_none() {
                    self.sd.not_carried.push(format!("{path} (tuple)"));
                }
                for (i, v) in items.iter().enumerate() {
                    self.walk(v, join(&path, &i.to_string()), depth + 1, Some(IN_SEQUENCE));
                }
            }
            Value::Obj(id) => {
                if !self.on_path.insert(*id) {
                    return;
                }
                match &outcome.objects[*id] {
                    Object::List(items) => {
                        if excluded.is_none() {
                            self.sd.not_carried.push(format!("{path} (list)"));
                        }
                        for (i, v) in items.iter().enumerate() {
                            self.walk(v, join(&path, &i.to_string()), depth + 1, Some(IN_SEQUENCE));
                        }
                    }
                    Object::Dict(d) => {
                        if d.attrs.is_some() && excluded.is_none() {
                            self.sd.not_carried.push(format!(
                                "{} (the state dict's _metadata)",
                                join(&path, "_metadata")
                            ));
                        }
                        for (k, v) in &d.items {
                            match k {
                                Value::Str(k) => self.walk(v, join(&path, k), depth + 1, excluded),
                                _ => {
                                    if excluded.is_none() {
                                        self.sd.not_carried.push(format!(
                                            "{} (under a non-string key)",
                                            join(&path, "<key>")
                                        ));
                                    }
                                    self.walk(
                                        v,
                                        join(&path, "<key>"),
                                        depth + 1,
                                        Some(NON_STRING_KEY),
                                    )
                                }
                            }
                        }
                    }
                }
                self.on_path.remove(id);
            }
            other if excluded.is_none() => {
                let name = if path.is_empty() {
                    "the checkpoint".to_owned()
                } else {
                    path
                };
                self.sd
                    .not_carried
                    .push(format!("{name} ({})", kind(outcome, other)));
            }
            _ => {}
        }
    }
}

const IN_SEQUENCE: &str = "inside a list or tuple: not part of the state-dict model";
const NON_STRING_KEY: &str = "under a key that is not a string: not part of the state-dict model";
