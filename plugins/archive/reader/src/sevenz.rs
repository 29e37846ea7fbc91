//! The walk over a 7z archive, read with the `sevenz-rust2` crate: its header parsed within the
//! budget, its names judged as a zip's are, and every member decoded within the same budget as
//! zip members are inflated and sent through the same [`Walk::contents`] dispatcher (pickles to
//! the pickle machine, nested zips and 7z archives walked to [`crate::scan::MAX_DEPTH`]).
//!
//! What the crate would allocate from a header value is bounded before it decodes anything:
//!
//! * the header: the crate's own memory limit is set to the budget left, so a header (or an
//!   encoded header's dictionary) larger than that is refused before it is allocated (a LEAD);
//! * each folder (a "block": coders over packed streams, one or more members): its members'
//!   declared sizes plus the working memory of its coders ([`working_memory`]) must fit in the
//!   budget left, or the members that do not fit are not decoded (a LEAD naming the member and
//!   the bound). `lzma-rust2` grows an LZMA window with the bytes it decodes, not to the
//!   declared dictionary size, so a folder declaring a 4 GiB dictionary costs what it decodes;
//!   PPMd's model is allocated whole, so it is counted whole.
//!
//! * the decoder tables all folders set up together: at most eight budgets.
//!
//! A folder of one Deflate or one Zstandard coder is decoded by [`coders`] (not by the crate,
//! whose features for them would switch flate2's backend or build C zstd), within the same
//! budget and with the same CRC checks. Encrypted folders and headers are LEADs (no password
//! is tried); other coders the crate does not decode here (and chains holding Deflate or
//! Zstandard behind a filter) are LEADs naming the coder; a structure the crate refuses (bad CRC, truncated,
//! sizes that disagree) is a FAIL naming the reason. Each call into the crate runs under
//! `catch_unwind`: a panic is a FAIL for that archive, the crate's state is dropped with it, and
//! the findings made before it stay.

use crate::scan::{unsafe_path, Repeat, SeenNames, Walk};
use sevenz_rust2::{Archive, ArchiveEntry, Block, BlockDecoder, EncoderMethod, Error, Password};
use socair_pickle::pickle::Severity;
use socair_plugin_kit::zip::links;
use std::io::{Read, Seek};
use std::panic::{catch_unwind, AssertUnwindSafe};

mod coders;

/// The smallest working memory counted for a coder: its buffers.
const CODER_BUFFERS: u64 = 64 << 10;
/// 7-Zip's `FILE_ATTRIBUTE_UNIX_EXTENSION`: the high 16 attribute bits hold a Unix mode.
const UNIX_EXTENSION: u32 = 0x8000;
/// A BZip2 decoder's working memory: 4 bytes per byte of its largest block (900 kB) and tables.
const BZIP2_MEMORY: u64 = 4 << 20;
/// The decoder tables all folders may set up together, in budgets: each folder's decoder
/// initialises its tables (an LZMA model alone can be 6 MiB), so a file of many small folders
/// would otherwise cost time without bound; eight budgets is well under a second of work.
const SETUP_FACTOR: u64 = 8;
/// How far a filter may read ahead of what it returns (the LZMA window grows with that too).
const READ_AHEAD: u64 = 64 << 10;

/// Coders this build of the crate decodes (features `bzip2` and `ppmd`; Deflate, Deflate64,
/// Zstandard, Brotli, LZ4 and AES are not built in: a folder of one Deflate or Zstandard coder
/// is decoded by [`coders`]).
const DECODED: &[&[u8]] = &[
    EncoderMethod::ID_COPY,
    EncoderMethod::ID_LZMA,
    EncoderMethod::ID_LZMA2,
    EncoderMethod::ID_PPMD,
    EncoderMethod::ID_BZIP2,
    EncoderMethod::ID_BCJ_X86,
    EncoderMethod::ID_BCJ2,
    EncoderMethod::ID_BCJ_PPC,
    EncoderMethod::ID_BCJ_IA64,
    EncoderMethod::ID_BCJ_ARM,
    EncoderMethod::ID_BCJ_ARM64,
    EncoderMethod::ID_BCJ_ARM_THUMB,
    EncoderMethod::ID_BCJ_SPARC,
    EncoderMethod::ID_BCJ_RISCV,
    EncoderMethod::ID_DELTA,
];

