//! torch's legacy serialization: what torch < 1.6 wrote, and what
//! `torch.save(..., _use_new_zipfile_serialization=False)` still writes
//! (`torch/serialization.py`, `_legacy_save` / `_legacy_load`).
//!
//! One file holds, back to back:
//!
//! 1. a pickle of the magic number `0x1950a86a20f9469cfc6c`;
//! 2. a pickle of the protocol version, `1001`;
//! 3. a pickle of `sys_info`: `{'protocol_version': 1001, 'little_endian': bool,
//!    'type_sizes': {'short': 2, 'int': 4, 'long': 4 or 8}}`;
//! 4. the main pickle, whose persistent ids are `('storage', storage class, root key, location,
//!    numel, view_metadata)` (`view_metadata` is None or `(view key, offset, size)`);
//! 5. a pickle of the list of root storage keys, each once;
//! 6. for each key in that order: the storage's element count as a little-endian int64, then
//!    its bytes (little-endian elements, whatever machine wrote them: `THPStorage_writeFileRaw`).
//!
//! torch.load runs every one of these pickles, so each goes through the same machine as a zip
//! checkpoint's `data.pkl`; only the main pickle may build tensors.
//!
//! Before them torch.load tries its oldest format, a tar archive (torch 0.1: members
//! `sys_info`, `pickle`, `tensors`, `storages`), read by [`crate::tarfile::torch`]: a file
//! whose first bytes CPython's tarfile opens and whose members are torch's is read as that,
//! every pickle of its members through the machine. Every check has its zip
//! analogue: keys listed once and equal to the keys the pickle names, each count equal to the
//! persistent id's, every storage inside the file, no byte after the last one.

use crate::checkpoint::{
    self, head_of, judge_locations, model_tensors, not_a_zip, Analysis, AnalyzeOptions,
};
use crate::pickle::{self, Object, Severity, StorageClass, Value};
use crate::tar_checkpoint;
use crate::zip::ReadAt;
use socair_tar::TarVerdict;
use std::collections::HashMap;

/// The magic number, as the 10 little-endian bytes of pickle's LONG1.
pub const MAGIC: [u8; 10] = [0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19];

/// The only protocol version torch's legacy loader accepts.
pub const PROTOCOL_VERSION: i64 = 1001;

/// The first bytes of the pickles are read in a window that doubles until they fit (state
/// dicts take about 100 bytes of pickle per tensor), up to [`crate::checkpoint::MAX_PICKLE_LEN`].
/// 64 MiB first: the pickles of almost every file fit and are run once (a window is never more
/// than the file, so this stays within the memory bound of 64 MiB + 8x the input).
const FIRST_WINDOW: u64 = 64 << 20;

/// Whether `head` starts like a legacy checkpoint: a pickle (protocol 2 to 5, possibly framed)
/// whose first value is the magic number.
pub fn has_magic(head: &[u8]) -> bool {
    magic_end(head).is_some()
}

/// The end of a canonical magic-number pickle at the start of `data`: PROTO n, an optional
/// FRAME, LONG1 of the 10 magic bytes, STOP.
fn magic_end(data: &[u8]) -> Option<usize> {
    let mut at = match data {
        [0x80, 2..=5, ..] => 2,
        _ => return None,
    };
    if data.get(at) == Some(&0x95) {
        at += 9;
    }
    let rest = data.get(at..)?;
    (rest.len() >= 13
        && rest[0] == 0x8a
        && rest[1] == 10
        && rest[2..12] == MAGIC
        && rest[12] == b'.')
        .then_some(at + 13)
}

/// Whether the start of a file is a pickle of any protocol: the legacy reader claims such
/// files, so that a pickle named like a checkpoint is scanned and said to be what it is.
///
/// Never a file that starts with a zip local header's signature: `torch.load` sends such a
/// file to its zip reader (`_is_zipfile` compares the first four bytes with `PK\x03\x04` and
/// nothing else), so torch never unpickles it as the legacy format, even when its bytes would
/// also run as a protocol-0 pickle (`P`, PERSID, reading a line). Torch versions before the zip
/// format read every file as legacy, and their `persistent_load` asserts that a persistent id
/// is a tuple, which PERSID's string is not: no torch loads such a file as legacy.
pub fn looks_like_pickle(head: &[u8], file_len: u64) -> bool {
    !head.starts_with(&crate::zip::LOCAL_MAGIC) && pickle::looks_like_pickle(head, file_len)
}

/// The zip reader's entry: a zip checkpoint, or a pickle stream handed to the zip reader (by
/// its name, `pytorch_model.bin`), which is run as what it is.
pub fn analyze_as_zip(src: &(impl ReadAt + ?Sized), options: &AnalyzeOptions) -> Analysis {
    let head = head_of(src);
    if not_a_zip(src).is_some()
        && (looks_like_pickle(&head, src.size()) || tar_checkpoint::looks_like_torch_tar(&head))
    {
        return analyze(src, options);
    }
    checkpoint::analyze(src, options)
}

