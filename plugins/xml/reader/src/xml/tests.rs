//! The strict XML walk on well-formed, hostile and broken documents.

use super::*;
use socair_plugin_api::RowStatus;

/// Records the elements it is handed.
struct Names {
    starts: Vec<(String, usize, u64)>,
    ends: usize,
    reading: Reading,
}

impl Names {
    fn new() -> Self {
        Names {
            starts: Vec::new(),
            ends: 0,
            reading: Reading::new("test", 0),
        }
    }
}

impl Sink for Names {
    fn reading(&mut self) -> &mut Reading {
        &mut self.reading
    }
    fn start(&mut self, tag: StartTag<'_>) -> Result<(), Refusal> {
        self.starts
            .push((tag.name.to_owned(), tag.depth, tag.offset));
        Ok(())
    }
    fn end(&mut self) -> Result<(), Refusal> {
        self.ends += 1;
        Ok(())
    }
}

fn walk(doc: &str) -> (Result<Document, Refusal>, Names, Reading) {
    let mut names = Names::new();
    let r = read(
        doc.as_bytes(),
        &Limits::DEFAULT,
        "the loader skips it",
        &mut names,
    );
    let reading = std::mem::replace(&mut names.reading, Reading::new("test", 0));
    (r, names, reading)
}

fn reasons(reading: Reading) -> (RowStatus, Vec<String>) {
    let status = reading.status();
    let f = reading.finish(|_| String::new());
    let reasons = f.rows[0]
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.place, f.reason))
        .collect();
    (status, reasons)
}

#[test]
fn a_plain_document_is_walked_in_order() {
    let (r, names, reading) = walk("\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c -->\n<net version=\"11\"><layers><layer id=\"0\"/></layers><![CDATA[x]]>&amp;&#65;</net>\n");
    let doc = r.unwrap();
    assert_eq!(doc.root, "net");
    assert_eq!(doc.elements, 3);
    assert_eq!(doc.declared_encoding.as_deref(), Some("UTF-8"));
    assert!(!doc.doctype);
    let starts: Vec<_> = names
        .starts
        .iter()
        .map(|(n, d, _)| (n.as_str(), *d))
        .collect();
    assert_eq!(starts, [("net", 0), ("layers", 1), ("layer", 2)]);
    assert_eq!(names.ends, 3);
    // Offsets count the byte order mark: the root's `<` is where the file has it.
    assert_eq!(names.starts[0].2, 3 + 38 + 12);
    assert_eq!(reasons(reading).0, RowStatus::Pass);
}

#[test]
fn a_doctype_is_a_fail_naming_what_it_declares() {
    let (r, _, reading) = walk("<?xml version=\"1.0\"?>\n<!DOCTYPE net [\n<!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n]>\n<net><x>&xxe;</x></net>");
    assert!(r.unwrap().doctype);
    let (status, reasons) = reasons(reading);
    assert_eq!(status, RowStatus::Fail);
    assert!(reasons.iter().any(|r| r.contains("DOCTYPE")), "{reasons:?}");
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("file:///etc/passwd") && r.contains("XXE")),
        "{reasons:?}"
    );
    assert!(reasons.iter().any(|r| r.contains("&xxe;")), "{reasons:?}");
}

#[test]
fn references_to_undeclared_entities_fail_where_they_are() {
    let (r, _, reading) = walk("<a b=\"&e;\">&#0;</a>");
    r.unwrap();
    let (status, reasons0) = reasons(reading);
    assert_eq!(status, RowStatus::Fail);
    assert!(reasons0[1].contains("&#0;"), "{reasons0:?}");
    let (r, _, reading2) = walk("<a b=\"x&e;y\"><c>&f;</c></a>");
    r.unwrap();
    let (status, reasons) = reasons(reading2);
    assert_eq!(status, RowStatus::Fail);
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons[0].starts_with("byte 0:") && reasons[0].contains("&e;"));
    assert!(reasons[1].contains("&f;"));
}

#[test]
fn broken_documents_are_refused_with_the_place() {
    for (doc, what) in [
        ("<a><b></a>", "well-formed"),
        ("<a>", "ends inside"),
        ("", "no root"),
        ("   ", "no root"),
        ("<a/><b/>", "second root"),
        ("<a/>text", "outside the root"),
        ("x<a/>", "outside the root"),
        ("<a x=\"1\" x=\"2\"/>", "attribute twice"),
        ("<a>\u{1}</a>", "U+0001"),
        ("<a>]]></a>", "]]>"),
        ("<a><!-- a -- b --></a>", "well-formed"),
        ("<a/><?xml version=\"1.0\"?>", "declaration"),
        ("<1a/>", "not an XML name"),
        ("<a>&</a>", "well-formed"),
        ("<a/><!DOCTYPE a>", "DOCTYPE after"),
    ] {
        let (r, _, _) = walk(doc);
        let e = r.unwrap_err();
        assert_eq!(e.severity, Severity::Fail, "{doc:?}");
        assert!(e.reason.contains(what), "{doc:?}: {e:?}");
    }
    let e = read(b"<a>\xff</a>", &Limits::DEFAULT, "", &mut Names::new()).unwrap_err();
    assert_eq!(e.place, "byte 3");
    let e = read(b"\xff\xfe<\0a\0", &Limits::DEFAULT, "", &mut Names::new()).unwrap_err();
    assert_eq!(e.severity, Severity::Lead);
}

#[test]
fn bounds_refuse_as_leads() {
    let limits = Limits {
        max_depth: 3,
        max_elements: 5,
        max_attributes: 2,
        max_value_len: 8,
        max_name_len: 8,
    };
    for doc in [
        "<a><a><a><a><a/></a></a></a></a>",
        "<a><b/><b/><b/><b/><b/></a>",
        "<a x=\"1\" y=\"2\" z=\"3\"/>",
        "<a x=\"123456789\"/>",
        "<abcdefghij/>",
    ] {
        let e = read(doc.as_bytes(), &limits, "", &mut Names::new()).unwrap_err();
        assert_eq!(e.severity, Severity::Lead, "{doc}");
        assert!(e.reason.contains("past the bounds"), "{doc}: {e:?}");
    }
}

#[test]
fn processing_instructions_and_other_encodings_are_leads() {
    let (r, _, reading) = walk("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><?xml-stylesheet href=\"http://x/s.xsl\"?><a/>");
    r.unwrap();
    let (status, reasons) = reasons(reading);
    assert_eq!(status, RowStatus::Lead);
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons[0].contains("ISO-8859-1"));
    assert!(reasons[1].contains("xml-stylesheet"));
}

#[test]
fn attribute_values_reach_the_sink_as_pugixml_reads_them() {
    struct Values(Vec<String>, Reading);
    impl Sink for Values {
        fn reading(&mut self) -> &mut Reading {
            &mut self.1
        }
        fn start(&mut self, tag: StartTag<'_>) -> Result<(), Refusal> {
            self.0
                .extend(tag.attributes.iter().map(|(_, v)| v.to_string()));
            assert_eq!(tag.attribute("missing"), None);
            Ok(())
        }
        fn end(&mut self) -> Result<(), Refusal> {
            Ok(())
        }
    }
    let mut v = Values(Vec::new(), Reading::new("t", 1));
    read(
        b"<a x=\"1&lt;2\" y='a\tb' z=\"&q;\"/>",
        &Limits::DEFAULT,
        "",
        &mut v,
    )
    .unwrap();
    assert_eq!(v.0, ["1<2", "a b", "&q;"]);
    assert_eq!(v.1.status(), RowStatus::Fail);
}
