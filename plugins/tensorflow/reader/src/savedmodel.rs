//! A SavedModel's `saved_model.pb`: every meta graph's graph and function library judged
//! ([`crate::graph`]), with what the loaders run at load time worked out from the file itself,
//! as TensorFlow 2.21.0's loaders decide it:
//!
//! * the TF1 loader (`tensorflow/python/saved_model/loader_impl.py`, `SavedModelLoader.
//!   restore_variables` and `run_init_ops`) and the C++ loader TF Serving uses
//!   (`tensorflow/cc/saved_model/loader.cc`, `RunRestore` and `RunInitOp`) feed
//!   `variables/variables` to the saver's `filename_tensor_name` and run its
//!   `restore_op_name`, then run the init op: the `__saved_model_init_op` signature's output,
//!   else the `saved_model_main_op` collection, else `legacy_init_op`;
//! * the TF2 loader (`tensorflow/python/saved_model/load.py`, `Loader._recreate` and
//!   `_recreate_resource`) restores variables with ops it builds itself, and runs each restored
//!   resource's `_create_resource` and `_initialize` functions (a lookup table is filled
//!   there); `_destroy_resource` runs when the object is released.
//!
//! Everything else runs only when a signature or a function is called. The checkpoint ops
//! (`SaveV2`, `RestoreV2`, `MergeV2Checkpoints`, …) are judged as the saver's: they pass only
//! inside the subgraph `saver_def` names, whose path is built from the loader's file name as
//! TensorFlow's saver builds it (`tensorflow/python/training/saver.py` for TF1,
//! `tensorflow/python/checkpoint/functional_saver.py` traced into `_traced_save` and
//! `_traced_restore` for TF2). A lookup table filled from a file is data when the file is one
//! of the SavedModel's assets (`asset_file_def`, resolved under `assets/`).
//!
//! The TF1 loader also restores the meta graph's collections as `import_meta_graph` does
//! (`SavedModelLoader.load_graph`), judged by [`crate::collection_defs::collections`].
//!
//! The variables live in `variables/` (read by the checkpoint reader); the `Const` nodes of the
//! graph and its functions are fingerprinted here as tensors outside the model. A TF1 `.meta`
//! file's one meta graph is judged by this same code, as `import_meta_graph` loads it
//! ([`Loader::ImportMetaGraph`], [`crate::metagraph`]).

use crate::bindings::Bindings;
use crate::decode::{decode, ProtoError};
use crate::graph::{self, called, data_inputs, Context, LoadTime, Scope, Source};
use crate::outcome::{listed, Reading};
use crate::proto::schema::SAVED_MODEL;
use crate::proto::tensorflow::{
    attr_value, collection_def, saved_object, tensor_info, FunctionDef, GraphDef, MetaGraphDef,
    SavedModel, SavedObjectGraph, TensorInfo,
};
use crate::tensor::{locate, NotLocated};
use bytes::Bytes;
use socair_plugin_api::{ByteOrder, OpenedFile, RowStatus};
use socair_plugin_kit::bounded::{short, thousands};
use socair_plugin_kit::protobuf::walk::Severity;
use std::collections::{BTreeMap, BTreeSet};

/// The format name.
pub const FORMAT: &str = "savedmodel";

/// The signature whose output is the init op (`constants.INIT_OP_SIGNATURE_KEY`).
const INIT_OP_SIGNATURE: &str = "__saved_model_init_op";

/// The classes TensorFlow 2.21.0 itself registers for `SavedObject.registered_name`, and the
/// savers for `registered_saver` (`registration.register_tf_serializable`; the registries of a
/// process that imported tensorflow, keras and tf_keras hold exactly these): tf.saved_model.load
/// rebuilds these objects with TensorFlow's own code.
const TF_REGISTERED: &[&str] = &["tf.StaticHashTable", "tf.TrackableConstant"];
const TF_REGISTERED_SAVERS: &[&str] = &["tf.TPUEmbeddingCallback"];