/// A coder's name as 7-Zip names it, or its method id in hex.
fn coder_name(id: &[u8]) -> String {
    match EncoderMethod::by_id(id) {
        Some(m) => m.name().to_owned(),
        None => {
            let hex: Vec<String> = id.iter().map(|b| format!("{b:02x}")).collect();
            format!("method id {}", hex.join(""))
        }
    }
}

fn u32_at(props: &[u8], at: usize) -> Option<u64> {
    let b = props.get(at..at + 4)?;
    Some(u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
}

/// An LZMA window as `lzma-rust2` grows it: the declared dictionary (at least 4 KiB, rounded
/// up to 16), but never more than about twice what the decoder produced (it doubles, from
/// 64 KiB).
fn lz_window(dict: u64, produced: u64) -> u64 {
    let dict = (dict.max(4096) + 15) & !15;
    dict.min(produced.saturating_mul(2).max(64 << 10))
}

/// The working memory the coders of `block` need to produce `out` bytes of its output: what
/// must fit in the budget beside the decoded bytes. Mirrors what `sevenz-rust2`'s `add_decoder`
/// and `lzma-rust2` allocate for each coder.
pub fn working_memory(block: &Block, out: u64) -> u64 {
    let mut total = 0u64;
    for (i, coder) in block.coders.iter().enumerate() {
        let produced = block
            .get_unpack_size_at_index(i)
            .min(out.saturating_add(READ_AHEAD));
        let props = coder.properties();
        let id = coder.encoder_method_id();
        let need = if id == EncoderMethod::ID_LZMA {
            // The probability model: 2 bytes for each of 0x300 << (lc + lp) probabilities.
            let p = u32::from(props.first().copied().unwrap_or(0));
            let (lc, lp) = (p % 9, (p / 9) % 5);
            let model = (2u64 * 0x300) << (lc + lp);
            lz_window(u32_at(props, 1).unwrap_or(0), produced) + model + CODER_BUFFERS
        } else if id == EncoderMethod::ID_LZMA2 {
            let bits = u32::from(props.first().copied().unwrap_or(0)).min(40);
            let dict = if bits == 40 {
                u64::from(u32::MAX)
            } else {
                u64::from((2 | (bits & 1)) << (bits / 2 + 11))
            };
            // Plus the largest compressed chunk, read whole.
            lz_window(dict, produced) + 2 * CODER_BUFFERS
        } else if id == EncoderMethod::ID_PPMD {
            u32_at(props, 1).unwrap_or(0) + CODER_BUFFERS
        } else if id == EncoderMethod::ID_BZIP2 {
            BZIP2_MEMORY
        } else {
            CODER_BUFFERS
        };
        total = total.saturating_add(need);
    }
    total
}

/// Why the crate refused something: an I/O error's inner crate error when it carries one.
fn crate_error(e: &std::io::Error) -> Option<&Error> {
    e.get_ref().and_then(|inner| inner.downcast_ref::<Error>())
}

fn is_crc_error(e: &std::io::Error) -> bool {
    matches!(
        crate_error(e),
        Some(Error::ChecksumVerificationFailed | Error::NextHeaderCrcMismatch)
    ) || e.to_string().contains("ChecksumVerificationFailed")
}

/// What the 32-byte signature header says before the crate reads it.
enum Signature {
    /// The whole file is a signature header whose CRC is right and whose next header is empty
    /// (offset and size 0). 7-Zip's `ReadDatabase2` reads that as an archive with no member
    /// (`nextHeaderSize == 0`: `IsArc = true`), where sevenz-rust2 refuses it.
    Empty,
    /// The start header's CRC and its 20 bytes are all zeros.
    Zeroed,
    /// Anything else: left to the crate.
    Other,
}

fn signature_header<R: Read + Seek>(reader: &mut R) -> Signature {
    let mut head = [0u8; 33];
    let mut n = 0;
    if reader.seek(std::io::SeekFrom::Start(0)).is_ok() {
        while n < head.len() {
            match reader.read(&mut head[n..]) {
                Ok(0) | Err(_) => break,
                Ok(k) => n += k,
            }
        }
    }
    if n < 32 || !head.starts_with(crate::detect::SEVEN_Z_MAGIC) {
        return Signature::Other;
    }
    if head[8..32].iter().all(|&b| b == 0) {
        return Signature::Zeroed;
    }
    let crc_right =
        u32_at(&head, 8) == Some(u64::from(socair_plugin_kit::zip::crc::crc32(&head[12..32])));
    if n == 32 && head[6] == 0 && crc_right && head[12..28].iter().all(|&b| b == 0) {
        return Signature::Empty;
    }
    Signature::Other
}

/// A member read out of a folder: its index, the bytes decoded, and why it could not be read
/// to its end, if it could not.
struct Decoded {
    file: usize,
    bytes: Vec<u8>,
    error: Option<std::io::Error>,
}

impl Walk {
    /// Opens the 7z archive read by `reader` at `depth`; its members' places start with
    /// `prefix` (`outer.zip!/` for a nested one).
    pub(crate) fn seven_z<R: Read + Seek>(&mut self, mut reader: R, prefix: &str, depth: usize) {
        let here = match prefix.strip_suffix("!/") {
            Some(p) => format!("member {p}"),
            None => "archive".to_owned(),
        };
        match signature_header(&mut reader) {
            Signature::Empty => {
                self.a.sevenz_archives += 1;
                return;
            }
            Signature::Zeroed => {
                // The crate would then search the last MiB for a header, parsing a candidate at
                // every 0x01 or 0x17 byte: quadratic work on a hostile file.
                self.a.structure.add_with(Severity::Fail, here, || {
                    "its start header is all zeros (an archive whose writing was interrupted): 7-Zip searches the file for a header it might list, socair does not; nothing in it was checked".into()
                });
                return;
            }
            Signature::Other => {}
        }
        let limit_kb = usize::try_from(self.left() / 1024).unwrap_or(usize::MAX);
        let read = catch_unwind(AssertUnwindSafe(|| {
            Archive::read_with_memory_limit(&mut reader, &Password::empty(), limit_kb)
        }));
        let archive = match read {
            Ok(Ok(archive)) => archive,
            Ok(Err(e)) => {
                self.header_refused(&here, e, limit_kb);
                return;
            }
            Err(_) => {
                self.a.structure.add_with(Severity::Fail, here, || {
                    "the 7z reader (sevenz-rust2) panicked on its header: malformed in a way the reader does not survive; nothing in it was checked".into()
                });
                return;
            }
        };
        self.a.sevenz_archives += 1;
        self.a.members += archive.files.len() as u64;
        self.seven_z_names(&archive, prefix);

        // The members with data, by folder, in the order the folder holds them.
        let mut by_block: Vec<Vec<usize>> = vec![Vec::new(); archive.blocks.len()];
        for (i, file) in archive.files.iter().enumerate() {
            if !file.has_stream {
                continue;
            }
            match archive
                .stream_map
                .file_block_index
                .get(i)
                .copied()
                .flatten()
            {
                Some(b) if b < by_block.len() => by_block[b].push(i),
                _ => {
                    let place = format!("member {prefix}{}", file.name);
                    self.a.structure.add_with(Severity::Fail, place, || {
                        "its header gives it data but no folder holds it".into()
                    });
                }
            }
        }
        for (b, files) in by_block.iter().enumerate() {
            if !files.is_empty() && !self.block(&archive, &mut reader, b, files, prefix, depth) {
                // The crate panicked: its state is gone, and so is trust in the rest.
                for &f in by_block[b + 1..].iter().flatten() {
                    let place = format!("member {prefix}{}", archive.files[f].name);
                    self.a.unchecked.add_with(Severity::Lead, place, || {
                        "not decoded: the 7z reader panicked on an earlier folder; nothing in it was checked".into()
                    });
                }
                break;
            }
        }
        // Members without data: an empty file is opened as zip members of 0 bytes are.
        for file in &archive.files {
            if !file.has_stream && !file.is_directory && !file.is_anti_item {
                self.contents(&file.name, &[], prefix, depth);
            }
        }
        // Keras reads zips only: a 7z's config.json is data.
        self.keras_verdict(prefix, &here, false);
    }

    fn header_refused(&mut self, here: &str, e: Error, limit_kb: usize) {
        let (severity, why) = match &e {
            Error::PasswordRequired | Error::MaybeBadPassword(_) => (
                Severity::Lead,
                "its header is encrypted: no password is tried, so not even its member names were read; nothing in it was checked".to_owned(),
            ),
            Error::UnsupportedCompressionMethod(name) if name.contains("AES") => (
                Severity::Lead,
                "its header is encrypted (AES-256): no password is tried, so not even its member names were read; nothing in it was checked".to_owned(),
            ),
            Error::UnsupportedCompressionMethod(name) => (
                Severity::Lead,
                format!("its header is compressed with {name}, a coder socair's 7z reader does not decode: nothing in it was checked"),
            ),
            Error::MaxMemLimited { actaul_kb, .. } => (
                Severity::Lead,
                format!("its header (or the dictionary it is compressed with) needs {actaul_kb} KiB, more than the {limit_kb} KiB left of what socair decodes for this input (32 MiB + 4x its size): not decoded, nothing in it was checked"),
            ),
            Error::Unsupported(what) => (
                Severity::Lead,
                format!("its header uses what socair's 7z reader does not read ({what}): nothing in it was checked"),
            ),
            Error::ExternalUnsupported => (
                Severity::Lead,
                "its header is stored in an external stream, which socair's 7z reader does not read: nothing in it was checked".to_owned(),
            ),
            _ => (
                Severity::Fail,
                format!("not a 7z archive the 7z reader (sevenz-rust2) reads ({e}): corrupt, truncated or built to be read differently; nothing in it was checked"),
            ),
        };
        self.a.structure.add_with(severity, here.to_owned(), || why);
    }

    /// Checks the names as the header lists them: unsafe paths, exact duplicates, and names
    /// equal ignoring ASCII case, as the zip walk judges them.
    fn seven_z_names(&mut self, archive: &Archive, prefix: &str) {
        let mut seen = SeenNames::default();
        for (i, file) in archive.files.iter().enumerate() {
            let name = file.name.as_str();
            let place = format!("member {prefix}{name}");
            if let Some(why) = unsafe_path(name) {
                self.a
                    .structure
                    .add_with(Severity::Fail, place.clone(), || why.to_owned());
            }
            match seen.see(name.as_bytes(), i) {
                Some(Repeat::Exact(first)) => self.a.structure.add_with(Severity::Fail, place, || {
                    format!("listed twice in the 7z header (entries {first} and {i}): extractors disagree on which one they keep")
                }),
                Some(Repeat::Case(other)) => self.a.structure.add_with(Severity::Fail, place, || {
                    format!("differs from member {prefix}{other} only in ASCII case: extracted on a case-insensitive file system one overwrites the other")
                }),
                None => {}
            }
        }
    }

    /// Decodes folder `b` (whose members with data are `files`) within the budget and opens
    /// what it decoded. Returns `false` when the crate panicked.
    fn block<R: Read + Seek>(
        &mut self,
        archive: &Archive,
        reader: &mut R,
        b: usize,
        files: &[usize],
        prefix: &str,
        depth: usize,
    ) -> bool {
        let block = &archive.blocks[b];
        let place_of = |f: usize| format!("member {prefix}{}", archive.files[f].name);
        let ids: Vec<&[u8]> = block.coders.iter().map(|c| c.encoder_method_id()).collect();
        if ids.contains(&EncoderMethod::ID_AES256_SHA256) {
            for &f in files {
                self.a.unchecked.add_with(Severity::Lead, place_of(f), || {
                    "encrypted (AES-256); not read: no password is tried, and nothing in it was checked".into()
                });
            }
            return true;
        }
        if let Some(name) = coders::single_coder(archive, b) {
            self.own_coder(archive, reader, b, files, (prefix, depth), name);
            return true;
        }
        if let Some(id) = ids.iter().find(|id| !DECODED.contains(id)) {
            let name = coder_name(id);
            for &f in files {
                self.a.unchecked.add_with(Severity::Lead, place_of(f), || {
                    format!("compressed with {name}, a coder socair's 7z reader does not decode: nothing in it was checked")
                });
            }
            return true;
        }
        let Some((take, planned)) = self.plan(block, archive, files, &place_of) else {
            return true;
        };
        self.a.decoder_setup += working_memory(block, planned);
        let mut decoded: Vec<Decoded> = Vec::with_capacity(take);
        let pw = Password::empty();
        let run = catch_unwind(AssertUnwindSafe(|| {
            let mut next = 0usize;
            let mut each = |entry: &ArchiveEntry, data: &mut dyn Read| {
                if !entry.has_stream {
                    return Ok(true);
                }
                if next >= take {
                    // Past the members that fit: stop without decoding the rest.
                    return Ok(false);
                }
                let file = files[next];
                next += 1;
                let mut bytes = Vec::new();
                // The declared size was checked against the budget: reserve it exactly, so
                // that reading never doubles the buffer.
                let size = usize::try_from(entry.size).unwrap_or(usize::MAX);
                if bytes.try_reserve_exact(size).is_err() {
                    return Err(Error::Other(
                        "cannot allocate a member's declared size".into(),
                    ));
                }
                let error = data.read_to_end(&mut bytes).err();
                let failed = error.is_some();
                decoded.push(Decoded { file, bytes, error });
                // After an error the folder's stream is in no state to go on.
                Ok(!failed)
            };
            BlockDecoder::new(1, b, archive, &pw, &mut *reader).for_each_entries(&mut each)
        }));
        let block_error = match run {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(e),
            Err(_) => {
                let here = match prefix.strip_suffix("!/") {
                    Some(p) => format!("member {p}"),
                    None => "archive".to_owned(),
                };
                self.a.structure.add_with(Severity::Fail, here, || {
                    format!("the 7z reader (sevenz-rust2) panicked decoding folder {b}: malformed in a way the reader does not survive; nothing after it was checked")
                });
                self.open_decoded(archive, decoded, prefix, depth);
                return false;
            }
        };
        let reached = decoded.len();
        let failed_member = decoded.iter().any(|d| d.error.is_some());
        self.open_decoded(archive, decoded, prefix, depth);
        if let Some(e) = block_error {
            // Refused before its first member, or at the folder's end after its last.
            let place = place_of(files[reached.saturating_sub(1)]);
            let (severity, why) = match &e {
                Error::UnsupportedCompressionMethod(_) | Error::Unsupported(_) => (
                    Severity::Lead,
                    format!("its folder uses what socair's 7z reader does not decode ({e}): nothing in it was checked"),
                ),
                Error::PasswordRequired | Error::MaybeBadPassword(_) => (
                    Severity::Lead,
                    "encrypted; not read: no password is tried, and nothing in it was checked"
                        .to_owned(),
                ),
                _ => (
                    Severity::Fail,
                    format!("its folder cannot be decoded ({e}): corrupt, truncated or built to be read differently; nothing after it was checked"),
                ),
            };
            self.a.structure.add_with(severity, place, || why);
            return true;
        }
        if failed_member {
            for &f in &files[reached..take] {
                self.a.unchecked.add_with(Severity::Lead, place_of(f), || {
                    "not decoded: an earlier member of its solid folder could not be; nothing in it was checked".into()
                });
            }
        }
        true
    }

    /// The members of folder `block` (`files`) that fit: their declared sizes and the coders'
    /// working memory within what is left of the budget, and the decoder tables all folders
    /// set up within eight budgets. Those that do not fit are LEADs; `None` when none is
    /// decoded, else how many from the first and their bytes.
    fn plan(
        &mut self,
        block: &Block,
        archive: &Archive,
        files: &[usize],
        place_of: &impl Fn(usize) -> String,
    ) -> Option<(usize, u64)> {
        let budget = self.a.budget;
        let setup = working_memory(block, 0);
        if self.a.decoder_setup.saturating_add(setup) > budget.saturating_mul(SETUP_FACTOR) {
            let done = self.a.decoder_setup;
            for &f in files {
                self.a.unchecked.add_with(Severity::Lead, place_of(f), || {
                    format!("not decoded: the folders before it set up {done} bytes of decoder tables, and its own {setup} more would pass {SETUP_FACTOR} times the {budget} socair decodes for this input; nothing in it was checked")
                });
            }
            return None;
        }
        let left = self.left();
        let mut planned = 0u64;
        let mut take = 0;
        for &f in files {
            let next = planned.saturating_add(archive.files[f].size);
            if next.saturating_add(working_memory(block, next)) > left {
                break;
            }
            planned = next;
            take += 1;
        }
        for &f in &files[take..] {
            let size = archive.files[f].size;
            let memory = working_memory(block, planned.saturating_add(size));
            self.a.unchecked.add_with(Severity::Lead, place_of(f), || {
                format!("declares {size} bytes, which with the {memory} bytes its folder's decoder needs is more than the {left} left of the {budget} socair decodes for this input (32 MiB + 4x its size): not decoded, nothing in it was checked")
            });
        }
        (take > 0).then_some((take, planned))
    }

    /// Folder `b`, one Deflate or Zstandard coder (`name`), decoded by [`coders`] within the
    /// budget; its members' CRC-32s checked, then opened.
    fn own_coder<R: Read + Seek>(
        &mut self,
        archive: &Archive,
        reader: &mut R,
        b: usize,
        files: &[usize],
        (prefix, depth): (&str, usize),
        name: &str,
    ) {
        let block = &archive.blocks[b];
        let place_of = |f: usize| format!("member {prefix}{}", archive.files[f].name);
        let Some((take, planned)) = self.plan(block, archive, files, &place_of) else {
            return;
        };
        self.a.decoder_setup += working_memory(block, planned);
        // What a Zstandard frame may keep besides the bytes planned.
        let window = self.left().saturating_sub(planned);
        let sizes = files[..take]
            .iter()
            .map(|&f| archive.files[f].size)
            .collect();
        let sink = match coders::decode(archive, b, name, reader, sizes, window) {
            Ok(sink) => sink,
            Err(coders::CoderError::Corrupt(why)) => {
                self.a
                    .structure
                    .add_with(Severity::Fail, place_of(files[0]), || {
                        format!("{why}; nothing in its folder was checked")
                    });
                return;
            }
            Err(coders::CoderError::Bound(why)) => {
                for &f in &files[..take] {
                    self.a.unchecked.add_with(Severity::Lead, place_of(f), || {
                        format!("not decoded: {why}; nothing in it was checked")
                    });
                }
                return;
            }
        };
        let whole = take == files.len();
        if whole && block.has_crc && u64::from(sink.crc()) != block.crc {
            self.a.structure.add_with(Severity::Fail, place_of(files[0]), || {
                "the CRC-32 of its folder's decoded bytes does not match the one its header records: the members were altered, or readers read different bytes".into()
            });
            return;
        }
        let mut outs = sink.outs;
        // A member of 0 bytes never got a buffer.
        outs.resize_with(take, Vec::new);
        let decoded = files[..take]
            .iter()
            .zip(outs)
            .map(|(&f, bytes)| {
                let entry = &archive.files[f];
                let crc = u64::from(socair_plugin_kit::zip::crc::crc32(&bytes));
                let error = (entry.has_crc && crc != entry.crc)
                    .then(|| std::io::Error::other(Error::ChecksumVerificationFailed));
                Decoded {
                    file: f,
                    bytes,
                    error,
                }
            })
            .collect();
        self.open_decoded(archive, decoded, prefix, depth);
    }

    /// Judges and opens the members a folder decoded.
    /// Every decoded byte is counted before any member is opened, so that a nested archive
    /// sees the budget its siblings, still held, have used.
    fn open_decoded(
        &mut self,
        archive: &Archive,
        decoded: Vec<Decoded>,
        prefix: &str,
        depth: usize,
    ) {
        for d in &decoded {
            self.a.inflated += d.bytes.len() as u64;
        }
        for d in decoded {
            let file = &archive.files[d.file];
            let place = format!("member {prefix}{}", file.name);
            let size = file.size;
            match d.error {
                None => {
                    if file.has_crc {
                        self.a.crc_verified += 1;
                    }
                    // A symbolic link stored with 7-Zip's Unix extension (attribute bit
                    // 0x8000, the mode in the high 16 bits: py7zr 1.1 `py7zr.py`
                    // `ArchiveFile.is_symlink`; 7-Zip and py7zr extract it as a link): its
                    // data is the target (`socair_plugin_kit::zip::links`).
                    if file.has_windows_attributes
                        && file.windows_attributes & UNIX_EXTENSION != 0
                        && links::mode_is_symlink(file.windows_attributes)
                    {
                        let (fail, why) = links::finding(file.name.as_bytes(), &d.bytes);
                        if fail {
                            self.a
                                .structure
                                .add_with(Severity::Fail, place.clone(), || why);
                        } else {
                            self.a
                                .unchecked
                                .add_with(Severity::Lead, place.clone(), || why);
                        }
                    }
                    self.contents(&file.name, &d.bytes, prefix, depth);
                }
                Some(e) => {
                    let why = if is_crc_error(&e) {
                        "the CRC-32 of its decoded bytes does not match the one its header records: the member was altered, or readers read different bytes".to_owned()
                    } else if e.kind() == std::io::ErrorKind::InvalidData
                        && e.to_string().contains("exceeds declared size")
                    {
                        format!("decodes past the {size} bytes its header declares (a bomb, or a member readers cut at different places): nothing in it was checked")
                    } else {
                        format!("cannot be decoded ({e}): corrupt or truncated; nothing in it was checked")
                    };
                    self.a.structure.add_with(Severity::Fail, place, || why);
                }
            }
        }
    }
}
