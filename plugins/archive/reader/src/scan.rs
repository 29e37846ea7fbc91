//! The walk over a zip or 7z archive: its structure checked, every member inflated (zip) or
//! decoded (7z, [`crate::sevenz`]) within one budget and opened: pickles run through the
//! `socair-wo` machine, nested zips and 7z archives walked to [`MAX_DEPTH`], Keras archives,
//! `.npy` arrays and skops schemas judged here, JSON and text read as data as the host reads a
//! model directory's companions, and every other member handed back to the host
//! ([`Analysis::handed`]: a stored member of the file as its span, any other as its decoded
//! bytes) to be read by whichever reader claims it, as a directory's files are. A pure
//! function over anything that reads and seeks; nothing is extracted or executed.

use crate::detect;
use socair_pickle::pickle::{self, Severity};
use socair_plugin_kit::companion::{self, Companion};
use socair_plugin_kit::zip::claims::torch_record_name;
use socair_plugin_kit::zip::crc::crc32;
use socair_plugin_kit::zip::headers::{CentralHeader, LocalHeader};
use socair_plugin_kit::zip::links;
use socair_plugin_kit::zip::{CENTRAL_LEN, LOCAL_LEN};
use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Seek, SeekFrom};
use zip::ZipArchive;

/// Archives nested deeper than this (the file itself is depth 1) are not opened.
pub const MAX_DEPTH: usize = 4;
/// Who did not read a member that is neither a pickle nor an archive (the companion rules'
/// words for a member that is none of their kinds either).
const MEMBER_UNREAD: &str = "no reader of this archive's plugin models this member";

/// The inflated bytes socair reads out of an input of `input_len` bytes, over all its members
/// at every depth: 32 MiB + 4x the input, half the 64 MiB + 8x every reader is held to, so that
/// the members held in memory and what the pickle machine builds over them fit in that bound.
pub fn budget_for(input_len: u64) -> u64 {
    socair_plugin_kit::model::memory_share(input_len, 2)
}

/// One finding: the reading model every first-party reader shares.
pub use socair_plugin_kit::model::Finding;

/// Findings of one row, bounded: the reading model's.
pub use socair_plugin_kit::model::Findings;

/// What the walk found.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// The profile pickle members were judged by, once one was.
    pub profile: Option<&'static str>,
    /// The archive's structure: names, CRC-32, sizes, encryption, malformed archives.
    pub structure: Findings,
    /// Members nothing here checked.
    pub unchecked: Findings,
    /// What the pickle machine found in pickle members.
    pub pickle: Findings,
    /// Members listed by the central directories walked (at every depth).
    pub members: u64,
    /// Zip archives opened (the file and the nested ones).
    pub archives: u64,
    /// 7z archives opened (the file and the nested ones).
    pub sevenz_archives: u64,
    /// Members run as pickles.
    pub pickles: u64,
    /// Members read as JSON or text data.
    pub data: u64,
    /// Members whose CRC-32 matched their inflated bytes.
    pub crc_verified: u64,
    /// Bytes inflated (zip) and decoded (7z).
    pub inflated: u64,
    /// The inflation budget ([`budget_for`]).
    pub budget: u64,
    /// The working memory the 7z folders' decoders set up, summed over the folders decoded:
    /// each decoder initialises its tables, so this is work as well as memory, and it is held
    /// to eight times the budget ([`crate::sevenz`]).
    pub decoder_setup: u64,
    /// Reviewed globals the pickles used.
    pub reviewed_used: Vec<String>,
    /// Members of formats this plugin does not read, handed back to the host to be read by
    /// whichever reader claims each (`FormatReader::open_container`), in the walk's order.
    pub handed: Vec<Handed>,
}

/// A member handed back to the host: its name (`inner.zip!/model.safetensors` for a member of
/// a nested archive), its bytes and what to say of it when no reader claims it.
#[derive(Debug, Clone)]
pub struct Handed {
    /// Its name in the archive, nested archives' names before it.
    pub name: String,
    /// Where its bytes are.
    pub bytes: HandedBytes,
    /// The companion rules' words for it, said when no reader claims it.
    pub unclaimed: String,
}

