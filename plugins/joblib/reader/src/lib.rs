//! socair plugin for joblib files (format `joblib`): what `joblib.dump` writes, compressed with
//! any of joblib's compressors or not, opened as `joblib.load` opens it ([`container`],
//! [`inflate`]), its pickle run through the socair-wo pickle machine in joblib mode and judged
//! by the library profile the host asks for ([`read`]), and every numeric array described for
//! fingerprinting. Its claim is [`claim`]. This file is the plugin's declaration
//! (`export_plugin!`, which runs every entry point inside `guard`).

pub mod claim;
pub mod container;
#[doc(hidden)]
pub mod fuzzing;
pub mod inflate;
pub mod read;

use socair_pickle::pickle::{Grammar, Profile};
use socair_plugin_api::{ByteSourceRef, OpenedFile, PluginError, ReadOptions};
use socair_plugin_kit::export::{read_prefix, Reader};
use socair_plugin_kit::report::reviewed_globals;

pub use read::FORMAT;

/// The joblib reader.
#[derive(Debug, Clone, Copy)]
pub struct JoblibReader;

impl Reader for JoblibReader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        claim::claims(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        // The compressed bytes are the file: read whole (the inflated stream is bounded by
        // `inflate::bound`).
        let file = read_prefix(source, source.file_len())?;
        Ok(read::read(&file, &read_options(options)))
    }
}

/// The plugin API's options as [`read::read`] takes them: the grammar and profile the host
/// asked for (`socair-wo` newest, `socair-data/1` unless `socair-sklearn/1` is asked for).
pub fn read_options(options: &ReadOptions) -> read::ReadOptions {
    let rules: Vec<(&str, &str)> = options
        .rules
        .iter()
        .map(|r| (r.0.as_str(), r.1.as_str()))
        .collect();
    read::ReadOptions {
        reviewed: reviewed_globals(options),
        grammar: rules
            .iter()
            .find(|r| r.0 == Grammar::RULE_SET)
            .and_then(|r| Grammar::from_version(r.1))
            .unwrap_or(Grammar::NEWEST),
        profile: Profile::asked(&rules),
        header_only: options.header_only,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi_stable::std_types::Tuple2;

    #[test]
    fn the_profile_is_socair_data_unless_sklearn_is_asked_for() {
        let mut options = ReadOptions::default();
        assert_eq!(read_options(&options).profile, Profile::Data);
        assert_eq!(read_options(&options).grammar, Grammar::NEWEST);
        options.rules = vec![
            Tuple2("socair-sklearn".into(), "1".into()),
            Tuple2("socair-wo".into(), "1".into()),
        ]
        .into();
        assert_eq!(read_options(&options).profile, Profile::Sklearn);
        assert_eq!(read_options(&options).grammar, Grammar::V1);
    }
}