/// Reads a `saved_model.pb`.
pub fn read(data: Bytes) -> OpenedFile {
    let mut out = Reading::new(FORMAT, data.len() as u64);
    let sm: SavedModel = match decode(&data, SAVED_MODEL, "saved_model") {
        Ok((sm, walked)) => {
            out.walked(&walked);
            sm
        }
        Err(e) => return refused(e),
    };
    if sm.saved_model_schema_version != 1 {
        out.note(
            "schema versions",
            Severity::Lead,
            || "saved_model.saved_model_schema_version".into(),
            || {
                format!(
                    "schema version {}: TensorFlow 2.21.0 writes 1 and this reader models 1",
                    sm.saved_model_schema_version
                )
            },
        );
    }
    if sm.meta_graphs.is_empty() {
        out.note(
            "meta graphs",
            Severity::Fail,
            || "saved_model".into(),
            || "no meta graph: every loader refuses a SavedModel without one".into(),
        );
    }
    let mut totals = Totals::default();
    let many = sm.meta_graphs.len() > 1;
    for (i, mg) in sm.meta_graphs.iter().enumerate() {
        let prefix = if many {
            format!("meta_graphs[{i}] ")
        } else {
            String::new()
        };
        let name_prefix = if i > 0 {
            format!("meta_graph_{i}/")
        } else {
            String::new()
        };
        let at = MetaGraphAt {
            prefix: &prefix,
            name_prefix: &name_prefix,
            loader: Loader::SavedModel,
        };
        meta_graph(mg, &at, &data, &mut out, &mut totals);
    }
    out.metadata.push((
        "tensorflow.meta_graphs".into(),
        sm.meta_graphs.len().to_string(),
    ));
    let tags = totals.tags.join("; ");
    let version = totals.version.clone();
    out.finish(|status| match status {
        RowStatus::Fail => format!(
            "TensorFlow SavedModel ({tags}) holding what reads or writes files, runs code or reaches the network, or that loaders would read differently: see the findings"
        ),
        RowStatus::Lead => format!(
            "TensorFlow SavedModel ({tags}, TensorFlow {version}) with parts this reader does not prove: {} nodes in the graph and {} functions judged",
            thousands(totals.nodes),
            thousands(totals.functions)
        ),
        _ => format!(
            "TensorFlow SavedModel ({tags}, TensorFlow {version}): {} nodes in the graph and {} functions judged, every op computational; {} checkpoint ops only in the saver's own subgraph over the loader's file name, {} lookup tables filled from the model's assets; {} functions run at load time; {} constants fingerprinted (the variables are in variables/)",
            thousands(totals.nodes),
            thousands(totals.functions),
            thousands(totals.saver_ops),
            thousands(totals.asset_tables),
            thousands(totals.load_functions),
            thousands(totals.consts)
        ),
    })
}

/// What the meta graphs of a file held, for the summary.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    pub(crate) tags: Vec<String>,
    pub(crate) version: String,
    pub(crate) nodes: u64,
    pub(crate) functions: u64,
    pub(crate) saver_ops: u64,
    pub(crate) asset_tables: u64,
    pub(crate) load_functions: u64,
    pub(crate) consts: u64,
    /// Collection values parsed as the proto their `from_proto` function reads.
    pub(crate) collection_protos: u64,
    /// Collections of bytes no `from_proto` function is registered for (kept as bytes).
    pub(crate) collections_of_bytes: u64,
}

/// Which loader reads a meta graph: what it runs and what it makes of the assets and the
/// object graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loader {
    /// A SavedModel's loaders (the TF1, TF2 and C++ ones, see the module's documentation).
    SavedModel,
    /// `tf.compat.v1.train.import_meta_graph` on a bare `.meta`, then `saver.restore`
    /// (`crate::metagraph`).
    ImportMetaGraph,
}

/// Where a meta graph is in its file, and who loads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MetaGraphAt<'a> {
    /// Its findings' place prefix (`meta_graphs[1] `, or nothing).
    pub(crate) prefix: &'a str,
    /// Its metadata keys' and tensors' prefix (`meta_graph_1/`, or nothing).
    pub(crate) name_prefix: &'a str,
    /// Who loads it.
    pub(crate) loader: Loader,
}

fn refused(e: ProtoError) -> OpenedFile {
    e.refused(
        FORMAT,
        "not a sound SavedModel: readers may disagree on what it holds",
    )
}

