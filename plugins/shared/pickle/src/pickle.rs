//! The `socair-wo` pickle machine (`/1`; `/2` with what Python 2's pickler wrote; `/3` with the
//! rest of what torch's weights-only unpickler loads; chosen by [`Options::grammar`]): runs a pickle over typed values, never over Python objects. Nothing is imported or called; a global is a name that [`crate::globals`]
//! classifies, and only the grammar's own globals have a meaning here (they build tensors,
//! storages and ordered dicts).
//!
//! Every pickle goes through it, whatever its protocol. Every opcode torch.save writes
//! (protocols 2 to 5) is modeled over typed values; anything else is a finding, after which
//! the machine goes on over *abstract* values: it keeps the exact stack, marks and memo the C
//! unpickler keeps (what is a `str` and which one, what is certainly not, what could be
//! anything), so that every global the pickle makes Python look up is named, from `GLOBAL`,
//! `INST`, or `STACK_GLOBAL` over strings however they reached the stack (memo, `DUP`, `POP`,
//! marks), or reported as one whose name cannot be determined. The machine stops only where
//! CPython's unpickler raises.
//!
//! Bytes reach it as the C unpickler reads them ([`reader`]): a pickle whose frames disagree
//! with its opcodes is read both contiguously and with the disagreeing frames read whole, so
//! that no call hides in either reading. Pickles appended after STOP are run too, each as its
//! own pickle.
//!
//! Resources are bounded by the pickle's real size: every opcode consumes at least one byte;
//! typed values are charged against a budget proportional to the input, past which the machine
//! goes on abstractly in four bytes per stack slot or memo entry; every length is checked
//! against the bytes that remain; findings are bounded per kind with exact counts of the rest.

mod arrays;
mod findings;
mod machine;
pub mod reader;
pub mod text;
mod typed;
mod values;

use findings::Findings;
pub use findings::{group, MAX_PER_KIND};
use machine::{Ended, Run};
// The library profiles (like the grammar's versions, which `values` names) are vocabulary
// `globals` shares with the machine: leaves of the crate's root, so that neither imports the
// other through them; named here too, as before.
pub use crate::profile::{self, DecodedArray, PickledArray, Profile};
pub use values::{
    check_bounds, Composite, DictObject, GlobalRef, Grammar, Kind, Layout, Object, OpcodeFinding,
    Options, Python2Str, RecordObject, Severity, StorageClass, StorageRef, TensorModel, Unpickled,
    Value, MAX_TUPLE_DEPTH,
};

/// Most framing replays (pickles re-read with some frames read whole) per pickle; past it, a
/// finding says the rest were not followed.
pub const MAX_FRAMING_REPLAYS: usize = 8;

/// The largest pickle the machine runs (torch's readers hand it at most 1 GiB): offsets are
/// kept in 30 bits.
pub const MAX_DATA: usize = (1 << 30) - 16;

/// `"; 1 Booster model read as its library loads it: …"` for a row's summary, or nothing when
/// the pickle holds no Booster.
pub fn models_phrase(models: &[String]) -> String {
    match models.len() {
        0 => String::new(),
        1 => format!(
            "; 1 Booster model read as its library loads it: {}",
            models[0]
        ),
        n => format!(
            "; {n} Booster models read as their libraries load them: {}",
            models.join("; ")
        ),
    }
}

/// Runs the pickle in `data`, then every pickle appended after its STOP (each as its own
/// pickle, with offsets in `data`). The outcome's typed model is the first pickle's.
///
/// Under `socair-data/1`, a pickle whose findings are all LEADs is run again under
/// `socair-sklearn/1`; when that reading has no finding at all, one more LEAD says so and
/// gives the command that would pass it (so the operator is told which built-in
/// profile lists every class, rather than only `--reviewed-classes`).
pub fn run(data: &[u8], options: &Options) -> Unpickled {
    let mut out = run_once(data, options);
    if options.profile == Profile::Data && out.worst() == Some(Severity::Lead) {
        let wider = Options {
            profile: Profile::Sklearn,
            ..options.clone()
        };
        if run_once(data, &wider).worst().is_none() {
            // First: the verdict's headline names the first finding.
            out.findings.insert(0, OpcodeFinding {
                severity: Severity::Lead,
                offset: 0,
                opcode: "PROTO",
                reason: format!(
                    "{PASSES_UNDER} socair-sklearn/1 (every class this pickle names is one that profile lists, with the state its library's reducer writes): `socair scan --profile sklearn` (or a store pinned with `socair airlock pin rules socair-sklearn =1`) would PASS it"
                ),
                kind: Kind::UnknownGlobal,
            });
        }
    }
    out
}

/// How the finding [`run`] adds for a pickle another built-in profile passes begins.
pub const PASSES_UNDER: &str = "every pickle LEAD below is inside the built-in profile";

fn run_once(data: &[u8], options: &Options) -> Unpickled {
    let mut findings = Findings::for_grammar(options.grammar);
    let (mut out, ends) = first_pickle(data, options, &mut findings);
    appended(data, options, &ends, &mut findings);
    out.findings = findings.finish();
    if options.joblib {
        as_pickle_load_reads(data, options, &mut out);
    }
    out
}

