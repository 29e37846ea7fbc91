//! The seams of the trust chain: `socair verify` answers "can I trust this file?",
//! the activity log shows every edit it can, keys are ones other tools read, a killed
//! conversion leaves nothing later runs keep, signed payloads are strict, and every refusal is
//! traceable. (Who reads a pinned format is `readers.rs`.)

use crate::common::{fixture, json, run, socair, Store};
use std::path::{Path, PathBuf};

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn attest(src: &Path, key: &str, out: &Path) -> crate::common::Run {
    run(socair()
        .arg("attest")
        .arg(src)
        .arg("--key")
        .arg(key)
        .arg("--out")
        .arg(out))
}

#[test]
fn verify_answers_whether_a_file_can_be_trusted() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let reviewer = s.key("reviewer.key", "accept");
    let clean = fixture("safetensors/all-dtypes.safetensors");
    let dir = s.dir.path();
    let store = s.path();
    let verify = |args: &[&dyn AsRef<std::ffi::OsStr>]| {
        let mut cmd = socair();
        cmd.arg("verify");
        for a in args {
            cmd.arg(a);
        }
        run(cmd.arg("--store").arg(&store))
    };

    // A clean scan, signed by a scan key, about these bytes: every condition holds. `attest`
    // says what verdict it signed.
    let att = dir.join("clean.att.json");
    let a = attest(&clean, &scanner, &att);
    assert_eq!(a.code, 0, "{}", a.stderr);
    assert!(
        a.stderr
            .contains("verdict signed: PASS Format and structure"),
        "{}",
        a.stderr
    );
    let ok = verify(&[&att, &clean]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stderr.contains("hashes to the subject"), "{}", ok.stderr);
    assert!(
        ok.stderr.contains("the signer holds the role `scan`"),
        "{}",
        ok.stderr
    );
    assert!(
        ok.stderr.contains("signed row: PASS Format and structure"),
        "{}",
        ok.stderr
    );
    assert_eq!(
        json(&ok.stdout)["predicateType"],
        "https://socair.ai/scan/v1"
    );

    // Another file is not the signed artifact.
    let other = fixture("safetensors/tiny-bert/model-00001-of-00004.safetensors");
    let r = verify(&[&att, &other]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("not the subject")
            && r.stderr.contains("it is not the artifact that was signed"),
        "{}",
        r.stderr
    );

    // A scan signed by a key the store trusts only to accept.
    let by_reviewer = dir.join("reviewer.att.json");
    assert_eq!(attest(&clean, &reviewer, &by_reviewer).code, 0);
    let r = verify(&[&by_reviewer, &clean]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("does not hold the role `scan` that a https://socair.ai/scan/v1 needs"),
        "{}",
        r.stderr
    );
    // With --pub there are no roles: the signature and the artifact hold.
    let r = run(socair()
        .arg("verify")
        .arg(&by_reviewer)
        .arg(&clean)
        .arg("--pub")
        .arg(format!("{reviewer}.pub")));
    assert_eq!(r.code, 0, "{}", r.stderr);

    // A signed FAIL is a valid signature on a negative verdict: not trusted, unless only the
    // signature is asked about.
    let hostile = fixture("safetensors/malformed/aliased-tensors.safetensors");
    let bad = dir.join("bad.att.json");
    let a = attest(&hostile, &scanner, &bad);
    assert_eq!(a.code, 1, "{}", a.stderr);
    assert!(
        a.stderr
            .contains("verdict signed: FAIL Format and structure"),
        "{}",
        a.stderr
    );
    let r = verify(&[&bad, &hostile]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("refused: the signed report's \"Format and structure\" row is FAIL"),
        "{}",
        r.stderr
    );
    let r = verify(&[&bad, &"--signature-only"]);
    assert_eq!(r.code, 0, "{}", r.stderr);

    // Not an envelope at all: said in words, exit 2.
    let r = verify(&[&clean]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is not a DSSE envelope"), "{}", r.stderr);
}

