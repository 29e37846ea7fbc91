//! OpenCV's XML persistence (`cv::FileStorage` in XML form): a root `opencv_storage` holding
//! named nodes of numbers and strings, maps and sequences, and typed nodes whose `type_id`
//! attribute names a data layout (`opencv-matrix` with `rows`, `cols`, `dt`, `data`;
//! `opencv-nd-matrix`, `opencv-sparse-matrix`, `opencv-haar-classifier`, `binary` for base64
//! data). Haar and LBP cascades (`haarcascade_*.xml`, `lbpcascade_*.xml`) and the models
//! `cv2.ml.*.save` writes are such files.
//!
//! Nothing in one runs code or reads another file: OpenCV's parser (opencv 4.x,
//! modules/core/src/persistence_xml.cpp, `XMLParser::parse`, `parseValue`, `parseTag`) builds
//! a tree of `FileNode`s whose values are numbers (`strtol`/`strtod`) and strings; of the
//! attributes it keeps only `type_id`, which it compares with `str`, `map`, `seq` and
//! `binary` (base64 decoded into bytes by `FileStorage::Impl::parseBase64`) and otherwise
//! keeps as the node's type name; a `<!` directive after the XML declaration is a parse error
//! ("Directive tags are not allowed here", "<opencv_storage> tag is missing"), and an entity
//! other than XML's five is kept as its text (`&name;`), never expanded. What the classes that
//! read the tree (`CascadeClassifier::read`, `cv::ml::StatModel::read`) do with it is to
//! copy numbers into their fields.
//!
//! So an ordinary file is a PASS; this reader counts its nodes and typed nodes (matrices are
//! text, not byte ranges, and are noted as data, not fingerprinted as tensors). A DOCTYPE or
//! an entity is a FAIL from [`crate::xml`], as for the other formats: OpenCV refuses the first
//! and keeps the second as text, but other XML readers of these files (lxml, ElementTree,
//! xmltodict) read them otherwise.

use crate::xml::{Refusal, Sink, StartTag};
use socair_plugin_kit::bounded::short;
use socair_plugin_kit::model::Severity;
use socair_plugin_kit::reading::{listed, Reading};
use std::collections::BTreeMap;

/// What a DOCTYPE's finding says OpenCV's parser and other readers do with one.
pub const LOADER: &str = "OpenCV's FileStorage writes no DTD and its XML parser (opencv 4.x modules/core/src/persistence_xml.cpp, XMLParser::parse) refuses a directive after the XML declaration, while other readers of these files (lxml, ElementTree, xmltodict) process it";

/// Distinct type names kept for the metadata.
const MAX_TYPES: usize = 64;

/// What the reading of a FileStorage document found, for the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Nodes (elements below the root).
    pub nodes: u64,
    /// Nodes by `type_id`.
    pub types: BTreeMap<String, u64>,
    /// The root's children's names (the file's top-level keys), the first few.
    pub keys: Vec<String>,
}

/// Reads a FileStorage document's elements as they stream by.
pub struct Judge<'r> {
    reading: &'r mut Reading,
    summary: Summary,
}

impl<'r> Judge<'r> {
    /// A judge noting into `reading`.
    pub fn new(reading: &'r mut Reading) -> Self {
        Judge {
            reading,
            summary: Summary::default(),
        }
    }

    /// The summary, its metadata noted.
    pub fn finish(self) -> Summary {
        let s = self.summary;
        if !s.keys.is_empty() {
            self.reading.metadata.push((
                "opencv.keys".into(),
                listed(s.keys.iter().map(String::as_str), 16),
            ));
        }
        if !s.types.is_empty() {
            let types: Vec<String> = s.types.iter().map(|(t, n)| format!("{t} x{n}")).collect();
            self.reading.metadata.push((
                "opencv.type_ids".into(),
                listed(types.iter().map(String::as_str), 32),
            ));
        }
        s
    }
}

impl Sink for Judge<'_> {
    fn reading(&mut self) -> &mut Reading {
        self.reading
    }

    fn start(&mut self, tag: StartTag<'_>) -> Result<(), Refusal> {
        if tag.depth == 0 {
            if tag.name != "opencv_storage" {
                return Err(Refusal {
                    severity: Severity::Fail,
                    place: format!("byte {}", tag.offset),
                    reason: format!(
                        "the root element is <{}>, not <opencv_storage>: OpenCV's XMLParser::parse refuses the file (\"<opencv_storage> tag is missing\")",
                        short(tag.name)
                    ),
                });
            }
            return Ok(());
        }
        self.summary.nodes += 1;
        if tag.depth == 1 && self.summary.keys.len() < 16 {
            self.summary.keys.push(short(tag.name));
        }
        if let Some(type_id) = tag.attribute("type_id") {
            let key = short(type_id);
            if self.summary.types.contains_key(&key) || self.summary.types.len() < MAX_TYPES {
                *self.summary.types.entry(key).or_default() += 1;
            }
        }
        Ok(())
    }

    fn end(&mut self) -> Result<(), Refusal> {
        Ok(())
    }
}
