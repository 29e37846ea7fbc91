//! The readers on the fixtures PaddlePaddle 3.3.1 wrote (fixtures/paddle, make_fixtures.py):
//! each legit file PASSes with what Paddle's loaders give, each hostile one gets its verdict,
//! and the fuzzing property holds for every fixture and for mutations of them.

use socair_plugin_api::RowStatus;
use std::path::PathBuf;

fn fixture(rel: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/paddle")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn expected() -> serde_json::Value {
    serde_json::from_slice(&fixture("expected.json")).unwrap()
}

fn findings(o: &socair_plugin_api::OpenedFile) -> String {
    o.rows[0]
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.place, f.reason))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn legit_programs_pass_and_are_claimed_by_their_reader_only() {
    let pdmodel = fixture("static/model.pdmodel");
    let head = &pdmodel[..pdmodel.len().min(4096)];
    assert!(socair_paddle::program::looks_like_program(
        head,
        pdmodel.len() as u64
    ));
    assert!(!socair_paddle::params::looks_like_params(
        head,
        pdmodel.len() as u64
    ));
    assert!(!socair_paddle::pir::looks_like_pir(
        head,
        pdmodel.len() as u64
    ));
    let o = socair_paddle::program::read(&pdmodel);
    assert_eq!(o.rows[0].status, RowStatus::Pass, "{}", findings(&o));
    let e = expected();
    let ops = e["static/model.pdmodel"]["ops"].as_array().unwrap().len();
    assert!(
        o.rows[0].summary.contains(&format!("{ops} ops")),
        "{}",
        o.rows[0].summary
    );

    let json = fixture("pir/model.json");
    assert!(socair_paddle::pir::looks_like_pir(
        &json[..json.len().min(4096)],
        json.len() as u64
    ));
    assert!(!socair_paddle::program::looks_like_program(
        &json[..json.len().min(4096)],
        json.len() as u64
    ));
    let o = socair_paddle::pir::read(&json);
    assert_eq!(o.rows[0].status, RowStatus::Pass, "{}", findings(&o));
    assert!(
        o.rows[0].summary.contains("11 ops"),
        "{}",
        o.rows[0].summary
    );
}

#[test]
fn params_tensors_are_the_arrays_paddle_loads() {
    use sha2::{Digest, Sha256};
    let e = expected();
    for (file, names) in [
        ("static/model.pdiparams", "static/model.pdiparams"),
        ("pir/model.pdiparams", "pir/model.pdiparams"),
        (
            "static-control-flow/model.pdiparams",
            "static-control-flow/model.pdiparams",
        ),
        (
            "pir-cnn-lstm/model.pdiparams",
            "pir-cnn-lstm/model.pdiparams",
        ),
    ] {
        let data = fixture(file);
        assert!(socair_paddle::params::looks_like_params(
            &data[..data.len().min(4096)],
            data.len() as u64
        ));
        let t = socair_paddle::params::parse(&data).unwrap();
        let want = e[names]["tensors"].as_object().unwrap();
        // save_combine wrote them in sorted name order.
        let mut sorted: Vec<&String> = want.keys().collect();
        sorted.sort();
        assert_eq!(t.len(), sorted.len(), "{file}");
        for (t, name) in t.iter().zip(sorted) {
            let w = &want[name.as_str()];
            let shape: Vec<u64> = w["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            assert_eq!(t.dims, shape, "{file} {name}");
            let bytes = &data[t.offset as usize..(t.offset + t.len) as usize];
            let sha = format!("{:x}", Sha256::digest(bytes));
            assert_eq!(sha, w["sha256"].as_str().unwrap(), "{file} {name}");
        }
    }
}

#[test]
fn hostile_files_get_their_verdicts() {
    let e = expected();
    for (name, want) in e["hostile"].as_object().unwrap() {
        let data = fixture(&format!("hostile/{name}"));
        let o = if name.ends_with(".json") {
            socair_paddle::pir::read(&data)
        } else if name.ends_with(".pdiparams") {
            let mut r = socair_paddle::params::slice_reader(&data);
            socair_paddle::params::read(data.len() as u64, &mut r, None)
        } else {
            socair_paddle::program::read(&data)
        };
        let status = match want["status"].as_str().unwrap() {
            "PASS" => RowStatus::Pass,
            "LEAD" => RowStatus::Lead,
            _ => RowStatus::Fail,
        };
        let all = format!("{} {}", o.rows[0].summary, findings(&o));
        assert_eq!(o.rows[0].status, status, "{name}: {all}");
        assert!(
            all.contains(want["keyword"].as_str().unwrap()),
            "{name}: {all}"
        );
        if let Some(i) = want.get("op_index").and_then(|v| v.as_u64()) {
            assert!(all.contains(&format!("block 0 op {i} (")), "{name}: {all}");
        }
    }
}

#[test]
fn a_duplicate_key_anywhere_in_a_pir_program_is_refused() {
    let json = String::from_utf8(fixture("pir/model.json")).unwrap();
    let dup = json.replacen(r#""DA":[]"#, r#""DA":[],"DA":[]"#, 1);
    assert_ne!(dup, json);
    let o = socair_paddle::pir::read(dup.as_bytes());
    assert_eq!(o.rows[0].status, RowStatus::Fail);
    assert!(findings(&o).contains("duplicate key"), "{}", findings(&o));
    // An op nested in a region is judged too.
    let nested = json.replacen(
        r##""#":"1.relu""##,
        r##""#":"1.relu","regions":[{"#":"region_1","blocks":[{"#":"block_1","args":[],"ops":[{"#":"1.print","A":[],"I":[],"O":[]}]}]}]"##,
        1,
    );
    let o = socair_paddle::pir::read(nested.as_bytes());
    assert_eq!(o.rows[0].status, RowStatus::Fail, "{}", findings(&o));
    assert!(
        findings(&o).contains("region 0 block 0 op 7 region 0 block 0 op 0 (1.print)"),
        "{}",
        findings(&o)
    );
}

#[test]
fn fuzzing_property_holds_on_fixtures_and_their_mutations() {
    let mut files = vec![
        fixture("static/model.pdmodel"),
        fixture("static/model.pdiparams"),
        fixture("pir/model.json"),
        fixture("pir/model.pdiparams"),
        fixture("hostile/py_func.pdmodel"),
    ];
    files.push(Vec::new());
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for f in files {
        socair_paddle::fuzzing::check_readers(&f);
        for _ in 0..300 {
            let mut m = f.clone();
            if m.is_empty() {
                break;
            }
            for _ in 0..3 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let i = (seed as usize) % m.len();
                m[i] = (seed >> 32) as u8;
            }
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            m.truncate(m.len() - (seed as usize % 4).min(m.len()));
            socair_paddle::fuzzing::check_readers(&m);
        }
    }
}

/// What the walk estimates a real program decodes to, per byte of it: within the 7x the
/// dialect allows, with room (measured here: printed with `--nocapture`).
#[test]
fn real_programs_decode_within_the_bound() {
    for f in ["static/model.pdmodel", "static-control-flow/model.pdmodel"] {
        let data = fixture(f);
        let (_, walked): (socair_paddle::proto::ProgramDesc, _) =
            socair_paddle::wire::decode(&data, socair_paddle::schema::PROGRAM_DESC, "program")
                .unwrap();
        let ratio = walked.overhead as f64 / data.len() as f64;
        println!(
            "{f}: {} bytes decode to an estimated {} ({ratio:.1}x)",
            data.len(),
            walked.overhead
        );
        assert!(ratio < 7.0, "{f}: {ratio}");
    }
}
