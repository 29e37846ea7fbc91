//! Which first-party plugin claims a zip, judged from its first bytes: written once, so that
//! the torch-zip plugin, the numpy plugin and the archive plugin (whose rule is the complement
//! of theirs) cannot drift apart. The host refuses to choose when two plugins claim a file.
//!
//! * torch-zip ([`torch_claims`]) claims a file that starts with `PYTORCH1`, or with a zip local
//!   header where some local header visible in the first bytes names a record torch's reader
//!   looks for ([`torch_record_name`]), or whose first name runs past those bytes; when the
//!   whole file is in the first bytes, a torch record in its central directory counts too. A
//!   zip whose first record is in no folder is never torch's (torch refuses to open it).
//! * torch-zip's `.pt2` reader ([`pt2_claims`]) claims a zip `torch.export.save` (and
//!   `torch._inductor` packaging) writes: some local header visible in the first bytes names a
//!   record only a PT2 archive holds ([`pt2_record_name`]), or, when the whole file is in the
//!   first bytes, its central directory does. torch-zip's checkpoint reader leaves such a
//!   file to it (a PT2 archive holds torch records too: `.data/version`, `byteorder`).
//! * numpy ([`npz_claims`]) claims a zip whose first local header's name ends in `.npy`, as
//!   `np.savez` writes.
//! * keras ([`keras_claims`]) claims a zip whose first local header names `metadata.json`,
//!   `config.json` or `model.weights.h5` and whose first bytes show a local header naming
//!   another of the three, as `keras.saving` writes a `.keras` archive
//!   (`keras/src/saving/saving_lib.py` `_save_model_to_fileobj`, keras 3.15.1: `metadata.json`
//!   first, then `config.json`, then the weights), unless torch-zip's rule (widened as the
//!   archive plugin widens it) claims it too. A zip holding a `config.json` alone, or Keras'
//!   members after others, is the archive plugin's, which judges every top-level
//!   `config.json` of a zip with the Keras grammar (`keras.saving.load_model` builds a model
//!   from any zip's `config.json`: `plugins/archive/reader/src/keras.rs`), so the claims stay
//!   disjoint and no zip Keras loads escapes the grammar.
//! * archive claims every other zip. For the whole-file case it looks for a torch record name
//!   after **every** central-header signature ([`central_header_names`]), where torch-zip reads
//!   the central directory with its own parser: that finds every name torch-zip's parser finds
//!   and perhaps more, so a doubtful file is left unclaimed rather than claimed twice.

use super::{Fields, CENTRAL_MAGIC, LOCAL_MAGIC};

