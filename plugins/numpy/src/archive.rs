//! Generic zip archives that carry pickles (issue 16, item 6): a joblib or sklearn bundle
//! zipped, a directory of `.pkl` files zipped. Every member is read (stored or deflated, with
//! its CRC-32, inflated within the same budget as `.npz` members) and:
//!
//! * a member that is a pickle (its first bytes run as one under CPython's discipline,
//!   `socair_pickle::pickle::looks_like_pickle`, or its name ends in `.pkl`/`.pickle`) goes
//!   through the pickle machine: code-running or I/O globals FAIL with their place
//!   (`member "model/clf.pkl" byte 42`), everything else outside the grammar is a LEAD;
//! * a member that is itself a zip is opened the same way, to [`MAX_DEPTH`] levels;
//! * an `.npy` member is read as the `.npz` reader reads one (object arrays' pickles scanned);
//! * any other member is listed unread: nothing checked it (a LEAD).
//!
//! The reader never claims a zip torch's reader claims (a torch record name among the local
//! headers in the first bytes, as `socair-plugin-torch-zip`'s `looks_like_torch_zip` decides)
//! nor an `.npz` (first member `*.npy`): the host refuses to choose between two plugins.
//! 7z archives are not read here (see the report).

use crate::read::{self, Finding, Outcome, Severity};
use crate::span::Span;
use crate::zip::{self, Member};
use socair_pickle::pickle;

/// The format name.
pub const ZIP: &str = "zip";

/// How deep archives inside archives are opened (the outer archive is depth 1).
pub const MAX_DEPTH: usize = 3;

/// Whether a zip record name is one torch's reader looks for: a copy of
/// `socair_plugin_torch_zip::checkpoint::torch_record_name` (two plugins cannot be linked into
/// one test binary: both export the root module symbol). `tests/tests/numpy.rs` checks end to
/// end that no fixture is claimed by both plugins.
pub fn torch_record_name(name: &[u8]) -> bool {
    let Some(slash) = name.iter().position(|&b| b == b'/') else {
        return false;
    };
    if slash == 0 {
        return false;
    }
    let rel = name
        .get(slash.saturating_add(1)..)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let decimal_under = |dir: &[u8]| {
        rel.strip_prefix(dir)
            .is_some_and(|k| !k.is_empty() && k.iter().all(u8::is_ascii_digit))
    };
    matches!(
        rel.as_slice(),
        b"data.pkl"
            | b"constants.pkl"
            | b"bytecode.pkl"
            | b"version"
            | b".data/version"
            | b"byteorder"
            | b".format_version"
            | b".storage_alignment"
            | b".data/serialization_id"
    ) || decimal_under(b"data/")
        || decimal_under(b"constants/")
        || rel.starts_with(b"code/__torch__/")
}

/// The names of every local header whose fixed part and name lie in `head`; none when the
/// first one's name runs past it (torch's detection then claims the file).
fn local_names(head: &[u8]) -> Option<Vec<&[u8]>> {
    let mut names = Vec::new();
    let mut i = 0usize;
    while let Some(rel) = head
        .get(i..)
        .and_then(|rest| rest.windows(4).position(|w| w == b"PK\x03\x04"))
    {
        let p = i.saturating_add(rel);
        i = p.saturating_add(1);
        let name = head
            .get(p.saturating_add(26)..p.saturating_add(28))
            .map(|l| usize::from(u16::from_le_bytes([l[0], l[1]])))
            .and_then(|len| {
                head.get(p.saturating_add(30)..p.saturating_add(30).saturating_add(len))
            });
        match name {
            Some(n) => names.push(n),
            None if p == 0 => return None,
            None => {}
        }
    }
    Some(names)
}

/// Whether this reader claims a file: a zip (local header at byte 0) that is neither an
/// `.npz` nor a zip torch's reader claims.
pub fn looks_like_generic_zip(head: &[u8], file_len: u64) -> bool {
    if !head.starts_with(b"PK\x03\x04") || crate::detect::looks_like_npz(head) {
        return false;
    }
    let Some(names) = local_names(head) else {
        return false;
    };
    if names.iter().any(|n| torch_record_name(n)) {
        return false;
    }
    if file_len <= head.len() as u64 {
        // Torch's detection reads the central directory too when the whole file is in head;
        // a directory this reader cannot read is left alone.
        return zip::central_names(head)
            .is_some_and(|c| !c.iter().any(|n| torch_record_name(n.as_bytes())));
    }
    true
}

/// Whether a member name leaves the directory an archive is extracted into.
fn escapes(name: &str) -> bool {
    name.starts_with('/')
        || name.contains('\\')
        || name.split('/').any(|c| c == "..")
        || name.get(1..2) == Some(":")
}

