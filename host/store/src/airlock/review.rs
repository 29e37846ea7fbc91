//! Reviews of pickle globals, inside the airlock: `socair airlock review add CLASS --reason R
//! --key K` signs, with a key of role `accept`, that a person reviewed the global CLASS
//! (`module.name`, such as `argparse.Namespace`) and found that loading it runs no code and
//! does no I/O. `airlock scan` hands every valid review to the pickle readers, which then accept
//! that global instead of making it a LEAD; the attestation names the classes it treated as
//! reviewed (`scope.reviewed_classes`), and the gate refuses an attestation that names a class
//! no valid review in the store covers.
//!
//! A global that runs code can never be reviewed: before a review is signed, the pickle readers
//! judge a probe pickle that calls CLASS with CLASS listed as reviewed, and a FAIL refuses the
//! review. (They refuse dangerous globals on every scan too; the probe makes the refusal clear
//! at the moment a person asks.)

use crate::airlock::clock;
use crate::airlock::error::StoreError;
use crate::airlock::log::LogEntry;
use crate::airlock::policy::Policy;
use crate::airlock::signing::{self, Statement};
use crate::airlock::store::Store;
use crate::base::digest::hex;
use crate::base::output;
use crate::read::plugins::PluginSet;
use crate::read::source::MemoryBytes;
use crate::report::document::Report;
use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use socair_plugin_api::{
    abi_stable::{sabi_trait::TD_Opaque, sabi_types::RRef, std_types::RString},
    ByteSource_TO, ReadOptions, RowStatus,
};

/// The store's directory of reviews, `<sha256 of the envelope>.dsse.json` each.
pub const REVIEWS: &str = "reviews";

/// The predicate of a review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewPredicate {
    /// The global, `module.name`.
    pub class: String,
    /// Why it is safe to load.
    pub reason: String,
    /// The reviewer's key id.
    pub signer: String,
    /// When.
    pub time: String,
    /// Until when, if it expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
}

/// A valid review in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// Its id: the sha256 of its envelope.
    pub id: String,
    /// What it says.
    pub predicate: ReviewPredicate,
}

/// Whether `class` is a name a review can cover: `module.name`, nothing else.
fn check_class(class: &str) -> Result<(), StoreError> {
    let ok = class.contains('.')
        && !class.starts_with('.')
        && !class.ends_with('.')
        && !class.contains("..")
        && class
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(StoreError::Unusable(format!(
            "{class:?} is not a global (`module.name`, such as argparse.Namespace)"
        )))
    }
}

/// A protocol-2 pickle that calls `class` with no arguments: what the pickle readers judge.
fn probe(class: &str) -> Vec<u8> {
    let (module, name) = class.rsplit_once('.').expect("checked: module.name");
    let mut p = vec![0x80, 2, b'c'];
    p.extend_from_slice(module.as_bytes());
    p.push(b'\n');
    p.extend_from_slice(name.as_bytes());
    p.extend_from_slice(b"\n)R.");
    p
}

/// Refuses a review of a global the pickle readers judge to run code: a probe pickle calling
/// it, read with it listed as reviewed, must not FAIL.
fn check_not_dangerous(class: &str, plugins: &PluginSet) -> Result<(), StoreError> {
    let bytes = MemoryBytes(probe(class));
    let mut judged = false;
    for (plugin, reader) in plugins.readers() {
        let head = &bytes.0[..];
        if !reader.detect(head.into(), bytes.0.len() as u64) {
            continue;
        }
        let source = ByteSource_TO::from_ptr(RRef::new(&bytes), TD_Opaque);
        let options = ReadOptions {
            rules: Default::default(),
            header_only: false,
            reviewed_globals: vec![RString::from(class)].into(),
        };
        let Ok(opened) = reader.open(source, options).into_result() else {
            continue;
        };
        judged = true;
        for row in opened.rows.iter().filter(|r| r.status == RowStatus::Fail) {
            if let Some(f) = row.findings.iter().find(|f| f.reason.contains(class)) {
                return Err(StoreError::Refused(format!(
                    "{class} runs code or does I/O when a pickle is loaded, so it can never be reviewed (plugin {}: {})",
                    plugin.manifest.name,
                    crate::report::document::RowFinding::of(f, row.names_severities).reason_text()
                )));
            }
        }
    }
    if judged {
        Ok(())
    } else {
        Err(StoreError::Unusable(
            "no loaded plugin reads pickles, so nothing can judge whether this global runs code"
                .into(),
        ))
    }
}

/// `socair airlock review add`: signs and stores a review of `class`, and logs it. Returns its
/// id.
pub fn add(
    store: &Store,
    class: &str,
    reason: &str,
    key: &SigningKey,
    expires: Option<String>,
    plugins: &PluginSet,
) -> Result<String, StoreError> {
    let keyid = signing::keyid(&key.verifying_key());
    let result = (|| -> Result<String, StoreError> {
        check_class(class)?;
        let policy = store.policy()?;
        if !policy
            .roles_of(&keyid)
            .is_some_and(|r| r.iter().any(|r| r == "accept"))
        {
            return Err(StoreError::Refused(format!(
                "key {keyid} is not in the store's trust policy with role `accept`"
            )));
        }
        check_not_dangerous(class, plugins)?;
        let predicate = ReviewPredicate {
            class: class.to_owned(),
            reason: reason.to_owned(),
            signer: keyid.clone(),
            time: clock::format(clock::now()),
            expires: expires.clone(),
        };
        let statement = Statement::new(
            class,
            &hex(&Sha256::digest(class.as_bytes())),
            signing::REVIEW_PREDICATE,
            serde_json::to_value(&predicate).expect("plain data"),
        );
        let envelope = output::to_json_bytes(&signing::sign(
            &serde_json::to_vec(&statement).expect("plain data"),
            key,
        ));
        let id = hex(&Sha256::digest(&envelope));
        store.put_review(REVIEWS, &format!("{id}.dsse.json"), &envelope)?;
        Ok(id)
    })();
    let mut e = LogEntry::new("review", if result.is_ok() { "ok" } else { "refused" });
    e.key = Some(keyid);
    e.name = Some(class.to_owned());
    e.detail = Some(match &result {
        Ok(id) => format!("reviewed {class} (review {id}): {reason}"),
        Err(err) => err.to_string(),
    });
    store.append(e)?;
    result
}

