//! The node tree skops 0.16 builds from a schema before it audits anything: `get_tree`
//! (`_audit.py`) and the `__init__` of every node class it dispatches to (`_general.py`,
//! `_numpy.py`, `_scipy.py`, `_sklearn.py`, `_quantile_forest.py`, `old/*.py`), step for step:
//! the same fields read in the same order, the same memo, and an error wherever skops raises.
//! Nothing skops would construct is judged here; [`super::audit`] computes what
//! `get_unsafe_set` returns over the tree this builds.
//!
//! Where skops raises (a missing field, a field of the wrong type, a loader it does not know,
//! a `MethodNode` whose object is of another type, a protocol it does not read…), loading
//! stops before any object is constructed: the build stops too, with a [`Stop::Refused`]
//! naming the place and Python's error. socair's own bounds ([`MAX_NODE_DEPTH`],
//! [`MAX_NODES`]) stop it with a [`Stop::Bound`].

use super::json::Json;
use super::pyvalue::{iterate_states, memo_key, py_eq, subscript, truthy, MemoKey};
use super::trusted::{defaults, Trust};
use std::collections::HashMap;

/// Nodes nested at most. skops's own recursion (`get_tree` → a node's `__init__` →
/// `get_tree`, then `get_unsafe_set` and `construct`) raises `RecursionError` under CPython
/// 3.11's default limit at 248 nested `ListNode`s, and at 282 nodes of `ObjectNode`s in
/// `DictNode`s (measured with skops 0.16.0 from a shallow caller; a deeper caller leaves it
/// less). socair stops below both: a schema deeper than this is not walked (a LEAD), so that
/// what socair calls data is never too deep for skops to build.
pub const MAX_NODE_DEPTH: usize = 200;

/// Nodes built at most; a schema with more is not walked past them (a LEAD).
pub const MAX_NODES: usize = 1 << 20;

/// `PROTOCOL` (skops 0.16 `_protocol.py`): the newest protocol skops 0.16 reads.
pub const PROTOCOL: i64 = 2;

/// A node class of skops 0.16 (one per entry of `NODE_TYPE_MAPPING` that can be built; the
/// protocol-0 and protocol-1 classes of `old/` are their own kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dict,
    DefaultDict,
    List,
    Set,
    Tuple,
    Bytes,
    Bytearray,
    Slice,
    Function,
    /// `old/_general_v0.py` `FunctionNode`: the function is named by its `content`.
    FunctionV0,
    Method,
    Partial,
    Type,
    ConstructorFromReduce,
    Object,
    Json,
    OperatorFunc,
    NdArray,
    MaskedArray,
    DType,
    RandomState,
    /// `RandomGeneratorNode` of protocol 0 (`old/_numpy_v0.py`), 1 (`old/_numpy_v1.py`) or 2.
    RandomGenerator(u8),
    SparseMatrix,
    Loss,
    Tree,
}

/// A name a node holds: a schema value (`state["__module__"]`), or one skops itself fixes
/// (`TreeNode`'s constructor, `sklearn.tree._tree.Tree`).
#[derive(Debug, Clone, Copy)]
pub enum Name<'j> {
    Json(&'j Json),
    Fixed(&'static str),
}

impl<'j> Name<'j> {
    /// The name when it is a string (what `module + "." + name` needs).
    pub fn as_str(&self) -> Option<&'j str> {
        match self {
            Name::Json(j) => j.as_str(),
            Name::Fixed(s) => Some(s),
        }
    }
}

/// A child as `Node.get_unsafe_set` meets it in `self.children`.
#[derive(Debug, Clone, Copy)]
pub enum Child<'j> {
    Node(usize),
    /// A raw schema value kept as a child (`MethodNode`'s `func`, the protocol-0
    /// `RandomGeneratorNode`'s state): judged by its Python type.
    Raw(&'j Json),
}

