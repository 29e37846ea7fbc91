//! The grammar of a Keras model config, read as data: every JSON object holding both
//! `class_name` and `config` is an object Keras resolves and builds, and is judged by what it
//! resolves to; everything else is plain data (`GRAMMAR.md`, beside this crate, cites the
//! Keras source each rule mirrors).
//!
//! Two dialects: what Keras 3 writes into `.keras` archives
//! (`keras/src/saving/serialization_lib.py`, keras 3.15.1: `module` + `class_name` +
//! `registered_name`, resolved by `_retrieve_class_or_fn`), and what tf-keras writes into the
//! `model_config` of a legacy `.h5` model (`tf_keras/src/saving/legacy/serialization.py`,
//! tf-keras 2.21: `class_name` alone, looked up in its registries; a `Lambda`'s function as
//! marshalled bytecode, `function_type: "lambda"`).

use crate::table::{self, Verdict, BUILTIN_MODULES, KERAS_PACKAGES};
use serde_json::{Map, Value};
use socair_hdf5::{Findings, Severity};

/// Which writer's grammar a config is read against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Keras 3 (`.keras` archives, `serialization_lib`).
    Keras3,
    /// tf-keras / Keras 2 (`model_config` of a legacy `.h5` model).
    Legacy,
    /// The legacy `.h5` form Keras 3 writes (`keras_version` 3.x): the legacy objects, whose
    /// names Keras 3's legacy loader resolves in its own registries
    /// (`keras/src/legacy/saving/legacy_h5_format.py`, keras 3.15.1: `saving_utils.
    /// model_from_config` and `optimizers.deserialize`), as well as tf-keras' names.
    Legacy3,
}

impl Dialect {
    /// Whether configs are in the legacy object form.
    pub fn is_legacy(self) -> bool {
        matches!(self, Dialect::Legacy | Dialect::Legacy3)
    }
}

/// Config documents larger than this are not parsed (a real one is a few megabytes at most).
pub const MAX_CONFIG: usize = 64 << 20;

/// What a config was judged to hold.
#[derive(Debug, Clone, Default)]
pub struct Judged {
    /// What was found.
    pub found: Findings,
    /// Objects judged (`class_name` + `config`).
    pub objects: u64,
    /// Pickles scanned (a `TorchModuleWrapper`'s module).
    pub pickles: u64,
    /// Reviewed globals the pickles used.
    pub reviewed_used: Vec<String>,
}

impl Judged {
    /// Adds another outcome's findings and counts to this one.
    pub fn merge(&mut self, other: Judged) {
        self.found.extend(other.found);
        self.objects += other.objects;
        self.pickles += other.pickles;
        crate::pickles::add_reviewed(&mut self.reviewed_used, other.reviewed_used);
    }

    fn add(&mut self, severity: Severity, place: String, reason: String) {
        self.found.add(severity, place, reason);
    }
}

/// Keys Keras writes beside `class_name` and `config` in a serialized object
/// (`serialize_keras_object`, `get_build_and_compile_config`, `record_object_after_serialization`;
/// `name` and `inbound_nodes` in a functional model's layer list, `spec_name` in a type spec).
const OBJECT_KEYS: &[&str] = &[
    "module",
    "class_name",
    "config",
    "registered_name",
    "build_config",
    "compile_config",
    "shared_object_id",
    "name",
    "inbound_nodes",
    "spec_name",
];

/// The model classes Keras builds layer lists for, and resolves by name without a module
/// (`keras/src/legacy/saving/saving_utils.py` `model_from_config`, keras 3.15.1, adds
/// `Functional`, `Model` and `Sequential` to the legacy registry).
const MODEL_CLASSES: &[&str] = &["Sequential", "Functional", "Model"];

/// Python builtins that run code, import modules or open files, named as a function under the
/// `builtins` module: Keras before 3.9 imported `builtins` and looked the name up.
const CODE_BUILTINS: &[&str] = &[
    "__import__",
    "breakpoint",
    "compile",
    "delattr",
    "eval",
    "exec",
    "exit",
    "getattr",
    "globals",
    "help",
    "input",
    "locals",
    "open",
    "print",
    "quit",
    "setattr",
    "vars",
];

