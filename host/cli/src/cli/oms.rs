//! The OpenSSF Model Signing commands: `keygen --algorithm ecdsa-p256`, `sign`, and `verify` of
//! a Sigstore bundle (dispatched here by `cli::airlock::verify`).

use crate::airlock::oms::{bundle, key, sign as oms_sign, verify as oms_verify};
use crate::airlock::signing;
use crate::airlock::verify::Checks;
use crate::base::output::{to_json_bytes, write_atomically};
use crate::cli::airlock::report_verification;
use crate::cli::exit::{fatal, Fatal, EXIT_OK};
use crate::cli::output::{emit, for_a_person};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `socair keygen --algorithm ecdsa-p256 --out K`: prints the key's hint.
pub fn keygen(out: &Path) -> Result<u8, Fatal> {
    signing::refuse_existing(out).map_err(fatal)?;
    let (private, public) = key::generate().map_err(Fatal)?;
    signing::write_key_pair(out, &private, &public).map_err(fatal)?;
    let hint = key::hint(&key::parse_public_key(&public, out).map_err(fatal)?);
    println!("{hint}");
    eprintln!(
        "socair: wrote {} (ECDSA P-256 private key, PKCS#8, mode 0600) and {} (public); keyid {hint} (the key hint model_signing writes into its signatures)",
        out.display(),
        signing::public_path(out).display()
    );
    Ok(EXIT_OK)
}

/// What `socair sign` prints when not for a person.
#[derive(Serialize)]
struct SignSummary<'a> {
    signature: String,
    model: &'a str,
    root_digest: String,
    files: usize,
    ignored: &'a [String],
    ignore_paths: &'a [String],
    key_hint: &'a str,
}

/// `socair sign MODEL --key K --out SIG`.
pub fn sign(
    model: &Path,
    key_path: &Path,
    out: &Path,
    ignore: &[PathBuf],
    json: bool,
) -> Result<u8, Fatal> {
    let signing_key = key::load_signing_key(key_path).map_err(fatal)?;
    let model = &oms_sign::local(model).map_err(fatal)?;
    let extra = oms_sign::resolve_ignore(model, ignore).map_err(fatal)?;
    let signed = oms_sign::sign(model, &signing_key, out, &extra).map_err(fatal)?;
    write_atomically(out, &signed.bundle).map_err(|e| Fatal(format!("{}: {e}", out.display())))?;
    if for_a_person(json, None) {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "SIGNED — {} file{} of {} signed into {} (OpenSSF Model Signing v1.0)",
            signed.files,
            if signed.files == 1 { "" } else { "s" },
            model.display(),
            out.display()
        );
        let _ = writeln!(text);
        let _ = writeln!(text, "  root digest  sha256:{}", signed.root);
        let _ = writeln!(text, "  key          ECDSA P-256, hint {}", signed.hint);
        let _ = writeln!(
            text,
            "  left out     {}",
            if signed.ignored.is_empty() {
                "nothing".to_owned()
            } else {
                signed.ignored.join(", ")
            }
        );
        let _ = writeln!(text, "  ignore paths {}", signed.ignore_paths.join(", "));
        let _ = writeln!(text);
        let public = signing::public_path(key_path);
        let _ = writeln!(
            text,
            "Next: publish {} and {} with the model. Anyone can check it offline:",
            out.display(),
            public.display()
        );
        let _ = writeln!(
            text,
            "  model_signing verify key {} --signature {} --public_key {}",
            model.display(),
            out.display(),
            public.display()
        );
        let _ = writeln!(
            text,
            "  socair verify {} {} --pub {}",
            out.display(),
            model.display(),
            public.display()
        );
        emit(None, text.as_bytes())?;
    } else {
        let summary = SignSummary {
            signature: out.display().to_string(),
            model: &signed.model_name,
            root_digest: format!("sha256:{}", signed.root),
            files: signed.files,
            ignored: &signed.ignored,
            ignore_paths: &signed.ignore_paths,
            key_hint: &signed.hint,
        };
        emit(None, &to_json_bytes(&summary))?;
        eprintln!(
            "socair: signed {} file{} of {:?} into {} (root sha256:{}, key {})",
            signed.files,
            if signed.files == 1 { "" } else { "s" },
            signed.model_name,
            out.display(),
            signed.root,
            signed.hint
        );
    }
    Ok(EXIT_OK)
}

/// The bytes of the file at `path` when it is a Sigstore bundle (`None` when it is not, is
/// larger than a bundle socair reads, or cannot be read: the envelope path then says why).
pub fn read_bundle(path: &Path) -> Option<Vec<u8>> {
    if std::fs::metadata(path).ok()?.len() > bundle::MAX_BUNDLE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    bundle::is_bundle(&bytes).then_some(bytes)
}

/// `socair verify SIG [MODEL] --pub P` for a Sigstore bundle.
pub fn verify(
    signature: &Path,
    bytes: &[u8],
    store: Option<PathBuf>,
    public: Option<PathBuf>,
    checks: Checks<'_>,
    json: bool,
) -> Result<u8, Fatal> {
    let name = signature.display();
    if bytes.len() as u64 > bundle::MAX_BUNDLE_BYTES {
        return Err(Fatal(format!(
            "{name}: a Sigstore bundle of {} bytes, more than socair reads ({} bytes)",
            bytes.len(),
            bundle::MAX_BUNDLE_BYTES
        )));
    }
    if checks.input.is_some() || checks.output.is_some() {
        return Err(Fatal(format!(
            "{name} is an OpenSSF model signature: --input and --output apply to socair's derivation records"
        )));
    }
    let Some(public) = public else {
        return Err(Fatal(format!(
            "{name} is an OpenSSF model signature (a Sigstore bundle): give the publisher's public key with --pub{}",
            if store.is_some() {
                " (a store's trust policy holds socair's Ed25519 keys, not model signing keys)"
            } else {
                ""
            }
        )));
    };
    let model = match (checks.artifact, checks.signature_only) {
        (Some(m), _) => Some(m),
        (None, true) => None,
        (None, false) => {
            return Err(Fatal(format!(
                "{name} is an OpenSSF model signature: give the model it signs (`socair verify {name} MODEL --pub P`), or --signature-only"
            )))
        }
    };
    let key = key::load_public_key(&public).map_err(fatal)?;
    let model = model
        .map(|m| oms_sign::local(m).map_err(fatal))
        .transpose()?;
    report_verification(
        oms_verify::verify(signature, bytes, &key, model.as_deref()),
        signature,
        json,
    )
}
