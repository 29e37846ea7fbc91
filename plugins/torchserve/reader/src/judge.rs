//! What loading a `.mar` in TorchServe runs, member by member.
//!
//! TorchServe 0.12.0's worker (ts/model_loader.py `TsModelLoader.load`) imports the handler:
//! first as a module on the worker's path (`_load_handler_file`: `importlib.import_module` of
//! the handler's name, `.py` and any directory dropped), and only when that raises
//! `ImportError` as one of its own (`_load_default_handler`: `ts.torch_handler.<name>`). The
//! frontend puts the extracted model directory on that path ahead of site-packages
//! (frontend/server/.../util/messages/EnvironmentUtils.java `getEnvString`: `PYTHONPATH` =
//! handler directory, the inherited `PYTHONPATH`, the model directory) and starts the worker
//! in it (WorkerLifeCycle.java `startWorkerPython`). So:
//!
//! * a handler module the archive holds (`name.py`, a package `name/`, a `.pyc` or an
//!   extension module of that name) is the archive's code, imported when the model loads:
//!   FAIL, even under a built-in handler's name;
//! * a built-in handler ([`BUILTIN_HANDLERS`], the modules of ts/torch_handler/ at 0.12.0
//!   that are handlers) loads the model as base_handler.py `initialize` does: `modelFile`
//!   set means eager mode, `importlib.import_module` of that file (FAIL: the archive's code),
//!   else `serializedFile` ending `.pt` goes to `torch.jit.load` (judged by the torch-zip
//!   readers: a TorchScript archive by its code), `.onnx` to ONNX Runtime, `.so` to
//!   AOTInductor (native code);
//! * any other handler name is a module TorchServe imports from the worker's path, not in
//!   the archive: whatever is installed under that name runs (LEAD);
//! * `requirementsFile`: the frontend pip-installs it when the server sets
//!   `install_py_dep_per_model=true` (default false; ModelManager.java
//!   `setupModelDependencies`), and installing packages runs their build code: LEAD;
//! * `configFile` (model-config.yaml) sets what socair does not judge (torch.compile options,
//!   torchrun launch, virtual environments): LEAD;
//! * other Python files are on the worker's import path, ahead of installed packages: LEAD
//!   (they run if anything imports a module of their name); JSON and text are data; pickles
//!   and torch files are judged by the torch-zip readers (the built-in text handlers
//!   `torch.load` a vocabulary); anything else is not checked (LEAD).

use crate::manifest::Manifest;
use crate::mar::Member;
use socair_plugin_kit::Severity;

/// The handlers of ts/torch_handler/ (torchserve 0.12.0) that read nothing from the archive
/// but the manifest's files and `index_to_name.json`: the four documented default handlers
/// and the base classes they extend, which work as handlers on their own.
pub const BUILTIN_HANDLERS: &[&str] = &[
    "image_classifier",
    "object_detector",
    "text_classifier",
    "image_segmenter",
    "base_handler",
    "vision_handler",
    "text_handler",
    "densenet_handler",
];

/// Built-in handlers that load more than the manifest names, as model-config.yaml tells them:
/// vllm_handler and trt_llm_handler load a model directory with its own code
/// (`trust_remote_code=True` in trt_llm_handler.py), the DALI handlers a serialized pipeline.
pub const CONFIGURED_HANDLERS: &[&str] = &[
    "vllm_handler",
    "trt_llm_handler",
    "dali_handler",
    "dali_image_classifier",
];

/// A finding: severity, place, reason.
pub type Found = (Severity, String, String);

/// The module a handler string names (`_load_handler_file`: before `:`, `.py` dropped, the
/// last path component).
pub fn handler_module(handler: &str) -> &str {
    let module = handler.split(':').next().unwrap_or(handler);
    let module = module.strip_suffix(".py").unwrap_or(module);
    module.rsplit('/').next().unwrap_or(module)
}

/// The members that are Python module `module` at the top of the model directory.
pub fn module_members<'m>(members: &'m [Member], module: &str) -> Vec<&'m Member> {
    members
        .iter()
        .filter(|m| {
            let n = m.name.as_str();
            n == format!("{module}.py")
                || n == format!("{module}.pyc")
                || n.starts_with(&format!("{module}/"))
                || (n.starts_with(&format!("{module}."))
                    && (n.ends_with(".so") || n.ends_with(".pyd")))
        })
        .collect()
}