/// Whether the first bytes of a file are torch's legacy format: a pickle (see
/// [`looks_like_pickle`]), or a tar archive holding one of torch 0.1's members, which
/// `torch.load` tries first (`tarfile::torch`).
pub fn looks_like_legacy(head: &[u8], file_len: u64) -> bool {
    looks_like_pickle(head, file_len)
        || (!head.starts_with(&crate::zip::LOCAL_MAGIC)
            && tar_checkpoint::looks_like_torch_tar(head))
}

/// Reads a legacy checkpoint completely, without running its pickles.
pub fn analyze(src: &(impl ReadAt + ?Sized), options: &AnalyzeOptions) -> Analysis {
    // torch's oldest format: a tar archive of torch 0.1's members and no pickle at the start.
    let head = head_of(src);
    if !pickle::looks_like_pickle(&head, src.size()) && tar_checkpoint::looks_like_torch_tar(&head)
    {
        let mut a = tar_checkpoint::analyze(src, options);
        a.finish();
        return a;
    }
    let mut a = analyze_stream(src, options);
    a.finish();
    // A zip end record near the end: torch.load reads the pickles at the front (it looks only
    // at the first four bytes), zip readers the archive at the back.
    if let Some(polyglot) = zip_behind(src) {
        a.add(Severity::Fail, polyglot.0, polyglot.1);
    }
    // torch.load tries the oldest format, a tar archive, first (`_legacy_load` calls
    // `legacy_load`, i.e. `tarfile.open(fileobj=f, mode="r:", format=PAX_FORMAT)`, when the file
    // is a real file at offset 0) and reads the pickles only when that raises a TarError.
    if let Some(reason) = tar_finding(&socair_tar::tarfile_verdict(src)) {
        a.add(Severity::Fail, "byte 0", reason.clone());
        a.unread.push((None, reason));
        // What torch.load reads instead: the tar's members, when they are torch's.
        if tar_checkpoint::looks_like_torch_tar(&head) {
            let tar = tar_checkpoint::analyze(src, options);
            for f in tar.findings {
                a.add(f.severity, f.place, f.reason);
            }
        }
    }
    a
}

/// Why a file that CPython's tarfile does not simply refuse is not read as these pickles.
fn tar_finding(verdict: &TarVerdict) -> Option<String> {
    match verdict {
        TarVerdict::NotTar => None,
        TarVerdict::Tar { profiles } => Some(format!(
            "CPython's tarfile opens the first bytes as a tar archive (CPython {}): torch.load tries its tar format first, so it never reads these pickles (with weights_only=True it refuses the file, otherwise it unpickles the tar's members)",
            profiles.join("; ")
        )),
        TarVerdict::Raises { exception, profiles } => Some(format!(
            "CPython's tarfile.open raises {exception} on the first bytes (CPython {}), which is not a TarError: torch.load fails before it reads any pickle, while other readers read the pickles",
            profiles.join("; ")
        )),
    }
}

/// What the zip layer says about a zip archive found behind the pickles, if there is one.
fn zip_behind(src: &(impl ReadAt + ?Sized)) -> Option<(String, String)> {
    let size = src.size();
    let tail_len = size.min(22 + 65_535);
    let mut tail = vec![0u8; tail_len as usize];
    src.read_exact_at(size - tail_len, &mut tail).ok()?;
    if !tail.windows(4).any(|w| w == b"PK\x05\x06") {
        return None;
    }
    Some(match crate::zip::read_archive(src) {
        Err(e) => (
            format!("zip {}", e.place()),
            format!("a zip end record lies behind the pickles (a pickle/zip polyglot: torch reads the pickles, zip readers the archive): {e}"),
        ),
        Ok(_) => (
            "byte 0".into(),
            "a pickle stream in front of a zip archive that zip readers accept: a polyglot".into(),
        ),
    })
}

fn analyze_stream(src: &(impl ReadAt + ?Sized), options: &AnalyzeOptions) -> Analysis {
    let size = src.size();
    let mut window = size.min(FIRST_WINDOW);
    loop {
        let mut data = vec![0u8; window as usize];
        if let Err(e) = src.read_exact_at(0, &mut data) {
            let mut a = new_analysis(options.grammar);
            a.add(Severity::Fail, "byte 0", e.clone());
            a.unread.push((None, e));
            return a;
        }
        match analyze_window(src, &data, options) {
            Some(a) => return a,
            None if window < size && window < crate::checkpoint::MAX_PICKLE_LEN => {
                window = (window * 2)
                    .min(size)
                    .min(crate::checkpoint::MAX_PICKLE_LEN);
            }
            None => {
                let mut a = new_analysis(options.grammar);
                let why = if window < size {
                    format!("the pickles run past the first {window} bytes, the limit modeled")
                } else {
                    "the file ends inside its pickles (truncated)".to_owned()
                };
                a.add(Severity::Fail, "byte 0", why.clone());
                a.unread.push((None, why));
                return a;
            }
        }
    }
}