/// Where a handed-back member's bytes are.
#[derive(Debug, Clone)]
pub enum HandedBytes {
    /// A stored member of the file itself: a span of it, which the host reads in place (and
    /// fingerprints tensors in as spans of the file).
    Span {
        /// Its first byte in the file.
        offset: u64,
        /// Its length.
        len: u64,
    },
    /// The bytes inflated or decoded here.
    Decoded(Vec<u8>),
}

/// Reads a `ReadAt` source as `Read + Seek`, for the zip crate (the kit's).
pub use socair_plugin_kit::source_reader::SourceReader;

/// What a walk judges pickle members by: the reviewed globals and the library profile
/// (`socair-data/1`, or `socair-sklearn/1` when the host asks for it).
#[derive(Debug, Clone, Copy)]
pub struct Scope<'r> {
    /// Globals the operator reviewed.
    pub reviewed: &'r [String],
    /// The profile pickle members are judged by.
    pub profile: pickle::Profile,
    /// The bytes of decoded members the walk may hand back to the host (the host's budget
    /// for what members hold in memory); a member past it is a LEAD.
    pub hand_back: u64,
}

impl<'r> Scope<'r> {
    /// `socair-data/1` with `reviewed`, handing back what the walk's own budget decodes.
    pub fn data(reviewed: &'r [String]) -> Self {
        Scope {
            reviewed,
            profile: pickle::Profile::Data,
            hand_back: u64::MAX,
        }
    }
}

/// Walks the zip read by `reader`, an input of `input_len` bytes.
///
/// Members of formats this plugin does not read are handed back ([`Analysis::handed`]), the
/// decoded ones while they fit in `scope.hand_back` bytes.
pub fn scan<R: Read + Seek + Clone>(reader: R, input_len: u64, scope: Scope<'_>) -> Analysis {
    let mut walk = Walk::new(input_len, scope);
    walk.zip(reader, "", 1);
    walk.a
}

/// Walks the zip in `bytes`.
pub fn scan_bytes(bytes: &[u8], scope: Scope<'_>) -> Analysis {
    scan(io::Cursor::new(bytes), bytes.len() as u64, scope)
}

/// Walks the 7z archive read by `reader`, an input of `input_len` bytes.
pub fn scan_7z<R: Read + Seek>(reader: R, input_len: u64, scope: Scope<'_>) -> Analysis {
    let mut walk = Walk::new(input_len, scope);
    walk.seven_z(reader, "", 1);
    walk.a
}

/// Walks the 7z archive in `bytes`.
pub fn scan_7z_bytes(bytes: &[u8], scope: Scope<'_>) -> Analysis {
    scan_7z(io::Cursor::new(bytes), bytes.len() as u64, scope)
}

/// The signs of a Keras archive seen in one archive's top level.
#[derive(Debug, Default, Clone)]
pub(crate) struct KerasSigns {
    /// A `config.json` member.
    pub(crate) config: bool,
    /// The bytes of each `config.json` member, judged as Keras would read them when the
    /// archive is a zip (`crate::keras`).
    pub(crate) config_texts: Vec<Vec<u8>>,
    /// The `keras_version` of a `metadata.json` member.
    pub(crate) version: Option<String>,
    /// The weights member (`model.weights.h5` or `model.weights.npz`).
    pub(crate) weights: Option<String>,
}

