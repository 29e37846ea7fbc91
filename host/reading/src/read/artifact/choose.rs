//! Which reader reads a file: the readers whose detection claims its content, the store's
//! plugin pins and `--reader NAME` deciding between them, and failing a claim the format its
//! name says ([`pick_reader`]).

use crate::read::plugins::{LoadedPlugin, PluginSet};
use crate::read::source::InputFile;
use socair_plugin_api::abi_stable::{sabi_trait::TD_Opaque, sabi_types::RRef};
use socair_plugin_api::{ByteSource, ByteSource_TO, FormatReaderBox};
use std::collections::BTreeSet;

/// How far into a file readers look to detect its format.
pub const DETECT_HEAD: usize = 4096;

/// File extensions that name a format: a file so named that no reader claims by content is
/// still opened by that format's reader, which then says what is wrong with it.
const FORMAT_BY_EXTENSION: &[(&str, &str)] = &[
    ("safetensors", "safetensors"),
    ("pt", "torch-zip"),
    ("pth", "torch-zip"),
    ("bin", "torch-zip"),
    ("ckpt", "torch-zip"),
    ("gguf", "gguf"),
    ("onnx", "onnx"),
    ("tflite", "tflite"),
    ("mlmodel", "coreml"),
    ("pmml", "pmml"),
    ("pte", "executorch"),
    ("t7", "torch7"),
    ("th", "torch7"),
    // YAML has no magic: its readers find it by name, as PyYAML's users and Hydra do.
    ("yaml", "yaml"),
    ("yml", "yaml"),
];

/// File names that name a format, the same way (a damaged `saved_model.pb` is opened by the
/// SavedModel reader and refused with its reason; protobuf has no magic to claim it by).
const FORMAT_BY_NAME: &[(&str, &str)] = &[("saved_model.pb", "savedmodel")];

/// What an artifact is resolved for: to be read (one reader per file: `tensors`, `convert`,
/// `diff`, manifests), or to be judged (`scan`: every reader that claims a file reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    Read,
    Judge,
}

/// The loaded readers, for messages.
pub fn reader_names(plugins: &PluginSet) -> String {
    let names: Vec<String> = plugins
        .readers()
        .map(|(p, r)| format!("{} from plugin {}", r.format(), p.manifest.name))
        .collect();
    if names.is_empty() {
        "no readers are loaded; see `socair plugins`".into()
    } else {
        format!("readers tried: {}", names.join(", "))
    }
}

/// How a file's reader is chosen among the loaded plugins.
///
/// Every reader whose detection claims a file is a candidate. In a store with plugin pins, a
/// format a pinned plugin reads is read by that plugin only: an unpinned plugin claiming such
/// a file is passed over, with the reason. When several plugins still claim one file, a scan
/// reads it with each of them and every verdict counts (a polyglot is a file readers read
/// differently; `--reader NAME` only says whose reading comes first); a command that reads
/// the file for its tensors (`tensors`, `convert`, `diff`) needs one reading, so socair
/// refuses to choose and names them all, unless `--reader NAME` picked one.
#[derive(Debug, Clone, Default)]
pub struct ReaderChoice {
    /// `--reader NAME`: the plugin that reads a file several plugins claim.
    pub named: Option<String>,
    /// The plugins a store pins (none outside a store, or in a store without plugin pins).
    pub pinned: BTreeSet<String>,
    /// Rule-set versions to run, name → version, where a deployment pins one that plugins
    /// implement in several versions (`socair-wo`); otherwise each plugin runs its newest.
    pub rules: std::collections::BTreeMap<String, String>,
}

/// What [`pick_reader`] decided for a file.
pub(super) enum Pick<'p> {
    /// Read it with this reader.
    Chosen(Chosen<'p>),
    /// No reader claims it (configs, tokenizers, unknown files).
    Unclaimed,
    /// A reader should read it but cannot (its format's plugin is missing).
    Unreadable(String),
    /// Several plugins' readers claim it (or read the format its name says) and nothing
    /// decides between them: judged, each reads it; read, that is an error.
    Several {
        /// The readers, in search order.
        readers: Vec<(&'p LoadedPlugin, &'p FormatReaderBox)>,
        /// Readers passed over (pins), each with the reason.
        passed_over: Vec<String>,
        /// Whether they read it because of its name, not a claim on its content.
        by_extension: bool,
        /// Which plugins claim it, for the error.
        reason: String,
    },
}

