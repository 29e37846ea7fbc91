//! What every command shares: the flags given before the command (`--plugin-dir`, `--reader`)
//! and the small steps several commands take alike (loading plugins, `--profile`,
//! `--reviewed-classes`, what was fetched from object storage).

use crate::cli::exit::Fatal;
use crate::read::artifact::ReaderChoice;
use crate::read::plugins::{self, PluginSet};
use crate::report::scan::read_reviewed;
use std::path::PathBuf;

/// Findings printed to standard error after a document; the document holds them all.
pub const STDERR_FINDINGS: usize = 50;

/// The flags given before the command.
pub struct Context {
    /// `--plugin-dir`, in the order given.
    plugin_dirs: Vec<PathBuf>,
    /// `--reader`, and the rule sets a `--profile` asks for.
    pub readers: ReaderChoice,
}

impl Context {
    /// The context of `--plugin-dir` and `--reader`.
    pub fn new(plugin_dirs: Vec<PathBuf>, reader: Option<String>) -> Context {
        Context {
            plugin_dirs,
            readers: ReaderChoice {
                named: reader,
                ..ReaderChoice::default()
            },
        }
    }

    /// The plugins found along the search path (`--plugin-dir` first).
    pub fn plugins(&self) -> PluginSet {
        let dirs = plugins::search_path(
            &self.plugin_dirs,
            std::env::var_os(plugins::PLUGIN_PATH_ENV),
            std::env::current_exe().ok(),
        );
        plugins::discover(&dirs)
    }

    /// The plugins, having said on standard error which plugin files were refused.
    pub fn plugins_warned(&self) -> PluginSet {
        let set = self.plugins();
        warn_refused(&set);
        set
    }

    /// `--profile NAME`: asks the plugins for the profile's rule set (a rule set they run only
    /// when asked: `base::rules::OPT_IN`).
    pub fn ask_profile(&mut self, profile: Option<&str>) {
        let Some(name) = profile else { return };
        if let Some((_, rule_set, version)) = crate::base::rules::PROFILES
            .iter()
            .find(|(n, _, _)| *n == name)
        {
            self.readers
                .rules
                .insert((*rule_set).to_owned(), (*version).to_owned());
        }
    }
}

/// Reads `--reviewed-classes`.
pub fn reviewed_list(file: Option<PathBuf>) -> Result<Option<Vec<String>>, Fatal> {
    file.map(|f| {
        read_reviewed(&f).map_err(|e| {
            Fatal(format!(
                "{}: cannot read reviewed classes: {e}",
                f.display()
            ))
        })
    })
    .transpose()
}

/// After reading from object storage: how many bytes were fetched, and what share of the
/// artifact's `size` (when known) that is.
pub fn say_fetched(size: u64) {
    let requests = crate::base::cloud::requests();
    if requests == 0 {
        return;
    }
    let fetched = crate::base::cloud::bytes_fetched();
    let share = if size > 0 {
        format!(" of {size} ({:.4}%)", fetched as f64 * 100.0 / size as f64)
    } else {
        String::new()
    };
    let trips = crate::base::cloud::round_trips();
    eprintln!(
        "socair: fetched {fetched} bytes{share} from object storage in {requests} range requests ({trips} round trips waited for, one after another)"
    );
}

/// Commands that only use plugins still say that a plugin file was refused.
fn warn_refused(set: &PluginSet) {
    for r in &set.refused {
        eprintln!(
            "socair: warning: plugin {} refused: {}",
            r.path.display(),
            r.reason
        );
    }
}
