//! TensorFlow's checkpoint state file (`checkpoint` beside a checkpoint's `.index` and data
//! shards): the text-format `CheckpointState` proto `tf.train.CheckpointManager` and
//! `Saver.save` write (tensorflow/python/checkpoint/checkpoint_management.py at v2.21.0,
//! `update_checkpoint_state_internal`: `text_format.MessageToString(ckpt)`), which
//! `tf.train.latest_checkpoint` and `get_checkpoint_state` read to find the checkpoint to
//! load.
//!
//! Data when every line is one of the proto's four fields as `MessageToString` writes them
//! (`model_checkpoint_path` and `all_model_checkpoint_paths`, quoted strings;
//! `all_model_checkpoint_timestamps` and `last_preserved_timestamp`, numbers) and every path is
//! a plain relative name inside the directory: `get_checkpoint_state` joins a relative path to
//! the directory, but keeps an absolute one as it is, so such a path (or one with `..`) sends
//! the loader to a checkpoint this scan did not read. Strings with escapes (which
//! `MessageToString` writes for bytes outside printable ASCII) are not decoded here: the file
//! is then no proven state file.

/// Why a text is not a state file this module proves: the line (1-based) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAState {
    /// The line.
    pub line: usize,
    /// What.
    pub what: String,
}

/// Reads `text` as a checkpoint state file: the checkpoint prefixes it names.
pub fn read(text: &str) -> Result<Vec<&str>, NotAState> {
    let mut paths = Vec::new();
    let mut model = false;
    for (i, line) in text.lines().enumerate() {
        let err = |what: &str| NotAState {
            line: i + 1,
            what: what.to_owned(),
        };
        if line.is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(": ") else {
            return Err(err("not a `field: value` line"));
        };
        match key {
            "model_checkpoint_path" | "all_model_checkpoint_paths" => {
                let path = value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .filter(|p| !p.contains(['"', '\\']))
                    .ok_or_else(|| err("a path that is not a plain quoted string"))?;
                let inside = !path.is_empty()
                    && !path.starts_with('/')
                    && !path.split(['/', '\\']).any(|c| c == ".." || c.is_empty())
                    && !path.contains(':');
                if !inside {
                    return Err(err(&format!(
                        "the path {path:?} is not a name inside the directory: tf.train.latest_checkpoint would load the checkpoint it names from wherever it is"
                    )));
                }
                model |= key == "model_checkpoint_path";
                paths.push(path);
            }
            "all_model_checkpoint_timestamps" | "last_preserved_timestamp" => {
                if value.parse::<f64>().map_or(true, |v| !v.is_finite()) {
                    return Err(err("a timestamp that is not a number"));
                }
            }
            _ => return Err(err("a field CheckpointState does not hold")),
        }
    }
    if !model {
        return Err(NotAState {
            line: 1,
            what: "no model_checkpoint_path".into(),
        });
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_tensorflow_writes_is_read_and_paths_out_are_not() {
        // Written by tf.train.CheckpointManager (TensorFlow 2.21.0).
        let written = "model_checkpoint_path: \"ckpt-3\"\nall_model_checkpoint_paths: \"ckpt-2\"\nall_model_checkpoint_paths: \"ckpt-3\"\nall_model_checkpoint_timestamps: 1796161834.620805\nall_model_checkpoint_timestamps: 1796161834.6245139\nlast_preserved_timestamp: 1796161833.6108053\n";
        assert_eq!(read(written), Ok(vec!["ckpt-3", "ckpt-2", "ckpt-3"]));
        for (text, line) in [
            ("model_checkpoint_path: \"/etc/ckpt\"\n", 1),
            (
                "model_checkpoint_path: \"ckpt\"\nall_model_checkpoint_paths: \"../x/ckpt\"\n",
                2,
            ),
            ("model_checkpoint_path: \"C:ckpt\"\n", 1),
            ("model_checkpoint_path: \"a\\\\b\"\n", 1),
            ("all_model_checkpoint_paths: \"ckpt\"\n", 1),
            ("model_checkpoint_path: \"ckpt\"\nextra: 1\n", 2),
            (
                "model_checkpoint_path: \"ckpt\"\nlast_preserved_timestamp: nan\n",
                2,
            ),
        ] {
            assert_eq!(read(text).map_err(|e| e.line), Err(line), "{text:?}");
        }
    }
}
