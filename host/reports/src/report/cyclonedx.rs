//! Scans as a CycloneDX 1.6 ML-BOM (`socair bom`, `socair scan --format cyclonedx`).
//!
//! Each artifact is a component of type `machine-learning-model`, with its SHA-256 (a model
//! directory's is its `socair.modeldir/v1` digest, which the property `socair:digest` names),
//! and as properties its format, its size, its tensors' count and element types, the scan's
//! verdict and each row's status; each file of a model directory is a `file` component inside
//! it, with its SHA-256, its format(s) and tensors. An artifact that could not be read is a
//! `file` component whose `socair:verdict` is `unreadable`. The document holds no time and no
//! random serial number: the same scans give the same bytes. CycloneDX 1.6's schema is
//! `fixtures/schemas/bom-1.6.schema.json`.

use crate::report::batch::{shown, ArtifactScan, Verdict};
use crate::report::scanned::ScannedFile;
use serde::Serialize;
use std::collections::BTreeMap;

/// The schema a BOM names.
pub const CYCLONEDX_SCHEMA: &str = "http://cyclonedx.org/schema/bom-1.6.schema.json";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Bom {
    #[serde(rename = "$schema")]
    schema: &'static str,
    bom_format: &'static str,
    spec_version: &'static str,
    version: u32,
    metadata: Metadata,
    components: Vec<Component>,
}

#[derive(Serialize)]
struct Metadata {
    tools: Tools,
    properties: Vec<Property>,
}

#[derive(Serialize)]
struct Tools {
    components: Vec<Component>,
}

#[derive(Serialize)]
struct Component {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(rename = "bom-ref", skip_serializing_if = "Option::is_none")]
    bom_ref: Option<String>,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hashes: Vec<Hash>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    properties: Vec<Property>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    components: Vec<Component>,
}

#[derive(Serialize)]
struct Hash {
    alg: &'static str,
    content: String,
}

#[derive(Serialize)]
struct Property {
    name: String,
    value: String,
}

fn prop(name: &str, value: impl ToString) -> Property {
    Property {
        name: format!("socair:{name}"),
        value: value.to_string(),
    }
}

fn sha256(hex: &str) -> Vec<Hash> {
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        vec![Hash {
            alg: "SHA-256",
            content: hex.to_owned(),
        }]
    } else {
        Vec::new()
    }
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Clean => "clean",
        Verdict::Blocked => "blocked",
        Verdict::NeedsReview => "needs_review",
        Verdict::Unreadable => "unreadable",
    }
}

/// `F32=12,I64=1`: how many tensors of each dtype, by dtype.
fn dtypes(counts: &BTreeMap<String, usize>) -> String {
    counts
        .iter()
        .map(|(d, n)| format!("{d}={n}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn tensor_props(out: &mut Vec<Property>, tensors: usize, counts: &BTreeMap<String, usize>) {
    out.push(prop("tensors:count", tensors));
    if !counts.is_empty() {
        out.push(prop("tensors:dtypes", dtypes(counts)));
    }
}

fn file_component(parent: &str, f: &ScannedFile) -> Component {
    let mut properties = vec![prop("size_bytes", f.size)];
    properties.push(prop(
        "format",
        if f.formats.is_empty() {
            "companion (no reader claims it)".to_owned()
        } else {
            f.formats.join(",")
        },
    ));
    tensor_props(&mut properties, f.tensors, &f.dtypes);
    if let Some(blob) = &f.blob {
        properties.push(prop("hf:blob", blob));
    }
    Component {
        kind: "file",
        bom_ref: Some(format!("{parent}/{}", f.rel)),
        name: f.rel.clone(),
        version: None,
        hashes: sha256(&f.sha256),
        properties,
        components: Vec::new(),
    }
}

fn artifact_component(i: usize, o: &ArtifactScan) -> Component {
    let given = shown(&o.path);
    let bom_ref = format!("socair:artifact:{i}");
    let Ok(scanned) = &o.scan else {
        let why = o.scan.as_ref().err().cloned().unwrap_or_default();
        return Component {
            kind: "file",
            bom_ref: Some(bom_ref),
            name: given.clone(),
            version: None,
            hashes: Vec::new(),
            properties: vec![
                prop("path", &given),
                prop("verdict", "unreadable"),
                prop("error", why),
            ],
            components: Vec::new(),
        };
    };
    let r = &scanned.report;
    let is_dir = r.artifact.format == "model directory";
    let mut properties = vec![
        prop("path", &given),
        prop("format", &r.artifact.format),
        prop("size_bytes", r.artifact.size_bytes),
        prop(
            "digest",
            if is_dir {
                "socair.modeldir/v1"
            } else {
                "sha256"
            },
        ),
        prop("verdict", verdict_name(Verdict::of(r))),
    ];
    for row in &r.rows {
        properties.push(prop(&format!("row:{}", row.check), &row.status));
    }
    let mut counts = BTreeMap::new();
    for f in &scanned.files {
        for (d, n) in &f.dtypes {
            *counts.entry(d.clone()).or_insert(0) += n;
        }
    }
    let tensors = scanned.files.iter().map(|f| f.tensors).sum();
    tensor_props(&mut properties, tensors, &counts);
    properties.push(prop("report", &r.schema));
    let files = if is_dir {
        scanned
            .files
            .iter()
            .map(|f| file_component(&bom_ref, f))
            .collect()
    } else {
        Vec::new()
    };
    Component {
        kind: "machine-learning-model",
        bom_ref: Some(bom_ref),
        name: r.artifact.name.clone(),
        version: None,
        hashes: sha256(&r.artifact.sha256),
        properties,
        components: files,
    }
}

/// The BOM of these scans.
pub fn bom(outcomes: &[ArtifactScan]) -> impl Serialize {
    let summary = crate::report::batch::Summary::of(outcomes);
    Bom {
        schema: CYCLONEDX_SCHEMA,
        bom_format: "CycloneDX",
        spec_version: "1.6",
        version: 1,
        metadata: Metadata {
            tools: Tools {
                components: vec![Component {
                    kind: "application",
                    bom_ref: None,
                    name: "socair".into(),
                    version: Some(crate::VERSION.into()),
                    hashes: Vec::new(),
                    properties: Vec::new(),
                    components: Vec::new(),
                }],
            },
            properties: vec![
                prop("summary:artifacts", summary.artifacts),
                prop("summary:clean", summary.clean),
                prop("summary:blocked", summary.blocked),
                prop("summary:needs_review", summary.needs_review),
                prop("summary:unreadable", summary.unreadable),
            ],
        },
        components: outcomes
            .iter()
            .enumerate()
            .map(|(i, o)| artifact_component(i, o))
            .collect(),
    }
}
