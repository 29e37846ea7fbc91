//! The IR analysis on small hand-written documents (the files ov.save_model writes are in
//! tests/reference_files.rs).

use crate::read_openvino;
use socair_plugin_api::{OpenedFile, RowStatus};

fn ir(layers: &str, extra: &str) -> String {
    format!("<?xml version=\"1.0\"?>\n<net name=\"t\" version=\"11\">\n<layers>\n{layers}</layers>\n<edges/>\n{extra}</net>\n")
}

fn constant(id: u32, name: &str, data: &str) -> String {
    format!("<layer id=\"{id}\" name=\"{name}\" type=\"Const\" version=\"opset1\">\n<data {data} />\n<output><port id=\"0\" precision=\"FP32\"><dim>2</dim></port></output>\n</layer>\n")
}

fn reasons(f: &OpenedFile) -> String {
    f.rows[0]
        .findings
        .iter()
        .map(|f| format!("{} | {}\n", f.place, f.reason))
        .collect()
}

#[test]
fn constants_become_ranges_of_the_weights_file() {
    let f = read_openvino(
        ir(
            &(constant(
                0,
                "w",
                "element_type=\"f32\" shape=\"2, 3\" offset=\"8\" size=\"24\"",
            ) + &constant(
                1,
                "q",
                "element_type=\"u4\" shape=\"3\" offset=\"0\" size=\"2\"",
            ) + &constant(
                2,
                "s",
                "element_type=\"string\" shape=\"2\" offset=\"32\" size=\"27\"",
            )),
            "",
        )
        .as_bytes(),
    );
    assert_eq!(f.rows[0].status, RowStatus::Pass, "{}", reasons(&f));
    assert_eq!(f.format.as_str(), "openvino-ir");
    let t: Vec<_> = f
        .tensors
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.dtype.as_str(),
                t.element_type.as_ref().map(|e| e.as_str()).into_option(),
                t.shape.to_vec(),
                t.ranges[0].offset,
                t.ranges[0].len,
            )
        })
        .collect();
    assert_eq!(
        t,
        [
            ("w", "f32", Some("F32"), vec![2, 3], 8, 24),
            ("q", "u4", None, vec![3], 0, 2),
            ("s", "string", None, vec![2], 32, 27),
        ]
    );
    assert!(f
        .tensors
        .iter()
        .all(|t| t.file.as_ref().map(|f| f.as_str()).into_option() == Some("{stem}.bin")));
    assert!(
        f.rows[0].summary.contains("3 of 3 constants"),
        "{}",
        f.rows[0].summary
    );
}

#[test]
fn constants_readers_may_take_differently_fail_and_are_unread() {
    for (data, what) in [
        (
            "element_type=\"f32\" shape=\"4\" offset=\"0\" size=\"8\"",
            "need 16",
        ),
        (
            "element_type=\"f32\" shape=\"2\" offset=\"0x10\" size=\"8\"",
            "not a decimal",
        ),
        (
            "element_type=\"f32\" shape=\"2\" offset=\"+8\" size=\"8\"",
            "not plain digits",
        ),
        (
            "element_type=\"f32\" shape=\"2,\" offset=\"0\" size=\"8\"",
            "dimension",
        ),
        (
            "element_type=\"f32\" shape=\"2\" offset=\"0\" size=\"9223372036854775808\"",
            "larger than a signed 64-bit",
        ),
        (
            "element_type=\"f32\" shape=\"4294967296,4294967296\" offset=\"0\" size=\"8\"",
            "more elements than 64 bits",
        ),
    ] {
        let f = read_openvino(ir(&constant(0, "w", data), "").as_bytes());
        assert_eq!(f.rows[0].status, RowStatus::Fail, "{data}: {}", reasons(&f));
        assert!(reasons(&f).contains(what), "{data}: {}", reasons(&f));
        assert!(f.tensors.is_empty());
        assert_eq!(f.unread.len(), 1);
        assert_eq!(
            f.unread[0]
                .tensor
                .as_ref()
                .map(|t| t.as_str())
                .into_option(),
            Some("w")
        );
    }
}