pub(crate) struct Walk {
    pub(crate) a: Analysis,
    reviewed: Vec<String>,
    /// The profile pickle members are judged by.
    pub(crate) profile: pickle::Profile,
    /// The signs of a Keras archive seen so far, by the prefix of the archive they are in.
    pub(crate) keras: HashMap<String, KerasSigns>,
    /// The prefixes (`outer.zip!/inner.pt!/`) of the nested torch checkpoints being walked.
    pub(crate) torch_prefixes: HashSet<String>,
    /// The places (`member <prefix><name>`) of the zip members whose central directory entry
    /// marks them symbolic links (`socair_plugin_kit::zip::links`).
    links: HashSet<String>,
    /// Where the member being opened lies in the file, when it is a stored member of the file
    /// itself (not of a nested archive): handed back as that span.
    span: Option<(u64, u64)>,
    /// Decoded bytes that may still be handed back.
    hand_back_left: u64,
}

impl Walk {
    /// A walk of an input of `input_len` bytes, with its budget and the reviewed globals.
    fn new(input_len: u64, scope: Scope<'_>) -> Walk {
        Walk {
            a: Analysis {
                budget: budget_for(input_len),
                ..Analysis::default()
            },
            reviewed: scope.reviewed.to_vec(),
            profile: scope.profile,
            keras: HashMap::new(),
            torch_prefixes: HashSet::new(),
            links: HashSet::new(),
            span: None,
            hand_back_left: scope.hand_back,
        }
    }
}

impl Walk {
    /// The globals an operator reviewed.
    pub(crate) fn reviewed(&self) -> &[String] {
        &self.reviewed
    }

    pub(crate) fn left(&self) -> u64 {
        self.a.budget.saturating_sub(self.a.inflated)
    }

    /// Opens the zip read by `reader` at `depth`; its members' places start with `prefix`
    /// (`outer.zip!/` for a nested one).
    fn zip<R: Read + Seek + Clone>(&mut self, reader: R, prefix: &str, depth: usize) {
        let here = match prefix.strip_suffix("!/") {
            Some(p) => format!("member {p}"),
            None => "archive".to_owned(),
        };
        let raw = reader.clone();
        let mut zip = match ZipArchive::new(reader) {
            Ok(z) => z,
            Err(e) => {
                self.a.structure.add_with(Severity::Fail, here, || {
                    format!(
                        "not a zip archive the zip crate reads ({e}): nothing in it was checked"
                    )
                });
                return;
            }
        };
        self.a.archives += 1;
        if zip.offset() != 0 {
            let off = zip.offset();
            self.a.structure.add_with(Severity::Fail, here.clone(), || {
                format!("its central directory places the archive {off} bytes after where its records lie: bytes were inserted, and readers that go by the local headers and those that go by the central directory read different members")
            });
        }
        self.names(
            raw.clone(),
            zip.central_directory_start(),
            zip.len(),
            prefix,
            &here,
        );
        let mut raw = raw;
        for i in 0..zip.len() {
            self.member(&mut zip, &mut raw, i, prefix, depth, &here);
        }
        self.keras_verdict(prefix, &here, true);
    }

    /// Checks the names as the central directory lists them, before the zip crate's index
    /// (which keeps one entry per name) hides any: exact duplicates, and names equal ignoring
    /// ASCII case (miniz, which torch and numpy read zips with, looks names up that way).
    fn names<R: Read + Seek>(
        &mut self,
        mut raw: R,
        start: u64,
        indexed: usize,
        prefix: &str,
        here: &str,
    ) {
        let mut seen = SeenNames::default();
        let mut count = 0usize;
        let mut at = start;
        let mut fixed = [0u8; CENTRAL_LEN as usize];
        // Each entry takes at least 46 bytes of the input: the walk is bounded by its size.
        while raw.seek(SeekFrom::Start(at)).is_ok() && raw.read_exact(&mut fixed).is_ok() {
            let Some(h) = CentralHeader::parse(&fixed) else {
                break;
            };
            let mut name = vec![0u8; usize::from(h.name_len)];
            if raw.read_exact(&mut name).is_err() {
                break;
            }
            let shown = format!("member {prefix}{}", String::from_utf8_lossy(&name));
            if links::is_symlink(&h) {
                self.links.insert(shown.clone());
            }
            match seen.see(&name, count) {
                Some(Repeat::Exact(first)) => self.a.structure.add_with(Severity::Fail, shown.clone(), || {
                    format!("listed twice in the central directory (entries {first} and {count}): readers disagree on which one they extract (zipfile's index keeps the last)")
                }),
                Some(Repeat::Case(other)) => self.a.structure.add_with(Severity::Fail, shown.clone(), || {
                    format!("differs from member {prefix}{other} only in ASCII case: miniz (which torch and numpy read zips with) looks names up ignoring case, and extracted on a case-insensitive file system one overwrites the other")
                }),
                None => {}
            }
            count += 1;
            at += CENTRAL_LEN + h.variable_len() as u64;
        }
        if count != indexed && seen.distinct() == count {
            self.a.structure.add_with(Severity::Fail, here.to_owned(), || {
                format!("its central directory holds {count} entries where the zip crate indexes {indexed}: readers see different members")
            });
        }
    }

