//! A `torch.distributed.checkpoint` directory's `.metadata`, read for where its items lie.
//!
//! `dcp.save` (`FileSystemWriter`, torch 2.15.0 `torch/distributed/checkpoint/filesystem.py`)
//! writes each rank's items one after another into `__{rank}_{n}.distcp` files
//! (`_write_item`: a tensor item is `torch.save(tensor, stream)`, a whole torch zip; a bytes
//! item is the `io.BytesIO` the planner filled with `torch.save(obj)`), then pickles a
//! `Metadata` into `.metadata` (`finish`: `pickle.dump`). Nothing in a `.distcp` says where an
//! item starts: `FileSystemReader.read_data` takes each item's `(relative_path, offset,
//! length)` from `Metadata.storage_data` (a dict of `MetadataIndex` to `_StorageInfo`), opens
//! `path / relative_path`, and hands the slice to `torch.load(slice, map_location="cpu",
//! weights_only=True)` for a tensor item (then `narrow_tensor_by_index` to the chunk and a
//! size check against the target) or, through `DefaultLoadPlanner.load_bytes`,
//! `torch.load(bytes, weights_only=False)` for a bytes item. An item with
//! `transform_descriptors` goes through a stream extension first (compression), which socair
//! does not undo.
//!
//! The pickle is judged by `socair-wo/3`, which models DCP's dataclasses as data
//! (`socair_pickle::globals::weights_only::DCP_DATACLASSES`). Here its typed model is walked
//! for the items, which the plugin gives the host as facts ([`DcpItem`]): the host reads
//! each item's slice of the `.distcp` file with this plugin's readers, as `torch.load` reads it
//! (`socair::read::artifact::dcp`), and judges the files' layout (items overlapping, out of
//! range, bytes no item covers).

use socair_pickle::pickle::{self, Object, Value};
use socair_plugin_api::abi_stable::std_types::RVec;
use socair_plugin_api::facts::{DcpItem, DcpItemKind};

/// The class `FileSystemWriter.finish` pickles.
pub const METADATA_CLASS: &str = "torch.distributed.checkpoint.metadata.Metadata";

/// The items of a `.metadata` pickle's typed model, in `storage_data`'s order, as the host
/// reads the `.distcp` files by them; why not, when they cannot all be read from it.
pub fn items(outcome: &pickle::Unpickled) -> Result<Vec<DcpItem>, String> {
    let w = Walk(outcome);
    let top = w.record(outcome.result.as_ref(), METADATA_CLASS)?;
    let sdm = w.dict(w.field(top, "state_dict_metadata")?)?;
    let storage = w.dict(w.field(top, "storage_data")?)?;
    let mut out = Vec::with_capacity(storage.len());
    for (key, info) in storage {
        let index = w.record(
            Some(key),
            "torch.distributed.checkpoint.metadata.MetadataIndex",
        )?;
        let fqn = w.str(w.field(index, "fqn")?)?;
        let chunk = match w.opt_field(index, "offset") {
            None | Some(Value::None) => None,
            Some(v) => Some(w.ints(v)?),
        };
        let info = w.record(
            Some(info),
            "torch.distributed.checkpoint.filesystem._StorageInfo",
        )?;
        let file = w.str(w.field(info, "relative_path")?)?;
        let offset = w.uint(w.field(info, "offset")?)?;
        let length = w.uint(w.field(info, "length")?)?;
        // `_StorageInfo.__getstate__` leaves out fields that are None.
        let transformed = !matches!(
            w.opt_field(info, "transform_descriptors"),
            None | Some(Value::None)
        );
        let md = sdm
            .iter()
            .find(|(k, _)| matches!(k, Value::Str(s) if **s == *fqn))
            .map(|(_, v)| v)
            .ok_or_else(|| {
                format!("storage_data names {fqn:?}, which state_dict_metadata lacks")
            })?;
        let (kind, sizes, whole) = match w.class_of(md) {
            Some("torch.distributed.checkpoint.metadata.BytesStorageMetadata") => {
                if chunk.is_some() {
                    return Err(format!("the bytes item {fqn:?} has a tensor offset"));
                }
                (DcpItemKind::Bytes, None, None)
            }
            Some("torch.distributed.checkpoint.metadata.TensorStorageMetadata") => {
                let md = w.record(Some(md), "torch.distributed.checkpoint.metadata.TensorStorageMetadata")?;
                let whole = w.ints(w.field(md, "size")?)?;
                let offsets = chunk
                    .clone()
                    .ok_or_else(|| format!("the tensor item {fqn:?} has no offset"))?;
                let chunks = w.list(w.field(md, "chunks")?)?;
                let sizes = chunks
                    .iter()
                    .filter_map(|c| {
                        let c = w.record(Some(c), "torch.distributed.checkpoint.metadata.ChunkStorageMetadata").ok()?;
                        let o = w.ints(w.field(c, "offsets").ok()?).ok()?;
                        (o == offsets).then(|| w.ints(w.field(c, "sizes").ok()?).ok())?
                    })
                    .next()
                    .ok_or_else(|| format!("no chunk of {fqn:?} starts at {offsets:?}"))?;
                let whole = (whole != sizes).then_some(whole);
                (DcpItemKind::Tensor, Some(sizes), whole)
            }
            _ => return Err(format!("state_dict_metadata[{fqn:?}] is neither TensorStorageMetadata nor BytesStorageMetadata")),
        };
        out.push(DcpItem {
            fqn: fqn.into(),
            chunk: chunk
                .filter(|_| kind == DcpItemKind::Tensor)
                .map(RVec::from)
                .into(),
            sizes: sizes.map(RVec::from).into(),
            whole: whole.map(RVec::from).into(),
            kind,
            file: file.into(),
            offset,
            length,
            transformed,
        });
    }
    Ok(out)
}