/// The library's functions by name; a name given twice to different functions is a FAIL
/// (TensorFlow refuses it: `FunctionLibraryDefinition::AddFunctionDef`).
pub fn library<'a>(
    g: &'a GraphDef,
    prefix: &str,
    out: &mut Reading,
) -> BTreeMap<&'a str, &'a FunctionDef> {
    let mut lib: BTreeMap<&str, &FunctionDef> = BTreeMap::new();
    for f in g.library.iter().flat_map(|l| &l.function) {
        let name = f.signature.as_ref().map_or("", |s| s.name.as_str());
        match lib.get(name) {
            Some(other) if *other != f => out.note(
                "functions defined twice",
                Severity::Fail,
                || format!("{prefix}library function {:?}", short(name)),
                || "two different functions share this name: TensorFlow refuses the graph, another reader may keep either".into(),
            ),
            Some(_) => {}
            None => {
                lib.insert(name, f);
            }
        }
    }
    lib
}

/// Node names given twice in one scope (TensorFlow refuses the graph).
pub fn duplicate_names(scope: &Scope<'_>, prefix: &str, out: &mut Reading) {
    let mut seen = BTreeSet::new();
    for n in scope.nodes {
        if !seen.insert(n.name.as_str()) {
            out.note(
                "nodes defined twice",
                Severity::Fail,
                || format!("{prefix}{}", scope.place(n)),
                || "another node of the same scope has this name: TensorFlow refuses the graph (\"Duplicate node name\"), another reader may keep either".into(),
            );
        }
    }
}

/// The tensor a `TensorInfo` names, when it names one (not a sparse or composite tensor).
fn tensor_name(t: &TensorInfo) -> Option<&str> {
    match &t.encoding {
        Some(tensor_info::Encoding::Name(n)) => Some(n),
        _ => None,
    }
}

/// The node name of a tensor name (`x:0` → `x`, `^x` → `x`).
pub fn node_of(tensor: &str) -> &str {
    let t = tensor.trim_start_matches('^');
    t.split(':').next().unwrap_or(t)
}

/// Judges one meta graph: its graph and library by the op rules, with what `at.loader` runs.
pub(crate) fn meta_graph(
    mg: &MetaGraphDef,
    at: &MetaGraphAt<'_>,
    data: &Bytes,
    out: &mut Reading,
    totals: &mut Totals,
) {
    let (prefix, name_prefix) = (at.prefix, at.name_prefix);
    let saved_model = at.loader == Loader::SavedModel;
    let info = mg.meta_info_def.clone().unwrap_or_default();
    totals.tags.push(if info.tags.is_empty() {
        "no tags".into()
    } else {
        format!("tags {}", listed(info.tags.iter().map(String::as_str), 8))
    });
    if totals.version.is_empty() {
        totals.version = if info.tensorflow_version.is_empty() {
            "unknown".into()
        } else {
            short(&info.tensorflow_version)
        };
        out.metadata
            .push(("tensorflow.version".into(), totals.version.clone()));
        if !info.tensorflow_git_version.is_empty() {
            out.metadata.push((
                "tensorflow.git_version".into(),
                short(&info.tensorflow_git_version),
            ));
        }
    }
    let empty = GraphDef::default();
    let g = mg.graph_def.as_ref().unwrap_or(&empty);
    let lib = library(g, prefix, out);
    let main = Scope::main(&g.node);
    duplicate_names(&main, prefix, out);
    for f in lib.values() {
        duplicate_names(&Scope::function(f), prefix, out);
    }
    let mut ctx = Context::default();
    let mut roots: Vec<(String, String)> = Vec::new();

    saver(mg, g, &main, &lib, at.loader, &mut ctx, &mut roots);
    assets_and_init(mg, prefix, at.loader, &mut ctx, &mut roots, out);

    // The object graph: assets bound to function arguments, resources' functions.
    let mut load_functions: Vec<(String, String)> = Vec::new();
    // import_meta_graph reads no object graph (tf.saved_model.load does).
    if let Some(og) = mg.object_graph_def.as_ref().filter(|_| saved_model) {
        object_graph(og, &lib, prefix, &mut ctx, &mut load_functions, out);
    }
    // The collections, which the TF1 loader and import_meta_graph restore.
    let restored = crate::collection_defs::collections(mg, prefix, data, out);
    totals.collection_protos += restored.protos;
    totals.collections_of_bytes += restored.bytes;
    ctx.bindings = Bindings::resolve(&g.node, &lib);
    let mut load = LoadTime::default();
    load.reach(&main, &lib, &roots, &load_functions, &ctx.bindings);
    ctx.load_time = load;
    totals.load_functions += ctx.load_time.functions.len() as u64;
    if !ctx.load_time.functions.is_empty() {
        out.metadata.push((
            format!("tensorflow.{name_prefix}load_time_functions"),
            listed(ctx.load_time.functions.keys().map(String::as_str), 50),
        ));
    }
    let signatures: Vec<&str> = mg
        .signature_def
        .keys()
        .map(String::as_str)
        .filter(|k| *k != INIT_OP_SIGNATURE)
        .collect();
    if !signatures.is_empty() {
        out.metadata.push((
            format!("tensorflow.{name_prefix}signatures"),
            listed(signatures, 50),
        ));
    }

    let judged = graph::judge(&main, &lib, &ctx);
    totals.nodes += judged.nodes;
    totals.functions += judged.functions;
    totals.saver_ops += judged.saver_ops;
    totals.asset_tables += judged.asset_tables;
    add_judged(judged, prefix, name_prefix, out);

    // Constants, outside the model.
    totals.consts += consts(&main, name_prefix, data, true, out);
    for (fname, f) in &lib {
        let scope = Scope::function(f);
        totals.consts += consts(&scope, &format!("{name_prefix}{fname}/"), data, true, out);
    }
}