    fn member<R: Read + Seek + Clone>(
        &mut self,
        zip: &mut ZipArchive<R>,
        raw: &mut R,
        i: usize,
        prefix: &str,
        depth: usize,
        here: &str,
    ) {
        let (name, central_name, header_start, size, crc, encrypted, is_dir, stored_at) =
            match zip.by_index_raw(i) {
                Ok(f) => (
                    String::from_utf8_lossy(f.name_raw()).into_owned(),
                    f.name_raw().to_vec(),
                    f.header_start(),
                    f.size(),
                    f.crc32(),
                    f.encrypted(),
                    f.is_dir(),
                    (f.compression() == zip::CompressionMethod::Stored
                        && f.compressed_size() == f.size())
                    .then(|| f.data_start()),
                ),
                Err(e) => {
                    self.a
                        .structure
                        .add_with(Severity::Fail, here.to_owned(), || {
                            format!("entry {i} of its central directory cannot be read ({e})")
                        });
                    return;
                }
            };
        self.a.members += 1;
        let place = format!("member {prefix}{name}");
        if let Some(why) = unsafe_path(&name) {
            self.a
                .structure
                .add_with(Severity::Fail, place.clone(), || why.to_owned());
        }
        if let Some(local) = local_name(raw, header_start).filter(|l| *l != central_name) {
            let local = String::from_utf8_lossy(&local).into_owned();
            self.a.structure.add_with(Severity::Fail, place.clone(), || {
                format!("its local header names it {local:?}: zipfile refuses the archive (the names in directory and header differ), and extractors that stream the local headers write another file than the central directory lists")
            });
        }
        if encrypted {
            self.a.unchecked.add_with(Severity::Lead, place, || {
                "encrypted: it cannot be read, and nothing in it was checked".into()
            });
            return;
        }
        if is_dir && size == 0 {
            return;
        }
        let left = self.left();
        if size > left {
            let budget = self.a.budget;
            self.a.unchecked.add_with(Severity::Lead, place, || {
                format!("declares {size} bytes inflated, more than the {left} left of the {budget} socair inflates for this input (32 MiB + 4x its size): not inflated, nothing in it was checked")
            });
            return;
        }
        let mut file = match zip.by_index(i) {
            Ok(f) => f,
            Err(e) => {
                self.a.unchecked.add_with(Severity::Lead, place, || {
                    format!("cannot be inflated here ({e}): nothing in it was checked")
                });
                return;
            }
        };
        let method = file.compression();
        let mut bytes = Vec::with_capacity(size.min(1 << 20) as usize);
        // One byte past the declared size shows a member that inflates past it.
        let read = (&mut file).take(size + 1).read_to_end(&mut bytes);
        drop(file);
        self.a.inflated += bytes.len() as u64;
        if let Err(e) = read {
            // The zip crate checks the CRC-32 itself at the end; that mismatch is named below
            // with both values, anything else here.
            if bytes.len() as u64 != size {
                self.a.structure.add_with(Severity::Fail, place, || {
                    format!("cannot be inflated ({method} after {} bytes: {e}): nothing in it was checked", bytes.len())
                });
                return;
            }
        }
        if bytes.len() as u64 > size {
            self.a.structure.add_with(Severity::Fail, place, || {
                format!("inflates past the {size} bytes the central directory declares (a zip bomb, or a member readers cut at different places): nothing in it was checked")
            });
            return;
        }
        if (bytes.len() as u64) < size {
            let got = bytes.len();
            self.a.structure.add_with(Severity::Fail, place, || {
                format!(
                    "inflates to {got} bytes, fewer than the {size} the central directory declares"
                )
            });
            return;
        }
        let actual = crc32(&bytes);
        if actual != crc {
            self.a.structure.add_with(Severity::Fail, place, || {
                format!("the CRC-32 of its inflated bytes is {actual:08x}, the central directory records {crc:08x}: the member was altered, or readers read different bytes")
            });
            return;
        }
        self.a.crc_verified += 1;
        if self.links.remove(&place) {
            // A symbolic link: its data is the target, named with it (kit's `zip::links`).
            let (fail, why) = links::finding(&central_name, &bytes);
            let severity = if fail { Severity::Fail } else { Severity::Lead };
            let place = place.clone();
            if fail {
                self.a.structure.add_with(severity, place, || why);
            } else {
                self.a.unchecked.add_with(severity, place, || why);
            }
        }
        // A stored member of the file itself is its own bytes in the file, which the host can
        // read in place.
        self.span = stored_at
            .filter(|_| prefix.is_empty())
            .map(|offset| (offset, size));
        self.contents(&name, &bytes, prefix, depth);
        self.span = None;
    }