#[test]
fn constants_openvino_refuses_are_leads() {
    for (data, what) in [
        (
            "element_type=\"q7\" shape=\"2\" offset=\"0\" size=\"8\"",
            "unknown to OpenVINO",
        ),
        ("shape=\"2\" offset=\"0\" size=\"8\"", "no element_type"),
        ("element_type=\"f32\" shape=\"2\" size=\"8\"", "no offset"),
        (
            "element_type=\"f32\" shape=\"2\" offset=\"0\" size=\"8\" value=\"abcdefgh\"",
            "`value` attribute",
        ),
        (
            "element_type=\"dynamic\" shape=\"2\" offset=\"0\" size=\"8\"",
            "holds no data",
        ),
    ] {
        let f = read_openvino(ir(&constant(0, "w", data), "").as_bytes());
        assert_eq!(f.rows[0].status, RowStatus::Lead, "{data}: {}", reasons(&f));
        assert!(reasons(&f).contains(what), "{data}: {}", reasons(&f));
        assert!(f.tensors.is_empty());
    }
    // More bytes than the shape needs: located (the first ones), and a LEAD for the rest.
    let f = read_openvino(
        ir(
            &constant(
                0,
                "w",
                "element_type=\"f32\" shape=\"2\" offset=\"0\" size=\"12\"",
            ),
            "",
        )
        .as_bytes(),
    );
    assert_eq!(f.rows[0].status, RowStatus::Lead);
    assert_eq!(f.tensors[0].ranges[0].len, 8);
}

#[test]
fn layers_outside_the_opsets_are_leads_naming_them() {
    let custom = "<layer id=\"1\" name=\"c\" type=\"BPETokenizer\" version=\"extension\"/>\n<layer id=\"2\" name=\"d\" type=\"BPETokenizer\" version=\"extension\"/>\n<layer id=\"3\" name=\"r\" type=\"relu\" version=\"opset1\"/>\n";
    let f = read_openvino(ir(custom, "").as_bytes());
    assert_eq!(f.rows[0].status, RowStatus::Lead);
    let r = reasons(&f);
    assert!(
        r.contains("2 layer(s) of type \"BPETokenizer\" (version \"extension\")"),
        "{r}"
    );
    assert_eq!(f.rows[0].findings.len(), 1, "{r}");
    assert!(
        f.rows[0].summary.contains("2 of no opset"),
        "{}",
        f.rows[0].summary
    );
}

#[test]
fn what_pugixml_reads_once_fails_when_repeated() {
    let twice = constant(
        0,
        "w",
        "element_type=\"f32\" shape=\"2\" offset=\"0\" size=\"8\"",
    ) + &constant(
        0,
        "v",
        "element_type=\"f32\" shape=\"2\" offset=\"8\" size=\"8\"",
    );
    let f = read_openvino(ir(&twice, "").as_bytes());
    assert_eq!(f.rows[0].status, RowStatus::Fail);
    assert!(
        reasons(&f).contains("a second layer with id 0"),
        "{}",
        reasons(&f)
    );
    let f = read_openvino(ir("", "<layers/>\n").as_bytes());
    assert_eq!(f.rows[0].status, RowStatus::Fail);
    assert!(
        reasons(&f).contains("2 <layers> elements"),
        "{}",
        reasons(&f)
    );
    let layer = "<layer id=\"0\" name=\"w\" type=\"Const\" version=\"opset1\"><data element_type=\"f32\" shape=\"2\" offset=\"0\" size=\"8\"/><data element_type=\"f32\" shape=\"2\" offset=\"8\" size=\"8\"/></layer>\n";
    let f = read_openvino(ir(layer, "").as_bytes());
    assert!(reasons(&f).contains("2 <data> elements"), "{}", reasons(&f));
}

