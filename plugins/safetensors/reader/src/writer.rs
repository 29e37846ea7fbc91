//! The safetensors writer: lays out a file exactly as the safetensors serializer (`prepare` in
//! safetensors/src/tensor.rs, 0.8) does, so one input always gives the same bytes.
//!
//! * tensors sorted by dtype, largest in the `Dtype` declaration order first, then by name in
//!   byte order; data packed back to back from offset 0;
//! * compact JSON: `__metadata__` first (only when there is metadata), then each tensor as
//!   `{"dtype":…,"shape":[…],"data_offsets":[b,e]}` in data order;
//! * the header padded with spaces to a multiple of 8 bytes.

use crate::dtype::Dtype;
use crate::header::{LEN_PREFIX, MAX_HEADER_LEN, METADATA_KEY};

/// A tensor to write (its dtype a safetensors name, `F32`, …; its shape outermost first), and
/// the planned file (the 8-byte length and the padded JSON header, each input tensor's
/// absolute offset in data order, the total length): the kit's types, which every writer
/// plans with.
pub use socair_plugin_kit::export::{Plan, WriteTensor};

/// Why a layout cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A dtype safetensors does not have.
    #[error("tensor {name:?}: safetensors has no dtype {dtype:?}")]
    UnknownDtype {
        /// The tensor.
        name: String,
        /// The dtype asked for.
        dtype: String,
    },
    /// Size and shape disagree.
    #[error("tensor {name:?}: {byte_len} bytes do not hold {dtype} {shape:?}")]
    SizeMismatch {
        /// The tensor.
        name: String,
        /// Its dtype.
        dtype: String,
        /// Its shape.
        shape: Vec<u64>,
        /// Bytes given.
        byte_len: u64,
    },
    /// Two tensors with one name, or a tensor named `__metadata__`.
    #[error("tensor name {name:?} {why}")]
    BadName {
        /// The name.
        name: String,
        /// Why it cannot be written.
        why: &'static str,
    },
    /// Two metadata entries with one key.
    #[error("metadata key {key:?} is given twice")]
    DuplicateMetadata {
        /// The key.
        key: String,
    },
    /// The header would exceed the reader's limit.
    #[error("header would be {len} bytes, over the limit of {MAX_HEADER_LEN}")]
    HeaderTooLarge {
        /// Its length.
        len: u64,
    },
    /// The data section would not fit in 64 bits.
    #[error("total size overflows 64 bits")]
    Overflow,
}

/// Plans a safetensors file for `tensors` with `metadata` (written in the order given; empty
/// means no `__metadata__` key, as the serializer writes for `metadata=None`).
pub fn plan(tensors: &[WriteTensor], metadata: &[(String, String)]) -> Result<Plan, PlanError> {
    let mut dtypes = Vec::with_capacity(tensors.len());
    let mut names = std::collections::HashSet::new();
    for t in tensors {
        let dtype = Dtype::from_name(&t.dtype).ok_or_else(|| PlanError::UnknownDtype {
            name: t.name.clone(),
            dtype: t.dtype.clone(),
        })?;
        let elements = t.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        if elements.and_then(|e| dtype.byte_len(e)) != Some(t.byte_len) {
            return Err(PlanError::SizeMismatch {
                name: t.name.clone(),
                dtype: t.dtype.clone(),
                shape: t.shape.clone(),
                byte_len: t.byte_len,
            });
        }
        if t.name == METADATA_KEY {
            return Err(PlanError::BadName {
                name: t.name.clone(),
                why: "is reserved for the metadata map",
            });
        }
        if !names.insert(t.name.as_str()) {
            return Err(PlanError::BadName {
                name: t.name.clone(),
                why: "is given twice",
            });
        }
        dtypes.push(dtype);
    }
    let mut keys = std::collections::HashSet::new();
    for (k, _) in metadata {
        if !keys.insert(k.as_str()) {
            return Err(PlanError::DuplicateMetadata { key: k.clone() });
        }
    }

    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by(|&a, &b| {
        dtypes[b]
            .cmp(&dtypes[a])
            .then_with(|| tensors[a].name.as_bytes().cmp(tensors[b].name.as_bytes()))
    });

    let mut json = String::from("{");
    let mut first = true;
    if !metadata.is_empty() {
        json.push_str(&quote(METADATA_KEY));
        json.push_str(":{");
        for (i, (k, v)) in metadata.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            json.push_str(&quote(k));
            json.push(':');
            json.push_str(&quote(v));
        }
        json.push('}');
        first = false;
    }
    let mut data_offset = 0u64;
    let mut relative = Vec::with_capacity(order.len());
    for &i in &order {
        let t = &tensors[i];
        let end = data_offset
            .checked_add(t.byte_len)
            .ok_or(PlanError::Overflow)?;
        if !first {
            json.push(',');
        }
        first = false;
        json.push_str(&quote(&t.name));
        json.push_str(":{\"dtype\":");
        json.push_str(&quote(&t.dtype));
        json.push_str(",\"shape\":[");
        for (j, d) in t.shape.iter().enumerate() {
            if j > 0 {
                json.push(',');
            }
            json.push_str(&d.to_string());
        }
        json.push_str(&format!("],\"data_offsets\":[{data_offset},{end}]}}"));
        relative.push((i, data_offset));
        data_offset = end;
    }
    json.push('}');

    let mut header_bytes = json.into_bytes();
    let padded = header_bytes.len().next_multiple_of(LEN_PREFIX as usize);
    header_bytes.resize(padded, b' ');
    let header_len = header_bytes.len() as u64;
    if header_len > MAX_HEADER_LEN {
        return Err(PlanError::HeaderTooLarge { len: header_len });
    }
    let data_start = LEN_PREFIX + header_len;
    let total_len = data_start
        .checked_add(data_offset)
        .ok_or(PlanError::Overflow)?;
    let mut header = Vec::with_capacity(data_start as usize);
    header.extend_from_slice(&header_len.to_le_bytes());
    header.extend_from_slice(&header_bytes);
    let placements = relative
        .into_iter()
        .map(|(i, off)| (i, data_start + off))
        .collect();
    Ok(Plan {
        header,
        placements,
        total_len,
    })
}

