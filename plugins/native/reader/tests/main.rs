//! Tests of the readers on small hand-made documents, and the fuzz property over mutated
//! fixtures (the fallback for a fuzzer run: every mutation returns and stays within bounds).

use socair_native::{flax, fuzzing, lightgbm, xgboost};
use socair_plugin_kit::Severity;

fn fixture(rel: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../../fixtures/native/{rel}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const MINIMAL: &str = r#"{"learner":{"attributes":{},"gradient_booster":{"name":"gblinear","model":{"weights":[1.5E0,-2E0]}},"learner_model_param":{},"objective":{"name":"reg:squarederror"}},"version":[3,2,0]}"#;

#[test]
fn claims_are_by_content_and_specific() {
    assert!(xgboost::looks_like_json(MINIMAL.as_bytes()));
    assert!(xgboost::looks_like_json(b"{ \"learner\" : {"));
    assert!(xgboost::looks_like_json(
        b"{\"version\": [3, 2, 0], \"learner\": {"
    ));
    // tokenizer.json and config.json begin with a `version` string, or other keys.
    assert!(!xgboost::looks_like_json(
        b"{\"version\":\"1.0\",\"truncation\":null}"
    ));
    assert!(!xgboost::looks_like_json(b"{\"learner\": \"adam\"}"));
    assert!(
        !xgboost::looks_like_json(b" {\"learner\":{"),
        "XGBoost requires `{{` first"
    );
    assert!(!xgboost::looks_like_json(b"{\"model_type\":\"bert\"}"));
    assert!(!xgboost::looks_like_json(
        b"{\"version\": [1, 0], \"rows\": []}"
    ));
    assert!(xgboost::looks_like_ubj(&fixture("xgboost/binary.ubj")));
    assert!(!xgboost::looks_like_ubj(&fixture("xgboost/binary.json")));
    assert!(lightgbm::looks_like_model(&fixture("lightgbm/binary.txt")));
    assert!(!lightgbm::looks_like_model(b"tree\n"));
    assert!(flax::looks_like_state(&fixture("flax/mlp.msgpack")));
    // A msgpack map of plain data is not a Flax state dict.
    assert!(!flax::looks_like_state(b"\x82\xa1a\x01\xa1b\x92\x01\x02"));
    assert!(!flax::looks_like_state(b"\x81\xa1a\xd4\x2a\x00"));
}

#[test]
fn a_minimal_json_model_passes_with_its_weights_decoded() {
    let o = xgboost::read_json(MINIMAL.as_bytes());
    assert_eq!(o.worst(), None, "{:?}", o.findings);
    assert_eq!(o.tensors.len(), 1);
    assert_eq!(o.tensors[0].name, "learner.gradient_booster.model.weights");
    let want: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    assert_eq!(
        o.tensors[0].bytes,
        socair_native::model_read::Bytes::Inline(want)
    );
}

#[test]
fn json_accepts_what_xgboost_accepts_and_names_what_it_refuses() {
    let nan = MINIMAL.replace("1.5E0,-2E0", "NaN,-Infinity");
    assert_eq!(xgboost::read_json(nan.as_bytes()).worst(), None);
    let escape = MINIMAL.replace("reg:squarederror", "reg:\\/x");
    let o = xgboost::read_json(escape.as_bytes());
    assert!(o.refused, "XGBoost refuses the escape \\/");
    let dup = MINIMAL.replace(
        "\"attributes\":{}",
        "\"attributes\":{\"a\":\"1\",\"a\":\"2\"}",
    );
    let o = xgboost::read_json(dup.as_bytes());
    assert_eq!(o.worst(), Some(Severity::Lead));
    assert_eq!(o.findings.shown[0].place, "learner.attributes.a");
    assert!(o.findings.shown[0].reason.contains("keeps the last"));
    let trailing = format!("{MINIMAL}\n");
    assert_eq!(
        xgboost::read_json(trailing.as_bytes()).worst(),
        None,
        "whitespace after"
    );
    let empty_ws = MINIMAL.replace("\"attributes\":{}", "\"attributes\":[ ]");
    assert!(
        xgboost::read_json(empty_ws.as_bytes()).refused,
        "`[ ]` is refused by XGBoost"
    );
}

#[test]
fn ubj_keeps_the_first_of_a_duplicate_as_xgboost_does() {
    // {"learner": ..., "learner": ...}: XGBoost's UBJReader emplaces, keeping the first.
    let mut doc = b"{".to_vec();
    for _ in 0..2 {
        doc.extend_from_slice(b"L\0\0\0\0\0\0\0\x07learnerZ");
    }
    doc.push(b'}');
    let o = xgboost::read_ubj(&doc);
    assert!(
        o.findings
            .shown
            .iter()
            .any(|f| f.place == "learner" && f.reason.contains("keeps the first")),
        "{:?}",
        o.findings
    );
    // A negative length and a high-precision number are refused.
    assert!(xgboost::read_ubj(b"{L\xff\xff\xff\xff\xff\xff\xff\xffx").refused);
    assert!(xgboost::read_ubj(b"{L\0\0\0\0\0\0\0\x01aH").refused);
}

#[test]
fn lightgbm_counts_that_disagree_are_named() {
    let good = String::from_utf8(fixture("lightgbm/binary.txt")).unwrap();
    assert_eq!(lightgbm::read(good.as_bytes()).worst(), None);
    // A StringToArrayFast array with one value too many: LightGBM ignores it, a LEAD.
    let i = good.find("\nleaf_count=").unwrap() + "\nleaf_count=".len();
    let more = format!("{} 9 {}", &good[..i], &good[i..]);
    let o = lightgbm::read(more.as_bytes());
    // tree_sizes no longer tile the file: refused, naming them.
    assert!(
        o.refused || o.worst() == Some(Severity::Lead),
        "{:?}",
        o.findings
    );
    let unknown = good.replacen("version=v4\n", "version=v4\nhook=python\n", 1);
    let o = lightgbm::read(unknown.as_bytes());
    assert!(
        o.findings
            .shown
            .iter()
            .any(|f| f.reason.contains("`hook` is no key")),
        "{:?}",
        o.findings
    );
}

#[test]
fn flax_scalars_and_complex_values_are_data() {
    // {"s": npscalar int64 7, "c": complex(1, 2)}
    let scalar = b"\x93\x90\xa5int64\xc4\x08\x07\0\0\0\0\0\0\0";
    let mut doc = vec![0x82, 0xa1, b's', 0xc7, scalar.len() as u8, 3];
    doc.extend_from_slice(scalar);
    doc.extend_from_slice(b"\xa1c\xc7\x03\x02\x92\x01\x02");
    let o = flax::read(&doc);
    assert_eq!(o.worst(), None, "{:?}", o.findings);
    assert_eq!(o.tensors.len(), 1);
    assert_eq!(o.tensors[0].name, "s");
    assert!(o.tensors[0].shape.is_empty());
    // A dtype NumPy reads once JAX registers ml_dtypes' types: data, a LEAD, not fingerprinted.
    let f8 = b"\x93\x91\x02\xadfloat8_e4m3fn\xc4\x02\x38\x38";
    let mut doc = vec![0x81, 0xa1, b'a', 0xc7, f8.len() as u8, 1];
    doc.extend_from_slice(f8);
    let o = flax::read(&doc);
    assert_eq!(o.worst(), Some(Severity::Lead), "{:?}", o.findings);
    assert!(o.tensors.is_empty());
    // An integer key is read (flax 0.12.8: strict_map_key=False); an array key is refused.
    assert_eq!(flax::read(b"\x81\x01\x02").worst(), None);
    assert!(flax::read(b"\x81\x91\x01\x02").refused);
}

/// A small deterministic generator (xorshift), so the mutation run is the same every time.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn mutated_fixtures_return_within_bounds() {
    let mut rng = Rng(0x5eed_3030);
    let files = [
        "xgboost/binary.json",
        "xgboost/binary.ubj",
        "xgboost/dart.ubj",
        "xgboost/gblinear.json",
        "lightgbm/binary.txt",
        "lightgbm/categorical.txt",
        "flax/mlp.msgpack",
        "flax/flax_model.msgpack",
    ];
    for rel in files {
        let base = fixture(rel);
        fuzzing::check_readers(&base);
        for _ in 0..2000 {
            let mut m = base.clone();
            for _ in 0..1 + rng.next() % 4 {
                let at = (rng.next() as usize) % m.len().max(1);
                match rng.next() % 4 {
                    0 => {
                        if let Some(b) = m.get_mut(at) {
                            *b = rng.next() as u8;
                        }
                    }
                    1 => m.truncate(at),
                    2 => m.insert(at.min(m.len()), rng.next() as u8),
                    _ => {
                        // A run of bytes a count or length would be made of.
                        for k in 0..8 {
                            if let Some(b) = m.get_mut(at + k) {
                                *b = 0xff;
                            }
                        }
                    }
                }
            }
            fuzzing::check_readers(&m);
        }
    }
}