fn new_analysis(grammar: pickle::Grammar) -> Analysis {
    Analysis {
        pickle_name: "main pickle".into(),
        legacy: true,
        grammar,
        ..Analysis::default()
    }
}

/// The analysis, or `None` when a pickle runs past the end of `data` and `data` is only the
/// start of the file.
fn analyze_window(
    src: &(impl ReadAt + ?Sized),
    data: &[u8],
    options: &AnalyzeOptions,
) -> Option<Analysis> {
    let truncated_window = (data.len() as u64) < src.size();
    let mut a = new_analysis(options.grammar);
    let plain = pickle::Options {
        reviewed: options.reviewed.clone(),
        legacy: true,
        input_len: src.size(),
        grammar: options.grammar,
        ..Default::default()
    };
    let profile = options.profile.max(pickle::Profile::Data);

    // 1. The magic number.
    if magic_end(data).is_none() {
        return plain_pickles(a, data, truncated_window, &plain, profile);
    }
    let mut pickles = PickleSequence {
        data,
        truncated_window,
        options: &plain,
        at: 0,
    };
    match read_legacy(&mut a, src, &mut pickles, options) {
        Ok(()) => Some(a),
        Err(Stop::WindowEnds) => None,
        Err(Stop::GiveUp(why)) => {
            a.unread.push((None, why));
            Some(a)
        }
    }
}

/// Why the reading of a legacy checkpoint stopped early.
enum Stop {
    /// A pickle runs past the end of the window read so far: read a larger one.
    WindowEnds,
    /// The rest of the file is not modeled, for this reason (findings say why).
    GiveUp(String),
}

/// The pickles at the start of a window, run one after the other.
struct PickleSequence<'d, 'o> {
    data: &'d [u8],
    /// Whether the window is only the start of the file.
    truncated_window: bool,
    options: &'o pickle::Options,
    /// Where the next pickle starts.
    at: usize,
}

impl PickleSequence<'_, '_> {
    /// Runs the pickle at `at` under `name`, adding its findings; `Ok(None)` when it does not
    /// end, [`Stop::WindowEnds`] when the window ends inside it.
    fn run(&mut self, a: &mut Analysis, name: &str) -> Result<Option<pickle::Unpickled>, Stop> {
        let (outcome, end) = pickle::run_one(&self.data[self.at..], self.options);
        if end.is_none() && self.truncated_window {
            return Err(Stop::WindowEnds);
        }
        for f in &outcome.findings {
            a.add(
                f.severity,
                format!(
                    "{name} byte {} (file byte {}, {})",
                    f.offset,
                    self.at as u64 + f.offset,
                    f.opcode
                ),
                f.reason.clone(),
            );
        }
        Ok(match end {
            Some(end) => {
                self.at += end;
                Some(outcome)
            }
            None => None,
        })
    }

    /// [`PickleSequence::run`], giving up with `unended` when the pickle does not end.
    fn run_to_end(
        &mut self,
        a: &mut Analysis,
        name: &str,
        unended: &str,
    ) -> Result<pickle::Unpickled, Stop> {
        self.run(a, name)?
            .ok_or_else(|| Stop::GiveUp(unended.to_owned()))
    }
}

