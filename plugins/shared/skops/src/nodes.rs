//! The node tree skops 0.16 builds from a schema before it audits anything: `get_tree`
//! (`_audit.py`) and the `__init__` of every node class it dispatches to (`_general.py`,
//! `_numpy.py`, `_scipy.py`, `_sklearn.py`, `_quantile_forest.py`, `old/*.py`), step for step:
//! the same fields read in the same order, the same memo, and an error wherever skops raises.
//! Nothing skops would construct is judged here; [`super::audit`] computes what
//! `get_unsafe_set` returns over the tree this builds. `Node.__init__` is `Builder::init`
//! here; each class's own `__init__` is a function of `classes`, named after the class.
//!
//! Where skops raises (a missing field, a field of the wrong type, a loader it does not know,
//! a `MethodNode` whose object is of another type, a protocol it does not read…), loading
//! stops before any object is constructed: the build stops too, with a [`Stop::Refused`]
//! naming the place and Python's error. socair's own bounds ([`MAX_NODE_DEPTH`],
//! [`MAX_NODES`]) stop it with a [`Stop::Bound`].

use super::json::Json;
use super::pyvalue::{memo_key, subscript, truthy, MemoKey};
use super::trusted::{defaults, Trust};
use std::collections::HashMap;

mod classes;

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

/// A node `Node.__init__` has begun (named, trusted, pushed, memoized), as its class's own
/// `__init__` goes on with it.
#[derive(Clone, Copy)]
struct Init<'j> {
    kind: Kind,
    state: &'j Json,
    /// Where its state lies ([`Tree::place`]).
    at: usize,
    /// Its index among the tree's nodes.
    idx: usize,
    /// `state["__module__"]` and `state["__class__"]`.
    module: &'j Json,
    class: &'j Json,
    /// What its children are built with: a LossNode passes its allowed losses.
    passed: bool,
    /// The depth its children are built at.
    depth: usize,
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
        let n = Init {
            kind,
            state,
            at,
            idx,
            module,
            class,
            // What the children of a node are built with: a LossNode passes its allowed losses.
            passed: matches!(kind, Kind::Loss) || losses,
            depth,
        };
        // The class's own `__init__`; its children are the node's only once it returns.
        let children = match kind {
            Kind::Dict => self.dict_node(n)?,
            Kind::DefaultDict => self.default_dict_node(n)?,
            Kind::List | Kind::Set | Kind::Tuple => self.list_node(n)?,
            Kind::Bytes | Kind::Bytearray => self.bytes_node(n)?,
            Kind::Slice => self.slice_node(n)?,
            Kind::Function | Kind::Type => Vec::new(),
            Kind::FunctionV0 => self.function_node_v0(n)?,
            Kind::Method => self.method_node(n)?,
            Kind::Partial => self.partial_node(n)?,
            Kind::ConstructorFromReduce | Kind::DType | Kind::RandomState => {
                self.content_node(n)?
            }
            Kind::Object => self.object_node(n)?,
            Kind::Json => self.json_node(n)?,
            Kind::OperatorFunc => self.operator_func_node(n)?,
            Kind::NdArray => self.nd_array_node(n)?,
            Kind::MaskedArray => self.masked_array_node(n)?,
            Kind::RandomGenerator(version) => self.random_generator_node(n, version)?,
            Kind::SparseMatrix => self.sparse_matrix_node(n)?,
            Kind::Loss | Kind::Tree => self.reduce_node(n)?,
        };
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
