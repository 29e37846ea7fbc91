//! What XGBoost's `Learner::LoadModel(Json const&)` requires of a parsed model
//! (`src/learner.cc` at v3.2.0), what `GBTreeModel::LoadModel` and `RegTree::LoadModel`
//! require of its trees (`src/gbm/gbtree_model.cc`, `src/tree/tree_model.cc`), and its tensors.
//!
//! Required, as XGBoost reads them with `at()` / `get<>` (a missing or mistyped one is an
//! exception, and the file is refused): `learner` (object), `learner.learner_model_param`
//! (object), `learner.objective.name` and `learner.gradient_booster.name` (strings),
//! `learner.attributes` (an object of strings), `version` when present (three integers). A
//! `gbtree` (or a `dart`'s `gbtree`) holds `model.trees`, as many as
//! `gbtree_model_param.num_trees`; each tree's `tree_param.num_nodes` (a string, as XGBoost's
//! parameters are) is the length of each of its nine node arrays (`CHECK_EQ` in
//! `LoadModelImpl`), and each child and parent index names a node of the tree (XGBoost indexes
//! its node vector with them unchecked: a hostile index reads outside it).

use super::value::{typed_element, Value};
use crate::model_read::{Bytes, ModelRead, Tensor};
use socair_plugin_api::ByteOrder;

/// The node arrays of a tree (XGBoost's `tree_field`), with the element type XGBoost holds
/// each in (its UBJSON writer's typed arrays: `RegTree::SaveModel`).
const TREE_ARRAYS: &[(&str, &str)] = &[
    ("base_weights", "F32"),
    ("loss_changes", "F32"),
    ("sum_hessian", "F32"),
    ("split_conditions", "F32"),
    ("left_children", "I32"),
    ("right_children", "I32"),
    ("parents", "I32"),
    ("split_indices", "I32"),
    ("default_left", "U8"),
];

/// The other arrays of a tree and a model that are tensors, with their element types.
const OTHER_ARRAYS: &[(&str, &str)] = &[
    ("split_type", "U8"),
    ("categories", "I32"),
    ("categories_nodes", "I32"),
    ("categories_segments", "I64"),
    ("categories_sizes", "I64"),
    ("feature_segments", "I32"),
    ("sorted_idx", "I32"),
    ("weights", "F32"),
];

/// The root's parent in XGBoost (`RegTree::kRoot`'s parent is `kInvalidNodeId` with the
/// left-child bit set: written as 2147483647).
const ROOT_PARENT: i64 = 2_147_483_647;

fn element_of(key: &str) -> Option<&'static str> {
    TREE_ARRAYS
        .iter()
        .chain(OTHER_ARRAYS)
        .find(|(k, _)| *k == key)
        .map(|(_, e)| *e)
}

/// Checks the model's schema into `out` and returns what it is, in a phrase.
pub fn check(root: &Value, data: &[u8], out: &mut ModelRead) -> String {
    let Value::Object(_) = root else {
        out.fail(
            "document",
            format!("is {}; XGBoost reads an object", root.kind()),
        );
        return "an XGBoost document".into();
    };
    if let Some(v) = root.get("version") {
        let ok = match v {
            Value::Nums {
                values, all_int, ..
            } => *all_int && values.len() >= 3,
            Value::Array(items) => {
                items.len() >= 3 && items.iter().take(3).all(|i| matches!(i, Value::Int(_)))
            }
            Value::Typed { marker, count, .. } => *count >= 3 && !matches!(marker, b'd' | b'D'),
            _ => false,
        };
        if !ok {
            out.fail(
                "version",
                "is not three integers (XGBoost's Version::Load refuses it)",
            );
        }
    }
    let Some(learner) = root.get("learner") else {
        out.fail(
            "learner",
            "missing: XGBoost's Learner::LoadModel requires it",
        );
        return "an XGBoost document".into();
    };
    if !matches!(learner, Value::Object(_)) {
        out.fail(
            "learner",
            format!("is {}; XGBoost requires an object", learner.kind()),
        );
        return "an XGBoost document".into();
    }
    if !matches!(learner.get("learner_model_param"), Some(Value::Object(_))) {
        out.fail(
            "learner.learner_model_param",
            "missing or not an object: XGBoost's Learner::LoadModel requires it",
        );
    }
    let objective = learner.get("objective").and_then(|o| o.get("name"));
    if objective.and_then(Value::as_str).is_none() {
        out.fail(
            "learner.objective.name",
            "missing or not a string: XGBoost's Learner::LoadModel requires it",
        );
    }
    match learner.get("attributes") {
        Some(Value::Object(entries)) => {
            for (k, v) in entries {
                if v.as_str().is_none() {
                    out.fail(
                        format!("learner.attributes.{k}"),
                        format!("is {}; XGBoost reads attributes as strings", v.kind()),
                    );
                }
            }
        }
        _ => out.fail(
            "learner.attributes",
            "missing or not an object: XGBoost's Learner::LoadModel requires it",
        ),
    }
    let booster = learner.get("gradient_booster");
    let name = booster.and_then(|b| b.get("name")).and_then(Value::as_str);
    let Some(booster) = booster.filter(|_| name.is_some()) else {
        out.fail(
            "learner.gradient_booster.name",
            "missing or not a string: XGBoost's Learner::LoadModel requires it",
        );
        return "an XGBoost model".into();
    };
    let trees = match name {
        Some("gbtree") => booster
            .get("model")
            .map(|m| ("learner.gradient_booster.model", m)),
        Some("dart") => booster
            .get("gbtree")
            .and_then(|g| g.get("model"))
            .map(|m| ("learner.gradient_booster.gbtree.model", m)),
        Some("gblinear") => None,
        other => {
            out.fail(
                "learner.gradient_booster.name",
                format!(
                    "`{}` is no booster XGBoost creates (gbtree, dart, gblinear)",
                    other.unwrap_or_default()
                ),
            );
            None
        }
    };
    let booster_name = name.unwrap_or_default();
    let mut what = format!("an XGBoost {booster_name} model");
    if let Some((path, model)) = trees {
        what = check_trees(path, model, out, &what);
    } else if booster_name != "gblinear" && matches!(booster_name, "gbtree" | "dart") {
        out.fail(
            format!("learner.gradient_booster ({booster_name})"),
            "holds no model: XGBoost's GBTree::LoadModel requires it",
        );
    }
    collect_tensors(root, data, &mut String::new(), out);
    what
}

