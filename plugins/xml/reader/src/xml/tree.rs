//! A document as a tree of elements with their attributes (text is not kept: no model format
//! read here keeps data in it that socair judges), built from the [`Sink`] events within a
//! memory budget, and looked up as pugixml looks it up: `child(name)` is the first child of
//! that name (`xml_node::child`), `attribute(name)` the first attribute of that name.
//!
//! Element and attribute names are interned (a model repeats a few dozen of them), and a
//! reader may leave out the subtrees it never looks at ([`Skip`]: an IR's edges and ports),
//! so that the tree of a large model stays within the memory a read is held to.

use super::{Refusal, Sink, StartTag};
use socair_plugin_kit::reading::Reading;
use std::collections::HashMap;

/// One element.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Node {
    /// Its qualified name, interned.
    name: u32,
    /// Its attributes in document order: interned name, value.
    attributes: Box<[(u32, Box<str>)]>,
    /// Its child elements kept, in document order.
    children: Vec<u32>,
    /// The byte offset of its start tag.
    offset: u64,
}

/// The elements of a document; the root is node 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    nodes: Vec<Node>,
    names: Vec<Box<str>>,
    index: HashMap<Box<str>, u32>,
}

impl Tree {
    /// How many elements the tree holds.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    fn intern_id(&self, name: &str) -> Option<u32> {
        self.index.get(name).copied()
    }

    fn text(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", |s| s)
    }

    /// Node `i`'s name ("" when there is no node `i`).
    pub fn name(&self, i: usize) -> &str {
        self.nodes.get(i).map_or("", |n| self.text(n.name))
    }

    /// Node `i`'s byte offset.
    pub fn offset(&self, i: usize) -> u64 {
        self.nodes.get(i).map_or(0, |n| n.offset)
    }

    /// Node `i`'s child elements, in order.
    pub fn all_children(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.nodes
            .get(i)
            .into_iter()
            .flat_map(|n| n.children.iter())
            .map(|&c| c as usize)
    }

    /// The child elements of node `i` named `name`, in order.
    pub fn children<'t>(&'t self, i: usize, name: &str) -> impl Iterator<Item = usize> + 't {
        let id = self.intern_id(name);
        self.all_children(i)
            .filter(move |&c| id.is_some() && self.nodes.get(c).map(|n| n.name) == id)
    }

    /// The first child of node `i` named `name`, as `xml_node::child` finds it.
    pub fn child(&self, i: usize, name: &str) -> Option<usize> {
        self.children(i, name).next()
    }

    /// Node `i`'s attribute `name`.
    pub fn attribute(&self, i: usize, name: &str) -> Option<&str> {
        let id = self.intern_id(name)?;
        self.nodes
            .get(i)?
            .attributes
            .iter()
            .find(|(n, _)| *n == id)
            .map(|(_, v)| &**v)
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.index.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.into());
        self.index.insert(name.into(), id);
        id
    }
}

/// Which subtrees a builder leaves out: given an element's name, its parent's and its
/// grandparent's ("" above the root), whether to drop the element and all it holds.
pub type Skip = fn(name: &str, parent: &str, grandparent: &str) -> bool;

/// Builds a [`Tree`] from a document's events, its findings noted in a reading.
#[derive(Debug)]
pub struct Builder<'r> {
    tree: Tree,
    open: Vec<u32>,
    skipping: usize,
    skip: Skip,
    /// Bytes the tree may still take (an estimate: each node's fixed part and its strings).
    budget: u64,
    reading: &'r mut Reading,
}

/// What a node costs besides its strings: the node, its slot in its parent's children, the
/// allocations' headers.
const NODE_COST: u64 = 96;
/// What an attribute costs besides its value.
const ATTRIBUTE_COST: u64 = 24;

impl<'r> Builder<'r> {
    /// A builder whose tree may take `budget` bytes, leaving out what `skip` says, noting
    /// into `reading`.
    pub fn new(budget: u64, skip: Skip, reading: &'r mut Reading) -> Self {
        Builder {
            tree: Tree::default(),
            open: Vec::new(),
            skipping: 0,
            skip,
            budget,
            reading,
        }
    }

    /// The tree built.
    pub fn finish(self) -> Tree {
        self.tree
    }

    fn open_name(&self, back: usize) -> &str {
        self.open
            .len()
            .checked_sub(back)
            .and_then(|i| self.open.get(i))
            .map_or("", |&n| self.tree.name(n as usize))
    }
}

