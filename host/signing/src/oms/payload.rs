//! The in-toto Statement of an OMS v1.0 signature: built from a manifest, and read back.
//!
//! model_signing 1.1.1 (`_signing/signing.py` `Payload.__init__`) writes one subject, named
//! after the model (the last component of its path) with digest `{"sha256": root}`, and the
//! predicate `{"serialization": {...}, "resources": [{"name", "algorithm", "digest"}...]}`;
//! its key signer serializes it with protobuf's `MessageToJson` (two-space indent). Reading
//! (`dsse_payload_to_manifest`): exactly one subject; the root recomputed over the resources
//! in the order listed must equal the subject's ("Manifest is inconsistent"); the
//! serialization says how to hash the model again. Fields a v1.0 verifier does not know are
//! ignored.

use crate::base::digest::hex;
use crate::oms::manifest::{from_hex, ignore_components, root_digest, Method, Resource};
use crate::oms::{PREDICATE_TYPE, PREDICATE_TYPE_V0_2};
use crate::signing::{no_duplicate_keys, STATEMENT_TYPE};
use serde::Serialize;
use serde_json::Value;

/// The serialization a signature records (`manifest._FileSerialization` and
/// `_ShardSerialization` `serialization_parameters`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Serialization {
    /// Files or shards.
    pub method: Method,
    /// The hash of each resource (`sha256`; model_signing also knows `blake2b`, `blake3`).
    pub hash_type: String,
    /// Whether symbolic links were followed.
    pub allow_symlinks: bool,
    /// The paths left out, relative to the model.
    pub ignore_paths: Vec<String>,
}

/// A signature's payload, read.
#[derive(Debug, Clone)]
pub struct ModelPayload {
    /// The subject's name (informative: renaming the model must not break the signature).
    pub model_name: String,
    /// The subject's sha256: the root digest.
    pub root: String,
    /// How the model was serialized.
    pub serialization: Serialization,
    /// The resources, in the order listed.
    pub resources: Vec<Resource>,
}

#[derive(Serialize)]
struct StatementOut<'a> {
    #[serde(rename = "_type")]
    statement_type: &'a str,
    subject: [SubjectOut<'a>; 1],
    #[serde(rename = "predicateType")]
    predicate_type: &'a str,
    predicate: PredicateOut<'a>,
}

#[derive(Serialize)]
struct SubjectOut<'a> {
    name: &'a str,
    digest: RootOut<'a>,
}

#[derive(Serialize)]
struct RootOut<'a> {
    sha256: &'a str,
}

#[derive(Serialize)]
struct PredicateOut<'a> {
    serialization: SerializationOut<'a>,
    resources: Vec<ResourceOut<'a>>,
}

#[derive(Serialize)]
struct SerializationOut<'a> {
    method: &'a str,
    hash_type: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard_size: Option<u64>,
    allow_symlinks: bool,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    ignore_paths: &'a [String],
}

#[derive(Serialize)]
struct ResourceOut<'a> {
    name: &'a str,
    algorithm: &'a str,
    digest: String,
}

/// The serialization object as the predicate holds it.
pub fn serialization_json(s: &Serialization) -> Value {
    serde_json::to_value(serialization_out(s)).expect("plain data")
}

fn serialization_out(s: &Serialization) -> SerializationOut<'_> {
    SerializationOut {
        method: match s.method {
            Method::Files => "files",
            Method::Shards(_) => "shards",
        },
        hash_type: &s.hash_type,
        shard_size: match s.method {
            Method::Files => None,
            Method::Shards(n) => Some(n),
        },
        allow_symlinks: s.allow_symlinks,
        ignore_paths: &s.ignore_paths,
    }
}

/// The statement's bytes for a model named `model_name` whose sorted resources are
/// `resources`, and the root digest (hex). Pretty JSON with a two-space indent, the layout of
/// protobuf's `MessageToJson` that model_signing signs.
pub fn build(
    model_name: &str,
    serialization: &Serialization,
    resources: &[Resource],
) -> (Vec<u8>, String) {
    let root = root_digest(resources);
    let statement = StatementOut {
        statement_type: STATEMENT_TYPE,
        subject: [SubjectOut {
            name: model_name,
            digest: RootOut { sha256: &root },
        }],
        predicate_type: PREDICATE_TYPE,
        predicate: PredicateOut {
            serialization: serialization_out(serialization),
            resources: resources
                .iter()
                .map(|r| ResourceOut {
                    name: &r.name,
                    algorithm: &r.algorithm,
                    digest: hex(&r.digest),
                })
                .collect(),
        },
    };
    let bytes = serde_json::to_vec_pretty(&statement).expect("plain data");
    (bytes, root)
}

