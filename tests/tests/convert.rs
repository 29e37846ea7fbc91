//! Conversion end to end: `socair convert` and `socair airlock convert` with its derivation
//! record, against what torch recorded about the fixtures (fixtures/torch/expected.json;
//! fixtures/torch/check_conversions.py checks the outputs against torch.load itself).

use crate::common::{fixture, json, run, socair, Store};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// `socair convert --from torch-zip --to safetensors` under socair-convert/1: these tests hold
/// /1 to what it promised before /2 existed (tests/tests/legacy.rs covers /2).
fn convert(src: &Path, dst: &Path) -> crate::common::Run {
    run(socair().arg("convert").arg(src).arg(dst).args([
        "--from",
        "torch-zip",
        "--to",
        "safetensors",
        "--rules",
        "socair-convert/1",
    ]))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn converted_tensors_are_the_bytes_torch_saved_and_output_is_byte_stable() {
    let expected = json(&std::fs::read_to_string(fixture("torch/expected.json")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let mut converted = 0;
    for (key, case) in expected.as_object().unwrap() {
        let Some(file) = key.strip_prefix("legit/") else {
            continue;
        };
        let src = fixture(&format!("torch/{key}"));
        let out = dir.path().join(format!("{file}.safetensors"));
        let r = convert(&src, &out);
        let tensors = case["tensors"].as_array().unwrap();
        let refusable = tensors
            .iter()
            .any(|t| t["contiguous"] == false || t["dtype"] == "C128");
        if refusable {
            assert_eq!(r.code, 1, "{file}: {}", r.stderr);
            assert!(!out.exists(), "{file}: nothing is left after a refusal");
            continue;
        }
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        converted += 1;
        // Twice gives the same bytes.
        let again = dir.path().join(format!("{file}.again"));
        assert_eq!(convert(&src, &again).code, 0);
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(&again).unwrap(),
            "{file}"
        );
        // Every tensor of the output is the tensor torch saved (by raw bytes, or for the
        // big-endian file by values), under its name or as a named alias.
        let m = json(&run(socair().arg("tensors").arg(&out)).stdout);
        let got: BTreeMap<&str, &serde_json::Value> = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap(), t))
            .collect();
        let bytes = std::fs::read(&out).unwrap();
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let header = json(std::str::from_utf8(&bytes[8..8 + n]).unwrap());
        let meta = &header["__metadata__"];
        assert_eq!(meta["format"], "pt", "{file}");
        for t in tensors {
            let name = t["name"].as_str().unwrap();
            let (name, alias) = match got.get(name) {
                Some(_) => (name, false),
                None => (
                    meta[name]
                        .as_str()
                        .unwrap_or_else(|| panic!("{file}: {name} lost")),
                    true,
                ),
            };
            let g = got[name];
            assert_eq!(g["shape"], t["shape"], "{file}: {name}");
            if case["byteorder"] == "big" {
                assert_eq!(g["values"], t["values"], "{file}: {name}");
            } else if !alias {
                assert_eq!(g["sha256"], t["sha256"], "{file}: {name}");
            }
        }
    }
    assert!(converted >= 9, "{converted}");
}

/// Convert's reader reads a torch checkpoint's headers only and the second path checks the
/// storage records' CRC-32s (`SecondPaths::check_storage_records`): a byte changed in any
/// storage record, one a carried tensor reads or one only the optimizer's state does, is
/// refused, naming the record, as `scan` fails it.
#[test]
fn a_changed_byte_in_any_storage_record_is_refused_carried_or_not() {
    let src = fixture("torch/legit/training-checkpoint.pt");
    let bytes = std::fs::read(&src).unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&bytes)).unwrap();
    let records: Vec<(String, u64, u64)> = (0..archive.len())
        .map(|i| {
            let e = archive.by_index(i).unwrap();
            (e.name().to_owned(), e.data_start(), e.size())
        })
        .filter(|(name, _, size)| name.contains("/data/") && *size > 0)
        .collect();
    // The six state_dict tensors are carried; the optimizer's 18 storages are not.
    assert_eq!(records.len(), 25);
    let dir = tempfile::tempdir().unwrap();
    for (name, start, size) in records {
        let mut changed = bytes.clone();
        changed[(start + size - 1) as usize] ^= 0x01;
        let input = dir.path().join("changed.pt");
        std::fs::write(&input, &changed).unwrap();
        let out = dir.path().join("out.safetensors");
        let r = convert(&input, &out);
        assert_eq!(r.code, 1, "{name}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "changed.pt: record {name}: its CRC-32 does not hold"
            )),
            "{name}: {}",
            r.stderr
        );
        assert!(!out.exists(), "{name}");
        let scan = run(socair().args(["scan", "--json"]).arg(&input));
        assert_eq!(scan.code, 1, "{name}: {}", scan.stderr);
        assert!(scan.stdout.contains("CRC-32 does not hold"), "{name}");
        std::fs::remove_file(&input).unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{name}: {left:?}");
    }
}

