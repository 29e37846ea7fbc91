//! After the pickle: the storages and tensors as torch loads them, judged against the file
//! (offsets torch may calculate instead of reading, restore locations, big-endian untyped
//! storages), and the state-dict model's tensors located in it. Shared by the zip and legacy
//! readers.

use super::analysis::{Analysis, LocatedTensor};
use super::state_dict::read_state_dict_in;
use crate::pickle::{self, Severity};
use crate::zip;

/// torch.load(mmap=True) with `torch.utils.serialization.config.load.calculate_storage_offsets`
/// (and FakeTensorMode loads) does not read storage offsets from the archive when
/// `.format_version` is at least `b"1"` (the caller checks): `_load._get_offset` computes them from the first
/// storage's, in the order the pickle loads storages, assuming torch's writer laid them out
/// (`getRecordOffsetNoRead`: header, name, `FB` padding to `.storage_alignment`, data, data
/// descriptor). Where the records lie elsewhere, that load reads other bytes than the record:
/// a LEAD naming the storage.
pub(super) fn calculated_offsets(
    a: &mut Analysis,
    archive: &zip::Archive,
    storages: &[std::rc::Rc<pickle::StorageRef>],
    records: &[usize],
    alignment: i128,
) {
    // Every storage has its record (a missing one already FAILs).
    if records.len() != storages.len() {
        return;
    }
    let alignment = alignment as u64;
    const U32MAX: u64 = 0xffff_ffff;
    let mut current: Option<u64> = None;
    for (s, &i) in storages.iter().zip(records) {
        let r = &archive.records[i];
        let numel = r.len;
        let (offset, local) = match current {
            None => {
                if s.key != "0" {
                    a.add(
                        Severity::Lead,
                        format!("storage {:?}", s.key),
                        "the first storage the pickle loads is not \"0\": torch's calculated storage offsets assert it is",
                    );
                    return;
                }
                (r.data_offset, r.header_offset)
            }
            Some(cursor) => {
                let full = r.name.len() as u64;
                let mut start = cursor + 30 + full + 4;
                if numel >= U32MAX || cursor >= U32MAX {
                    start += 4;
                    if numel >= U32MAX {
                        start += 16;
                    }
                    if cursor >= U32MAX {
                        start += 8;
                    }
                }
                let m = start % alignment;
                (if m == 0 { start } else { start + alignment - m }, cursor)
            }
        };
        if offset != r.data_offset {
            a.add_kind("a storage torch's offset calculation misplaces", Severity::Lead, || {
                (
                    format!("zip record {:?}", r.name),
                    format!(
                        "torch.load(mmap=True) with calculate_storage_offsets computes this storage's data at byte {offset}, but its record's data starts at byte {}: that load would read other bytes",
                        r.data_offset
                    ),
                )
            });
        }
        let mut next = offset + numel;
        if numel > 0 {
            next += if local >= U32MAX || numel >= U32MAX {
                24
            } else {
                16
            };
        }
        current = Some(next);
    }
}

/// Storage locations as `torch.load(map_location=None)` restores them
/// (`default_restore_location` over the registered deserializers, torch/serialization.py):
/// `cpu` as it is; `cuda`, `hpu`, `xpu`, `mtia` and the private backend (`privateuseone`),
/// alone or with `:<index>`, moved to that device with the same bytes (loadable where the
/// device exists); anything starting with `mps` moved to MPS; `meta` replaced by a storage
/// without values (see [`model_tensors`]); anything else makes torch.load raise
/// `RuntimeError` unless the caller passes a `map_location` (then the bytes load): a LEAD.
pub fn judge_locations(a: &mut Analysis, storages: &[std::rc::Rc<pickle::StorageRef>]) {
    for s in storages {
        let loc = s.location.as_str();
        let device = |backend: &str| {
            loc.strip_prefix(backend).is_some_and(|rest| {
                rest.is_empty()
                    || rest.strip_prefix(':').is_some_and(|i| {
                        i == "0"
                            || (!i.is_empty()
                                && !i.starts_with('0')
                                && i.bytes().all(|b| b.is_ascii_digit()))
                    })
            })
        };
        let known = loc == "cpu"
            || loc.starts_with("mps")
            || ["cuda", "hpu", "xpu", "mtia", "privateuseone"]
                .iter()
                .any(|b| device(b));
        if loc == "meta" {
            a.add_kind("a storage torch restores on the meta device", Severity::Lead, || {
                (
                    format!("storage {:?}", s.key),
                    "location 'meta': torch.load (map_location=None) gives its tensors no values (it reads the record and replaces the storage by an empty meta one), while with a map_location it loads the bytes; torch.save never writes a meta storage".into(),
                )
            });
        } else if !known {
            a.add_kind("a storage location torch cannot restore", Severity::Lead, || {
                (
                    format!("storage {:?}", s.key),
                    format!("location {loc:?}: no deserializer torch registers restores it, so torch.load raises RuntimeError unless the caller passes a map_location"),
                )
            });
        }
    }
}