fn field<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or_else(|| format!("{at} has no {key:?}"))
}

fn string<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a str, String> {
    field(v, key, at)?
        .as_str()
        .ok_or_else(|| format!("{at}.{key} is not a string"))
}

/// Reads the serialization object of a predicate (`SerializationType.from_args`).
pub fn parse_serialization(s: &Value) -> Result<Serialization, String> {
    let at = "predicate.serialization";
    let method = match string(s, "method", at)? {
        "files" => Method::Files,
        "shards" => {
            // protobuf's JSON writes the number as a double (`2.0`): an integral, positive
            // value is what model_signing's sharder takes.
            let n = field(s, "shard_size", at)?;
            let size = n
                .as_u64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f < 9.007_199_254_740_992e15)
                        .map(|f| f as u64)
                })
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{at}.shard_size is not a positive whole number: {n}"))?;
            Method::Shards(size)
        }
        other => {
            return Err(format!(
                "{at}.method {other:?} is neither \"files\" nor \"shards\""
            ))
        }
    };
    let hash_type = string(s, "hash_type", at)?.to_owned();
    let allow_symlinks = field(s, "allow_symlinks", at)?
        .as_bool()
        .ok_or_else(|| format!("{at}.allow_symlinks is not true or false"))?;
    let ignore_paths = match s.get("ignore_paths") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|p| {
                p.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{at}.ignore_paths holds a value that is not a string"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("{at}.ignore_paths is not a list")),
    };
    Ok(Serialization {
        method,
        hash_type,
        allow_symlinks,
        ignore_paths,
    })
}

/// Whether `name` is a resource name model_signing writes for `method`: a relative POSIX
/// path in its canonical form (no empty, `.` or `..` component; `.` alone for a one-file
/// model), and for shards `:start:end` in plain decimal with start < end.
fn check_name(name: &str, method: Method) -> Result<(), String> {
    let path = match method {
        Method::Files => name,
        Method::Shards(size) => {
            let parts: Vec<&str> = name.split(':').collect();
            let [path, start, end] = parts[..] else {
                return Err(format!("the shard name {name:?} is not path:start:end"));
            };
            let number = |s: &str| {
                (!s.is_empty()
                    && s.bytes().all(|b| b.is_ascii_digit())
                    && (s == "0" || !s.starts_with('0')))
                .then(|| s.parse::<u64>().ok())
                .flatten()
            };
            match (number(start), number(end)) {
                (Some(s), Some(e)) if s < e && e - s <= size => {}
                _ => return Err(format!("the shard name {name:?} has no valid start:end")),
            }
            path
        }
    };
    let canonical = path == "."
        || (!path.is_empty()
            && !path.starts_with('/')
            && path
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != ".."));
    if canonical {
        Ok(())
    } else {
        Err(format!(
            "the resource name {name:?} is not a path relative to the model in the form model_signing writes"
        ))
    }
}