/// The saver (`saver_def`): the node holding its file name, the functions that are its own
/// save and restore subgraphs, and its restore op, which `loader` runs.
fn saver(
    mg: &MetaGraphDef,
    g: &GraphDef,
    main: &Scope<'_>,
    lib: &BTreeMap<&str, &FunctionDef>,
    loader: Loader,
    ctx: &mut Context,
    roots: &mut Vec<(String, String)>,
) {
    let saved_model = loader == Loader::SavedModel;
    // The saver: its file name, and the functions that are its own subgraphs.
    if let Some(sd) = &mg.saver_def {
        let filename = node_of(&sd.filename_tensor_name).to_owned();
        let saver_nodes = [node_of(&sd.save_tensor_name), node_of(&sd.restore_op_name)];
        let mut candidates = BTreeSet::new();
        for name in saver_nodes {
            let Some(n) = main.node(name) else {
                continue;
            };
            let first_is_filename = data_inputs(n)
                .next()
                .is_some_and(|i| matches!(main.source(i), Source::Node(s) if s.name == filename));
            if first_is_filename {
                for f in called(n, lib) {
                    candidates.insert(f.to_owned());
                }
            }
        }
        // A saver function called from anywhere else is not the saver's alone.
        let saver_set: BTreeSet<&str> = saver_nodes.into_iter().collect();
        for n in &g.node {
            if !saver_set.contains(n.name.as_str()) {
                for f in called(n, lib) {
                    candidates.remove(f);
                }
            }
        }
        for f in lib.values() {
            for n in &f.node_def {
                for c in called(n, lib) {
                    candidates.remove(c);
                }
            }
        }
        if let Some(og) = &mg.object_graph_def {
            for f in object_graph_functions(og) {
                candidates.remove(f);
            }
        }
        ctx.saver_filename = Some(filename);
        ctx.saver_functions = candidates;
        if !sd.restore_op_name.is_empty() {
            let who = if saved_model {
                "which the C++ and TF1 loaders run"
            } else {
                // tensorflow/python/training/saver.py, _create_saver_from_imported_meta_graph:
                // import_meta_graph returns Saver(saver_def=...), whose restore runs this op.
                "which saver.restore runs after import_meta_graph"
            };
            roots.push((
                node_of(&sd.restore_op_name).to_owned(),
                format!(
                    "the saver's restore op {:?}, {who}",
                    short(node_of(&sd.restore_op_name))
                ),
            ));
        }
    }
}