/// The handler, the model file and the serialized file, judged.
pub fn judge_manifest(m: &Manifest, members: &[Member], out: &mut Vec<Found>) {
    let runtime = m.runtime.as_deref().unwrap_or("");
    match runtime {
        "python" | "python3" => {}
        "LSP" => out.push((
            Severity::Lead,
            "runtime".into(),
            "LSP: TorchServe's C++ backend loads the handler library the manifest names (native code), which socair does not judge".into(),
        )),
        other => out.push((
            Severity::Lead,
            "runtime".into(),
            format!("{other:?} is no runtime TorchServe knows (python, python3, LSP): it refuses the archive (ModelArchive.validate)"),
        )),
    }
    for (value, key) in [
        (&m.model_name, "model.modelName"),
        (&m.model_version, "model.modelVersion"),
        (&m.handler, "model.handler"),
    ] {
        if value.as_deref().is_none_or(str::is_empty) {
            out.push((Severity::Lead, key.into(), "missing: TorchServe refuses the archive (ModelArchive.validate) or cannot load a handler".into()));
        }
    }
    if let Some(h) = m.handler.as_deref().filter(|h| !h.is_empty()) {
        judge_handler(h, members, out);
    }
    if let Some(f) = m.model_file.as_deref().filter(|f| !f.is_empty()) {
        let present = members.iter().any(|x| x.name == f);
        out.push(if present {
            (Severity::Fail, format!("member {f:?}"), format!("the model file (model.modelFile): Python code TorchServe imports when the model loads (base_handler.py `_load_pickled_model`: importlib.import_module({:?}), eager mode)", f.split('.').next().unwrap_or(f)))
        } else {
            (Severity::Lead, "model.modelFile".into(), format!("names {f:?}, which the archive does not hold: TorchServe's eager mode imports a module of that name from the worker's path (\"Missing the model.py file\" first)"))
        });
    }
    if let Some(r) = m.requirements_file.as_deref().filter(|r| !r.is_empty()) {
        out.push((Severity::Lead, format!("member {r:?}"), "the requirements file (model.requirementsFile): TorchServe pip-installs it when the server sets install_py_dep_per_model=true (default false; ModelManager.java setupModelDependencies), and installing packages runs their build code: a person should look at what it installs".into()));
    }
    if let Some(c) = m.config_file.as_deref().filter(|c| !c.is_empty()) {
        out.push((Severity::Lead, format!("member {c:?}"), "the model config (model.configFile, read with yaml.safe_load and by the frontend): it sets what socair does not judge (torch.compile options, torchrun launch, a virtual environment with the requirements installed)".into()));
    }
    if let Some(s) = m.serialized_file.as_deref().filter(|s| !s.is_empty()) {
        if !members.iter().any(|x| x.name == s) {
            out.push((Severity::Lead, "model.serializedFile".into(), format!("names {s:?}, which the archive does not hold: TorchServe raises when it loads the model")));
        }
    }
}

fn judge_handler(h: &str, members: &[Member], out: &mut Vec<Found>) {
    let module = handler_module(h);
    let found = module_members(members, module);
    if let Some(first) = found.first() {
        out.push((
            Severity::Fail,
            format!("member {:?}", first.name),
            format!("the handler {h:?} is Python code in the archive: TorchServe imports it when the model loads (ts/model_loader.py `_load_handler_file`: importlib.import_module({module:?}), the model directory on the worker's path)"),
        ));
    } else if CONFIGURED_HANDLERS.contains(&module) {
        out.push((
            Severity::Lead,
            "model.handler".into(),
            format!("TorchServe's built-in {module}, which loads what model-config.yaml names (a model directory with its own code, a serialized pipeline): socair does not judge those"),
        ));
    } else if !BUILTIN_HANDLERS.contains(&module) {
        out.push((
            Severity::Lead,
            "model.handler".into(),
            format!("{h:?} is neither in the archive nor one of TorchServe's handlers (ts/torch_handler/): TorchServe imports a module {module:?} from the worker's path, and whatever is installed under that name runs"),
        ));
    }
}

/// How a member outside the manifest's roles is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Read by the torch-zip readers.
    Torch,
    /// JSON, parsed strictly.
    Json,
    /// Text (UTF-8).
    Text,
    /// Python source or an extension module on the worker's path.
    Python,
    /// Not checked.
    Other,
}

/// What kind of member a name is.
pub fn kind_of(name: &str) -> Kind {
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "pt" | "pth" | "bin" | "ckpt" | "pkl" | "pickle" | "tar" => Kind::Torch,
        "json" => Kind::Json,
        "txt" | "md" | "csv" | "tsv" | "yaml" | "yml" | "vocab" | "model_card" => Kind::Text,
        "py" | "pyc" | "so" | "pyd" => Kind::Python,
        _ => Kind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str) -> Member {
        Member {
            name: name.into(),
            index: 0,
            size: 1,
            is_dir: false,
        }
    }

    #[test]
    fn handler_names_resolve_as_the_model_loader_does() {
        assert_eq!(handler_module("image_classifier"), "image_classifier");
        assert_eq!(handler_module("my_handler.py"), "my_handler");
        assert_eq!(handler_module("/tmp/x/handler.py:handle"), "handler");
        let members = [
            member("lin.pt"),
            member("image_classifier.py"),
            member("pkg/__init__.py"),
        ];
        assert_eq!(module_members(&members, "image_classifier").len(), 1);
        assert_eq!(module_members(&members, "pkg").len(), 1);
        assert!(module_members(&members, "lin").is_empty());
    }

    #[test]
    fn a_builtin_handler_shadowed_by_the_archive_fails() {
        let mut out = Vec::new();
        judge_handler(
            "image_classifier",
            &[member("image_classifier.py")],
            &mut out,
        );
        assert_eq!(out[0].0, Severity::Fail);
        let mut out = Vec::new();
        judge_handler("image_classifier", &[member("lin.pt")], &mut out);
        assert!(out.is_empty());
        let mut out = Vec::new();
        judge_handler("antigravity", &[], &mut out);
        assert_eq!(out[0].0, Severity::Lead);
        let mut out = Vec::new();
        judge_handler("vllm_handler", &[], &mut out);
        assert_eq!(out[0].0, Severity::Lead);
    }
}