    /// Opens one member's bytes.
    pub(crate) fn contents(&mut self, name: &str, bytes: &[u8], prefix: &str, depth: usize) {
        let span = self.span.take();
        let place = format!("member {prefix}{name}");
        self.keras_sign(name, bytes, prefix);
        if self.torch_record(name, bytes, prefix) {
            return;
        }
        // A zip before a pickle: the first bytes of a zip may also run as a protocol-0 pickle
        // (PERSID reading a line), which no unpickler without a persistent_load accepts,
        // while every zip reader reads the zip.
        let zip_like = bytes.starts_with(detect::LOCAL_SIG) || bytes.starts_with(b"PK\x05\x06");
        let head = &bytes[..bytes.len().min(4096)];
        if !zip_like && pickle::looks_like_pickle(head, bytes.len() as u64) {
            self.pickle_at(&place, bytes, 0, self.profile);
            return;
        }
        // `.keras` archives and HDF5 files: the Keras plugin's rules (crate::keras).
        if self.keras(&place, bytes) {
            return;
        }
        if bytes.starts_with(detect::SEVEN_Z_MAGIC) {
            if depth >= MAX_DEPTH {
                self.a.unchecked.add_with(Severity::Lead, place, || {
                    format!("a 7z archive nested {} deep, deeper than the {MAX_DEPTH} socair opens: nothing in it was checked", depth + 1)
                });
            } else {
                self.seven_z(
                    io::Cursor::new(bytes),
                    &format!("{prefix}{name}!/"),
                    depth + 1,
                );
            }
            return;
        }
        if bytes.starts_with(b"\x93NUMPY") {
            self.npy(&place, bytes);
            return;
        }
        if zip_like {
            // A torch checkpoint by its own central directory (the claim rule's scan of every
            // central-header signature would also see the records of a checkpoint stored
            // inside a plain zip).
            let torch = ZipArchive::new(io::Cursor::new(bytes))
                .is_ok_and(|z| z.file_names().any(|n| torch_record_name(n.as_bytes())));
            if depth >= MAX_DEPTH {
                self.a.unchecked.add_with(Severity::Lead, place, || {
                    format!("a zip archive nested {} deep, deeper than the {MAX_DEPTH} socair opens: nothing in it was checked", depth + 1)
                });
                return;
            }
            let inner = format!("{prefix}{name}!/");
            if torch {
                // A torch checkpoint: its pickles through the machine (crate::members).
                self.torch_prefixes.insert(inner.clone());
                self.zip(io::Cursor::new(bytes), &inner, depth + 1);
                self.torch_prefixes.remove(&inner);
                self.a.unchecked.add_with(Severity::Lead, place, || {
                    "a PyTorch checkpoint (a zip holding torch records): its pickles were run through the pickle machine here (the pickle row); its storages and records are what the torch-zip plugin checks when it reads the file on its own: extract it and scan it for those".into()
                });
            } else {
                // Another zip, or an .npz whose .npy members are opened as arrays.
                self.zip(io::Cursor::new(bytes), &inner, depth + 1);
            }
            return;
        }
        // A skops file's schema, judged as skops 0.16 loads it (socair_skops): a FAIL
        // for what runs code, a LEAD for what skops refuses without trusted= (or socair did
        // not read whole), data when skops.io.load loads it by default and nothing in it runs
        // code.
        if name.rsplit('/').next() == Some("schema.json") {
            if let Some(j) = socair_skops::judge(bytes).map(|j| j.trusting(&self.reviewed)) {
                for (at, why) in &j.dangerous {
                    let at = if at.is_empty() { "(its root)" } else { at };
                    self.a
                        .structure
                        .add_with(Severity::Fail, format!("{place} {at}"), || why.clone());
                }
                let more = if j.more > 0 {
                    format!(" ({} more names that run code, not listed)", j.more)
                } else {
                    String::new()
                };
                match j.lead() {
                    Some(lead) => self
                        .a
                        .unchecked
                        .add_with(Severity::Lead, place, || format!("{lead}{more}")),
                    None if j.dangerous.is_empty() => self.a.data += 1,
                    None => {}
                }
                return;
            }
        }
        // JSON and text by the companion rules, as the host reads a directory's; every other
        // member is handed back to the host, to be read by whichever reader claims it (a
        // SavedModel zipped, a safetensors file, a YAML config) as a directory's files are.
        match companion::classify(name, bytes, MEMBER_UNREAD) {
            Companion::Data(_) => self.a.data += 1,
            // An empty member is no file any reader reads.
            Companion::Lead(reason) if bytes.is_empty() => {
                self.a.unchecked.add_with(Severity::Lead, place, || reason)
            }
            Companion::Lead(reason) => self.hand_back(name, bytes, prefix, span, reason),
            Companion::Fail { findings, .. } => {
                for (at, reason) in findings {
                    self.a
                        .structure
                        .add_with(Severity::Fail, format!("{place} {at}"), || reason);
                }
            }
        }
    }