/// The assets (`asset_file_def`) and the init op, as `loader` reads them.
fn assets_and_init(
    mg: &MetaGraphDef,
    prefix: &str,
    loader: Loader,
    ctx: &mut Context,
    roots: &mut Vec<(String, String)>,
    out: &mut Reading,
) {
    let saved_model = loader == Loader::SavedModel;
    // Assets: their names must stay inside assets/. import_meta_graph reads no asset_file_def
    // (only the SavedModel loaders resolve assets): there they are names, and a node that
    // reads a file is judged by the path the graph itself holds, as in a frozen GraphDef.
    let mut assets = Vec::new();
    for (i, a) in mg.asset_file_def.iter().enumerate() {
        if !saved_model {
            assets.push(a.filename.as_str());
            continue;
        }
        if let Some(t) = &a.tensor_info {
            if let Some(name) = tensor_name(t) {
                ctx.asset_nodes.insert(node_of(name).to_owned());
            }
        }
        if let Err(why) = plain_asset_name(&a.filename) {
            out.note(
                "assets outside assets/",
                Severity::Fail,
                || format!("{prefix}asset_file_def[{i}] {:?}", short(&a.filename)),
                || format!("the loaders open assets/ joined with this name, and {why}: it names a file outside the SavedModel"),
            );
        }
        assets.push(a.filename.as_str());
    }
    if !assets.is_empty() {
        out.metadata.push((
            "tensorflow.assets".into(),
            listed(assets.iter().copied(), 50),
        ));
    }

    // The init op.
    let init = mg
        .signature_def
        .get(INIT_OP_SIGNATURE)
        .and_then(|s| s.outputs.get(INIT_OP_SIGNATURE))
        .and_then(tensor_name)
        .map(|t| node_of(t).to_owned());
    let from_collection = |key: &str| -> Vec<String> {
        match mg.collection_def.get(key).and_then(|c| c.kind.as_ref()) {
            Some(collection_def::Kind::NodeList(l)) => {
                l.value.iter().map(|v| node_of(v).to_owned()).collect()
            }
            _ => Vec::new(),
        }
    };
    let init_ops: Vec<String> = match init {
        // import_meta_graph runs no init op: a TF1 program runs its initializers itself.
        _ if !saved_model => Vec::new(),
        Some(i) => vec![i],
        None => {
            let main_op = from_collection("saved_model_main_op");
            if main_op.is_empty() {
                from_collection("legacy_init_op")
            } else {
                main_op
            }
        }
    };
    for i in &init_ops {
        roots.push((
            i.clone(),
            format!("the init op {:?}, which every loader runs", short(i)),
        ));
    }
}

/// Adds a graph's judgement to the outcome: its findings and its ops.
pub fn add_judged(j: graph::Judged, prefix: &str, name_prefix: &str, out: &mut Reading) {
    for f in j.findings {
        out.note(
            "ops judged",
            f.severity,
            || format!("{prefix}{}", f.place),
            || f.reason,
        );
    }
    for (kind, n) in j.suppressed {
        out.note(
            "ops judged",
            Severity::Lead,
            || "graph".into(),
            || {
                socair_plugin_kit::bounded::and_more(
                    n,
                    kind,
                    socair_plugin_kit::bounded::FINDINGS_PER_KIND,
                )
            },
        );
    }
    out.metadata.push((
        format!("tensorflow.{name_prefix}ops"),
        listed(j.ops.keys().map(String::as_str), 200),
    ));
}

/// Describes every numeric `Const` of `scope`, each named `prefix` + its node name; returns
/// how many were described.
pub fn consts(
    scope: &Scope<'_>,
    prefix: &str,
    data: &Bytes,
    outside: bool,
    out: &mut Reading,
) -> u64 {
    let mut n = 0;
    for node in scope.nodes {
        if node.op != "Const" {
            continue;
        }
        let Some(attr_value::Value::Tensor(t)) =
            node.attr.get("value").and_then(|a| a.value.as_ref())
        else {
            continue;
        };
        let name = format!("{prefix}{}", node.name);
        let mut budget = out.inline_left;
        match locate(t, data, &mut budget) {
            Ok(located) => {
                if !out.room() {
                    continue;
                }
                if located.extra_values {
                    out.note(
                        "constants with more values than their shape",
                        Severity::Lead,
                        || scope.place(node),
                        || "its typed values are more than its shape holds: TensorFlow's runtime keeps the first, tf.make_ndarray refuses it".into(),
                    );
                }
                out.inline_left = budget;
                crate::outcome::located(out, &name, located, ByteOrder::Little, None, outside);
                n += 1;
            }
            Err(NotLocated::NotNumeric(_)) => {}
            Err(NotLocated::Refused(why)) => {
                out.unread(
                    "constants not read",
                    Some(&name),
                    format!("{}: {why}", scope.place(node)),
                    outside,
                );
            }
        }
    }
    n
}