/// How the findings of joblib's three array wrapper classes begin (the dangerous-callables
/// table's words; tests/profiles.rs keeps them in step: every benign joblib fixture would FAIL
/// without them): exact names, so that joblib's functions stay findings.
const JOBLIB_WRAPPERS: [&str; 3] = [
    "global joblib.numpy_pickle.NumpyArrayWrapper:",
    "global joblib.numpy_pickle_compat.NDArrayWrapper:",
    "global joblib.numpy_pickle_compat.ZNDArrayWrapper:",
];

/// A joblib file is also a pickle that `pickle.load` (or `pickle.load` over `gzip.open`) reads
/// without joblib's `NumpyUnpickler`: each array wrapper is then a plain object, and the
/// padding and array bytes after its BUILD are read as opcodes. Bytes that are data to
/// `joblib.load` can be a call to `pickle.load`, so the stream is also run as `pickle.load`
/// reads it, and every code-running or I/O global that reading meets which the joblib
/// reading did not is a finding of its own.
fn as_pickle_load_reads(data: &[u8], options: &Options, out: &mut Unpickled) {
    let plain = run_once(
        data,
        &Options {
            joblib: false,
            ..options.clone()
        },
    );
    let seen: std::collections::HashSet<u64> = out.findings.iter().map(|f| f.offset).collect();
    let more: Vec<OpcodeFinding> = plain
        .findings
        .into_iter()
        .filter(|f| f.kind == Kind::DangerousGlobal && !seen.contains(&f.offset))
        // The wrapper classes themselves: flagged for the methods joblib.load calls on them
        // (`read`: the nested pickle); to pickle.load each is a plain object whose state BUILD
        // sets, nothing of theirs runs.
        .filter(|f| !JOBLIB_WRAPPERS.iter().any(|w| f.reason.starts_with(w)))
        .map(|f| OpcodeFinding {
            reason: format!(
                "read as pickle.load reads it (without joblib's NumpyUnpickler, which reads these bytes as array data): {}",
                f.reason
            ),
            ..f
        })
        .collect();
    if !more.is_empty() {
        out.findings.extend(more);
        out.findings.sort_by_key(|f| f.offset);
    }
}

/// Runs the first pickle of a stream in `data` and returns where it ends (just past its STOP),
/// or `None` when no STOP was reached or readers end it in different places: the bytes after
/// it belong to whatever follows.
pub fn run_one(data: &[u8], options: &Options) -> (Unpickled, Option<usize>) {
    let mut findings = Findings::for_grammar(options.grammar);
    let (mut out, _) = first_pickle(data, options, &mut findings);
    out.findings = findings.finish();
    let end = out.end;
    (out, end)
}

/// Whether `head` (the first bytes of a file of `file_len` bytes) is a pickle: a PROTO opcode
/// of a protocol Python reads (0 to 5), or, for protocol 0 and 1 pickles, which have no
/// header, bytes that run as a pickle under the C unpickler's own discipline (valid opcodes
/// and arguments, no stack underflow, no missing mark or memo entry) to a STOP, or to the end
/// of the head when the file goes on.
///
/// Not a pickle: one whose first opcode is EXT1, EXT2 or EXT4 (`0x82`..`0x84`). The C
/// unpickler's `load_extension` (CPython 3.12 Modules/_pickle.c) looks the code up in
/// `copyreg._extension_registry`, which is empty in every interpreter (Lib/copyreg.py; nothing
/// in the standard library, torch or joblib calls `add_extension`), and raises `ValueError:
/// unregistered extension code` before any other opcode runs; so does `pickle._Unpickler`.
/// `pickle.dump` never writes one first either (protocol 2 and up begin with PROTO). These are
/// the first bytes of a msgpack map of 2 to 4 entries (fixmap `0x82`: a two-key Flax state dict),
/// which the Flax reader claims: the two claims are disjoint, and a pickle with PROTO first and
/// an EXT later is still claimed and judged (a FAIL: the global it names cannot be checked).
pub fn looks_like_pickle(head: &[u8], file_len: u64) -> bool {
    match head {
        [] => false,
        [0x80, 0..=5, ..] => true,
        [0x80, ..] => false,
        [0x82..=0x84, ..] => false,
        _ if head.len() > MAX_DATA => false,
        _ => {
            let whole = head.len() as u64 >= file_len;
            let mut sink = Findings::new();
            let options = Options::default();
            let run = Run::new(head, 0, &options, &mut sink, &[], false).detecting();
            match run.go().ended {
                Ended::Stop(_) => true,
                Ended::Raised(reader::Raise::Truncated(_), ops) => !whole && ops >= 2,
                Ended::Raised(..) => false,
            }
        }
    }
}

/// Where a pickle's next reader may start after it: right after STOP, and after the frame a
/// STOP lies in, for a reader that reads frames whole.
type Ends = Vec<usize>;

