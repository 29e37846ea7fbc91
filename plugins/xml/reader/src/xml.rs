//! XML read strictly and without processing anything in it: the document is UTF-8, well-formed
//! XML 1.0, one root element, and every construct that XML readers treat differently is a
//! finding with its byte offset. Nothing is fetched, expanded or run: a DOCTYPE is read as
//! text for what it declares ([`dtd`]) and is a FAIL, a reference to an entity other than the
//! five predefined ones is kept as pugixml keeps it and is a FAIL ([`text`]), a processing
//! instruction is a LEAD.
//!
//! The tokenizer is quick-xml 0.41 (a pull parser that processes no DTD and expands no entity;
//! this module judges its DOCTYPE and reference events). Its events go to a [`Sink`]: the
//! OpenVINO reader builds a tree ([`tree`]), the PMML reader judges them as they come.
//! Depth, element count, attribute count and sizes, and names are bounded ([`Limits`]); past a
//! bound the document is refused as a LEAD (nothing more was checked), never read further.

pub mod dtd;
pub mod text;
pub mod tree;

use quick_xml::events::attributes::{AttrError, Attribute};
use quick_xml::events::{BytesStart, Event};
use socair_plugin_kit::model::Severity;
use socair_plugin_kit::reading::Reading;
use std::borrow::Cow;

/// The finding kind of everything this module notes.
pub const KIND: &str = "XML findings";

/// Bounds on what one document may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Elements nested deeper than this are refused (the root is depth 0).
    pub max_depth: usize,
    /// More elements than this are refused.
    pub max_elements: u64,
    /// Attributes of one element.
    pub max_attributes: usize,
    /// Bytes of one attribute's value (as written).
    pub max_value_len: usize,
    /// Bytes of an element's or attribute's name.
    pub max_name_len: usize,
}

impl Limits {
    /// The bounds both readers use: deeper than any model (a PMML decision tree nests one
    /// element per level; OpenVINO's bodies a few levels), attribute values as large as a
    /// chat template or a PMML array needs.
    pub const DEFAULT: Limits = Limits {
        max_depth: 4096,
        max_elements: 64 << 20,
        max_attributes: 4096,
        max_value_len: 64 << 20,
        max_name_len: 4096,
    };
}

/// A start tag handed to a [`Sink`].
#[derive(Debug)]
pub struct StartTag<'a> {
    /// The qualified name as written (`net`, `pmml:PMML`).
    pub name: &'a str,
    /// Attributes in document order, each value as pugixml reads it ([`text::attribute_value`]);
    /// no name occurs twice (a repeated attribute refuses the document).
    pub attributes: Vec<(&'a str, Cow<'a, str>)>,
    /// The byte offset of its `<` in the file.
    pub offset: u64,
    /// Its depth: 0 for the root.
    pub depth: usize,
}

impl StartTag<'_> {
    /// The value of attribute `name`.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_ref())
    }
}

/// A document refused as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// FAIL for a document XML readers read differently (not well-formed, not UTF-8); LEAD
    /// for one past this reader's bounds or in an encoding it does not decode.
    pub severity: Severity,
    /// Where.
    pub place: String,
    /// Why.
    pub reason: String,
}

impl Refusal {
    /// A document that is not well-formed at byte `offset`.
    pub fn malformed(offset: u64, reason: impl Into<String>) -> Self {
        Refusal {
            severity: Severity::Fail,
            place: format!("byte {offset}"),
            reason: format!(
                "not well-formed XML: {}; XML parsers refuse the file and lenient ones (pugixml) read what they can of it",
                reason.into()
            ),
        }
    }

    /// A document past a bound at byte `offset`.
    pub fn past_bounds(offset: u64, reason: impl Into<String>) -> Self {
        Refusal {
            severity: Severity::Lead,
            place: format!("byte {offset}"),
            reason: format!(
                "{}: past the bounds socair reads XML in, nothing after it was checked (not evidence against the file)",
                reason.into()
            ),
        }
    }
}

/// What receives the elements of a document, in document order, and the reading its findings
/// are noted in.
pub trait Sink {
    /// An element starts.
    fn start(&mut self, tag: StartTag<'_>) -> Result<(), Refusal>;
    /// The element last started and not ended ends.
    fn end(&mut self) -> Result<(), Refusal>;
    /// Where findings go.
    fn reading(&mut self) -> &mut Reading;
}

/// What the reading found besides the elements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    /// The root element's qualified name.
    pub root: String,
    /// Elements read.
    pub elements: u64,
    /// The encoding the XML declaration names, if any.
    pub declared_encoding: Option<String>,
    /// Whether it has a DOCTYPE.
    pub doctype: bool,
}