/// One built node.
#[derive(Debug, Clone)]
pub struct Node<'j> {
    pub kind: Kind,
    pub module: Name<'j>,
    pub class: Name<'j>,
    pub trust: Trust,
    pub children: Vec<Child<'j>>,
    /// Where its state lies in the schema ([`Tree::place`]).
    pub at: usize,
    /// `MethodNode`: the method's name (`state["content"]["func"]`) and the object's node.
    pub func: Option<&'j Json>,
    pub obj: Option<usize>,
    /// `RandomGeneratorNode` (protocols 1, 2): the bit generator's name, read from the raw
    /// state as `_get_bit_generator_name` reads it.
    pub bit_generator: Option<String>,
    /// `old/_general_v0.py` `FunctionNode` and `JsonNode`: their `content`.
    pub content: Option<&'j Json>,
}

/// A step of a place in the schema.
#[derive(Debug, Clone, Copy)]
pub enum Seg<'j> {
    Root,
    Key(&'j str),
    Index(usize),
    /// A node skops makes itself, with no state in the schema (`ReduceNode`'s constructor).
    Made(&'static str),
}

/// Why the build stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// skops raises here: it loads nothing.
    Refused { at: usize, why: String },
    /// socair's bounds: not walked further.
    Bound { at: usize, why: String },
}

/// What was built: the nodes (the root first), and the places they lie at.
pub struct Tree<'j> {
    pub nodes: Vec<Node<'j>>,
    paths: Vec<(usize, Seg<'j>)>,
    /// The zip members the tree reads while it is built (`load_context.src.read(...)`), and
    /// as what.
    pub reads: Vec<(String, &'static str)>,
}

impl Tree<'_> {
    /// A place's JSON path from the root (`content.steps.content[1]`), `""` for the root.
    pub fn place(&self, mut at: usize) -> String {
        let mut segs = Vec::new();
        let mut guard = 0;
        while let Some(&(parent, seg)) = self.paths.get(at) {
            if matches!(seg, Seg::Root) || guard > MAX_NODE_DEPTH * 8 {
                break;
            }
            segs.push(seg);
            at = parent;
            guard += 1;
        }
        let mut out = String::new();
        for seg in segs.iter().rev() {
            match seg {
                Seg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::Made(m) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(m);
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
                Seg::Root => {}
            }
        }
        out
    }
}

/// Builds the tree as `get_tree(schema, load_context, trusted=None)` does, for a schema of
/// `protocol` (already checked as `read_schema` checks it). `has_member` says whether the zip
/// holds a member (`zip_file.read(name)` raises `KeyError` for one it does not); without it
/// every member a node reads is taken to be there.
pub fn build<'j>(
    schema: &'j Json,
    protocol: i64,
    has_member: Option<&dyn Fn(&str) -> bool>,
) -> (Tree<'j>, Result<(), Stop>) {
    let mut b = Builder {
        protocol,
        has_member,
        memo: HashMap::new(),
        tree: Tree {
            nodes: Vec::new(),
            paths: vec![(0, Seg::Root)],
            reads: Vec::new(),
        },
    };
    let result = b.get_tree(schema, 0, false, 0).map(|_| ());
    (b.tree, result)
}

struct Builder<'j, 'm> {
    protocol: i64,
    has_member: Option<&'m dyn Fn(&str) -> bool>,
    memo: HashMap<MemoKey, usize>,
    tree: Tree<'j>,
}

