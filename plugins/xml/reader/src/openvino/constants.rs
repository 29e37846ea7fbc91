//! `Const` layers: where their bytes lie in the weights file beside the IR, read as
//! `XmlDeserializer::set_constant_num_buffer` reads them (openvino 2026.4.1,
//! src/core/xml_util/src/xml_deserialize_util.cpp): the `<data>` child's `element_type` (a
//! name `ov::element::Type` accepts), `shape` (comma-separated dimensions), `offset` and `size`
//! (`pugixml::get_uint64_attr`: `std::stoll` over the whole value, not negative); the bytes are
//! `weights[offset .. offset + size]`, refused when they pass the weights' end ("Incorrect
//! weights in bin file!") or when `size` is less than the shape and type need
//! (`(shape_size x bitwidth + 7) >> 3`, "Attribute and shape size are inconsistent"). A string
//! constant's bytes are its packed layout (a count, offsets, characters), read whole.
//!
//! The weights file is the IR's own name with its last extension replaced by `.bin`
//! (`FrontEnd::load_impl` in src/frontends/ir/src/frontend.cpp, when only the model's path is
//! given): each tensor names it as `{stem}.bin`, which the host resolves beside the file and
//! checks each range against.

use super::tables::{ElementType, ELEMENT_TYPES};
use crate::xml::tree::Tree;
use abi_stable::std_types::{ROption, RString, RVec};
use socair_plugin_api::{ByteOrder, ByteRange, TensorDescriptor};
use socair_plugin_kit::model::Severity;
use socair_plugin_kit::reading::Reading;

/// The finding kind of constants.
pub const KIND: &str = "constant findings";
/// The unread kind of constants.
const UNREAD: &str = "constants not located";

/// The weights file, as a tensor descriptor names it (the host replaces `{stem}`).
pub const WEIGHTS_FILE: &str = "{stem}.bin";

/// A number as `pugixml::get_uint64_attr` reads it (openvino's xml_parse_utils.cpp):
/// `std::stoll` in base 10 consuming the whole value (leading whitespace and a sign allowed),
/// then not negative. `Ok((value, canonical))`, canonical when the value is plain digits.
pub fn uint64_attr(value: &str) -> Result<(u64, bool), String> {
    let body = value.trim_start_matches([' ', '\t', '\n', '\x0B', '\x0C', '\r']);
    let (negative, digits) = match body.as_bytes().first() {
        Some(b'+') => (false, &body[1..]),
        Some(b'-') => (true, &body[1..]),
        _ => (false, body),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{value:?} is not a decimal number"));
    }
    let n: i64 = digits
        .parse()
        .map_err(|_| format!("{value:?} is larger than a signed 64-bit number"))?;
    if negative && n != 0 {
        return Err(format!("{value:?} is negative"));
    }
    let canonical = body.len() == value.len() && !negative && digits.len() == body.len();
    Ok((
        n as u64,
        canonical && !(digits.len() > 1 && digits.starts_with('0')),
    ))
}

/// The dimensions of a `shape` attribute, as plain decimal numbers separated by commas (spaces
/// around each allowed): what OpenVINO (`str_to_container`, `std::getline` on `,` then
/// `operator>>`) and every other reader read alike. An empty value is a scalar.
pub fn shape(value: &str) -> Result<Vec<u64>, String> {
    if value.is_empty() {
        return Ok(Vec::new());
    }
    value
        .split(',')
        .map(|field| {
            let digits = field.trim_matches([' ', '\t', '\n', '\r']);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "the shape {value:?} has the dimension {field:?}, which is not a decimal number (OpenVINO's stream read takes what digits it starts with, or refuses an empty one)"
                ));
            }
            digits
                .parse::<u64>()
                .map_err(|_| format!("the shape {value:?} has a dimension past 64 bits"))
        })
        .collect()
}

/// The element type named `name` (exactly, as `ov::element::Type`'s table matches it).
pub fn element_type(name: &str) -> Option<&'static ElementType> {
    ELEMENT_TYPES.iter().find(|t| t.names.contains(&name))
}

/// One `Const` layer to read.
pub struct Layer<'a> {
    /// The tree.
    pub tree: &'a Tree,
    /// The layer's node.
    pub node: usize,
    /// The tensor's name.
    pub name: String,
    /// Where, for findings.
    pub place: String,
}

/// Reads one `Const` layer: describes its tensor, or says why it cannot be located.
pub fn read(layer: &Layer<'_>, reading: &mut Reading) {
    match locate(layer) {
        Ok((tensor, extra)) => {
            if let Some(reason) = extra {
                reading.note(KIND, Severity::Lead, || layer.place.clone(), || reason);
            }
            reading.describe(tensor);
        }
        Err((severity, reason)) => {
            if let Some(severity) = severity {
                let r = reason.clone();
                reading.note(KIND, severity, || layer.place.clone(), || r);
            }
            reading.unread(
                UNREAD,
                Some(&layer.name),
                format!("{}: {reason}", layer.place),
                false,
            );
        }
    }
}

