//! Plugin discovery and refusal, with real libraries built by this test: one against an
//! incompatible plugin-api version, one against a plugin-api whose types changed layout under
//! the same version, a library that is no socair plugin, a file that is no library at all, and
//! a plugin that panics inside a call.

use crate::common::{
    fixture, fixture_cargo, fixture_target_dir, json, repo, run, socair, target_profile_dir,
    write_if_changed,
};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A minimal plugin: one reader, `panicky`, that claims files starting with `PANIC` and
/// panics when asked to open one.
const PLUGIN_SOURCE: &str = r#"
use abi_stable::{export_root_module, prefix_type::PrefixTypeTrait, sabi_extern_fn,
    sabi_trait::TD_Opaque, std_types::{RResult, RSlice, RString, RVec}};
use socair_plugin_api::*;

#[export_root_module]
fn root_module() -> PluginRoot_Ref {
    PluginRoot { manifest, readers, writers, encoders }.leak_into_prefix()
}

#[sabi_extern_fn]
fn manifest() -> RResult<PluginManifest, PluginError> {
    guard(|| Ok(PluginManifest {
        name: env!("CARGO_PKG_NAME").into(),
        version: "0.0.1".into(),
        plugin_api: PLUGIN_API_VERSION.into(),
        formats_read: RVec::from(vec![RString::from("panicky")]),
        formats_written: RVec::new(),
        rule_sets: RVec::new(),
        encoders: RVec::new(),
    }))
}

#[sabi_extern_fn]
fn readers() -> RResult<RVec<FormatReaderBox>, PluginError> {
    guard(|| Ok(RVec::from(vec![FormatReader_TO::from_value(Panicky, TD_Opaque)])))
}

#[sabi_extern_fn]
fn writers() -> RResult<RVec<FormatWriterBox>, PluginError> { guard(|| Ok(RVec::new())) }

#[sabi_extern_fn]
fn encoders() -> RResult<RVec<FingerprintEncoderBox>, PluginError> { guard(|| Ok(RVec::new())) }

struct Panicky;

impl FormatReader for Panicky {
    fn format(&self) -> RString { "panicky".into() }
    fn detect(&self, head: RSlice<'_, u8>, _len: u64) -> bool { head.as_slice().starts_with(b"PANIC") }
    fn open(&self, _source: ByteSourceRef<'_>, _options: ReadOptions) -> RResult<OpenedFile, PluginError> {
        guard(|| -> Result<OpenedFile, PluginError> { panic!("boom inside the plugin") })
    }
}
"#;

fn write(path: &Path, text: &str) {
    write_if_changed(path, text.as_bytes());
}

/// Copies plugin-api into `dest`, applying `edit` to its Cargo.toml and lib.rs.
fn copy_api(dest: &Path, edit: impl Fn(&str, String) -> String) {
    let src = repo().join("plugin-api");
    let manifest = std::fs::read_to_string(src.join("Cargo.toml")).unwrap();
    let manifest = manifest
        .replace("edition.workspace = true", "edition = \"2021\"")
        .replace("rust-version.workspace = true", "")
        .replace("license.workspace = true", "")
        .replace("publish.workspace = true", "")
        .replace("abi_stable.workspace = true", "abi_stable = \"0.11.3\"");
    write(&dest.join("Cargo.toml"), &edit("Cargo.toml", manifest));
    // Every source file of the crate, `lib.rs` through `edit`.
    for entry in std::fs::read_dir(src.join("src")).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let text = if file == "lib.rs" {
            edit("lib.rs", text)
        } else {
            text
        };
        write(&dest.join("src").join(&file), &text);
    }
}

/// Writes a plugin crate named `name` (its library becomes `libsocair_<name>.so`).
fn plugin_crate(dest: &Path, name: &str, api: &Path, source: &str) {
    write(
        &dest.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"{name}\"\nversion = \"0.0.1\"\nedition = \"2021\"\n\n\
             [lib]\nname = \"socair_{name}\"\ncrate-type = [\"cdylib\"]\n\n\
             [dependencies]\nabi_stable = \"0.11.3\"\nsocair-plugin-api = {{ path = {api:?} }}\n"
        ),
    );
    write(&dest.join("src/lib.rs"), source);
}

