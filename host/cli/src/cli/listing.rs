//! `socair plugins`: the plugins found, refused and shadowed, and the built-in rule sets.

use crate::base::rules;
use crate::read::plugins::{self, PluginSet};
use serde::Serialize;

/// What `socair plugins` lists.
#[derive(Debug, Serialize)]
pub struct PluginListing {
    plugin_api: &'static str,
    searched: Vec<String>,
    plugins: Vec<PluginRow>,
    refused: Vec<RefusedRow>,
    shadowed: Vec<RefusedRow>,
    rule_sets: Vec<RuleSetRow>,
    warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
struct PluginRow {
    name: String,
    version: String,
    plugin_api: String,
    file: String,
    sha256: String,
    reads: Vec<String>,
    writes: Vec<String>,
    rule_sets: Vec<String>,
    encoders: Vec<String>,
}

#[derive(Debug, Serialize)]
struct RefusedRow {
    file: String,
    reason: String,
}

#[derive(Debug, Serialize)]
struct RuleSetRow {
    id: &'static str,
    provided_by: &'static str,
    summary: &'static str,
}

impl PluginListing {
    pub fn of(set: &PluginSet) -> Self {
        let refused = |v: &[plugins::RefusedPlugin]| {
            v.iter()
                .map(|r| RefusedRow {
                    file: r.path.display().to_string(),
                    reason: r.reason.clone(),
                })
                .collect()
        };
        PluginListing {
            plugin_api: socair_plugin_api::PLUGIN_API_VERSION,
            searched: set
                .searched
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            plugins: set
                .loaded
                .iter()
                .map(|p| PluginRow {
                    name: p.manifest.name.clone(),
                    version: p.manifest.version.clone(),
                    plugin_api: p.manifest.plugin_api.clone(),
                    file: p.path.display().to_string(),
                    sha256: p.sha256().to_owned(),
                    reads: p.manifest.formats_read.clone(),
                    writes: p.manifest.formats_written.clone(),
                    rule_sets: p.manifest.rule_sets.clone(),
                    encoders: p.manifest.encoders.clone(),
                })
                .collect(),
            refused: refused(&set.refused),
            shadowed: refused(&set.shadowed),
            warnings: plugins::warnings(set),
            rule_sets: rules::built_in()
                .into_iter()
                .map(|r| RuleSetRow {
                    id: r.id,
                    provided_by: "socair (built in)",
                    summary: r.summary,
                })
                .collect(),
        }
    }

    /// The listing as text, for a terminal.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let list = |v: &[String]| {
            if v.is_empty() {
                "-".to_owned()
            } else {
                v.join(", ")
            }
        };
        let mut s = String::new();
        let _ = writeln!(s, "plugin-api {}", self.plugin_api);
        let _ = writeln!(s, "searched, in order:");
        for d in &self.searched {
            let _ = writeln!(s, "  {d}");
        }
        let _ = writeln!(s, "plugins ({}):", self.plugins.len());
        for p in &self.plugins {
            let _ = writeln!(
                s,
                "  {} {} (plugin-api {})\n    file:      {}\n    sha256:    {}\n    reads:     {}\n    writes:    {}\n    rule sets: {}\n    encoders:  {}",
                p.name,
                p.version,
                p.plugin_api,
                p.file,
                p.sha256,
                list(&p.reads),
                list(&p.writes),
                list(&p.rule_sets),
                list(&p.encoders)
            );
        }
        if !self.warnings.is_empty() {
            let _ = writeln!(s, "warnings ({}):", self.warnings.len());
            for w in &self.warnings {
                let _ = writeln!(s, "  {w}");
            }
        }
        if !self.refused.is_empty() {
            let _ = writeln!(s, "refused ({}):", self.refused.len());
            for r in &self.refused {
                let _ = writeln!(s, "  {}: {}", r.file, r.reason);
            }
        }
        if !self.shadowed.is_empty() {
            let _ = writeln!(s, "shadowed ({}):", self.shadowed.len());
            for r in &self.shadowed {
                let _ = writeln!(s, "  {}: {}", r.file, r.reason);
            }
        }
        let _ = writeln!(s, "rule sets built in:");
        for r in &self.rule_sets {
            let _ = writeln!(s, "  {:<22} {}", r.id, r.summary);
        }
        s
    }
}
