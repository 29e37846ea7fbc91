//! Plugin discovery and loading.
//!
//! Search order (the README's plugins section): each `--plugin-dir`, then each entry of `SOCAIR_PLUGIN_PATH`
//! (`:`-separated), then `<dir of the socair executable>/plugins/`, then that directory itself
//! (so a plain `cargo build` tree works), then `<that directory>/../lib/socair/plugins/` (the
//! layout `scripts/install.sh` makes). In each directory, files named
//! `{DLL_PREFIX}socair_*{DLL_SUFFIX}` (`libsocair_*.so` on Linux) are candidates, in byte
//! order of their names. The first plugin of a name wins; a later one of the same name is
//! listed as shadowed and not used.
//!
//! Loading a library runs its initialisers: only directories the operator controls belong on
//! the search path. abi_stable checks the library's ABI header, the layout of every type
//! reachable from the root module, and the plugin-api version; any failure refuses the file
//! with a one-line reason that names it, and the rest are still loaded.

use crate::read::source::{hash_file, InputFile};
use socair_plugin_api::{
    abi_stable::library::{lib_header_from_path, LibraryError},
    FingerprintEncoderBox, FormatReaderBox, FormatWriterBox, PluginRoot_Ref,
};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable holding extra plugin directories.
pub const PLUGIN_PATH_ENV: &str = "SOCAIR_PLUGIN_PATH";

/// What a loaded plugin says about itself, in std types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The plugin-api version it was built against.
    pub plugin_api: String,
    /// Formats it reads.
    pub formats_read: Vec<String>,
    /// Formats it writes.
    pub formats_written: Vec<String>,
    /// Rule sets it implements, as `name/version`.
    pub rule_sets: Vec<String>,
    /// Encodings it provides.
    pub encoders: Vec<String>,
}

/// A plugin that loaded.
pub struct LoadedPlugin {
    /// The library file.
    pub path: PathBuf,
    /// The library file as it was opened before it was loaded, hashed when its digest is
    /// first asked for ([`LoadedPlugin::sha256`]).
    library: InputFile,
    /// Hex SHA-256 of `library`, once computed.
    sha256: OnceLock<String>,
    /// Its manifest.
    pub manifest: Manifest,
    /// Its readers.
    pub readers: Vec<FormatReaderBox>,
    /// Its writers.
    pub writers: Vec<FormatWriterBox>,
    /// Its encoders.
    pub encoders: Vec<FingerprintEncoderBox>,
}

impl LoadedPlugin {
    /// Hex SHA-256 of the library file: of the bytes opened before it was loaded (a file put
    /// in its place afterwards changes nothing), computed on first use. A run asks it only of
    /// the plugins a report names, a pin checks, or a listing shows; hashing every plugin of
    /// a process at start cost more than most scans (tens of MB of libraries).
    pub fn sha256(&self) -> &str {
        self.sha256
            .get_or_init(|| hash_file(&self.library).unwrap_or_else(|e| format!("unreadable: {e}")))
    }
}

impl std::fmt::Debug for LoadedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPlugin")
            .field("path", &self.path)
            .field("manifest", &self.manifest)
            .finish_non_exhaustive()
    }
}

/// A file that was found but not used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedPlugin {
    /// The file.
    pub path: PathBuf,
    /// One line: why it was not loaded.
    pub reason: String,
}

/// Everything discovery found.
#[derive(Debug, Default)]
pub struct PluginSet {
    /// The directories searched, in order.
    pub searched: Vec<PathBuf>,
    /// Plugins loaded, in search order.
    pub loaded: Vec<LoadedPlugin>,
    /// Files refused, in search order.
    pub refused: Vec<RefusedPlugin>,
    /// Plugins not used because one of the same name was found earlier.
    pub shadowed: Vec<RefusedPlugin>,
}

impl PluginSet {
    /// The first reader of `format`, with the plugin that provides it.
    pub fn reader(&self, format: &str) -> Option<(&LoadedPlugin, &FormatReaderBox)> {
        self.readers().find(|(_, r)| r.format().as_str() == format)
    }

    /// Every reader, in search order.
    pub fn readers(&self) -> impl Iterator<Item = (&LoadedPlugin, &FormatReaderBox)> {
        self.loaded
            .iter()
            .flat_map(|p| p.readers.iter().map(move |r| (p, r)))
    }

