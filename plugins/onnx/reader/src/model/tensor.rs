//! Locating one tensor (a main-graph initializer, or the tensor of a Constant's `value`): its
//! type, shape and size checked, and its bytes found as byte ranges of the file, in an
//! external data file beside it, or decoded from the numbers the file holds; or the problem
//! that keeps it from being located. Apart from the graph walk that hands over each tensor.

use super::data_type::{data_type, INT32_DATA_TYPES};
use super::results::Tensor;
use crate::decode;
use crate::error::OnnxError;
use crate::proto::onnx::{tensor_proto, TensorProto};
use crate::wire::{Severity, TensorSpans};
use bytes::Bytes;
use std::collections::BTreeMap;

/// Most dimensions of a tensor described: numpy's `NPY_MAXDIMS`.
pub const MAX_RANK: usize = 64;

/// Why an initializer was not located; `severity` when it is a finding too.
#[derive(Debug)]
pub(super) struct Problem {
    pub(super) severity: Option<Severity>,
    /// Sound but outside socair's model of the file (not carried by a conversion).
    pub(super) outside_model: bool,
    /// The kind it is counted under when there are many.
    pub(super) kind: &'static str,
    pub(super) reason: String,
}

pub(super) fn problem(severity: Option<Severity>, reason: impl Into<String>) -> Problem {
    Problem {
        severity,
        outside_model: false,
        kind: match severity {
            Some(Severity::Fail) => "initializers refused",
            Some(Severity::Lead) => "initializers not proved",
            None => "initializers with no byte range",
        },
        reason: reason.into(),
    }
}

pub(super) fn fail(reason: impl Into<String>) -> Problem {
    problem(Some(Severity::Fail), reason)
}

/// Locates one main-graph initializer, or the tensor of a Constant's `value`. The outer error is an internal inconsistency.
pub(super) fn describe(
    t: &TensorProto,
    spans: &TensorSpans,
    base: &Bytes,
) -> Result<Result<Tensor, Problem>, OnnxError> {
    let code = t.data_type.unwrap_or(0);
    let Some((onnx_name, element)) = data_type(code) else {
        return Ok(Err(problem(
            Some(Severity::Lead),
            format!("data_type {code} is not defined in onnx.proto 1.23"),
        )));
    };
    if code == 0 {
        return Ok(Err(fail("data_type is UNDEFINED (or missing)")));
    }
    let (shape, count) = match checked_shape(t) {
        Ok(shape) => shape,
        Err(problem) => return Ok(Err(problem)),
    };
    let (external, sources) = match value_fields(t) {
        Ok(fields) => fields,
        Err(problem) => return Ok(Err(problem)),
    };
    let Some((element, width)) = element else {
        return Ok(Err(problem(
            None,
            format!("{onnx_name} has no fixed-width element type in socair's vocabulary"),
        )));
    };
    let Some(size) = count.checked_mul(width) else {
        return Ok(Err(fail("its size in bytes overflows 64 bits")));
    };
    let typed = Typed {
        t,
        code,
        onnx_name,
        element,
        shape,
        count,
        size,
    };
    if external {
        return Ok(external_tensor(t, size)
            .map(|(file, offset)| typed.tensor(vec![(offset, size)], Some(file))));
    }
    match sources.first().copied() {
        None if count == 0 => Ok(Ok(typed.tensor(empty(), None))),
        None => Ok(Err(fail(format!(
            "it holds no values for its {count} elements"
        )))),
        Some("raw_data") => typed.raw_data(spans, base),
        Some(field @ ("float_data" | "double_data")) => typed.float_data(field, spans),
        Some(field) => Ok(typed.varint_data(field)),
    }
}

/// Zero elements: one empty range, so that every descriptor has one.
fn empty() -> Vec<(u64, u64)> {
    vec![(0u64, 0u64)]
}

