//! How bad a finding is: the one scale every first-party reader's findings share (a clean
//! check has none), ordered so that the worst of several is their `max`.

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Outside what the reader proves safe: a person looks before the file is loaded.
    Lead,
    /// Evidence of code execution, of I/O a loader would do, or of a file built so that
    /// readers disagree.
    Fail,
}

/// The status of a row whose worst finding is of this severity.
impl From<Severity> for socair_plugin_api::RowStatus {
    fn from(s: Severity) -> Self {
        match s {
            Severity::Lead => socair_plugin_api::RowStatus::Lead,
            Severity::Fail => socair_plugin_api::RowStatus::Fail,
        }
    }
}

impl From<Severity> for socair_plugin_api::Severity {
    fn from(s: Severity) -> Self {
        match s {
            Severity::Lead => socair_plugin_api::Severity::Lead,
            Severity::Fail => socair_plugin_api::Severity::Fail,
        }
    }
}