    /// Hands member `name` of the archive at `prefix` back to the host: as its span of the
    /// file when it has one, else as its decoded bytes while they fit in what is left to hand
    /// back (past it, a LEAD: the member is not read).
    fn hand_back(
        &mut self,
        name: &str,
        bytes: &[u8],
        prefix: &str,
        span: Option<(u64, u64)>,
        unclaimed: String,
    ) {
        let bytes = match span {
            Some((offset, len)) => HandedBytes::Span { offset, len },
            None if bytes.len() as u64 <= self.hand_back_left => {
                self.hand_back_left -= bytes.len() as u64;
                HandedBytes::Decoded(bytes.to_vec())
            }
            None => {
                let len = bytes.len();
                self.a
                    .unchecked
                    .add_with(Severity::Lead, format!("member {prefix}{name}"), || {
                        format!("its {len} decoded bytes are more than what is left of the memory the host lets members hold: not read, nothing in it was checked")
                    });
                return;
            }
        };
        self.a.handed.push(Handed {
            name: format!("{prefix}{name}"),
            bytes,
            unclaimed,
        });
    }

    /// Runs `bytes` (which start at byte `base` of the member at `place`) through the pickle
    /// machine under `profile` ([`pickle::Profile::Torch`] for a nested torch checkpoint's
    /// records).
    pub(crate) fn pickle_at(
        &mut self,
        place: &str,
        bytes: &[u8],
        base: u64,
        profile: pickle::Profile,
    ) {
        self.a.pickles += 1;
        let options = pickle::Options {
            reviewed: self.reviewed.clone(),
            legacy: false,
            input_len: 0,
            // The rule set this plugin declares (GRAMMAR) for torch's pickles; a member is a
            // pickle outside a torch checkpoint, judged by the profile (socair-data/1, or
            // socair-sklearn/1 when asked), which runs over socair-wo/3's typed model.
            grammar: pickle::Grammar::V1,
            profile,
            python2_str: if profile.data() {
                pickle::Python2Str::CallerChooses
            } else {
                pickle::Python2Str::TorchUtf8
            },
            ..Default::default()
        };
        let outcome = pickle::run(bytes, &options);
        for f in &outcome.findings {
            self.a.pickle.add_with(
                f.severity,
                format!("{place} byte {} ({})", base + f.offset, f.opcode),
                || f.reason.clone(),
            );
        }
        if self.a.profile.is_none() {
            self.a.profile = profile.name();
        }
        for g in outcome.reviewed_used {
            if !self.a.reviewed_used.contains(&g) {
                self.a.reviewed_used.push(g);
            }
        }
    }
}