/// A big-endian checkpoint's tensors over untyped storages (`_rebuild_tensor_v3`): `_load`
/// byte-swaps a storage by the dtype its persistent id gives, which for an `UntypedStorage` is
/// `torch.uint8` (a no-op), so torch on a little-endian machine loads the big-endian bytes as
/// little-endian values. Such a tensor of elements wider than a byte is neither fingerprinted nor
/// converted (socair would write the values the writer meant, not the ones torch loads).
pub(super) fn unswapped_big_endian(a: &mut Analysis) {
    let tensors = std::mem::take(&mut a.tensors);
    let mut count = 0u64;
    for t in tensors {
        if matches!(t.model.storage.class, pickle::StorageClass::Untyped) && t.model.dtype.size > 1
        {
            count += 1;
            a.unread.push((
                Some(t.name.clone()),
                format!(
                    "a {} tensor over an untyped storage in a big-endian checkpoint: torch does not byte-swap untyped storages, so torch.load reads other values than the writer meant",
                    t.model.dtype.torch
                ),
            ));
        } else {
            a.tensors.push(t);
        }
    }
    if count > 0 {
        a.add(
            Severity::Lead,
            "byteorder big",
            format!(
                "{count} tensor(s) over untyped storages (_rebuild_tensor_v3) with elements wider than a byte: torch.load byte-swaps a storage by its persistent id's dtype, uint8 for an UntypedStorage, so it loads these big-endian bytes unswapped on a little-endian machine; they are neither fingerprinted nor converted"
            ),
        );
    }
}

/// After the pickle: unless something FAILs, walks the state-dict model and locates each of its
/// tensors with `locate` (storage → where its first element lies in the file, the record
/// holding it, and where it starts within that record).
pub fn model_tensors(
    a: &mut Analysis,
    outcome: &pickle::Unpickled,
    locate: impl Fn(&pickle::StorageRef) -> Option<(u64, String, u64)>,
) {
    model_tensors_with(a, outcome, |storage| {
        locate(storage)
            .ok_or_else(|| format!("its storage {:?} does not match a record", storage.key))
    })
}

/// [`model_tensors`], with `locate` saying why a storage cannot be located.
pub fn model_tensors_with(
    a: &mut Analysis,
    outcome: &pickle::Unpickled,
    locate: impl Fn(&pickle::StorageRef) -> Result<(u64, String, u64), String>,
) {
    if a.worst() == Some(Severity::Fail) {
        a.unread.push((
            None,
            "the Pickle opcode scan FAILs: its tensors are not read".into(),
        ));
        return;
    }
    let Some(result) = outcome.result.clone() else {
        a.unread.push((
            None,
            format!(
                "the pickle leaves {} before STOP: its state dict is not modeled",
                a.grammar.name()
            ),
        ));
        return;
    };
    let sd = read_state_dict_in(outcome, &result, a.grammar);
    a.unread
        .extend(sd.unread.into_iter().map(|(n, r)| (Some(n), r)));
    a.outside = sd.outside;
    // Lines for the tensors outside the model come first in what a conversion lists as not
    // carried, as they did when those tensors were only listed.
    a.not_carried = sd
        .outside_named
        .iter()
        .filter_map(|(_, _, line)| line.clone())
        .chain(sd.not_carried)
        .collect();
    let all = sd
        .named
        .into_iter()
        .map(|(n, m)| (n, m, false))
        .chain(sd.outside_named.into_iter().map(|(n, m, _)| (n, m, true)));
    for (name, model, outside_model) in all {
        // A tensor outside the model that cannot be read is unread and not carried; one of
        // the model is unread and refuses a conversion.
        let mut unread = |name: String, why: String| {
            if outside_model {
                a.outside.push((name, why));
            } else {
                a.unread.push((Some(name), why));
            }
        };
        if model.storage.location == "meta" {
            unread(
                name,
                "its storage's location is 'meta': torch.load (map_location=None) loads it without values, so its record's bytes are not what torch loads".into(),
            );
            continue;
        }
        match locate(&model.storage) {
            Ok((record_offset, record, record_base)) => a.tensors.push(LocatedTensor {
                name,
                model,
                record_offset,
                record,
                record_base,
                outside_model,
            }),
            Err(why) => unread(name, why),
        }
    }
}
