//! `torch.export` PT2 archives (`.pt2`: `torch.export.save`, `torch._inductor`'s packages),
//! read as `torch.export.load` reads them (torch 2.15 `torch/export/pt2_archive/_package.py`,
//! `load_pt2`, and `torch/_export/serde/serialize.py`), without running anything.
//!
//! A PT2 archive is a torch zip (`PyTorchFileWriter`: the same strict layout as a checkpoint,
//! read here by [`crate::zip`]) under one prefix, holding per exported program `<m>`:
//!
//! * `models/<m>.json`: the program's graph, whose symbolic expressions `torch.export.load`
//!   hands to `sympy.sympify` (an `eval`) and whose node targets the program calls
//!   ([`graph`]);
//! * `data/weights/<m>_weights_config.json` and `data/constants/<m>_constants_config.json`
//!   ([`payload`]): each weight and constant either lies raw in a record
//!   (`data/weights/weight_<i>`, viewed with `as_strided`: located and fingerprinted here), or
//!   was saved with `torch.save` (`use_pickle`: a tensor subclass), which `torch.load(…,
//!   weights_only=False)` reads; a constant may also be a TorchScript object
//!   (`custom_obj_<i>`, a zip `torch._C._pickle_load_obj` unpickles) or any Python object
//!   (`opaque_obj_<i>`, which `pickle.loads` runs); the older layout's
//!   `data/weights/<m>.pt` and `data/constants/<m>.pt` are `torch.save` files too;
//! * `data/sample_inputs/<m>.pt`: the example inputs, a `torch.save` file that
//!   `deserialize_torch_artifact` loads with `weights_only=True` and, when that raises, again
//!   with `weights_only=False`;
//! * and `archive_format` (`pt2`), `archive_version` (`0`), `extra/…` (strings), and for an
//!   AOTInductor package `data/aotinductor/<m>/…`, whose compiled shared library `load_pt2`
//!   loads (native code: a FAIL, as a TorchScript archive is one).
//!
//! Every pickle among them goes through the pickle machine (a nested `torch.save` file
//! through the whole checkpoint reader, [`crate::legacy::analyze_as_zip`]), its findings
//! placed as `record <prefix>/data/sample_inputs/model.pt!/archive/data.pkl byte N`; the
//! tensors of nested checkpoints are located in this file too. A record `torch.export.load`
//! does not read is a LEAD (scanned when it is a pickle or a torch file); an archive that
//! also holds `data.pkl` is read as the checkpoint `torch.load` sees too.

mod graph;
mod payload;

use crate::checkpoint::{AnalyzeOptions, BARE_TENSOR};
use crate::pickle::{self, Severity};
use crate::zip::{self, Archive, ReadAt, Record};
use abi_stable::std_types::{ROption, RVec};
use socair_plugin_api::{
    ByteOrder, ByteRange, OpenedFile, ReportRow, RowStatus, TensorDescriptor, TensorOrigin, Unread,
};
use socair_plugin_kit::model::Findings;
use socair_plugin_kit::report::{PICKLE_CHECK, STRUCTURE_CHECK};
use socair_plugin_kit::zip::claims::{pt2_claims, pt2_record_name};
use std::collections::BTreeSet;

/// The format this reader reads.
pub const FORMAT: &str = "torch-export";

/// Findings listed per row; the rest are counted.
const LISTED: usize = socair_plugin_kit::bounded::FINDINGS_PER_ROW;
/// The largest JSON record (a graph or a payload config) parsed.
const MAX_JSON: u64 = 64 << 20;
/// Records `PyTorchFileWriter` writes on its own.
const WRITER_RECORDS: &[&str] = &[
    ".data/version",
    "byteorder",
    ".data/serialization_id",
    "version",
];

/// Whether the first bytes of a file show a PT2 archive (the kit's rule; the whole-file case
/// by this plugin's reading of the central directory).
pub fn looks_like_pt2(head: &[u8], file_len: u64) -> bool {
    pt2_claims(head, file_len, |head| {
        zip::central_names(head)
            .is_some_and(|names| names.iter().any(|n| pt2_record_name(n.as_bytes())))
    })
}

/// A record's bytes as a file of their own.
struct Window<'a, R: ?Sized> {
    src: &'a R,
    base: u64,
    len: u64,
}