/// Every function name the object graph names (which the TF2 loader may call).
fn object_graph_functions(og: &SavedObjectGraph) -> Vec<&str> {
    let mut out: Vec<&str> = og.concrete_functions.keys().map(String::as_str).collect();
    for o in &og.nodes {
        match &o.kind {
            Some(saved_object::Kind::Function(f)) => {
                out.extend(f.concrete_functions.iter().map(String::as_str))
            }
            Some(saved_object::Kind::BareConcreteFunction(b)) => {
                out.push(b.concrete_function_name.as_str())
            }
            Some(saved_object::Kind::CapturedTensor(c)) => out.push(c.concrete_function.as_str()),
            _ => {}
        }
    }
    out
}

/// The object graph's part: function arguments bound to assets, the functions the TF2 loader
/// runs for each resource, and what names code the loading process resolves.
fn object_graph(
    og: &SavedObjectGraph,
    lib: &BTreeMap<&str, &FunctionDef>,
    prefix: &str,
    ctx: &mut Context,
    load_functions: &mut Vec<(String, String)>,
    out: &mut Reading,
) {
    for (fname, cf) in &og.concrete_functions {
        let Some(f) = lib.get(fname.as_str()) else {
            continue;
        };
        let args = f.signature.as_ref().map_or(0, |s| s.input_arg.len());
        let bound = cf.bound_inputs.len();
        for (j, &b) in cf.bound_inputs.iter().enumerate() {
            let is_asset = usize::try_from(b)
                .ok()
                .and_then(|b| og.nodes.get(b))
                .is_some_and(|o| matches!(o.kind, Some(saved_object::Kind::Asset(_))));
            if is_asset && args >= bound {
                ctx.asset_args.insert((fname.clone(), args - bound + j));
            }
        }
    }
    for name in object_graph_functions(og) {
        if !lib.contains_key(name) {
            out.note(
                "functions the object graph names",
                Severity::Lead,
                || format!("{prefix}object_graph_def"),
                || format!("it names function {:?}, which the graph's library does not define: the TF2 loader refuses it", short(name)),
            );
        }
    }
    for (i, o) in og.nodes.iter().enumerate() {
        if !o.registered_name.is_empty() && !TF_REGISTERED.contains(&o.registered_name.as_str()) {
            out.note(
                "objects a registered class rebuilds",
                Severity::Lead,
                || format!("{prefix}object_graph_def.nodes[{i}]"),
                || format!(
                    "registered_name {:?}: tf.saved_model.load rebuilds this object with the Python class registered under that name in the loading process (tf.saved_model.experimental registration), from its serialized_user_proto; TensorFlow itself registers only {}",
                    short(&o.registered_name),
                    TF_REGISTERED.join(" and ")
                ),
            );
        }
        if !o.registered_saver.is_empty()
            && !TF_REGISTERED_SAVERS.contains(&o.registered_saver.as_str())
        {
            out.note(
                "objects a registered class rebuilds",
                Severity::Lead,
                || format!("{prefix}object_graph_def.nodes[{i}]"),
                || format!(
                    "registered_saver {:?}: the checkpoint of this object is restored by the Python saver registered under that name in the loading process",
                    short(&o.registered_saver)
                ),
            );
        }
        if let Some(saved_object::Kind::Resource(_)) = &o.kind {
            for child in &o.children {
                if !matches!(
                    child.local_name.as_str(),
                    "_create_resource" | "_initialize" | "_destroy_resource"
                ) {
                    continue;
                }
                let target = usize::try_from(child.node_id)
                    .ok()
                    .and_then(|c| og.nodes.get(c));
                let names: Vec<&str> = match target.and_then(|t| t.kind.as_ref()) {
                    Some(saved_object::Kind::Function(f)) => {
                        f.concrete_functions.iter().map(String::as_str).collect()
                    }
                    Some(saved_object::Kind::BareConcreteFunction(b)) => {
                        vec![b.concrete_function_name.as_str()]
                    }
                    _ => Vec::new(),
                };
                for n in names {
                    load_functions.push((
                        n.to_owned(),
                        format!(
                            "resource object {i}'s {}, which tf.saved_model.load runs",
                            child.local_name
                        ),
                    ));
                }
            }
        }
    }
}

/// Whether an asset's file name keeps `assets/<name>` inside `assets/`.
pub fn plain_asset_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("it is empty");
    }
    if name.starts_with('/') || name.contains('\\') || name.contains('\0') {
        return Err("it is absolute or not a plain /-separated relative path");
    }
    if name
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return Err("it has an empty, `.` or `..` component");
    }
    Ok(())
}
