//! The judging of globals: every global Python would look up is classified (through a small
//! per-run cache), reported once with its repeats counted, and turned into a typed value.
//! Apart from the opcodes that name globals (typed and abstract alike).

use super::{Judged, Run, MAX_JUDGED};
use crate::globals::{classify_pickled_in, profiles, Class, Known};
use crate::pickle::findings::{quote, Kind};
use crate::pickle::values::{GlobalRef, Severity, Value};
use std::rc::Rc;

impl Run<'_, '_> {
    /// Judges the global Python looks up as `module`.`name` under the current protocol, and
    /// reports it. Returns its class and whether the operator reviewed it.
    pub(super) fn global(&mut self, module: &str, name: &str) -> (Class, bool) {
        let entry = self.judged(module, name);
        self.report_global(&entry)
    }

    /// Reports a judged global (once; repeats are counted).
    pub(super) fn report_global(&mut self, entry: &Rc<Judged>) -> (Class, bool) {
        let gname = self.options.rules_name();
        let module = &*entry.module;
        let reviewed = matches!(entry.lookup.class, Class::Unknown)
            && self
                .options
                .reviewed
                .iter()
                .any(|r| **r == *entry.effective);
        let kind = match entry.lookup.class {
            Class::Dangerous(_) => Some(Kind::DangerousGlobal),
            Class::Constructs(..) => Some(Kind::UnknownGlobal),
            Class::Unknown if !reviewed => Some(Kind::UnknownGlobal),
            _ => None,
        };
        if reviewed && !self.reviewed_used.iter().any(|r| **r == *entry.effective) {
            self.reviewed_used.push(entry.effective.to_string());
        }
        let Some(kind) = kind else {
            return (entry.lookup.class.clone(), reviewed);
        };
        if entry.noted.get() && self.reporting(kind) {
            // Listed (or counted) already: a repeat.
            self.findings.repeat(kind);
            return (entry.lookup.class.clone(), reviewed);
        }
        let shown = |e: &Judged| {
            let renamed = match &e.lookup.renamed {
                Some((m, n)) => format!(
                    " (which Python 3 imports as {}.{}: fix_imports renames it below protocol 3)",
                    quote(m),
                    quote(n),
                ),
                None => String::new(),
            };
            format!("{}{renamed}", quote(&e.raw))
        };
        let hint = if module.starts_with("numpy") {
            " (numpy objects are rebuilt by calling numpy)"
        } else {
            ""
        };
        match &entry.lookup.class {
            Class::Dangerous(why) => {
                self.note(kind, Severity::Fail, Some(&entry.raw), || {
                    format!("global {}: {why}", shown(entry))
                });
            }
            Class::Constructs(why, _) => {
                self.note(kind, Severity::Lead, Some(&entry.raw), || {
                    format!(
                        "global {} is a class that, when called, {why}; a call of it is a FAIL, and no review clears it",
                        shown(entry)
                    )
                });
            }
            _ => {
                self.note(kind, Severity::Lead, Some(&entry.raw), || {
                    format!(
                        "global {} is outside {gname}{hint}; pass it in --reviewed-classes once reviewed",
                        shown(entry)
                    )
                });
            }
        }
        if self.reporting(kind) {
            entry.noted.set(true);
        }
        (entry.lookup.class.clone(), reviewed)
    }

    /// Whether findings of `kind` are recorded now (see [`Run::note`]).
    pub(super) fn reporting(&self, kind: Kind) -> bool {
        !(self.detecting
            || (self.reader.is_replay() && (!self.reader.diverged() || kind == Kind::Framing)))
    }

    /// The classification of a global, from a small cache: floods name the same globals over
    /// and over.
    pub(super) fn judged(&mut self, module: &str, name: &str) -> Rc<Judged> {
        let renaming = self.proto < 3;
        // FNV-1a over the pair: the cache is checked on every global a flood names.
        let mut key: u64 = if renaming {
            0xcbf2_9ce4_8422_2325
        } else {
            0x8422_2325_cbf2_9ce4
        };
        for b in module.bytes().chain([0]).chain(name.bytes()) {
            key = (key ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        if let Some(e) = self.judged.get(&key) {
            if e.renaming == renaming && *e.module == *module && *e.name == *name {
                return e.clone();
            }
        }
        let mut lookup = classify_pickled_in(module, name, self.proto, self.options.grammar);
        // A profile's exact pairs (and joblib's wrappers) are judged before danger, by the
        // name Python imports.
        let (em, en) = lookup
            .renamed
            .as_ref()
            .map_or((module, name), |(m, n)| (m.as_str(), n.as_str()));
        if let Some(p) = profiles::known(em, en, self.options.profile, self.options.joblib) {
            lookup.class = Class::Known(Known::Profile(p));
        } else if self.options.profile.data()
            && matches!(&lookup.class, Class::Known(k) if !k.is_profile_data())
        {
            // Outside a torch checkpoint, torch's own globals (rebuild functions, storages,
            // dtypes) are not data a profile lists: `pickle.load` imports torch for them.
            lookup.class = Class::Unknown;
        }
        let effective = match &lookup.renamed {
            Some((m, n)) => format!("{m}.{n}"),
            None => format!("{module}.{name}"),
        };
        let e = Rc::new(Judged {
            noted: std::cell::Cell::new(false),
            abs_id: std::cell::Cell::new(None),
            renaming,
            module: module.into(),
            name: name.into(),
            raw: format!("{module}.{name}").into(),
            effective: effective.into(),
            lookup,
        });
        if self.judged.len() < MAX_JUDGED {
            self.judged.insert(key, e.clone());
        }
        e
    }

    /// A global whose name the machine cannot determine.
    pub(crate) fn unnamed_global(&mut self, why: &str) {
        let text = format!("STACK_GLOBAL whose module and name cannot be determined: {why}");
        self.note(Kind::UnnamedGlobal, Severity::Fail, None, || text);
    }

    /// A `GlobalRef` value for the typed model.
    pub(crate) fn global_value(&mut self, module: &str, name: &str) -> Value {
        let (class, reviewed) = self.global(module, name);
        Value::Global(Rc::new(GlobalRef {
            module: module.to_owned(),
            name: name.to_owned(),
            class,
            reviewed,
        }))
    }
}