    /// The first writer of `format`.
    pub fn writer(&self, format: &str) -> Option<(&LoadedPlugin, &FormatWriterBox)> {
        self.loaded
            .iter()
            .flat_map(|p| p.writers.iter().map(move |w| (p, w)))
            .find(|(_, w)| w.format().as_str() == format)
    }
}

/// The rule sets `plugin` runs, name → version: the version `requested` names where the plugin
/// implements it, else the newest the plugin implements.
pub fn effective_rules(
    plugin: &LoadedPlugin,
    requested: &std::collections::BTreeMap<String, String>,
) -> std::collections::BTreeMap<String, String> {
    let mut out: std::collections::BTreeMap<String, String> = Default::default();
    for id in &plugin.manifest.rule_sets {
        let Some((name, version)) = id.split_once('/') else {
            continue;
        };
        if requested.get(name).is_some_and(|want| want != version) {
            continue;
        }
        // A profile runs only when asked for; `socair-data` is named by the rows it judged.
        let asked_only = crate::base::rules::OPT_IN.contains(&name)
            || crate::base::rules::ROW_NAMED.contains(&name);
        if asked_only && !requested.contains_key(name) {
            continue;
        }
        let newer = out.get(name).is_none_or(|have| {
            crate::base::rules::lenient_version(version).ok()
                > crate::base::rules::lenient_version(have).ok()
        });
        if newer {
            out.insert(name.to_owned(), version.to_owned());
        }
    }
    out
}

/// What an operator should know about the plugins found: a format that two plugins read (a
/// file both claim is then scanned by both, and read for its tensors only with `--reader`
/// or by the plugin a store pins), and searched directories or plugin files that users other than their
/// owner can write (whoever can write there can make socair load their code).
pub fn warnings(set: &PluginSet) -> Vec<String> {
    let mut out = Vec::new();
    let mut by_format: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for (p, r) in set.readers() {
        by_format
            .entry(r.format().to_string())
            .or_default()
            .push(&p.manifest.name);
    }
    for (format, mut names) in by_format {
        names.dedup();
        if names.len() > 1 {
            out.push(format!(
                "{} plugins read {format}: {}; a file more than one of them claims is scanned by each, and read for its tensors only with --reader NAME, or by the plugin a store pins",
                names.len(),
                names.join(", ")
            ));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let paths = set
        .searched
        .iter()
        .cloned()
        .chain(set.loaded.iter().map(|p| p.path.clone()));
    for path in paths {
        if !seen.insert(path.clone()) {
            continue;
        }
        if let Some(mode) = writable_by_others(&path) {
            let who = if mode & 0o002 != 0 {
                "every user"
            } else {
                "its group"
            };
            out.push(format!(
                "{} is writable by {who} (mode {:o}): whoever can write there can make socair load their code",
                path.display(),
                mode & 0o7777
            ));
        }
    }
    out
}

/// The mode of `path` when users other than its owner (its group, or every user) can write it.
#[cfg(unix)]
fn writable_by_others(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode())
        .filter(|mode| mode & 0o022 != 0)
}

/// No mode bits to read outside unix (Windows has ACLs, which this does not judge): no
/// warning.
#[cfg(not(unix))]
fn writable_by_others(_path: &Path) -> Option<u32> {
    None
}

/// The directories to search, in order, from the `--plugin-dir` flags, the value of
/// `SOCAIR_PLUGIN_PATH`, and the running executable's path.
pub fn search_path(
    flag_dirs: &[PathBuf],
    env_value: Option<OsString>,
    exe: Option<PathBuf>,
) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = flag_dirs.to_vec();
    if let Some(value) = env_value {
        dirs.extend(std::env::split_paths(&value).filter(|p| !p.as_os_str().is_empty()));
    }
    if let Some(exe_dir) = exe.as_deref().and_then(Path::parent) {
        dirs.push(exe_dir.join("plugins"));
        dirs.push(exe_dir.to_owned());
        // An installed layout: <prefix>/bin/socair with <prefix>/lib/socair/plugins/.
        if let Some(prefix) = exe_dir.parent() {
            dirs.push(prefix.join("lib").join("socair").join("plugins"));
        }
    }
    let mut seen = BTreeSet::new();
    dirs.retain(|d| seen.insert(d.clone()));
    dirs
}

/// Whether a file name is a plugin candidate on this OS.
pub fn is_candidate(file_name: &str) -> bool {
    let prefix = format!("{}socair_", std::env::consts::DLL_PREFIX);
    file_name.starts_with(&prefix)
        && file_name.ends_with(std::env::consts::DLL_SUFFIX)
        && file_name.len() > prefix.len() + std::env::consts::DLL_SUFFIX.len()
}

