//! socair reader library for Lua Torch7 serialized objects (`.t7`, `.th`: `torch.save` in
//! binary mode), read as torch7's own loader reads them (torch/torch7 at
//! 814ea4afd6beb110705d2456de03876841fcf1fd, File.lua `File:readObject`) and as the Python
//! reader torchfile 0.1.0 does (bshillingford/python-torchfile, torchfile.py
//! `T7Reader.read_obj`).
//!
//! The file is one object, written recursively: nil, numbers, booleans, strings, tables,
//! objects of torch classes (a version string `V n`, the class name, then what the class's
//! `write` wrote), and Lua functions (their `string.dump` bytecode and upvalues). Tables,
//! torch objects and recursive functions carry an index, so shared objects and cycles are
//! references ([`walk`]).
//!
//! Verdicts:
//! * a Lua function (TYPE_FUNCTION 6, TYPE_RECUR_FUNCTION 8, the legacy 7) is code:
//!   torch7's `readObject` hands its bytecode to `loadstring`: FAIL, naming its place;
//! * torch7's tensors and storages and nn's modules are data ([`classes`]): PASS; a tensor
//!   viewing past its storage (neither loader checks) or over no storage: FAIL;
//! * a class neither torch7 nor nn defines is read by its own package's `read` method, which
//!   this reader cannot see: LEAD (read past as torchfile reads it, one object);
//! * a cut file, bytes no loader reads as an object: FAIL; a layout this reader does not
//!   know, objects nested past its bound, bytes after the object: LEAD.
//!
//! Tensors are fingerprinted by what they hold in C order ([`view`]): a range of the file, a
//! range with strides, or gathered bytes. Storages no tensor views are fingerprinted whole.
//! The ascii mode of `torch.save` is not read.
//!
//! The claim ([`claims`]) is by content: the root object is a table or a torch object of
//! index 1 (the first index torch7's `writeObject` gives), and its head reads as a torch7
//! object as far as it goes. The plugin API gives a reader no file name, so the `.t7`
//! extension cannot be part of it.

pub mod classes;
#[doc(hidden)]
pub mod fuzzing;
pub mod view;
pub mod walk;

use socair_plugin_api::{ByteSourceRef, OpenedFile, PluginError, ReadOptions, RowStatus};
use socair_plugin_kit::export::{read_prefix, Reader};
use socair_plugin_kit::model::Severity;
use socair_plugin_kit::reading::{listed, Reading};
use std::collections::{HashMap, HashSet};
use walk::{StopKind, Walked};

/// The format name.
pub const FORMAT: &str = "torch7";

/// The finding kind.
const KIND: &str = "Torch7 object";

/// Files larger than this are read up to it only (and the rest is a LEAD).
pub const MAX_INPUT: u64 = 4 << 30;

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct Torch7Reader;

impl Reader for Torch7Reader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        claims(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let bytes = read_prefix(source, MAX_INPUT)?;
        Ok(read_torch7(&bytes, source.file_len()))
    }
}

