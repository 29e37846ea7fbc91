//! Deployment pins: the plugin and rule-set versions a store accepts (`policy.json` `pins`,
//! docs/pins.md).

use crate::base::rules::{self, check_requirement, lenient_version};
use crate::read::artifact::ReaderChoice;
use crate::read::plugins::PluginSet;
use serde::{Deserialize, Serialize};

/// Deployment pins: the rule-set and plugin versions this store accepts (docs/pins.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pins {
    /// Rule set name → semver requirement (`"=1"`; a version `N` reads as `N.0.0`).
    #[serde(default)]
    pub rules: std::collections::BTreeMap<String, String>,
    /// Plugin name → the versions accepted and, optionally, the library's exact sha256.
    #[serde(default)]
    pub plugins: std::collections::BTreeMap<String, PluginPin>,
}

/// A pinned plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginPin {
    /// A semver requirement on the plugin's version (`">=0.1, <0.2"`, `"=0.1.0"`).
    pub version: String,
    /// The sha256 of the library file, when only that exact build is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

impl Pins {
    /// How files are read under these pins: a format a pinned plugin reads is read by that
    /// plugin only, and a pinned rule set that loaded plugins implement in several versions
    /// (`socair-wo`) runs at the newest version the pin accepts.
    pub fn reader_choice(&self, plugins: &PluginSet) -> ReaderChoice {
        let mut rules = std::collections::BTreeMap::new();
        for name in self.rules.keys() {
            let mut versions: Vec<&str> = plugins
                .loaded
                .iter()
                .flat_map(|p| p.manifest.rule_sets.iter())
                .filter_map(|id| id.split_once('/'))
                .filter(|(n, v)| n == name && self.check_rule(n, v).is_ok())
                .map(|(_, v)| v)
                .collect();
            versions.sort_by_key(|v| lenient_version(v).ok());
            if let Some(newest) = versions.last() {
                rules.insert(name.clone(), (*newest).to_owned());
            }
        }
        ReaderChoice {
            named: None,
            pinned: self.plugins.keys().cloned().collect(),
            rules,
        }
    }

    /// Whether plugin `name` at `version`, with library hash `sha256`, is accepted. Without
    /// plugin pins every plugin is; with them, only the plugins they name.
    pub fn check_plugin(&self, name: &str, version: &str, sha256: &str) -> Result<(), String> {
        let Some(pin) = self.plugins.get(name) else {
            if self.plugins.is_empty() {
                return Ok(());
            }
            return Err(format!(
                "plugin {name} {version}, which the store's pins do not name (they name {}): in a store with plugin pins only pinned plugins read artifacts",
                self.plugins.keys().cloned().collect::<Vec<_>>().join(", ")
            ));
        };
        let req = semver::VersionReq::parse(&pin.version).map_err(|e| {
            format!(
                "the store pins plugin {name} to {:?}, which is not a version requirement: {e}",
                pin.version
            )
        })?;
        let v = lenient_version(version)
            .map_err(|e| format!("plugin {name} says its version is {version:?}: {e}"))?;
        if !req.matches(&v) {
            return Err(format!(
                "plugin {name} {version} is outside the store's pin {}: a plugin upgrade (or downgrade) is reviewed, then the pin updated (`socair airlock pin plugin {name}`)",
                pin.version
            ));
        }
        if let Some(want) = &pin.sha256 {
            if !want.eq_ignore_ascii_case(sha256) {
                return Err(format!(
                    "plugin {name} {version} is a different build than the store pins: its library hashes to {sha256}, the pin says {want}"
                ));
            }
        }
        Ok(())
    }

    /// Whether rule set `name` at `version` is accepted (a rule set the pins do not name is).
    pub fn check_rule(&self, name: &str, version: &str) -> Result<(), String> {
        check_requirement(name, self.rules.get(name).map(String::as_str), version)
    }

    /// Checks what this socair has loaded against the pins: every pinned plugin is loaded and
    /// accepted, and every pinned rule set (but `socair-convert`, chosen per conversion) is
    /// implemented at an accepted version.
    pub fn check_loaded(&self, plugins: &PluginSet) -> Result<(), String> {
        for name in self.plugins.keys() {
            let Some(p) = plugins.loaded.iter().find(|p| &p.manifest.name == name) else {
                return Err(format!(
                    "the store pins plugin {name}, which is not loaded (searched: {})",
                    plugins
                        .searched
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            self.check_plugin(name, &p.manifest.version, p.sha256())?;
        }
        for (name, req) in &self.rules {
            if name == "socair-convert" {
                continue;
            }
            let mut versions: Vec<String> = rules::built_in()
                .into_iter()
                .filter(|r| r.name == name.as_str())
                .map(|r| r.version.to_owned())
                .collect();
            for p in &plugins.loaded {
                versions.extend(p.manifest.rule_sets.iter().filter_map(|id| {
                    let (n, v) = id.split_once('/')?;
                    (n == name).then(|| v.to_owned())
                }));
            }
            // Several plugins may implement one version (the archive plugin and torch-zip both
            // run socair-wo/1): each version is named once.
            versions.sort();
            versions.dedup();
            if versions.is_empty() {
                return Err(format!(
                    "the store pins rule set {name} to {req}, which neither socair nor a loaded plugin implements"
                ));
            }
            if !versions.iter().any(|v| self.check_rule(name, v).is_ok()) {
                return Err(format!(
                    "the store pins rule set {name} to {req}; this socair and its plugins implement {}",
                    versions.join(", ")
                ));
            }
        }
        Ok(())
    }
}
