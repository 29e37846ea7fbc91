//! A scan attestation whose subject is the OMS root digest (`socair attest --subject oms`):
//! the digest an OpenSSF model signature of the same model names, so that a policy can join
//! the publisher's signature and socair's scan on one subject.
//!
//! The subject is `{"name": <model>, "digest": {"sha256": <root>}, "annotations":
//! {"digestOf": "https://model_signing/signature/v1.0", "serialization": {...}}}`: the
//! serialization (files, sha256, the ignore paths) says how to compute the root again. The
//! root binds the files' contents in order, not their names; the report inside the
//! attestation keeps socair's own digest of the artifact (`socair.modeldir/v1`, which binds
//! every name and size), and `socair verify` checks both.

use crate::oms::manifest::{root_digest, Method, GIT_PATHS};
use crate::oms::payload::{parse_serialization, serialization_json};
use crate::oms::sign::{files_serialization, hash_model, local, model_name};
use crate::oms::{OmsError, PREDICATE_TYPE};
use crate::read::modeldir::digest_of_path;
use crate::signing::{Statement, Subject, SCAN_PREDICATE};
use std::path::Path;

/// The annotation naming what the subject's digest is of.
pub const DIGEST_OF: &str = "digestOf";

/// The subject naming `model`'s OMS root, computed as `model_signing sign key` computes it
/// with its defaults and `extra_ignore` (`--ignore-paths`) left out too.
pub fn subject(model: &Path, extra_ignore: &[String]) -> Result<Subject, OmsError> {
    let mut ignore: Vec<String> = GIT_PATHS.iter().map(|p| (*p).to_owned()).collect();
    ignore.extend(extra_ignore.iter().cloned());
    ignore.sort();
    ignore.dedup();
    let model = &local(model)?;
    let (_, resources) = hash_model(model, &ignore)?;
    let serialization = files_serialization(ignore);
    Ok(Subject {
        name: model_name(model),
        digest: [("sha256".to_owned(), root_digest(&resources))].into(),
        annotations: Some(serde_json::json!({
            DIGEST_OF: PREDICATE_TYPE,
            "serialization": serialization_json(&serialization),
        })),
    })
}

/// For a statement whose subject is an OMS root: whether `artifact` has that root, and for a
/// scan, whether it is the artifact the report names (socair's digest). Returns what held and
/// what failed, or `None` for a subject of socair's own digest.
pub fn check(statement: &Statement, artifact: &Path) -> Option<(Vec<String>, Vec<String>)> {
    let subject = statement.subject.first()?;
    let annotations = subject.annotations.as_ref()?;
    if annotations.get(DIGEST_OF).and_then(|v| v.as_str()) != Some(PREDICATE_TYPE) {
        return None;
    }
    let (mut held, mut problems) = (Vec::new(), Vec::new());
    let expected = subject.digest.get("sha256").map_or("", String::as_str);
    let serialization = annotations
        .get("serialization")
        .ok_or_else(|| "the subject's annotations hold no serialization".to_owned())
        .and_then(parse_serialization);
    match serialization {
        Err(e) => problems.push(format!("the subject names an OMS root digest, but {e}")),
        Ok(s) if s.method != Method::Files || s.hash_type != "sha256" => problems.push(
            "the subject's OMS root is not of files hashed with sha256, which is all socair computes"
                .into(),
        ),
        Ok(s) => match local(artifact).and_then(|a| hash_model(&a, &s.ignore_paths)) {
            Ok((_, resources)) => {
                let root = root_digest(&resources);
                if root == expected {
                    held.push(format!(
                        "{} has the subject's OMS root digest, {root}",
                        artifact.display()
                    ));
                } else {
                    problems.push(format!(
                        "{}'s OMS root digest is {root}, not the subject {expected}: it is not the model that was attested",
                        artifact.display()
                    ));
                }
            }
            Err(e) => problems.push(e.to_string()),
        },
    }
    if statement.predicate_type == SCAN_PREDICATE {
        let reported = statement
            .predicate
            .get("artifact")
            .and_then(|a| a.get("sha256"))
            .and_then(|s| s.as_str())
            .unwrap_or("");
        match digest_of_path(artifact) {
            Ok(sha) if sha == reported => held.push(format!(
                "{} hashes to the report's digest, {sha}",
                artifact.display()
            )),
            Ok(sha) => problems.push(format!(
                "{} hashes to {sha}, not the report's {reported}: it is not the artifact that was scanned",
                artifact.display()
            )),
            Err(e) => problems.push(format!("{}: {e}", artifact.display())),
        }
    }
    Some((held, problems))
}