/// Whether a member holds a pickle.
fn is_pickle(name: &str, head: &[u8], len: u64) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".pkl") || lower.ends_with(".pickle") || pickle::looks_like_pickle(head, len)
}

/// Reads a generic zip.
pub fn read_zip(file: Span<'_>, reviewed: &[String]) -> Outcome {
    let mut out = Outcome::new_for(ZIP);
    let mut budget = read::inflate_budget(file.len);
    walk(file, "", 1, file.len, reviewed, &mut budget, &mut out);
    out.pass_summary = format!(
        "zip archive: local headers agree with the central directory, members tile the file, CRC-32 of every member verified; {} pickle(s) scanned",
        out.pickles.len()
    );
    out
}

/// Reads the archive in `src`; `prefix` names the members holding it (`outer.zip/`).
fn walk(
    src: Span<'_>,
    prefix: &str,
    depth: usize,
    file_len: u64,
    reviewed: &[String],
    budget: &mut u64,
    out: &mut Outcome,
) {
    let place = |m: &Member| format!("member {:?}", format!("{prefix}{}", m.name));
    let archive = match zip::read_archive(&src) {
        Ok(a) => a,
        Err(e) => {
            let where_ = if prefix.is_empty() {
                e.place
            } else {
                format!("member {prefix:?}: {}", e.place)
            };
            out.refuse(None, Severity::Fail, where_, e.reason);
            return;
        }
    };
    for m in &archive.members {
        let full = format!("{prefix}{}", m.name);
        if escapes(&m.name) {
            out.found_at(
                Severity::Fail,
                place(m),
                format!(
                    "the name {:?} leaves the directory it is extracted into (a `..` component, an absolute path or a backslash): extractors that do not sanitise names write outside it",
                    m.name
                ),
            );
        }
        if m.is_dir {
            continue;
        }
        if m.encrypted {
            out.refuse(
                Some(&full),
                Severity::Lead,
                place(m),
                "encrypted; not read".into(),
            );
            continue;
        }
        if m.method != zip::STORED && m.method != zip::DEFLATE {
            out.refuse(
                Some(&full),
                Severity::Lead,
                place(m),
                format!(
                    "compressed with method {} ({}); not read",
                    m.method,
                    zip::method_name(m.method)
                ),
            );
            continue;
        }
        if m.len > *budget {
            out.refuse(
                Some(&full),
                Severity::Lead,
                place(m),
                format!(
                    "{} bytes uncompressed: past what socair inflates from this archive; not read",
                    m.len
                ),
            );
            continue;
        }
        *budget = budget.saturating_sub(m.len);
        let mut bytes = Vec::with_capacity(usize::try_from(m.len).unwrap_or(0));
        if let Err(e) = zip::read_each(&src, m, |piece| {
            bytes.extend_from_slice(piece);
            true
        }) {
            out.refuse(Some(&full), Severity::Fail, place(m), e.to_string());
            continue;
        }
        let head = bytes.get(..4096).unwrap_or(&bytes);
        if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            if depth >= MAX_DEPTH {
                out.refuse(
                    Some(&full),
                    Severity::Lead,
                    place(m),
                    format!("an archive nested {MAX_DEPTH} deep; not opened"),
                );
                continue;
            }
            walk(
                Span::memory(&bytes),
                &format!("{full}/"),
                depth.saturating_add(1),
                file_len,
                reviewed,
                budget,
                out,
            );
        } else if is_pickle(&m.name, head, m.len) {
            scan(&full, &bytes, file_len, reviewed, out);
        } else if full.ends_with(".npy") && crate::npy::has_magic(&bytes) {
            read::read_npy_member(&full, &bytes, file_len, reviewed, out);
        } else {
            out.refuse(
                Some(&full),
                Severity::Lead,
                place(m),
                "no socair reader knows this member; nothing checked it".into(),
            );
        }
    }
}