fn le_i32(b: &[u8], at: usize) -> Option<i32> {
    let s = b.get(at..at + 4)?;
    Some(i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Whether `head` (the first bytes of a file of `file_len` bytes) is a torch7 binary file:
/// its root is a non-empty table or a torch object whose class name is printable, of index 1,
/// and the head reads as torch7 objects up to its end (a cut past the first 16 bytes still
/// claims: a damaged `.t7` is this reader's to refuse).
pub fn claims(head: &[u8], file_len: u64) -> bool {
    let (Some(tag), Some(1)) = (le_i32(head, 0), le_i32(head, 4)) else {
        return false;
    };
    match tag {
        3 if le_i32(head, 8).is_some_and(|n| n >= 1) => {}
        4 => {}
        _ => return false,
    }
    let w = walk::walk(head);
    if tag == 4
        && !w
            .classes
            .first()
            .is_some_and(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_graphic()))
    {
        return false;
    }
    match &w.stop {
        None => true,
        Some(s) => match s.kind {
            StopKind::Malformed => false,
            StopKind::NotRead => true,
            StopKind::Cut => (head.len() as u64) < file_len || s.at >= 16,
        },
    }
}

/// Reads a torch7 file whose first bytes are `bytes` (the file is `file_len` long).
pub fn read_torch7(bytes: &[u8], file_len: u64) -> OpenedFile {
    let mut reading = Reading::new(FORMAT, file_len);
    reading.fails_first = true;
    let partial = file_len > bytes.len() as u64;
    if partial {
        reading.note(
            KIND,
            Severity::Lead,
            || "file".into(),
            || {
                format!(
                    "a file of {file_len} bytes: this reader read the first {} only",
                    bytes.len()
                )
            },
        );
    }
    let w = walk::walk(bytes);
    for (severity, place, reason) in &w.findings {
        reading.note(KIND, *severity, || place.clone(), || reason.clone());
    }
    if let Some(worst) = w.more_worst {
        let n = w.findings_more;
        reading.note(
            KIND,
            worst,
            || "file".into(),
            || format!("{n} more findings past the first 1,000 (the worst of them this severity)"),
        );
    }
    if let Some(stop) = &w.stop {
        let severity = match (&stop.kind, &w.guessed_after) {
            (StopKind::NotRead, _) => Severity::Lead,
            (StopKind::Cut, _) if partial => Severity::Lead,
            (_, Some(_)) => Severity::Lead,
            _ => Severity::Fail,
        };
        let reason = match &w.guessed_after {
            Some(class) if severity == Severity::Lead && stop.kind != StopKind::NotRead => format!(
                "{} (after an object of class {class}, whose layout only its package's read method knows)",
                stop.reason
            ),
            _ => stop.reason.clone(),
        };
        reading.note(KIND, severity, || stop.place.clone(), || reason);
    } else if w.trailing > 0 {
        let (n, at) = (w.trailing, bytes.len() as u64 - w.trailing);
        reading.note(KIND, Severity::Lead, || format!("byte {at}"), || {
            format!("{n} bytes after the root object, which neither torch7's torch.load nor torchfile reads")
        });
    }
    describe(bytes, &w, &mut reading);
    reading.metadata.push((
        "torch7.classes".into(),
        listed(w.classes.iter().map(String::as_str), 16),
    ));
    let (tables, objects, tensors) = (w.tables, w.objects, reading.tensors.len());
    let classes = listed(w.classes.iter().map(String::as_str), 6);
    reading.finish(|status| match status {
        RowStatus::Pass => format!(
            "Torch7 object (torch.save, binary): {tables} tables, {objects} torch objects ({}), {tensors} tensors described; data only, as torch7's File:readObject and torchfile read it",
            if classes.is_empty() { "no classes".to_owned() } else { classes }
        ),
        RowStatus::Fail => "not a safe Torch7 object: it holds code, or bytes torch7 and torchfile read differently or outside the file (see the findings)".to_owned(),
        _ => "Torch7 object with parts this reader does not prove safe (see the findings)".to_owned(),
    })
}

/// Describes every tensor and every storage no tensor views.
fn describe(bytes: &[u8], w: &Walked, reading: &mut Reading) {
    // A name taken again gets the next `#n` its base has not had (a table may repeat a key).
    let mut names = HashSet::new();
    let mut next: HashMap<String, u64> = HashMap::new();
    let mut unique = |name: &str| {
        let mut n = name.to_owned();
        while !names.insert(n.clone()) {
            let i = next.entry(name.to_owned()).or_insert(1);
            *i += 1;
            n = format!("{name}#{i}");
        }
        n
    };
    for v in &w.tensors {
        let name = unique(&v.name);
        match view::layout(v) {
            Some(view::Layout::Contiguous(r)) => {
                reading.describe(view::descriptor(&name, v, vec![r], None, None))
            }
            Some(view::Layout::Strided(r, s)) => {
                reading.describe(view::descriptor(&name, v, vec![r], Some(s), None))
            }
            Some(view::Layout::Repeating { len }) if len <= reading.inline_left => {
                if let Some(g) = view::gather(bytes, v) {
                    reading.inline_left -= len;
                    reading.describe(view::descriptor(&name, v, Vec::new(), None, Some(g)));
                }
            }
            _ => reading.unread(
                "tensors whose view repeats elements",
                Some(&name),
                format!("byte {}: a view repeating its storage's elements, larger than the bytes left to gather it in", v.at),
                false,
            ),
        }
    }
    for (name, s) in &w.storages {
        if s.count == 0 {
            continue;
        }
        let v = walk::TensorView {
            name: name.clone(),
            at: s.data,
            sizes: vec![s.count],
            strides: vec![1],
            offset: 0,
            storage: *s,
        };
        let name = unique(name);
        if let Some(view::Layout::Contiguous(r)) = view::layout(&v) {
            reading.describe(view::descriptor(&name, &v, vec![r], None, None));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i32s(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn string(s: &[u8]) -> Vec<u8> {
        let mut b = i32s(&[s.len() as i32]);
        b.extend_from_slice(s);
        b
    }

    /// A root object of class `class` whose body is `body`.
    fn object(class: &[u8], body: &[u8]) -> Vec<u8> {
        let mut b = i32s(&[4, 1]);
        b.extend(string(b"V 1"));
        b.extend(string(class));
        b.extend_from_slice(body);
        b
    }

    #[test]
    fn the_claim_wants_a_root_table_or_object_of_index_one() {
        let module = object(b"nn.Identity", &i32s(&[3, 2, 0]));
        assert!(claims(&module, module.len() as u64));
        // Index 2 at the root: no writer starts there.
        let mut other = module.clone();
        other[4] = 2;
        assert!(!claims(&other, other.len() as u64));
        // An empty table, a number, a class name that is no text: not claimed.
        assert!(!claims(&i32s(&[3, 1, 0]), 12));
        assert!(!claims(&i32s(&[1, 1, 0]), 12));
        let binary = object(&[0, 1, 2], &i32s(&[0]));
        assert!(!claims(&binary, binary.len() as u64));
        // A head cut where the file goes on is still claimed; junk after the index is not.
        assert!(claims(&module[..38], 4096));
        let mut junk = i32s(&[3, 1, 1, 77]);
        junk.extend([0; 8]);
        assert!(!claims(&junk, junk.len() as u64));
    }

    #[test]
    fn a_stop_after_an_unknown_class_is_a_lead_and_a_short_read_too() {
        // mypkg.X's body as torchfile reads it (one object), then a table cut short.
        let mut b = object(b"mypkg.X", &i32s(&[3, 2, 1, 2]));
        b.extend(string(b"k"));
        let f = read_torch7(&b, b.len() as u64);
        assert_eq!(f.rows[0].status, RowStatus::Lead, "{:?}", f.rows[0]);
        assert!(f.rows[0].findings[1].reason.contains("mypkg.X"));
        // The same cut after a known class: a FAIL.
        let mut b = object(b"nn.Linear", &i32s(&[3, 2, 1, 2]));
        b.extend(string(b"k"));
        let f = read_torch7(&b, b.len() as u64);
        assert_eq!(f.rows[0].status, RowStatus::Fail);
        // Only the head of a larger file was given: a LEAD, not a cut file.
        let f = read_torch7(&b, b.len() as u64 + 100);
        assert_eq!(f.rows[0].status, RowStatus::Lead);
    }
}