/// Reads `bytes` as an XML document, handing its elements to `sink` and noting findings in
/// its reading under [`KIND`]. `loader` says, for a DOCTYPE's finding, what the format's own
/// loader does with one.
pub fn read(
    bytes: &[u8],
    limits: &Limits,
    loader: &str,
    sink: &mut dyn Sink,
) -> Result<Document, Refusal> {
    let (bom, text) = decode(bytes)?;
    let mut walk = Walk {
        bom,
        limits,
        loader,
        depth: 0,
        root_done: false,
        doc: Document::default(),
        sink,
    };
    let mut reader = quick_xml::Reader::from_str(text);
    let config = reader.config_mut();
    config.check_comments = true;
    config.check_end_names = true;
    config.expand_empty_elements = false;
    config.trim_text(false);
    loop {
        let at = bom + reader.buffer_position();
        let event = reader
            .read_event()
            .map_err(|e| Refusal::malformed(bom + reader.error_position(), e.to_string()))?;
        if !walk.event(event, at)? {
            break;
        }
    }
    Ok(walk.doc)
}

/// The document's text after a UTF-8 byte order mark (and the mark's length), or why it is
/// refused: not UTF-8, or holding a character XML forbids.
fn decode(bytes: &[u8]) -> Result<(u64, &str), Refusal> {
    let (bom, body) = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (3u64, rest),
        None => (0, bytes),
    };
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return Err(Refusal {
            severity: Severity::Lead,
            place: "byte 0".into(),
            reason: "UTF-16 (its byte order mark says so), which this reader does not decode: nothing in it was checked".into(),
        });
    }
    let text = std::str::from_utf8(body).map_err(|e| {
        Refusal::malformed(
            bom + e.valid_up_to() as u64,
            "bytes that are not UTF-8 in a document that declares no other encoding (pugixml reads them as they are, XML parsers refuse them)",
        )
    })?;
    if let Some((i, c)) = text.char_indices().find(|&(_, c)| !text::is_xml_char(c)) {
        return Err(Refusal::malformed(
            bom + i as u64,
            format!(
                "the character U+{:04X}, which XML forbids (pugixml stops at a NUL, other parsers refuse it)",
                c as u32
            ),
        ));
    }
    Ok((bom, text))
}

/// One pass over the events.
struct Walk<'l, 's> {
    bom: u64,
    limits: &'l Limits,
    loader: &'l str,
    depth: usize,
    root_done: bool,
    doc: Document,
    sink: &'s mut dyn Sink,
}

impl Walk<'_, '_> {
    fn note(&mut self, severity: Severity, at: u64, reason: String) {
        self.sink
            .reading()
            .note(KIND, severity, || format!("byte {at}"), || reason);
    }