impl<R: ReadAt + ?Sized> ReadAt for Window<'_, R> {
    fn size(&self) -> u64 {
        self.len
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= self.len)
            .ok_or("read past the end of the record")?;
        self.src.read_exact_at(self.base + offset, buf)
    }
}

struct Reader<'s, R: ?Sized> {
    src: &'s R,
    options: &'s AnalyzeOptions,
    to_opened: ToOpened,
    archive: Archive,
    /// Records accounted for, by index.
    read: BTreeSet<usize>,
    structure: Findings,
    pickle: Findings,
    tensors: Vec<TensorDescriptor>,
    unread: Vec<Unread>,
    byte_order: ByteOrder,
    /// Pickles run (nested torch files and plain pickles).
    pickles: u64,
    raw_tensors: u64,
    models: Vec<String>,
    graph_checked: u64,
}

/// How a checkpoint's analysis becomes what the plugin API reports (the plugin's
/// `opened_file`, handed in so that this module never imports the crate root).
pub type ToOpened = fn(&crate::checkpoint::Analysis, bool) -> OpenedFile;

/// Reads a PT2 archive completely (or its headers only), without running anything in it;
/// nested torch files' analyses become descriptors through `to_opened`.
pub fn open(
    src: &(impl ReadAt + ?Sized),
    options: &AnalyzeOptions,
    to_opened: ToOpened,
) -> OpenedFile {
    let archive = match zip::read_archive(src) {
        Ok(a) => a,
        Err(e) => {
            let mut structure = Findings::default();
            structure.add(Severity::Fail, format!("zip {}", e.place()), e.to_string());
            let unread = vec![unread_whole(format!("the zip structure is refused: {e}"))];
            let summary = "not a PT2 archive torch reads: its zip structure is refused".into();
            return rows(
                structure,
                Findings::default(),
                0,
                summary,
                Vec::new(),
                unread,
            );
        }
    };
    let mut r = Reader {
        src,
        options,
        to_opened,
        archive,
        read: BTreeSet::new(),
        structure: Findings::default(),
        pickle: Findings::default(),
        tensors: Vec::new(),
        unread: Vec::new(),
        byte_order: ByteOrder::Little,
        pickles: 0,
        raw_tensors: 0,
        models: Vec::new(),
        graph_checked: 0,
    };
    r.read_all();
    let summary = format!(
        "PT2 archive (torch.export.save) under {:?}/ of {} records: {} exported program(s) ({}), {} raw tensors located and {} torch.save or pickle payloads run through the pickle machine, {} graph(s) checked (symbolic expressions, node targets); CRC-32 verified for {} records",
        r.archive.prefix,
        r.archive.records.len(),
        r.models.len(),
        r.models.join(", "),
        r.raw_tensors,
        r.pickles,
        r.graph_checked,
        if options.header_only {
            "all but the raw tensor records (header-only)".to_owned()
        } else {
            "all".to_owned()
        }
    );
    rows(
        r.structure,
        r.pickle,
        r.pickles,
        summary,
        r.tensors,
        r.unread,
    )
}

fn unread_whole(reason: String) -> Unread {
    Unread {
        tensor: ROption::RNone,
        reason: reason.into(),
        outside_model: false,
    }
}

