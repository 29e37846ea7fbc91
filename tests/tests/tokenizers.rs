//! SentencePiece tokenizer models beside a model (`tokenizer.model` of Llama, Mistral, T5...):
//! data when the whole file is the ModelProto sentencepiece writes, a LEAD naming the byte
//! otherwise (fixtures/sentencepiece, written by sentencepiece 0.2.1: make_fixtures.py, with
//! what the library loads in expected.json).

use crate::common::{fixture, json, run, socair};

/// Scans a directory holding `file` as `tokenizer.model`: (exit code, the row's summary).
fn scan_as_tokenizer(file: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture(&format!("sentencepiece/{file}")),
        dir.path().join("tokenizer.model"),
    )
    .unwrap();
    let r = run(socair().arg("scan").arg(dir.path()));
    let report = json(&r.stdout);
    (
        r.code,
        report["rows"][0]["summary"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn sentencepiece_models_are_data_and_other_bytes_a_lead() {
    let expected = json(&std::fs::read_to_string(fixture("sentencepiece/expected.json")).unwrap());
    let cases = expected.as_object().unwrap();
    assert!(cases.len() >= 7);
    for (file, case) in cases {
        let (code, summary) = scan_as_tokenizer(file);
        if case["data"] == true {
            // Its library loads every one of these.
            assert_eq!(case["loads"], true, "{file}");
            assert_eq!(code, 0, "{file}: {summary}");
            let what = if file.starts_with("tiktoken") {
                "a tiktoken BPE vocabulary"
            } else {
                "a SentencePiece tokenizer model"
            };
            assert!(summary.contains(what), "{file}: {summary}");
        } else {
            // Refused by sentencepiece, or outside what spm_train writes though it loads.
            assert_eq!(code, 1, "{file}: {summary}");
            assert!(
                summary.contains("named as a tokenizer model, but neither the ModelProto sentencepiece writes (byte "),
                "{file}: {summary}"
            );
        }
    }
}

/// The other names tokenizer files go by: Mistral's `tokenizer.model.v3`, Llama 3's tiktoken
/// `original/tokenizer.model`, GPT-2's `vocab.bpe` (text), sentencepiece's `.vocab` listing.
#[test]
fn tokenizer_files_under_their_other_names_are_data() {
    let dir = tempfile::tempdir().unwrap();
    let copy = |from: &str, to: &str| {
        let to = dir.path().join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixture(&format!("sentencepiece/{from}")), to).unwrap();
    };
    copy("bpe.model", "tokenizer.model.v3");
    copy("tiktoken.model", "original/tokenizer.model");
    copy("unigram.model", "spiece.model");
    std::fs::write(dir.path().join("vocab.bpe"), "#version: 0.2\n\u{120} t\n").unwrap();
    std::fs::write(
        dir.path().join("spiece.vocab"),
        "<unk>\t0\n\u{2581}t\t-1.5\n",
    )
    .unwrap();
    let r = run(socair().arg("scan").arg(dir.path()));
    assert_eq!(r.code, 0, "{}", r.stdout);
    // A `.model` of another library's is not called a tokenizer: the generic LEAD.
    std::fs::write(dir.path().join("booster.model"), b"binf\0\0\0\x01").unwrap();
    let r = run(socair().arg("scan").arg(dir.path()));
    assert_eq!(r.code, 1);
    let summary = json(&r.stdout)["rows"][0]["findings"][0]["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(summary.contains("neither JSON nor text"), "{summary}");
}

/// The llama directory of fixtures/diff (transformers' save_pretrained and a tokenizer.model
/// sentencepiece trained) is clean, and `socair tensors` reads all of it.
#[test]
fn a_llama_directory_with_its_tokenizer_is_clean() {
    let dir = fixture("diff/llamacpp/llama");
    assert!(dir.join("tokenizer.model").is_file());
    let r = run(socair().arg("scan").arg(&dir));
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = run(socair().arg("tensors").arg(&dir));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(json(&r.stdout)["unread"].as_array().unwrap().is_empty());
}