fn int_param(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Str(s) => s.trim().parse().ok(),
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

fn check_trees(path: &str, model: &Value, out: &mut ModelRead, what: &str) -> String {
    let Some(trees) = model.get("trees") else {
        out.fail(
            format!("{path}.trees"),
            "missing: XGBoost's GBTreeModel::LoadModel requires it",
        );
        return what.to_owned();
    };
    let Value::Array(list) = trees else {
        if trees.array_len() == Some(0) {
            return format!("{what} of no trees");
        }
        out.fail(format!("{path}.trees"), "is not an array of trees");
        return what.to_owned();
    };
    let declared = int_param(
        model
            .get("gbtree_model_param")
            .and_then(|p| p.get("num_trees")),
    );
    if declared != Some(list.len() as i64) {
        out.fail(
            format!("{path}.gbtree_model_param.num_trees"),
            format!(
                "declares {} trees where {} are written (XGBoost's GBTreeModel::LoadModel checks they agree)",
                declared.map_or("no number of".to_owned(), |n| n.to_string()),
                list.len()
            ),
        );
    }
    for (i, tree) in list.iter().enumerate() {
        check_tree(&format!("{path}.trees.{i}"), tree, out);
    }
    format!("{what} of {} trees", list.len())
}

/// The integers of an array of any kind, bounded by `n`.
fn ints(v: &Value, data: &[u8]) -> Option<Vec<i64>> {
    match v {
        Value::Nums {
            values,
            all_int: true,
            ..
        } => Some(values.iter().map(|&f| f as i64).collect()),
        Value::Typed {
            marker,
            offset,
            count,
        } => {
            let (_, width, _) = typed_element(*marker)?;
            if matches!(marker, b'd' | b'D') {
                return None;
            }
            let start = usize::try_from(*offset).ok()?;
            let len = usize::try_from(count.checked_mul(width)?).ok()?;
            let bytes = data.get(start..start.checked_add(len)?)?;
            Some(
                bytes
                    .chunks_exact(width as usize)
                    .map(|c| match c {
                        [a] if *marker == b'i' => i64::from(*a as i8),
                        [a] => i64::from(*a),
                        [a, b] => i64::from(i16::from_be_bytes([*a, *b])),
                        [a, b, c, d] => i64::from(i32::from_be_bytes([*a, *b, *c, *d])),
                        _ => {
                            let mut e = [0u8; 8];
                            e.copy_from_slice(c);
                            i64::from_be_bytes(e)
                        }
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}

fn check_tree(path: &str, tree: &Value, out: &mut ModelRead) {
    if !matches!(tree, Value::Object(_)) {
        out.fail(path, format!("is {}; a tree is an object", tree.kind()));
        return;
    }
    let param = tree.get("tree_param");
    let Some(n) = int_param(param.and_then(|p| p.get("num_nodes"))) else {
        out.fail(
            format!("{path}.tree_param.num_nodes"),
            "missing or not a number",
        );
        return;
    };
    if n <= 0 {
        out.fail(
            format!("{path}.tree_param.num_nodes"),
            format!("is {n}: XGBoost requires a node"),
        );
        return;
    }
    if int_param(param.and_then(|p| p.get("size_leaf_vector"))).unwrap_or(1) > 1 {
        // A multi-target tree (MultiTargetTree::LoadModel) holds other arrays; its arrays are
        // still tensors, and its lengths are not checked here.
        return;
    }
    for (key, _) in TREE_ARRAYS {
        match tree.get(key).and_then(Value::array_len) {
            Some(len) if len == n as u64 => {}
            Some(len) => out.fail(
                format!("{path}.{key}"),
                format!("holds {len} values where tree_param.num_nodes is {n} (XGBoost refuses a count that disagrees)"),
            ),
            None => out.fail(format!("{path}.{key}"), "missing: XGBoost's RegTree::LoadModel requires it"),
        }
    }
}

/// Checks a tree's child and parent indices (they index XGBoost's node vector unchecked).
pub fn check_indices(root: &Value, data: &[u8], out: &mut ModelRead) {
    let booster = root.get("learner").and_then(|l| l.get("gradient_booster"));
    let (path, model) = match booster.and_then(|b| b.get("name")).and_then(Value::as_str) {
        Some("gbtree") => (
            "learner.gradient_booster.model",
            booster.and_then(|b| b.get("model")),
        ),
        Some("dart") => (
            "learner.gradient_booster.gbtree.model",
            booster
                .and_then(|b| b.get("gbtree"))
                .and_then(|g| g.get("model")),
        ),
        _ => return,
    };
    let Some(Value::Array(trees)) = model.and_then(|m| m.get("trees")) else {
        return;
    };
    for (i, tree) in trees.iter().enumerate() {
        let Some(n) = int_param(tree.get("tree_param").and_then(|p| p.get("num_nodes"))) else {
            continue;
        };
        if int_param(
            tree.get("tree_param")
                .and_then(|p| p.get("size_leaf_vector")),
        )
        .unwrap_or(1)
            > 1
        {
            continue;
        }
        for key in ["left_children", "right_children", "parents"] {
            let Some(v) = tree.get(key) else { continue };
            let Some(values) = ints(v, data) else {
                out.fail(
                    format!("{path}.trees.{i}.{key}"),
                    "is not an array of integers",
                );
                continue;
            };
            for (node, &x) in values.iter().enumerate() {
                let ok = if key == "parents" {
                    (node == 0 && (x == ROOT_PARENT || x == -1)) || (0..n).contains(&x)
                } else {
                    x == -1 || (1..n).contains(&x)
                };
                if !ok {
                    out.fail(
                        format!("{path}.trees.{i}.{key}.{node}"),
                        format!("is {x}, which names no node of this tree of {n} (XGBoost would index outside its nodes)"),
                    );
                    break;
                }
            }
        }
    }
}

fn collect_tensors(v: &Value, data: &[u8], path: &mut String, out: &mut ModelRead) {
    let key = path.rsplit('.').next().unwrap_or("").to_owned();
    match v {
        Value::Object(entries) => {
            for (k, child) in entries {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                collect_tensors(child, data, path, out);
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let len = path.len();
                path.push('.');
                path.push_str(&i.to_string());
                collect_tensors(child, data, path, out);
                path.truncate(len);
            }
        }
        Value::Typed {
            marker,
            offset,
            count,
        } if *count > 0 => {
            if let Some((element, width, name)) = typed_element(*marker) {
                out.tensors.push(Tensor {
                    name: path.clone(),
                    dtype: name.into(),
                    element_type: element,
                    shape: vec![*count],
                    bytes: Bytes::Range {
                        offset: *offset,
                        len: count * width,
                    },
                    byte_order: ByteOrder::Big,
                });
            }
        }
        Value::Nums {
            values, all_int, ..
        } if !values.is_empty() => {
            let Some(element) = element_of(&key) else {
                return;
            };
            match encode(values, *all_int, element) {
                Ok(bytes) => out.tensors.push(Tensor {
                    name: path.clone(),
                    dtype: format!("{element} (decoded from JSON)"),
                    element_type: element,
                    shape: vec![values.len() as u64],
                    bytes: Bytes::Inline(bytes),
                    byte_order: ByteOrder::Little,
                }),
                Err(reason) => out.fail(path.clone(), reason),
            }
        }
        _ => {}
    }
    let _ = data;
}

/// The values as little-endian `element`s, as XGBoost holds them.
fn encode(values: &[f64], all_int: bool, element: &str) -> Result<Vec<u8>, String> {
    let mut b = Vec::with_capacity(values.len() * 8);
    let range = |lo: f64, hi: f64| -> Result<(), String> {
        if !all_int {
            return Err(format!(
                "holds a fraction where XGBoost reads {element} integers"
            ));
        }
        match values.iter().find(|&&x| x < lo || x > hi) {
            Some(x) => Err(format!("holds {x}, outside {element}")),
            None => Ok(()),
        }
    };
    match element {
        "F32" => values
            .iter()
            .for_each(|&x| b.extend_from_slice(&(x as f32).to_le_bytes())),
        "I32" => {
            range(f64::from(i32::MIN), f64::from(i32::MAX))?;
            values
                .iter()
                .for_each(|&x| b.extend_from_slice(&(x as i32).to_le_bytes()));
        }
        "U8" => {
            range(0.0, 255.0)?;
            values.iter().for_each(|&x| b.push(x as u8));
        }
        _ => {
            range(-9.007_199_254_740_992e15, 9.007_199_254_740_992e15)?;
            values
                .iter()
                .for_each(|&x| b.extend_from_slice(&(x as i64).to_le_bytes()));
        }
    }
    Ok(b)
}
