//! The command line's arguments (clap): every command, its options and its help text.

use crate::airlock::policy::ROLES;
use crate::airlock::store::default_path;
use crate::convert::{FROM_FORMATS, TO_FORMATS};
use clap::builder::PossibleValuesParser;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// `socair --version`: the host's version and the plugin-api version it loads.
pub fn version_line() -> String {
    format!(
        "{} (plugin-api {})",
        crate::VERSION,
        socair_plugin_api::PLUGIN_API_VERSION
    )
}

/// Parses the process's arguments (with the version line filled in).
pub fn parse_args() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().version(version_line()).try_get_matches()?;
    Cli::from_arg_matches(&matches)
}

/// socair: an airlock for machine-learning model files.
///
/// Reads model files without executing anything in them, fingerprints every tensor, and
/// reports what it found. Format readers are plugins, found at run time.
///
/// On a terminal, commands print a short report in plain words (the verdict first, then the
/// next step); to a pipe or a file, or with --json, the JSON documents. The options above the
/// command (--plugin-dir, --reader) come before it: `socair --plugin-dir DIR scan FILE`.
///
/// Exit codes: 0 success or a clean result; 1 a negative verdict (something unread, refused,
/// or different); 2 a usage error or an input that cannot be read.
#[derive(Debug, Parser)]
#[command(name = "socair", version, max_term_width = 100)]
pub struct Cli {
    /// Look for plugins in DIR first (repeatable). Then come SOCAIR_PLUGIN_PATH
    /// (`:`-separated), `<socair's dir>/plugins/`, socair's own directory, and
    /// `<socair's dir>/../lib/socair/plugins/` (where scripts/install.sh puts them).
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dirs: Vec<PathBuf>,