#[test]
fn bodies_are_read_and_their_tensors_named_by_path() {
    let body = |name: &str, offset: u32| {
        format!(
            "<layers>\n{}</layers><edges/>",
            constant(
                1,
                name,
                &format!("element_type=\"f32\" shape=\"2\" offset=\"{offset}\" size=\"8\"")
            )
        )
    };
    let layer = format!(
        "<layer id=\"5\" name=\"branch\" type=\"If\" version=\"opset8\">\n<then_body>{}</then_body>\n<else_body>{}</else_body>\n</layer>\n<layer id=\"6\" name=\"other\" type=\"Add\" version=\"opset1\"><body>{}</body></layer>\n",
        body("a", 0),
        body("b", 8),
        body("hidden", 16)
    );
    let f = read_openvino(ir(&layer, "").as_bytes());
    assert_eq!(f.rows[0].status, RowStatus::Pass, "{}", reasons(&f));
    let mut names: Vec<_> = f.tensors.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    // A body under a layer that is no subgraph operation is read by no OpenVINO.
    assert_eq!(names, ["branch/else_body/b", "branch/then_body/a"]);
}

#[test]
fn rt_info_naming_a_file_fails_and_templates_are_judged() {
    let f = read_openvino(ir("", "<rt_info>\n<info name=\"__weights_path\" value=\"/srv/w.bin\"/>\n<runtime_options><KV_CACHE_PRECISION value=\"u8\"/></runtime_options>\n</rt_info>\n").as_bytes());
    assert_eq!(f.rows[0].status, RowStatus::Fail);
    assert!(reasons(&f).contains("/srv/w.bin"), "{}", reasons(&f));
    let meta: Vec<_> = f
        .metadata
        .iter()
        .map(|t| format!("{}={}", t.0, t.1))
        .collect();
    assert!(
        meta.contains(&"openvino.runtime_options=KV_CACHE_PRECISION=u8".to_owned()),
        "{meta:?}"
    );
    let good = "{% for m in messages %}{{ m['content'] }}{% endfor %}";
    let f = read_openvino(
        ir(
            "",
            &format!("<rt_info><chat_template value=\"{good}\"/></rt_info>"),
        )
        .as_bytes(),
    );
    assert_eq!(f.rows[0].status, RowStatus::Pass, "{}", reasons(&f));
    let evil = "{{ ''.__class__.__mro__[1].__subclasses__() }}";
    let f = read_openvino(
        ir(
            "",
            &format!("<rt_info><info name=\"chat_template\" value=\"{evil}\"/></rt_info>"),
        )
        .as_bytes(),
    );
    assert_eq!(f.rows[0].status, RowStatus::Fail, "{}", reasons(&f));
    assert!(
        reasons(&f).contains("rt_info \"chat_template\""),
        "{}",
        reasons(&f)
    );
}

#[test]
fn root_and_version_are_checked() {
    let f = read_openvino(b"<net name=\"t\" version=\"7\"><layers/></net>");
    assert_eq!(f.rows[0].status, RowStatus::Lead);
    assert!(reasons(&f).contains("IR version \"7\""), "{}", reasons(&f));
    let f = read_openvino(b"<NET version=\"10\"/>");
    assert_eq!(f.rows[0].status, RowStatus::Pass, "{}", reasons(&f));
    let f = read_openvino(b"<graph version=\"10\"/>");
    assert_eq!(f.rows[0].status, RowStatus::Lead);
    let f = read_openvino(b"<net version=\"11\"><layers><layer id=\"0\" name=\"x\" type=\"Parameter\"/></layers></net>");
    assert!(
        reasons(&f).contains("no version attribute"),
        "{}",
        reasons(&f)
    );
}

#[test]
fn a_refused_document_keeps_what_came_before() {
    let f = read_openvino(
        b"<!DOCTYPE net [<!ENTITY e SYSTEM \"http://x/\">]><net version=\"11\"><layers></net>",
    );
    assert_eq!(f.rows[0].status, RowStatus::Fail);
    let r = reasons(&f);
    assert!(
        r.contains("DOCTYPE") && r.contains("http://x/") && r.contains("well-formed"),
        "{r}"
    );
    assert!(
        f.rows[0].names_severities
            || f.rows[0]
                .findings
                .iter()
                .all(|x| x.severity == f.rows[0].findings[0].severity)
    );
    assert_eq!(f.unread.len(), 1);
}
