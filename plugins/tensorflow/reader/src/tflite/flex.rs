//! The custom options of a Flex (Select TF ops) operator: a FlexBuffer vector of two strings,
//! the TensorFlow op's name and its serialized `NodeDef`, as the converter writes them and the
//! Flex delegate reads them (`tensorflow/lite/delegates/flex/kernel.cc`, `OpNode` built from
//! `flexbuffers::GetRoot(buffer).AsVector()`, elements 0 and 1 `AsString()`).
//!
//! Only that shape is read, strictly (FlexBuffers format: the root's width in the last byte,
//! its packed type before it, offsets pointing backwards): anything else is refused.

/// `FBT_STRING`.
const STRING: u8 = 5;
/// `FBT_VECTOR` (untyped: a packed type byte per element after the elements).
const VECTOR: u8 = 10;

fn uint(b: &[u8], at: usize, width: usize) -> Result<u64, String> {
    let end = at
        .checked_add(width)
        .filter(|&e| e <= b.len())
        .ok_or("a value past the end")?;
    let mut v = 0u64;
    for (i, &x) in b[at..end].iter().enumerate() {
        v |= u64::from(x) << (8 * i);
    }
    Ok(v)
}

fn width_of(packed: u8) -> usize {
    1 << (packed & 3)
}

/// The position `value` bytes before `at`.
fn back(at: usize, value: u64) -> Result<usize, String> {
    usize::try_from(value)
        .ok()
        .and_then(|v| at.checked_sub(v))
        .ok_or_else(|| "an offset before the start".to_owned())
}

fn string_at(b: &[u8], pos: usize, width: usize) -> Result<&[u8], String> {
    let len_at = pos
        .checked_sub(width)
        .ok_or("a string's length before the start")?;
    let len = usize::try_from(uint(b, len_at, width)?).map_err(|_| "a string too long")?;
    let end = pos
        .checked_add(len)
        .filter(|&e| e < b.len())
        .ok_or("a string past the end")?;
    if b[end] != 0 {
        return Err("a string without its NUL terminator".into());
    }
    Ok(&b[pos..end])
}

/// The strings of a FlexBuffer whose root is an untyped vector of strings.
pub fn strings(b: &[u8]) -> Result<Vec<&[u8]>, String> {
    if b.len() < 3 {
        return Err(format!("{} bytes: too short for a FlexBuffer", b.len()));
    }
    let root_width = b[b.len() - 1] as usize;
    if !matches!(root_width, 1 | 2 | 4 | 8) {
        return Err(format!("root width {root_width}"));
    }
    let packed = b[b.len() - 2];
    let root_at = b
        .len()
        .checked_sub(2 + root_width)
        .ok_or("a root past the start")?;
    if packed >> 2 != VECTOR {
        return Err(format!(
            "the root has FlexBuffer type {}, not a vector",
            packed >> 2
        ));
    }
    let vec = back(root_at, uint(b, root_at, root_width)?)?;
    let w = width_of(packed);
    let len_at = vec
        .checked_sub(w)
        .ok_or("a vector's length before the start")?;
    let len = usize::try_from(uint(b, len_at, w)?).map_err(|_| "a vector too long")?;
    if len > 16 {
        return Err(format!("a vector of {len} elements"));
    }
    let types_at = vec
        .checked_add(len * w)
        .filter(|&e| e.checked_add(len).is_some_and(|t| t <= b.len()))
        .ok_or("a vector past the end")?;
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let t = b[types_at + i];
        if t >> 2 != STRING {
            return Err(format!(
                "element {i} has FlexBuffer type {}, not a string",
                t >> 2
            ));
        }
        let elem = vec + i * w;
        let s = back(elem, uint(b, elem, w)?)?;
        out.push(string_at(b, s, width_of(t))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What flexbuffers::Builder writes for Vector { String("ab"), String("c") }.
    fn sample() -> Vec<u8> {
        let mut b = Vec::new();
        b.extend([2, b'a', b'b', 0]); // "ab" at 1
        b.extend([1, b'c', 0]); // "c" at 5
        b.push(2); // vector length, at 7
        b.push(8 - 1); // element 0 at 8: back to 1
        b.push(9 - 5); // element 1 at 9: back to 5
        b.extend([STRING << 2, STRING << 2]); // types
        b.push(12 - 8); // root at 12: back to the vector at 8
        b.push(VECTOR << 2); // root type, width 1
        b.push(1); // root width
        b
    }

    #[test]
    fn reads_a_vector_of_strings() {
        let b = sample();
        assert_eq!(strings(&b).unwrap(), vec![&b"ab"[..], &b"c"[..]]);
        let mut bad = b.clone();
        bad[3] = b'x';
        assert!(strings(&bad).is_err());
        let mut bad = b.clone();
        let n = bad.len();
        bad[n - 2] = 1 << 2;
        assert!(strings(&bad).is_err());
        assert!(strings(&[0, 0]).is_err());
    }
}