/// Reads a legacy checkpoint whose magic-number pickle starts `pickles`: its pickles in order,
/// then its storages, then its tensors.
fn read_legacy(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    pickles: &mut PickleSequence<'_, '_>,
    options: &AnalyzeOptions,
) -> Result<(), Stop> {
    read_preamble(a, pickles)?;
    // 4. The main pickle.
    let main = read_main_pickle(a, pickles, options)?;
    // 5. The storage keys.
    let keys_place = format!("storage-key pickle (file byte {})", pickles.at);
    let keys = pickles.run_to_end(
        a,
        "storage-key pickle",
        "the storage-key pickle does not end",
    )?;
    let listed = match read_key_list(&keys) {
        Ok(k) => k,
        Err(why) => {
            a.add(Severity::Fail, keys_place, why.clone());
            return Err(Stop::GiveUp(why));
        }
    };
    drop(keys);
    let (roots, cursor) = place_storages(a, src, &main, &listed, &keys_place, pickles.at as u64)?;
    for s in &main.storages {
        if matches!(roots.get(s.key.as_str()), Some((_, None))) {
            a.add_kind("a storage missing from the key list", Severity::Fail, || {
                (
                    keys_place.clone(),
                    format!("the main pickle names storage {:?} but the key list does not: torch would leave its bytes uninitialized", s.key),
                )
            });
        }
    }
    let size = src.size();
    if cursor < size {
        a.add(
            Severity::Fail,
            format!("file byte {cursor}"),
            format!(
                "{} bytes follow the last storage; torch never reads them, and a reader that looks at the end of a file (a zip reader) would",
                size - cursor
            ),
        );
    }
    let elem = |s: &pickle::StorageRef| match s.class {
        StorageClass::Typed(d) => d.size,
        StorageClass::Untyped => 1,
    };
    judge_locations(a, &main.storages);
    let data_of = |key: &str| roots.get(key).and_then(|(_, start)| *start);
    model_tensors(a, &main, |storage| match &storage.view_of {
        None => data_of(&storage.key).map(|start| (start, format!("storages[{}]", storage.key), 0)),
        Some((root, offset)) => {
            let base = offset.checked_mul(elem(storage))?;
            data_of(root).map(|start| (start + base, format!("storages[{root}]"), base))
        }
    });
    Ok(())
}

/// Steps 1 to 3: the magic number, the protocol version, and `sys_info`.
fn read_preamble(a: &mut Analysis, pickles: &mut PickleSequence<'_, '_>) -> Result<(), Stop> {
    // 1. The magic number.
    let first = pickles.run_to_end(
        a,
        "magic-number pickle",
        "the magic-number pickle does not end",
    )?;
    if !matches!(first.result, Some(Value::BigInt)) {
        a.add(
            Severity::Lead,
            "byte 0",
            "a pickle that does not start with torch's legacy magic number: not a torch checkpoint, whatever its name",
        );
        return Err(Stop::GiveUp(
            "not torch's legacy format (no magic number)".into(),
        ));
    }
    // 2. The protocol version.
    let version_at = pickles.at;
    let version = pickles.run_to_end(
        a,
        "protocol-version pickle",
        "the protocol-version pickle does not end",
    )?;
    if !matches!(version.result, Some(Value::Int(PROTOCOL_VERSION))) {
        a.add(
            Severity::Fail,
            format!("protocol-version pickle (file byte {version_at})"),
            format!("the protocol version is not {PROTOCOL_VERSION}, the only one torch's legacy loader reads"),
        );
        return Err(Stop::GiveUp("unknown legacy protocol version".into()));
    }
    // 3. sys_info: honoured, not assumed.
    let sys_at = pickles.at;
    let sys = pickles.run_to_end(a, "sys_info pickle", "the sys_info pickle does not end")?;
    let place = format!("sys_info pickle (file byte {sys_at})");
    match read_sys_info(&sys) {
        Err(why) => {
            a.add(Severity::Fail, place, why.clone());
            Err(Stop::GiveUp(why))
        }
        Ok(info) => {
            a.sys_info = Some(format!(
                "little_endian {}, short {} int {} long {}",
                info.little_endian, info.short, info.int, info.long
            ));
            if !info.little_endian {
                let why = "written on a big-endian machine: torch since 0.4 writes legacy storages little-endian, earlier releases in the machine's order, and the file does not say which";
                a.add(Severity::Lead, place.clone(), why);
                a.unread.push((None, why.into()));
            }
            if info.short != 2 || info.int != 4 || !matches!(info.long, 4 | 8) {
                a.add(
                    Severity::Lead,
                    place,
                    format!(
                        "type sizes short {} int {} long {}: no platform torch ran on has these",
                        info.short, info.int, info.long
                    ),
                );
            }
            Ok(())
        }
    }
}

/// Step 4: the main pickle, the one that may build tensors.
fn read_main_pickle(
    a: &mut Analysis,
    pickles: &mut PickleSequence<'_, '_>,
    options: &AnalyzeOptions,
) -> Result<pickle::Unpickled, Stop> {
    let main_at = pickles.at;
    a.main_pickle_offset = Some(main_at as u64);
    let Some(main) = pickles.run(a, "main pickle")? else {
        // It never reached STOP: what follows cannot be told apart from it.
        a.protocol = None;
        let why = format!(
            "the main pickle leaves {} before STOP; the rest of the file is not modeled",
            options.grammar.name()
        );
        return Err(Stop::GiveUp(why));
    };
    for (offset, patched) in patched_module_ids(&main) {
        a.add(
            Severity::Fail,
            format!("main pickle byte {offset} (file byte {}, BINPERSID)", main_at as u64 + offset),
            format!("persistent id ('module', …) after the pickle set attributes on the global {patched}: torch.load hands it to _check_container_source, which writes a .patch file into the working directory when the class's dump_patches is set and its saved source differs (torch/serialization.py _legacy_load, torch 2.15.0); torch.save never sets attributes on a class"),
        );
    }
    a.protocol = main.protocol;
    a.storage_count = main.storages.len();
    a.reviewed_used = main.reviewed_used.clone();
    Ok(main)
}

