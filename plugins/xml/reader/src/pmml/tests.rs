//! The PMML judge on small documents (the fixtures are in tests/reference_files.rs).

use crate::read_pmml;
use socair_plugin_api::{OpenedFile, RowStatus};

fn pmml(body: &str) -> String {
    format!("<?xml version=\"1.0\"?>\n<PMML xmlns=\"http://www.dmg.org/PMML-4_4\" version=\"4.4\">\n<Header><Application name=\"t\" version=\"2\"/></Header>\n<DataDictionary/>\n{body}\n</PMML>\n")
}

fn reasons(f: &OpenedFile) -> String {
    f.rows[0]
        .findings
        .iter()
        .map(|f| format!("{} | {}\n", f.place, f.reason))
        .collect()
}

const TREE: &str = "<TreeModel functionName=\"regression\"><MiningSchema/><Node score=\"1\"><True/></Node></TreeModel>";

#[test]
fn ordinary_models_pass() {
    let f = read_pmml(pmml(TREE).as_bytes());
    assert_eq!(f.rows[0].status, RowStatus::Pass, "{}", reasons(&f));
    assert_eq!(f.format.as_str(), "pmml");
    assert!(f.tensors.is_empty());
    let meta: Vec<_> = f
        .metadata
        .iter()
        .map(|t| format!("{}={}", t.0, t.1))
        .collect();
    for m in [
        "pmml.version=4.4",
        "pmml.application=t 2",
        "pmml.models=TreeModel x1",
        "pmml.namespace=http://www.dmg.org/PMML-4_4",
    ] {
        assert!(meta.contains(&m.to_owned()), "{m}: {meta:?}");
    }
    assert!(
        f.rows[0].summary.contains("1 model element(s) (TreeModel)"),
        "{}",
        f.rows[0].summary
    );
}

#[test]
fn extensions_unknown_elements_and_foreign_functions_are_leads() {
    let body = format!("<Extension name=\"x-vendor\" extender=\"acme\"><Anything><Deep/></Anything></Extension>\n<TransformationDictionary><DefineFunction name=\"mine\"><Apply function=\"+\"/></DefineFunction><DerivedField><Apply function=\"mine\"/></DerivedField><DerivedField><Apply function=\"org.acme.Udf\"/></DerivedField><DerivedField><Apply function=\"org.acme.Udf\"/></DerivedField></TransformationDictionary>\n<Gadget/>\n{TREE}");
    let f = read_pmml(pmml(&body).as_bytes());
    assert_eq!(f.rows[0].status, RowStatus::Lead);
    let r = reasons(&f);
    assert_eq!(f.rows[0].findings.len(), 3, "{r}");
    assert!(r.contains("x-vendor") && r.contains("acme"), "{r}");
    assert!(r.contains("<Gadget>"), "{r}");
    assert!(
        r.contains("\"org.acme.Udf\" (2 time(s))") && r.contains("FunctionRegistry"),
        "{r}"
    );
    assert!(!r.contains("Anything") && !r.contains("\"mine\""), "{r}");
}

#[test]
fn inline_table_cells_are_data() {
    let body = format!("<TransformationDictionary><DerivedField><MapValues outputColumn=\"out\"><FieldColumnPair field=\"a\" column=\"in\"/><InlineTable><row><in>1</in><out>2</out></row></InlineTable></MapValues></DerivedField></TransformationDictionary>{TREE}");
    let f = read_pmml(pmml(&body).as_bytes());
    assert_eq!(f.rows[0].status, RowStatus::Pass, "{}", reasons(&f));
}

#[test]
fn dtds_and_entities_fail_and_other_roots_are_refused() {
    let doc = pmml(TREE)
        .replace(
            "<PMML",
            "<!DOCTYPE PMML [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>\n<PMML",
        )
        .replace("<Header>", "<Header description=\"&e;\">");
    let f = read_pmml(doc.as_bytes());
    assert_eq!(f.rows[0].status, RowStatus::Fail);
    let r = reasons(&f);
    assert!(r.contains("file:///etc/passwd") && r.contains("&e;"), "{r}");
    let f = read_pmml(b"<PMMX version=\"4.4\"/>");
    assert_eq!(f.rows[0].status, RowStatus::Fail);
    assert!(
        reasons(&f).contains("not a PMML document"),
        "{}",
        reasons(&f)
    );
    let f = read_pmml(
        b"<p:PMML xmlns:p=\"http://www.dmg.org/PMML-4_4\" version=\"4.3\"><p:Header/></p:PMML>",
    );
    assert_eq!(f.rows[0].status, RowStatus::Pass, "{}", reasons(&f));
}
