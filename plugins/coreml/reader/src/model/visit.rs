//! The judgements a read of a model file makes on whole messages (their oneof groups, a
//! model's type) and the `OpenedFile` it ends with.

use super::roles::Visit;
use crate::proto::schema::{MESSAGES, MODEL, ONEOFS};
use crate::proto::shallow::{self, Span};
use abi_stable::std_types::ROption;
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_plugin_kit::reading::listed;
use socair_plugin_kit::Severity;

/// Whether a model type (a field number of `Model`'s oneof `Type`) holds data only an Apple
/// framework parses, in a format socair does not read: why, when it does.
pub fn opaque_type(number: u32) -> Option<&'static str> {
    match number {
        2000 | 2001 | 2004 | 2005 => Some(
            "its modelParameterData is parsed by Apple's NaturalLanguage framework, in a format socair does not read",
        ),
        3000 => Some("a serialized private model: bytes only Core ML itself parses"),
        _ => None,
    }
}

/// The name of field `number` of message `msg`.
pub fn field_name(msg: usize, number: u32) -> &'static str {
    MESSAGES
        .get(msg)
        .and_then(|m| m.field(number))
        .map_or("?", |f| f.name)
}

impl Visit {
    /// Checks the oneof groups of message `msg` at `buf[span]` (its place `path()`, built only
    /// for a finding): two
    /// members of one group set is a FAIL.
    pub fn oneofs(&mut self, buf: &[u8], msg: usize, span: Span, path: impl Fn() -> String) {
        let Some(groups) = ONEOFS.get(msg).filter(|g| !g.is_empty()) else {
            return;
        };
        let mut seen: Vec<Option<u32>> = vec![None; groups.len()];
        let mut reported = vec![false; groups.len()];
        for f in shallow::fields(buf, span) {
            for (g, group) in groups.iter().enumerate() {
                if group.binary_search(&f.number).is_err() {
                    continue;
                }
                match seen[g] {
                    Some(prev) if prev != f.number && !reported[g] => {
                        reported[g] = true;
                        let (a, b) = (field_name(msg, prev), field_name(msg, f.number));
                        let name = MESSAGES.get(msg).map_or("?", |m| m.name);
                        self.reading.note(
                            "oneof members set together",
                            Severity::Fail,
                            || format!("{} (byte {})", path(), f.tag_at),
                            || format!("`{a}` and `{b}` of one oneof of {name} are both set: protobuf keeps the last one, a reader that keeps the first sees another model"),
                        );
                    }
                    _ => seen[g] = Some(f.number),
                }
            }
        }
    }

    /// A `Model` message at `buf[span]` (`place`): its type.
    pub fn model(&mut self, buf: &[u8], span: Span, place: &str) {
        let types = ONEOFS
            .get(MODEL)
            .and_then(|g| g.first())
            .copied()
            .unwrap_or(&[]);
        let Some(number) = shallow::fields(buf, span)
            .filter(|f| types.binary_search(&f.number).is_ok())
            .map(|f| f.number)
            .last()
        else {
            self.reading.note(
                "models without a type",
                Severity::Lead,
                || place.to_owned(),
                || "a model with no type set: Core ML refuses it (no model of Model.Type)".into(),
            );
            return;
        };
        let name = field_name(MODEL, number);
        if !self.types.contains(&name) && self.types.len() < 32 {
            self.types.push(name);
        }
        if let Some(why) = opaque_type(number) {
            self.reading.note(
                "opaque models",
                Severity::Lead,
                || place.to_owned(),
                || format!("a {name} model: {why}"),
            );
        }
        if number == 556 {
            let link = shallow::last_bytes(buf, span, 556);
            if link.and_then(|l| shallow::last_bytes(buf, l, 1)).is_none() {
                self.reading.note(
                    "links",
                    Severity::Lead,
                    || place.to_owned(),
                    || "a linked model that links nothing: Core ML's validator refuses it (LinkedModel.LinkType not set)".into(),
                );
            }
        }
    }

    /// The `OpenedFile`, its summary saying what was read.
    pub fn finish(mut self, version: Option<u64>) -> OpenedFile {
        let version = version.map_or_else(|| "?".to_owned(), |v| v.to_string());
        let types = listed(self.types.iter().copied(), 8);
        self.reading
            .metadata
            .push(("coreml.specification_version".into(), version.clone()));
        self.reading
            .metadata
            .push(("coreml.model_types".into(), types.clone()));
        let located = self.reading.tensors.len();
        let elsewhere = self
            .reading
            .tensors
            .iter()
            .filter(|t| t.file.is_some())
            .count();
        let about = std::mem::take(&mut self.about);
        let what = format!("Core ML model (specification version {version}; {types})");
        let plural = if located == 1 { "" } else { "s" };
        let counts = if elsewhere > 0 {
            format!("{located} tensor{plural} located, {elsewhere} of them in the package's weights file")
        } else {
            format!("{located} tensor{plural} located")
        };
        let mut opened = self.reading.finish(|status| match status {
            RowStatus::Pass => format!("{what}: {counts}"),
            RowStatus::Fail => format!("{what} that names files outside it, or is built so that readers disagree: {counts}"),
            _ => format!("{what} with parts socair does not prove safe (code the app supplies, linked or opaque models): {counts}"),
        });
        let mut links_only = true;
        for row in opened.rows.iter_mut() {
            for f in row.findings.iter_mut() {
                match about.iter().find(|(p, _)| p == f.place.as_str()) {
                    Some((_, file)) => f.file = ROption::RSome(file.as_str().into()),
                    None => links_only &= f.severity != socair_plugin_api::Severity::Lead,
                }
            }
            // A row whose only LEADs are links to files beside the model reads the same
            // when the host finds those files in the scanned directory and makes them notes.
            if row.status == RowStatus::Lead && links_only {
                row.summary =
                    format!("{what}, linking models beside it (see the findings): {counts}").into();
            }
        }
        opened
    }
}