/// The tensor's shape and element count, checked.
fn checked_shape(t: &TensorProto) -> Result<(Vec<u64>, u64), Problem> {
    if t.dims.len() > MAX_RANK {
        return Err(problem(
            Some(Severity::Lead),
            format!(
                "it has {} dimensions; numpy (NPY_MAXDIMS, which onnx.numpy_helper goes through) holds at most {MAX_RANK}",
                t.dims.len()
            ),
        ));
    }
    let mut shape = Vec::with_capacity(t.dims.len());
    let mut count = 1u64;
    for (k, &d) in t.dims.iter().enumerate() {
        let Ok(d) = u64::try_from(d) else {
            return Err(fail(format!("dims[{k}] is {d}, negative")));
        };
        count = match count.checked_mul(d) {
            Some(c) => c,
            None => return Err(fail("its dims overflow 64 bits")),
        };
        shape.push(d);
    }
    Ok((shape, count))
}

/// Whether the values are external, and the fields of the file that hold them: at most one,
/// and none for an external tensor, so that no two readers take different values; a segment
/// of a larger tensor is not assembled.
fn value_fields(t: &TensorProto) -> Result<(bool, Vec<&'static str>), Problem> {
    let location = t.data_location.unwrap_or(0);
    if location != tensor_proto::DataLocation::Default as i32
        && location != tensor_proto::DataLocation::External as i32
    {
        return Err(fail(format!(
            "data_location {location} is neither DEFAULT (0) nor EXTERNAL (1)"
        )));
    }
    let external = location == tensor_proto::DataLocation::External as i32;
    let sources: Vec<&str> = [
        ("raw_data", t.raw_data.is_some()),
        ("float_data", !t.float_data.is_empty()),
        ("int32_data", !t.int32_data.is_empty()),
        ("string_data", !t.string_data.is_empty()),
        ("int64_data", !t.int64_data.is_empty()),
        ("double_data", !t.double_data.is_empty()),
        ("uint64_data", !t.uint64_data.is_empty()),
    ]
    .into_iter()
    .filter(|(_, present)| *present)
    .map(|(name, _)| name)
    .collect();
    if sources.len() > 1 {
        return Err(fail(format!(
            "its values are in more than one field ({}): readers may take either",
            sources.join(", ")
        )));
    }
    if external && !sources.is_empty() {
        return Err(fail(format!(
            "data_location is EXTERNAL but it also holds {} in the file: readers may take either",
            sources[0]
        )));
    }
    if !external && !t.external_data.is_empty() {
        return Err(fail(
            "it has external_data entries but data_location is not EXTERNAL: readers may take either",
        ));
    }
    if let Some(seg) = &t.segment {
        return Err(problem(
            Some(Severity::Lead),
            format!(
                "it holds only the segment {}..{} of a larger tensor; segments are not assembled",
                seg.begin.unwrap_or(0),
                seg.end.unwrap_or(0)
            ),
        ));
    }
    Ok((external, sources))
}

/// A tensor whose type and shape are checked, before its values are found.
struct Typed<'t> {
    t: &'t TensorProto,
    /// Its `data_type`.
    code: i32,
    /// The name onnx.proto gives its data type.
    onnx_name: &'static str,
    /// Its element type in socair's names.
    element: &'static str,
    shape: Vec<u64>,
    count: u64,
    /// Its size in bytes.
    size: u64,
}