/// Runs one pickle member through the machine.
fn scan(name: &str, data: &[u8], file_len: u64, reviewed: &[String], out: &mut Outcome) {
    out.pickles.push(format!("member {name:?}"));
    out.unread.push((
        Some(name.to_owned()),
        format!("member {name:?}: a pickle (scanned in the Pickle opcode scan row); its objects are not tensors socair reads"),
    ));
    let options = pickle::Options {
        reviewed: reviewed.to_vec(),
        legacy: false,
        input_len: file_len,
    };
    let run = pickle::run(data, &options);
    for f in run.findings {
        out.pickle_findings.push(Finding {
            severity: match f.severity {
                pickle::Severity::Fail => Severity::Fail,
                pickle::Severity::Lead => Severity::Lead,
            },
            place: format!("member {name:?} byte {}", f.offset),
            reason: format!("{} ({})", f.reason, f.opcode),
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::zip::tests::{deflated, stored, zip};

    const OS_SYSTEM: &[u8] = b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.";
    const HARMLESS: &[u8] = b"\x80\x02]q\x00K\x01a.";

    #[test]
    fn torch_record_names_as_the_torch_plugin_lists_them() {
        for name in [
            "a/data.pkl",
            "A/DATA.PKL",
            "x/version",
            "x/.data/version",
            "x/data/12",
            "x/constants/0",
            "x/code/__torch__/m.py",
            "x/.storage_alignment",
        ] {
            assert!(torch_record_name(name.as_bytes()), "{name}");
        }
        for name in [
            "data.pkl",
            "/data.pkl",
            "x/data/",
            "x/data/a1",
            "x/readme.txt",
            "x/code/main.py",
            "x/y/data.pkl",
        ] {
            assert!(!torch_record_name(name.as_bytes()), "{name}");
        }
    }

    #[test]
    fn detection_leaves_torch_and_npz_alone() {
        let generic = zip(&[stored("model/clf.pkl", HARMLESS)]);
        assert!(looks_like_generic_zip(&generic, generic.len() as u64));
        let torch = zip(&[stored("archive/data.pkl", HARMLESS)]);
        assert!(!looks_like_generic_zip(&torch, torch.len() as u64));
        let npz = zip(&[stored("a.npy", b"x")]);
        assert!(!looks_like_generic_zip(&npz, npz.len() as u64));
        assert!(!looks_like_generic_zip(b"PK\x03\x04", 100));
    }

    #[test]
    fn a_pickle_calling_os_system_two_archives_deep_fails_with_its_place() {
        let inner = zip(&[deflated("clf.pkl", OS_SYSTEM)]);
        let outer = zip(&[
            stored("readme.txt", b"hello"),
            deflated("model/inner.zip", &inner),
            stored("ok.pkl", HARMLESS),
        ]);
        let o = read_zip(Span::file_bytes(&outer), &[]);
        assert_eq!(o.worst(), Some(Severity::Lead), "{:?}", o.findings);
        assert_eq!(o.pickle_status(), Some(Some(Severity::Fail)));
        let f = o
            .pickle_findings
            .iter()
            .find(|f| f.severity == Severity::Fail)
            .unwrap();
        assert!(
            f.place
                .starts_with("member \"model/inner.zip/clf.pkl\" byte "),
            "{f:?}"
        );
        assert!(f.reason.contains("os.system"), "{f:?}");
        assert_eq!(o.pickles.len(), 2);
        assert!(o
            .unread
            .iter()
            .any(|(t, _)| t.as_deref() == Some("readme.txt")));
    }

    #[test]
    fn names_that_leave_the_extraction_directory_fail() {
        let z = zip(&[
            stored("../../evil.pkl", HARMLESS),
            stored("a/b/ok.pkl", HARMLESS),
        ]);
        let o = read_zip(Span::file_bytes(&z), &[]);
        assert_eq!(o.worst(), Some(Severity::Fail));
        assert_eq!(o.findings.len(), 1, "{:?}", o.findings);
        assert!(o.findings[0].place.contains("../../evil.pkl"));
        assert_eq!(o.pickles.len(), 2, "still scanned");
        for name in ["/etc/x", "a\\..\\b", "C:x", "a/../b"] {
            assert!(escapes(name), "{name}");
        }
        for name in ["a..b", "..a/b", "a/b.."] {
            assert!(!escapes(name), "{name}");
        }
    }

    #[test]
    fn a_pickle_of_plain_data_passes_outside_object_arrays() {
        let z = zip(&[deflated("model/weights.pkl", HARMLESS)]);
        let o = read_zip(Span::file_bytes(&z), &[]);
        assert_eq!(o.worst(), None, "{:?}", o.findings);
        assert_eq!(o.pickle_status(), Some(None), "{:?}", o.pickle_findings);
    }

    #[test]
    fn nesting_is_bounded() {
        let mut z = zip(&[stored("p.pkl", OS_SYSTEM)]);
        for _ in 0..5 {
            z = zip(&[stored("z.zip", &z)]);
        }
        let o = read_zip(Span::file_bytes(&z), &[]);
        assert!(o.findings.iter().any(|f| f.reason.contains("nested")));
        assert!(o.pickles.is_empty());
    }
}
