//! socair reader library for model formats written as XML: OpenVINO IR (`model.xml`, whose
//! constants lie in the `model.bin` beside it) and PMML. Both are read strictly and without
//! processing anything in them ([`xml`]): UTF-8 XML 1.0, no DTD (a DOCTYPE is a FAIL: readers
//! that process one fetch or expand what it declares), no entity other than XML's five
//! predefined ones (a FAIL: pugixml, OpenVINO's parser, keeps `&name;` as text, other readers
//! expand it or refuse the file), bounded depth, element count and attribute sizes.
//!
//! * [`openvino`]: the IR as openvino 2026.4.1's IR reader builds it; layers of OpenVINO's
//!   opsets are data, other types LEADs; `Const` layers become tensors whose bytes lie in the
//!   weights file (`TensorDescriptor::file` = `{stem}.bin`, which the host checks each range
//!   against); an rt_info key naming a file the runtime reads is a FAIL.
//! * [`pmml`]: PMML 4.4, whose models are data; `Extension` elements, elements outside the
//!   schema, functions nothing defines and external tables are LEADs.
//! * [`opencv`]: OpenCV's `cv::FileStorage` XML (cascade classifiers, `cv2.ml` models), which
//!   holds only numbers, strings and matrices as text.
//!
//! Files are claimed by content ([`sniff`]): an XML root `net` (any ASCII case, as OpenVINO's
//! frontend compares it) with a `version` attribute, `PMML` (any namespace prefix), or
//! `opencv_storage`; a DOCTYPE
//! naming such a root claims the file too, so that a model file carrying a DTD is judged.

pub mod fuzzing;
pub mod opencv;
pub mod openvino;
pub mod pmml;
pub mod sniff;
pub mod xml;

use socair_plugin_api::{ByteSourceRef, Finding, OpenedFile, PluginError, ReadOptions, RowStatus};
use socair_plugin_kit::export::{read_prefix, Reader};
use socair_plugin_kit::model::{memory_share, Severity};
use socair_plugin_kit::reading::Reading;
use socair_plugin_kit::report::{refused_as, PAST_BOUNDS};
use xml::{Limits, Refusal};

/// The format name of OpenVINO IR.
pub const OPENVINO_FORMAT: &str = "openvino-ir";
/// The format name of PMML.
pub const PMML_FORMAT: &str = "pmml";

/// The format name of OpenCV's FileStorage XML.
pub const OPENCV_FORMAT: &str = "opencv-storage";

/// Files larger than this are not read (an LLM's IR is tens of megabytes; a large PMML
/// forest hundreds).
pub const MAX_INPUT: u64 = 1 << 30;

/// The OpenVINO IR reader.
#[derive(Debug, Clone, Copy)]
pub struct OpenVinoReader;

/// The PMML reader.
#[derive(Debug, Clone, Copy)]
pub struct PmmlReader;

/// The OpenCV FileStorage XML reader.
#[derive(Debug, Clone, Copy)]
pub struct OpenCvStorageReader;

impl Reader for OpenCvStorageReader {
    fn format(&self) -> &'static str {
        OPENCV_FORMAT
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        looks_like_opencv_storage(head)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        open_source(source, OPENCV_FORMAT, read_opencv_storage)
    }
}

impl Reader for OpenVinoReader {
    fn format(&self) -> &'static str {
        OPENVINO_FORMAT
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        looks_like_openvino(head)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        open_source(source, OPENVINO_FORMAT, read_openvino)
    }
}

impl Reader for PmmlReader {
    fn format(&self) -> &'static str {
        PMML_FORMAT
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        looks_like_pmml(head)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        open_source(source, PMML_FORMAT, read_pmml)
    }
}

/// Whether `head` starts an OpenVINO IR: the root `net` (ASCII case ignored, as
/// `get_ir_version` in src/frontends/ir/src/frontend.cpp compares it) with a `version`
/// attribute, or a start tag cut by the end of the head, or a DOCTYPE naming `net`.
pub fn looks_like_openvino(head: &[u8]) -> bool {
    sniff::root(head).is_some_and(|r| {
        r.name.eq_ignore_ascii_case("net")
            && (r.tag.is_none() || !r.tag_complete || r.has_attribute("version"))
    })
}

/// Whether `head` starts a PMML document: the root `PMML`, with or without a namespace prefix
/// (or a DOCTYPE naming it).
pub fn looks_like_pmml(head: &[u8]) -> bool {
    sniff::root(head).is_some_and(|r| r.local_name() == "PMML")
}

/// Whether `head` starts an OpenCV FileStorage XML document: the root `opencv_storage`, the
/// name OpenCV's `XMLParser::parse` requires (or a DOCTYPE naming it).
pub fn looks_like_opencv_storage(head: &[u8]) -> bool {
    sniff::root(head).is_some_and(|r| r.name == "opencv_storage")
}