#[test]
fn every_refusal_of_the_rules_names_its_reason_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for (src, why) in [
        ("torch/legit/noncontiguous.pt", "not contiguous"),
        ("torch/baseline/conj-bit.pt", "conj/neg bit"),
        ("torch/baseline/neg-bit.pt", "conj/neg bit"),
        (
            "torch/baseline/overlapping-views.pt",
            "overlap in storage without being the same tensor",
        ),
        // socair-wo/3 makes a checkpoint without CRC-32s a LEAD, which conversion refuses.
        ("torch/malicious/zip-crc-absent.pt", "not PASS"),
        ("torch/malicious/zip-crc-mismatch.pt", "FAIL"),
        ("torch/malicious/pickle-os-system.pt", "FAIL"),
        ("torch/weights-only/nested.pt", "not PASS"),
        ("torch/legit/all-dtypes.pt", "C128"),
    ] {
        let out = dir.path().join("out.safetensors");
        let r = convert(&fixture(src), &out);
        assert_eq!(r.code, 1, "{src}: {}", r.stderr);
        assert!(r.stderr.contains(why), "{src}: {why:?} not in {}", r.stderr);
        assert!(!out.exists(), "{src}");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(leftovers.is_empty(), "{src}: {leftovers:?}");
    }
    // Formats are never guessed: a safetensors file is not converted as a torch checkpoint.
    let r = convert(
        &fixture("safetensors/all-dtypes.safetensors"),
        &dir.path().join("x.safetensors"),
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("reads as safetensors, not torch-zip"),
        "{}",
        r.stderr
    );
}