/// Judges the config document `text` (the bytes of `config.json`, or of a `model_config`
/// attribute), whose findings are placed under `file` (`config.json`, `attribute
/// model_config`).
pub fn judge(text: &[u8], file: &str, dialect: Dialect, reviewed: &[String]) -> Judged {
    judge_with(text, file, dialect, reviewed, Shape::Object)
}

/// Judges a document that holds serialized objects anywhere (a legacy `training_config`:
/// a plain object whose `optimizer_config`, `loss` and `metrics` are objects or names).
pub fn judge_document(text: &[u8], file: &str, dialect: Dialect, reviewed: &[String]) -> Judged {
    judge_with(text, file, dialect, reviewed, Shape::Document)
}

/// Judges one node's `metadata` of a tf-keras SavedModel's `keras_metadata.pb` (tf-keras 2.21,
/// `tf_keras/src/saving/legacy/saved_model/layer_serialization.py`
/// `LayerSavedModelSaver._python_properties_internal`, `model_serialization.py`,
/// `metric_serialization.py`, `InputLayerSavedModelSaver.python_properties`): the object's
/// `class_name` and `config` (with its `shared_object_id`) are a serialized object, which
/// `tf_keras/src/saving/legacy/saved_model/load.py` `KerasObjectLoader._revive_from_config`
/// rebuilds through the legacy `deserialize_keras_object`, judged in the tf-keras dialect;
/// the other keys tf-keras writes ([`TRACKING_KEYS`]) are data, judged for objects inside
/// them (an `input_spec`'s `InputSpec`, a dtype policy, the root's `model_config` and
/// `training_config`); any other key is a LEAD.
pub fn judge_tracking_metadata(text: &[u8], file: &str, reviewed: &[String]) -> Judged {
    judge_with(
        text,
        file,
        Dialect::Legacy,
        reviewed,
        Shape::TrackingMetadata,
    )
}

/// The keys tf-keras 2.21 writes into a node's SavedModel metadata beside `class_name`,
/// `config` and `shared_object_id` (the files [`judge_tracking_metadata`] names, and
/// `saving_utils.model_metadata`: `keras_version`, `backend`, `model_config`,
/// `training_config`); `_is_feature_layer` is read by `load.py` `RevivedLayer._init_from_metadata`.
pub const TRACKING_KEYS: &[&str] = &[
    "name",
    "trainable",
    "expects_training_arg",
    "dtype",
    "batch_input_shape",
    "stateful",
    "must_restore_from_config",
    "preserve_input_structure_in_config",
    "autocast",
    "input_spec",
    "activity_regularizer",
    "build_input_shape",
    "is_graph_network",
    "full_save_spec",
    "save_spec",
    "keras_version",
    "backend",
    "model_config",
    "training_config",
    "sparse",
    "ragged",
    "_is_feature_layer",
    // A layer of a Functional model: `get_serialized` (`serialize_keras_object`) adds the
    // layer's inbound nodes, as tf-keras 2.21 writes them for `tf.keras.Model(inputs,
    // outputs)` saved with `model.save(dir)` (node references: names, indices, call kwargs).
    "inbound_nodes",
];

/// What a judged document's top level is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// One serialized object (`config.json`, `model_config`).
    Object,
    /// Data holding serialized objects anywhere (`training_config`).
    Document,
    /// A tf-keras SavedModel node's metadata ([`judge_tracking_metadata`]).
    TrackingMetadata,
}

