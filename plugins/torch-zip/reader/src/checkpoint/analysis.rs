//! What reading a checkpoint yields: its findings (with the per-kind bound on those a file can
//! repeat without bound), byte order, located tensors and what is left unread or outside the
//! model. Apart from the readers (zip and legacy alike) that fill it.

use crate::pickle::{self, Severity, TensorModel};
use std::rc::Rc;

/// One finding: the reading model every first-party reader shares.
pub use socair_plugin_kit::model::Finding;

/// Byte order of the storages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Little-endian (also what an absent `byteorder` record means).
    Little,
    /// Big-endian.
    Big,
}

/// A named tensor of the state-dict model, located in the file.
#[derive(Debug, Clone)]
pub struct LocatedTensor {
    /// Its name (nested keys joined with `.`).
    pub name: String,
    /// The grammar's model of it.
    pub model: Rc<TensorModel>,
    /// Where its storage's first element lies in the file.
    pub record_offset: u64,
    /// The storage record's name (for a legacy file, `storages[<key>]`).
    pub record: String,
    /// Where its storage starts within the record: 0, except for a legacy storage view.
    pub record_base: u64,
    /// It lies outside the state-dict model (fingerprinted, not converted).
    pub outside_model: bool,
}

/// Options for [`super::analyze`].
#[derive(Debug, Clone, Default)]
pub struct AnalyzeOptions {
    /// Skip the CRC-32 of storage records (their bytes are not read).
    pub header_only: bool,
    /// Globals the operator reviewed.
    pub reviewed: Vec<String>,
    /// The `socair-wo` version to run.
    pub grammar: pickle::Grammar,
    /// The library profile that judges a pickle that is not a torch checkpoint (torch's
    /// legacy reader's "any other pickle"): `socair-data/1` unless the host asked for
    /// `socair-sklearn/1` (`ReadOptions.rules`); [`pickle::Profile::Torch`] reads as
    /// `socair-data/1` there.
    pub profile: pickle::Profile,
}

/// Everything read from a checkpoint.
#[derive(Debug, Default)]
pub struct Analysis {
    /// The archive prefix, if the zip layer was sound.
    pub prefix: Option<String>,
    /// Every finding of the zip layer, the records and the pickle.
    pub findings: Vec<Finding>,
    /// The byte order (`None` when the `byteorder` record is absent: read as little-endian).
    pub byteorder_record: Option<Endian>,
    /// The pickle protocol.
    pub protocol: Option<u8>,
    /// Storages named by the pickle.
    pub storage_count: usize,
    /// Records whose CRC-32 was verified.
    pub crc_verified: usize,
    /// Records whose CRC-32 was not read (header-only).
    pub crc_skipped: usize,
    /// Records without a CRC-32 (recorded as 0: `set_crc32_options(False)`, `socair-wo/3`).
    pub crc_absent: usize,
    /// Tensors of the state-dict model that can be read in place.
    pub tensors: Vec<LocatedTensor>,
    /// Tensors (by name) or the whole file (`None`) that cannot be, with why.
    pub unread: Vec<(Option<String>, String)>,
    /// Tensors outside the state-dict model, with why.
    pub outside: Vec<(String, String)>,
    /// What the checkpoint holds besides its state dict's tensors.
    pub not_carried: Vec<String>,
    /// Reviewed globals the pickle used.
    pub reviewed_used: Vec<String>,
    /// Whether the archive looks like a TorchScript archive.
    pub torchscript: bool,
    /// A TorchScript archive's code, judged (`socair-wo/3`; [`crate::torchscript`]).
    pub torchscript_code: Option<crate::torchscript::Judgment>,
    /// Which pickle the findings' offsets count in (`data.pkl`, or the legacy main pickle).
    pub pickle_name: String,
    /// Whether the file is in torch's legacy (non-zip) format.
    pub legacy: bool,
    /// The legacy format's `sys_info`, as read.
    pub sys_info: Option<String>,
    /// Where the legacy main pickle starts in the file.
    pub main_pickle_offset: Option<u64>,
    /// The `socair-wo` version run.
    pub grammar: pickle::Grammar,
    /// The profile that judged a pickle that is not a torch checkpoint (`socair-data/1`),
    /// when that is what the file is.
    pub profile: Option<&'static str>,
    /// The NumPy arrays such a pickle builds, by path (`descr shape`).
    pub arrays: Vec<(String, String)>,
    /// The models pickled Boosters hold, each in a phrase (`socair-sklearn/1`).
    pub models: Vec<String>,
    /// The arrays of such a pickle whose bytes lie in the file, as tensors
    /// (`socair_plugin_kit::ndarray`).
    pub array_tensors: Vec<socair_plugin_api::TensorDescriptor>,
    /// A `torch.distributed.checkpoint` `.metadata`'s items ([`crate::dcp`]), for the host
    /// to read in the `.distcp` files beside it.
    pub dcp_items: Option<Vec<socair_plugin_api::facts::DcpItem>>,
    /// Findings added by kind: how many of each, for [`Analysis::finish`].
    pub(crate) kinds: Vec<(&'static str, Severity, u64)>,
}

/// How many findings of one kind a report lists; the rest are counted in one more finding.
pub const FINDINGS_PER_KIND: u64 = 32;

impl Analysis {
    /// The worst finding.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// The storages' byte order as read.
    pub fn endian(&self) -> Endian {
        self.byteorder_record.unwrap_or(Endian::Little)
    }

    pub(crate) fn add(
        &mut self,
        severity: Severity,
        place: impl Into<String>,
        reason: impl Into<String>,
    ) {
        self.findings
            .push(Finding::new(severity, place.into(), reason.into()));
    }

    /// A finding of a kind that a file can repeat without bound (one per record, storage or
    /// tensor): the first [`FINDINGS_PER_KIND`] are kept, the rest counted. The place and
    /// reason are built only for the kept ones.
    pub(crate) fn add_kind(
        &mut self,
        kind: &'static str,
        severity: Severity,
        finding: impl FnOnce() -> (String, String),
    ) {
        let n = match self
            .kinds
            .iter_mut()
            .find(|(k, s, _)| *k == kind && *s == severity)
        {
            Some(entry) => {
                entry.2 += 1;
                entry.2
            }
            None => {
                self.kinds.push((kind, severity, 1));
                1
            }
        };
        if n <= FINDINGS_PER_KIND {
            let (place, reason) = finding();
            self.add(severity, place, reason);
        }
    }

    /// Closes the counts of [`Analysis::add_kind`]: one finding per kind that had more than
    /// [`FINDINGS_PER_KIND`], with the exact number left out.
    pub(crate) fn finish(&mut self) {
        for (kind, severity, n) in std::mem::take(&mut self.kinds) {
            if n > FINDINGS_PER_KIND {
                self.add(
                    severity,
                    "(the rest of the file)",
                    format!(
                        "… and {} more of the same kind: {kind} (the first {FINDINGS_PER_KIND} are listed)",
                        n - FINDINGS_PER_KIND
                    ),
                );
            }
        }
    }
}