fn open_source(
    source: &ByteSourceRef<'_>,
    format: &'static str,
    read: fn(&[u8]) -> OpenedFile,
) -> Result<OpenedFile, PluginError> {
    let len = source.file_len();
    if len > MAX_INPUT {
        let reason =
            format!("a file of {len} bytes, larger than the {MAX_INPUT} this reader reads");
        return Ok(refused_as(
            RowStatus::Lead,
            format,
            PAST_BOUNDS,
            reason.clone(),
            Finding::new(socair_plugin_api::Severity::Lead, "file", reason),
        ));
    }
    let bytes = read_prefix(source, len)?;
    Ok(read(&bytes))
}

/// What a refused document gives: its refusal noted beside what was found before it, the
/// whole file unread.
fn refused(reading: &mut Reading, refusal: Refusal) {
    let reason = refusal.reason.clone();
    reading.note(
        xml::KIND,
        refusal.severity,
        || refusal.place,
        || refusal.reason,
    );
    reading.unread("the file", None, reason, false);
}

/// Sets the row to name its findings' severities when they differ.
fn finished(mut opened: OpenedFile) -> OpenedFile {
    for row in opened.rows.iter_mut() {
        let first = row.findings.first().map(|f| f.severity);
        row.names_severities = row.findings.iter().any(|f| Some(f.severity) != first);
    }
    opened
}

/// The summary of a document refused as a whole.
fn refused_summary(lead: bool) -> String {
    if lead {
        PAST_BOUNDS.to_owned()
    } else {
        "not a sound XML document: XML readers read it differently, nothing in it was located"
            .to_owned()
    }
}

/// Reads an OpenVINO IR's XML.
pub fn read_openvino(bytes: &[u8]) -> OpenedFile {
    let len = bytes.len() as u64;
    let mut reading = Reading::new(OPENVINO_FORMAT, len);
    reading.fails_first = true;
    let mut builder = xml::tree::Builder::new(memory_share(len, 2), openvino::skip, &mut reading);
    let parsed = xml::read(bytes, &Limits::DEFAULT, openvino::LOADER, &mut builder);
    let tree = builder.finish();
    if let Err(refusal) = parsed {
        let lead = refusal.severity == Severity::Lead;
        refused(&mut reading, refusal);
        return finished(reading.finish(|_| refused_summary(lead)));
    }
    let s = openvino::analyse(&tree, &mut reading);
    drop(tree);
    let tensors = reading.tensors.len();
    let version = s.ir_version.clone().unwrap_or_else(|| "?".into());
    finished(reading.finish(|status| match status {
        RowStatus::Pass => format!(
            "OpenVINO IR v{version}: {} layers of OpenVINO's opsets, {tensors} of {} constants located in the weights file beside it",
            s.layers, s.constants
        ),
        RowStatus::Fail => "not a safe OpenVINO IR: it declares what makes readers read other data or other files (see the findings)".to_owned(),
        _ => format!(
            "OpenVINO IR v{version} with parts this reader does not prove: {} layers ({} of no opset), {tensors} of {} constants located",
            s.layers, s.custom, s.constants
        ),
    }))
}