    /// When several plugins claim one file, read it with plugin NAME (socair never chooses
    /// between them by itself). In a store with plugin pins the pinned plugin reads its
    /// formats, whatever this says.
    #[arg(long = "reader", value_name = "NAME")]
    pub reader: Option<String>,

    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The kinds of key `socair keygen` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KeyAlgorithm {
    /// Ed25519: socair's envelopes.
    Ed25519,
    /// ECDSA on NIST P-256: OpenSSF model signatures.
    #[value(name = "ecdsa-p256")]
    EcdsaP256,
}

/// What a scan attestation names as its subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SubjectKind {
    /// The socair.modeldir/v1 digest of a directory, the sha256 of a file.
    Modeldir,
    /// The OpenSSF model signature's root digest.
    Oms,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print a shell completion script for bash, zsh, fish, elvish or powershell.
    ///
    /// Example: socair completions bash > ~/.local/share/bash-completion/completions/socair
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// List the plugins found (and refused, with reasons) and the built-in rule sets.
    ///
    /// Exits 1 when a plugin file was refused.
    ///
    /// Example: socair --plugin-dir ./my-plugins plugins
    Plugins {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Scan and list the artifacts as a CycloneDX 1.6 ML-BOM (the same as
    /// `socair scan --format cyclonedx`).
    ///
    /// Each artifact is a machine-learning-model component with its SHA-256 (a directory's
    /// socair.modeldir/v1 digest), its format, its tensors' count and dtypes and the scan's
    /// verdict as properties; each file of a model directory is a file component inside it.
    /// Exits as `socair scan` does: 0 when every artifact is clean, 1 when one is not.
    ///
    /// Example: socair bom fixtures/safetensors/tiny-bert --out tiny-bert.cdx.json
    Bom {
        /// Model files or model directories (or hf://namespace/name[@revision]).
        #[arg(required_unless_present = "each", value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Each model directory and model file found below DIR, as for `socair scan --each`.
        #[arg(long, value_name = "DIR", num_args = 1..)]
        each: Vec<PathBuf>,
        /// A library profile, as for `socair scan --profile`.
        #[arg(long, value_name = "PROFILE", value_parser = ["sklearn"])]
        profile: Option<String>,
        /// Write the BOM here (atomically) instead of to standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Scan a model file or directory (or many) without executing anything in it
    /// (socair.report/v1).
    ///
    /// Each plugin reports the rows of its checks (Format and structure; Pickle opcode scan
    /// for torch checkpoints): PASS, FAIL (evidence of danger, or a file readers would read
    /// differently), LEAD (outside what is proven safe: a person should look) or NOT_TESTED
    /// (with the reason). On a terminal it prints the verdict in plain words and the next step;
    /// otherwise (or with --json, or --out) the report, with a summary on standard error. Exits
    /// 0 when no row is FAIL or LEAD, 1 when one is, 2 when the path cannot be read.
    ///
    /// With --reference MANIFEST (one `socair tensors` wrote for a reviewed model) the report
    /// gains a Tensor reference row: PASS when every tensor matches the reference under its own
    /// name, LEAD when anything differs (never FAIL), NOT_TESTED across file formats or for a
    /// header-only scan. An unreadable reference stops the scan (exit 2).
    ///
    /// Several paths, or --each DIR, scan each artifact on its own (spread over the cores):
    /// on a terminal one verdict line per artifact and a summary (how many clean, blocked,
    /// needing a person, unreadable); otherwise one socair.reports/v1 document listing every
    /// report. It then exits 0 when every artifact is clean, 1 when one is not (or could not be
    /// read), 2 on a usage error (a path that does not exist). --format sarif writes a SARIF
    /// 2.1.0 log for code scanning, --format cyclonedx a CycloneDX 1.6 ML-BOM (as `socair bom`).
    ///
    /// A path may be `hf://namespace/name[@revision]`: that snapshot in the Hugging Face cache
    /// ($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub), read offline.
    ///
    /// Example: socair scan pytorch_model.bin --out report.json
    ///
    /// Example: socair scan --each ~/.cache/huggingface/hub --format sarif --out socair.sarif
    Scan {
        /// Model files or model directories (or hf://namespace/name[@revision], s3://…, https://…).
        #[arg(required_unless_present = "each", value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Scan each model directory and model file found below DIR, as socair's readers find
        /// them (a directory a loader opens as one model, a Hugging Face cache's snapshots,
        /// any file a reader claims); takes several DIRs, and a file given here is scanned
        /// only when a reader claims it.
        #[arg(long, value_name = "DIR", num_args = 1..)]
        each: Vec<PathBuf>,
        /// What to write: the socair report (default: plain words on a terminal, JSON
        /// otherwise), plain words anywhere (text), a SARIF 2.1.0 log, or a CycloneDX 1.6
        /// ML-BOM. SARIF and CycloneDX are written even on a terminal.
        #[arg(long, value_enum, default_value_t = Format::Report)]
        format: Format,
        /// Read headers and indexes only, not tensor data (CRC-32 of storages is not checked).
        #[arg(long)]
        header_only: bool,
        /// A file of globals (`module.name`, one per line) a person has reviewed: a pickle
        /// that uses them is not a LEAD for that. Dangerous globals are never accepted.
        #[arg(long, value_name = "FILE")]
        reviewed_classes: Option<PathBuf>,
        /// A library profile to judge pickles that are not torch checkpoints by
        /// (`sklearn`: socair-sklearn/1, the classes scikit-learn, SciPy, NumPy, XGBoost's and
        /// LightGBM's sklearn wrappers pickle). Without it, socair-data/1 (pure data) applies.
        #[arg(long, value_name = "PROFILE", value_parser = ["sklearn"])]
        profile: Option<String>,
        /// A reviewed model's manifest (`socair tensors --out`): adds the Tensor reference row.
        /// (SOCAIR_TENSOR_REFERENCE=MANIFEST does the same.) A signed manifest (`socair
        /// tensors --sign`) is verified first with --reference-pub: one that does not verify
        /// stops the scan.
        #[arg(long, value_name = "MANIFEST")]
        reference: Option<PathBuf>,
        /// The public key (K.pub) a signed reference manifest must verify under (repeatable;
        /// SOCAIR_TENSOR_REFERENCE_PUB=K.pub does the same).
        #[arg(long, value_name = "KEY.pub", conflicts_with = "reference_store")]
        reference_pub: Vec<PathBuf>,
        /// A store whose trust policy's `reference` keys a signed reference manifest must
        /// verify under (instead of --reference-pub).
        #[arg(long, value_name = "STORE")]
        reference_store: Option<PathBuf>,
        /// A feed of signed manifests (`socair tensors publish`): the one last published
        /// under the scanned model's name is the reference, verified as --reference is.
        #[arg(long, value_name = "DIR", conflicts_with = "reference")]
        reference_feed: Option<PathBuf>,
        /// Write the report here (atomically) instead of to standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Print the JSON document even on a terminal (it is what goes to a pipe or a file).
        #[arg(long)]
        json: bool,
    },
    /// Write a key pair: K (PKCS#8 PEM, mode 0600) and K.pub (SPKI PEM); print the keyid.
    ///
    /// Ed25519 keys (the default) sign socair's own envelopes (attest, airlock). ECDSA P-256
    /// keys (--algorithm ecdsa-p256) sign OpenSSF model signatures (`socair sign`), and are the
    /// keys `model_signing sign key` and `model_signing verify key` read; their keyid is the
    /// key hint model_signing writes into its bundles.
    ///
    /// Example: socair keygen --out operator.key
    ///
    /// Example: socair keygen --algorithm ecdsa-p256 --out publisher.key
    Keygen {
        /// The private key file to create (never overwritten).
        #[arg(long, value_name = "K")]
        out: PathBuf,
        /// The kind of key.
        #[arg(long, value_enum, default_value = "ed25519")]
        algorithm: KeyAlgorithm,
    },
    /// Scan and sign: write a DSSE envelope holding an in-toto Statement whose predicate is the
    /// report (default: <path>.attestation.dsse.json).
    ///
    /// Example: socair attest model.safetensors --key operator.key
    Attest {
        /// A model file or a model directory.
        path: PathBuf,
        /// The private key.
        #[arg(long, value_name = "K")]
        key: PathBuf,
        /// Where to write the envelope.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// A file of globals (`module.name`, one per line) a person has reviewed, as for
        /// `socair scan`; the attestation names them. (A store's gate accepts only globals its
        /// own reviews cover: `socair airlock review add`.)
        #[arg(long, value_name = "FILE")]
        reviewed_classes: Option<PathBuf>,
        /// A library profile, as for `socair scan --profile`; the attestation's report names it.
        #[arg(long, value_name = "PROFILE", value_parser = ["sklearn"])]
        profile: Option<String>,
        /// Print nothing on standard output, even on a terminal (the envelope is in the file).
        #[arg(long)]
        json: bool,
        /// The statement's subject: the `socair.modeldir/v1` digest (or the file's sha256), or
        /// `oms`, the root digest an OpenSSF model signature (model_signing) of the same
        /// file or directory names, so that the scan and a publisher's signature name one
        /// subject. The report inside still carries socair's own digest; `socair verify`
        /// checks both.
        #[arg(long, value_enum, default_value = "modeldir")]
        subject: SubjectKind,
        /// With --subject oms: a file or directory the root leaves out besides model_signing's
        /// defaults (.git, .gitattributes, .github, .gitignore), read from the current
        /// directory as `model_signing sign --ignore-paths` reads it; give the publisher's
        /// signature when it lies in the model (`--oms-ignore bert/model.sig`).
        #[arg(long = "oms-ignore", value_name = "PATH")]
        oms_ignore: Vec<PathBuf>,
    },
    /// Can I trust this file? Verify a Socair envelope (scan attestation, acceptance,
    /// derivation record) and what it says about ARTIFACT.
    ///
    /// The signature must verify under the public key (--pub) or a key of the store's trust
    /// policy (--store, else $SOCAIR_STORE, else ./socair-store). With a store, the signer must
    /// hold the role that fits what it signed (scan, accept, derive, reference). With ARTIFACT (a file or
    /// a model directory), it must hash to the statement's subject. For a derivation record,
    /// --input must hash to the record's input, and with the output (ARTIFACT or --output)
    /// every tensor is re-hashed from both. A scan attestation must hold no FAIL or LEAD row.
    /// Prints the payload exactly as signed, the signed rows, and every condition that fails.
    ///
    /// Exits 0 only when every condition holds, 1 naming the first that fails, 2 when a file
    /// cannot be read or is not an envelope. --signature-only checks the signature alone.
    ///
    /// An OpenSSF model signature (a Sigstore bundle, as `model_signing sign key` and `socair
    /// sign` write it) is verified as `model_signing verify key` verifies it: the signature
    /// under the P-256 key --pub, then ARTIFACT, the model, hashed again and compared file by
    /// file; every file added, removed or changed is named.
    ///
    /// Example: socair verify model.sig ./bert --pub publisher.key.pub
    ///
    /// Example: socair verify model.safetensors.attestation.dsse.json model.safetensors --store /srv/airlock
    ///
    /// Example: socair verify derivation.dsse.json model.safetensors --input pytorch_model.bin --pub converter.key.pub
    Verify {
        /// The envelope.
        envelope: PathBuf,
        /// The file or model directory the envelope is about (re-hashed against its subject).
        artifact: Option<PathBuf>,
        /// A store whose trust policy holds the keys and their roles.
        #[arg(long, value_name = "DIR", conflicts_with = "public_key")]
        store: Option<PathBuf>,
        /// A public key (SPKI PEM).
        #[arg(long = "pub", value_name = "P")]
        public_key: Option<PathBuf>,
        /// Check the signature only (exit 0 when it verifies, whatever the envelope says).
        #[arg(long, conflicts_with_all = ["artifact", "input", "output"])]
        signature_only: bool,
        /// For a derivation record: the input checkpoint, which must hash to the record's input
        /// (and with the output, every tensor is re-hashed from it).
        #[arg(long, value_name = "FILE")]
        input: Option<PathBuf>,
        /// For a derivation record: the output file (the same as giving it as ARTIFACT).
        #[arg(
            long,
            value_name = "FILE",
            requires = "input",
            conflicts_with = "artifact"
        )]
        output: Option<PathBuf>,
        /// Print the payload exactly as signed even on a terminal (what goes to a pipe).
        #[arg(long)]
        json: bool,
    },
    /// Sign a model as OpenSSF Model Signing (OMS v1.0) signs it: a Sigstore bundle that
    /// `model_signing verify key MODEL --signature SIG --public_key K.pub` accepts offline.
    ///
    /// MODEL (a directory or a file) is hashed as model_signing hashes it: every file's
    /// SHA-256, symbolic links refused, .git, .gitattributes, .github, .gitignore and the
    /// signature itself left out. The key is an ECDSA P-256 private key (`socair keygen
    /// --algorithm ecdsa-p256`, or any PKCS#8 or SEC1 PEM P-256 key). Prints the root digest;
    /// exits 2 when the model or the key cannot be read.
    ///
    /// Example: socair sign ./bert --key publisher.key --out bert.sig
    Sign {
        /// The model: a directory or a file.
        model: PathBuf,
        /// The ECDSA P-256 private key (PEM).
        #[arg(long, value_name = "K")]
        key: PathBuf,
        /// Where to write the signature (as model_signing: model.sig in the current directory).
        #[arg(long, value_name = "SIG", default_value = "model.sig")]
        out: PathBuf,
        /// A file or directory of the model to leave out of the signature (repeatable), as
        /// `model_signing sign --ignore-paths`: read from the current directory, recorded in
        /// the signature, left out again by every verifier.
        #[arg(long = "ignore-path", value_name = "PATH")]
        ignore_paths: Vec<PathBuf>,
        /// Print the summary as JSON even on a terminal.
        #[arg(long)]
        json: bool,
    },
    /// Convert a model between formats without the store (the same rules as airlock convert).
    ///
    /// --from and --to name the formats; socair never guesses them from file names, and refuses
    /// a source that does not read as --from. torch checkpoints convert under the rules
    /// --rules names: socair-convert/1 (torch-zip, contiguous tensors only, exact aliases
    /// written once under the first name in byte order, byte-stable output), socair-convert/2
    /// (/1 plus torch-legacy inputs and non-contiguous tensors gathered into row-major order;
    /// the same bytes as /1 wherever /1 converts) or socair-convert/3 (the default: /2, except
    /// that tied weights keep the name transformers keeps, such as the input embedding of a tied
    /// lm_head.weight, and a model directory whose config.json says tie_word_embeddings: false
    /// is refused when its checkpoint ties them; the same bytes as /2 wherever no alias group
    /// changes its kept name). safetensors, gguf and model-dir convert to safetensors or gguf when
    /// every tensor can be carried exactly (no quantized types into safetensors, no U8/BOOL/…
    /// into GGUF). savedmodel, tf-checkpoint, tf-graphdef and tflite (TensorFlow), keras (a
    /// .keras archive's stored model.weights.h5) and hdf5 (a legacy Keras .h5 model or a
    /// .weights.h5) convert to safetensors the tensors their reader locates as bytes of the
    /// file: a deflated member, filtered or split HDF5 chunks are refused. The output is
    /// written to a temporary name, verified, fsynced and renamed; an existing destination is
    /// never replaced. Exits 0 when converted, 1 when refused (with the reason), 2 on usage or
    /// unreadable input.
    ///
    /// Example: socair convert pytorch_model.bin model.safetensors --from torch-zip --to safetensors
    ///
    /// Example: socair convert old.pth old.safetensors --from torch-legacy --to safetensors --rules socair-convert/2
    Convert {
        /// The model to convert.
        src: PathBuf,
        /// The file to write.
        dst: PathBuf,
        /// The source format: torch-zip, torch-legacy, safetensors, gguf, onnx, model-dir.
        #[arg(long, value_parser = PossibleValuesParser::new(FROM_FORMATS))]
        from: String,
        /// The destination format: safetensors, gguf.
        #[arg(long, value_parser = PossibleValuesParser::new(TO_FORMATS))]
        to: String,
        /// The conversion rules: socair-convert/1, /2 or /3 (default: the newest the deployment
        /// allows).
        #[arg(long, value_name = "RULES")]
        rules: Option<String>,
    },
    /// The airlock store: pull, scan, accept, promote, convert, pins, and the chained
    /// activity log.
    ///
    /// The store is --store, else $SOCAIR_STORE, else ./socair-store. Nothing reaches
    /// promoted/ without a signed scan attestation whose rows pass the gate.
    ///
    /// Example: socair airlock pull model.safetensors --store /srv/airlock
    #[command(subcommand)]
    Airlock(AirlockCommand),
    /// Serve the store's promoted repositories as a Hugging Face Hub endpoint.
    ///
    /// Any huggingface_hub client (transformers, diffusers, `hf download`...) with
    /// HF_ENDPOINT=http://ADDR downloads a repository revision that `socair airlock pull DIR
    /// --as org/name` recorded, once its artifact is promoted; anything staged, blocked or
    /// needing a person is refused (403) with the verdict, the reason and the command that
    /// would let it through. Prints the address it listens on (`http://HOST:PORT`) on standard
    /// output, one line per request on standard error; stops on Ctrl-C or SIGTERM. See
    /// docs/serve.md.
    ///
    /// Example: socair serve --store /srv/airlock --listen 0.0.0.0:8080 --tokens tokens.txt
    Serve {
        /// Where to listen (HOST:PORT; port 0 picks a free port).
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
        listen: String,
        /// Accept only requests with `Authorization: Bearer T` for a token T of this file (one
        /// a line; `#` comments). /health needs none.
        #[arg(long, value_name = "FILE")]
        tokens: Option<PathBuf>,
        /// Seconds a client has to send a request's headers before the connection is closed.
        #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
        header_timeout: u64,
        /// Write no line per request on standard error.
        #[arg(long)]
        quiet: bool,
        /// Pull a revision the store lacks through from this hub (https://huggingface.co, or
        /// another socair serve): fetched, scanned as a model directory, signed with --key and
        /// promoted when the gate lets it through, then served (docs/serve.md).
        #[arg(long, value_name = "URL", requires = "key")]
        upstream: Option<String>,
        /// The key pulled-through scans are signed with; the store must trust it with the role
        /// `scan` (socair airlock trust K.pub --role scan).
        #[arg(long, value_name = "K", requires = "upstream")]
        key: Option<PathBuf>,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Fingerprint every tensor of a model file or directory (socair.tensors/v1), or compare
    /// two models (`socair tensors diff`).
    ///
    /// Writes the manifest to standard output (or --out) and a one-line count to standard
    /// error. For a directory, every *.safetensors file is read (and any other file a plugin
    /// recognises); the directory's identity is its socair.modeldir/v1 digest. Exits 0 when
    /// every file and tensor was read, 1 when anything is listed in `unread`, 2 when the path
    /// cannot be read. (A model directory named `diff` is written `./diff`.)
    ///
    /// Example: socair tensors fixtures/safetensors/tiny-bert --out tiny-bert.tensors.json
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Tensors {
        /// A model file or a model directory.
        #[arg(required = true)]
        path: Option<PathBuf>,
        /// Write the manifest here (atomically) instead of to standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Sign the manifest with --key: write a DSSE envelope holding an in-toto Statement
        /// whose subject is the model's digest and whose predicate is the manifest (accepted
        /// as a reference wherever a manifest is, verified with the key's K.pub).
        #[arg(long, requires = "key")]
        sign: bool,
        /// The private key to sign with (`socair keygen`).
        #[arg(long, value_name = "KEY", requires = "sign")]
        key: Option<PathBuf>,
        /// Print the JSON document even on a terminal (it is what goes to a pipe or a file).
        #[arg(long)]
        json: bool,
        /// Compare two models.
        #[command(subcommand)]
        action: Option<TensorsAction>,
    },
}

/// What `socair scan` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// socair.report/v1 (socair.reports/v1 for several artifacts), or plain words on a terminal.
    Report,
    /// Plain words, as on a terminal, wherever standard output goes (a pre-commit hook, a CI
    /// log): one line per artifact and the summary, or one artifact's rows.
    Text,
    /// A SARIF 2.1.0 log, as GitHub code scanning reads it.
    Sarif,
    /// A CycloneDX 1.6 ML-BOM.
    Cyclonedx,
}

/// `socair airlock pin …`.
#[derive(Debug, Subcommand)]
pub enum PinCommand {
    /// Pin a loaded plugin: its version requirement (default: exactly the loaded version) and
    /// its library's sha256 (unless --any-build).
    ///
    /// Example: socair airlock pin plugin safetensors --version ">=0.1, <0.2" --any-build
    Plugin {
        /// The plugin's name, as `socair plugins` lists it.
        name: String,
        /// A semver requirement (default: "=<the loaded version>").
        #[arg(long)]
        version: Option<String>,
        /// Accept any build within the version requirement (no sha256 pin).
        #[arg(long)]
        any_build: bool,
        /// Remove the plugin's pin instead.
        #[arg(long, conflicts_with_all = ["version", "any_build"])]
        remove: bool,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Pin a rule set to a semver requirement ("=1" accepts version 1 only).
    ///
    /// Example: socair airlock pin rules socair-convert "=1"
    Rules {
        /// The rule set's name (socair-convert, socair-wo, float32-le-bits, …).
        name: String,
        /// The requirement; omit it with --remove.
        requirement: Option<String>,
        /// Remove the rule set's pin instead.
        #[arg(long, conflicts_with = "requirement")]
        remove: bool,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// `socair airlock review …`.
#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// Sign and store a review of a pickle global (key role: accept): `airlock scan` then
    /// accepts that global instead of making it a LEAD, and the attestation names it.
    ///
    /// CLASS is `module.name` as the pickle names it. A global that runs code or does I/O when
    /// loaded (os.system, builtins.eval, …) can never be reviewed: the pickle readers judge it
    /// first, and refuse.
    ///
    /// Example: socair airlock review add argparse.Namespace --reason "a plain namespace of training arguments" --key reviewer.key
    Add {
        /// The global, `module.name`.
        class: String,
        /// Why loading it is safe.
        #[arg(long)]
        reason: String,
        /// The private key (its public key must have role `accept`).
        #[arg(long, value_name = "K")]
        key: PathBuf,
        /// When the review lapses (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).
        #[arg(long, value_name = "TIME")]
        expires: Option<String>,
        #[command(flatten)]
        store: StoreArg,
    },
    /// List the store's valid reviews: id, class, signer, reason.
    ///
    /// Example: socair airlock review ls
    Ls {
        #[command(flatten)]
        store: StoreArg,
    },
    /// Withdraw a review (key role: accept); logged.
    ///
    /// Example: socair airlock review remove 3f2a --key reviewer.key
    Remove {
        /// The review's id, or the start of it.
        id: String,
        /// The private key (its public key must have role `accept`).
        #[arg(long, value_name = "K")]
        key: PathBuf,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// The store option shared by the airlock commands.
#[derive(Debug, clap::Args)]
pub struct StoreArg {
    /// The store (default: $SOCAIR_STORE, else ./socair-store).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
}

impl StoreArg {
    /// The store's path.
    pub fn path(self) -> PathBuf {
        default_path(self.store)
    }
}

/// `socair airlock` subcommands.
#[derive(Debug, Subcommand)]
pub enum AirlockCommand {
    /// Create a store: incoming/, promoted/, work/, .tmp/, an empty policy.json and activity.log.
    ///
    /// Example: socair airlock init --store /srv/airlock
    Init {
        #[command(flatten)]
        store: StoreArg,
    },
    /// Add a public key to the store's trust policy with roles scan, accept, derive and/or reference (signed tensor manifests).
    ///
    /// Example: socair airlock trust operator.key.pub --role scan,accept
    Trust {
        /// The public key (SPKI PEM, as `socair keygen` writes K.pub).
        public_key: PathBuf,
        /// Roles, comma-separated: scan, accept, derive, reference.
        #[arg(long, value_delimiter = ',', required = true, value_parser = PossibleValuesParser::new(ROLES))]
        role: Vec<String>,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Pin the plugin and rule-set versions this store accepts (policy.json `pins`).
    ///
    /// A pinned plugin must be loaded, at a version inside its pin (and, unless --any-build,
    /// the exact library file pinned) for `airlock scan` and `airlock convert` to run, and a
    /// scan attestation made with another version is not promoted. A pinned rule set must be
    /// implemented at an accepted version; `socair-convert` picks the newest accepted version
    /// for each conversion. See docs/pins.md.
    ///
    /// Example: socair airlock pin plugin torch-zip --version "=0.1.0"
    ///
    /// Example: socair airlock pin rules socair-convert "=1"
    #[command(subcommand)]
    Pin(PinCommand),
    /// Reviews of pickle globals a person cleared: add, list, remove.
    ///
    /// Real checkpoints carry globals outside the weights-only grammar that are harmless
    /// (argparse.Namespace, numpy.core.multiarray._reconstruct, omegaconf configs): each is a
    /// LEAD until a person reviews it. A review is signed by an `accept` key, logged, and
    /// applied by every later `airlock scan`; promote refuses an attestation that treated a
    /// global as reviewed without a review in the store.
    ///
    /// Example: socair airlock review add argparse.Namespace --reason "training arguments" --key reviewer.key
    #[command(subcommand)]
    Review(ReviewCommand),
    /// Copy a model file or directory into incoming/<sha256>/<name>, hashing while copying.
    ///
    /// Prints the sha256 (a directory's socair.modeldir/v1 digest). Symbolic links, FIFOs and
    /// devices are refused; nothing is left behind on failure.
    ///
    /// With --as org/name, also records it as that Hugging Face repository's revision
    /// (--revision, default main) for `socair serve`; logged.
    ///
    /// Example: socair airlock pull ./downloaded/model.safetensors
    ///
    /// Example: socair airlock pull ./tiny-bert --as org/tiny-bert --revision main
    Pull {
        /// The file or directory.
        path: PathBuf,
        /// Record it as this Hugging Face repository (`org/name`), for `socair serve`.
        #[arg(long = "as", value_name = "REPO")]
        as_repo: Option<String>,
        /// The repository revision it is (a branch or tag, pinned to a commit id socair
        /// derives from the artifact's sha256, or a 40-hex commit id kept as given).
        #[arg(long, value_name = "R", requires = "as_repo", default_value = "main")]
        revision: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Scan a staged artifact and store its signed attestation beside it (key role: scan).
    ///
    /// Example: socair airlock scan 3f2a… --key scanner.key
    Scan {
        /// The staged artifact's sha256 (or a unique start of it).
        sha256: String,
        /// The private key (its public key must have role `scan`).
        #[arg(long, value_name = "K")]
        key: PathBuf,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Record a signed acceptance of NOT_TESTED rows for one staged artifact (key role: accept).
    ///
    /// Example: socair airlock accept 3f2a… --row "Format and structure" --reason "pickle reviewed" --key reviewer.key --expires 2027-06-30
    Accept {
        /// The staged artifact's sha256 (or a unique start of it).
        sha256: String,
        /// The check whose gap is accepted (repeatable).
        #[arg(long = "row", value_name = "CHECK", required = true)]
        rows: Vec<String>,
        /// Why the gap is acceptable.
        #[arg(long)]
        reason: String,
        /// The private key (its public key must have role `accept`).
        #[arg(long, value_name = "K")]
        key: PathBuf,
        /// When the acceptance lapses (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).
        #[arg(long, value_name = "TIME")]
        expires: Option<String>,
        #[command(flatten)]
        store: StoreArg,
    },
    /// List what the store holds: staged and promoted artifacts, each with its sha256, name
    /// and the verdict its attestation signed.
    ///
    /// Example: socair airlock ls --store ~/airlock
    Ls {
        /// Print JSON even on a terminal.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Copy a promoted artifact out of the store, re-checking its hash as it is copied.
    ///
    /// DEST is a new path, or an existing directory to copy it into. Nothing is left at DEST
    /// when the copy does not hash to the sha256 (the store was changed after promotion).
    ///
    /// Example: socair airlock export 3f2a ./models/
    Export {
        /// The promoted artifact's sha256 (or a unique start of it).
        sha256: String,
        /// Where to copy it.
        dest: PathBuf,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Run the gate and move a staged artifact to promoted/<sha256>/.
    ///
    /// The attestation must verify under a `scan` key, be about these bytes, hold no FAIL or
    /// LEAD row, and every NOT_TESTED row must be covered by a valid, unexpired acceptance from
    /// an `accept` key. A refusal says which condition failed (exit 1).
    ///
    /// Example: socair airlock promote 3f2a…
    Promote {
        /// The staged artifact's sha256 (or a unique start of it).
        sha256: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Convert an attested torch checkpoint to safetensors (socair-convert/1, /2 or /3) with a
    /// signed derivation record (key role: derive).
    ///
    /// The rules are --rules, or the newest version the store's policy pins allow
    /// (`pins.rules["socair-convert"]`, a semver requirement such as "=1"); --rules outside the
    /// pin is refused. The derivation record names the version used, and under /3 the rule that
    /// chose the kept name of each alias group (alias_rules).
    ///
    /// The attestation must verify under a `scan` key, hold no FAIL or LEAD row and a PASSing
    /// Pickle opcode scan row; the checkpoint is copied into work/ hashing while copying and
    /// must be the attested bytes; the copy is re-checked and converted; the output is verified
    /// and lands in incoming/<sha256>/<name>.safetensors with derivation.dsse.json. It
    /// authorizes nothing: the output is scanned and gated like any artifact.
    ///
    /// Example: socair airlock convert pytorch_model.bin --attestation pytorch_model.bin.attestation.dsse.json --key converter.key
    Convert {
        /// The checkpoint file.
        checkpoint: PathBuf,
        /// Its attestation (DSSE envelope).
        #[arg(long, value_name = "A")]
        attestation: PathBuf,
        /// The private key (its public key must have role `derive`).
        #[arg(long, value_name = "K")]
        key: PathBuf,
        /// The conversion rules: socair-convert/1, /2 or /3 (default: the newest the deployment
        /// allows).
        #[arg(long, value_name = "RULES")]
        rules: Option<String>,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Print the activity log and check it: its chain, its line endings, its head record, and
    /// that every change of policy.json was logged (exit 1 naming each edit).
    ///
    /// An unkeyed chain can be rewritten whole by whoever can write the store: --head prints
    /// the chain head (`<lines>:<sha256>`) to keep elsewhere, and --since HEAD later proves the
    /// log still extends it.
    ///
    /// Example: socair airlock log --store /srv/airlock
    ///
    /// Example: socair airlock log --since "$(cat anchored-head.txt)"
    Log {
        /// Print only the chain head, `<lines>:<sha256 of the last line>`.
        #[arg(long, conflicts_with = "since")]
        head: bool,
        /// Check that the log extends this anchored head (as `--head` printed it).
        #[arg(long, value_name = "HEAD")]
        since: Option<String>,
        /// Print the log's JSON lines even on a terminal (what goes to a pipe).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// `socair tensors` subcommands.
#[derive(Debug, Subcommand)]
pub enum TensorsAction {
    /// File a signed manifest (`socair tensors M --sign`) in a feed directory under its
    /// model's name and digest, listed last for that name: `scan --reference-feed DIR` then
    /// compares a model of that name with it.
    ///
    /// Example: socair tensors publish tiny-bert.tensors.dsse.json --feed /srv/feed
    Publish {
        /// The signed manifest.
        envelope: PathBuf,
        /// The feed directory (created when missing).
        #[arg(long, value_name = "DIR")]
        feed: PathBuf,
    },
    /// Compare an artifact with a reference, tensor by tensor (socair.tensors.diff/v1).
    ///
    /// Either side is a model (file or directory, any format a plugin reads) or a manifest
    /// `socair tensors` wrote. Tensors pair by name first (identical, same values, differs,
    /// not comparable, lower precision; aliases a safetensors file records count as names),
    /// then by content for names the other side lacks (renamed; llama Q/K projections also
    /// after undoing llama.cpp's row permutation, either side the GGUF), then, when both sides
    /// are models, by values (rounded copies, transposed 2-D tensors, and a block-quantized
    /// GGUF tensor against a float one of its name or role, held to each block's error bound:
    /// same_weights_quantized, or differs_beyond_quantization naming the rows or columns);
    /// the rest is only in one side. A signed manifest (`socair tensors --sign`) is verified
    /// with --pub or --store first. Tensors that differ get
    /// numbers (elements changed, max |Δ|, relative L2, cosine). Writes the comparison as JSON
    /// and a summary naming tensors to standard error. Exits 0 only when every tensor on both
    /// sides matches under its own name, 1 otherwise, 2 when a side cannot be read.
    ///
    /// Example: socair tensors diff model.gguf reviewed.tensors.json --out diff.json
    Diff {
        /// The model (or manifest) to check.
        artifact: PathBuf,
        /// The reference model (or manifest).
        reference: PathBuf,
        /// Write the comparison here (atomically) instead of to standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Also write the comparison as one self-contained HTML page (a per-layer map of
        /// outcomes and relative change, then the tensors that differ or are missing).
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Name at most this many tensors per list in the summary on standard error.
        #[arg(long, value_name = "N", default_value_t = 10)]
        limit: usize,
        /// Print the JSON comparison even on a terminal (it is what goes to a pipe or a file;
        /// on a terminal the summary is printed instead, its verdict first).
        #[arg(long)]
        json: bool,
        /// The public key (K.pub) a signed manifest on either side must verify under
        /// (repeatable; SOCAIR_TENSOR_REFERENCE_PUB=K.pub does the same).
        #[arg(long = "pub", value_name = "KEY.pub", conflicts_with = "store")]
        public_keys: Vec<PathBuf>,
        /// A store whose trust policy's `reference` keys a signed manifest must verify under
        /// (instead of --pub).
        #[arg(long, value_name = "STORE")]
        store: Option<PathBuf>,
    },
}