impl Sink for Builder<'_> {
    fn reading(&mut self) -> &mut Reading {
        self.reading
    }

    fn start(&mut self, tag: StartTag<'_>) -> Result<(), Refusal> {
        if self.skipping > 0 {
            self.skipping += 1;
            return Ok(());
        }
        if (self.skip)(tag.name, self.open_name(1), self.open_name(2)) {
            self.skipping = 1;
            return Ok(());
        }
        let cost = NODE_COST
            + tag
                .attributes
                .iter()
                .map(|(_, v)| ATTRIBUTE_COST + v.len() as u64)
                .sum::<u64>();
        self.budget = self.budget.checked_sub(cost).ok_or_else(|| {
            Refusal::past_bounds(
                tag.offset,
                "a document whose elements take more memory than socair reads a file of this size in",
            )
        })?;
        let index = u32::try_from(self.tree.nodes.len())
            .map_err(|_| Refusal::past_bounds(tag.offset, "more elements than a tree indexes"))?;
        let name = self.tree.intern(tag.name);
        let attributes = tag
            .attributes
            .into_iter()
            .map(|(n, v)| (self.tree.intern(n), Box::<str>::from(v.as_ref())))
            .collect();
        self.tree.nodes.push(Node {
            name,
            attributes,
            children: Vec::new(),
            offset: tag.offset,
        });
        if let Some(&parent) = self.open.last() {
            if let Some(p) = self.tree.nodes.get_mut(parent as usize) {
                p.children.push(index);
            }
        }
        self.open.push(index);
        Ok(())
    }

    fn end(&mut self) -> Result<(), Refusal> {
        if self.skipping > 0 {
            self.skipping -= 1;
        } else {
            self.open.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::{read, Limits};

    fn keep_all(_: &str, _: &str, _: &str) -> bool {
        false
    }

    #[test]
    fn lookups_follow_pugixml() {
        let doc =
            br#"<net a="1"><layers><layer id="0"/><x/><layer id="1"/></layers><layers/></net>"#;
        let mut r = Reading::new("t", doc.len() as u64);
        let mut b = Builder::new(1 << 20, keep_all, &mut r);
        read(doc, &Limits::DEFAULT, "", &mut b).unwrap();
        let t = b.finish();
        assert_eq!(t.len(), 6);
        assert_eq!(t.attribute(0, "a"), Some("1"));
        assert_eq!(t.attribute(0, "never"), None);
        let layers = t.child(0, "layers").unwrap();
        assert_eq!(
            (layers, t.name(layers), t.offset(layers)),
            (1, "layers", 11)
        );
        let ids: Vec<_> = t
            .children(layers, "layer")
            .map(|l| t.attribute(l, "id").unwrap().to_owned())
            .collect();
        assert_eq!(ids, ["0", "1"]);
        assert_eq!(t.children(0, "layers").count(), 2);
        assert_eq!(t.child(0, "edges"), None);
        assert_eq!(t.name(99), "");
        assert_eq!(t.all_children(layers).count(), 3);
    }

    #[test]
    fn skipped_subtrees_are_left_out() {
        fn no_ports(name: &str, parent: &str, _: &str) -> bool {
            name == "port" && parent == "output"
        }
        let doc = br#"<net><layer><output><port id="0"><dim>1</dim><port/></port></output></layer><port/></net>"#;
        let mut r = Reading::new("t", doc.len() as u64);
        let mut b = Builder::new(1 << 20, no_ports, &mut r);
        read(doc, &Limits::DEFAULT, "", &mut b).unwrap();
        let t = b.finish();
        let names: Vec<_> = (0..t.len()).map(|i| t.name(i)).collect();
        assert_eq!(names, ["net", "layer", "output", "port"]);
        assert_eq!(t.all_children(0).count(), 2);
    }

    #[test]
    fn the_budget_bounds_the_tree() {
        let doc = "<a>".to_owned() + &"<b x=\"1\"/>".repeat(100) + "</a>";
        let mut r = Reading::new("t", doc.len() as u64);
        let mut b = Builder::new(1_000, keep_all, &mut r);
        let e = read(doc.as_bytes(), &Limits::DEFAULT, "", &mut b).unwrap_err();
        assert!(e.reason.contains("memory"), "{e:?}");
    }
}
