//! Aliases a safetensors file records in its `__metadata__`.
//!
//! safetensors cannot store two names for one buffer, so `socair convert` writes a tied
//! weight once and records each other name as a metadata entry `alias: kept name`
//! (`convert::plan`). A comparison reads them back so that a converted model still accounts
//! for every tensor of its original. An entry counts as an alias only when its key is not a
//! tensor of the file and its value is one: other metadata (`format: pt`) never names a
//! tensor.

use crate::read::artifact::FileJob;
use serde::{Deserialize, Serialize};
use socair_plugin_api::OpenedFile;
use std::collections::HashSet;

/// One alias.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasEntry {
    /// The file recording it.
    pub file: String,
    /// The other name.
    pub name: String,
    /// The tensor it names, in the same file.
    pub of: String,
}

/// Every alias the opened safetensors files record, sorted by file then name.
pub fn aliases_of(opened: &[(&FileJob<'_>, OpenedFile)]) -> Vec<AliasEntry> {
    let mut out = Vec::new();
    for (job, file) in opened {
        if file.format.as_str() != "safetensors" {
            continue;
        }
        let names: HashSet<&str> = file.tensors.iter().map(|t| t.name.as_str()).collect();
        for kv in file.metadata.iter() {
            let (key, value) = (kv.0.as_str(), kv.1.as_str());
            if !names.contains(key) && names.contains(value) {
                out.push(AliasEntry {
                    file: job.rel.clone(),
                    name: key.to_owned(),
                    of: value.to_owned(),
                });
            }
        }
    }
    out.sort_by(|a, b| {
        (a.file.as_bytes(), a.name.as_bytes()).cmp(&(b.file.as_bytes(), b.name.as_bytes()))
    });
    out
}