/// The tensor of a `Const` layer and a note on it, or the severity (none: no finding, only an
/// unread entry) and the reason it is not located.
#[allow(clippy::type_complexity)]
fn locate(
    layer: &Layer<'_>,
) -> Result<(TensorDescriptor, Option<String>), (Option<Severity>, String)> {
    let tree = layer.tree;
    let refuses = |why: String| (Some(Severity::Lead), why);
    let disagree = |why: String| {
        (
            Some(Severity::Fail),
            format!("{why}: readers may disagree on its bytes"),
        )
    };
    let Some(data) = tree.child(layer.node, "data") else {
        return Err(refuses("a Const layer without <data>: OpenVINO 2026.4.1 refuses the model (\"No attrtibutes defined for Const op!\")".into()));
    };
    if tree.attribute(data, "value").is_some() {
        return Err(refuses("its bytes are the text of a `value` attribute, which OpenVINO reads before offset and size and no OpenVINO writer writes: not fingerprinted".into()));
    }
    let Some(type_name) = tree.attribute(data, "element_type") else {
        return Err(refuses(
            "no element_type: OpenVINO sets no data for it (set_constant_num_buffer returns early)"
                .into(),
        ));
    };
    let Some(shape_text) = tree.attribute(data, "shape") else {
        return Err(refuses(
            "no shape: OpenVINO sets no data for it (set_constant_num_buffer returns early)".into(),
        ));
    };
    let number = |key: &str| -> Result<u64, (Option<Severity>, String)> {
        let Some(text) = tree.attribute(data, key) else {
            return Err(refuses(format!(
                "no {key}: OpenVINO refuses the model (a mandatory attribute)"
            )));
        };
        match uint64_attr(text) {
            Ok((n, true)) => Ok(n),
            Ok((n, false)) => Err(disagree(format!("its {key} {text:?} is read as {n} by OpenVINO's std::stoll, but it is not plain digits"))),
            Err(why) => Err(disagree(format!("its {key} {why}: OpenVINO refuses it, other readers may not"))),
        }
    };
    let size = number("size")?;
    let offset = number("offset")?;
    let Some(ty) = element_type(type_name) else {
        return Err(refuses(format!("the element type {type_name:?} is unknown to OpenVINO 2026.4.1, which refuses the model")));
    };
    let dims = shape(shape_text).map_err(disagree)?;
    let count = dims
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            disagree(format!(
                "the shape {shape_text:?} has more elements than 64 bits count"
            ))
        })?;
    let canonical = ty.names.first().copied().unwrap_or(type_name);
    let (len, extra) = if canonical == "string" {
        (size, None)
    } else if ty.bits == 0 {
        return Err(refuses(format!(
            "a constant of element type {type_name:?}, which holds no data OpenVINO reads"
        )));
    } else {
        let needed = (u128::from(count) * u128::from(ty.bits)).div_ceil(8);
        let needed = u64::try_from(needed).map_err(|_| {
            disagree("its shape and type need more bytes than 64 bits count".to_owned())
        })?;
        if size < needed {
            return Err(disagree(format!(
                "its size is {size} bytes, but {count} elements of {canonical} need {needed}: OpenVINO refuses it (\"Attribute and shape size are inconsistent\"), a reader that trusts the shape reads past the constant"
            )));
        }
        let extra = (size > needed).then(|| format!(
            "its size is {size} bytes, {} more than its {count} elements of {canonical} need: OpenVINO reads the first {needed}, the rest of the range is in no tensor",
            size - needed
        ));
        (needed, extra)
    };
    Ok((
        TensorDescriptor {
            name: RString::from(layer.name.as_str()),
            dtype: canonical.into(),
            element_type: ty.socair.map(RString::from).into(),
            shape: RVec::from(dims),
            ranges: RVec::from(vec![ByteRange { offset, len }]),
            byte_order: ByteOrder::Little,
            origin: ROption::RNone,
            strides: ROption::RNone,
            file: ROption::RSome(WEIGHTS_FILE.into()),
            inline: ROption::RNone,
            outside_model: false,
        },
        extra,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_stoll_reads_them() {
        assert_eq!(uint64_attr("48"), Ok((48, true)));
        assert_eq!(uint64_attr("0"), Ok((0, true)));
        assert_eq!(uint64_attr(" 48"), Ok((48, false)));
        assert_eq!(uint64_attr("+48"), Ok((48, false)));
        assert_eq!(uint64_attr("048"), Ok((48, false)));
        assert_eq!(uint64_attr("-0"), Ok((0, false)));
        assert!(uint64_attr("-1").is_err());
        assert!(uint64_attr("48 ").is_err());
        assert!(uint64_attr("0x10").is_err());
        assert!(uint64_attr("").is_err());
        assert!(uint64_attr("9223372036854775808").is_err());
        assert_eq!(
            uint64_attr("9223372036854775807").map(|v| v.0),
            Ok(i64::MAX as u64)
        );
    }

    #[test]
    fn shapes_and_types() {
        assert_eq!(shape(""), Ok(vec![]));
        assert_eq!(shape("4, 3"), Ok(vec![4, 3]));
        assert_eq!(shape("1,4"), Ok(vec![1, 4]));
        for bad in ["4,", ",4", "4,,3", "3x", "-1", "a"] {
            assert!(shape(bad).is_err(), "{bad}");
        }
        assert_eq!(element_type("f32").and_then(|t| t.socair), Some("F32"));
        assert_eq!(element_type("FP16").map(|t| t.names[0]), Some("f16"));
        assert_eq!(
            element_type("u4").map(|t| (t.bits, t.socair)),
            Some((4, None))
        );
        assert!(element_type("F32").is_none());
        assert!(element_type("float32").is_none());
    }
}