/// Finds and loads every plugin on `dirs`. Directories that do not exist are skipped.
pub fn discover(dirs: &[PathBuf]) -> PluginSet {
    let mut set = PluginSet {
        searched: dirs.to_vec(),
        ..PluginSet::default()
    };
    let mut seen_files = BTreeSet::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_str().is_some_and(is_candidate))
            .map(|e| e.path())
            .collect();
        files.sort();
        for path in files {
            // The same file reached twice (a directory listed twice through a link) loads once.
            let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if !seen_files.insert(canonical) {
                continue;
            }
            match load(&path) {
                Ok(plugin) => {
                    if let Some(first) = set
                        .loaded
                        .iter()
                        .find(|p| p.manifest.name == plugin.manifest.name)
                    {
                        set.shadowed.push(RefusedPlugin {
                            reason: format!(
                                "shadowed: plugin `{}` was already loaded from {}",
                                plugin.manifest.name,
                                first.path.display()
                            ),
                            path,
                        });
                    } else {
                        set.loaded.push(plugin);
                    }
                }
                Err(reason) => set.refused.push(RefusedPlugin { path, reason }),
            }
        }
    }
    set
}

/// Loads one plugin file; the error is a one-line reason.
pub fn load(path: &Path) -> Result<LoadedPlugin, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let library = InputFile::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let header = lib_header_from_path(path).map_err(|e| describe_library_error(e, path))?;
    // abi_stable checks type layouts before versions, and a layout records its crate's
    // version, so an old plugin would be reported as a layout mismatch: say what it really is.
    let built_against = header.version_strings().version.as_str().to_owned();
    if !api_compatible(&built_against, socair_plugin_api::PLUGIN_API_VERSION) {
        return Err(incompatible(&built_against));
    }
    let root = header
        .init_root_module::<PluginRoot_Ref>()
        .map_err(|e| describe_library_error(e, path))?;
    let manifest = (root.manifest())()
        .into_result()
        .map_err(|e| format!("its manifest failed: {e}"))?;
    let manifest = Manifest {
        name: manifest.name.into(),
        version: manifest.version.into(),
        plugin_api: manifest.plugin_api.into(),
        formats_read: manifest.formats_read.into_iter().map(Into::into).collect(),
        formats_written: manifest
            .formats_written
            .into_iter()
            .map(Into::into)
            .collect(),
        rule_sets: manifest
            .rule_sets
            .into_iter()
            .map(|r| format!("{}/{}", r.name, r.version))
            .collect(),
        encoders: manifest.encoders.into_iter().map(Into::into).collect(),
    };
    if manifest.name.is_empty() || !manifest.name.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!("its name {:?} is not a plain word", manifest.name));
    }
    semver::Version::parse(&manifest.version)
        .map_err(|e| format!("its version {:?} is not semver: {e}", manifest.version))?;
    let readers = (root.readers())()
        .into_result()
        .map_err(|e| format!("listing its readers failed: {e}"))?;
    let writers = (root.writers())()
        .into_result()
        .map_err(|e| format!("listing its writers failed: {e}"))?;
    let encoders = (root.encoders())()
        .into_result()
        .map_err(|e| format!("listing its encoders failed: {e}"))?;
    Ok(LoadedPlugin {
        path: path.to_owned(),
        library,
        sha256: OnceLock::new(),
        manifest,
        readers: readers.into_iter().collect(),
        writers: writers.into_iter().collect(),
        encoders: encoders.into_iter().collect(),
    })
}

/// Whether a plugin built against plugin-api `library` may be loaded by a host built against
/// `host`, by cargo's rules (abi_stable's own): 0.y.z needs the same y and z at least the
/// host's; x.y.z (x >= 1) the same x and y at least the host's.
pub fn api_compatible(library: &str, host: &str) -> bool {
    let (Ok(lib), Ok(host)) = (
        semver::Version::parse(library),
        semver::Version::parse(host),
    ) else {
        return false;
    };
    if host.major == 0 {
        lib.major == 0 && lib.minor == host.minor && lib.patch >= host.patch
    } else {
        lib.major == host.major && lib.minor >= host.minor
    }
}

