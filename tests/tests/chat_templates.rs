//! Chat templates judged by one rule wherever they are: a GGUF's
//! `tokenizer.chat_template` metadata (fixtures/gguf/templates, written by gguf-py 0.19.0), a
//! model directory's `tokenizer_config.json` / `chat_template.jinja`, and the same files in an
//! archive. The templates are fixtures/jinja's (crosscheck.py shows what jinja2 3.1.6 does with
//! each: the hostile ones reach Python internals unsandboxed, the ordinary ones render in the
//! sandbox).

use crate::common::{fixture, json, run, socair};
use serde_json::Value;
use std::io::Write;
use std::path::Path;

fn scan(path: &Path) -> (i32, Value) {
    let r = run(socair().arg("scan").arg(path));
    (r.code, json(&r.stdout))
}

fn structure(report: &Value) -> &Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "Format and structure")
        .unwrap()
}

#[test]
fn a_gguf_template_that_reaches_python_internals_fails_with_its_place() {
    for (file, key) in [
        ("hostile.gguf", "tokenizer.chat_template.rag"),
        ("hostile-default.gguf", "tokenizer.chat_template"),
    ] {
        let (code, report) = scan(&fixture(&format!("gguf/templates/{file}")));
        assert_eq!(code, 1, "{file}");
        let row = structure(&report);
        assert_eq!(row["status"], "FAIL", "{file}: {row:#}");
        let f = &row["findings"][0];
        assert_eq!(
            f["place"],
            format!("metadata {key} line 1 column 16"),
            "{file}: {row:#}"
        );
        assert!(f["reason"].as_str().unwrap().contains("CVE-2024-34359"));
        assert!(row["summary"]
            .as_str()
            .unwrap()
            .contains("reaching Python internals"));
    }
    let (code, report) = scan(&fixture("gguf/templates/ordinary.gguf"));
    assert_eq!(code, 0, "{report:#}");
    let row = structure(&report);
    assert_eq!(row["status"], "PASS");
    assert!(row["summary"]
        .as_str()
        .unwrap()
        .contains("2 chat template(s) parsed as Jinja"));
}

fn model_dir(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("safetensors/all-dtypes.safetensors"),
        dir.path().join("model.safetensors"),
    )
    .unwrap();
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

fn hostile() -> String {
    std::fs::read_to_string(fixture("jinja/hostile/cve-2024-34359.jinja")).unwrap()
}