fn judge_with(
    text: &[u8],
    file: &str,
    dialect: Dialect,
    reviewed: &[String],
    shape: Shape,
) -> Judged {
    let mut j = Judge {
        out: Judged::default(),
        file: file.to_owned(),
        dialect,
        reviewed: reviewed.to_vec(),
    };
    if text.len() > MAX_CONFIG {
        j.out.add(Severity::Lead, file.to_owned(), format!("{} bytes of config, more than the {MAX_CONFIG} socair parses: nothing in it was checked", text.len()));
        return j.out;
    }
    // A parsed JSON value costs some 256 bytes of memory: a document of more values than
    // the memory bound allows (64 MiB + 4x its size) is not parsed.
    let values = values_in(text);
    let allowed = ((64u64 << 20) + 4 * text.len() as u64) / VALUE_COST;
    if values > allowed {
        j.out.add(Severity::Lead, file.to_owned(), format!("{values} JSON values in {} bytes, more than the {allowed} socair parses for a document of this size (64 MiB + 4x its size, at {VALUE_COST} bytes a value): nothing in it was checked", text.len()));
        return j.out;
    }
    let value = match parse(text) {
        Ok(v) => v,
        Err(e) => {
            j.out.add(Severity::Fail, file.to_owned(), format!("not JSON that Python's json module reads ({e}): Keras cannot load it, and readers may disagree on what it says"));
            return j.out;
        }
    };
    match value {
        Value::Object(m) if shape == Shape::TrackingMetadata => j.tracking_metadata(m),
        Value::Object(m) if m.contains_key("class_name") && m.contains_key("config") => {
            j.object(&m, String::new());
        }
        value if shape == Shape::Document => j.value(&value, ""),
        _ => j.out.add(Severity::Lead, file.to_owned(), "not a serialized Keras object (an object with `class_name` and `config`): outside what keras.saving writes".into()),
    }
    j.out
}

/// What one parsed JSON value costs in memory, about (a `serde_json::Value` in a map node).
const VALUE_COST: u64 = 256;

/// Each byte of a JSON text with whether it lies inside a string (its quotes counted in).
fn with_string_state(text: &[u8]) -> impl Iterator<Item = (usize, u8, bool)> + '_ {
    text.iter()
        .enumerate()
        .scan((false, false), |(in_string, escaped), (i, &b)| {
            let inside = *in_string;
            if *in_string {
                if *escaped {
                    *escaped = false;
                } else if b == b'\\' {
                    *escaped = true;
                } else if b == b'"' {
                    *in_string = false;
                }
            } else if b == b'"' {
                *in_string = true;
            }
            Some((i, b, inside || b == b'"'))
        })
}

/// How many values a JSON text holds, about: the separators and openings outside strings,
/// counted in one pass without parsing.
fn values_in(text: &[u8]) -> u64 {
    1 + with_string_state(text)
        .filter(|&(_, b, inside)| !inside && matches!(b, b',' | b'[' | b'{' | b':'))
        .count() as u64
}

/// Parses JSON as Python's `json.loads` reads what `json.dumps` writes: `NaN`, `Infinity` and
/// `-Infinity` are numbers there (Keras writes them for such floats), so they are read here as
/// `null` after a strict parse fails on them.
pub fn parse(text: &[u8]) -> Result<Value, serde_json::Error> {
    match serde_json::from_slice(text) {
        Ok(v) => Ok(v),
        Err(first) => {
            let Some(fixed) = python_constants(text) else {
                return Err(first);
            };
            serde_json::from_slice(&fixed).map_err(|_| first)
        }
    }
}

/// `text` with the constants Python's json reads outside strings turned into `null`, or none
/// when it holds none.
fn python_constants(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let (mut skip_to, mut changed) = (0usize, false);
    for (i, b, inside) in with_string_state(text) {
        if i < skip_to {
            continue;
        }
        let rest = text.get(i..).unwrap_or_default();
        let word = [&b"-Infinity"[..], b"Infinity", b"NaN"]
            .into_iter()
            .find(|w| !inside && rest.starts_with(w));
        match word {
            Some(w) => {
                out.extend_from_slice(b"null");
                skip_to = i + w.len();
                changed = true;
            }
            None => out.push(b),
        }
    }
    changed.then_some(out)
}

struct Judge {
    out: Judged,
    file: String,
    dialect: Dialect,
    reviewed: Vec<String>,
}

fn key(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_owned()
    } else {
        format!("{path}.{k}")
    }
}

impl Judge {
    /// A finding's place: `file` then the JSON path; the path alone when the document is
    /// the file scanned (`file` empty), which the host already names.
    fn at(&self, path: &str) -> String {
        match (self.file.is_empty(), path.is_empty()) {
            (true, true) => "the document".to_owned(),
            (true, false) => path.to_owned(),
            (false, true) => self.file.clone(),
            (false, false) => format!("{} {path}", self.file),
        }
    }