/// Reads a PMML document.
pub fn read_pmml(bytes: &[u8]) -> OpenedFile {
    let mut reading = Reading::new(PMML_FORMAT, bytes.len() as u64);
    reading.fails_first = true;
    let mut judge = pmml::Judge::new(&mut reading);
    let parsed = xml::read(bytes, &Limits::DEFAULT, pmml::LOADER, &mut judge);
    let s = judge.finish();
    if let Err(refusal) = parsed {
        let lead = refusal.severity == Severity::Lead;
        refused(&mut reading, refusal);
        return finished(reading.finish(|_| refused_summary(lead)));
    }
    if let Some(v) = &s.version {
        reading.metadata.push(("pmml.version".into(), v.clone()));
    }
    let version = s.version.clone().unwrap_or_else(|| "?".into());
    let models: u64 = s.models.values().sum();
    let kinds = s
        .models
        .keys()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    finished(reading.finish(|status| match status {
        RowStatus::Pass => format!(
            "PMML {version} document: {models} model element(s) ({kinds}) declared as data, {}, no function from outside the document",
            match s.metadata_extensions {
                0 => "no Extension elements".to_owned(),
                n => format!("{n} Extension element(s), in the header or the build task only (documentation)"),
            }
        ),
        RowStatus::Fail => "not a safe PMML document: it declares what makes XML readers read other data or other files (see the findings)".to_owned(),
        _ => {
            let parts: Vec<String> = [
                (s.extensions, "Extension element(s)"),
                (s.unknown, "element(s) outside the schema"),
                (s.undefined_functions, "function(s) nothing in it defines"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
            let parts = match parts.is_empty() {
                true => "see the findings".to_owned(),
                false => parts.join(", "),
            };
            format!("PMML {version} document with parts this reader does not prove: {models} model element(s) ({kinds}); {parts}")
        }
    }))
}

/// Reads an OpenCV FileStorage XML document.
pub fn read_opencv_storage(bytes: &[u8]) -> OpenedFile {
    let mut reading = Reading::new(OPENCV_FORMAT, bytes.len() as u64);
    reading.fails_first = true;
    let mut judge = opencv::Judge::new(&mut reading);
    let parsed = xml::read(bytes, &Limits::DEFAULT, opencv::LOADER, &mut judge);
    let s = judge.finish();
    if let Err(refusal) = parsed {
        let lead = refusal.severity == Severity::Lead;
        refused(&mut reading, refusal);
        return finished(reading.finish(|_| refused_summary(lead)));
    }
    let matrices = s.types.get("opencv-matrix").copied().unwrap_or(0);
    let typed: u64 = s.types.values().sum();
    finished(reading.finish(|status| match status {
        RowStatus::Pass => format!(
            "OpenCV FileStorage XML: {} nodes of numbers and strings ({typed} typed, {matrices} opencv-matrix), data only",
            s.nodes
        ),
        RowStatus::Fail => "not a safe OpenCV FileStorage XML: it declares what makes XML readers read other data or other files (see the findings)".to_owned(),
        _ => format!(
            "OpenCV FileStorage XML with parts this reader does not prove: {} nodes (see the findings)",
            s.nodes
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_by_content() {
        assert!(looks_like_openvino(
            b"<?xml version=\"1.0\"?>\n<net name=\"m\" version=\"11\">"
        ));
        assert!(looks_like_openvino(b"<NET version=\"10\"/>"));
        assert!(looks_like_openvino(
            b"<net name=\"a very long name cut by the head"
        ));
        assert!(looks_like_openvino(
            b"<!DOCTYPE net [<!ENTITY x SYSTEM \"file:///etc/passwd\">"
        ));
        assert!(!looks_like_openvino(b"<net name=\"m\">"));
        assert!(!looks_like_openvino(b"<network version=\"1\"/>"));
        assert!(!looks_like_openvino(b"<PMML version=\"4.4\"/>"));
        assert!(looks_like_pmml(
            b"<PMML xmlns=\"http://www.dmg.org/PMML-4_4\" version=\"4.4\">"
        ));
        assert!(looks_like_pmml(b"<p:PMML xmlns:p=\"x\">"));
        assert!(looks_like_pmml(b"<!DOCTYPE PMML SYSTEM \"pmml20.dtd\">"));
        assert!(!looks_like_pmml(b"<pmml/>"));
        assert!(!looks_like_pmml(b"<net version=\"11\"/>"));
        assert!(looks_like_opencv_storage(
            b"<?xml version=\"1.0\"?>\n<!-- c -->\n<opencv_storage>\n<cascade"
        ));
        assert!(looks_like_opencv_storage(b"<!DOCTYPE opencv_storage ["));
        assert!(!looks_like_opencv_storage(b"<opencv_storag>"));
        assert!(!looks_like_opencv_storage(b"<cv:opencv_storage>"));
    }

    #[test]
    fn hostile_shapes_are_bounded() {
        // Nesting past the depth bound: a LEAD, refused at once.
        let deep = "<net version=\"11\">".to_owned()
            + &"<a>".repeat(5000)
            + &"</a>".repeat(5000)
            + "</net>";
        let f = read_openvino(deep.as_bytes());
        assert_eq!(f.rows[0].status, RowStatus::Lead);
        assert!(
            f.rows[0].summary.contains("past the memory"),
            "{}",
            f.rows[0].summary
        );
        let f = read_pmml(deep.replace("net", "PMML").as_bytes());
        assert_eq!(f.rows[0].status, RowStatus::Lead);
        // A million empty layers: read, each counted, nothing described past the budget.
        let wide = "<net version=\"11\"><layers>".to_owned()
            + &"<layer id=\"0\" name=\"c\" type=\"Const\" version=\"opset1\"><data element_type=\"f32\" shape=\"\" offset=\"0\" size=\"4\"/></layer>".repeat(20_000)
            + "</layers></net>";
        let f = read_openvino(wide.as_bytes());
        assert!(
            f.tensors.len() as u64
                <= socair_plugin_kit::bounded::described_limit(wide.len() as u64)
        );
        assert_eq!(f.rows[0].status, RowStatus::Fail);
        assert!(f.rows[0].findings.len() <= 200);
    }
}
