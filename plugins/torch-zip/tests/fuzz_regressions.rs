//! Replays every saved fuzz input (crashes kept as regressions) and every torch fixture
//! through the properties the fuzz targets check.

use socair_plugin_torch_zip::fuzzing::{check_checkpoint, check_legacy, check_pickle, check_zip};
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_saved_input_keeps_the_properties() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut inputs = Vec::new();
    files_under(&repo.join("fuzz/regressions/torch"), &mut inputs);
    files_under(&repo.join("fuzz/corpus/torch_zip"), &mut inputs);
    files_under(&repo.join("fuzz/corpus/pickle_machine"), &mut inputs);
    files_under(&repo.join("fuzz/corpus/torch_checkpoint"), &mut inputs);
    files_under(&repo.join("fuzz/corpus/torch_legacy"), &mut inputs);
    files_under(&repo.join("fixtures/torch"), &mut inputs);
    assert!(inputs.len() > 30, "fixtures missing");
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        check_zip(&data);
        check_pickle(&data);
        check_checkpoint(&data);
        check_legacy(&data);
    }
}