/// The reader chosen for a file.
pub struct Chosen<'p> {
    /// The plugin and reader.
    pub reader: (&'p LoadedPlugin, &'p FormatReaderBox),
    /// Chosen by the file's extension or the pins' format, not by a claim on its content.
    pub by_extension: bool,
    /// Readers that claimed the file but were passed over, each with the reason.
    pub passed_over: Vec<String>,
    /// Other plugins' readers that read it too (judged only).
    pub also: Vec<(&'p LoadedPlugin, &'p FormatReaderBox)>,
}

fn describe(p: &LoadedPlugin, r: &FormatReaderBox) -> String {
    format!("plugin {} ({} reader)", p.manifest.name, r.format())
}

/// Each of `readers` [`describe`]d, joined by `sep`.
fn describe_all(readers: &[(&LoadedPlugin, &FormatReaderBox)], sep: &str) -> String {
    readers
        .iter()
        .map(|(p, r)| describe(p, r))
        .collect::<Vec<_>>()
        .join(sep)
}

/// The format of the reader a scan would read a file with (its first bytes `head`, the file,
/// its name), by the rules [`super::Artifact::resolve_to_judge`] follows; `None` when no reader would
/// (a config, a tokenizer, an unknown file). A file whose name says a format no loaded plugin
/// reads is still one to scan (a LEAD): what is returned then says why it cannot be read.
pub fn reader_format(
    head: &[u8],
    input: &InputFile,
    file_name: &str,
    plugins: &PluginSet,
    choice: &ReaderChoice,
) -> Option<String> {
    match pick_reader(head, input, file_name, plugins, choice, Purpose::Judge) {
        Pick::Chosen(c) => Some(c.reader.1.format().to_string()),
        Pick::Several { readers, .. } => readers.first().map(|(_, r)| r.format().to_string()),
        Pick::Unreadable(why) => Some(why),
        Pick::Unclaimed => None,
    }
}

/// The readers whose detection claims the file: by its first bytes `head`, or, when none
/// does, by a signature past them (HDF5 after a large user block), looked for only then: a
/// few reads of a file no reader would otherwise take.
fn detecting<'p>(
    head: &[u8],
    input: &impl ByteSource,
    plugins: &'p PluginSet,
) -> Vec<(&'p LoadedPlugin, &'p FormatReaderBox)> {
    let by_head: Vec<_> = plugins
        .readers()
        .filter(|(_, r)| r.detect(head.into(), input.file_len()))
        .collect();
    if !by_head.is_empty() {
        return by_head;
    }
    plugins
        .readers()
        .filter(|(_, r)| {
            let source = ByteSource_TO::from_ptr(RRef::new(input), TD_Opaque);
            r.detect_past_head(source)
        })
        .collect()
}