/// Whether a zip record name is one torch's reader looks for or writes: `<prefix>/` then
/// `data.pkl`, `constants.pkl`, `bytecode.pkl`, `version`, `.data/version`, `byteorder`,
/// `.format_version`, `.storage_alignment`, `.data/serialization_id`, a storage
/// `data/<decimal key>` or `constants/<decimal key>`, or TorchScript code under
/// `code/__torch__/`. Compared ignoring ASCII case, as torch's reader (miniz) finds them.
pub fn torch_record_name(name: &[u8]) -> bool {
    let Some(slash) = name.iter().position(|&b| b == b'/') else {
        return false;
    };
    if slash == 0 {
        return false;
    }
    let rel = name
        .get(slash + 1..)
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

/// Whether a zip record name is one only a PT2 archive holds (torch 2.15,
/// `torch/csrc/export/pt2_archive_constants.h`, as `torch.export.pt2_archive.constants`
/// gives them): `<prefix>/archive_format`, `<prefix>/archive_version`, or a record under
/// `<prefix>/data/weights/`, `data/constants/`, `data/sample_inputs/` or `data/aotinductor/`.
/// `torch.export.save` writes the weights first (`data/weights/…`: the first record of every
/// exported program, its weights config at least), an AOTInductor package its
/// `data/aotinductor/…` first, and `archive_format` last but the writer's own records.
pub fn pt2_record_name(name: &[u8]) -> bool {
    let Some(slash) = name.iter().position(|&b| b == b'/') else {
        return false;
    };
    if slash == 0 {
        return false;
    }
    let rel = name.get(slash + 1..).unwrap_or_default();
    matches!(rel, b"archive_format" | b"archive_version")
        || [
            &b"data/weights/"[..],
            b"data/constants/",
            b"data/sample_inputs/",
            b"data/aotinductor/",
        ]
        .iter()
        .any(|dir| rel.len() > dir.len() && rel.starts_with(dir))
}

/// The `.pt2` reader's claim on a file whose first bytes are `head` and whose length is
/// `file_len`: a zip local header at the start, and a PT2 record among the local headers
/// visible in `head`; when the whole file is in `head`, `central_has_pt2_record` judges its
/// central directory too.
pub fn pt2_claims(
    head: &[u8],
    file_len: u64,
    central_has_pt2_record: impl FnOnce(&[u8]) -> bool,
) -> bool {
    if !head.starts_with(&LOCAL_MAGIC) {
        return false;
    }
    if local_header_names(head, 0).is_some_and(|names| names.iter().any(|n| pt2_record_name(n))) {
        return true;
    }
    file_len <= head.len() as u64 && central_has_pt2_record(head)
}

/// The names of the zip local headers whose fixed part lies in `bytes` (`at` is where `bytes`
/// starts in the file), wherever they are: torch's reader (miniz) goes by the central
/// directory, so a local header anywhere may be one it reads. `None` for a header at file
/// offset 0 whose name runs past `bytes` (its name cannot be seen).
pub fn local_header_names(bytes: &[u8], at: u64) -> Option<Vec<&[u8]>> {
    let mut names = Vec::new();
    let mut i = 0;
    while let Some(rel) = bytes
        .get(i..)
        .and_then(|rest| rest.windows(4).position(|w| w == LOCAL_MAGIC))
    {
        let p = i + rel;
        i = p + 1;
        let first = at.saturating_add(p as u64) == 0;
        let Some(len) = bytes.get(p + 26..p + 28) else {
            if first {
                return None;
            }
            continue;
        };
        let len = usize::from(Fields::new(len).u16());
        match bytes.get(p + 30..p + 30 + len) {
            Some(name) => names.push(name),
            None if first => return None,
            None => {}
        }
    }
    Some(names)
}

/// The name after every central directory header signature in `bytes` whose name lies in
/// them.
pub fn central_header_names(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == CENTRAL_MAGIC)
        .filter_map(move |(p, _)| {
            let len = usize::from(Fields::new(bytes.get(p + 28..p + 30)?).u16());
            bytes.get(p + 46..p + 46 + len)
        })
}

/// torch-zip's claim on a file whose first bytes are `head` and whose length is `file_len`.
/// `central_has_torch_record` judges the whole-file case (the file fits in `head`): torch-zip
/// reads the central directory with its parser, the archive plugin with
/// [`central_header_names`] (see the module comment).
pub fn torch_claims(
    head: &[u8],
    file_len: u64,
    central_has_torch_record: impl FnOnce(&[u8]) -> bool,
) -> bool {
    if head.starts_with(b"PYTORCH1") {
        return true;
    }
    if !head.starts_with(&LOCAL_MAGIC) {
        return false;
    }
    match local_header_names(head, 0) {
        None => return true,
        // torch's reader names the archive after its first record (the central directory's
        // first entry), up to the first `/`, and refuses an archive whose first record has
        // none ("file in archive is not in a subdirectory": `PyTorchStreamReader::init`,
        // caffe2/serialize/inline_container.cc, torch 2.15). Such a zip is not one torch
        // loads, whatever its later records are called: a TorchServe archive written with
        // `--archive-format zip-store` shows the records of the TorchScript model it stores
        // uncompressed. The central directory says which record is first when the whole file
        // is in `head`; otherwise the first local header stands for it.
        Some(names) if !first_record_in_folder(head, file_len, names.first().copied()) => {
            return false
        }
        Some(names) if names.iter().any(|n| torch_record_name(n)) => return true,
        Some(_) => {}
    }
    file_len <= head.len() as u64 && central_has_torch_record(head)
}