/// What the writer needs to lay out again the tensors and metadata a parsed header lists:
/// re-planning an accepted file reproduces its layout.
pub fn inputs_of(header: &crate::header::Header) -> (Vec<WriteTensor>, Vec<(String, String)>) {
    let tensors = header
        .tensors
        .iter()
        .map(|t| WriteTensor {
            name: t.name.clone(),
            dtype: t.dtype.name().to_owned(),
            shape: t.shape.clone(),
            byte_len: t.end - t.begin,
        })
        .collect();
    (tensors, header.metadata.clone().unwrap_or_default())
}

/// A JSON string literal as serde_json writes it (only controls, `"` and `\` escaped).
fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("serializing a str cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::parse_header;

    fn t(name: &str, dtype: &str, shape: &[u64], byte_len: u64) -> WriteTensor {
        WriteTensor {
            name: name.into(),
            dtype: dtype.into(),
            shape: shape.to_vec(),
            byte_len,
        }
    }

    fn whole_file(plan: &Plan) -> Vec<u8> {
        let mut bytes = plan.header.clone();
        bytes.resize(plan.total_len as usize, 0);
        bytes
    }

    #[test]
    fn matches_reference_serializer_vectors() {
        // safetensors tensor.rs `test_empty`: no tensors, no metadata.
        let p = plan(&[], &[]).unwrap();
        assert_eq!(p.header, b"\x08\0\0\0\0\0\0\0{}      ");
        // `test_serialization_forced_alignement`.
        let p = plan(&[t("attn0", "F32", &[1, 1, 2, 3], 24)], &[]).unwrap();
        let json = br#"{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       "#;
        assert_eq!(&p.header[8..], json);
        assert_eq!(p.header[..8], 72u64.to_le_bytes());
        // With metadata {"framework":"pt"}: N = 40.
        let p = plan(&[], &[("framework".into(), "pt".into())]).unwrap();
        assert_eq!(
            &p.header[8..],
            br#"{"__metadata__":{"framework":"pt"}}     "#
        );
    }

    #[test]
    fn sorts_by_dtype_descending_then_name_bytes() {
        let tensors = [
            t("b", "F16", &[1], 2),
            t("a", "F16", &[1], 2),
            t("Z", "F32", &[1], 4),
            t("m", "U8", &[3], 3),
            t("x", "I64", &[1], 8),
        ];
        let p = plan(&tensors, &[]).unwrap();
        let order: Vec<&str> = p
            .placements
            .iter()
            .map(|&(i, _)| tensors[i].name.as_str())
            .collect();
        assert_eq!(order, ["x", "Z", "a", "b", "m"]);
        let parsed = parse_header(&whole_file(&p), p.total_len).unwrap();
        assert_eq!(parsed.tensors.len(), 5);
    }

    #[test]
    fn refuses_what_it_cannot_write() {
        assert!(matches!(
            plan(&[t("a", "F32", &[2], 4)], &[]),
            Err(PlanError::SizeMismatch { .. })
        ));
        assert!(matches!(
            plan(&[t("a", "Q4_K", &[2], 4)], &[]),
            Err(PlanError::UnknownDtype { .. })
        ));
        assert!(matches!(
            plan(&[t("a", "U8", &[1], 1), t("a", "U8", &[1], 1)], &[]),
            Err(PlanError::BadName { .. })
        ));
        assert!(matches!(
            plan(&[t("__metadata__", "U8", &[1], 1)], &[]),
            Err(PlanError::BadName { .. })
        ));
        let dup = [
            ("k".to_owned(), "1".to_owned()),
            ("k".to_owned(), "2".to_owned()),
        ];
        assert!(matches!(
            plan(&[], &dup),
            Err(PlanError::DuplicateMetadata { .. })
        ));
    }
}