/// Each root storage by key, with where its bytes start once the key list reached it.
type Roots<'m> = HashMap<&'m str, (&'m pickle::StorageRef, Option<u64>)>;

/// Step 6: the storages, in the listed order from `cursor`; the roots and where the last
/// storage ends.
fn place_storages<'m>(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    main: &'m pickle::Unpickled,
    listed: &[std::rc::Rc<str>],
    keys_place: &str,
    mut cursor: u64,
) -> Result<(Roots<'m>, u64), Stop> {
    // 6. The storages, in the listed order. Each root storage by key, with where its bytes
    // start once the list reached it.
    let mut roots: Roots<'m> = main
        .storages
        .iter()
        .map(|s| (s.key.as_str(), (&**s, None)))
        .collect();
    let size = src.size();
    for key in listed {
        let key: &str = key;
        let entry = roots.get_mut(key);
        if matches!(entry, Some((_, Some(_)))) {
            a.add(
                Severity::Fail,
                keys_place,
                format!("storage key {key:?} is listed twice; torch would read its bytes twice and misplace every storage after it"),
            );
            return Err(Stop::GiveUp("a storage key is listed twice".into()));
        }
        let Some((storage, start_of)) = entry else {
            a.add(
                Severity::Fail,
                keys_place,
                format!("storage key {key:?} is listed but the main pickle names no such storage (torch's loader stops on it)"),
            );
            return Err(Stop::GiveUp(
                "the key list names a storage the pickle does not".into(),
            ));
        };
        let storage: &pickle::StorageRef = storage;
        let mut count = [0u8; 8];
        let place = || format!("storage {key:?} (file byte {cursor})");
        if cursor.checked_add(8).is_none_or(|e| e > size)
            || src.read_exact_at(cursor, &mut count).is_err()
        {
            a.add(
                Severity::Fail,
                place(),
                format!(
                    "this storage's 8-byte element count runs past the end of the {size}-byte file"
                ),
            );
            return Err(Stop::GiveUp("truncated storages".into()));
        }
        let count = u64::from_le_bytes(count);
        if count != storage.numel {
            a.add(
                Severity::Fail,
                place(),
                format!(
                    "the storage holds {count} elements but the pickle declares {} (the CVE-2026-24747 pattern: torch < 2.10 trusted the declared size)",
                    storage.numel
                ),
            );
            return Err(Stop::GiveUp(
                "a storage's count does not match its persistent id".into(),
            ));
        }
        let width = match storage.class {
            StorageClass::Typed(d) => d.size,
            StorageClass::Untyped => 1,
        };
        let start = cursor + 8;
        let Some(end) = count
            .checked_mul(width)
            .and_then(|n| start.checked_add(n))
            .filter(|&e| e <= size)
        else {
            a.add(
                Severity::Fail,
                place(),
                format!(
                    "{count} elements of {width} bytes run past the end of the {size}-byte file"
                ),
            );
            return Err(Stop::GiveUp(
                "a storage runs past the end of the file".into(),
            ));
        };
        *start_of = Some(start);
        cursor = end;
    }
    Ok((roots, cursor))
}