/// Whether the zip's first record (torch's archive name) lies in a folder: the central
/// directory's first entry when the whole file is in `head`, else the first local header's
/// name; true when that cannot be read (the claim then goes on as before).
fn first_record_in_folder(head: &[u8], file_len: u64, first_local: Option<&[u8]>) -> bool {
    let in_folder = |name: &[u8]| name.contains(&b'/');
    if file_len <= head.len() as u64 {
        first_central_name(head).is_none_or(in_folder)
    } else {
        first_local.is_none_or(in_folder)
    }
}

/// The name of the first central directory entry of a zip held whole in `bytes`: the last end
/// record's central directory offset, and the entry there.
fn first_central_name(bytes: &[u8]) -> Option<&[u8]> {
    let eocd = bytes.windows(4).rposition(|w| w == super::EOCD_MAGIC)?;
    let offset = Fields::new(bytes.get(eocd + 16..eocd + 20)?).u32() as usize;
    let header = bytes.get(offset..)?;
    if !header.starts_with(&CENTRAL_MAGIC) {
        return None;
    }
    let len = usize::from(Fields::new(header.get(28..30)?).u16());
    header.get(46..46 + len)
}

/// numpy's claim: `head` starts with a zip local header whose member name ends in `.npy`, as
/// `np.savez` writes. A torch checkpoint (its first member is `<name>/data.pkl`, or `.data/…`)
/// or any other zip is not claimed.
pub fn npz_claims(head: &[u8]) -> bool {
    let (Some(sig), Some(len)) = (head.get(..4), head.get(26..28)) else {
        return false;
    };
    if sig != LOCAL_MAGIC {
        return false;
    }
    let name_len = usize::from(Fields::new(len).u16());
    30usize
        .checked_add(name_len)
        .and_then(|end| head.get(30..end))
        .is_some_and(|name| name.ends_with(b".npy"))
}

/// The first members of a `.keras` archive, any of which may come first (Keras writes
/// `metadata.json` first; the others allow for archives re-zipped in another order).
pub const KERAS_FIRST_MEMBERS: &[&[u8]] = &[b"metadata.json", b"config.json", b"model.weights.h5"];