fn workspace(dir: &Path, members: &[&str]) {
    let list: Vec<String> = members.iter().map(|m| format!("{m:?}")).collect();
    write(
        &dir.join("Cargo.toml"),
        &format!(
            "[workspace]\nresolver = \"2\"\nmembers = [{}]\n",
            list.join(", ")
        ),
    );
    // Same dependency versions as the main workspace, and no network needed.
    write_if_changed(
        &dir.join("Cargo.lock"),
        &std::fs::read(repo().join("Cargo.lock")).unwrap(),
    );
}

fn cargo_build(workspace: &Path) {
    let status = fixture_cargo("build", &workspace.join("Cargo.toml"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building {} failed", workspace.display());
}

fn lib_name(name: &str) -> String {
    format!(
        "{}socair_{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// Builds every test library once and gathers them in one plugin directory.
fn plugin_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = target_profile_dir().join("plugin-fixtures");
        // Written in place (not removed first): unchanged sources are not rebuilt by a warm run.
        let src = root.join("src");
        let target = fixture_target_dir();

        // 1. Built against plugin-api 0.4.0 (before a finding could name the file it is
        // about): refused.
        let ws = src.join("stale");
        copy_api(&ws.join("api"), |file, text| {
            if file == "Cargo.toml" {
                let edited = text.replace("version = \"0.5.1\"", "version = \"0.4.0\"");
                assert_ne!(edited, text, "plugin-api is no longer 0.5.1");
                edited
            } else {
                text
            }
        });
        plugin_crate(&ws.join("plugin"), "stale", &ws.join("api"), PLUGIN_SOURCE);
        workspace(&ws, &["api", "plugin"]);
        cargo_build(&ws);

        // 2. Same version number, but a field of a type the plugin shares changed type.
        let ws = src.join("relaid");
        copy_api(&ws.join("api"), |file, text| {
            if file == "lib.rs" {
                let edited = text.replace("pub header_only: bool,", "pub header_only: u32,");
                assert_ne!(edited, text, "plugin-api no longer has `header_only: bool`");
                edited
            } else {
                text
            }
        });
        plugin_crate(&ws.join("plugin"), "relaid", &ws.join("api"), PLUGIN_SOURCE);
        workspace(&ws, &["api", "plugin"]);
        cargo_build(&ws);

        // 3. Against the real plugin-api: a plugin that panics, and a library with no root module.
        let ws = src.join("current");
        plugin_crate(
            &ws.join("panicky"),
            "panicky",
            &repo().join("plugin-api"),
            PLUGIN_SOURCE,
        );
        write(
            &ws.join("noroot/Cargo.toml"),
            "[package]\nname = \"noroot\"\nversion = \"0.0.1\"\nedition = \"2021\"\n\n\
             [lib]\nname = \"socair_noroot\"\ncrate-type = [\"cdylib\"]\n",
        );
        write(
            &ws.join("noroot/src/lib.rs"),
            "#[no_mangle]\npub extern \"C\" fn socair_hello() -> u32 { 7 }\n",
        );
        workspace(&ws, &["panicky", "noroot"]);
        cargo_build(&ws);

        let dir = root.join("plugins");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["stale", "relaid", "panicky", "noroot"] {
            std::fs::copy(
                target.join("debug").join(lib_name(name)),
                dir.join(lib_name(name)),
            )
            .unwrap();
        }
        std::fs::write(dir.join(lib_name("junk")), b"\x7fELF but not really").unwrap();
        std::fs::write(dir.join("README.txt"), b"not a candidate: wrong name").unwrap();
        dir
    })
}

fn refusal_for<'a>(listing: &'a serde_json::Value, name: &str) -> &'a str {
    let file = lib_name(name);
    listing["refused"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["file"].as_str().unwrap().ends_with(&file))
        .unwrap_or_else(|| panic!("{file} not refused: {listing:#}"))["reason"]
        .as_str()
        .unwrap()
}