/// A file of pickles that is not a legacy checkpoint: every pickle in it (the first, and each
/// appended after it) goes through the machine under `profile` (`socair-data/1`, or
/// `socair-sklearn/1` when asked: `plugins/shared/pickle/PROFILES.md`), with findings at their file
/// offsets. A pickle that builds only what the profile lists is PASS: `pickle.load` runs
/// nothing for it. `None` when the first pickle runs past the window read so far.
fn plain_pickles(
    mut a: Analysis,
    data: &[u8],
    truncated_window: bool,
    options: &pickle::Options,
    profile: pickle::Profile,
) -> Option<Analysis> {
    // Not a torch checkpoint: `pickle.load`'s caller chooses how Python 2 `str`s decode.
    // A joblib dump whose first array wrapper lies past the first bytes (the joblib plugin
    // claims those within them: `socair_plugin_kit::joblib`) is read as joblib.load reads
    // it: each wrapper's array bytes after its BUILD, not as opcodes.
    let options = &pickle::Options {
        python2_str: pickle::Python2Str::CallerChooses,
        profile,
        joblib: socair_plugin_kit::joblib::names_array_wrapper(data),
        ..options.clone()
    };
    let mut outcome = pickle::run(data, options);
    // A torch.distributed.checkpoint `.metadata` (its value a `Metadata` record): judged by
    // the grammar, whose `socair-wo/3` lists DCP's metadata dataclasses (and the torch.Size,
    // dtypes, layouts, enum members and pathlib paths they hold) as data, rather than by the
    // profile, which lists none of them: only those classes pass, anything else is judged as
    // the grammar judges it (crate::dcp).
    let mut dcp = is_dcp_metadata(&outcome);
    if dcp && profile != pickle::Profile::Torch {
        outcome = pickle::run(
            data,
            &pickle::Options {
                profile: pickle::Profile::Torch,
                ..options.clone()
            },
        );
        dcp = is_dcp_metadata(&outcome);
    }
    if outcome.end.is_none() && truncated_window {
        return None;
    }
    a.protocol = outcome.protocol;
    for f in &outcome.findings {
        a.add(
            f.severity,
            format!("pickle byte {} ({})", f.offset, f.opcode),
            f.reason.clone(),
        );
    }
    a.profile = if dcp { Some(DCP_RULES) } else { profile.name() };
    a.models.clone_from(&outcome.models);
    a.arrays = outcome
        .arrays
        .iter()
        .map(|x| (x.path.clone(), format!("{} {:?}", x.descr, x.shape)))
        .chain(
            outcome
                .decoded_arrays
                .iter()
                .map(|x| (x.path.clone(), format!("{} {:?}", x.descr, x.shape))),
        )
        .chain(
            outcome
                .unread_arrays
                .iter()
                .map(|(p, why)| (p.clone(), why.clone())),
        )
        .collect();
    if dcp {
        // Its items are read by the host in the .distcp files beside it, which says what it
        // could not read (crate::dcp); a pickle that is not all DCP's dataclasses is judged
        // by its findings as any other.
        match crate::dcp::items(&outcome) {
            Ok(items) => a.dcp_items = Some(items),
            Err(why) => a.add(
                Severity::Lead,
                "byte 0",
                format!("a torch.distributed.checkpoint metadata file (dcp.save's .metadata, read with pickle.load), but {why}: where its items lie in the .distcp files beside it is not known, and they are not read"),
            ),
        }
    } else if outcome.worst().is_some() {
        a.add(
            Severity::Lead,
            "byte 0",
            "a pickle that does not start with torch's legacy magic number: not a torch checkpoint, whatever its name",
        );
    }
    if truncated_window {
        a.add(
            Severity::Lead,
            format!("file byte {}", data.len()),
            "the file goes on past the bytes run as pickles: what follows is not scanned",
        );
    }
    // Its arrays whose bytes lie in the file are its tensors, named by their paths; the rest
    // (latin-1 text below protocol 3, shapes that do not fill their bytes) are named unread.
    let limit = socair_plugin_kit::bounded::described_limit(data.len() as u64);
    for x in &outcome.arrays {
        let name = if x.path.is_empty() {
            "(the pickle's value)"
        } else {
            x.path.as_str()
        };
        let len = (x.bytes.end.saturating_sub(x.bytes.start)) as u64;
        match socair_plugin_kit::ndarray::describe(name, &x.descr, &x.shape, len) {
            Ok(_) if a.array_tensors.len() as u64 >= limit => a.unread.push((
                Some(name.to_owned()),
                format!("past the {limit} tensors described for a file of this size"),
            )),
            Ok((mut t, _)) => {
                socair_plugin_kit::ndarray::place_in_file(
                    &mut t,
                    x.bytes.start as u64,
                    len,
                    x.fortran_order,
                );
                a.array_tensors.push(t);
            }
            Err(why) => a.unread.push((
                Some(name.to_owned()),
                format!("pickle byte {}: {why}", x.bytes.start),
            )),
        }
    }
    for (path, why) in &outcome.unread_arrays {
        a.unread.push((Some(path.clone()), why.clone()));
    }
    // Below protocol 3 an array's bytes are latin-1 text in the pickle, which the machine
    // decodes into the bytes NumPy holds: handed over inline, in row-major order
    // (a Fortran-ordered one stays unread).
    for x in &outcome.decoded_arrays {
        let len = x.bytes.len() as u64;
        match socair_plugin_kit::ndarray::describe(&x.path, &x.descr, &x.shape, len) {
            Ok((mut t, _)) if !x.fortran_order && (a.array_tensors.len() as u64) < limit => {
                t.inline = abi_stable::std_types::ROption::RSome(x.bytes.to_vec().into());
                a.array_tensors.push(t);
            }
            _ => a.unread.push((Some(x.path.clone()), x.why.clone())),
        }
    }
    if outcome.arrays.is_empty()
        && outcome.unread_arrays.is_empty()
        && outcome.decoded_arrays.is_empty()
        && !dcp
    {
        a.unread.push((
            None,
            "not torch's legacy format (no magic number): a plain pickle that builds no NumPy array, so no tensor".into(),
        ));
    }
    Some(a)
}