/// The classes `NODE_TYPE_MAPPING` holds under skops 0.16 with scikit-learn 1.9.1, by
/// `__loader__` (`_DictWithDeprecatedKeysNode` is registered only for scikit-learn < 1.2).
fn kind_of(loader: &str, protocol: i64) -> Option<Result<Kind, &'static str>> {
    // `get_tree`: `(loader, protocol)` if registered, else `(loader, PROTOCOL)`.
    Some(Ok(match (loader, protocol) {
        ("FunctionNode", 0) => Kind::FunctionV0,
        ("RandomGeneratorNode", 0) => Kind::RandomGenerator(0),
        ("RandomGeneratorNode", 1) => Kind::RandomGenerator(1),
        ("RandomGeneratorNode", _) => Kind::RandomGenerator(2),
        ("DictNode", _) => Kind::Dict,
        ("DefaultDictNode", _) => Kind::DefaultDict,
        ("ListNode", _) => Kind::List,
        ("SetNode", _) => Kind::Set,
        ("TupleNode", _) => Kind::Tuple,
        ("BytesNode", _) => Kind::Bytes,
        ("BytearrayNode", _) => Kind::Bytearray,
        ("SliceNode", _) => Kind::Slice,
        ("FunctionNode", _) => Kind::Function,
        ("MethodNode", _) => Kind::Method,
        ("PartialNode", _) => Kind::Partial,
        ("TypeNode", _) => Kind::Type,
        ("ConstructorFromReduceNode", _) => Kind::ConstructorFromReduce,
        ("ObjectNode", _) => Kind::Object,
        ("JsonNode", _) => Kind::Json,
        ("OperatorFuncNode", _) => Kind::OperatorFunc,
        ("NdArrayNode", _) => Kind::NdArray,
        ("MaskedArrayNode", _) => Kind::MaskedArray,
        ("DTypeNode", _) => Kind::DType,
        ("RandomStateNode", _) => Kind::RandomState,
        ("SparseMatrixNode", _) => Kind::SparseMatrix,
        ("LossNode", _) => Kind::Loss,
        ("TreeNode", _) => Kind::Tree,
        // `_audit.py` `CachedNode.__init__`: `get_tree` returns a memoized node before it
        // dispatches, so a `CachedNode` is only ever built for an id the memo does not hold,
        // and then `load_context.get_object(saved_id)` is None: it always raises.
        ("CachedNode", _) => return Some(Err("ValueError: A cached node refers to an unknown object id (skops 0.16 `_audit.py` CachedNode.__init__)")),
        // `_quantile_forest.py` `QuantileForestNode.__init__` raises ImportError when the
        // quantile-forest package is missing, as in the pinned environment (scikit-learn
        // 1.9.1 and numpy 2 alone).
        ("QuantileForestNode", _) => return Some(Err("ImportError: `quantile_forest` is missing and needs to be installed in order to load this model (skops 0.16 `_quantile_forest.py` QuantileForestNode.__init__)")),
        _ => return None,
    }))
}