    fn lead(&mut self, path: &str, reason: String) {
        let place = self.at(path);
        self.out.add(Severity::Lead, place, reason);
    }

    fn fail(&mut self, path: &str, reason: String) {
        let place = self.at(path);
        self.out.add(Severity::Fail, place, reason);
    }

    /// A tf-keras SavedModel node's metadata ([`judge_tracking_metadata`]).
    fn tracking_metadata(&mut self, mut m: Map<String, Value>) {
        let keys: Vec<String> = m.keys().cloned().collect();
        for k in keys {
            if matches!(k.as_str(), "class_name" | "config" | "shared_object_id") {
                continue;
            }
            let Some(v) = m.remove(&k) else { continue };
            if TRACKING_KEYS.contains(&k.as_str()) {
                self.value(&v, &k);
            } else {
                self.lead(
                    &k,
                    "a key tf-keras' SavedModel metadata does not hold: not modeled".into(),
                );
            }
        }
        match (m.contains_key("class_name"), m.contains_key("config")) {
            (true, true) => self.object(&m, String::new()),
            (true, false) => self.lead("class_name", "an object without its config: tf_keras.models.load_model revives it from the SavedModel's traced functions, which this grammar does not judge".into()),
            (false, _) => self.lead("", "no class_name: not the metadata tf-keras writes for a layer, model or metric".into()),
        }
    }

