//! `socair._native`: the host library for Python. Every function here calls the host as the
//! command line does (`socair scan`, `socair tensors`, `socair tensors diff`) and hands back
//! its document as classes (`report.rs`, `fingerprint.rs`) that hold every field, typed, and
//! the text the CLI prints; `load` hands back the report and, when it is clean, where each
//! tensor's bytes lie and a handle on each file the scan read (`layout.rs`). Arrays are built
//! in Python (`socair/__init__.py`) from those places: no tensor byte crosses here but those
//! a reader decoded. `socair/_native.pyi` states every class this module defines.

use pyo3::prelude::*;
use socair_reports::fingerprint::{diff, manifest};
use socair_reports::read::artifact::ReaderChoice;
use socair_reports::read::plugins::{self, PluginSet};
use socair_reports::report::load::load as load_layout;
use socair_reports::report::scan::{read_reviewed, scan as scan_path, ScanOptions};
use std::path::{Path, PathBuf};

#[macro_use]
mod values;
mod fingerprint;
mod layout;
mod report;

use values::{error, SocairError};

/// What a load's report says of its subject digest: a load has no use for the file's sha256
/// (`socair.scan` and `socair attest` compute it), one more pass over every byte.
const NO_DIGEST: &str =
    "not computed: socair.load reads no byte for the file's sha256 (socair.scan computes it)";
/// The same, for a load that reads the structure only.
const UNVERIFIED: &str = "not computed: socair.load(verify=False) reads the structure only (no CRC-32 over tensor data, no sha256 of the file)";

/// The plugins found on a search path, loaded once and shared by every call.
#[pyclass(frozen, module = "socair._native")]
struct Session {
    plugins: PluginSet,
    /// The directories searched, in order.
    dirs: Vec<PathBuf>,
}

record! {
    /// A plugin loaded: its name and version as its manifest gives them, and its file.
    LoadedPlugin { name: String, version: String, path: PathBuf }
}

record! {
    /// A plugin file not loaded, and why: refused (another ABI, a bad manifest...) or
    /// shadowed by an earlier plugin of the same name.
    RefusedPlugin { path: PathBuf, reason: String }
}

record! {
    /// The plugins a session loaded, those it refused or found shadowed, and the directories
    /// it searched, in order.
    Plugins { loaded: Vec<LoadedPlugin>, refused: Vec<RefusedPlugin>, searched: Vec<PathBuf> }
}

/// The reviewed classes: a list given as is (sorted, without repeats, as the file is read),
/// or the file `--reviewed-classes` takes.
fn reviewed(list: Option<Vec<String>>, file: Option<PathBuf>) -> PyResult<Option<Vec<String>>> {
    if let Some(file) = file {
        return read_reviewed(&file).map(Some).map_err(|e| {
            error(format!(
                "{}: cannot read reviewed classes: {e}",
                file.display()
            ))
        });
    }
    Ok(list.map(|mut l| {
        l.sort();
        l.dedup();
        l
    }))
}

#[pymethods]
impl Session {
    /// Loads every plugin on `dirs`, in order (the first plugin of a name wins).
    #[new]
    fn new(py: Python<'_>, dirs: Vec<PathBuf>) -> Self {
        let plugins = py.detach(|| plugins::discover(&dirs));
        Session { plugins, dirs }
    }

    /// Each plugin loaded, each refused or shadowed, and the directories searched.
    fn plugins(&self) -> Plugins {
        let loaded = self
            .plugins
            .loaded
            .iter()
            .map(|p| LoadedPlugin {
                name: p.manifest.name.clone(),
                version: p.manifest.version.clone(),
                path: p.path.clone(),
            })
            .collect();
        let refused = self
            .plugins
            .refused
            .iter()
            .chain(&self.plugins.shadowed)
            .map(|r| RefusedPlugin {
                path: r.path.clone(),
                reason: r.reason.clone(),
            })
            .collect();
        Plugins {
            loaded,
            refused,
            searched: self.dirs.clone(),
        }
    }

    /// The `socair.report/v1` report `socair scan --json` prints.
    #[pyo3(signature = (path, header_only, reviewed_list=None, reviewed_file=None))]
    fn scan(
        &self,
        py: Python<'_>,
        path: PathBuf,
        header_only: bool,
        reviewed_list: Option<Vec<String>>,
        reviewed_file: Option<PathBuf>,
    ) -> PyResult<report::Report> {
        let options = ScanOptions {
            header_only,
            reviewed: reviewed(reviewed_list, reviewed_file)?,
            ..ScanOptions::default()
        };
        let report = py
            .detach(|| scan_path(&path, &self.plugins, &options))
            .map_err(error)?;
        report::Report::new(&report)
    }

    /// The `socair.tensors/v1` manifest `socair tensors --json` prints.
    fn tensors(&self, py: Python<'_>, path: PathBuf) -> PyResult<fingerprint::TensorManifest> {
        let m = py
            .detach(|| manifest::fingerprint(&path, &self.plugins, &ReaderChoice::default()))
            .map_err(error)?;
        fingerprint::TensorManifest::new(&m)
    }

