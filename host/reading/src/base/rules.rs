//! The rule sets built into the host, registered with `inventory` so that each module that
//! implements one declares it beside its code, and every output can name the versions it was
//! made under. Plugins declare theirs in their manifests instead (inventory does not reach
//! across dynamically loaded libraries).

/// A versioned rule set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleSet {
    /// Its name, such as `float32-le-bits`.
    pub name: &'static str,
    /// Its version, such as `1`.
    pub version: &'static str,
    /// How outputs name it, such as `float32-le-bits/v1`.
    pub id: &'static str,
    /// One line on what it governs.
    pub summary: &'static str,
}

inventory::collect!(RuleSet);

/// Rule sets plugins run only when the host asks for them (`ReadOptions.rules`): the pickle
/// grammar's library profiles (plugins/shared/pickle/PROFILES.md). Any other rule set a plugin
/// declares runs at its newest version unless asked for another.
pub const OPT_IN: &[&str] = &["socair-sklearn"];

/// Rule sets a plugin applies to only some of what it reads and names in the row that used
/// them (`socair-data/1`: pickles outside a torch checkpoint), so that a report's `rules` lists
/// them only when asked for (a deployment pin): a torch checkpoint's report does not name them.
pub const ROW_NAMED: &[&str] = &["socair-data"];

/// The profile names `--profile` takes, each with the rule set and version it asks for.
pub const PROFILES: &[(&str, &str, &str)] = &[("sklearn", "socair-sklearn", "1")];

/// Every built-in rule set, sorted by id.
pub fn built_in() -> Vec<&'static RuleSet> {
    let mut all: Vec<&'static RuleSet> = inventory::iter::<RuleSet>.into_iter().collect();
    all.sort_by_key(|r| r.id);
    all
}

/// The built-in rule set with `id`.
pub fn find(id: &str) -> Option<&'static RuleSet> {
    inventory::iter::<RuleSet>.into_iter().find(|r| r.id == id)
}

/// A rule-set or plugin version as semver: `N` reads as `N.0.0`, `N.M` as `N.M.0`.
pub fn lenient_version(v: &str) -> Result<semver::Version, semver::Error> {
    let dots = v.matches('.').count();
    let full = match dots {
        0 => format!("{v}.0.0"),
        1 => format!("{v}.0"),
        _ => v.to_owned(),
    };
    semver::Version::parse(&full)
}

/// Whether rule set `name` at `version` is accepted by a deployment's pin `requirement` (a
/// semver requirement such as `"=1"`); no pin accepts every version.
pub fn check_requirement(
    name: &str,
    requirement: Option<&str>,
    version: &str,
) -> Result<(), String> {
    let Some(req) = requirement else {
        return Ok(());
    };
    let parsed = semver::VersionReq::parse(req).map_err(|e| {
        format!("the store pins {name} to {req:?}, which is not a version requirement: {e}")
    })?;
    let v = lenient_version(version)
        .map_err(|e| format!("rule set {name} has version {version:?}: {e}"))?;
    if parsed.matches(&v) {
        Ok(())
    } else {
        Err(format!("{name}/{version} is outside the store's pin {req}"))
    }
}

#[cfg(test)]
mod tests {
    /// This crate's own rule set is registered; the command's crate checks every crate's
    /// (`host/cli/src/lib.rs`), as only a binary that links them all sees them all.
    #[test]
    fn this_crates_rule_set_is_registered_once() {
        assert!(super::find("socair.modeldir/v1").is_some());
        let all = super::built_in();
        let mut ids: Vec<_> = all.iter().map(|r| r.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
    }
}
