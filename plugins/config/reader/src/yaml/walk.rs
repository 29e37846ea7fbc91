//! The walk over a YAML stream's events (saphyr-parser 0.3.4): every node's tag judged as
//! PyYAML would construct it ([`super::tags`]), every string value's interpolations and every
//! `_target_` as OmegaConf and Hydra would use them ([`super::omegaconf`]), and the size each
//! document would have with every alias expanded, counted without expanding anything.
//!
//! PyYAML's composer (`yaml/composer.py`, `compose_node`) makes an alias the very node its
//! anchor names, so `yaml.safe_load` builds a billion-laughs document as a graph of shared
//! lists in microseconds; but a merge key (`<<: [*a, *a]`) copies the pairs of the mappings it
//! names (`SafeConstructor.flatten_mapping`), so nested merges double at every level inside
//! PyYAML itself, and whatever walks or copies the loaded value (`OmegaConf.create`,
//! `json.dumps`, a config printer) expands every alias. A document whose expanded size passes
//! [`EXPANSION_FLOOR`] nodes and [`EXPANSION_RATIO`] times its own is a LEAD.

use super::judged::Judged;
use super::omegaconf::{self, Resolution};
use super::tags::{self, TagKind};
use saphyr_parser::{Event, Parser, Span, Tag};
use socair_plugin_kit::bounded::{short, FINDINGS_PER_ROW};
use socair_plugin_kit::model::Severity;
use std::collections::HashMap;

/// Expanded sizes below this many nodes are never a finding.
pub const EXPANSION_FLOOR: u64 = 1_000_000;
/// A document whose aliases expand it past [`EXPANSION_FLOOR`] and this many times its own
/// node count is an alias bomb.
pub const EXPANSION_RATIO: u64 = 16;

/// Interpolations judged in one string at most.
const INTERPOLATIONS_PER_STRING: usize = 64;

/// The longest path written into a place.
const MAX_PATH: usize = 256;

/// An open sequence or mapping.
#[derive(Debug)]
struct Frame {
    /// A mapping (and whether its next node is a key, and the last key's text) or a sequence
    /// (and its next index).
    kind: Kind,
    /// Its anchor (0: none).
    anchor: usize,
    /// Its size with every alias in it expanded, so far.
    size: u64,
    /// How its parent names it: `.key`, `[3]`, or nothing for a document's root.
    name: String,
    /// A mapping where NeMo reads `target`: a document's root, or its root's `model`.
    nemo_level: bool,
}

#[derive(Debug)]
enum Kind {
    Sequence {
        next: u64,
    },
    Mapping {
        expect_key: bool,
        key: Option<String>,
    },
}

/// What an anchor names.
#[derive(Debug)]
struct Anchored {
    size: u64,
    scalar: Option<String>,
}

/// Where a node is, and what its parent makes of it.
struct At {
    line: usize,
    column: usize,
    /// It is a mapping's key.
    is_key: bool,
    /// The key it is the value of, when its parent is a mapping.
    key_of: Option<String>,
    /// Its parent is a mapping where NeMo reads `target`.
    nemo_parent: bool,
}

/// The walk over one stream.
pub(super) struct Walk<'j> {
    judged: &'j mut Judged,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    document: u64,
    doc_nodes: u64,
    /// Python tags found, for the spelled-out count ([`super::spelled_python_tags`]).
    pub python_tags: u64,
}

impl<'j> Walk<'j> {
    pub(super) fn new(judged: &'j mut Judged) -> Self {
        Walk {
            judged,
            stack: Vec::new(),
            anchors: HashMap::new(),
            document: 0,
            doc_nodes: 0,
            python_tags: 0,
        }
    }

    /// Walks every event of `text`; a parse error ends the walk with a LEAD at its place.
    pub(super) fn run(&mut self, text: &str) {
        let mut parser = Parser::new_from_str(text);
        while let Some(next) = parser.next_event() {
            match next {
                Ok((Event::StreamEnd, _)) => break,
                Ok((event, span)) => self.event(event, span),
                Err(e) => {
                    let m = e.marker();
                    self.judged.findings.add(
                        Severity::Lead,
                        format!("line {} column {}", m.line(), m.col() + 1),
                        format!(
                            "the YAML parse stops here ({}): PyYAML may read the rest otherwise, and nothing past this point was checked",
                            e.info()
                        ),
                    );
                    break;
                }
            }
        }
    }