impl<'j> Builder<'j, '_> {
    fn path(&mut self, parent: usize, seg: Seg<'j>) -> usize {
        self.tree.paths.push((parent, seg));
        self.tree.paths.len() - 1
    }

    fn refused<T>(&self, at: usize, why: impl Into<String>) -> Result<T, Stop> {
        Err(Stop::Refused {
            at,
            why: why.into(),
        })
    }

    /// `state[key]`, raising as Python does.
    fn sub(&self, state: &'j Json, key: &str, at: usize) -> Result<&'j Json, Stop> {
        subscript(state, key).or_else(|e| self.refused(at, e))
    }

    /// `get_tree(state[key], …)`: the child at `parent.key`.
    fn child_at(
        &mut self,
        state: &'j Json,
        key: &'static str,
        parent: usize,
        losses: bool,
        depth: usize,
    ) -> Result<usize, Stop> {
        let value = self.sub(state, key, parent)?;
        let at = self.path(parent, Seg::Key(key));
        self.get_tree(value, at, losses, depth)
    }

    /// `_audit.py` `get_tree`.
    fn get_tree(
        &mut self,
        state: &'j Json,
        at: usize,
        losses: bool,
        depth: usize,
    ) -> Result<usize, Stop> {
        // `saved_id = state.get("__id__")`: only a dict has `get`.
        let Json::Object(_) = state else {
            return self.refused(
                at,
                format!("AttributeError: '{}' object has no attribute 'get' (a node's state must be a dict)", state.type_name()),
            );
        };
        let saved_id = state.get("__id__").unwrap_or(&Json::Null);
        // `if saved_id in load_context.memo`: raises for an unhashable id.
        let key = memo_key(saved_id).or_else(|e| self.refused(at, e))?;
        if let Some(&known) = self.memo.get(&key) {
            return Ok(known);
        }
        // A new node: within socair's bounds.
        if depth >= MAX_NODE_DEPTH {
            return Err(Stop::Bound {
                at,
                why: format!("nodes nested deeper than {MAX_NODE_DEPTH}: not walked further (skops's own recursion raises RecursionError at a few hundred)"),
            });
        }
        if self.tree.nodes.len() >= MAX_NODES {
            return Err(Stop::Bound {
                at,
                why: format!("more than {MAX_NODES} nodes: not walked further"),
            });
        }
        let loader = self.sub(state, "__loader__", at)?;
        let found = match loader {
            Json::Str(name) => kind_of(name, self.protocol),
            Json::Array(_) | Json::Object(_) => {
                return self.refused(
                    at,
                    format!(
                        "TypeError: unhashable type: '{}' (the __loader__)",
                        loader.type_name()
                    ),
                )
            }
            _ => None,
        };
        let kind = match found {
            Some(Ok(kind)) => kind,
            Some(Err(why)) => {
                // `Node.__init__` reads the names first (a missing one raises KeyError).
                self.sub(state, "__class__", at)?;
                self.sub(state, "__module__", at)?;
                return self.refused(at, why);
            }
            None => {
                return self.refused(
                    at,
                    format!(
                        "TypeError: Can't find loader {} for protocol {} (skops 0.16 `_audit.py` get_tree: not a node type it knows)",
                        super::pyvalue::py_repr(loader),
                        self.protocol
                    ),
                )
            }
        };
        self.init(kind, state, at, losses, depth + 1, saved_id, key)
    }

    /// `Node.__init__`, then the class's own `__init__`.
    #[allow(clippy::too_many_arguments)]
    fn init(
        &mut self,
        kind: Kind,
        state: &'j Json,
        at: usize,
        losses: bool,
        depth: usize,
        saved_id: &'j Json,
        key: MemoKey,
    ) -> Result<usize, Stop> {
        // `self.class_name, self.module_name = state["__class__"], state["__module__"]`.
        let class = self.sub(state, "__class__", at)?;
        let module = self.sub(state, "__module__", at)?;
        let trust = Trust::new(
            trust_of(kind),
            match kind {
                Kind::DefaultDict => false,
                Kind::Loss => true,
                _ => losses,
            },
        );
        let idx = self.tree.nodes.len();
        self.tree.nodes.push(Node {
            kind,
            module: Name::Json(module),
            class: Name::Json(class),
            trust,
            children: Vec::new(),
            at,
            func: None,
            obj: None,
            bit_generator: None,
            content: None,
        });
        // `if saved_id and memoize: load_context.memoize(self, saved_id)`, before any child.
        if truthy(saved_id) {
            self.memo.insert(key, idx);
        }
        let mut children: Vec<Child<'j>> = Vec::new();
        // What the children of a node are built with: a LossNode passes its allowed losses.
        let passed = matches!(kind, Kind::Loss) || losses;
        match kind {
            Kind::Dict => {
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
                    return self.refused(at, format!("AttributeError: '{}' object has no attribute 'items' (DictNode content)", content.type_name()));
                };
                let content_at = self.path(at, Seg::Key("content"));
                for (k, v) in pairs {
                    let v_at = self.path(content_at, Seg::Key(k));
                    children.push(Child::Node(self.get_tree(v, v_at, passed, depth)?));
                }
            }
            Kind::DefaultDict => {
                // `_general.py` DefaultDictNode: content["main"], then content["default_factory"].
                let content = self.sub(state, "content", at)?;
                let content_at = self.path(at, Seg::Key("content"));
                children.push(Child::Node(
                    self.child_at(content, "main", content_at, passed, depth)?,
                ));
                children.push(Child::Node(self.child_at(
                    content,
                    "default_factory",
                    content_at,
                    passed,
                    depth,
                )?));
            }
            Kind::List | Kind::Set | Kind::Tuple => {
                // `[get_tree(value, …) for value in state["content"]]`.
                let content = self.sub(state, "content", at)?;
                let items = iterate_states(content).or_else(|e| self.refused(at, e))?;
                let content_at = self.path(at, Seg::Key("content"));
                for (i, item) in items.iter().enumerate() {
                    let i_at = self.path(content_at, Seg::Index(i));
                    children.push(Child::Node(self.get_tree(item, i_at, passed, depth)?));
                }
            }
            Kind::Bytes | Kind::Bytearray => {
                // `io.BytesIO(load_context.src.read(state["file"]))` (a BytesIO child is
                // skipped by the audit).
                self.read_member(state, at, "bytes")?;
            }
            Kind::Slice => {
                // `_general.py` SliceNode: content["start"], ["stop"], ["step"] (raw values;
                // its get_unsafe_set returns an empty set).
                let content = self.sub(state, "content", at)?;
                for k in ["start", "stop", "step"] {
                    self.sub(content, k, at)?;
                }
            }
            Kind::Function | Kind::Type => {}
            Kind::FunctionV0 => {
                // `old/_general_v0.py`: `self.children = {"content": state["content"]}`.
                let content = self.sub(state, "content", at)?;
                self.tree.nodes[idx].content = Some(content);
            }
            Kind::Method => {
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
                children.push(Child::Node(obj));
                children.push(Child::Raw(func));
                self.tree.nodes[idx].func = Some(func);
                self.tree.nodes[idx].obj = Some(obj);
            }
            Kind::Partial => {
                // `_general.py` PartialNode: func, args, kwds, namespace.
                let content = self.sub(state, "content", at)?;
                let content_at = self.path(at, Seg::Key("content"));
                for k in ["func", "args", "kwds", "namespace"] {
                    children.push(Child::Node(
                        self.child_at(content, k, content_at, passed, depth)?,
                    ));
                }
            }
            Kind::ConstructorFromReduce | Kind::DType | Kind::RandomState => {
                children.push(Child::Node(
                    self.child_at(state, "content", at, passed, depth)?,
                ));
            }
            Kind::Object => {
                // `content = state.get("content")`; `if content is not None: get_tree(content)`.
                if let Some(content) = state.get("content").filter(|c| !matches!(c, Json::Null)) {
                    let c_at = self.path(at, Seg::Key("content"));
                    children.push(Child::Node(self.get_tree(content, c_at, passed, depth)?));
                }
            }
            Kind::Json => {
                let content = self.sub(state, "content", at)?;
                self.tree.nodes[idx].content = Some(content);
            }
            Kind::OperatorFunc => {
                // `_general.py` OperatorFuncNode: the module must be "operator".
                if !py_eq(module, &Json::Str("operator".into())) {
                    return self.refused(at, format!(
                        "ValueError: Expected module 'operator', got {} (skops 0.16 `_general.py` OperatorFuncNode.__init__, the check added against CVE-2025-54412)",
                        name_str(Name::Json(module))
                    ));
                }
                children.push(Child::Node(
                    self.child_at(state, "attrs", at, passed, depth)?,
                ));
            }
            Kind::NdArray => {
                // `_numpy.py` NdArrayNode: type "numpy" reads a member, "json" builds items
                // and shape, anything else raises.
                let ty = self.sub(state, "type", at)?;
                if py_eq(ty, &Json::Str("numpy".into())) {
                    self.read_member(state, at, "numpy array (np.load, allow_pickle=False)")?;
                } else if py_eq(ty, &Json::Str("json".into())) {
                    let content = self.sub(state, "content", at)?;
                    let items = iterate_states(content).or_else(|e| self.refused(at, e))?;
                    let content_at = self.path(at, Seg::Key("content"));
                    for (i, item) in items.iter().enumerate() {
                        let i_at = self.path(content_at, Seg::Index(i));
                        children.push(Child::Node(self.get_tree(item, i_at, passed, depth)?));
                    }
                    children.push(Child::Node(
                        self.child_at(state, "shape", at, passed, depth)?,
                    ));
                } else {
                    return self.refused(
                        at,
                        format!("ValueError: Unknown type {}.", super::pyvalue::py_str(ty)),
                    );
                }
            }
            Kind::MaskedArray => {
                let content = self.sub(state, "content", at)?;
                let content_at = self.path(at, Seg::Key("content"));
                for k in ["data", "mask"] {
                    children.push(Child::Node(
                        self.child_at(content, k, content_at, passed, depth)?,
                    ));
                }
            }
            Kind::RandomGenerator(version) => {
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
            }
            Kind::SparseMatrix => {
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
            }
            Kind::Loss | Kind::Tree => {
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
            }
        }
        self.tree.nodes[idx].children = children;
        Ok(idx)
    }

    /// `load_context.src.read(state["file"])`: `KeyError` for a name the zip does not hold
    /// (any name, when `has_member` is not given, is taken to be there).
    fn read_member(&mut self, state: &'j Json, at: usize, what: &'static str) -> Result<(), Stop> {
        let file = self.sub(state, "file", at)?;
        match file {
            Json::Str(name) => {
                if let Some(has) = self.has_member {
                    if !has(name) {
                        return self.refused(
                            at,
                            format!("KeyError: There is no item named {name:?} in the archive"),
                        );
                    }
                }
                self.tree.reads.push((name.clone(), what));
                Ok(())
            }
            Json::Array(_) | Json::Object(_) => self.refused(
                at,
                format!(
                    "TypeError: unhashable type: '{}' (the member name)",
                    file.type_name()
                ),
            ),
            other => self.refused(
                at,
                format!(
                    "KeyError: There is no item named {} in the archive",
                    super::pyvalue::py_repr(other)
                ),
            ),
        }
    }
}

