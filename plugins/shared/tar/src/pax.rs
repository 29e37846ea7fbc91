//! Pax extended headers: the keywords that change the outcome, the records parsed as each
//! CPython parses them (framed after gh-121285, the old regular expressions before it), the
//! GNU sparse maps they hold, and the sizes `_apply_pax_info` takes from them. Apart from the
//! chain of headers that reads them.

use super::header::{slice, Member};
use super::profile::Profile;
use super::py::{invalid, py_int_bytes, py_int_str, value_error, PyErr, SATURATE};

/// The pax keywords whose values change the outcome, in the order CPython's dict first saw
/// them (a later record for the same keyword keeps that position, as a dict does).
#[derive(Debug, Clone, Default)]
pub(super) struct PaxDict {
    entries: Vec<(&'static [u8], Vec<u8>)>,
}

const KEYWORDS: &[&[u8]] = &[
    b"GNU.sparse.map",
    b"GNU.sparse.size",
    b"GNU.sparse.realsize",
    b"GNU.sparse.major",
    b"GNU.sparse.minor",
    b"size",
    b"path",
    b"GNU.sparse.name",
];

impl PaxDict {
    pub(super) fn set(&mut self, keyword: &[u8], value: &[u8]) {
        let Some(&known) = KEYWORDS.iter().find(|k| **k == keyword) else {
            return;
        };
        match self.entries.iter_mut().find(|(k, _)| *k == known) {
            Some(entry) => entry.1 = value.to_vec(),
            None => self.entries.push((known, value.to_vec())),
        }
    }
    pub(super) fn get(&self, keyword: &[u8]) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|(k, _)| *k == keyword)
            .map(|(_, v)| v.as_slice())
    }
}