#[test]
fn decoding_and_entries_stay_within_bounds() {
    // A tree declaring 2^24 leaves with one leaf count: LightGBM pads it to 2^24 zeros; socair
    // decodes at most 8 times the file and says so.
    let good = String::from_utf8(fixture("lightgbm/binary.txt")).unwrap();
    let start = good.find("Tree=0").unwrap();
    let header: String = good[..start]
        .lines()
        .filter(|l| !l.starts_with("tree_sizes="))
        .map(|l| format!("{l}\n"))
        .collect();
    let doc =
        format!("{header}Tree=0\nnum_leaves=16777216\nnum_cat=0\nleaf_count=1\nend of trees\n");
    let o = lightgbm::read(doc.as_bytes());
    assert!(o.decoded <= 8 * doc.len() as u64);
    assert!(
        o.findings
            .shown
            .iter()
            .any(|f| f.reason.contains("past the bytes socair decodes")),
        "{:?}",
        o.findings
    );
    fuzzing::check_readers(doc.as_bytes());
    // Two million map entries in 4 MB: past the entries socair holds, a LEAD, not a FAIL.
    let n: u32 = 2_000_000;
    let mut m = vec![0xdf];
    m.extend_from_slice(&n.to_be_bytes());
    for _ in 0..n {
        m.extend_from_slice(&[0xa0, 0xc0]);
    }
    let o = flax::read(&m);
    assert_eq!(o.worst(), Some(Severity::Lead), "{:?}", o.findings);
    assert!(!o.refused);
}