/// `socair airlock review remove`: withdraws a review (by its id, or a unique prefix of it),
/// with a key of role `accept`, and logs it.
pub fn remove(store: &Store, id: &str, key: &SigningKey) -> Result<Review, StoreError> {
    let keyid = signing::keyid(&key.verifying_key());
    let result = (|| -> Result<Review, StoreError> {
        let policy = store.policy()?;
        if !policy
            .roles_of(&keyid)
            .is_some_and(|r| r.iter().any(|r| r == "accept"))
        {
            return Err(StoreError::Refused(format!(
                "key {keyid} is not in the store's trust policy with role `accept`"
            )));
        }
        let matching: Vec<Review> = valid(store, &policy)?
            .into_iter()
            .filter(|r| r.id.starts_with(id))
            .collect();
        match matching.as_slice() {
            [one] => {
                store.remove_review(REVIEWS, &format!("{}.dsse.json", one.id))?;
                Ok(one.clone())
            }
            [] => Err(StoreError::Unusable(format!(
                "no valid review has the id {id:?}"
            ))),
            _ => Err(StoreError::Unusable(format!(
                "{id:?} is the start of {} review ids: give more of it",
                matching.len()
            ))),
        }
    })();
    let mut e = LogEntry::new("review", if result.is_ok() { "ok" } else { "refused" });
    e.key = Some(keyid);
    e.detail = Some(match &result {
        Ok(r) => format!("withdrew review {} of {}", r.id, r.predicate.class),
        Err(err) => format!("withdrawing review {id}: {err}"),
    });
    store.append(e)?;
    result
}

/// The store's valid reviews: each verifies under a key of role `accept`, is a review
/// statement about the class it names, and has not expired. Sorted by class, then id.
pub fn valid(store: &Store, policy: &Policy) -> Result<Vec<Review>, StoreError> {
    let keys = policy.keys_with_role("accept")?;
    let mut out = Vec::new();
    for (_, bytes) in store.reviews(REVIEWS)? {
        let Ok(v) = signing::verify(&bytes, &keys) else {
            continue;
        };
        let Ok(s) = Statement::parse(&v.payload) else {
            continue;
        };
        let Ok(p) = serde_json::from_value::<ReviewPredicate>(s.predicate.clone()) else {
            continue;
        };
        let fresh = p
            .expires
            .as_deref()
            .is_none_or(|t| clock::parse(t).is_ok_and(|t| t > clock::now()));
        let about = hex(&Sha256::digest(p.class.as_bytes()));
        if s.predicate_type == signing::REVIEW_PREDICATE
            && s.subject_sha256() == Some(about.as_str())
            && fresh
            && check_class(&p.class).is_ok()
        {
            out.push(Review {
                id: hex(&Sha256::digest(&bytes)),
                predicate: p,
            });
        }
    }
    out.sort_by(|a, b| (&a.predicate.class, &a.id).cmp(&(&b.predicate.class, &b.id)));
    Ok(out)
}

/// The classes the store's valid reviews cover.
pub fn reviewed_classes(store: &Store, policy: &Policy) -> Result<Vec<String>, StoreError> {
    let mut classes: Vec<String> = valid(store, policy)?
        .into_iter()
        .map(|r| r.predicate.class)
        .collect();
    classes.dedup();
    Ok(classes)
}

/// The gate's check: every class an attestation's scan treated as reviewed is covered by a
/// valid review in the store (a scan key cannot review on its own).
pub fn check_covered(store: &Store, policy: &Policy, report: &Report) -> Result<(), StoreError> {
    let Some(claimed) = &report.scope.reviewed_classes else {
        return Ok(());
    };
    let covered = reviewed_classes(store, policy)?;
    match claimed.iter().find(|c| !covered.contains(c)) {
        None => Ok(()),
        Some(c) => Err(StoreError::Refused(format!(
            "the attestation's scan treated {c} as reviewed, but no valid review in the store covers it (`socair airlock review add {c} …`)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn probes_and_class_names() {
        assert_eq!(
            super::probe("argparse.Namespace"),
            b"\x80\x02cargparse\nNamespace\n)R."
        );
        assert_eq!(super::probe("a.b.c"), b"\x80\x02ca.b\nc\n)R.");
        for bad in ["os", ".a", "a.", "a..b", "a b.c", "a.b\nc", "a.b;c"] {
            assert!(super::check_class(bad).is_err(), "{bad}");
        }
        assert!(super::check_class("numpy.core.multiarray._reconstruct").is_ok());
    }
}