/// Why a plugin built against plugin-api `built_against` is refused, and what to do.
fn incompatible(built_against: &str) -> String {
    let host = socair_plugin_api::PLUGIN_API_VERSION;
    let older = matches!(
        (semver::Version::parse(built_against), semver::Version::parse(host)),
        (Ok(lib), Ok(host)) if lib < host
    );
    let what = if older {
        // 0.4.0 gave every finding a typed severity (a reader no longer writes `FAIL: ` or
        // `LEAD: ` into its reasons); 0.5.0 the other file a finding is about; 0.5.1 the
        // members a container hands back.
        format!(
            "rebuild the plugin against plugin-api {host} (0.5.1 lets a container hand its members back; 0.5 lets a finding name the other file it is about; 0.4 gave every finding a typed severity)"
        )
    } else {
        "rebuild the plugin".to_owned()
    };
    format!(
        "built against an incompatible plugin-api {built_against}; this socair loads plugin-api {}; {what}",
        compatible_range(host)
    )
}

fn compatible_range(host: &str) -> String {
    match semver::Version::parse(host) {
        Ok(v) if v.major == 0 => format!("0.{}.x (x >= {})", v.minor, v.patch),
        Ok(v) => format!("{}.x (x >= {})", v.major, v.minor),
        Err(_) => host.to_owned(),
    }
}

/// abi_stable's errors span several lines and repeat the path; the refusal is one line and
/// the listing names the file already.
fn describe_library_error(e: LibraryError, path: &Path) -> String {
    let one_line = |s: String| {
        let s = s.replace(&format!("{}: ", path.display()), "");
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    match e {
        LibraryError::OpenError { err, .. } => {
            format!("not a loadable library: {}", one_line(err.to_string()))
        }
        LibraryError::GetSymbolError { .. } => {
            "not a socair plugin: it exports no abi_stable root module".into()
        }
        LibraryError::ParseVersionError(err) => {
            format!("its plugin-api version cannot be read: {}", one_line(err.to_string()))
        }
        LibraryError::IncompatibleVersionNumber {
            expected_version,
            actual_version,
            ..
        } => format!(
            "built against an incompatible plugin-api: it has {actual_version}, this socair needs {expected_version}-compatible; rebuild the plugin"
        ),
        LibraryError::AbiInstability(_) => format!(
            "built against an incompatible plugin-api: its types do not have the layout of plugin-api {} (same version number, different ABI); rebuild the plugin",
            socair_plugin_api::PLUGIN_API_VERSION
        ),
        LibraryError::InvalidAbiHeader(h) => format!(
            "built with an incompatible abi_stable (ABI header {h:?}); rebuild the plugin"
        ),
        LibraryError::RootModule { err, .. } => {
            format!("its root module failed to initialise: {}", one_line(err.to_string()))
        }
        other => format!("refused by the loader: {}", one_line(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_path_order_and_dedup() {
        let dirs = search_path(
            &[PathBuf::from("/a"), PathBuf::from("/b")],
            Some(OsString::from("/c::/a:/d")),
            Some(PathBuf::from("/opt/socair/bin/socair")),
        );
        let expected: Vec<PathBuf> = [
            "/a",
            "/b",
            "/c",
            "/d",
            "/opt/socair/bin/plugins",
            "/opt/socair/bin",
            "/opt/socair/lib/socair/plugins",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(dirs, expected);
    }

    #[test]
    fn api_compatibility_follows_cargo_rules() {
        assert!(api_compatible("0.1.0", "0.1.0"));
        assert!(api_compatible("0.1.3", "0.1.2"));
        assert!(!api_compatible("0.1.1", "0.1.2"));
        // abi_stable's layout check agrees: a plugin built against 0.3.0 lacks the method 0.3.1
        // appended to the host's `ByteSource` ("too many fields": 5 expected, 4 found).
        assert!(!api_compatible("0.3.0", "0.3.1"));
        assert!(!api_compatible("0.3.1", "0.4.0"));
        assert!(!api_compatible("0.2.0", "0.1.0"));
        assert!(!api_compatible("1.0.0", "0.1.0"));
        assert!(api_compatible("1.4.0", "1.2.9"));
        assert!(!api_compatible("1.1.0", "1.2.0"));
        assert!(!api_compatible("2.0.0", "1.2.0"));
        assert!(!api_compatible("garbage", "0.1.0"));
    }

    #[test]
    fn candidates() {
        assert!(is_candidate(&format!(
            "{}socair_plugin_x{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        )));
        assert!(!is_candidate("libsocair.rlib"));
        assert!(!is_candidate("libother.so"));
        assert!(!is_candidate(&format!(
            "{}socair_{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        )));
    }
}