/// The first pickle, typed, with its framing replays.
fn first_pickle(data: &[u8], options: &Options, findings: &mut Findings) -> (Unpickled, Ends) {
    if data.len() > MAX_DATA {
        findings.add(Kind::Bounds, Severity::Lead, 0, "PROTO", None, || {
            format!(
                "a pickle of {} bytes, more than the {MAX_DATA} bytes the machine runs: not modeled",
                data.len()
            )
        });
        return (Unpickled::default(), Vec::new());
    }
    let run = Run::new(data, 0, options, findings, &[], false).go();
    let mut ends: Ends = Vec::new();
    let mut end = None;
    if let Ended::Stop(stop_end) = run.ended {
        ends.push(stop_end);
        end = Some(stop_end).filter(|_| run.alt_end.is_none());
    }
    ends.extend(run.alt_end);
    let (ambiguous, more) = (run.ambiguous.clone(), run.ambiguous_more);
    let mut out = run.outcome;
    out.end = end;
    ends.extend(replays(
        data,
        0,
        options,
        findings,
        (&ambiguous, more),
        false,
    ));
    (out, ends)
}

/// Replays the pickle at `start` with the frames that the contiguous reading found ambiguous
/// read whole, one choice after another (depth first, at most [`MAX_FRAMING_REPLAYS`]), and
/// returns the ends those readings find.
fn replays(
    data: &[u8],
    start: usize,
    options: &Options,
    findings: &mut Findings,
    (ambiguous, more): (&[usize], usize),
    appended: bool,
) -> Ends {
    let mut ends = Vec::new();
    // Readings to follow, each the list of frames read whole; only as many as can be run.
    let mut pending: Vec<Vec<usize>> = Vec::new();
    let mut not_followed = more;
    let offer = |pending: &mut Vec<Vec<usize>>,
                 not_followed: &mut usize,
                 prefix: &[usize],
                 frames: &[usize],
                 done: usize| {
        let last = prefix.last().copied();
        for &f in frames.iter().filter(|&&f| last.is_none_or(|l| f > l)) {
            if done + pending.len() < MAX_FRAMING_REPLAYS {
                let mut next = prefix.to_vec();
                next.push(f);
                pending.push(next);
            } else {
                *not_followed += 1;
            }
        }
    };
    offer(&mut pending, &mut not_followed, &[], ambiguous, 0);
    pending.reverse();
    let mut done = 0;
    while let Some(exact) = pending.pop() {
        done += 1;
        let run = Run::new(data, start, options, findings, &exact, appended).go();
        if let Ended::Stop(end) = run.ended {
            ends.push(end);
        }
        ends.extend(run.alt_end);
        not_followed += run.ambiguous_more;
        let before = pending.len();
        offer(
            &mut pending,
            &mut not_followed,
            &exact,
            &run.ambiguous,
            done,
        );
        pending[before..].reverse();
    }
    if not_followed > 0 {
        findings.add(Kind::Bounds, Severity::Fail, start as u64, "FRAME", None, || {
            format!(
                "{} more ways to read this pickle's frames were not followed (at most {MAX_FRAMING_REPLAYS} are): globals only those readings reach are not named",
                group(not_followed as u64)
            )
        });
    }
    ends
}

/// Runs the pickles appended after the first one's possible ends, each as its own pickle,
/// abstractly: Python reads them only if a program calls `pickle.load` again, so where they
/// do not decode it is a LEAD, and what they would run is judged as in the first.
fn appended(data: &[u8], options: &Options, ends: &[usize], findings: &mut Findings) {
    // Every end lies past its pickle's start, so taking the nearest start first never meets
    // a start twice, and the set holds only the few starts readers disagree on.
    let mut starts: std::collections::BTreeSet<usize> =
        ends.iter().copied().filter(|&e| e < data.len()).collect();
    if let Some(&at) = starts.first() {
        findings.add(Kind::Appended, Severity::Lead, at as u64, "STOP", None, || {
            format!(
                "{} trailing bytes follow STOP; torch never reads them: they are run as the pickles a second pickle.load would read",
                data.len() - at
            )
        });
    }
    let mut next = starts.pop_first();
    while let Some(start) = next {
        let run = Run::new(data, start, options, findings, &[], true).go();
        let end = match run.ended {
            Ended::Stop(end) if end < data.len() => Some(end),
            _ => None,
        };
        if run.alt_end.is_none() && run.ambiguous.is_empty() && run.ambiguous_more == 0 {
            // The common case: one reading, one end.
            next = match (end, starts.first()) {
                (Some(e), Some(&s)) if s <= e => {
                    starts.insert(e);
                    starts.pop_first()
                }
                (Some(e), _) => Some(e),
                (None, _) => starts.pop_first(),
            };
            continue;
        }
        let (ambiguous, more) = (run.ambiguous.clone(), run.ambiguous_more);
        starts.extend(end);
        starts.extend(run.alt_end);
        starts.extend(replays(
            data,
            start,
            options,
            findings,
            (&ambiguous, more),
            true,
        ));
        starts.retain(|&e| e < data.len());
        next = starts.pop_first();
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_python2;
#[cfg(test)]
mod tests_v3;