/// Reads a verified payload as an OMS v1.0 statement, and checks that its resources hash to
/// its root digest.
pub fn parse(payload: &[u8]) -> Result<ModelPayload, String> {
    no_duplicate_keys(payload).map_err(|e| format!("the payload is not an OMS statement: {e}"))?;
    let v: Value =
        serde_json::from_slice(payload).map_err(|e| format!("the payload is not JSON: {e}"))?;
    let t = string(&v, "_type", "the statement")?;
    if t != STATEMENT_TYPE {
        return Err(format!(
            "statement _type {t:?}, expected {STATEMENT_TYPE:?}"
        ));
    }
    match string(&v, "predicateType", "the statement")? {
        PREDICATE_TYPE => {}
        PREDICATE_TYPE_V0_2 => {
            return Err(format!(
                "a model_signing 0.2 signature (predicate {PREDICATE_TYPE_V0_2}): socair reads v1.0 signatures; sign the model again with model_signing 1.x"
            ))
        }
        other => {
            return Err(format!(
                "predicate type {other:?}, expected {PREDICATE_TYPE:?}"
            ))
        }
    }
    let subjects = field(&v, "subject", "the statement")?
        .as_array()
        .ok_or("the statement's subject is not a list")?;
    let [subject] = subjects.as_slice() else {
        return Err(format!(
            "the statement has {} subjects; an OMS signature has exactly one",
            subjects.len()
        ));
    };
    let model_name = string(subject, "name", "the subject")?.to_owned();
    let root = string(
        field(subject, "digest", "the subject")?,
        "sha256",
        "the subject's digest",
    )?
    .to_owned();
    let predicate = field(&v, "predicate", "the statement")?;
    let serialization = parse_serialization(field(predicate, "serialization", "the predicate")?)?;
    let items = field(predicate, "resources", "the predicate")?
        .as_array()
        .ok_or("predicate.resources is not a list")?;
    let mut resources = Vec::with_capacity(items.len());
    let mut seen = std::collections::HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("predicate.resources[{i}]");
        let name = string(item, "name", &at)?.to_owned();
        let algorithm = string(item, "algorithm", &at)?.to_owned();
        let digest_hex = string(item, "digest", &at)?;
        let digest = from_hex(digest_hex).ok_or_else(|| format!("{at}.digest is not hex"))?;
        check_name(&name, serialization.method)?;
        if !seen.insert(name.clone()) {
            return Err(format!(
                "the resource {name:?} is listed twice: readers disagree on which digest counts"
            ));
        }
        resources.push(Resource {
            name,
            algorithm,
            digest,
        });
    }
    let computed = root_digest(&resources);
    if computed != root {
        return Err(format!(
            "the manifest is inconsistent: the subject's root digest is {root}, but the resources hash to {computed}"
        ));
    }
    if serialization
        .ignore_paths
        .iter()
        .any(|p| ignore_components(p).is_some_and(|c| c.is_empty()))
    {
        return Err(
            "the signature's ignore paths cover the whole model (\".\"): it vouches for no file"
                .into(),
        );
    }
    Ok(ModelPayload {
        model_name,
        root: computed,
        serialization,
        resources,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serialization() -> Serialization {
        Serialization {
            method: Method::Files,
            hash_type: "sha256".into(),
            allow_symlinks: false,
            ignore_paths: vec![".git".into(), "model.sig".into()],
        }
    }

    #[test]
    fn built_payloads_read_back() {
        let resources = vec![
            Resource {
                name: "a/c".into(),
                algorithm: "sha256".into(),
                digest: vec![1; 32],
            },
            Resource {
                name: "a.b".into(),
                algorithm: "sha256".into(),
                digest: vec![2; 32],
            },
        ];
        let (bytes, root) = build("m", &serialization(), &resources);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.starts_with("{\n  \"_type\": \"https://in-toto.io/Statement/v1\",\n  \"subject\": [\n    {\n      \"name\": \"m\","));
        let p = parse(&bytes).unwrap();
        assert_eq!(p.root, root);
        assert_eq!(p.model_name, "m");
        assert_eq!(p.resources, resources);
        assert_eq!(p.serialization, serialization());
    }

    #[test]
    fn inconsistent_and_malformed_payloads_are_refused() {
        let resources = vec![Resource {
            name: "w.bin".into(),
            algorithm: "sha256".into(),
            digest: vec![1; 32],
        }];
        let (bytes, root) = build("m", &serialization(), &resources);
        let text = String::from_utf8(bytes).unwrap();
        // Another root: inconsistent.
        let other = text.replace(&root, &"0".repeat(64));
        assert!(parse(other.as_bytes())
            .unwrap_err()
            .contains("inconsistent"));
        // Names model_signing never writes.
        for bad in ["../w.bin", "/w.bin", "a//w.bin", "./w.bin", ""] {
            let t = text.replace("\"w.bin\"", &format!("{bad:?}"));
            assert!(
                parse(t.as_bytes()).unwrap_err().contains("resource name"),
                "{bad}"
            );
        }
        // A whole-model ignore path vouches for nothing.
        let t = text.replace("\"model.sig\"", "\".\"");
        assert!(parse(t.as_bytes()).unwrap_err().contains("whole model"));
        // model_signing 0.2's predicate is named.
        let t = text.replace(PREDICATE_TYPE, PREDICATE_TYPE_V0_2);
        assert!(parse(t.as_bytes()).unwrap_err().contains("0.2"));
    }

    #[test]
    fn shard_sizes_written_as_doubles_are_read() {
        let s: Value = serde_json::from_str(
            r#"{"method":"shards","hash_type":"sha256","allow_symlinks":false,"shard_size":2.0}"#,
        )
        .unwrap();
        assert_eq!(parse_serialization(&s).unwrap().method, Method::Shards(2));
        for bad in ["2.5", "0", "-4", "\"2\""] {
            let t = format!(
                r#"{{"method":"shards","hash_type":"sha256","allow_symlinks":false,"shard_size":{bad}}}"#
            );
            assert!(parse_serialization(&serde_json::from_str(&t).unwrap()).is_err());
        }
        assert!(check_name("a:0:2", Method::Shards(2)).is_ok());
        for bad in ["a:0:3", "a:02:4", "a:2:2", "a:b:0:2", "a:0"] {
            assert!(check_name(bad, Method::Shards(2)).is_err(), "{bad}");
        }
    }
}
