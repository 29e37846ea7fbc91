//! The fuzz targets' properties (`socair_plugin_keras::fuzzing`) on every committed Keras and
//! HDF5 fixture and on mutations of them, and the generated shapes read as what they are.

use socair_plugin_keras::fuzzing::{
    check_archive, check_codecs, check_config, check_filters, check_hdf5,
};
use socair_test_support::saved::files_under;
use std::path::Path;

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures");
    let mut out = Vec::new();
    for dir in ["keras", "hdf5"] {
        for p in files_under(&root.join(dir)) {
            let name = p.display().to_string();
            if name.ends_with(".keras") || name.ends_with(".h5") || name.ends_with(".zip") {
                out.push((name, std::fs::read(&p).unwrap()));
            }
        }
    }
    assert!(out.len() >= 30, "{}", out.len());
    out
}

#[test]
fn every_fixture_and_its_mutations_keep_the_properties() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (name, bytes) in fixtures() {
        let check = |b: &[u8]| {
            if name.ends_with(".keras") || name.ends_with(".zip") {
                check_archive(b);
            } else {
                check_hdf5(b);
            }
        };
        check(&bytes);
        for _ in 0..40 {
            let mut m = bytes.clone();
            for _ in 0..(next() % 3 + 1) {
                let at = (next() % m.len() as u64) as usize;
                m[at] = next() as u8;
            }
            check(&m);
        }
        for cut in [0, 1, 8, 30, 100, bytes.len() / 2, bytes.len() - 1] {
            check(&bytes[..cut.min(bytes.len())]);
        }
    }
}

#[test]
fn configs_keep_the_properties() {
    for text in [
        &b"{}"[..],
        b"[]",
        b"null",
        b"{\"class_name\": 3, \"config\": {}}",
        b"{\"class_name\": \"__lambda__\", \"config\": {\"code\": \"x\"}}",
        b"{\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"x\": NaN, \"y\": [Infinity, -Infinity]}}",
        b"{\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"s\": \"NaN\\\" Infinity\"}}",
        b"{\"class_name\": \"Lambda\", \"config\": {\"function\": [\"a\", null, null], \"function_type\": \"lambda\"}}",
        b"{\"module\": \"keras.layers\", \"class_name\": \"TorchModuleWrapper\", \"config\": {\"module\": \"!!\"}}",
    ] {
        check_config(text);
    }
}

#[test]
fn python_constants_are_numbers_and_strings_stay_strings() {
    use socair_keras::grammar::{judge, Dialect};
    let o = judge(
        br#"{"module": "keras.layers", "class_name": "Dense", "config": {"x": NaN, "s": "NaN"}}"#,
        "config.json",
        Dialect::Keras3,
        &[],
    );
    assert!(o.found.worst.is_none(), "{:?}", o.found.shown);
    let o = judge(
        br#"{"module": "keras.layers", "class_name": "Dense", "config": {"x": NaN, "a": {"module": "os", "class_name": "function", "config": "system"}}}"#,
        "config.json",
        Dialect::Keras3,
        &[],
    );
    assert_eq!(o.found.shown.len(), 1);
    assert!(
        o.found.shown[0].place.contains("config.a"),
        "{:?}",
        o.found.shown
    );
}

#[test]
fn the_generated_shapes_read_as_what_they_are() {
    use crate::shapes::*;
    for n in [50, 2000] {
        let h = hdf5_many_datasets(n);
        let a = socair_keras::h5model::read(&h[..], true, &[]);
        assert!(a.refused.is_none(), "{:?}", a.refused);
        assert_eq!(a.tensors.len(), n);
    }
    let k = keras_unknown_objects(10);
    let a = socair_keras::archive::read(&k[..], true, &[]);
    assert_eq!(a.config.as_ref().unwrap().found.shown.len(), 10);
    assert_eq!(a.tensors.len(), 4);
}

/// The `hdf5_filters` corpus (made by a Python implementation of the pipeline h5py writes:
/// zlib, HDF5's byte shuffle and its Fletcher-32 over big-endian words) and mutations of it:
/// the properties hold, and each unmasked chunk decodes to the bytes it was made from.
#[test]
fn the_filter_corpus_keeps_the_properties_and_decodes_to_its_source() {
    use socair_hdf5::filters::undo;
    use socair_plugin_keras::fuzzing::filter_pipeline;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fuzz/corpus/hdf5_filters");
    let source: Vec<u8> = (0..4).flat_map(|_| 0..=255u8).collect();
    let mut decoded = 0;
    for p in files_under(&dir) {
        let bytes = std::fs::read(&p).unwrap();
        check_filters(&bytes);
        for cut in [3, bytes.len() / 2, bytes.len() - 1] {
            check_filters(&bytes[..cut.min(bytes.len())]);
        }
        let [pick, size, 0, chunk @ ..] = bytes.as_slice() else {
            continue;
        };
        if pick & 4 != 0 {
            continue;
        }
        // The same pipeline without LZF (skipped above): what the corpus was made through.
        let pipeline = filter_pipeline(*pick, *size);
        let out = undo(&pipeline, 0, chunk.to_vec(), 1 << 20).unwrap();
        assert_eq!(out, source, "{}", p.display());
        decoded += 1;
    }
    assert!(decoded >= 4, "{decoded}");
}

/// The `hdf5_codecs` corpus (chunks h5py 3.16 stored with szip and n-bit, by
/// fuzz/make_hdf5_codecs_corpus.py, and what the fuzzer grew from them) and truncations of
/// it: the properties hold, and what decodes has the size its chunk states.
#[test]
fn the_codec_corpus_keeps_the_properties_and_decodes() {
    use socair_plugin_keras::fuzzing::codec_case;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fuzz/corpus/hdf5_codecs");
    let (mut szip, mut nbit) = (0, 0);
    for p in files_under(&dir) {
        let bytes = std::fs::read(&p).unwrap();
        check_codecs(&bytes);
        for cut in [1, 6, bytes.len() / 2, bytes.len() - 1] {
            check_codecs(&bytes[..cut.min(bytes.len())]);
        }
        // The fuzzer's own finds need not decode; the chunks h5py stored do.
        let Some((chunk, filter, limit)) = codec_case(&bytes) else {
            continue;
        };
        let one = std::slice::from_ref(&filter);
        let Ok(out) = socair_hdf5::filters::undo(one, 0, chunk.to_vec(), limit) else {
            continue;
        };
        if filter.id == 4 {
            // szip: the size the chunk's first four bytes state.
            let stated = u32::from_le_bytes(chunk[..4].try_into().unwrap());
            assert_eq!(out.len() as u32, stated, "{}", p.display());
            szip += 1;
        } else {
            nbit += 1;
        }
    }
    assert!(szip >= 6 && nbit >= 10, "{szip} szip, {nbit} n-bit");
}
