//! Storages from persistent ids: `('storage', storage class, key, location, numel)` (and the
//! legacy format's views) checked as torch's loaders read them, each key's storage made once.
//! Apart from the opcodes, which only hand over the persistent id.

use crate::globals::{Class, Known};
use crate::pickle::machine::{Run, ENTRY};
use crate::pickle::values::{Severity, StorageClass, StorageRef, Value};
use std::mem::size_of;
use std::rc::Rc;

impl Run<'_, '_> {
    pub(super) fn persistent_id(&mut self, pid: Value) -> Value {
        let legacy = self.options.legacy;
        let bad = |m: &mut Self, why: &str| {
            m.structure(
                Severity::Fail,
                format!(
                    "persistent id {why}; torch.save writes ('storage', storage class, key, location, numel)"
                ),
            );
            Value::Opaque(Rc::from("invalid persistent id"))
        };
        let Value::Tuple(items, _) = pid else {
            return bad(self, "is not a tuple");
        };
        if legacy {
            if let [Value::Str(tag), ..] = &items[..] {
                if &**tag == "module" {
                    // torch.save(model) in the legacy format: the class and its source text.
                    self.structure(Severity::Lead, "persistent id ('module', class, source file, source): a whole nn.Module was saved, not a state dict; loading it imports the class".into());
                    return Value::Opaque(Rc::from("a saved nn.Module class"));
                }
            }
        }
        let (fields, view) = match (&items[..], legacy) {
            ([a, b, c, d, e], false) => ([a, b, c, d, e], None),
            ([a, b, c, d, e, view], true) => ([a, b, c, d, e], Some(view)),
            _ if legacy => {
                return bad(self, "does not have the six fields of a legacy storage ('storage', storage class, root key, location, numel, view metadata)")
            }
            _ => return bad(self, "does not have the five fields of a storage"),
        };
        let [Value::Str(tag), Value::Global(class), Value::Str(key), Value::Str(location), Value::Int(numel)] =
            fields
        else {
            return bad(self, "does not have fields of the types torch writes");
        };
        if &**tag != "storage" {
            return bad(self, &format!("is tagged {tag:?}"));
        }
        // The legacy view metadata: None, or (view key, offset, size) in elements.
        let view = match view {
            None | Some(Value::None) => None,
            Some(Value::Tuple(v, _)) => match &v[..] {
                [Value::Str(vk), Value::Int(off), Value::Int(size)] => {
                    match (u64::try_from(*off), u64::try_from(*size)) {
                        (Ok(off), Ok(size)) if !vk.is_empty() && vk.bytes().all(|b| b.is_ascii_digit()) => {
                            Some((vk.to_string(), off, size))
                        }
                        _ => return bad(self, "has view metadata with a negative offset or size, or a key that is not a decimal number"),
                    }
                }
                _ => {
                    return bad(
                        self,
                        "has view metadata that is not (view key, offset, size)",
                    )
                }
            },
            Some(_) => return bad(self, "has view metadata that is neither None nor a tuple"),
        };
        let class = match class.class {
            Class::Known(Known::TypedStorage(d)) => StorageClass::Typed(d),
            Class::Known(Known::UntypedStorage) => StorageClass::Untyped,
            _ => {
                return bad(
                    self,
                    &format!("names {}.{} as its storage class", class.module, class.name),
                )
            }
        };
        let Ok(numel) = u64::try_from(*numel) else {
            return bad(self, "has a negative size");
        };
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_digit()) {
            return bad(
                self,
                &format!("has key {key:?}; torch.save keys are decimal numbers"),
            );
        }
        self.charge(size_of::<StorageRef>() + 112 + 2 * key.len() + location.len() + 2 * ENTRY);
        let storage = Rc::new(StorageRef {
            class,
            key: key.to_string(),
            location: location.to_string(),
            numel,
            view_of: None,
        });
        if self.t().view_keys.contains_key(key.as_ref()) {
            self.structure(Severity::Fail, format!(
                "key {key:?} names both a storage view and a storage; torch's loader would resolve it by the order it meets them"
            ));
            return Value::Opaque(Rc::from("an ambiguous storage key"));
        }
        let first = self.t().storage_keys.get(key.as_ref()).cloned();
        let root = if let Some(first) = first {
            if first.class != storage.class || first.numel != storage.numel {
                self.structure(Severity::Fail, format!(
                    "storage {key:?} is named twice with different storage types or sizes; torch.save never writes that (it refuses to save one storage as two types)"
                ));
            }
            first
        } else {
            let t = self.t();
            t.storage_keys.insert(key.to_string(), storage.clone());
            t.storages.push(storage.clone());
            storage
        };
        let Some((view_key, offset, size)) = view else {
            return Value::Storage(root);
        };
        // A legacy view: elements offset..offset+size of the root storage, under its own key.
        if offset.checked_add(size).is_none_or(|end| end > root.numel) {
            self.structure(
                Severity::Fail,
                format!(
                    "storage view {view_key:?} covers elements {offset}..+{size} of storage {key:?}, which holds {}",
                    root.numel
                ),
            );
            return Value::Opaque(Rc::from("a storage view outside its storage"));
        }
        let view_ref = Rc::new(StorageRef {
            class,
            key: view_key.clone(),
            location: location.to_string(),
            numel: size,
            view_of: Some((key.to_string(), offset)),
        });
        if self.t().storage_keys.contains_key(&view_key) {
            self.structure(Severity::Fail, format!(
                "key {view_key:?} names both a storage and a view; torch's loader would resolve it by the order it meets them"
            ));
            return Value::Opaque(Rc::from("an ambiguous storage view"));
        }
        if let Some(first) = self.t().view_keys.get(&view_key).cloned() {
            if *first != *view_ref {
                self.structure(
                    Severity::Fail,
                    format!(
                        "storage view {view_key:?} is declared twice differently; torch's loader keeps the first"
                    ),
                );
            }
            return Value::Storage(first);
        }
        self.t().view_keys.insert(view_key, view_ref.clone());
        Value::Storage(view_ref)
    }
}