    fn event(&mut self, event: Event<'_>, span: Span) {
        match event {
            Event::DocumentStart(_) => {
                self.document += 1;
                self.judged.documents += 1;
                self.doc_nodes = 0;
                self.anchors.clear();
                self.stack.clear();
            }
            Event::Scalar(value, _, anchor, tag) => {
                let at = self.at(span);
                self.node(&at, tag.as_deref());
                if !at.is_key {
                    self.value_scalar(&at, &value, tag.as_deref());
                }
                // The text is kept only where it is needed: a key names its value, an anchored
                // scalar may be a target through an alias.
                let text = (at.is_key || anchor != 0).then(|| value.into_owned());
                self.complete(1, anchor, text);
            }
            Event::SequenceStart(anchor, tag) => {
                self.collection(span, anchor, tag.as_deref(), false)
            }
            Event::MappingStart(anchor, tag) => self.collection(span, anchor, tag.as_deref(), true),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(frame) = self.stack.pop() {
                    self.complete(frame.size, frame.anchor, None);
                }
            }
            Event::Alias(id) => {
                let at = self.at(span);
                self.judged.aliases += 1;
                let (size, scalar) = match self.anchors.get(&id) {
                    Some(a) => (a.size, a.scalar.clone()),
                    None => (1, None),
                };
                if !at.is_key {
                    if let Some(text) = &scalar {
                        self.targets(&at, text);
                    } else if at.key_of.as_deref() == Some("_target_") {
                        self.target_not_a_name(&at, "_target_", "an alias to a collection");
                    }
                }
                self.complete_alias(size, scalar);
            }
            Event::DocumentEnd | Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
        }
    }

    /// A sequence or mapping starts at `span`.
    fn collection(&mut self, span: Span, anchor: usize, tag: Option<&Tag>, is_mapping: bool) {
        let at = self.at(span);
        self.node(&at, tag);
        if at.key_of.as_deref() == Some("_target_") {
            let what = if is_mapping {
                "a mapping"
            } else {
                "a sequence"
            };
            self.target_not_a_name(&at, "_target_", what);
        }
        let nemo_level = is_mapping
            && (self.stack.is_empty() || (at.nemo_parent && at.key_of.as_deref() == Some("model")));
        let name = self.child_name();
        self.stack.push(Frame {
            kind: if is_mapping {
                Kind::Mapping {
                    expect_key: true,
                    key: None,
                }
            } else {
                Kind::Sequence { next: 0 }
            },
            anchor,
            size: 1,
            name,
            nemo_level,
        });
    }

    /// The place of the node starting at `span`, and its role in its parent.
    fn at(&self, span: Span) -> At {
        let (is_key, key_of, nemo_parent) = match self.stack.last() {
            Some(Frame {
                kind: Kind::Mapping { expect_key, key },
                nemo_level,
                ..
            }) => {
                let key_of = if *expect_key { None } else { key.clone() };
                (*expect_key, key_of, *nemo_level)
            }
            _ => (false, None, false),
        };
        At {
            line: span.start.line(),
            column: span.start.col() + 1,
            is_key,
            key_of,
            nemo_parent,
        }
    }

    /// The path of the node starting now (the open collections' names and its own), built only
    /// for a finding that is listed, and cut at [`MAX_PATH`] bytes.
    fn path(&self) -> String {
        let own = self.child_name();
        let mut path = String::new();
        for name in self
            .stack
            .iter()
            .map(|f| f.name.as_str())
            .chain(std::iter::once(own.as_str()))
        {
            if path.len() > MAX_PATH {
                path.push('…');
                break;
            }
            path.push_str(name);
        }
        path.trim_start_matches('.').to_owned()
    }

    /// How a collection starting here is named in the paths of the nodes inside it.
    fn child_name(&self) -> String {
        match self.stack.last().map(|f| &f.kind) {
            Some(Kind::Sequence { next }) => format!("[{next}]"),
            Some(Kind::Mapping {
                expect_key: true, ..
            }) => ".<key>".to_owned(),
            Some(Kind::Mapping { key, .. }) => format!(".{}", short(key.as_deref().unwrap_or("?"))),
            None => String::new(),
        }
    }

    /// Whether a finding added now is listed (past the listed ones, it is only counted and
    /// its place is never built).
    fn listed(&self) -> bool {
        self.judged.findings.shown.len() < FINDINGS_PER_ROW
    }

    /// The place of the node at `at`: its line and column, its document past the first, its
    /// path; empty for a finding that is only counted.
    fn place(&self, at: &At) -> String {
        if !self.listed() {
            return String::new();
        }
        self.place_always(at)
    }

    /// [`Self::place`], built whether or not a finding is listed (for the notes).
    fn place_always(&self, at: &At) -> String {
        let mut place = format!("line {} column {}", at.line, at.column);
        let path = self.path();
        match (self.document, path.is_empty()) {
            (0 | 1, true) => {}
            (0 | 1, false) => place.push_str(&format!(" ({path})")),
            (d, true) => place.push_str(&format!(" (document {d})")),
            (d, false) => place.push_str(&format!(" (document {d}, {path})")),
        }
        place
    }

    /// Judges a node's tag.
    fn node(&mut self, at: &At, tag: Option<&Tag>) {
        self.judged.nodes += 1;
        self.doc_nodes += 1;
        let Some(tag) = tag else {
            return;
        };
        let full = format!("{}{}", tag.handle, tag.suffix);
        match tags::classify(&full) {
            TagKind::Data => {}
            TagKind::PythonData(built) => {
                self.python_tags += 1;
                if !self.judged.notes_listed() {
                    self.judged.notes_more += 1;
                    return;
                }
                let place = self.place_always(at);
                self.judged.note(
                    place,
                    format!(
                        "`{full}` builds {built} in yaml.full_load and yaml.unsafe_load: data (yaml.safe_load refuses the tag)"
                    ),
                );
            }
            TagKind::PythonCode(code, name) => {
                self.python_tags += 1;
                let place = self.place(at);
                self.judged.findings.add_with(Severity::Fail, place, || {
                    format!("`{full}`: {}", tags::what_it_runs(code, &name))
                });
            }
            TagKind::PythonUnknown => {
                self.python_tags += 1;
                let place = self.place(at);
                self.judged.findings.add_with(Severity::Lead, place, || {
                    format!("`{full}`: a Python tag no PyYAML 6.0.3 constructor builds (the load fails), but a loader that registers one runs it")
                });
            }
            TagKind::Other => {
                let place = self.place(at);
                self.judged.findings.add_with(Severity::Lead, place, || {
                    format!("the tag `{full}`, which yaml.safe_load refuses: a loader that registers a constructor for it runs that constructor on this node")
                });
            }
        }
    }

    /// A string value: its interpolations, and the callable it names when it is a target.
    fn value_scalar(&mut self, at: &At, value: &str, tag: Option<&Tag>) {
        let is_string = tag.is_none_or(|t| {
            matches!(
                format!("{}{}", t.handle, t.suffix).as_str(),
                "!" | "tag:yaml.org,2002:str"
            )
        });
        if is_string && value.contains("${") {
            for i in omegaconf::interpolations(value, INTERPOLATIONS_PER_STRING) {
                let place = format!("{} character {}", self.place(at), i.at + 1);
                let reason = match i.kind {
                    Resolution::Node | Resolution::DataResolver(_) => continue,
                    Resolution::Environment(name) => (Severity::Lead, format!(
                        "the interpolation `${{{name}:…}}` reads the process environment when OmegaConf resolves the value (OmegaConf 2.3 `oc.env`): what the config holds depends on where it is loaded"
                    )),
                    Resolution::Custom(name) => (Severity::Lead, format!(
                        "the interpolation `${{{name}:…}}` calls the resolver `{name}`, code the loading program registered (OmegaConf.register_new_resolver), with these arguments; it is none of OmegaConf's or Hydra's own"
                    )),
                    Resolution::Dynamic => (Severity::Lead, "an interpolation whose resolver's name is itself an interpolation: which resolver runs is decided when the value is read".to_owned()),
                };
                self.judged.findings.add(reason.0, place, reason.1);
            }
        }
        self.targets(at, value);
    }

    /// A scalar value at `at`: a Hydra `_target_` or a NeMo `target` it names.
    fn targets(&mut self, at: &At, value: &str) {
        match at.key_of.as_deref() {
            Some("_target_") => self.target(
                at,
                value,
                "hydra.utils.instantiate imports the module it starts with and calls it with the mapping's other keys as arguments (Hydra 1.3 `_instantiate2.instantiate_node`, `_locate`)",
            ),
            Some("target") if at.nemo_parent && omegaconf::is_dotted_name(value.trim()) => self.target(
                at,
                value,
                "NeMo's SaveRestoreConnector.restore_from imports it and calls its from_config_dict with this config (`import_class_by_path(conf.target)`)",
            ),
            _ => {}
        }
    }

    fn target(&mut self, at: &At, value: &str, what_loader_does: &str) {
        let place = self.place(at);
        let name = short(value.trim());
        if value.contains("${") {
            self.judged.findings.add(
                Severity::Lead,
                place,
                format!("a target given by an interpolation (`{name}`): {what_loader_does}, and which callable that is is decided when the config is read"),
            );
        } else if let Some(matched) = omegaconf::code_target(value) {
            self.judged.findings.add(
                Severity::Fail,
                place,
                format!("the target `{name}` runs code or does file or network I/O when called (it is `{matched}`): {what_loader_does}"),
            );
        } else {
            self.judged.findings.add(
                Severity::Lead,
                place,
                format!("the target `{name}`: {what_loader_does}; importing and calling it runs code socair did not check"),
            );
        }
    }

    fn target_not_a_name(&mut self, at: &At, key: &str, what: &str) {
        let place = self.place(at);
        self.judged.findings.add(
            Severity::Lead,
            place,
            format!("its `{key}` is {what}, not a dotted name: what hydra.utils.instantiate makes of it was not judged"),
        );
    }

    /// A node of expanded `size` is complete: its parent grows, and an anchor records it.
    fn complete(&mut self, size: u64, anchor: usize, scalar: Option<String>) {
        if anchor != 0 {
            self.anchors.insert(
                anchor,
                Anchored {
                    size,
                    scalar: scalar.clone(),
                },
            );
        }
        self.complete_alias(size, scalar);
    }

    fn complete_alias(&mut self, size: u64, scalar: Option<String>) {
        let Some(parent) = self.stack.last_mut() else {
            self.document_done(size);
            return;
        };
        parent.size = parent.size.saturating_add(size);
        match &mut parent.kind {
            Kind::Sequence { next } => *next += 1,
            Kind::Mapping { expect_key, key } => {
                if *expect_key {
                    *key = Some(scalar.unwrap_or_else(|| "?".to_owned()));
                } else {
                    *key = None;
                }
                *expect_key = !*expect_key;
            }
        }
    }

    /// A document's root is complete: its expanded size is judged.
    fn document_done(&mut self, expanded: u64) {
        self.judged.expanded = self.judged.expanded.max(expanded);
        if expanded > EXPANSION_FLOOR && expanded / EXPANSION_RATIO > self.doc_nodes {
            let place = match self.document {
                0 | 1 => "the document's aliases".to_owned(),
                d => format!("document {d}'s aliases"),
            };
            self.judged.findings.add(
                Severity::Lead,
                place,
                format!(
                    "an alias bomb: its {} nodes expand to {} when every alias is followed; PyYAML builds aliases as shared nodes, but its merge keys (`<<`) copy them, and whatever walks or copies the loaded value (OmegaConf.create, json.dumps) expands them all",
                    socair_plugin_kit::bounded::thousands(self.doc_nodes),
                    if expanded == u64::MAX { "more than 2^64".to_owned() } else { socair_plugin_kit::bounded::thousands(expanded) }
                ),
            );
        }
    }
}