/// What the pickle machine says where BUILD sets state on a global object and where the
/// typed model meets a `'module'` persistent id (plugins/shared/pickle, typed.rs `build` and
/// typed/storages.rs `persistent_id`; a test below keeps them in step).
const BUILD_ON_GLOBAL: &str = "BUILD sets state on the global ";
const MODULE_ID: &str = "persistent id ('module',";

/// The `'module'` persistent ids of a legacy main pickle that follow a BUILD on a global, each
/// with its offset in the pickle and the global patched first.
///
/// torch's legacy `persistent_load` (torch/serialization.py `_legacy_load`, torch 2.15.0)
/// passes `('module', class, source file, source)` to `_check_container_source` when the file
/// and the source are both non-empty; that compares the source with the class's current one
/// (`inspect`) and, when they differ and `class.dump_patches` is true, opens
/// `class.__name__ + ".patch"` in the working directory with mode `"a+"` (creating it) and, if
/// it is empty, writes a diff of the two sources into it. No class has `dump_patches` set unless
/// a program sets it (`torch.nn.Module.dump_patches = False`); a pickle can set it itself: BUILD
/// on a global object sets its attributes (slot state through `setattr`, dict state into a
/// function's `__dict__`), `__name__` included, which names the file. `torch.save` never sets
/// state on a global, so a `'module'` id after one is FAIL; without one it stays the machine's
/// LEAD. Seen only while the typed model runs (the abstract machine reports neither) and within
/// the first findings of each kind the machine lists.
fn patched_module_ids(main: &pickle::Unpickled) -> Vec<(u64, String)> {
    let mut patched: Option<String> = None;
    let mut out = Vec::new();
    for f in &main.findings {
        if let Some(rest) = f.reason.strip_prefix(BUILD_ON_GLOBAL) {
            if patched.is_none() {
                let name = rest.split(':').next().unwrap_or(rest);
                patched = Some(name.to_owned());
            }
        } else if f.reason.starts_with(MODULE_ID) {
            if let Some(name) = &patched {
                out.push((f.offset, name.clone()));
            }
        }
    }
    out
}

/// What judged a DCP `.metadata`'s pickle, as its row names it.
const DCP_RULES: &str =
    "socair-wo/3 (torch.distributed.checkpoint's metadata dataclasses among its data)";

/// Whether the pickle's value is `torch.distributed.checkpoint.metadata.Metadata` (what
/// `FileSystemWriter.finish` pickles), as `socair-wo/3` models it.
fn is_dcp_metadata(outcome: &pickle::Unpickled) -> bool {
    matches!(
        outcome.result.as_ref().and_then(|r| match r {
            Value::Obj(id) => outcome.objects.get(*id),
            _ => None,
        }),
        Some(Object::Record(r)) if &*r.class == "torch.distributed.checkpoint.metadata.Metadata"
    )
}

struct SysInfo {
    little_endian: bool,
    short: i64,
    int: i64,
    long: i64,
}

fn dict_of<'o>(outcome: &'o pickle::Unpickled, v: &Value) -> Option<&'o [(Value, Value)]> {
    match v {
        Value::Obj(id) => match outcome.objects.get(*id)? {
            Object::Dict(d) => Some(&d.items),
            Object::List(_) | Object::Record(_) => None,
        },
        _ => None,
    }
}

fn get<'v>(items: &'v [(Value, Value)], key: &str) -> Option<&'v Value> {
    items
        .iter()
        .find(|(k, _)| matches!(k, Value::Str(s) if &**s == key))
        .map(|(_, v)| v)
}

fn read_sys_info(outcome: &pickle::Unpickled) -> Result<SysInfo, String> {
    let bad = |why: &str| {
        format!("sys_info {why}; torch writes {{'protocol_version': 1001, 'little_endian': bool, 'type_sizes': {{'short', 'int', 'long'}}}}")
    };
    let items = outcome
        .result
        .as_ref()
        .and_then(|r| dict_of(outcome, r))
        .ok_or_else(|| bad("is not a dict"))?;
    if items.len() != 3 {
        return Err(bad(&format!("has {} entries", items.len())));
    }
    if !matches!(
        get(items, "protocol_version"),
        Some(Value::Int(PROTOCOL_VERSION))
    ) {
        return Err(bad("has another protocol_version"));
    }
    let Some(Value::Bool(little_endian)) = get(items, "little_endian") else {
        return Err(bad("has no boolean little_endian"));
    };
    let sizes = get(items, "type_sizes")
        .and_then(|v| dict_of(outcome, v))
        .ok_or_else(|| bad("has no type_sizes dict"))?;
    let size = |k: &str| match get(sizes, k) {
        Some(Value::Int(n)) => Ok(*n),
        _ => Err(bad(&format!("has no integer type_sizes[{k:?}]"))),
    };
    if sizes.len() != 3 {
        return Err(bad(&format!("type_sizes has {} entries", sizes.len())));
    }
    Ok(SysInfo {
        little_endian: *little_endian,
        short: size("short")?,
        int: size("int")?,
        long: size("long")?,
    })
}