fn rows(
    structure: Findings,
    pickle: Findings,
    pickles: u64,
    summary: String,
    tensors: Vec<TensorDescriptor>,
    unread: Vec<Unread>,
) -> OpenedFile {
    let structure_status = structure.status();
    let structure_summary = match structure_status {
        RowStatus::Fail => format!("{summary}; the archive is malformed, or holds what runs code when torch.export.load reads it"),
        RowStatus::Lead => format!("{summary}; what socair does not model must be looked at by a person"),
        _ => summary,
    };
    let pickle_row = if pickles == 0 {
        ReportRow {
            check: PICKLE_CHECK.into(),
            status: RowStatus::NotTested,
            summary: "no record torch.export.load unpickles".into(),
            findings: RVec::new(),
            names_severities: false,
        }
    } else {
        let status = pickle.status();
        let summary = match status {
            RowStatus::Pass => format!("all {pickles} pickle payload(s) torch.export.load reads (sample inputs, pickled weights and constants, opaque objects) lie inside the grammar"),
            RowStatus::Fail => format!("findings of code execution in the {pickles} pickle payload(s) torch.export.load reads"),
            _ => format!("findings outside what the grammar proves safe in the {pickles} pickle payload(s) torch.export.load reads; a person should look"),
        };
        ReportRow {
            check: PICKLE_CHECK.into(),
            status,
            summary: summary.into(),
            findings: pickle.to_api("findings"),
            names_severities: true,
        }
    };
    OpenedFile {
        format: FORMAT.into(),
        tensors: tensors.into(),
        unread: unread.into(),
        rows: RVec::from(vec![
            ReportRow {
                check: STRUCTURE_CHECK.into(),
                status: structure_status,
                summary: structure_summary.into(),
                findings: structure.to_api("findings"),
                names_severities: true,
            },
            pickle_row,
        ]),
        metadata: RVec::new(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}

impl<R: ReadAt + ?Sized> Reader<'_, R> {
    fn record(&self, rel: &str) -> Option<(usize, Record)> {
        let i = self.archive.find(rel)?;
        Some((i, self.archive.records[i].clone()))
    }

    fn bytes(&mut self, rec: &Record, limit: u64) -> Option<Vec<u8>> {
        if rec.len > limit {
            self.structure.add(
                Severity::Lead,
                format!("record {}", rec.name),
                format!(
                    "{} bytes, over the {limit} this reader parses: not read",
                    rec.len
                ),
            );
            return None;
        }
        let mut buf = vec![0u8; usize::try_from(rec.len).ok()?];
        match self.src.read_exact_at(rec.data_offset, &mut buf) {
            Ok(()) => Some(buf),
            Err(e) => {
                self.structure
                    .add(Severity::Fail, format!("record {}", rec.name), e);
                None
            }
        }
    }

    fn read_all(&mut self) {
        let prefix = self.archive.prefix.clone();
        // Integrity: every record's CRC-32 (the raw tensor records only when read).
        for i in 0..self.archive.records.len() {
            let rec = self.archive.records[i].clone();
            let rel = self.archive.relative(&rec).to_owned();
            let raw = (rel.starts_with("data/weights/") || rel.starts_with("data/constants/"))
                && !rel.ends_with(".json");
            if self.options.header_only && raw {
                continue;
            }
            if let Err(e) = zip::bytes::verify_crc(self.src, &rec) {
                self.structure
                    .add(Severity::Fail, format!("zip {}", e.place()), e.to_string());
            }
        }
        for name in WRITER_RECORDS {
            if let Some((i, _)) = self.record(name) {
                self.read.insert(i);
            }
        }
        if let Some((_, rec)) = self.record("byteorder") {
            if self.bytes(&rec, 16).as_deref() == Some(b"big") {
                self.byte_order = ByteOrder::Big;
            }
        }
        self.expect_string("archive_format", "pt2", "PT2ArchiveReader asserts it");
        self.expect_string("archive_version", "0", "load_pt2 raises ValueError");
        // The exported programs: every record under models/ (`_load_exported_programs`).
        let models: Vec<(usize, Record)> = self
            .archive
            .records
            .iter()
            .enumerate()
            .filter(|(_, r)| self.archive.relative(r).starts_with("models/"))
            .map(|(i, r)| (i, r.clone()))
            .collect();
        for (i, rec) in models {
            self.read.insert(i);
            let rel = self.archive.relative(&rec).to_owned();
            let Some(model) = rel
                .strip_prefix("models/")
                .and_then(|m| m.strip_suffix(".json"))
                .map(str::to_owned)
            else {
                self.structure.add(Severity::Lead, format!("record {}", rec.name), "a record under models/ that is not <name>.json: torch.export.load reads it as a program all the same, under a mangled name");
                continue;
            };
            self.models.push(model.clone());
            self.graph(&rec);
            self.model_payloads(&model);
        }
        if self.models.is_empty() {
            self.structure.add(
                Severity::Lead,
                format!("zip archive {prefix:?}"),
                "no models/<name>.json: no exported program for torch.export.load to read",
            );
        }
        self.others();
        // Also a torch checkpoint: torch.load reads its data.pkl.
        if self.record("data.pkl").is_some() {
            let a = crate::legacy::analyze_as_zip(self.src, self.options);
            self.pickles += 1;
            for f in &a.findings {
                let row = if f.place.starts_with("data.pkl") {
                    &mut self.pickle
                } else {
                    &mut self.structure
                };
                row.add(
                    f.severity,
                    format!("as a torch checkpoint: {}", f.place),
                    f.reason.clone(),
                );
            }
            self.structure.add(Severity::Lead, format!("record {prefix}/data.pkl"), "the archive is also a torch.save checkpoint (torch.load reads its data.pkl, torch.export.load its programs): two readers read it as two different things");
        }
    }

    /// A small text record that must be `want`: torch refuses the archive otherwise.
    fn expect_string(&mut self, rel: &str, want: &str, why: &str) {
        let place = format!("record {}/{rel}", self.archive.prefix);
        match self.record(rel) {
            None => self.structure.add(
                Severity::Fail,
                place,
                format!("missing: torch.export.load refuses the archive ({why})"),
            ),
            Some((i, rec)) => {
                self.read.insert(i);
                if let Some(b) = self.bytes(&rec, 64) {
                    if b != want.as_bytes() {
                        self.structure.add(
                            Severity::Fail,
                            place,
                            format!(
                                "is {:?}, not {want:?}: torch.export.load refuses the archive ({why})",
                                String::from_utf8_lossy(&b)
                            ),
                        );
                    }
                }
            }
        }
    }

    fn graph(&mut self, rec: &Record) {
        let Some(bytes) = self.bytes(rec, MAX_JSON) else {
            return;
        };
        let (found, more) = match graph::check(&bytes, LISTED) {
            Ok(found) => found,
            Err(e) => {
                self.structure.add(
                    Severity::Fail,
                    format!("record {}", rec.name),
                    format!("not JSON torch.export.load reads ({e})"),
                );
                return;
            }
        };
        self.graph_checked += 1;
        for (severity, path, reason) in found {
            self.structure
                .add(severity, format!("record {} at {path}", rec.name), reason);
        }
        if more > 0 {
            self.structure.add(
                Severity::Lead,
                format!("record {}", rec.name),
                format!("… and {more} more graph findings"),
            );
        }
    }

    fn model_payloads(&mut self, model: &str) {
        let prefix = self.archive.prefix.clone();
        // Sample inputs: read by load_pt2 for every program (a missing record raises).
        let rel = format!("data/sample_inputs/{model}.pt");
        match self.record(&rel) {
            None => self.structure.add(
                Severity::Fail,
                format!("record {prefix}/{rel}"),
                "missing: load_pt2 reads every program's sample inputs, and torch.export.load fails without them",
            ),
            Some((i, rec)) => {
                self.read.insert(i);
                if rec.len > 0 {
                    self.nested(&rec, &format!("{model}.sample_inputs"), true);
                }
            }
        }
        for (dir, kind) in [
            ("data/weights/", "weights"),
            ("data/constants/", "constants"),
        ] {
            // The older layout: one torch.save file of them all.
            if let Some((i, rec)) = self.record(&format!("{dir}{model}.pt")) {
                self.read.insert(i);
                self.nested(&rec, model, false);
                continue;
            }
            let rel = format!("{dir}{model}_{kind}_config.json");
            let Some((i, rec)) = self.record(&rel) else {
                self.structure.add(
                    Severity::Fail,
                    format!("record {prefix}/{rel}"),
                    format!("missing: load_pt2 asserts the {kind} config is there"),
                );
                continue;
            };
            self.read.insert(i);
            let Some(bytes) = self.bytes(&rec, MAX_JSON) else {
                continue;
            };
            let config: payload::PayloadConfig = match serde_json::from_slice(&bytes) {
                Ok(c) => c,
                Err(e) => {
                    self.structure.add(
                        Severity::Fail,
                        format!("record {}", rec.name),
                        format!("not the payload config torch.export.load reads ({e})"),
                    );
                    continue;
                }
            };
            for (fqn, meta) in &config.config {
                self.payload(model, dir, kind, fqn, meta);
            }
        }
    }

    fn payload(
        &mut self,
        model: &str,
        dir: &str,
        kind: &str,
        fqn: &str,
        meta: &payload::PayloadMeta,
    ) {
        let prefix = self.archive.prefix.clone();
        let rel = format!("{dir}{}", meta.path_name);
        let place = format!("record {prefix}/{rel}");
        let Some((i, rec)) = self.record(&rel) else {
            self.structure.add(
                Severity::Fail,
                place,
                format!(
                    "{kind} entry {fqn:?} names it, and it is missing: torch.export.load fails"
                ),
            );
            return;
        };
        let name = if self.models.len() > 1 || model != "model" {
            format!("{model}.{fqn}")
        } else {
            fqn.to_owned()
        };
        let first = self.read.insert(i);
        let p = meta.path_name.as_str();
        if kind == "constants" && p.starts_with("opaque_obj_") {
            // pickle.loads: any Python object.
            if first {
                self.plain_pickle(&rec);
            }
            return;
        }
        if kind == "constants" && p.starts_with("custom_obj_") {
            // torch._C._pickle_load_obj: a TorchScript object in torch's zip.
            if first {
                self.nested(&rec, &name, false);
            }
            return;
        }
        if kind == "constants" && !p.starts_with("tensor_") {
            self.structure.add(
                Severity::Fail,
                place,
                format!("constant {fqn:?} is {p:?}: _load_constants raises \"Unsupported constant type\" for a name that is not tensor_, custom_obj_ or opaque_obj_"),
            );
            return;
        }
        if meta.use_pickle {
            // torch.load(..., weights_only=False).
            if first {
                self.nested(&rec, &name, false);
            }
            return;
        }
        let Some(tm) = &meta.tensor_meta else {
            self.structure.add(
                Severity::Fail,
                place,
                format!("{kind} entry {fqn:?} has no tensor_meta: torch.export.load raises"),
            );
            return;
        };
        if rec.len == 0 {
            // _build_file_map: a record of 0 bytes becomes torch.zeros(sizes).
            self.unread.push(Unread {
                tensor: ROption::RSome(name.into()),
                reason: format!("{place}: a record of 0 bytes, which torch.export.load fills with zeros: no bytes to fingerprint").into(),
                outside_model: false,
            });
            return;
        }
        match payload::locate(tm, rec.len) {
            Ok(t) => {
                self.raw_tensors += 1;
                self.tensors.push(TensorDescriptor {
                    name: name.into(),
                    dtype: t.dtype.safetensors.into(),
                    element_type: ROption::RSome(t.dtype.safetensors.into()),
                    shape: t.shape.into(),
                    ranges: RVec::from(vec![ByteRange {
                        offset: rec.data_offset + t.offset,
                        len: t.len,
                    }]),
                    byte_order: self.byte_order,
                    origin: ROption::RSome(TensorOrigin {
                        container: rec.name.clone().into(),
                        offset: t.offset,
                    }),
                    strides: t.strides.map(RVec::from).into(),
                    file: ROption::RNone,
                    inline: ROption::RNone,
                    outside_model: false,
                });
            }
            Err(payload::Refusal::Torch(why)) => {
                self.structure.add(
                    Severity::Fail,
                    place.clone(),
                    format!("{kind} entry {fqn:?}: {why}"),
                );
                self.unread.push(Unread {
                    tensor: ROption::RSome(name.into()),
                    reason: format!("{place}: {why}").into(),
                    outside_model: false,
                });
            }
            Err(payload::Refusal::Unmodelled(why)) => self.unread.push(Unread {
                tensor: ROption::RSome(name.into()),
                reason: format!("{place}: {why}; not fingerprinted").into(),
                outside_model: false,
            }),
        }
    }

    /// A record torch.load reads (a `torch.save` zip or a legacy pickle stream), through the
    /// whole checkpoint reader; its tensors named under `name`.
    fn nested(&mut self, rec: &Record, name: &str, outside_model: bool) {
        self.pickles += 1;
        let w = Window {
            src: self.src,
            base: rec.data_offset,
            len: rec.len,
        };
        let a = crate::legacy::analyze_as_zip(&w, self.options);
        let inner_prefix = a.prefix.clone();
        for f in &a.findings {
            let inner = match (&inner_prefix, f.place.starts_with("data.pkl")) {
                (Some(p), true) => format!("{p}/{}", f.place),
                _ => f.place.clone(),
            };
            let place = format!("record {}!/{inner}", rec.name);
            let pickle_finding = f.place.starts_with("data.pkl") || f.place.contains("pickle");
            let row = if pickle_finding {
                &mut self.pickle
            } else {
                &mut self.structure
            };
            row.add(f.severity, place, f.reason.clone());
        }
        let opened = (self.to_opened)(&a, self.options.header_only);
        for mut t in opened.tensors.into_iter() {
            for r in t.ranges.iter_mut() {
                r.offset += rec.data_offset;
            }
            if let ROption::RSome(o) = &mut t.origin {
                o.container = format!("{}!/{}", rec.name, o.container).into();
            }
            t.name = if t.name.as_str() == BARE_TENSOR {
                name.into()
            } else {
                format!("{name}.{}", t.name).into()
            };
            t.outside_model |= outside_model;
            self.tensors.push(t);
        }
        for mut u in opened.unread.into_iter() {
            u.reason = format!("record {}!/: {}", rec.name, u.reason).into();
            if let ROption::RSome(n) = &u.tensor {
                u.tensor = ROption::RSome(format!("{name}.{n}").into());
            }
            u.outside_model |= outside_model;
            self.unread.push(u);
        }
    }

    /// A record `pickle.loads` reads: the machine over its bytes.
    fn plain_pickle(&mut self, rec: &Record) {
        self.pickles += 1;
        let Some(bytes) = self.bytes(rec, crate::checkpoint::MAX_PICKLE_LEN) else {
            return;
        };
        let outcome = pickle::run(
            &bytes,
            &pickle::Options {
                reviewed: self.options.reviewed.clone(),
                legacy: false,
                input_len: self.src.size(),
                grammar: self.options.grammar,
                // torch.export.load's pickles go through torch.load: strict UTF-8.
                python2_str: pickle::Python2Str::TorchUtf8,
                ..Default::default()
            },
        );
        for f in &outcome.findings {
            self.pickle.add(
                f.severity,
                format!("record {} byte {} ({})", rec.name, f.offset, f.opcode),
                f.reason.clone(),
            );
        }
        // pickle.loads rebuilds whatever object it names: never data socair can check.
        self.pickle.add(
            Severity::Lead,
            format!("record {}", rec.name),
            "an opaque constant: _load_constants calls pickle.loads on it, which rebuilds any Python object; its globals are above",
        );
    }

    /// The records no program reads: AOTInductor packages, extra files, and the rest.
    fn others(&mut self) {
        let prefix = self.archive.prefix.clone();
        let mut aoti: BTreeSet<String> = BTreeSet::new();
        for i in 0..self.archive.records.len() {
            if self.read.contains(&i) {
                continue;
            }
            let rec = self.archive.records[i].clone();
            let rel = self.archive.relative(&rec).to_owned();
            if let Some(rest) = rel.strip_prefix("data/aotinductor/") {
                aoti.insert(rest.split('/').next().unwrap_or(rest).to_owned());
                continue;
            }
            if rel.starts_with("extra/") {
                // load_pt2 reads each as a UTF-8 string for the caller.
                let ok = self
                    .bytes(&rec, MAX_JSON)
                    .is_some_and(|b| std::str::from_utf8(&b).is_ok());
                if !ok {
                    self.structure.add(Severity::Lead, format!("record {}", rec.name), "an extra file that is not UTF-8: load_pt2 decodes each as a string and raises");
                }
                continue;
            }
            let mut head = [0u8; 8];
            let n = rec.len.min(8) as usize;
            let looks = self
                .src
                .read_exact_at(rec.data_offset, &mut head[..n])
                .is_ok()
                && (head[..n].starts_with(&zip::LOCAL_MAGIC) || head[..n].first() == Some(&0x80));
            if looks {
                // torch.load with load_weights_from_disk reads every record under
                // data/weights/; any other reader may unpickle it too.
                self.nested(&rec, &rel, true);
            }
            self.structure.add(
                Severity::Lead,
                format!("record {}", rec.name),
                if looks {
                    "a record no program's config names (its pickles scanned above): torch.export.load does not read it, something else may"
                } else {
                    "a record torch.export.load does not read; something may be hidden there"
                },
            );
        }
        if !aoti.is_empty() {
            self.structure.add(
                Severity::Fail,
                format!("records {prefix}/data/aotinductor/"),
                format!("an AOTInductor package (model(s) {}): load_pt2 loads each model's compiled shared library (AOTIModelPackageLoader), native code socair cannot check; it is never a weights-only file", aoti.into_iter().collect::<Vec<_>>().join(", ")),
            );
        }
    }
}

#[cfg(test)]
mod tests;