#[test]
fn a_boosters_memory_snapshot_is_read_as_xgboost_loads_it() {
    // The `handle` xgboost 3.2.0's Booster.__getstate__ pickled (fixtures/boosters).
    let path = format!(
        "{}/../../../fixtures/boosters/xgb-booster.snapshot",
        env!("CARGO_MANIFEST_DIR")
    );
    let snapshot = std::fs::read(&path).unwrap();
    let o = xgboost::read_snapshot(&snapshot);
    assert_eq!(o.worst(), None, "{:?}", o.findings);
    assert_eq!(o.format, xgboost::SNAPSHOT_FORMAT);
    assert!(o.what.contains("gbtree model of 3 trees"), "{}", o.what);
    assert!(
        o.tensors.is_empty(),
        "a snapshot's trees are checked, not located"
    );
    // Cut short: the parse fails and nothing is located (XGBoost raised on it).
    let cut = xgboost::read_snapshot(&snapshot[..snapshot.len() / 2]);
    assert_eq!(cut.worst(), Some(Severity::Fail));
    assert!(cut.refused);
    // JSON (XGBoost 1.0-1.5's pickles; 3.2.0 refuses them): read, with a LEAD saying so.
    let json = format!(r#"{{"Config":{{}},"Model":{MINIMAL}}}"#);
    let o = xgboost::read_snapshot(json.as_bytes());
    assert_eq!(o.worst(), Some(Severity::Lead), "{:?}", o.findings);
    assert!(o
        .findings
        .shown
        .iter()
        .any(|f| f.reason.contains("3.2.0 refuses")));
    // The binary format before 1.0 is not read.
    let o = xgboost::read_snapshot(b"binf\0\0\0\0");
    assert_eq!(o.worst(), Some(Severity::Lead));
    // A snapshot without Config: LoadConfig refuses it.
    let o = xgboost::read_snapshot(format!(r#"{{"Model":{MINIMAL}}}"#).as_bytes());
    assert!(o
        .findings
        .shown
        .iter()
        .any(|f| f.place == "Config" && f.severity == Severity::Fail));
}