#[test]
fn safetensors_and_gguf_convert_both_ways_when_exact() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = dir.path().join("m.gguf");
    let r = run(socair()
        .arg("convert")
        .arg(fixture("diff/reference/model.safetensors"))
        .arg(&gguf)
        .args(["--from", "safetensors", "--to", "gguf"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let back = dir.path().join("back.safetensors");
    let r = run(socair().arg("convert").arg(&gguf).arg(&back).args([
        "--from",
        "gguf",
        "--to",
        "safetensors",
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let d = run(socair()
        .args(["tensors", "diff"])
        .arg(&back)
        .arg(fixture("diff/reference/model.safetensors")));
    assert_eq!(d.code, 0, "round trip keeps every tensor: {}", d.stderr);
    // A quantized GGUF has no exact safetensors form; U8 has no GGUF type.
    let r = run(socair()
        .arg("convert")
        .arg(fixture("diff/quantized.gguf"))
        .arg(dir.path().join("q.safetensors"))
        .args(["--from", "gguf", "--to", "safetensors"]));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("block-quantized"), "{}", r.stderr);
    let r = run(socair()
        .arg("convert")
        .arg(fixture("safetensors/all-dtypes.safetensors"))
        .arg(dir.path().join("u8.gguf"))
        .args(["--from", "safetensors", "--to", "gguf"]));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("cannot hold"), "{}", r.stderr);
    // A model directory converts to one file.
    let one = dir.path().join("one.safetensors");
    let r = run(socair()
        .arg("convert")
        .arg(fixture("diff/resharded"))
        .arg(&one)
        .args(["--from", "model-dir", "--to", "safetensors"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let d = run(socair()
        .args(["tensors", "diff"])
        .arg(&one)
        .arg(fixture("diff/reference/model.safetensors")));
    assert_eq!(d.code, 0, "{}", d.stderr);
}

#[test]
fn airlock_convert_writes_a_verifiable_derivation_record() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let deriver = s.key("deriver.key", "derive");
    let src = s.dir.path().join("pytorch_model.bin");
    std::fs::copy(
        fixture("torch/baseline/hf-gpt2-tied-pytorch_model.bin"),
        &src,
    )
    .unwrap();
    let att = s.attest(&src, &scanner);
    let r = s.run(&[
        "airlock",
        "convert",
        src.to_str().unwrap(),
        "--attestation",
        &att,
        "--key",
        &deriver,
        "--rules",
        "socair-convert/1",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("under socair-convert/1"), "{}", r.stderr);
    let out_sha = r.stdout.trim().to_owned();
    let staged = s.path().join("incoming").join(&out_sha);
    let output = staged.join("pytorch_model.safetensors");
    assert!(output.is_file());
    let v = s.verify_derivation(&out_sha, &src, "pytorch_model.safetensors");
    assert_eq!(v.code, 0, "{}", v.stderr);
    let statement = json(&v.stdout);
    assert_eq!(
        statement["predicateType"],
        "https://socair.ai/derivation/v1"
    );
    assert_eq!(
        statement["subject"][0]["digest"]["sha256"],
        out_sha.as_str()
    );
    let p = &statement["predicate"];
    assert_eq!(p["rules"]["socair-convert"], "1");
    assert_eq!(p["aliases"]["transformer.wte.weight"], "lm_head.weight");
    assert_eq!(p["input"]["not_tested"][0], "Format and structure");
    assert!(p["not_carried"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("_metadata")));

    // A reviewer with only the input checks every tensor: read size_bytes from
    // source.record at source.offset_bytes and hash them (here with the zip crate).
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&src).unwrap()).unwrap();
    for t in p["tensors"].as_array().unwrap() {
        let mut rec = archive
            .by_name(t["source"]["record"].as_str().unwrap())
            .unwrap();
        let mut all = Vec::new();
        rec.read_to_end(&mut all).unwrap();
        let off = t["source"]["offset_bytes"].as_u64().unwrap() as usize;
        let len = t["source"]["size_bytes"].as_u64().unwrap() as usize;
        assert_eq!(
            hex(&Sha256::digest(&all[off..off + len])),
            t["sha256"].as_str().unwrap()
        );
    }
    // The output is a new artifact: it must itself be scanned and gated.
    let r = s.run(&["airlock", "promote", &out_sha]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no attestation"), "{}", r.stderr);
    let log = s.run(&["airlock", "log"]);
    assert!(
        log.stdout
            .contains("\"action\":\"convert\",\"outcome\":\"ok\""),
        "{}",
        log.stdout
    );
}

#[test]
fn airlock_convert_refuses_each_gate_condition() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let deriver = s.key("deriver.key", "derive");
    let outsider = s.key("outsider.key", "");
    let src = s.dir.path().join("state-dict.pt");
    std::fs::copy(fixture("torch/legit/state-dict.pt"), &src).unwrap();
    let good = s.attest(&src, &scanner);
    let convert = |att: &str, key: &str, file: &Path| {
        s.run(&[
            "airlock",
            "convert",
            file.to_str().unwrap(),
            "--attestation",
            att,
            "--key",
            key,
            "--rules",
            "socair-convert/1",
        ])
    };
    let refused = |r: crate::common::Run, why: &str| {
        assert_eq!(r.code, 1, "{why}: {}", r.stderr);
        assert!(r.stderr.contains(why), "{why:?} not in {}", r.stderr);
    };
    refused(convert(&good, &scanner, &src), "role `derive`");
    refused(
        convert(&s.attest(&src, &outsider), &deriver, &src),
        "does not verify under a trusted key",
    );
    let other = s.dir.path().join("other.pt");
    std::fs::copy(fixture("torch/legit/tied.pt"), &other).unwrap();
    refused(convert(&good, &deriver, &other), "not the attested subject");
    let dir_att = s.attest(&fixture("safetensors/tiny-bert"), &scanner);
    refused(convert(&dir_att, &deriver, &src), "model directory");
    let bad = s.dir.path().join("bad.pt");
    std::fs::copy(fixture("torch/malicious/pickle-os-system.pt"), &bad).unwrap();
    refused(
        convert(&s.attest(&bad, &scanner), &deriver, &bad),
        "row is FAIL",
    );
    let nc = s.dir.path().join("nc.pt");
    std::fs::copy(fixture("torch/legit/noncontiguous.pt"), &nc).unwrap();
    refused(
        convert(&s.attest(&nc, &scanner), &deriver, &nc),
        "not contiguous",
    );
    // Changed after attestation.
    let mut bytes = std::fs::read(&src).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&src, bytes).unwrap();
    refused(convert(&good, &deriver, &src), "not the attested subject");
    // Nothing reached staging; the work area is clean; every refusal is in the log.
    assert_eq!(
        std::fs::read_dir(s.path().join("incoming"))
            .unwrap()
            .count(),
        0
    );
    assert_eq!(std::fs::read_dir(s.path().join("work")).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(s.path().join(".tmp")).unwrap().count(), 0);
    let log = s.run(&["airlock", "log"]);
    assert_eq!(log.code, 0);
    assert_eq!(
        log.stdout
            .matches("\"convert\",\"outcome\":\"refused\"")
            .count(),
        7
    );
}

#[test]
fn verification_catches_an_output_byte_that_differs_from_the_input() {
    let dir = tempfile::tempdir().unwrap();
    for (src, from, why) in [
        // zip input: compared in step with the record the zip crate reads.
        (
            "torch/legit/state-dict.pt",
            "torch-zip",
            "differs from the output at byte",
        ),
        // legacy input: compared in step with a direct read of the storage.
        (
            "torch/legacy/state-dict.pt",
            "torch-legacy",
            "differs from the output at byte",
        ),
        // a gathered tensor: compared by hash with the index-based gather.
        (
            "torch/legit/noncontiguous.pt",
            "torch-zip",
            "gathered from the input by a second path",
        ),
        // safetensors input: compared in step with a direct read.
        (
            "diff/reference/model.safetensors",
            "safetensors",
            "differs from the output at byte",
        ),
    ] {
        let out = dir.path().join("out.safetensors");
        let r = run(socair()
            .env("SOCAIR_FAULT", "convert.flip-output")
            .arg("convert")
            .arg(fixture(src))
            .arg(&out)
            .args(["--from", from, "--to", "safetensors"]));
        assert_eq!(r.code, 1, "{src}: {}", r.stderr);
        assert!(
            r.stderr.contains("verification of the output failed"),
            "{src}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(why), "{src}: {why:?} not in {}", r.stderr);
        assert!(!out.exists(), "{src}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{src}");
    }
}

#[test]
fn a_derivation_record_says_what_the_inputs_byteorder_record_said() {
    for (fixture_path, expected) in [
        (
            "torch/legit/no-byteorder.pt",
            "little (no byteorder record: read as little-endian, as torch.load does)",
        ),
        (
            "torch/legit/state-dict.pt",
            "little (byteorder record \"little\")",
        ),
        (
            "torch/legit/big-endian.pt",
            "big (byteorder record \"big\": swapped to little-endian; tensor hashes are of the little-endian bytes)",
        ),
        (
            "torch/legacy/state-dict.pt",
            "little (legacy format, which has no byteorder record: storages read as little-endian)",
        ),
    ] {
        // A store each: inputs with the same tensors convert to one output.
        let s = Store::new();
        let scanner = s.key("scanner.key", "scan");
        let deriver = s.key("deriver.key", "derive");
        let src = s.dir.path().join(fixture_path.replace('/', "_"));
        std::fs::copy(fixture(fixture_path), &src).unwrap();
        let att = s.attest(&src, &scanner);
        let r = s.run(&[
            "airlock",
            "convert",
            src.to_str().unwrap(),
            "--attestation",
            &att,
            "--key",
            &deriver,
        ]);
        assert_eq!(r.code, 0, "{fixture_path}: {}", r.stderr);
        let out_sha = r.stdout.trim().to_owned();
        let out_name = std::fs::read_dir(s.path().join("incoming").join(&out_sha))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .find(|n| n.ends_with(".safetensors"))
            .unwrap();
        let v = s.verify_derivation(&out_sha, &src, &out_name);
        assert_eq!(v.code, 0, "{fixture_path}: {}", v.stderr);
        let statement = json(&v.stdout);
        assert_eq!(
            statement["predicate"]["byte_order"], expected,
            "{fixture_path}"
        );
        // The reader gives the record as a fact, never as metadata the output failed to carry.
        assert!(
            !v.stdout.contains("socair.byteorder_record"),
            "{fixture_path}: {}",
            v.stdout
        );
    }
}