impl Typed<'_> {
    /// The tensor over byte ranges of `file` (of the model itself when `None`).
    fn tensor(&self, ranges: Vec<(u64, u64)>, file: Option<String>) -> Tensor {
        Tensor {
            name: self.t.name.clone().unwrap_or_default(),
            dtype: self.element,
            shape: self.shape.clone(),
            ranges,
            file,
            inline: None,
        }
    }

    /// The tensor over bytes decoded from the numbers the file holds.
    fn decoded(&self, bytes: Vec<u8>) -> Tensor {
        Tensor {
            name: self.t.name.clone().unwrap_or_default(),
            dtype: self.element,
            shape: self.shape.clone(),
            ranges: Vec::new(),
            file: None,
            inline: Some(bytes),
        }
    }

    /// Values in `raw_data`: the range of the file that holds them.
    fn raw_data(
        &self,
        spans: &TensorSpans,
        base: &Bytes,
    ) -> Result<Result<Tensor, Problem>, OnnxError> {
        let (count, size, onnx_name) = (self.count, self.size, self.onnx_name);
        let raw = self.t.raw_data.as_ref().map_or(&[][..], |r| &r[..]);
        let raw_len = raw.len() as u64;
        if raw_len != size {
            return Ok(Err(fail(format!(
                "raw_data holds {raw_len} bytes but {count} elements of {onnx_name} need {size}"
            ))));
        }
        // The zero-copy slice's place in the file, cross-checked with the wire walk.
        let walked = spans
            .raw_data
            .ok_or_else(|| OnnxError::Inconsistent("raw_data decoded but not walked".into()))?;
        if raw_len > 0 {
            let offset = (raw.as_ptr() as usize)
                .checked_sub(base.as_ptr() as usize)
                .filter(|o| o.checked_add(raw.len()).is_some_and(|e| e <= base.len()))
                .ok_or_else(|| {
                    OnnxError::Inconsistent("raw_data is not a slice of the file".into())
                })? as u64;
            if (offset, raw_len) != walked {
                return Err(OnnxError::Inconsistent(format!(
                    "raw_data decoded at {offset}+{raw_len}, walked at {}+{}",
                    walked.0, walked.1
                )));
            }
        }
        Ok(Ok(self.tensor(vec![walked], None)))
    }

    /// Values in `float_data` or `double_data`: the ranges of the packed values, or their bits
    /// when no range holds them alone.
    fn float_data(
        &self,
        field: &str,
        spans: &TensorSpans,
    ) -> Result<Result<Tensor, Problem>, OnnxError> {
        let (t, count, size, onnx_name) = (self.t, self.count, self.size, self.onnx_name);
        let (allowed, values, packed) = if field == "float_data" {
            (
                &[1, 14][..],
                t.float_data.len() as u64 * 4,
                &spans.float_data,
            )
        } else {
            (
                &[11, 15][..],
                t.double_data.len() as u64 * 8,
                &spans.double_data,
            )
        };
        if !allowed.contains(&self.code) {
            return Ok(Err(fail(format!(
                "{field} holds the values of a {onnx_name} tensor"
            ))));
        }
        if values != size {
            return Ok(Err(fail(format!(
                "{field} holds {values} bytes but {count} elements of {onnx_name} need {size}"
            ))));
        }
        if spans.unpacked {
            // A tag before some values: no byte range holds the values alone, so their
            // own bits are the tensor's bytes (COMPLEX64: real, imaginary, as numpy views
            // the float32 pairs).
            return Ok(Ok(self.decoded(if field == "float_data" {
                decode::floats(&t.float_data)
            } else {
                decode::doubles(&t.double_data)
            })));
        }
        let walked: u64 = packed.iter().map(|s| s.1).sum();
        if walked != values {
            return Err(OnnxError::Inconsistent(format!(
                "{field}: {values} bytes decoded, {walked} walked"
            )));
        }
        let ranges: Vec<(u64, u64)> = packed.iter().copied().filter(|s| s.1 > 0).collect();
        Ok(Ok(self.tensor(
            if ranges.is_empty() { empty() } else { ranges },
            None,
        )))
    }

    /// Values in `int32_data`, `int64_data`, `uint64_data` or `string_data`.
    fn varint_data(&self, field: &str) -> Result<Tensor, Problem> {
        let (t, code, count, onnx_name) = (self.t, self.code, self.count, self.onnx_name);
        let allowed: &[i32] = match field {
            "int32_data" => INT32_DATA_TYPES,
            "int64_data" => &[7],
            "uint64_data" => &[12, 13],
            _ => &[8],
        };
        if !allowed.contains(&code) {
            return Err(fail(format!(
                "{field} holds the values of a {onnx_name} tensor"
            )));
        }
        // Varint-coded: decoded to the bytes `onnx.numpy_helper.to_array` returns, or
        // refused where readers disagree on them (see `decode`).
        let bytes = match field {
            "int32_data" => decode::int32_data(code, onnx_name, &t.int32_data, count),
            "int64_data" => decode::int64_data(onnx_name, &t.int64_data, count),
            "uint64_data" => decode::uint64_data(code, onnx_name, &t.uint64_data, count),
            _ => {
                return Err(problem(
                    None,
                    format!("{onnx_name} values in {field} have no fixed width"),
                ))
            }
        };
        match bytes {
            Ok(bytes) => Ok(self.decoded(bytes)),
            Err(decode::Refused(why)) => Err(fail(why)),
        }
    }
}