/// The defaults of a kind (trusted.rs [`defaults`]).
fn trust_of(kind: Kind) -> &'static [super::trusted::Section] {
    match kind {
        Kind::Dict => defaults::DICT,
        Kind::DefaultDict => defaults::DEFAULT_DICT,
        Kind::List => defaults::LIST,
        Kind::Set => defaults::SET,
        Kind::Tuple => defaults::TUPLE,
        Kind::Bytes => defaults::BYTES,
        Kind::Bytearray => defaults::BYTEARRAY,
        Kind::Slice => defaults::SLICE,
        Kind::Function => defaults::FUNCTION,
        Kind::FunctionV0 => defaults::FUNCTION_V0,
        Kind::Type => defaults::TYPE,
        Kind::Object => defaults::OBJECT,
        Kind::Json => defaults::JSON,
        Kind::NdArray => defaults::NDARRAY,
        Kind::MaskedArray => defaults::MASKED_ARRAY,
        Kind::RandomState => defaults::RANDOM_STATE,
        Kind::RandomGenerator(_) => defaults::RANDOM_GENERATOR,
        Kind::SparseMatrix => defaults::SPARSE_MATRIX,
        Kind::Loss => defaults::LOSS,
        Kind::Method
        | Kind::Partial
        | Kind::ConstructorFromReduce
        | Kind::OperatorFunc
        | Kind::DType
        | Kind::Tree => defaults::NONE,
    }
}

/// A name as an f-string writes it.
pub fn name_str(name: Name<'_>) -> String {
    match name {
        Name::Json(j) => super::pyvalue::py_str(j),
        Name::Fixed(s) => s.to_owned(),
    }
}

/// `_numpy.py` `RandomGeneratorNode._get_bit_generator_name`: `json.loads` of
/// `state["content"]["bit_generator"]["content"]`, when that is a string; `None` where it
/// catches `KeyError`, `TypeError` or `ValueError`.
pub fn bit_generator_name(bit_generator_state: &Json) -> Option<String> {
    let name_state = subscript(bit_generator_state, "content").ok()?;
    let name_state = subscript(name_state, "bit_generator").ok()?;
    let text = subscript(name_state, "content").ok()?.as_str()?;
    match super::json::loads_str(text).ok()? {
        Json::Str(name) => Some(name),
        _ => None,
    }
}