    /// Plain data, or objects inside it.
    fn value(&mut self, v: &Value, path: &str) {
        match v {
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    self.value(x, &format!("{path}[{i}]"));
                }
            }
            Value::Object(m) if m.contains_key("class_name") && m.contains_key("config") => {
                self.object(m, path.to_owned());
            }
            Value::Object(m) => {
                for (k, x) in m {
                    self.value(x, &key(path, k));
                }
            }
            _ => {}
        }
    }

    /// A serialized object (`deserialize_keras_object`'s class and function cases).
    fn object(&mut self, m: &Map<String, Value>, path: String) {
        self.out.objects += 1;
        let Some(class) = m.get("class_name").and_then(Value::as_str) else {
            self.lead(
                &key(&path, "class_name"),
                "not a string: Keras cannot resolve the object".into(),
            );
            return;
        };
        for k in m.keys().filter(|k| !OBJECT_KEYS.contains(&k.as_str())) {
            self.lead(
                &key(&path, k),
                format!(
                    "a key keras.saving does not write beside `class_name` {class:?}: not modeled"
                ),
            );
        }
        let module = match m.get("module") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => {
                self.lead(
                    &key(&path, "module"),
                    "not a string: Keras cannot resolve the object".into(),
                );
                return;
            }
        };
        let registered = m.get("registered_name").and_then(Value::as_str);
        let config = m.get("config").unwrap_or(&Value::Null);
        let config_path = key(&path, "config");
        match class {
            "__lambda__" => {
                self.fail(&path, "a Python lambda: its `config` holds marshalled bytecode, which Keras runs (`python_utils.func_load`) when the model is loaded with safe_mode=False".into());
                return;
            }
            "__keras_tensor__" | "__tensor__" | "__numpy__" | "__bytes__" | "__ellipsis__"
            | "__slice__" => {
                self.value(config, &config_path);
                return;
            }
            "__typespec__" => {
                self.lead(&path, format!("a TensorFlow type spec ({:?} of module {:?}): resolved by class name outside socair's tables", m.get("spec_name").and_then(Value::as_str).unwrap_or(""), module.unwrap_or("")));
                return;
            }
            "function" => {
                match config.as_str() {
                    Some(name) => self.function(module, name, registered, &path),
                    None => self.lead(
                        &config_path,
                        "a function whose name is not a string: Keras cannot resolve it".into(),
                    ),
                }
                return;
            }
            _ => {}
        }
        if class == "TFSMLayer" {
            self.tfsm_layer(module, config, &path);
            return;
        }
        let model_class = MODEL_CLASSES.contains(&class);
        if self.dialect.is_legacy() && module.is_none() {
            self.legacy_class(class, config, &path);
        } else if model_class && module.is_none() {
            // A model class named without its module: Keras 3.15.1 resolves it by name in
            // the legacy loader's registry inside a model's layer list (below), and refuses
            // it at the top of a config (`_retrieve_class_or_fn` raises "Could not locate
            // class"): either way the built-in or nothing, never code of the file's.
        } else {
            self.class(module, class, registered, &path);
            if matches!(
                (module, class),
                (
                    Some("keras.layers" | "keras.src.utils.torch_utils"),
                    "TorchModuleWrapper"
                )
            ) {
                self.torch_module(config, &config_path);
            }
        }
        for (k, x) in m {
            if matches!(
                k.as_str(),
                "config" | "build_config" | "compile_config" | "inbound_nodes"
            ) {
                let p = key(&path, k);
                if k == "config" {
                    if let Value::Object(inner) = x {
                        for (ik, iv) in inner {
                            if model_class && ik == "layers" {
                                self.model_layers(iv, &key(&p, ik));
                            } else {
                                self.value(iv, &key(&p, ik));
                            }
                        }
                        continue;
                    }
                }
                self.value(x, &p);
            }
        }
    }

    /// The `layers` of a model class's config. Keras 3.15.1 builds each layer that has no
    /// `module` key with the legacy loader (`keras/src/models/sequential.py`
    /// `Sequential.from_config` and `keras/src/models/functional.py` `functional_from_config`
    /// `process_layer`: `if "module" not in layer_data: saving_utils.model_from_config`),
    /// which looks the class name up in `keras.layers` and the model classes
    /// (`keras/src/legacy/saving/saving_utils.py` `model_from_config`): those layers are
    /// judged in the legacy dialect Keras 3 reads (a legacy `Lambda`'s bytecode included).
    fn model_layers(&mut self, layers: &Value, path: &str) {
        let Value::Array(items) = layers else {
            self.value(layers, path);
            return;
        };
        for (i, item) in items.iter().enumerate() {
            let p = format!("{path}[{i}]");
            match item {
                Value::Object(m)
                    if self.dialect == Dialect::Keras3
                        && !m.contains_key("module")
                        && m.contains_key("class_name")
                        && m.contains_key("config") =>
                {
                    self.dialect = Dialect::Legacy3;
                    self.object(m, p);
                    self.dialect = Dialect::Keras3;
                }
                _ => self.value(item, &p),
            }
        }
    }

    /// A `TFSMLayer` (`keras/src/export/tfsm_layer.py`, keras 3.15.1): its constructor runs
    /// `tf.saved_model.load(filepath)`, a SavedModel read from a path of the loading machine,
    /// never from this file, whose graph then runs. Keras 3.15.1's `from_config` refuses it in
    /// safe mode; the versions before the fix of CVE-2026-1462 loaded it in safe mode too.
    fn tfsm_layer(&mut self, module: Option<&str>, config: &Value, path: &str) {
        let file = config.get("filepath");
        let shown = match file {
            Some(Value::String(s)) => format!("{s:?}"),
            Some(v) => format!("{v} (not a string)"),
            None => "no filepath".to_owned(),
        };
        self.fail(path, format!("a TFSMLayer (module {:?}) that loads the TensorFlow SavedModel at {shown} with tf.saved_model.load when the model is built: a SavedModel from outside this file, whose graph (and any file or network op in it) socair has not seen, runs; Keras before the fix of CVE-2026-1462 did so in safe mode", module.unwrap_or("none")));
    }

    /// A class as Keras 3 resolves it (`_retrieve_class_or_fn`, `obj_type="class"`).
    fn class(&mut self, module: Option<&str>, class: &str, registered: Option<&str>, path: &str) {
        let full = format!("{}.{class}", module.unwrap_or(""));
        match module {
            Some(m) if m == "keras" || m.starts_with("keras.") => match table::keras3(&full) {
                Some(Verdict::Grammar) => {
                    if registered.is_some_and(|r| r != class) {
                        self.lead(&key(path, "registered_name"), format!("{:?} for the built-in {full}: Keras 3.15.1 refuses a registered name on a built-in (`_assert_no_registered_name_for_builtin`), and a loader that registered that name would build its own class", registered.unwrap_or("")));
                    }
                }
                Some(Verdict::Lead) => self.lead(path, format!("{full}: exported by Keras, but no layer, model or other modeling object; not modeled")),
                Some(Verdict::Fail(why)) => self.fail(path, format!("{full}: {why}")),
                None => self.lead(path, format!("{full}: Keras 3.15.1 resolves no such class (loading fails, or another Keras version resolves it): not modeled")),
            },
            // tf-keras writes the classes it does not export under their own module, and its
            // `.keras` loader imports any module a config names
            // (`tf_keras/src/saving/serialization_lib.py` `_retrieve_class_or_fn`, 2.21).
            Some(m) if m == "tf_keras" || m.starts_with("tf_keras.") => {
                if !table::tf_keras_module(&full) {
                    self.lead(path, format!("{full}: tf-keras 2.21 defines no such modeling class (its loader imports the module and takes the name, whatever it is): not modeled"));
                }
            }
            _ => self.outside(module, class, registered, path, false),
        }
    }

    /// A function as Keras 3 resolves it (`obj_type="function"`).
    fn function(&mut self, module: Option<&str>, name: &str, registered: Option<&str>, path: &str) {
        match module {
            Some(m) if m == "keras" || m.starts_with("keras.") => {
                let full = format!("{m}.{name}");
                match table::keras3(&full) {
                    Some(Verdict::Grammar) => {}
                    Some(Verdict::Lead) => self.lead(path, format!("the function {full}: exported by Keras but not a modeling function; not modeled")),
                    Some(Verdict::Fail(why)) => self.fail(path, format!("the function {full}: {why}; Keras 3.0 to 3.10 called it from a config in safe mode (CVE-2025-8747: a Lambda calling keras.utils.get_file)")),
                    None => self.lead(path, format!("the function {full}: Keras 3.15.1 resolves no such function; not modeled")),
                }
            }
            Some("builtins") => {
                let found = BUILTIN_MODULES
                    .iter()
                    .find_map(|m| table::keras3(&format!("keras.{m}.{name}")).map(|v| (m, v)));
                match found {
                    Some((_, Verdict::Grammar)) => {}
                    Some((m, Verdict::Lead)) => self.lead(path, format!("the function keras.{m}.{name}: not a modeling function; not modeled")),
                    Some((m, Verdict::Fail(why))) => self.fail(path, format!("the function keras.{m}.{name}: {why}")),
                    None if CODE_BUILTINS.contains(&name) => self.fail(path, format!("the Python builtin {name}(), which runs code or opens files: Keras before 3.9 imported the module a config names (CVE-2025-1550)")),
                    None => self.outside(Some("builtins"), name, registered, path, true),
                }
            }
            _ => self.outside(module, name, registered, path, true),
        }
    }

    /// A name whose module lies outside `keras` itself.
    fn outside(
        &mut self,
        module: Option<&str>,
        name: &str,
        registered: Option<&str>,
        path: &str,
        function: bool,
    ) {
        let what = if function { "function" } else { "class" };
        let shown = match module {
            Some(m) => format!("{m}.{name}"),
            None => name.to_owned(),
        };
        let top = module.map(|m| m.split('.').next().unwrap_or(m));
        if top.is_some_and(|t| KERAS_PACKAGES.contains(&t) || t == "tf_keras") {
            self.lead(path, format!("the {what} {shown}, from a Keras package socair's tables do not hold: not modeled"));
            return;
        }
        let custom = registered
            .and_then(|r| r.split_once('>'))
            .is_some_and(|(pkg, n)| !pkg.is_empty() && n == name);
        let std = module.is_some_and(|m| m != "builtins" && table::stdlib(m));
        if std || (!custom && module.is_some_and(|m| m != "builtins")) {
            self.fail(path, format!("the {what} {shown} resolves outside Keras' own packages: Keras 3.0 to 3.8 imported the module a config names and built from it (CVE-2025-1550), so loading this file runs {shown}"));
            return;
        }
        let name_shown = registered.unwrap_or(name);
        self.lead(path, format!("a registered custom {what} {name_shown:?} (module {:?}): it loads only with code the loader registers, which nothing here checked", module.unwrap_or("none")));
    }

    /// A class of a legacy (tf-keras) config, looked up by name in tf-keras' registries.
    fn legacy_class(&mut self, class: &str, config: &Value, path: &str) {
        if class == "Lambda" {
            self.legacy_lambda(config, &key(path, "config"));
        } else if !(table::tf_keras(class)
            || (self.dialect == Dialect::Legacy3 && table::keras3_name(class)))
        {
            self.lead(path, format!("{class:?}: not a class of tf-keras' registries, so a custom object that loads only with code the loader supplies (nothing here checked it)"));
        }
    }

    /// A legacy `Lambda` (`tf_keras/src/layers/core/lambda_layer.py`, tf-keras 2.21:
    /// `_serialize_function_to_config` dumps every Python function with `func_dump`).
    fn legacy_lambda(&mut self, config: &Value, path: &str) {
        for (f, t, m) in [
            ("function", "function_type", "module"),
            ("output_shape", "output_shape_type", "output_shape_module"),
            ("mask", "mask_type", "mask_module"),
        ] {
            let kind = config.get(t).and_then(Value::as_str);
            let module = config.get(m).and_then(Value::as_str).unwrap_or("none");
            let p = key(path, f);
            match kind {
                Some("lambda") => self.fail(&p, format!("marshalled Python bytecode (tf-keras' `func_dump` writes every Python function this way, named or lambda): `func_load` runs it, with the globals of module {module:?}, when the model is loaded")),
                Some("function") => {
                    let name = config.get(f).and_then(Value::as_str).unwrap_or("");
                    self.lead(&p, format!("the function {name:?} of module {module:?}, which tf-keras resolves from custom objects only: it loads only with code the loader supplies"));
                }
                Some("raw") => {}
                // tf-keras writes a type beside every function it serializes; without one its
                // `_parse_function_from_config` raises (KeyError) and Keras 3 keeps the value
                // as it is. Text such as "lambda x: …" is never evaluated, but a file that no
                // Keras wrote is worth a person's look.
                // Keras 3.15.1 takes a list as marshalled bytecode whatever the type says
                // (`keras/src/legacy/saving/saving_utils.py` `model_from_config`: a Lambda's
                // list `function` becomes a `__lambda__`, which `func_load` runs when safe mode
                // is off).
                None if f == "function" && config.get(f).is_some_and(Value::is_array) => self.fail(
                    &p,
                    "a list, which Keras 3's legacy loader turns into a `__lambda__` (marshalled Python bytecode that `func_load` runs when the model is loaded with safe_mode=False)".into(),
                ),
                None if config.get(f).is_some_and(|v| !matches!(v, Value::Null)) => self.lead(
                    &p,
                    format!("a Lambda's {f} without {t}: tf-keras writes one beside every function, and raises without it; not what Keras writes"),
                ),
                None => {}
                Some(other) => self.lead(&key(path, t), format!("{other:?}: tf-keras reads only lambda, function and raw")),
            }
        }
    }

    /// A `TorchModuleWrapper`'s module: base64 of `torch.save` output, which Keras reads with
    /// `torch.load(weights_only=False)` when safe mode is off (`keras/src/utils/torch_utils.py`).
    fn torch_module(&mut self, config: &Value, path: &str) {
        use base64::Engine;
        let p = key(path, "module");
        let Some(text) = config.get("module").and_then(Value::as_str) else {
            return;
        };
        let bytes = match base64::engine::general_purpose::STANDARD.decode(text) {
            Ok(b) => b,
            Err(e) => {
                self.lead(
                    &p,
                    format!("not base64 ({e}): torch.load would not read it"),
                );
                return;
            }
        };
        let pickles = crate::pickles::torch_pickles(&bytes);
        let mut worst = None;
        for (member, data) in &pickles {
            self.out.pickles += 1;
            let (found, used) = crate::pickles::scan_pickle(data, &self.reviewed);
            for (sev, at, reason) in found {
                worst = worst.max(Some(sev));
                let place = self.at(&format!("{p} {member} {at}"));
                self.out.add(sev, place, reason);
            }
            crate::pickles::add_reviewed(&mut self.out.reviewed_used, used);
        }
        if worst != Some(Severity::Fail) {
            self.lead(&p, format!("a torch.save archive ({} pickle(s) scanned) that Keras reads with torch.load(weights_only=False) when the model is loaded with safe_mode=False: an nn.Module's pickle is outside what loads safely", pickles.len()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Functional model's layer metadata as tf-keras 2.21 writes it into keras_metadata.pb
    /// (`model.save(dir)` of `tf.keras.Model(inputs, outputs)`): its inbound nodes are data.
    #[test]
    fn a_functional_layer_s_tracking_metadata_is_in_the_grammar() {
        let node = br#"{"name": "dense", "trainable": true, "expects_training_arg": false, "dtype": "float32", "batch_input_shape": null, "stateful": false, "must_restore_from_config": false, "preserve_input_structure_in_config": false, "autocast": true, "class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": "float32", "units": 4, "activation": "relu", "use_bias": true}, "inbound_nodes": [[["input_1", 0, 0, {}]]], "shared_object_id": 3}"#;
        let o = judge_tracking_metadata(node, "keras_metadata.pb", &[]);
        assert!(o.found.worst.is_none(), "{:?}", o.found);
        let odd = br#"{"class_name": "Dense", "config": {"units": 4}, "outbound_magic": 1}"#;
        let o = judge_tracking_metadata(odd, "keras_metadata.pb", &[]);
        assert_eq!(o.found.worst, Some(Severity::Lead));
    }

    /// Keras 3.15.1 builds a model's layers that carry no `module` key with its legacy loader
    /// (`Sequential.from_config`, `functional_from_config`): built-ins there, a legacy
    /// Lambda's bytecode a FAIL; a model class without a module is the built-in; a TFSMLayer
    /// is a FAIL naming its path.
    #[test]
    fn layers_without_a_module_are_read_as_the_legacy_loader_reads_them() {
        let j = |t: &str| judge(t.as_bytes(), "config.json", Dialect::Keras3, &[]);
        let ok = r#"{"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "InputLayer", "config": {"batch_shape": [null, 3]}}, {"class_name": "Dense", "config": {"units": 2, "kernel_initializer": {"class_name": "GlorotUniform", "config": {}}}}]}}"#;
        assert!(j(ok).found.worst.is_none(), "{:?}", j(ok).found);
        let top = r#"{"class_name": "Functional", "config": {"name": "f", "layers": [{"class_name": "Dense", "config": {"units": 2}, "name": "d", "inbound_nodes": []}], "input_layers": [], "output_layers": []}}"#;
        assert!(j(top).found.worst.is_none(), "{:?}", j(top).found);
        let lam = r#"{"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "Lambda", "config": {"name": "l", "function": ["4wEAAAAAAAAA", null, null]}}]}}"#;
        assert_eq!(
            j(lam).found.worst,
            Some(Severity::Fail),
            "{:?}",
            j(lam).found
        );
        // With a module, a layer is Keras 3's to resolve: an unknown one stays a LEAD.
        let custom = r#"{"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [{"module": null, "class_name": "MyLayer", "config": {}}]}}"#;
        assert_eq!(j(custom).found.worst, Some(Severity::Lead));
        let tfsm = r#"{"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [{"module": "keras.layers", "class_name": "TFSMLayer", "config": {"filepath": "/tmp/sm"}}]}}"#;
        let o = j(tfsm);
        assert_eq!(o.found.worst, Some(Severity::Fail));
        assert!(o.found.shown.iter().any(|f| f.reason.contains("/tmp/sm")));
    }

    /// A legacy `Lambda` whose function is text without the `function_type` tf-keras always
    /// writes beside it (a scanner's test file: "lambda x: eval(…)" as a string): nothing
    /// evaluates it, tf-keras raises on it, so a LEAD, not a PASS.
    #[test]
    fn a_legacy_lambda_without_its_function_type_is_a_lead() {
        let node = br#"{"class_name": "Lambda", "config": {"name": "l", "function": "lambda x: eval('1')"}}"#;
        let o = judge_tracking_metadata(node, "keras_metadata.pb", &[]);
        assert_eq!(o.found.worst, Some(Severity::Lead), "{:?}", o.found);
        let raw = br#"{"class_name": "Lambda", "config": {"name": "l", "function": "x", "function_type": "raw"}}"#;
        let o = judge_tracking_metadata(raw, "keras_metadata.pb", &[]);
        assert!(o.found.worst.is_none(), "{:?}", o.found);
    }
}