/// The external data file and offset of an `EXTERNAL` tensor of `size` bytes.
fn external_tensor(t: &TensorProto, size: u64) -> Result<(String, u64), Problem> {
    let mut entries: BTreeMap<&str, &str> = BTreeMap::new();
    for e in &t.external_data {
        let key = e.key.as_deref().unwrap_or("");
        if entries
            .insert(key, e.value.as_deref().unwrap_or(""))
            .is_some()
        {
            return Err(fail(format!(
                "external_data names key {key:?} twice: readers may take either"
            )));
        }
        if !["location", "offset", "length", "checksum"].contains(&key) {
            return Err(problem(
                Some(Severity::Lead),
                format!("external_data has the key {key:?}, which ONNX does not define"),
            ));
        }
    }
    let location = entries
        .get("location")
        .ok_or_else(|| fail("data_location is EXTERNAL but external_data has no location"))?;
    check_location(location)
        .map_err(|why| fail(format!("external data location {location:?} {why}")))?;
    let number = |key: &str| -> Result<Option<u64>, Problem> {
        let Some(v) = entries.get(key) else {
            return Ok(None);
        };
        if v.is_empty() || v.len() > 20 || !v.bytes().all(|b| b.is_ascii_digit()) {
            return Err(fail(format!(
                "external_data {key} {v:?} is not a decimal byte count"
            )));
        }
        v.parse::<u64>()
            .map(Some)
            .map_err(|_| fail(format!("external_data {key} {v:?} does not fit 64 bits")))
    };
    let offset = number("offset")?.unwrap_or(0);
    if let Some(length) = number("length")? {
        if length != size {
            return Err(fail(format!(
                "external_data length {length} but its shape and type need {size} bytes"
            )));
        }
    }
    if offset.checked_add(size).is_none() {
        return Err(fail(format!(
            "external_data offset {offset} + {size} bytes overflows"
        )));
    }
    Ok(((*location).to_owned(), offset))
}

/// A location must be a plain relative path inside the model's directory: `/`-separated
/// names, none empty, `.` or `..`, no backslash, no NUL, not absolute.
pub fn check_location(location: &str) -> Result<(), &'static str> {
    if location.is_empty() {
        return Err("is empty");
    }
    if location.starts_with('/') {
        return Err("is absolute: it must be relative to the model's directory");
    }
    if location.contains('\\') {
        return Err("holds a backslash: it must be a `/`-separated relative path");
    }
    if location.contains('\0') {
        return Err("holds a NUL byte");
    }
    if location.len() >= 2
        && location.as_bytes()[1] == b':'
        && location.as_bytes()[0].is_ascii_alphabetic()
    {
        return Err("starts with a drive letter: it must be relative to the model's directory");
    }
    if location.contains('*') {
        // ONNX Runtime reads `*/_ORT_MEM_ADDR_/*` as "offset is a memory address".
        return Err("holds a `*` (ONNX Runtime's in-memory tag `*/_ORT_MEM_ADDR_/*` makes the offset a pointer)");
    }
    for part in location.split('/') {
        match part {
            ".." => return Err("has a `..` component: it must not leave the model's directory"),
            "" | "." => {
                return Err("has an empty or `.` component: it must be a plain relative path")
            }
            _ => {}
        }
    }
    Ok(())
}
