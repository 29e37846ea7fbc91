//! The signing commands that need more than their own arguments: `socair keygen` (a key of
//! either kind), `socair attest` (a signed scan) and `socair verify` (a DSSE envelope or an
//! OpenSSF model signature). `socair sign` goes straight to [`crate::cli::oms::sign`].

use super::context::{reviewed_list, Context};
use crate::airlock::attest::AttestSubject;
use crate::airlock::verify::Checks;
use crate::cli::airlock;
use crate::cli::args::{KeyAlgorithm, SubjectKind};
use crate::cli::exit::Fatal;
use crate::cli::oms;
use crate::report::scan::ScanOptions;
use std::path::{Path, PathBuf};

/// `socair keygen --out K [--algorithm A]`: Ed25519 for socair's own envelopes, ECDSA P-256
/// for OpenSSF model signatures.
pub fn keygen(out: &Path, algorithm: KeyAlgorithm) -> Result<u8, Fatal> {
    match algorithm {
        KeyAlgorithm::Ed25519 => airlock::keygen(out),
        KeyAlgorithm::EcdsaP256 => oms::keygen(out),
    }
}

/// The arguments of `socair attest`.
pub struct AttestArgs {
    /// The model to scan and attest.
    pub path: PathBuf,
    /// The private key.
    pub key: PathBuf,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// `--reviewed-classes`.
    pub reviewed_classes: Option<PathBuf>,
    /// `--profile`.
    pub profile: Option<String>,
    /// `--json`.
    pub json: bool,
    /// `--subject`: the scanned model directory, or its OpenSSF manifest's root.
    pub subject: SubjectKind,
    /// `--oms-ignore`: paths the OpenSSF manifest leaves out (only with `--subject oms`).
    pub oms_ignore: Vec<PathBuf>,
}

/// `socair attest PATH --key K`: scans the model and signs the report.
pub fn attest(mut ctx: Context, args: AttestArgs) -> Result<u8, Fatal> {
    ctx.ask_profile(args.profile.as_deref());
    let subject = match args.subject {
        SubjectKind::Modeldir if args.oms_ignore.is_empty() => AttestSubject::Report,
        SubjectKind::Modeldir => return Err(Fatal("--oms-ignore goes with --subject oms".into())),
        SubjectKind::Oms => AttestSubject::OmsRoot(
            crate::airlock::oms::sign::resolve_ignore(&args.path, &args.oms_ignore)
                .map_err(|e| Fatal(e.to_string()))?,
        ),
    };
    let options = ScanOptions {
        reviewed: reviewed_list(args.reviewed_classes)?,
        readers: ctx.readers.clone(),
        ..ScanOptions::default()
    };
    let set = ctx.plugins_warned();
    airlock::attest(
        &args.path, &args.key, args.out, &set, &options, args.json, &subject,
    )
}

/// The arguments of `socair verify`.
pub struct VerifyArgs {
    /// The envelope or Sigstore bundle.
    pub envelope: PathBuf,
    /// The artifact it should be about.
    pub artifact: Option<PathBuf>,
    /// `--store`: the store whose trusted keys and policy apply.
    pub store: Option<PathBuf>,
    /// `--pub`: the one public key to trust.
    pub public_key: Option<PathBuf>,
    /// `--signature-only`.
    pub signature_only: bool,
    /// `--input`: a derivation's input.
    pub input: Option<PathBuf>,
    /// `--output`: a derivation's output.
    pub output: Option<PathBuf>,
    /// `--json`.
    pub json: bool,
}

/// `socair verify SIG [ARTIFACT]`: an OpenSSF model signature (a Sigstore bundle) is told apart
/// by its mediaType; anything else is read as socair's own envelope.
pub fn verify(ctx: Context, args: VerifyArgs) -> Result<u8, Fatal> {
    let set = ctx.plugins();
    let checks = Checks {
        signature_only: args.signature_only,
        artifact: args.output.as_deref().or(args.artifact.as_deref()),
        input: args.input.as_deref(),
        output: args.output.as_deref(),
    };
    if let Some(bytes) = oms::read_bundle(&args.envelope) {
        return oms::verify(
            &args.envelope,
            &bytes,
            args.store,
            args.public_key,
            checks,
            args.json,
        );
    }
    airlock::verify(
        &args.envelope,
        args.store,
        args.public_key,
        checks,
        &set,
        args.json,
    )
}
