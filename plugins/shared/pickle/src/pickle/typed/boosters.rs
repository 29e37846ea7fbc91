//! The models pickled XGBoost and LightGBM `Booster`s hold (`socair-sklearn/1`), read by
//! `socair-native` as each library's own loader reads them when `pickle.load` calls the
//! Booster's `__setstate__`; and `collections.defaultdict` (`socair-data/1`), which LightGBM's
//! Booster keeps its `best_score` in.
//!
//! * `xgboost.core.Booster` (python-package/xgboost/core.py at 3.2.0): no `__reduce__`, so
//!   pickle writes NEWOBJ of the class with `()` and BUILD of `__getstate__`'s dict, whose
//!   `handle` is a `bytearray` of `XGBoosterSerializeToBuffer`'s memory snapshot.
//!   `__setstate__` hands it to `XGBoosterUnserializeFromBuffer` (nothing else of the state is
//!   called; the rest updates `__dict__`): the snapshot is read by
//!   `socair_native::xgboost::read_snapshot`, its findings reported here.
//! * `lightgbm.basic.Booster` (python-package/lightgbm/basic.py at 4.7.0): NEWOBJ and BUILD
//!   of `__getstate__`'s dict, whose `_handle` is `model_to_string()`'s text; `__setstate__`
//!   takes `state.get("_handle", state.get("handle"))` and, when it is not `None`, hands its
//!   UTF-8 bytes to `LGBM_BoosterLoadModelFromString`: read by `socair_native::lightgbm::read`.
//!
//! The model is checked, not fingerprinted: its trees are no NumPy arrays of the pickle.
//! `defaultdict(factory)` is accepted with no factory or with one of the profile's data
//! constructors (the factory runs only on a missing key, after loading).

use crate::globals::profiles::{BoosterKind, Builtin, ProfileGlobal};
use crate::globals::{Class, Known};
use crate::pickle::findings::Kind;
use crate::pickle::machine::Run;
use crate::pickle::values::{DictObject, Object, Severity, Value};
use socair_native::model_read::ModelRead;

impl Run<'_, '_> {
    /// BUILD on a Booster record: the state as any listed class's (a dict of `str` keys, once),
    /// then the model it holds read as the library reads it.
    pub(super) fn build_booster(&mut self, id: usize, kind: BoosterKind, state: &Value) {
        self.build_record(id, state.clone());
        let Value::Obj(s) = state else { return };
        let Some(Object::Dict(d)) = self.t().objects.get(*s) else {
            return;
        };
        let lookup = |key: &str| {
            d.items
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if &**s == key))
                .map(|(_, v)| v.clone())
        };
        // LightGBM's `state.get("_handle", state.get("handle", None))`; XGBoost's
        // `state["handle"]` (a KeyError without it: nothing is loaded).
        let (key, handle) = match kind {
            BoosterKind::Xgboost => ("handle", lookup("handle")),
            BoosterKind::Lightgbm => match lookup("_handle") {
                Some(v) => ("_handle", Some(v)),
                None => ("handle", lookup("handle")),
            },
        };
        let class = kind.class();
        let read = match (kind, handle) {
            (_, None | Some(Value::None)) => return,
            (BoosterKind::Xgboost, Some(Value::Bytes(b))) => {
                socair_native::xgboost::read_snapshot(&b)
            }
            (BoosterKind::Lightgbm, Some(Value::Str(s))) => {
                socair_native::lightgbm::read(s.as_bytes())
            }
            (_, Some(other)) => {
                let want = match kind {
                    BoosterKind::Xgboost => "the bytearray XGBoost's __getstate__ writes",
                    BoosterKind::Lightgbm => "the model string LightGBM's __getstate__ writes",
                };
                let text = format!(
                    "the {class}'s {key} is {}, not {want}: outside {}",
                    crate::pickle::values::describe(&other),
                    self.options.rules_name()
                );
                self.note(Kind::Structure, Severity::Lead, None, || text);
                return;
            }
        };
        self.report_model(class, key, read);
    }

    /// The findings of the model a Booster's `key` holds, each with its place in the model.
    fn report_model(&mut self, class: &str, key: &str, read: ModelRead) {
        let what = format!("{class}: {}", read.what);
        self.charge(what.len());
        self.t().models.push(what);
        for f in read.findings.shown {
            self.note(Kind::Structure, f.severity, None, || {
                format!(
                    "the model the {class}'s {key} holds ({}), {}: {}",
                    read.format, f.place, f.reason
                )
            });
        }
        if let (n @ 1.., Some(worst)) = (read.findings.more, read.findings.worst) {
            // Under the worst of all the model's findings: a FAIL past the listed ones still
            // fails the pickle.
            self.note(Kind::Structure, worst, None, || {
                format!("the model the {class}'s {key} holds has {n} more findings not listed")
            });
        }
    }

    /// `collections.defaultdict()` or `defaultdict(factory)`, as `defdict_reduce` writes it:
    /// a dict whatever the factory (pickle's SETITEMS then fills a real dict), the factory
    /// a LEAD unless it is a data constructor (it runs when code reads a missing key, after
    /// loading; a code-running global was judged where the pickle named it). `None` for
    /// arguments `defdict_reduce` never writes.
    pub(super) fn default_dict(&mut self, args: &[Value]) -> Option<Value> {
        let data_factory = |v: &Value| match v {
            Value::None => true,
            Value::Global(g) => matches!(
                g.class,
                Class::Known(
                    Known::OrderedDict
                        | Known::Counter
                        | Known::Builtin(Builtin::Set)
                        | Known::Profile(
                            ProfileGlobal::Deque
                                | ProfileGlobal::Counter
                                | ProfileGlobal::FrozenSet
                                | ProfileGlobal::DefaultDict
                                | ProfileGlobal::Builtin(Builtin::Set)
                        )
                )
            ),
            _ => false,
        };
        match args {
            [] => {}
            [factory] if data_factory(factory) => {}
            [Value::Global(g)] => {
                let text = format!(
                    "a collections.defaultdict whose factory is {}.{}, not a data constructor: it runs when code reads a missing key, after loading; outside {}",
                    g.module,
                    g.name,
                    self.options.rules_name()
                );
                self.note(Kind::Call, Severity::Lead, None, || text);
            }
            _ => return None,
        }
        Some(self.new_object(Object::Dict(DictObject::default())))
    }
}