    /// The `socair.tensors.diff/v1` comparison `socair tensors diff` prints.
    fn diff(&self, py: Python<'_>, a: PathBuf, b: PathBuf) -> PyResult<fingerprint::Comparison> {
        let c = py
            .detach(|| {
                diff::compare_paths(
                    &a,
                    &b,
                    &self.plugins,
                    &ReaderChoice::default(),
                    &diff::read_manifest,
                )
            })
            .map_err(error)?;
        fingerprint::Comparison::new(&c)
    }

    /// Scans `path`; returns the report and, when no row FAILs or is a LEAD, where each
    /// tensor's bytes lie (`layout.rs`), each file the scan read handed over as a new
    /// descriptor the caller closes.
    ///
    /// The scan computes no subject digest; with `verify` false it reads the structure only
    /// (`--header-only`: every check but the CRC-32 of tensor data).
    #[pyo3(signature = (path, reviewed_list=None, reviewed_file=None, verify=true))]
    fn load(
        &self,
        py: Python<'_>,
        path: PathBuf,
        reviewed_list: Option<Vec<String>>,
        reviewed_file: Option<PathBuf>,
        verify: bool,
    ) -> PyResult<layout::Loaded> {
        if socair_reports::read::source::is_remote(&path) {
            return Err(error(format!(
                "{}: socair.load maps local files; download the object and load the copy (socair.scan and socair.tensors read it in place)",
                path.display()
            )));
        }
        let options = ScanOptions {
            reviewed: reviewed(reviewed_list, reviewed_file)?,
            header_only: !verify,
            digest_not_computed: Some(if verify { NO_DIGEST } else { UNVERIFIED }.to_owned()),
            ..ScanOptions::default()
        };
        let loadable = py
            .detach(|| load_layout(&path, &self.plugins, &options))
            .map_err(error)?;
        let report = report::Report::new(&loadable.report)?;
        layout::Loaded::new(py, report, loadable.layout)
    }
}

/// The directories to search for plugins: each entry of `SOCAIR_PLUGIN_PATH`, then `bundled`
/// (the wheel's own plugins, where it installed them: `socair/_installed.py`), the order the
/// command line searches its flags, the variable and its own directory in.
#[pyfunction]
#[pyo3(signature = (bundled))]
fn search_path(bundled: Option<PathBuf>) -> Vec<PathBuf> {
    let mut dirs = plugins::search_path(&[], std::env::var_os(plugins::PLUGIN_PATH_ENV), None);
    if let Some(bundled) = bundled {
        if !dirs.iter().any(|d| d == Path::new(&bundled)) {
            dirs.push(bundled);
        }
    }
    dirs
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Session>()?;
    m.add_class::<LoadedPlugin>()?;
    m.add_class::<RefusedPlugin>()?;
    m.add_class::<Plugins>()?;
    m.add_class::<report::Finding>()?;
    m.add_class::<report::Row>()?;
    m.add_class::<report::ReportArtifact>()?;
    m.add_class::<report::PluginUse>()?;
    m.add_class::<report::Tool>()?;
    m.add_class::<report::NamedDigest>()?;
    m.add_class::<report::Scope>()?;
    m.add_class::<report::Report>()?;
    m.add_class::<fingerprint::ManifestArtifact>()?;
    m.add_class::<fingerprint::TensorEntry>()?;
    m.add_class::<fingerprint::UnreadEntry>()?;
    m.add_class::<fingerprint::AliasEntry>()?;
    m.add_class::<fingerprint::TensorManifest>()?;
    m.add_class::<fingerprint::ComparedModel>()?;
    m.add_class::<fingerprint::Side>()?;
    m.add_class::<fingerprint::Numbers>()?;
    m.add_class::<fingerprint::QuantizedNumbers>()?;
    m.add_class::<fingerprint::LineBeyond>()?;
    m.add_class::<fingerprint::Pair>()?;
    m.add_class::<fingerprint::Summary>()?;
    m.add_class::<fingerprint::Accounting>()?;
    m.add_class::<fingerprint::Comparison>()?;
    m.add_class::<layout::LayoutFile>()?;
    m.add_class::<layout::ByteRange>()?;
    m.add_class::<layout::Ranges>()?;
    m.add_class::<layout::Strided>()?;
    m.add_class::<layout::Inline>()?;
    m.add_class::<layout::TensorLayout>()?;
    m.add_class::<layout::UnreadTensor>()?;
    m.add_class::<layout::Layout>()?;
    m.add_class::<layout::Loaded>()?;
    m.add_function(wrap_pyfunction!(search_path, m)?)?;
    m.add("SocairError", m.py().get_type::<SocairError>())?;
    m.add("VERSION", socair_reports::VERSION)?;
    Ok(())
}
