//! `socair tensors` on files it reads nothing in: every file or object no
//! reader fingerprinted is in `unread` with its reason, and the exit code follows (1). The
//! fixtures are fixtures/unread's (make_fixtures.py: torch 2.15.0, TensorFlow 2.21.0, Keras
//! 3.15.1, and the PaddlePaddle file names by hand).

use crate::common::{fixture, json, run, socair};

fn unread_files(path: &str) -> (i32, Vec<(String, String)>, usize) {
    let r = run(socair().arg("tensors").arg(fixture(path)));
    let m = json(&r.stdout);
    let unread = m["unread"]
        .as_array()
        .unwrap_or_else(|| panic!("{path}: {}", r.stderr))
        .iter()
        .map(|u| {
            (
                u["file"].as_str().unwrap().to_owned(),
                u["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (r.code, unread, m["tensors"].as_array().unwrap().len())
}

/// Why a file no reader read is unread.
const NO_READER: &str = "no loaded plugin reads this file, and it is neither JSON nor text: nothing in it was checked; any tensors it holds were not fingerprinted";

/// A TensorFlow checkpoint directory is read whole: the tensorflow plugin reads the index and
/// its data shard, and the `checkpoint` state file (the text proto tf.train.latest_checkpoint
/// reads) is data when every checkpoint it names is inside the directory.
#[test]
fn a_tensorflow_checkpoint_directory_is_read_whole() {
    let (code, unread, tensors) = unread_files("unread/tf-checkpoint");
    assert_eq!(code, 0, "{unread:?}");
    assert!(unread.is_empty(), "{unread:?}");
    assert_eq!(tensors, 2);
    // The same directory whose state file names a checkpoint elsewhere is a LEAD.
    let dir = tempfile::tempdir().unwrap();
    for f in ["ckpt.index", "ckpt.data-00000-of-00001"] {
        std::fs::copy(
            fixture(&format!("unread/tf-checkpoint/{f}")),
            dir.path().join(f),
        )
        .unwrap();
    }
    std::fs::write(
        dir.path().join("checkpoint"),
        "model_checkpoint_path: \"/home/user/secret/ckpt\"\n",
    )
    .unwrap();
    let r = run(socair().arg("scan").arg(dir.path()));
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("is not a name inside the directory"),
        "{}",
        r.stdout
    );
}

#[test]
fn files_no_reader_fingerprinted_are_unread() {
    for (path, files) in [
        // The SavedModel is read; the hand-built keras_metadata.pb is no SavedMetadata the
        // tensorflow plugin recognises.
        (
            "unread/keras-savedmodel",
            &[("keras_metadata.pb", NO_READER)][..],
        ),
        // The paddle plugin reads the program (one empty block: it PASSes, holding no tensor)
        // and the parameters (one FP32 tensor); the `.info` pickle beside them is unread.
        (
            "unread/paddle",
            &[
                // A pickle: torch-zip's legacy reader claims it and says why it holds no
                // checkpoint.
                ("inference.pdiparams.info", "not torch's legacy format"),
            ][..],
        ),
    ] {
        let (code, unread, tensors) = unread_files(path);
        assert_eq!(code, 1, "{path}");
        let read = match path {
            "unread/keras-savedmodel" => 4,
            "unread/paddle" => 1,
            _ => 0,
        };
        assert_eq!(tensors, read, "{path}");
        assert_eq!(unread.len(), files.len(), "{path}: {unread:#?}");
        for ((file, reason), (want_file, want)) in unread.iter().zip(files) {
            assert_eq!(file, want_file, "{path}");
            assert!(reason.starts_with(want), "{path} {file}: {reason}");
        }
    }
}

#[test]
fn a_file_a_reader_located_nothing_in_is_unread() {
    // A whole pickled nn.Module: its pickle builds the module, which the grammar does not
    // model, so no tensor is located.
    let path = "unread/torch/linear-module.pt";
    let (code, unread, tensors) = unread_files(path);
    assert_eq!(code, 1, "{path}: {unread:?}");
    assert_eq!(tensors, 0, "{path}");
    assert_eq!(unread.len(), 1, "{path}: {unread:?}");
    assert!(
        unread[0].1.starts_with(
            "plugin `torch-zip` located no tensor in it and did not prove the rest of it (Pickle opcode scan: "
        ),
        "{path}: {unread:?}"
    );
    assert!(unread[0]
        .1
        .ends_with("; any tensors it holds were not fingerprinted"));
    // Keras 3's zip (config.json, metadata.json and model.weights.h5, HDF5) is the keras
    // plugin's: every weight is read, nothing is unread.
    let (code, unread, tensors) = unread_files("unread/keras/model.keras");
    assert_eq!(code, 0, "{unread:?}");
    assert!(tensors > 0);
    assert!(unread.is_empty(), "{unread:?}");
}

#[test]
fn data_files_beside_a_model_are_not_unread() {
    // JSON and text companions hold no tensors: a model directory of a safetensors file,
    // its config and its tokenizer files has nothing unread.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("safetensors/all-dtypes.safetensors"),
        dir.path().join("model.safetensors"),
    )
    .unwrap();
    std::fs::write(dir.path().join("config.json"), br#"{"model_type": "bert"}"#).unwrap();
    std::fs::write(dir.path().join("vocab.txt"), b"[PAD]\nhello\n").unwrap();
    std::fs::write(dir.path().join("README.md"), b"# model\n").unwrap();
    let r = run(socair().arg("tensors").arg(dir.path()));
    let m = json(&r.stdout);
    assert_eq!(m["unread"], serde_json::json!([]), "{m:#}");
    assert_eq!(r.code, 0);
}