fn read_key_list(outcome: &pickle::Unpickled) -> Result<Vec<std::rc::Rc<str>>, String> {
    let items = match outcome.result.as_ref() {
        Some(Value::Obj(id)) => match outcome.objects.get(*id) {
            Some(Object::List(items)) => items,
            _ => {
                return Err(
                    "the pickle after the main pickle is not the list of storage keys".into(),
                )
            }
        },
        _ => return Err("the pickle after the main pickle is not the list of storage keys".into()),
    };
    items
        .iter()
        .map(|v| match v {
            Value::Str(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(s.clone())
            }
            _ => Err("the storage-key list holds something other than decimal keys".into()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pickle_that_is_also_a_tar_header_is_refused() {
        let real = include_bytes!("../../../../fixtures/torch/legacy/state-dict.pt");
        assert!(analyze(&real[..], &AnalyzeOptions::default())
            .worst()
            .is_none());
        // The same file with its first block's tar fields made readable (the magic-number and
        // protocol pickles kept, the rest of the block zero) and its checksum made to hold is
        // read as a tar by torch.
        let seal = |bytes: &mut Vec<u8>| {
            bytes[148..156].copy_from_slice(b"        ");
            let sum: u32 = bytes[..512].iter().map(|&b| u32::from(b)).sum();
            bytes[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        };
        let mut sealed = real.to_vec();
        sealed[22..512].fill(0);
        seal(&mut sealed);
        let a = analyze(&sealed[..], &AnalyzeOptions::default());
        let tar = a
            .findings
            .iter()
            .find(|f| f.reason.contains("tarfile opens"))
            .expect("a tar finding");
        assert_eq!(tar.severity, Severity::Fail);
        // A checksum that holds over a header whose numeric fields Python cannot read (the
        // real file's bytes there) is a ReadError: torch reads the pickles, and the tar check
        // says nothing.
        let mut unreadable = real.to_vec();
        seal(&mut unreadable);
        assert_eq!(
            socair_tar::tarfile_verdict(&unreadable[..]),
            TarVerdict::NotTar
        );
    }

    #[test]
    fn a_module_id_after_a_patched_global_is_refused_with_its_place() {
        // fixtures/torch/callables/legacy-module-patch.pt (make_callables.py): torch.load
        // writes relu.patch into the working directory (checked with torch 2.15.0).
        let bytes = include_bytes!("../../../../fixtures/torch/callables/legacy-module-patch.pt");
        let a = analyze(&bytes[..], &AnalyzeOptions::default());
        let f = a
            .findings
            .iter()
            .find(|f| f.reason.contains("_check_container_source"))
            .expect("a finding for the module id");
        assert_eq!(f.severity, Severity::Fail);
        assert!(f.place.contains("BINPERSID"), "{}", f.place);
        assert!(
            f.reason.contains("torch.nn.functional.relu"),
            "{}",
            f.reason
        );
        // torch.save(model) in the legacy format: a module id, no patched global, still a LEAD.
        let plain = include_bytes!("../../../../fixtures/torch/callables/legacy-module-plain.pt");
        let a = analyze(&plain[..], &AnalyzeOptions::default());
        assert!(a.findings.iter().any(|f| f.reason.starts_with(MODULE_ID)));
        assert!(!a
            .findings
            .iter()
            .any(|f| f.reason.contains("_check_container_source")));
        assert_eq!(a.worst(), Some(Severity::Lead));
    }

    #[test]
    fn a_file_starting_like_a_zip_is_never_claimed_as_legacy() {
        // An .npz np.savez wrote: its first bytes also run as a protocol-0 pickle (PERSID
        // reading a line, and on), which the pickle detector accepts; torch.load reads it as a
        // zip, so the legacy reader leaves it.
        let npz =
            include_bytes!("../../../../fixtures/npy/plugin/valid/object-os-system-stored.npz");
        let head = &npz[..npz.len().min(4096)];
        assert!(pickle::looks_like_pickle(head, npz.len() as u64));
        assert!(!looks_like_pickle(head, npz.len() as u64));
        // A real legacy checkpoint is still claimed.
        let real = include_bytes!("../../../../fixtures/torch/legacy/state-dict.pt");
        assert!(looks_like_pickle(
            &real[..real.len().min(4096)],
            real.len() as u64
        ));
    }
}