#[test]
fn incompatible_and_invalid_plugins_are_refused_with_reasons() {
    let dir = plugin_dir();
    let r = run(socair()
        .arg("--plugin-dir")
        .arg(dir)
        .args(["plugins", "--json"]));
    assert_eq!(
        r.code, 1,
        "a refused plugin is a negative verdict: {}",
        r.stderr
    );
    let listing = json(&r.stdout);

    let stale = refusal_for(&listing, "stale");
    assert!(stale.contains("incompatible plugin-api"), "{stale}");
    assert!(stale.contains("plugin-api 0.4.0"), "{stale}");
    assert!(stale.contains("0.5.x"), "{stale}");
    assert!(
        stale.contains("rebuild the plugin against plugin-api 0.5.1"),
        "{stale}"
    );
    let relaid = refusal_for(&listing, "relaid");
    assert!(relaid.contains("incompatible plugin-api"), "{relaid}");
    assert!(relaid.contains("layout"), "{relaid}");
    let noroot = refusal_for(&listing, "noroot");
    assert!(noroot.contains("not a socair plugin"), "{noroot}");
    let junk = refusal_for(&listing, "junk");
    assert!(junk.contains("not a loadable library"), "{junk}");
    assert!(
        !junk.contains("libsocair_junk"),
        "the path is not repeated: {junk}"
    );
    for reason in [stale, relaid, noroot, junk] {
        assert!(!reason.contains('\n'), "one line: {reason:?}");
    }
    assert_eq!(listing["refused"].as_array().unwrap().len(), 4);

    // The good ones still load: the test's panicky plugin and the real format plugins.
    let names: Vec<&str> = listing["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "panicky",
            "archive",
            "catboost",
            "config",
            "coreml",
            "crfsuite",
            "executorch",
            "gguf",
            "joblib",
            "keras",
            "native",
            "numpy",
            "onnx",
            "paddle",
            "safetensors",
            "tensorflow",
            "torch7",
            "torch-zip",
            "torchserve",
            "xml"
        ]
    );
    assert_eq!(
        listing["searched"][0].as_str().unwrap(),
        dir.to_str().unwrap()
    );

    // The text listing names each refused file with its reason on one line.
    let r = run(socair().arg("--plugin-dir").arg(dir).arg("plugins"));
    assert_eq!(r.code, 1);
    for name in ["stale", "relaid", "noroot", "junk"] {
        let line = r
            .stdout
            .lines()
            .find(|l| l.contains(&lib_name(name)))
            .unwrap_or_else(|| panic!("no line for {name}:\n{}", r.stdout));
        assert!(line.contains(": "), "{line}");
    }
}

#[test]
fn a_panic_inside_a_plugin_is_an_error_not_a_crash() {
    let dir = plugin_dir();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("weights.bin");
    std::fs::write(&file, b"PANIC and more bytes").unwrap();
    let r = run(socair()
        .arg("--plugin-dir")
        .arg(dir)
        .arg("tensors")
        .arg(&file));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("plugin `panicky` failed: plugin panicked: boom inside the plugin"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("weights.bin"), "{}", r.stderr);
    // Refused plugins are mentioned on stderr even for commands that do not list plugins.
    assert!(r.stderr.contains("warning: plugin"), "{}", r.stderr);
    // Other files still read normally with the same plugin set loaded.
    let r = run(socair()
        .arg("--plugin-dir")
        .arg(dir)
        .arg("tensors")
        .arg(fixture("safetensors/all-dtypes.safetensors")));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn discovery_order_first_plugin_of_a_name_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let (first, second) = (tmp.path().join("first"), tmp.path().join("second"));
    let lib = lib_name("plugin_safetensors");
    for d in [&first, &second] {
        std::fs::create_dir(d).unwrap();
        std::fs::copy(target_profile_dir().join(&lib), d.join(&lib)).unwrap();
    }
    let r = run(socair()
        .arg("--plugin-dir")
        .arg(&first)
        .env("SOCAIR_PLUGIN_PATH", &second)
        .args(["plugins", "--json"]));
    assert_eq!(r.code, 0, "shadowing is not a refusal: {}", r.stderr);
    let listing = json(&r.stdout);
    let loaded = &listing["plugins"][0];
    assert_eq!(loaded["file"], first.join(&lib).to_str().unwrap());
    let shadowed: Vec<&str> = listing["shadowed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["file"].as_str().unwrap())
        .collect();
    assert_eq!(shadowed.len(), 2, "{listing:#}");
    assert!(shadowed[0].starts_with(second.to_str().unwrap()));
    assert!(shadowed[1].starts_with(target_profile_dir().to_str().unwrap()));
    let searched: Vec<&str> = listing["searched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let exe_dir = target_profile_dir();
    assert_eq!(
        searched,
        [
            first.to_str().unwrap(),
            second.to_str().unwrap(),
            exe_dir.join("plugins").to_str().unwrap(),
            exe_dir.to_str().unwrap(),
            exe_dir
                .parent()
                .unwrap()
                .join("lib/socair/plugins")
                .to_str()
                .unwrap(),
        ]
    );
}

// `socair --version` naming the plugin-api: tests/tests/packaging.rs.
