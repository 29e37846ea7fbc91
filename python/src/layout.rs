//! What `Session.load` hands Python: the report and, when it is clean, where each tensor's
//! bytes lie (`socair_reports::report::load::Layout`) as classes, from which `socair/__init__.py`
//! builds the arrays. No tensor byte crosses here but those a reader decoded (`Inline`).

use crate::report::Report;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use socair_reports::report::load::{Layout as HostLayout, TensorBytes};
use std::path::PathBuf;

/// A file holding tensor bytes: its path as it was opened, `fd` a new descriptor (on
/// Windows a file handle) of the open file the scan read, which the caller closes, and its
/// length when it was scanned.
#[pyclass(frozen, module = "socair._native")]
pub struct LayoutFile {
    #[pyo3(get)]
    path: PathBuf,
    #[pyo3(get)]
    fd: i64,
    #[pyo3(get)]
    length: u64,
}

#[pymethods]
impl LayoutFile {
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::values::repr(slf.as_any(), "LayoutFile", &["path", "fd", "length"])
    }
}

record! {
    /// A range of a file's bytes: `offset` from its start, `length` bytes long.
    ByteRange { offset: u64, length: u64 }
}

record! {
    /// A tensor's bytes as ranges of `files[file]`, in row-major order.
    Ranges { file: usize, ranges: Vec<ByteRange> }
}

record! {
    /// A strided view of `files[file]`: element `(i0, i1, …)` starts `element_size ×
    /// Σ iₖ·strides[k]` bytes after `base`; the host checked every element lies inside the
    /// file.
    Strided { file: usize, base: u64, strides: Vec<u64>, element_size: u64 }
}

/// Bytes the reader decoded (varint-coded ONNX values, an inflated `.npz` member).
#[pyclass(frozen, module = "socair._native")]
pub struct Inline {
    #[pyo3(get)]
    data: Py<PyBytes>,
}

#[pymethods]
impl Inline {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!("Inline(<{} bytes>)", self.data.bind(py).as_bytes().len())
    }
}

/// One tensor's place: its file (relative to the artifact) and name as `socair tensors`
/// names them, its dtype as the format names it, its element type in socair's vocabulary
/// (none for block-quantized and other types without a fixed element width), its shape,
/// byte order, what torch.load returns it as when more than a plain tensor, and where its
/// bytes are (`Ranges`, `Strided` or `Inline`).
#[pyclass(frozen, module = "socair._native")]
pub struct TensorLayout {
    #[pyo3(get)]
    file: String,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    dtype: String,
    #[pyo3(get)]
    element_type: Option<String>,
    #[pyo3(get)]
    shape: Vec<u64>,
    #[pyo3(get)]
    big_endian: bool,
    #[pyo3(get)]
    torch_kind: Option<String>,
    #[pyo3(get)]
    place: Py<PyAny>,
}

#[pymethods]
impl TensorLayout {
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::values::repr(
            slf.as_any(),
            "TensorLayout",
            &[
                "file",
                "name",
                "dtype",
                "element_type",
                "shape",
                "big_endian",
                "torch_kind",
                "place",
            ],
        )
    }
}

record! {
    /// What could not be located or was described inconsistently: the file, the tensor when
    /// one is named, and why.
    UnreadTensor { file: String, tensor: Option<String>, reason: String }
}

/// Where every tensor of a clean artifact lies: the files (`LayoutFile`), the tensors
/// (`TensorLayout`, in reading order) and what could not be located (`UnreadTensor`).
#[pyclass(frozen, module = "socair._native")]
pub struct Layout {
    #[pyo3(get)]
    files: Py<PyList>,
    #[pyo3(get)]
    tensors: Py<PyList>,
    #[pyo3(get)]
    unread: Py<PyList>,
}

/// What `Session.load` returns: the scan's report, and the layout when no row FAILs or is a
/// LEAD (else `None`).
#[pyclass(frozen, module = "socair._native")]
pub struct Loaded {
    #[pyo3(get)]
    report: Py<Report>,
    #[pyo3(get)]
    layout: Option<Py<Layout>>,
}

impl Loaded {
    /// The classes of a load; every file of the layout becomes a descriptor Python owns.
    pub fn new(py: Python<'_>, report: Report, layout: Option<HostLayout>) -> PyResult<Self> {
        let report = Py::new(py, report)?;
        let Some(layout) = layout else {
            return Ok(Loaded {
                report,
                layout: None,
            });
        };
        let files = PyList::empty(py);
        for f in layout.files {
            files.append(LayoutFile {
                path: f.path,
                fd: into_raw(f.file),
                length: f.len,
            })?;
        }
        let tensors = PyList::empty(py);
        for t in layout.tensors {
            let place = match t.bytes {
                TensorBytes::Ranges { file, ranges } => Ranges {
                    file,
                    ranges: ranges
                        .into_iter()
                        .map(|(offset, length)| ByteRange { offset, length })
                        .collect(),
                }
                .into_pyobject(py)?
                .into_any(),
                TensorBytes::Strided {
                    file,
                    base,
                    strides,
                    elem,
                } => Strided {
                    file,
                    base,
                    strides,
                    element_size: elem,
                }
                .into_pyobject(py)?
                .into_any(),
                TensorBytes::Inline(bytes) => Inline {
                    data: PyBytes::new(py, &bytes).unbind(),
                }
                .into_pyobject(py)?
                .into_any(),
            };
            tensors.append(TensorLayout {
                file: t.file,
                name: t.name,
                dtype: t.dtype,
                element_type: t.element_type,
                shape: t.shape,
                big_endian: t.big_endian,
                torch_kind: t.torch_kind,
                place: place.unbind(),
            })?;
        }
        let unread = PyList::empty(py);
        for (file, tensor, reason) in layout.unread {
            unread.append(UnreadTensor {
                file,
                tensor,
                reason,
            })?;
        }
        let layout = Layout {
            files: files.unbind(),
            tensors: tensors.unbind(),
            unread: unread.unbind(),
        };
        Ok(Loaded {
            report,
            layout: Some(Py::new(py, layout)?),
        })
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