/// Reads the typed model's values.
struct Walk<'o>(&'o pickle::Unpickled);

/// A record's state: the `__dict__` items BUILD set.
type Fields<'o> = &'o [(Value, Value)];

impl<'o> Walk<'o> {
    fn object(&self, v: &Value) -> Option<&'o Object> {
        match v {
            Value::Obj(id) => self.0.objects.get(*id),
            _ => None,
        }
    }

    fn class_of(&self, v: &Value) -> Option<&'o str> {
        match self.object(v)? {
            Object::Record(r) => Some(&r.class),
            _ => None,
        }
    }

    /// The `__dict__` state of a record of `class`.
    fn record(&self, v: Option<&Value>, class: &str) -> Result<Fields<'o>, String> {
        let short = class.rsplit('.').next().unwrap_or(class);
        match v.and_then(|v| self.object(v)) {
            Some(Object::Record(r)) if &*r.class == class => match &r.state {
                Some(state) => self.dict(state),
                None => Err(format!("a {short} with no state")),
            },
            _ => Err(format!("not a {short} where FileSystemReader expects one")),
        }
    }

    fn dict(&self, v: &Value) -> Result<Fields<'o>, String> {
        match self.object(v) {
            Some(Object::Dict(d)) => Ok(&d.items),
            _ => Err("not a dict where FileSystemReader expects one".into()),
        }
    }

    fn list(&self, v: &Value) -> Result<&'o [Value], String> {
        match self.object(v) {
            Some(Object::List(l)) => Ok(l),
            _ => Err("not a list where FileSystemReader expects one".into()),
        }
    }

    fn opt_field(&self, fields: Fields<'o>, name: &str) -> Option<&'o Value> {
        fields
            .iter()
            .rev()
            .find(|(k, _)| matches!(k, Value::Str(s) if &**s == name))
            .map(|(_, v)| v)
    }

    fn field(&self, fields: Fields<'o>, name: &str) -> Result<&'o Value, String> {
        self.opt_field(fields, name)
            .ok_or_else(|| format!("no `{name}` where FileSystemReader reads one"))
    }

    fn str<'v>(&self, v: &'v Value) -> Result<&'v str, String> {
        match v {
            Value::Str(s) => Ok(s),
            _ => Err("not a str where FileSystemReader expects one".into()),
        }
    }

    fn uint(&self, v: &Value) -> Result<u64, String> {
        match v {
            Value::Int(i) => {
                u64::try_from(*i).map_err(|_| format!("a negative offset or length ({i})"))
            }
            _ => Err("not an int where FileSystemReader expects one".into()),
        }
    }

    /// A `torch.Size` (a tuple of ints in the typed model) or a tuple of ints.
    fn ints(&self, v: &Value) -> Result<Vec<i64>, String> {
        match v {
            Value::Tuple(items, _) => items
                .iter()
                .map(|i| match i {
                    Value::Int(n) => Ok(*n),
                    _ => Err("a torch.Size of something other than ints".to_owned()),
                })
                .collect(),
            _ => Err("not a torch.Size where FileSystemReader expects one".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use socair_plugin_api::abi_stable::std_types::ROption;

    fn run(data: &[u8]) -> pickle::Unpickled {
        let options = pickle::Options {
            grammar: pickle::Grammar::V3,
            input_len: data.len() as u64,
            ..Default::default()
        };
        pickle::run(data, &options)
    }

    /// The `.metadata` torch 2.15.0's `dcp.save` wrote (fixtures/dcp/make_fixtures.py).
    #[test]
    fn the_items_are_where_dcp_save_put_them() {
        let data = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../fixtures/dcp/tiny/.metadata"
        ))
        .unwrap();
        let outcome = run(&data);
        assert!(outcome.findings.is_empty(), "{:?}", outcome.findings);
        let items = items(&outcome).unwrap();
        /// fqn, kind, offset, length, chunk sizes.
        type Row<'a> = (&'a str, &'a str, u64, u64, Option<Vec<i64>>);
        let got: Vec<Row<'_>> = items
            .iter()
            .map(|i| {
                let kind = i.kind.as_str();
                let sizes = i.sizes.clone().map(|s| s.to_vec()).into_option();
                (i.fqn.as_str(), kind, i.offset, i.length, sizes)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("epoch", "bytes", 0, 1261, None),
                ("layer.weight", "tensor", 1261, 1577, Some(vec![3, 4])),
                ("layer.bias", "tensor", 2838, 1577, Some(vec![3])),
                ("step", "tensor", 4415, 1577, Some(vec![5])),
            ]
        );
        assert!(items
            .iter()
            .all(|i| i.file.as_str() == "__0_0.distcp" && !i.transformed));
        assert_eq!(items[1].chunk, ROption::RSome(RVec::from(vec![0, 0])));
    }

    #[test]
    fn anything_else_is_said_to_be_unreadable() {
        // A pickle of a plain dict: no Metadata.
        let outcome = run(b"\x80\x04}\x94.");
        assert_eq!(
            items(&outcome).unwrap_err(),
            "not a Metadata where FileSystemReader expects one"
        );
    }
}