    /// Handles one event at byte `at`; false at the end of the document.
    fn event(&mut self, event: Event<'_>, at: u64) -> Result<bool, Refusal> {
        match event {
            Event::Start(e) => self.start(&e, at, false)?,
            Event::Empty(e) => self.start(&e, at, true)?,
            Event::End(_) => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    self.root_done = true;
                }
                self.sink.end()?;
            }
            Event::Text(t) => {
                let raw = std::str::from_utf8(&t).unwrap_or_default();
                self.text(raw, at)?;
            }
            Event::CData(_) => {
                if self.depth == 0 {
                    return Err(Refusal::malformed(
                        at,
                        "a CDATA section outside the root element",
                    ));
                }
            }
            Event::GeneralRef(r) => {
                if self.depth == 0 {
                    return Err(Refusal::malformed(
                        at,
                        "a reference outside the root element",
                    ));
                }
                let body = std::str::from_utf8(&r).unwrap_or_default();
                if let Err(problem) = text::reference_is_plain(body) {
                    self.note(Severity::Fail, at, format!("text {}", problem.describe()));
                }
            }
            Event::Comment(_) => {}
            Event::Decl(d) => self.declaration(&d, at)?,
            Event::PI(p) => {
                let target = String::from_utf8_lossy(p.target()).into_owned();
                if target.eq_ignore_ascii_case("xml") {
                    return Err(Refusal::malformed(
                        at,
                        "an XML declaration that is not at the start of the file",
                    ));
                }
                self.note(
                    Severity::Lead,
                    at,
                    format!("a processing instruction <?{target} ...?>: the model's loader skips it, but a reader that acts on it (an XML stylesheet's href) may fetch what it names"),
                );
            }
            Event::DocType(d) => {
                if self.depth > 0 || self.root_done || self.doc.doctype {
                    return Err(Refusal::malformed(
                        at,
                        "a DOCTYPE after the root element or a second DOCTYPE",
                    ));
                }
                self.doc.doctype = true;
                let declared = dtd::parse(std::str::from_utf8(&d).unwrap_or_default());
                for reason in dtd::describe(&declared, self.loader) {
                    self.note(Severity::Fail, at, reason);
                }
            }
            Event::Eof => {
                if self.doc.root.is_empty() {
                    return Err(Refusal::malformed(at, "no root element"));
                }
                if self.depth > 0 {
                    return Err(Refusal::malformed(at, "the file ends inside an element"));
                }
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn text(&mut self, raw: &str, at: u64) -> Result<(), Refusal> {
        if self.depth == 0 && !raw.trim_matches([' ', '\t', '\n', '\r']).is_empty() {
            return Err(Refusal::malformed(at, "text outside the root element"));
        }
        if let Some(i) = raw.find("]]>") {
            return Err(Refusal::malformed(at + i as u64, "`]]>` in text"));
        }
        Ok(())
    }

    fn declaration(
        &mut self,
        d: &quick_xml::events::BytesDecl<'_>,
        at: u64,
    ) -> Result<(), Refusal> {
        if at != self.bom {
            return Err(Refusal::malformed(
                at,
                "an XML declaration that is not at the start of the file",
            ));
        }
        let version = d
            .version()
            .map_err(|e| Refusal::malformed(at, e.to_string()))?;
        if version.as_ref() != b"1.0" {
            self.note(
                Severity::Lead,
                at,
                format!(
                    "declares XML version {:?}: this reader reads XML 1.0 (the version every writer of these formats writes)",
                    String::from_utf8_lossy(&version)
                ),
            );
        }
        if let Some(encoding) = d.encoding() {
            let encoding = encoding.map_err(|e| Refusal::malformed(at, e.to_string()))?;
            let name = String::from_utf8_lossy(&encoding).into_owned();
            if !name.eq_ignore_ascii_case("utf-8") && !name.eq_ignore_ascii_case("utf8") {
                self.note(
                    Severity::Lead,
                    at,
                    format!("declares the encoding {name:?}: this reader reads the bytes as UTF-8, and readers that decode the declared encoding (pugixml decodes Latin-1 when it is named) may read other text"),
                );
            }
            self.doc.declared_encoding = Some(name);
        }
        Ok(())
    }

    fn start(&mut self, e: &BytesStart<'_>, at: u64, empty: bool) -> Result<(), Refusal> {
        if self.root_done {
            return Err(Refusal::malformed(at, "a second root element (pugixml reads the first and ignores the rest; XML allows one)"));
        }
        if self.depth > self.limits.max_depth {
            return Err(Refusal::past_bounds(
                at,
                format!("elements nested deeper than {}", self.limits.max_depth),
            ));
        }
        self.doc.elements += 1;
        if self.doc.elements > self.limits.max_elements {
            return Err(Refusal::past_bounds(
                at,
                format!("more than {} elements", self.limits.max_elements),
            ));
        }
        let name = std::str::from_utf8(e.name().into_inner()).unwrap_or_default();
        self.check_name(name, at)?;
        let attributes = self.attributes(e, name, at)?;
        if self.depth == 0 {
            self.doc.root = name.to_owned();
        }
        self.sink.start(StartTag {
            name,
            attributes,
            offset: at,
            depth: self.depth,
        })?;
        if empty {
            self.sink.end()?;
            if self.depth == 0 {
                self.root_done = true;
            }
        } else {
            self.depth += 1;
        }
        Ok(())
    }

    fn check_name(&self, name: &str, at: u64) -> Result<(), Refusal> {
        if name.len() > self.limits.max_name_len {
            return Err(Refusal::past_bounds(
                at,
                format!("a name of {} bytes", name.len()),
            ));
        }
        if !text::is_name(name) {
            return Err(Refusal::malformed(
                at,
                format!("{:?} is not an XML name", bounded(name)),
            ));
        }
        Ok(())
    }

    fn attributes<'a>(
        &mut self,
        e: &'a BytesStart<'a>,
        element: &str,
        at: u64,
    ) -> Result<Vec<(&'a str, Cow<'a, str>)>, Refusal> {
        let mut out = Vec::new();
        let mut iter = e.attributes();
        iter.with_checks(true);
        for attribute in iter {
            let Attribute { key, value } = attribute.map_err(|err| match err {
                AttrError::Duplicated(again, _) => Refusal::malformed(
                    at,
                    format!("element <{}> has an attribute twice (at byte {}): pugixml reads the first, other parsers refuse the file or read the last", bounded(element), at + again as u64),
                ),
                other => Refusal::malformed(at, format!("element <{}>: {other}", bounded(element))),
            })?;
            if out.len() >= self.limits.max_attributes {
                return Err(Refusal::past_bounds(
                    at,
                    format!(
                        "more than {} attributes on one element",
                        self.limits.max_attributes
                    ),
                ));
            }
            let key = std::str::from_utf8(key.into_inner()).unwrap_or_default();
            self.check_name(key, at)?;
            if value.len() > self.limits.max_value_len {
                return Err(Refusal::past_bounds(
                    at,
                    format!("an attribute value of {} bytes", value.len()),
                ));
            }
            let raw: &'a str = match value {
                Cow::Borrowed(b) => std::str::from_utf8(b).unwrap_or_default(),
                // quick-xml borrows every value of a document read from a string.
                Cow::Owned(_) => {
                    return Err(Refusal::malformed(
                        at,
                        "an attribute value the tokenizer did not borrow",
                    ))
                }
            };
            let (decoded, problems) = text::attribute_value(raw);
            for p in problems {
                self.note(
                    Severity::Fail,
                    at,
                    format!(
                        "attribute {key:?} of <{}> {}",
                        bounded(element),
                        p.describe()
                    ),
                );
            }
            out.push((key, decoded));
        }
        Ok(out)
    }
}

/// A name cut for a message.
fn bounded(s: &str) -> String {
    socair_plugin_kit::bounded::short(s)
}

#[cfg(test)]
mod tests;
