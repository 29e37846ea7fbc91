//! A frozen `GraphDef` (`tf.io.write_graph(..., as_text=False)` of a graph whose variables
//! were folded into constants): every op of the graph and of its library judged as in a
//! SavedModel ([`crate::graph`]), with no load time (importing a graph runs nothing; every op
//! runs when the graph is run), and its weights the main graph's `Const` nodes, each named by
//! its node: `tensor_content` as a byte range of the file, typed values decoded. Constants of
//! library functions are fingerprinted as outside the model.

use crate::bindings::Bindings;
use crate::decode::{decode, ProtoError};
use crate::graph::{self, Context, Scope};
use crate::outcome::Reading;
use crate::proto::schema::GRAPH_DEF;
use crate::proto::tensorflow::GraphDef;
use crate::savedmodel::{add_judged, consts, duplicate_names, library};
use bytes::Bytes;
use socair_plugin_api::{OpenedFile, RowStatus};
use socair_plugin_kit::bounded::thousands;

/// The format name.
pub const FORMAT: &str = "tf-graphdef";

/// Reads a binary `GraphDef`.
pub fn read(data: Bytes) -> OpenedFile {
    let mut out = Reading::new(FORMAT, data.len() as u64);
    let g: GraphDef = match decode(&data, GRAPH_DEF, "graph") {
        Ok((g, walked)) => {
            out.walked(&walked);
            g
        }
        Err(e) => return refused(e),
    };
    if let Some(v) = &g.versions {
        out.metadata
            .push(("tensorflow.graph_producer".into(), v.producer.to_string()));
    }
    let lib = library(&g, "", &mut out);
    let main = Scope::main(&g.node);
    duplicate_names(&main, "", &mut out);
    for f in lib.values() {
        duplicate_names(&Scope::function(f), "", &mut out);
    }
    // Importing a graph runs nothing, but its functions' placeholders are still bound by
    // its calls when the graph is run.
    let ctx = Context {
        bindings: Bindings::resolve(&g.node, &lib),
        ..Context::default()
    };
    let judged = graph::judge(&main, &lib, &ctx);
    let (nodes, functions) = (judged.nodes, judged.functions);
    add_judged(judged, "", "", &mut out);
    let weights = consts(&main, "", &data, false, &mut out);
    let mut inner = 0;
    for (fname, f) in &lib {
        inner += consts(
            &Scope::function(f),
            &format!("{fname}/"),
            &data,
            true,
            &mut out,
        );
    }
    out.finish(|status| match status {
        RowStatus::Fail => "TensorFlow GraphDef holding what reads or writes files, runs code or reaches the network, or that readers would read differently: see the findings".into(),
        RowStatus::Lead => format!(
            "TensorFlow GraphDef with parts this reader does not prove: {} nodes and {} functions judged, {} constants fingerprinted",
            thousands(nodes), thousands(functions), thousands(weights)
        ),
        _ => format!(
            "TensorFlow GraphDef: {} nodes and {} functions judged, every op computational; {} constants of the graph fingerprinted as its weights ({} in functions, outside the model)",
            thousands(nodes), thousands(functions), thousands(weights), thousands(inner)
        ),
    })
}

fn refused(e: ProtoError) -> OpenedFile {
    e.refused(
        FORMAT,
        "not a sound GraphDef: readers may disagree on what it holds",
    )
}