/// Picks the reader for a file: the one reader whose detection claims its content (see
/// [`ReaderChoice`] for several); failing that, the reader of the format its extension names
/// (so that a damaged `x.safetensors` is opened by the safetensors reader and refused with its
/// reason, rather than passed over). `Ok(None)` for files no reader claims (configs,
/// tokenizers). `Err` when the choice is ambiguous or impossible: the file is then unread.
pub(super) fn pick_reader<'p>(
    head: &[u8],
    input: &impl ByteSource,
    file_name: &str,
    plugins: &'p PluginSet,
    choice: &ReaderChoice,
    purpose: Purpose,
) -> Pick<'p> {
    let pinned_reader = |format: &str| {
        plugins.readers().find(|(p, r)| {
            choice.pinned.contains(&p.manifest.name) && r.format().as_str() == format
        })
    };
    let mut passed_over = Vec::new();
    let mut claimants = Vec::new();
    let mut pinned_format = None;
    for (p, r) in detecting(head, input, plugins) {
        let format = r.format().to_string();
        match pinned_reader(&format) {
            Some((pinned, _)) if !choice.pinned.contains(&p.manifest.name) => {
                passed_over.push(format!(
                    "{} also claims it and was refused: the store pins plugin {} to read {format}",
                    describe(p, r),
                    pinned.manifest.name
                ));
                pinned_format.get_or_insert(format);
            }
            _ => claimants.push((p, r)),
        }
    }
    if let Some(name) = &choice.named {
        if claimants.len() > 1 {
            let (picked, others): (Vec<_>, Vec<_>) = claimants
                .into_iter()
                .partition(|(p, _)| &p.manifest.name == name);
            if picked.is_empty() {
                return Pick::Unreadable(format!(
                    "--reader {name}: that plugin does not claim this file ({} do)",
                    describe_all(&others, ", ")
                ));
            }
            if purpose == Purpose::Judge {
                // Judged, every claimant reads it; --reader only says which one comes first.
                claimants = picked.into_iter().chain(others).collect();
            } else {
                passed_over.extend(others.iter().map(|(p, r)| {
                    format!("{} also claims it; --reader {name} chose", describe(p, r))
                }));
                claimants = picked;
            }
        }
    }
    // Within one plugin the order of its readers decides (its first claiming reader reads
    // the file: a zip checkpoint's first bytes also parse as a protocol-0 pickle opcode); it is
    // between plugins that socair refuses to choose.
    let mut seen = BTreeSet::new();
    claimants.retain(|(p, _)| seen.insert(p.manifest.name.clone()));
    match claimants.as_slice() {
        [one] => {
            return Pick::Chosen(Chosen {
                reader: *one,
                by_extension: false,
                passed_over,
                also: Vec::new(),
            })
        }
        [] => {}
        many => {
            let reason = format!(
                "{} plugins claim it: {}",
                many.len(),
                describe_all(many, " and ")
            );
            return Pick::Several {
                readers: claimants,
                passed_over,
                by_extension: false,
                reason,
            };
        }
    }
    // No claim stands: the pinned reader of a format an unpinned plugin claimed, else the
    // reader of the format the extension names.
    let extension = file_name
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase());
    let base = file_name.rsplit('/').next().unwrap_or(file_name);
    let format = pinned_format.or_else(|| {
        FORMAT_BY_NAME
            .iter()
            .find(|(name, _)| *name == base)
            .or_else(|| {
                FORMAT_BY_EXTENSION
                    .iter()
                    .find(|(ext, _)| Some(*ext) == extension.as_deref())
            })
            .map(|(_, f)| (*f).to_owned())
    });
    let Some(format) = format else {
        return Pick::Unclaimed;
    };
    let readers: Vec<_> = match pinned_reader(&format) {
        Some(r) => vec![r],
        None => plugins
            .readers()
            .filter(|(_, r)| r.format().as_str() == format)
            .collect(),
    };
    match readers.as_slice() {
        [one] => Pick::Chosen(Chosen {
            reader: *one,
            by_extension: true,
            passed_over,
            also: Vec::new(),
        }),
        [] => Pick::Unreadable(format!("no loaded plugin reads {format}")),
        many => match &choice.named {
            Some(name) => match many.iter().find(|(p, _)| &p.manifest.name == name) {
                Some(one) => Pick::Chosen(Chosen {
                    reader: *one,
                    by_extension: true,
                    passed_over: Vec::new(),
                    also: Vec::new(),
                }),
                None => Pick::Unreadable(format!(
                    "--reader {name}: that plugin does not read {format}"
                )),
            },
            None => Pick::Several {
                reason: format!(
                    "its name says {format}, which {} plugins read: {}",
                    many.len(),
                    describe_all(many, " and ")
                ),
                readers: readers.clone(),
                passed_over,
                by_extension: true,
            },
        },
    }
}
