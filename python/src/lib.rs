//! `socair._native`: the host library for Python. Every function here calls the host as the
//! command line does (`socair scan`, `socair tensors`, `socair tensors diff`) and hands back
//! its document as the CLI prints it; `load` hands back the report and, when it is clean,
//! where each tensor's bytes lie and a handle on each file the scan read. Arrays are built in
//! Python (`socair/__init__.py`) from those places: no tensor byte crosses here.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use socair_reports::base::output::to_json_bytes;
use socair_reports::fingerprint::{diff, manifest};
use socair_reports::read::artifact::ReaderChoice;
use socair_reports::read::plugins::{self, PluginSet};
use socair_reports::report::load::{load as load_layout, TensorBytes};
use socair_reports::report::scan::{read_reviewed, scan as scan_path, ScanOptions};
use std::path::{Path, PathBuf};

pyo3::create_exception!(
    _native,
    SocairError,
    PyException,
    "An input socair cannot read at all: the command line's exit code 2."
);

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
}

fn error(message: impl std::fmt::Display) -> PyErr {
    SocairError::new_err(message.to_string())
}

fn json_text(bytes: Vec<u8>) -> PyResult<String> {
    String::from_utf8(bytes).map_err(error)
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
        Session { plugins }
    }

    /// `(name, version, path)` of each plugin loaded, and `(path, reason)` of each refused
    /// or shadowed.
    #[allow(clippy::type_complexity)]
    fn plugins(&self) -> (Vec<(String, String, PathBuf)>, Vec<(PathBuf, String)>) {
        let loaded = self
            .plugins
            .loaded
            .iter()
            .map(|p| {
                (
                    p.manifest.name.clone(),
                    p.manifest.version.clone(),
                    p.path.clone(),
                )
            })
            .collect();
        let refused = self
            .plugins
            .refused
            .iter()
            .chain(&self.plugins.shadowed)
            .map(|r| (r.path.clone(), r.reason.clone()))
            .collect();
        (loaded, refused)
    }

    /// The `socair.report/v1` document, as `socair scan --json` prints it.
    #[pyo3(signature = (path, header_only, reviewed_list=None, reviewed_file=None))]
    fn scan(
        &self,
        py: Python<'_>,
        path: PathBuf,
        header_only: bool,
        reviewed_list: Option<Vec<String>>,
        reviewed_file: Option<PathBuf>,
    ) -> PyResult<String> {
        let options = ScanOptions {
            header_only,
            reviewed: reviewed(reviewed_list, reviewed_file)?,
            ..ScanOptions::default()
        };
        let report = py
            .detach(|| scan_path(&path, &self.plugins, &options))
            .map_err(error)?;
        json_text(to_json_bytes(&report))
    }

    /// The `socair.tensors/v1` manifest, as `socair tensors --json` prints it.
    fn tensors(&self, py: Python<'_>, path: PathBuf) -> PyResult<String> {
        let m = py
            .detach(|| manifest::fingerprint(&path, &self.plugins, &ReaderChoice::default()))
            .map_err(error)?;
        json_text(to_json_bytes(&m))
    }

    /// The `socair.tensors.diff/v1` comparison, as `socair tensors diff` prints it.
    fn diff(&self, py: Python<'_>, a: PathBuf, b: PathBuf) -> PyResult<String> {
        let c = py
            .detach(|| diff::compare_paths(&a, &b, &self.plugins, &ReaderChoice::default()))
            .map_err(error)?;
        json_text(to_json_bytes(&c))
    }

    /// Scans `path`; returns `(report_json, layout)` where `layout` is `None` when a row
    /// FAILs or is a LEAD, else `(files, tensors, unread)`:
    ///
    /// * `files`: `(path, fd, len)`, `fd` a new descriptor of the file the scan read, which
    ///   the caller closes;
    /// * `tensors`: `(file, name, dtype, element_type, shape, big_endian, place, torch_kind)`
    ///   with `torch_kind` `parameter`, `parameter-frozen`, `requires-grad` or `None`, and
    ///   `place` one of `("ranges", file_index, [(offset, len), ...])`,
    ///   `("strided", file_index, base, strides, element_size)` or `("inline", bytes)`;
    /// * `unread`: `(file, tensor or None, reason)`.
    ///
    /// The scan computes no subject digest; with `verify` false it reads the structure only
    /// (`--header-only`: every check but the CRC-32 of tensor data).
    #[pyo3(signature = (path, reviewed_list=None, reviewed_file=None, verify=true))]
    fn load<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        reviewed_list: Option<Vec<String>>,
        reviewed_file: Option<PathBuf>,
        verify: bool,
    ) -> PyResult<(String, Option<Bound<'py, PyTuple>>)> {
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
        let report = json_text(to_json_bytes(&loadable.report))?;
        let Some(layout) = loadable.layout else {
            return Ok((report, None));
        };
        let files = PyList::empty(py);
        for f in layout.files {
            files.append((f.path, into_raw(f.file), f.len))?;
        }
        let tensors = PyList::empty(py);
        for t in layout.tensors {
            let place = match t.bytes {
                TensorBytes::Ranges { file, ranges } => {
                    ("ranges", file, ranges).into_pyobject(py)?
                }
                TensorBytes::Strided {
                    file,
                    base,
                    strides,
                    elem,
                } => ("strided", file, base, strides, elem).into_pyobject(py)?,
                TensorBytes::Inline(bytes) => {
                    ("inline", PyBytes::new(py, &bytes)).into_pyobject(py)?
                }
            };
            tensors.append((
                t.file,
                t.name,
                t.dtype,
                t.element_type,
                t.shape,
                t.big_endian,
                place,
                t.torch_kind,
            ))?;
        }
        let unread = PyList::empty(py);
        for u in layout.unread {
            unread.append(u)?;
        }
        Ok((
            report,
            Some(PyTuple::new(
                py,
                [files.into_any(), tensors.into_any(), unread.into_any()],
            )?),
        ))
    }
}

/// The open file handed to Python, which closes it: a file descriptor on Unix; on Windows a
/// file handle, which `socair/__init__.py` turns into a descriptor (`msvcrt.open_osfhandle`).
#[cfg(unix)]
fn into_raw(file: std::fs::File) -> i64 {
    i64::from(std::os::fd::IntoRawFd::into_raw_fd(file))
}

#[cfg(windows)]
fn into_raw(file: std::fs::File) -> i64 {
    std::os::windows::io::IntoRawHandle::into_raw_handle(file) as isize as i64
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
    m.add_function(wrap_pyfunction!(search_path, m)?)?;
    m.add("SocairError", m.py().get_type::<SocairError>())?;
    m.add("VERSION", socair_reports::VERSION)?;
    Ok(())
}
