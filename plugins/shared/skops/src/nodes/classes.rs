//! The node classes' own `__init__` (skops 0.16 `_general.py`, `_numpy.py`, `_scipy.py`,
//! `_sklearn.py`, `old/*.py`), one function each, as [`Builder::init`] calls them once
//! `Node.__init__` has begun the node: each reads its fields in skops's order, builds its
//! children with `get_tree`, and raises where the class raises. A node's children are its own
//! only once its function returns them.

use super::{bit_generator_name, name_str, Builder, Child, Init, Kind, Name, Node, Seg, Stop};
use crate::json::Json;
use crate::pyvalue::{iterate_states, py_eq};
use crate::trusted::{defaults, Trust};

impl<'j> Builder<'j, '_> {
    /// `get_tree(value, …)` of each of `content`'s items (which must be iterable as a list),
    /// at `parent.content[i]`.
    fn items(
        &mut self,
        content: &'j Json,
        parent: usize,
        passed: bool,
        depth: usize,
        children: &mut Vec<Child<'j>>,
    ) -> Result<(), Stop> {
        let items = iterate_states(content).or_else(|e| self.refused(parent, e))?;
        let content_at = self.path(parent, Seg::Key("content"));
        for (i, item) in items.iter().enumerate() {
            let i_at = self.path(content_at, Seg::Index(i));
            children.push(Child::Node(self.get_tree(item, i_at, passed, depth)?));
        }
        Ok(())
    }

    /// `_general.py` `DictNode.__init__`.
    pub(super) fn dict_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            passed,
            depth,
            ..
        } = n;
        let mut children = Vec::new();
        // `_general.py` DictNode: key_types, then content's values in order.
        children.push(Child::Node(self.child_at(
            state,
            "key_types",
            at,
            passed,
            depth,
        )?));
        let content = self.sub(state, "content", at)?;
        let Json::Object(pairs) = content else {
            return self.refused(
                at,
                format!(
                    "AttributeError: '{}' object has no attribute 'items' (DictNode content)",
                    content.type_name()
                ),
            );
        };
        let content_at = self.path(at, Seg::Key("content"));
        for (k, v) in pairs {
            let v_at = self.path(content_at, Seg::Key(k));
            children.push(Child::Node(self.get_tree(v, v_at, passed, depth)?));
        }
        Ok(children)
    }

    /// `_general.py` `DefaultDictNode.__init__`.
    pub(super) fn default_dict_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            passed,
            depth,
            ..
        } = n;
        // `_general.py` DefaultDictNode: content["main"], then content["default_factory"].
        let content = self.sub(state, "content", at)?;
        let content_at = self.path(at, Seg::Key("content"));
        let main = self.child_at(content, "main", content_at, passed, depth)?;
        let default_factory =
            self.child_at(content, "default_factory", content_at, passed, depth)?;
        Ok(vec![Child::Node(main), Child::Node(default_factory)])
    }

    /// `_general.py` `ListNode.__init__`, `SetNode.__init__` and `TupleNode.__init__`.
    pub(super) fn list_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            passed,
            depth,
            ..
        } = n;
        let mut children = Vec::new();
        // `[get_tree(value, …) for value in state["content"]]`.
        let content = self.sub(state, "content", at)?;
        self.items(content, at, passed, depth, &mut children)?;
        Ok(children)
    }

    /// `_general.py` `BytesNode.__init__` (and `BytearrayNode`, its subclass).
    pub(super) fn bytes_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        // `io.BytesIO(load_context.src.read(state["file"]))` (a BytesIO child is
        // skipped by the audit).
        self.read_member(n.state, n.at, "bytes")?;
        Ok(Vec::new())
    }

    /// `_general.py` `SliceNode.__init__`.
    pub(super) fn slice_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        // `_general.py` SliceNode: content["start"], ["stop"], ["step"] (raw values;
        // its get_unsafe_set returns an empty set).
        let content = self.sub(n.state, "content", n.at)?;
        for k in ["start", "stop", "step"] {
            self.sub(content, k, n.at)?;
        }
        Ok(Vec::new())
    }

    /// `old/_general_v0.py` `FunctionNode.__init__` (protocol 0).
    pub(super) fn function_node_v0(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        // `old/_general_v0.py`: `self.children = {"content": state["content"]}`.
        let content = self.sub(n.state, "content", n.at)?;
        self.tree.nodes[n.idx].content = Some(content);
        Ok(Vec::new())
    }

    /// `_general.py` `MethodNode.__init__`.
    pub(super) fn method_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            idx,
            module,
            class,
            passed,
            depth,
            ..
        } = n;
        // `_general.py` MethodNode: the object first, then the type check, then func.
        let content = self.sub(state, "content", at)?;
        let content_at = self.path(at, Seg::Key("content"));
        let obj = self.child_at(content, "obj", content_at, passed, depth)?;
        let (om, oc) = (self.tree.nodes[obj].module, self.tree.nodes[obj].class);
        let same = |a: Name<'_>, b: Name<'_>| match (a, b) {
            (Name::Json(x), Name::Json(y)) => py_eq(x, y),
            (x, y) => x.as_str().is_some() && x.as_str() == y.as_str(),
        };
        if !same(Name::Json(module), om) || !same(Name::Json(class), oc) {
            return self.refused(at, format!(
                "ValueError: Expected object of type {}.{}, got {}.{} (skops 0.16 `_general.py` MethodNode.__init__, the check added against CVE-2025-54413; skops 0.11 and older built getattr(obj, func) without it)",
                name_str(Name::Json(module)), name_str(Name::Json(class)), name_str(om), name_str(oc)
            ));
        }
        let func = self.sub(content, "func", at)?;
        self.tree.nodes[idx].func = Some(func);
        self.tree.nodes[idx].obj = Some(obj);
        Ok(vec![Child::Node(obj), Child::Raw(func)])
    }

    /// `_general.py` `PartialNode.__init__`.
    pub(super) fn partial_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            passed,
            depth,
            ..
        } = n;
        let mut children = Vec::new();
        // `_general.py` PartialNode: func, args, kwds, namespace.
        let content = self.sub(state, "content", at)?;
        let content_at = self.path(at, Seg::Key("content"));
        for k in ["func", "args", "kwds", "namespace"] {
            children.push(Child::Node(
                self.child_at(content, k, content_at, passed, depth)?,
            ));
        }
        Ok(children)
    }

    /// `_general.py` `ConstructorFromReduceNode.__init__`, `_numpy.py` `DTypeNode.__init__` and
    /// `RandomStateNode.__init__`: `get_tree(state["content"], …)`.
    pub(super) fn content_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let content = self.child_at(n.state, "content", n.at, n.passed, n.depth)?;
        Ok(vec![Child::Node(content)])
    }

    /// `_general.py` `ObjectNode.__init__`.
    pub(super) fn object_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            passed,
            depth,
            ..
        } = n;
        let mut children = Vec::new();
        // `content = state.get("content")`; `if content is not None: get_tree(content)`.
        if let Some(content) = state.get("content").filter(|c| !matches!(c, Json::Null)) {
            let c_at = self.path(at, Seg::Key("content"));
            children.push(Child::Node(self.get_tree(content, c_at, passed, depth)?));
        }
        Ok(children)
    }

    /// `_general.py` `JsonNode.__init__`: its content, kept raw.
    pub(super) fn json_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let content = self.sub(n.state, "content", n.at)?;
        self.tree.nodes[n.idx].content = Some(content);
        Ok(Vec::new())
    }

    /// `_general.py` `OperatorFuncNode.__init__`.
    pub(super) fn operator_func_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            module,
            passed,
            depth,
            ..
        } = n;
        // `_general.py` OperatorFuncNode: the module must be "operator".
        if !py_eq(module, &Json::Str("operator".into())) {
            return self.refused(at, format!(
                "ValueError: Expected module 'operator', got {} (skops 0.16 `_general.py` OperatorFuncNode.__init__, the check added against CVE-2025-54412)",
                name_str(Name::Json(module))
            ));
        }
        let attrs = self.child_at(state, "attrs", at, passed, depth)?;
        Ok(vec![Child::Node(attrs)])
    }

    /// `_numpy.py` `NdArrayNode.__init__`.
    pub(super) fn nd_array_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            passed,
            depth,
            ..
        } = n;
        let mut children = Vec::new();
        // `_numpy.py` NdArrayNode: type "numpy" reads a member, "json" builds items
        // and shape, anything else raises.
        let ty = self.sub(state, "type", at)?;
        if py_eq(ty, &Json::Str("numpy".into())) {
            self.read_member(state, at, "numpy array (np.load, allow_pickle=False)")?;
        } else if py_eq(ty, &Json::Str("json".into())) {
            let content = self.sub(state, "content", at)?;
            self.items(content, at, passed, depth, &mut children)?;
            children.push(Child::Node(
                self.child_at(state, "shape", at, passed, depth)?,
            ));
        } else {
            return self.refused(
                at,
                format!("ValueError: Unknown type {}.", crate::pyvalue::py_str(ty)),
            );
        }
        Ok(children)
    }

    /// `_numpy.py` `MaskedArrayNode.__init__`: content["data"], then content["mask"].
    pub(super) fn masked_array_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            passed,
            depth,
            ..
        } = n;
        let mut children = Vec::new();
        let content = self.sub(state, "content", at)?;
        let content_at = self.path(at, Seg::Key("content"));
        for k in ["data", "mask"] {
            children.push(Child::Node(
                self.child_at(content, k, content_at, passed, depth)?,
            ));
        }
        Ok(children)
    }

    /// `RandomGeneratorNode.__init__` of protocol 0 (`old/_numpy_v0.py`), 1
    /// (`old/_numpy_v1.py`) or 2 (`_numpy.py`).
    pub(super) fn random_generator_node(
        &mut self,
        n: Init<'j>,
        version: u8,
    ) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            idx,
            passed,
            depth,
            ..
        } = n;
        let mut children = Vec::new();
        let content = self.sub(state, "content", at)?;
        let content_at = self.path(at, Seg::Key("content"));
        if version == 0 {
            // `old/_numpy_v0.py`: the bit generator's state stays a raw value.
            children.push(Child::Raw(self.sub(content, "bit_generator", at)?));
        } else {
            children.push(Child::Node(self.child_at(
                content,
                "bit_generator",
                content_at,
                passed,
                depth,
            )?));
            if version == 2 {
                children.push(Child::Node(
                    self.child_at(content, "seed_seq", content_at, passed, depth)?,
                ));
            }
            // `_get_bit_generator_name(state["content"]["bit_generator"])`, or raise.
            let raw = self.sub(content, "bit_generator", at)?;
            let Some(name) = bit_generator_name(raw) else {
                return self.refused(at, "ValueError: Could not find the bit generator name in the numpy.random.Generator state (skops 0.16 `_numpy.py` RandomGeneratorNode.__init__)");
            };
            self.tree.nodes[idx].bit_generator = Some(name);
        }
        Ok(children)
    }

    /// `_scipy.py` `SparseMatrixNode.__init__`.
    pub(super) fn sparse_matrix_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            state,
            at,
            module,
            class,
            ..
        } = n;
        // `_scipy.py` SparseMatrixNode: type must be "scipy", then the member.
        let ty = self.sub(state, "type", at)?;
        if !py_eq(ty, &Json::Str("scipy".into())) {
            return self.refused(
                at,
                format!(
                    "TypeError: Cannot load object of type {}.{}",
                    name_str(Name::Json(module)),
                    name_str(Name::Json(class))
                ),
            );
        }
        self.read_member(state, at, "sparse matrix (scipy.sparse.load_npz)")?;
        Ok(Vec::new())
    }

    /// `_sklearn.py` `ReduceNode.__init__`, as `LossNode` and `TreeNode` call it.
    pub(super) fn reduce_node(&mut self, n: Init<'j>) -> Result<Vec<Child<'j>>, Stop> {
        let Init {
            kind,
            state,
            at,
            module,
            class,
            passed,
            depth,
            ..
        } = n;
        let mut children = Vec::new();
        // `_sklearn.py` ReduceNode: state["__reduce__"], attrs (content), args, then
        // the constructor's TypeNode: the state's own type for a LossNode,
        // `sklearn.tree._tree.Tree` for a TreeNode.
        let reduce = self.sub(state, "__reduce__", at)?;
        children.push(Child::Node(
            self.child_at(state, "content", at, passed, depth)?,
        ));
        let reduce_at = self.path(at, Seg::Key("__reduce__"));
        children.push(Child::Node(
            self.child_at(reduce, "args", reduce_at, passed, depth)?,
        ));
        let (cm, cc) = match kind {
            Kind::Loss => (Name::Json(module), Name::Json(class)),
            _ => (Name::Fixed("sklearn.tree._tree"), Name::Fixed("Tree")),
        };
        let c_at = self.path(at, Seg::Made("(constructor)"));
        self.tree.nodes.push(Node {
            kind: Kind::Type,
            module: cm,
            class: cc,
            trust: Trust::new(defaults::TYPE, passed),
            children: Vec::new(),
            at: c_at,
            func: None,
            obj: None,
            bit_generator: None,
            content: None,
        });
        children.push(Child::Node(self.tree.nodes.len() - 1));
        Ok(children)
    }
}