/// keras' claim: `head` starts with a zip local header whose member name is one of
/// [`KERAS_FIRST_MEMBERS`], and a later local header in `head` names another of them (Keras
/// writes `metadata.json` and `config.json` first, both small). The Keras plugin leaves to
/// torch-zip what torch's rule claims.
pub fn keras_claims(head: &[u8]) -> bool {
    if !head.starts_with(&LOCAL_MAGIC) {
        return false;
    }
    let Some(names) = local_header_names(head, 0) else {
        return false;
    };
    let Some((first, rest)) = names.split_first() else {
        return false;
    };
    KERAS_FIRST_MEMBERS.contains(first)
        && rest
            .iter()
            .any(|n| n != first && KERAS_FIRST_MEMBERS.contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(name: &[u8]) -> Vec<u8> {
        let mut h = LOCAL_MAGIC.to_vec();
        h.extend_from_slice(&[0; 22]);
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(name);
        h
    }

    #[test]
    fn torch_names_and_claims() {
        assert!(torch_record_name(b"archive/data.pkl"));
        assert!(torch_record_name(b"X/DATA/12"));
        assert!(!torch_record_name(b"/data.pkl"));
        assert!(!torch_record_name(b"a/data/"));
        assert!(!torch_record_name(b"data.pkl"));
        let never = |_: &[u8]| -> bool { panic!("not asked") };
        assert!(torch_claims(&local(b"archive/data.pkl"), 1 << 20, never));
        assert!(torch_claims(b"PYTORCH1", 8, never));
        assert!(!torch_claims(&local(b"w.npy"), 1 << 20, never));
        // The first name runs past the head: claimed, so that open says what is wrong.
        assert!(torch_claims(
            &local(b"model/payload.pkl")[..35],
            1 << 20,
            never
        ));
        // The whole file is in the head: the central directory decides.
        let small = local(b"w.npy");
        assert!(torch_claims(&small, small.len() as u64, |_| true));
        assert!(!torch_claims(&small, small.len() as u64, |_| false));
        // A first record in no folder is never torch's (torch refuses the archive), however
        // the records of a zip stored inside it are named.
        let mut stored = local(b"model.pt");
        stored.extend(local(b"model/data.pkl"));
        assert!(!torch_claims(&stored, 1 << 20, never));
        // Whole in the head: the central directory's first entry is torch's first record.
        let whole = |first_central: &[u8]| {
            let mut z = stored.clone();
            let cd = z.len() as u32;
            z.extend_from_slice(&CENTRAL_MAGIC);
            z.extend_from_slice(&[0; 24]);
            z.extend_from_slice(&(first_central.len() as u16).to_le_bytes());
            z.extend_from_slice(&[0; 16]);
            z.extend_from_slice(first_central);
            z.extend_from_slice(&super::super::EOCD_MAGIC);
            z.extend_from_slice(&[0; 12]);
            z.extend_from_slice(&cd.to_le_bytes());
            z.extend_from_slice(&[0; 2]);
            z
        };
        let z = whole(b"model.pt");
        assert_eq!(first_central_name(&z), Some(&b"model.pt"[..]));
        assert!(!torch_claims(&z, z.len() as u64, |_| true));
        let z = whole(b"archive/data.pkl");
        assert!(torch_claims(&z, z.len() as u64, never));
    }

    #[test]
    fn pt2_names_and_claims() {
        assert!(pt2_record_name(b"tiny/data/weights/weight_0"));
        assert!(pt2_record_name(b"m/archive_format"));
        assert!(pt2_record_name(b"m/data/aotinductor/model/x.cpp"));
        assert!(!pt2_record_name(b"m/data/weights/"));
        assert!(!pt2_record_name(b"m/data/0"));
        assert!(!pt2_record_name(b"archive_format"));
        assert!(!pt2_record_name(b"m/models/model.json"));
        let never = |_: &[u8]| -> bool { panic!("not asked") };
        assert!(pt2_claims(
            &local(b"tiny/data/weights/weight_0"),
            1 << 20,
            never
        ));
        assert!(!pt2_claims(&local(b"archive/data.pkl"), 1 << 20, never));
        let small = local(b"a/b");
        assert!(pt2_claims(&small, small.len() as u64, |_| true));
        assert!(!pt2_claims(b"PK\x05\x06", 4, |_| true));
    }

    #[test]
    fn local_and_central_names() {
        let mut two = local(b"a/x");
        two.extend(local(b"b/version"));
        assert_eq!(
            local_header_names(&two, 0),
            Some(vec![&b"a/x"[..], &b"b/version"[..]])
        );
        assert_eq!(local_header_names(&two[..31], 0), None);
        assert_eq!(local_header_names(&two[..31], 100), Some(vec![]));
        let mut central = CENTRAL_MAGIC.to_vec();
        central.extend_from_slice(&[0; 24]);
        central.extend_from_slice(&3u16.to_le_bytes());
        central.extend_from_slice(&[0; 16]);
        central.extend_from_slice(b"a/b");
        assert_eq!(
            central_header_names(&central).collect::<Vec<_>>(),
            vec![&b"a/b"[..]]
        );
        assert_eq!(central_header_names(&central[..48]).count(), 0);
    }

    #[test]
    fn keras_is_the_first_members_keras_writes() {
        let two = |a: &[u8], b: &[u8]| {
            let mut z = local(a);
            z.extend(local(b));
            z
        };
        assert!(keras_claims(&two(b"metadata.json", b"config.json")));
        assert!(keras_claims(&two(b"config.json", b"model.weights.h5")));
        assert!(!keras_claims(&local(b"config.json")), "a config.json alone");
        assert!(!keras_claims(&two(b"config.json", b"config.json")));
        assert!(!keras_claims(&two(b"assets/metadata.json", b"config.json")));
        assert!(!keras_claims(&two(b"w.npy", b"config.json")));
        assert!(!keras_claims(&two(b"metadata.json", b"config.json")[..40]));
        assert!(!npz_claims(&two(b"config.json", b"metadata.json")));
    }

    #[test]
    fn npz_is_a_first_member_named_npy() {
        let z = local(b"w.npy");
        assert!(npz_claims(&z));
        assert!(!npz_claims(&z[..34]));
        assert!(!npz_claims(&local(b"archive/data.pkl")));
        assert!(!npz_claims(b"PK\x05\x06"));
        assert!(!npz_claims(b""));
    }
}