/// The length of the run of ASCII digits at `at`.
fn digit_run(buf: &[u8], at: usize) -> usize {
    buf[at.min(buf.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count()
}

/// A pax record's keyword and value, as bytes.
pub(super) type PaxRecord<'a> = (&'a [u8], &'a [u8]);

/// `_proc_pax` after gh-121285: records `"%d %s=%s\n"` framed by their length, up to the end
/// or a NUL; anything else is `InvalidHeaderError`.
pub(super) fn parse_pax_framed(buf: &[u8]) -> Result<Vec<PaxRecord<'_>>, PyErr> {
    let mut records = Vec::new();
    let mut pos = 0usize;
    while pos < buf.len() && buf[pos] != 0 {
        let digits = digit_run(buf, pos);
        if digits == 0 || digits > 20 || buf.get(pos + digits) != Some(&b' ') {
            return Err(invalid("invalid header"));
        }
        let length: u128 = std::str::from_utf8(&buf[pos..pos + digits])
            .expect("ASCII digits")
            .parse()
            .expect("at most 20 digits");
        if length < 5 || (pos as u128) + length > buf.len() as u128 {
            return Err(invalid("invalid header"));
        }
        let end = pos + length as usize - 1;
        let kv = slice(buf, pos + digits + 1, end);
        let (keyword, value, equals) = match kv.iter().position(|&b| b == b'=') {
            Some(e) => (&kv[..e], &kv[e + 1..], true),
            None => (kv, &kv[kv.len()..], false),
        };
        if keyword.is_empty() || !equals || buf[end] != b'\n' {
            return Err(invalid("invalid header"));
        }
        records.push((keyword, value));
        pos += length as usize;
    }
    Ok(records)
}

/// The old `_proc_pax`'s `re.search(br"\d+ hdrcharset=([^\n]+)\n", buf)` and its strict UTF-8
/// decode of the value, which raises `UnicodeDecodeError`.
pub(super) fn old_hdrcharset(buf: &[u8]) -> Result<(), PyErr> {
    const KEY: &[u8] = b" hdrcharset=";
    let mut from = 0;
    while let Some(rel) = find(&buf[from..], KEY) {
        let j = from + rel;
        from = j + 1;
        if j == 0 || !buf[j - 1].is_ascii_digit() {
            continue;
        }
        let k = j + KEY.len();
        let Some(nl) = buf[k..].iter().position(|&b| b == b'\n') else {
            // No newline follows: no later match can end either.
            return Ok(());
        };
        if nl == 0 {
            continue;
        }
        return match std::str::from_utf8(&buf[k..k + nl]) {
            Ok(_) => Ok(()),
            Err(_) => Err(PyErr::Other(
                "UnicodeDecodeError",
                "the hdrcharset value is not UTF-8".into(),
            )),
        };
    }
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The old `_proc_pax` loop: `re.compile(br"(\d+) ([^=]+)=").match(buf, pos)`, a record per
/// match, `pos += length` (no framing checks; a length of 0 is `InvalidHeaderError`). Every
/// scan moves forward only, so the loop is linear in the buffer whatever the records say.
pub(super) fn parse_pax_regex(
    buf: &[u8],
    profile: Profile,
    dict: &mut PaxDict,
) -> Result<(), PyErr> {
    let mut pos = 0usize;
    // The digit run containing `pos`, the first nonzero digit at or after `pos` in it, and the
    // first '=' at or after an index: all move forward only, as `pos` does.
    let (mut run_start, mut run_end) = (0usize, 0usize);
    let mut nonzero = 0usize;
    let mut eq = 0usize;
    loop {
        if !(run_start..run_end).contains(&pos) {
            run_start = pos;
            run_end = pos + digit_run(buf, pos);
        }
        if run_end == pos {
            return Ok(());
        }
        let a = run_end;
        if buf.get(a) != Some(&b' ') || matches!(buf.get(a + 1), None | Some(b'=')) {
            return Ok(());
        }
        eq = eq.max(a + 2);
        while eq < buf.len() && buf[eq] != b'=' {
            eq += 1;
        }
        if eq >= buf.len() {
            return Ok(());
        }
        // int(length): past sys.get_int_max_str_digits() digits it raises ValueError.
        let digits = a - pos;
        if let Some(limit) = profile.int_max_str_digits {
            if digits > 640 && digits > limit {
                return Err(value_error(format!(
                    "int() of a {digits}-digit pax record length"
                )));
            }
        }
        nonzero = nonzero.max(pos);
        while nonzero < a && buf[nonzero] == b'0' {
            nonzero += 1;
        }
        let significant = &buf[nonzero..a];
        let length: i128 = if significant.len() > 36 {
            SATURATE
        } else {
            significant
                .iter()
                .fold(0i128, |n, &d| n * 10 + i128::from(d - b'0'))
        };
        if length == 0 {
            return Err(invalid("invalid header"));
        }
        let keyword = &buf[a + 1..eq];
        let end = (pos as i128 + length - 1).clamp(0, buf.len() as i128) as usize;
        dict.set(keyword, slice(buf, eq + 1, end));
        let next = pos as i128 + length;
        if next > buf.len() as i128 {
            return Ok(());
        }
        pos = next as usize;
    }
}

/// The old `_proc_gnusparse_00`: `re.finditer(br"\d+ GNU.sparse.offset=(\d+)\n", buf)` (and
/// `numbytes`), `int()` of each number; the unescaped dots match any byte but a newline.
pub(super) fn old_sparse_00(buf: &[u8], profile: Profile) -> Result<(), PyErr> {
    for key in [&b"GNU.sparse.offset="[..], &b"GNU.sparse.numbytes="[..]] {
        let mut j = 1;
        while j + 1 + key.len() <= buf.len() {
            let matches_key = buf[j] == b' '
                && buf[j - 1].is_ascii_digit()
                && key
                    .iter()
                    .zip(&buf[j + 1..])
                    .all(|(&k, &b)| if k == b'.' { b != b'\n' } else { k == b });
            if matches_key {
                let k = j + 1 + key.len();
                let n = digit_run(buf, k);
                if n > 0 && buf.get(k + n) == Some(&b'\n') {
                    py_int_bytes(&buf[k..k + n], profile).ok_or_else(|| {
                        value_error("int() of a GNU sparse 0.0 number past the digit limit")
                    })?;
                }
            }
            j += 1;
        }
    }
    Ok(())
}

/// `TarInfo._apply_pax_info`: the sizes it converts; `GNU.sparse.size` and
/// `GNU.sparse.realsize` go through a bare `int()`, `size` falls back to 0.
pub(super) fn apply_pax_info(
    member: &mut Member,
    dict: &PaxDict,
    profile: Profile,
) -> Result<(), PyErr> {
    for (keyword, value) in &dict.entries {
        match *keyword {
            b"GNU.sparse.size" | b"GNU.sparse.realsize" => {
                member.size = py_int_str(value, profile).ok_or_else(|| {
                    value_error(format!(
                        "int({:?}) of pax {}",
                        String::from_utf8_lossy(value),
                        String::from_utf8_lossy(keyword)
                    ))
                })?;
            }
            b"size" => member.size = py_int_str(value, profile).unwrap_or(0),
            // `path` loses its trailing slashes; `GNU.sparse.name` is set as it is.
            b"path" => {
                let mut name = value.to_vec();
                while name.last() == Some(&b'/') {
                    name.pop();
                }
                member.name = name;
            }
            b"GNU.sparse.name" => member.name = value.to_vec(),
            _ => {}
        }
    }
    Ok(())
}