/// The name in the local header at `at`, when one is there.
fn local_name<R: Read + Seek>(raw: &mut R, at: u64) -> Option<Vec<u8>> {
    let mut fixed = [0u8; LOCAL_LEN as usize];
    raw.seek(SeekFrom::Start(at)).ok()?;
    raw.read_exact(&mut fixed).ok()?;
    let mut name = vec![0u8; usize::from(LocalHeader::parse(&fixed)?.name_len)];
    raw.read_exact(&mut name).ok()?;
    Some(name)
}

/// The member names of one archive seen so far, to find a name listed twice, exactly or
/// ignoring ASCII case (zip's and 7z's walks judge repeats alike).
#[derive(Default)]
pub(crate) struct SeenNames {
    exact: HashMap<Vec<u8>, usize>,
    folded: HashMap<Vec<u8>, Vec<u8>>,
}

/// How a name repeats one seen before.
pub(crate) enum Repeat {
    /// The same bytes, first seen as entry `.0`.
    Exact(usize),
    /// The same ignoring ASCII case: the name seen first.
    Case(String),
}

impl SeenNames {
    /// Records `name`, entry `index`, and says how it repeats an earlier one, if it does.
    pub(crate) fn see(&mut self, name: &[u8], index: usize) -> Option<Repeat> {
        if let Some(first) = self.exact.insert(name.to_vec(), index) {
            return Some(Repeat::Exact(first));
        }
        self.folded
            .insert(name.to_ascii_lowercase(), name.to_vec())
            .map(|other| Repeat::Case(String::from_utf8_lossy(&other).into_owned()))
    }

    /// How many distinct names were seen.
    pub(crate) fn distinct(&self) -> usize {
        self.exact.len()
    }
}

/// Why a member name is unsafe to extract: a `..` component or an absolute path (either
/// separator, as extractors on Windows read `\`), a drive letter, or a NUL byte.
pub(crate) fn unsafe_path(name: &str) -> Option<&'static str> {
    if name.contains('\0') {
        return Some("its name holds a NUL byte: C readers cut it there, others do not");
    }
    if name.starts_with('/') || name.starts_with('\\') {
        return Some("an absolute path: a naive extractor writes it outside the target directory");
    }
    let b = name.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Some(
            "a path with a drive letter: extracted on Windows it leaves the target directory",
        );
    }
    if name.split(['/', '\\']).any(|c| c == "..") {
        return Some(
            "a `..` component: a naive extractor writes it outside the target directory (zip slip)",
        );
    }
    None
}