#[test]
fn verify_checks_a_derivation_records_input_and_output() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let converter = s.key("converter.key", "derive");
    let src = s.dir.path().join("model.pt");
    std::fs::copy(fixture("torch/legit/state-dict.pt"), &src).unwrap();
    let att = s.attest(&src, &scanner);
    let c = s.run(&[
        "airlock",
        "convert",
        src.to_str().unwrap(),
        "--attestation",
        &att,
        "--key",
        &converter,
    ]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    let out_sha = c.stdout.trim().to_owned();
    let staged = s.path().join("incoming").join(&out_sha);
    let record = staged.join("derivation.dsse.json");
    let output = staged.join("model.safetensors");
    let r = s.run(&[
        "verify",
        record.to_str().unwrap(),
        output.to_str().unwrap(),
        "--input",
        src.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("hashes to the record's input"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("the signer holds the role `derive`"),
        "{}",
        r.stderr
    );
    // Another input: its sha256 is not the record's.
    let other = fixture("torch/legit/tied.pt");
    let r = s.run(&[
        "verify",
        record.to_str().unwrap(),
        output.to_str().unwrap(),
        "--input",
        other.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("not the record's input"), "{}", r.stderr);
}

/// Signs `payload` as a DSSE envelope with the private key at `key` (PKCS#8 PEM).
fn sign(payload: &[u8], key: &str) -> Vec<u8> {
    use base64::Engine;
    use ed25519_dalek::pkcs8::DecodePrivateKey;
    use ed25519_dalek::Signer;
    let key =
        ed25519_dalek::SigningKey::from_pkcs8_pem(&std::fs::read_to_string(key).unwrap()).unwrap();
    let ty = "application/vnd.in-toto+json";
    let mut pae = format!("DSSEv1 {} {ty} {} ", ty.len(), payload.len()).into_bytes();
    pae.extend_from_slice(payload);
    let b64 = base64::engine::general_purpose::STANDARD;
    serde_json::to_vec(&serde_json::json!({
        "payload": b64.encode(payload),
        "payloadType": ty,
        "signatures": [{"keyid": "", "sig": b64.encode(key.sign(&pae).to_bytes())}],
    }))
    .unwrap()
}

#[test]
fn duplicate_keys_in_a_signed_payload_are_refused() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let clean = fixture("safetensors/all-dtypes.safetensors");
    let att = s.dir.path().join("clean.att.json");
    assert_eq!(attest(&clean, &scanner, &att).code, 0);
    let verified = run(socair()
        .arg("verify")
        .arg(&att)
        .arg("--signature-only")
        .arg("--pub")
        .arg(format!("{scanner}.pub")));
    let payload = verified.stdout.trim_end().to_owned();
    // The same statement with a second "status" in the first row: which one counts would
    // depend on the reader.
    let twice = payload.replacen(
        "\"status\":\"PASS\"",
        "\"status\":\"FAIL\",\"status\":\"PASS\"",
        1,
    );
    assert_ne!(twice, payload);
    let forged = s.dir.path().join("forged.att.json");
    std::fs::write(&forged, sign(twice.as_bytes(), &scanner)).unwrap();
    let r = run(socair()
        .arg("verify")
        .arg(&forged)
        .arg(&clean)
        .arg("--pub")
        .arg(format!("{scanner}.pub")));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("appears twice in one object"),
        "{}",
        r.stderr
    );
    // The gate refuses it too.
    let sha = s.run(&["airlock", "pull", clean.to_str().unwrap()]);
    let sha = sha.stdout.trim();
    std::fs::copy(
        &forged,
        s.path()
            .join("incoming")
            .join(sha)
            .join("attestation.dsse.json"),
    )
    .unwrap();
    let r = s.run(&["airlock", "promote", sha]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("appears twice"), "{}", r.stderr);
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn keys_are_pkcs8_v1_that_other_tools_read_and_files_have_their_modes() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("k");
    let r = run(socair().arg("keygen").arg("--out").arg(&key));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(mode(&key), 0o600);
    let public = dir.path().join("k.pub");
    assert_eq!(mode(&public), 0o644);
    // keygen onto an existing key says so and changes nothing.
    let before = std::fs::read(&key).unwrap();
    let again = run(socair().arg("keygen").arg("--out").arg(&key));
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    assert_eq!(std::fs::read(&key).unwrap(), before);

    // OpenSSL reads the private key, and derives the same public key socair wrote.
    match std::process::Command::new("openssl")
        .args(["pkey", "-pubout", "-in"])
        .arg(&key)
        .output()
    {
        Ok(out) => {
            assert!(
                out.status.success(),
                "openssl pkey refused the key: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                String::from_utf8(out.stdout).unwrap(),
                std::fs::read_to_string(&public).unwrap()
            );
        }
        Err(e) => eprintln!("skipped the openssl check: {e}"),
    }
    // Python's `cryptography`, where it is installed.
    let py = std::process::Command::new("python3")
        .arg("-c")
        .arg("import sys\ntry:\n from cryptography.hazmat.primitives.serialization import load_pem_private_key\nexcept ImportError:\n sys.exit(3)\nload_pem_private_key(open(sys.argv[1],'rb').read(), None)")
        .arg(&key)
        .status();
    match py.map(|s| s.code()) {
        Ok(Some(0)) => {}
        Ok(Some(3)) | Err(_) => eprintln!("skipped the Python cryptography check"),
        Ok(other) => panic!("Python cryptography refused the key: {other:?}"),
    }

    // Documents are for others to read: 0644.
    let report = dir.path().join("report.json");
    let r = run(socair()
        .arg("scan")
        .arg(fixture("safetensors/all-dtypes.safetensors"))
        .arg("--out")
        .arg(&report));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(mode(&report), 0o644);
    let att = dir.path().join("a.dsse.json");
    assert_eq!(
        attest(
            &fixture("safetensors/all-dtypes.safetensors"),
            key.to_str().unwrap(),
            &att
        )
        .code,
        0
    );
    assert_eq!(mode(&att), 0o644);
}

/// The store's log, and its lines.
fn log_lines(s: &Store) -> (PathBuf, String) {
    let path = s.path().join("activity.log");
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

#[test]
fn the_log_shows_every_edit_it_can() {
    let s = Store::new();
    s.key("scanner.key", "scan");
    let file = s.dir.path().join("m.safetensors");
    std::fs::copy(fixture("safetensors/all-dtypes.safetensors"), &file).unwrap();
    assert_eq!(s.run(&["airlock", "pull", file.to_str().unwrap()]).code, 0);
    let ok = s.run(&["airlock", "log"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let (path, text) = log_lines(&s);
    assert_eq!(ok.stdout, text);
    // Every entry records the policy as it stood: the last ones, the policy as it is now.
    assert!(text.lines().all(|l| json(l)["policy_sha256"].is_string()));
    assert_eq!(
        json(text.lines().last().unwrap())["policy_sha256"],
        sha256(&std::fs::read(s.path().join("policy.json")).unwrap())
    );

    let check = |edited: &str, why: &str| {
        std::fs::write(&path, edited).unwrap();
        let r = s.run(&["airlock", "log"]);
        assert_eq!(r.code, 1, "{why}: {}", r.stderr);
        assert!(r.stderr.contains(why), "{why:?} not in {}", r.stderr);
        // Nothing is appended to an edited log, and it is not repaired.
        let pull = s.run(&["airlock", "pull", file.to_str().unwrap()]);
        assert_eq!(pull.code, 2, "{}", pull.stderr);
        assert!(
            pull.stderr
                .contains("socair appends nothing to an edited log"),
            "{}",
            pull.stderr
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
        std::fs::write(&path, &text).unwrap();
    };
    // A carriage return, anywhere.
    check(
        &text.replacen('\n', "\r\n", 1),
        "line 1 holds a carriage return",
    );
    // A final newline removed.
    check(
        text.strip_suffix('\n').unwrap(),
        "is a whole entry that lost its newline",
    );
    // The final line edited: no later line vouches for it, the head record does.
    let last = text.lines().last().unwrap();
    let edited_last = last.replace("\"outcome\":\"ok\"", "\"outcome\":\"refused\"");
    assert_ne!(edited_last, last);
    check(&text.replace(last, &edited_last), "the head record says");
    // The final line removed.
    let without_last = &text[..text.len() - last.len() - 1];
    check(without_last, "the head record says");
    assert_eq!(s.run(&["airlock", "log"]).code, 0, "restored");

    // A crash-torn tail is not an edit: a warning, and the next append repairs it and says so.
    std::fs::write(&path, format!("{text}{{\"time\":\"20")).unwrap();
    let r = s.run(&["airlock", "log"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("incomplete line"), "{}", r.stderr);
    assert_eq!(s.run(&["airlock", "pull", file.to_str().unwrap()]).code, 0);
    let r = s.run(&["airlock", "log"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\"action\":\"repair\""), "{}", r.stdout);

    // Anchoring: the head now, then more entries; the log extends it.
    let head = s.run(&["airlock", "log", "--head"]);
    assert_eq!(head.code, 0, "{}", head.stderr);
    let head = head.stdout.trim().to_owned();
    let (n, h) = head.split_once(':').unwrap();
    let (_, text) = log_lines(&s);
    assert_eq!(n.parse::<usize>().unwrap(), text.lines().count());
    assert_eq!(h, sha256(text.lines().last().unwrap().as_bytes()));
    s.key("reviewer.key", "accept");
    let r = s.run(&["airlock", "log", "--since", &head]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("extends the anchored head"),
        "{}",
        r.stderr
    );

    // A whole rewrite by someone who knows the format (an early line changed, every prev and
    // the head recomputed) passes the chain; only an anchor taken before shows it.
    let (path, text) = log_lines(&s);
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[1] = lines[1].replace("\"roles scan\"", "\"roles scan,accept\"");
    assert!(lines[1].contains("scan,accept"), "{}", lines[1]);
    let mut prev = "0".repeat(64);
    for line in lines.iter_mut() {
        let mut v = json(line);
        v["prev"] = prev.clone().into();
        *line = serde_json::to_string(&v).unwrap();
        prev = sha256(line.as_bytes());
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    std::fs::write(
        s.path().join("activity.head"),
        serde_json::to_vec(&serde_json::json!({"lines": lines.len(), "sha256": prev})).unwrap(),
    )
    .unwrap();
    assert_eq!(
        s.run(&["airlock", "log"]).code,
        0,
        "a whole rewrite keeps a chain"
    );
    let r = s.run(&["airlock", "log", "--since", &head]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("the log was rewritten at or before it"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_hand_edit_of_the_policy_is_flagged() {
    let s = Store::new();
    let key = s.key("scanner.key", "scan");
    assert_eq!(s.run(&["airlock", "log"]).code, 0);
    // Roles granted by hand, with no `trust` logged.
    let policy = s.path().join("policy.json");
    let text = std::fs::read_to_string(&policy).unwrap();
    let edited = text.replace("\"scan\"", "\"accept\",\n        \"scan\"");
    assert_ne!(edited, text);
    std::fs::write(&policy, edited).unwrap();
    let r = s.run(&["airlock", "log"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "policy.json is not what line 2 recorded: it was edited after the last logged change"
        ),
        "{}",
        r.stderr
    );
    // The next logged action records the edited policy: the change stays flagged, between
    // the two entries.
    let file = fixture("safetensors/all-dtypes.safetensors");
    assert_eq!(s.run(&["airlock", "pull", file.to_str().unwrap()]).code, 0);
    let r = s.run(&["airlock", "log"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("policy.json changed between line 2 and line 3 with no trust or pin logged"),
        "{}",
        r.stderr
    );
    // A logged trust is not flagged.
    let t = s.run(&["airlock", "trust", &format!("{key}.pub"), "--role", "scan"]);
    assert_eq!(t.code, 0, "{}", t.stderr);
    let r = s.run(&["airlock", "log"]);
    assert!(!r.stderr.contains("line 3 and line 4"), "{}", r.stderr);
}

#[test]
fn a_killed_convert_leaves_no_scratch_that_later_runs_keep() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    let mut child = socair()
        .args(["convert"])
        .arg(fixture("torch/legit/state-dict.pt"))
        .arg(&out)
        .args(["--from", "torch-zip", "--to", "safetensors"])
        .env("SOCAIR_FAULT", "hang:convert.scratch")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let scratch = || -> Vec<String> {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".socair-"))
            .collect()
    };
    let start = std::time::Instant::now();
    while scratch().is_empty() {
        assert!(start.elapsed().as_secs() < 60, "no scratch appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success());
    let left = scratch();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        left[0].starts_with(&format!(".socair-convert-{}-", child.id())),
        "{left:?}"
    );
    assert!(!out.exists());
    // A later run into the same directory removes it, and converts.
    let r = run(socair()
        .args(["convert"])
        .arg(fixture("torch/legit/state-dict.pt"))
        .arg(&out)
        .args(["--from", "torch-zip", "--to", "safetensors"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(scratch(), Vec::<String>::new());
    assert_eq!(mode(&out), 0o644);
}

/// A copy of `src` whose `.data/serialization_id` record (a random id torch writes with
/// every save) is replaced: other bytes, the same tensors. torch's zip writer puts the sizes
/// and CRC-32 in the central directory and in a data descriptor after the record's data.
fn resaved(src: &Path, dst: &Path) {
    let mut bytes = std::fs::read(src).unwrap();
    let name = b"state-dict/.data/serialization_id";
    let u16_at = |b: &[u8], i: usize| u16::from_le_bytes([b[i], b[i + 1]]) as usize;
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) as usize;
    // The central directory entry (name at 46): sizes, CRC-32, and the local header's offset.
    let central = bytes.windows(name.len()).rposition(|w| w == name).unwrap() - 46;
    assert_eq!(&bytes[central..central + 4], b"PK\x01\x02");
    let len = u32_at(&bytes, central + 24);
    let local = u32_at(&bytes, central + 42);
    assert_eq!(&bytes[local..local + 4], b"PK\x03\x04");
    let data = local + 30 + u16_at(&bytes, local + 26) + u16_at(&bytes, local + 28);
    for b in &mut bytes[data..data + len] {
        *b = if *b == b'9' { b'0' } else { b'9' };
    }
    let crc = crc32fast::hash(&bytes[data..data + len]).to_le_bytes();
    bytes[central + 16..central + 20].copy_from_slice(&crc);
    if u16_at(&bytes, local + 6) & 0x08 != 0 {
        // A data descriptor follows the data, with or without its signature.
        let at = data + len;
        let at = if bytes[at..at + 4] == *b"PK\x07\x08" {
            at + 4
        } else {
            at
        };
        bytes[at..at + 4].copy_from_slice(&crc);
    } else {
        bytes[local + 14..local + 18].copy_from_slice(&crc);
    }
    std::fs::write(dst, bytes).unwrap();
}

#[test]
fn inputs_that_convert_to_the_same_bytes_each_keep_their_record_and_refusals_name_the_input() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let converter = s.key("converter.key", "derive");
    let reviewer = s.key("reviewer.key", "accept");
    let first = s.dir.path().join("first.pt");
    std::fs::copy(fixture("torch/legit/state-dict.pt"), &first).unwrap();
    let second = s.dir.path().join("second.pt");
    resaved(&first, &second);
    let (a, b) = (
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap(),
    );
    assert_ne!(sha256(&a), sha256(&b));
    let mut outputs = Vec::new();
    for input in [&first, &second] {
        let att = s.attest(input, &scanner);
        let c = s.run(&[
            "airlock",
            "convert",
            input.to_str().unwrap(),
            "--attestation",
            &att,
            "--key",
            &converter,
        ]);
        assert_eq!(c.code, 0, "{}", c.stderr);
        outputs.push(c.stdout.trim().to_owned());
    }
    assert_eq!(
        outputs[0], outputs[1],
        "the same tensors convert to the same bytes"
    );
    let staged = s.path().join("incoming").join(&outputs[0]);
    for input in [&a, &b] {
        let record = staged
            .join("derivations")
            .join(format!("{}.dsse.json", sha256(input)));
        assert!(record.is_file(), "{}", record.display());
        let r = s.run(&["verify", record.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(
            json(&r.stdout)["predicate"]["input"]["sha256"],
            sha256(input)
        );
    }
    assert!(staged.join("derivation.dsse.json").is_file());

    // A refusal before the attestation is read (a key without the role) is logged with the
    // input's sha256 and the reason.
    let att = s.attest(&first, &scanner);
    let r = s.run(&[
        "airlock",
        "convert",
        first.to_str().unwrap(),
        "--attestation",
        &att,
        "--key",
        &reviewer,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let log = s.run(&["airlock", "log"]);
    let last = json(log.stdout.lines().last().unwrap());
    assert_eq!(last["action"], "convert");
    assert_eq!(last["outcome"], "refused");
    assert_eq!(last["subject"], sha256(&a));
    assert!(
        last["detail"]
            .as_str()
            .unwrap()
            .contains("not in the store's trust policy with role `derive`"),
        "{last}"
    );
}