#[test]
fn a_model_directorys_templates_are_judged_as_the_ggufs_are() {
    let config = serde_json::json!({"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": hostile()})
        .to_string();
    for (name, bytes) in [
        ("tokenizer_config.json", config.as_bytes()),
        ("chat_template.jinja", hostile().as_bytes()),
        ("additional_chat_templates/rag.jinja", hostile().as_bytes()),
    ] {
        let dir = model_dir(&[(name, bytes)]);
        let (code, report) = scan(dir.path());
        assert_eq!(code, 1, "{name}");
        let row = structure(&report);
        assert_eq!(row["status"], "FAIL", "{name}: {row:#}");
        let places: Vec<&str> = row["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["place"].as_str().unwrap())
            .collect();
        assert!(
            places
                .iter()
                .any(|p| p.starts_with(&format!("{name}: ")) && p.ends_with("line 1 column 16")),
            "{name}: {places:?}"
        );
    }
    // Real tokenizer configs (DeepSeek-R1-Distill-Qwen-32B, a Gemma 2) are data.
    let deepseek = std::fs::read(fixture(
        "jinja/tokenizer_config/deepseek-r1-distill-qwen-32b.json",
    ))
    .unwrap();
    let ordinary = std::fs::read(fixture("jinja/ordinary/qwen2.5-instruct.jinja")).unwrap();
    let dir = model_dir(&[
        ("tokenizer_config.json", &deepseek),
        ("chat_template.jinja", &ordinary),
    ]);
    let (code, report) = scan(dir.path());
    assert_eq!(code, 0, "{report:#}");
    let summary = structure(&report)["summary"].as_str().unwrap().to_owned();
    assert!(
        summary.contains("chat_template.jinja: PASS a chat template, parsed as Jinja"),
        "{summary}"
    );
    assert!(
        summary.contains("tokenizer_config.json: PASS a JSON document, parsed as data; its chat template parsed as Jinja"),
        "{summary}"
    );
}

#[test]
fn an_archives_templates_are_judged_as_a_directorys_are() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("model/tokenizer_config.json", stored)
        .unwrap();
    zip.write_all(
        serde_json::json!({"chat_template": [{"name": "default", "template": hostile()}]})
            .to_string()
            .as_bytes(),
    )
    .unwrap();
    zip.finish().unwrap();
    let (code, report) = scan(&path);
    assert_eq!(code, 1);
    let row = structure(&report);
    assert_eq!(row["status"], "FAIL", "{row:#}");
    assert!(
        row.to_string()
            .contains(r#"chat_template[0] (\"default\") line 1 column 16"#),
        "{row:#}"
    );
}

#[test]
fn a_gguf_of_version_1_cannot_be_read() {
    for file in [
        "gguf/unreadable/version-1.gguf",
        "gguf/malformed/version-1.gguf",
    ] {
        for cmd in ["scan", "tensors"] {
            let r = run(socair().arg(cmd).arg(fixture(file)));
            assert_eq!(r.code, 2, "{cmd} {file}: {}", r.stdout);
            assert!(
                r.stderr.contains("GGUF version 1"),
                "{cmd} {file}: {}",
                r.stderr
            );
            assert!(
                r.stderr.contains("cannot read"),
                "{cmd} {file}: {}",
                r.stderr
            );
            // A refusal of the format's version, not a plugin that failed.
            assert!(
                r.stderr
                    .contains("plugin `gguf` does not read it: byte 4: GGUF version 1")
                    && !r.stderr.contains("failed"),
                "{cmd} {file}: {}",
                r.stderr
            );
        }
    }
}

/// A name the template computes (a loop variable, a `set` variable, `[...]|first`,
/// a filter name held in a variable) is judged the same way in a model directory's
/// `tokenizer_config.json` (a string or a list of named templates), its
/// `chat_template.jinja`, and a zip (fixtures/jinja/hostile-tokenizer_config and hostile/,
/// each shown by crosscheck.py to reach `os.getcwd()` under a plain jinja2 3.1.6).
#[test]
fn computed_names_fail_in_every_place_a_template_travels() {
    for config in [
        "deepseek-computed-attr.json",
        "named-templates-map-filter.json",
    ] {
        let bytes =
            std::fs::read(fixture(&format!("jinja/hostile-tokenizer_config/{config}"))).unwrap();
        let dir = model_dir(&[("tokenizer_config.json", &bytes)]);
        let (code, report) = scan(dir.path());
        assert_eq!(code, 1, "{config}: {report:#}");
        assert_eq!(structure(&report)["status"], "FAIL", "{config}");
    }
    for hostile in [
        "loop-variable-attr.jinja",
        "computed-filter-name.jinja",
        "macro-argument-attr.jinja",
    ] {
        let text = std::fs::read(fixture(&format!("jinja/hostile/{hostile}"))).unwrap();
        let dir = model_dir(&[("chat_template.jinja", &text)]);
        let (code, report) = scan(dir.path());
        assert_eq!(code, 1, "{hostile}: {report:#}");
        assert_eq!(structure(&report)["status"], "FAIL", "{hostile}");

        let zdir = tempfile::tempdir().unwrap();
        let path = zdir.path().join("model.zip");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        zip.start_file("model/chat_template.jinja", stored).unwrap();
        zip.write_all(&text).unwrap();
        zip.finish().unwrap();
        let (code, report) = scan(&path);
        assert_eq!(code, 1, "zip {hostile}: {report:#}");
        assert_eq!(structure(&report)["status"], "FAIL", "zip {hostile}");
    }
}
