//! The code's structure, read from the sources: no file imports another in a circle (in the
//! host and in every plugin), the host's rooms import only the rooms below them, and only the
//! host's `cli` room prints or knows exit codes.
//!
//! An import is any path that starts at `crate::`, `self::`, `super::` or a child module, in a
//! `use` or in code. It is resolved to the file that defines the item, following `pub use`
//! re-exports, so a room's `mod.rs` that re-exports its children is not a circle.

use crate::common::repo;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The host's rooms, lowest first: a room may use only the rooms before it.
const HOST_ROOMS: &[&str] = &[
    "base",
    "read",
    "fingerprint",
    "report",
    "convert",
    "airlock",
    "cli",
    "fuzzing",
];

/// A crate's modules: module path → file, and each file's code without comments and strings.
struct CrateSource {
    root: PathBuf,
    files: BTreeMap<Vec<String>, PathBuf>,
    code: BTreeMap<PathBuf, String>,
}

/// Code with comments removed and the contents of string and char literals blanked, so that
/// neither a brace nor a path inside them counts.
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                // A raw string: r"…", r#"…"#, …
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                j += 1;
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                while j < b.len() && !b[j..].starts_with(&close) {
                    j += 1;
                }
                out.push_str("\"\"");
                i = j + close.len();
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                out.push_str("\"\"");
                i += 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
                let rest = &text[i + 1..];
                let len = if rest.starts_with('\\') {
                    rest.find('\'').map(|e| e + 1)
                } else {
                    rest.chars()
                        .next()
                        .filter(|_| rest.chars().nth(1) == Some('\''))
                        .map(|c| c.len_utf8() + 1)
                };
                match len {
                    Some(n) => {
                        out.push_str("' '");
                        i += n + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            _ => {
                let c = text[i..].chars().next().expect("inside the text");
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

impl CrateSource {
    fn read(root: &Path) -> CrateSource {
        let mut files = BTreeMap::new();
        let mut code = BTreeMap::new();
        let mut stack = vec![root.to_owned()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let rel = path.strip_prefix(root).unwrap();
                let mut module: Vec<String> = rel
                    .with_extension("")
                    .iter()
                    .map(|s| s.to_string_lossy().into_owned())
                    .collect();
                match module.last().map(String::as_str) {
                    Some("lib") if module.len() == 1 => module.clear(),
                    // The binary's root reaches the library as an outside crate.
                    Some("main") if module.len() == 1 => continue,
                    Some("mod") => {
                        module.pop();
                    }
                    _ => {}
                }
                code.insert(
                    path.clone(),
                    strip(&std::fs::read_to_string(&path).unwrap()),
                );
                files.insert(module, path);
            }
        }
        CrateSource {
            root: root.to_owned(),
            files,
            code,
        }
    }

    fn module_of(&self, file: &Path) -> Vec<String> {
        self.files
            .iter()
            .find(|(_, f)| f.as_path() == file)
            .map(|(m, _)| m.clone())
            .expect("a file of the crate")
    }

    /// The child modules of `module` that have files.
    fn children(&self, module: &[String]) -> BTreeSet<String> {
        self.files
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .map(|m| m[module.len()].clone())
            .collect()
    }

    /// The file defining the item at `path` (absolute segments from the crate root), following
    /// `pub use` re-exports from a module's file.
    fn resolve(&self, path: &[String], depth: usize) -> Option<PathBuf> {
        let mut k = path.len();
        while k > 0 && !self.files.contains_key(&path[..k]) {
            k -= 1;
        }
        let file = self.files.get(&path[..k])?.clone();
        if k < path.len() && depth < 8 {
            let item = &path[k];
            for (name, target) in self.reexports(&path[..k]) {
                if &name == item {
                    // An item of another crate, re-exported here: not a file of this one.
                    let mut full = target?;
                    full.extend_from_slice(&path[k + 1..]);
                    return self.resolve(&full, depth + 1).or(Some(file));
                }
            }
        }
        Some(file)
    }

    /// `pub use` re-exports of a module: exported name → absolute path, `None` for a name
    /// re-exported from another crate (not a file of this one).
    fn reexports(&self, module: &[String]) -> Vec<(String, Option<Vec<String>>)> {
        let Some(file) = self.files.get(module) else {
            return Vec::new();
        };
        let code = &self.code[file];
        let mut out = Vec::new();
        for stmt in use_statements(code).into_iter().filter(|s| s.public) {
            for path in expand_use(&stmt.tree) {
                let (segments, alias) = path;
                let name = alias.unwrap_or_else(|| segments.last().cloned().unwrap());
                out.push((name, self.absolute(module, &segments)));
            }
        }
        out
    }

    /// Makes `segments`, written in `module`, absolute; `None` for paths into other crates.
    fn absolute(&self, module: &[String], segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        let mut base: Vec<String> = match first.as_str() {
            "crate" => Vec::new(),
            "self" => module.to_vec(),
            "super" => {
                let mut m = module.to_vec();
                let mut rest = segments;
                while rest.first().map(String::as_str) == Some("super") {
                    m.pop()?;
                    rest = &rest[1..];
                }
                m.extend_from_slice(rest);
                return Some(m);
            }
            child if self.children(module).contains(child) => {
                let mut m = module.to_vec();
                m.push(child.to_owned());
                m.extend_from_slice(&segments[1..]);
                return Some(m);
            }
            _ => return None,
        };
        base.extend_from_slice(&segments[1..]);
        Some(base)
    }

    /// Every file each file imports (itself excluded).
    fn edges(&self) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
        let mut edges = BTreeMap::new();
        for (file, code) in &self.code {
            let module = self.module_of(file);
            let inline = inline_modules(code);
            let mut paths: Vec<(usize, Vec<String>)> = Vec::new();
            for stmt in use_statements(code) {
                paths.extend(
                    expand_use(&stmt.tree)
                        .into_iter()
                        .map(|(p, _)| (stmt.at, p)),
                );
            }
            paths.extend(code_paths(code, &self.children(&module)));
            let mut to = BTreeSet::new();
            for (at, p) in paths {
                // Inside `mod tests { … }`, `super` is the file's own module.
                let mut here = module.clone();
                here.extend(
                    inline
                        .iter()
                        .filter(|(span, _)| span.contains(&at))
                        .map(|(_, name)| name.clone()),
                );
                if let Some(target) = self
                    .absolute(&here, &p)
                    .and_then(|abs| self.resolve(&abs, 0))
                {
                    if &target != file {
                        to.insert(target);
                    }
                }
            }
            edges.insert(file.clone(), to);
        }
        edges
    }

    fn rel(&self, file: &Path) -> String {
        file.strip_prefix(&self.root)
            .unwrap_or(file)
            .display()
            .to_string()
    }
}

struct UseStatement {
    public: bool,
    /// The tree with whitespace removed except around `as`.
    tree: String,
    at: usize,
}

/// Inline modules (`mod name { … }`) of stripped code: their spans and names, outermost first.
fn inline_modules(code: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].find("mod ") {
        let start = i + at;
        i = start + 4;
        if start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_') {
            continue;
        }
        let rest = &code[i..];
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let after = rest[name_len..].trim_start();
        if name_len == 0 || !after.starts_with('{') {
            continue;
        }
        let open = i + name_len + (rest[name_len..].len() - after.len());
        let mut depth = 0;
        let mut end = code.len();
        for (k, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((open..end, rest[..name_len].to_owned()));
    }
    out
}

/// The `use` statements of stripped code (`pub use`, `pub(crate) use` and plain `use`).
fn use_statements(code: &str) -> Vec<UseStatement> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(at) = code[i..].find("use ") {
        let start = i + at;
        i = start + 4;
        let before = code[..start].trim_end();
        let word_start =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        if !word_start {
            continue;
        }
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let statement_start = before.is_empty()
            || before.ends_with(';')
            || before.ends_with('{')
            || before.ends_with('}')
            || before.ends_with(']')
            || before.ends_with("pub")
            || before.ends_with(')');
        if !statement_start {
            continue;
        }
        let Some(end) = code[i..].find(';') else {
            break;
        };
        let words: Vec<&str> = code[i..i + end].split_whitespace().collect();
        out.push(UseStatement {
            public,
            tree: words
                .join(" ")
                .replace(" as ", "\u{0}")
                .replace(' ', "")
                .replace('\u{0}', " as "),
            at: start,
        });
        i += end;
    }
    out
}

/// Expands a use tree (`a::{b,c::{d as e}}`) into paths and aliases.
fn expand_use(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    fn split_top(s: &str) -> Vec<&str> {
        let (mut depth, mut start, mut parts) = (0, 0, Vec::new());
        for (i, c) in s.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&s[start..]);
        parts.into_iter().filter(|p| !p.is_empty()).collect()
    }
    fn walk(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, Option<String>)>) {
        let tree = tree.trim_start_matches("::");
        if let Some(brace) = tree.find('{') {
            let head: Vec<String> = tree[..brace]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            let inner = &tree[brace + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut p = prefix.to_vec();
            p.extend(head);
            for part in split_top(inner) {
                walk(&p, part, out);
            }
            return;
        }
        let (path, alias) = match tree.split_once(" as ") {
            Some((p, a)) => (p, Some(a.to_owned())),
            None => (tree, None),
        };
        let mut p = prefix.to_vec();
        p.extend(
            path.split("::")
                .filter(|s| !s.is_empty() && *s != "*")
                .map(str::to_owned),
        );
        if p.last().map(String::as_str) == Some("self") {
            p.pop();
        }
        if !p.is_empty() {
            out.push((p, alias));
        }
    }
    let mut out = Vec::new();
    walk(&[], tree, &mut out);
    out
}

/// Paths in code (outside `use`) that start at `crate::`, `self::`, `super::` or a child
/// module of the file's module.
fn code_paths(code: &str, children: &BTreeSet<String>) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if word_start && (b[i].is_ascii_alphabetic() || b[i] == b'_') {
            let mut j = i;
            let mut segments = Vec::new();
            loop {
                let s = j;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                segments.push(code[s..j].to_owned());
                if code[j..].starts_with("::")
                    && code[j + 2..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                {
                    j += 2;
                } else {
                    break;
                }
            }
            let first = segments[0].as_str();
            if segments.len() > 1
                && (matches!(first, "crate" | "self" | "super") || children.contains(first))
            {
                out.push((i, segments));
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The circles among files (strongly connected components of more than one file).
fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    // Tarjan's algorithm, iteratively.
    let nodes: Vec<&PathBuf> = edges.keys().collect();
    let index_of: BTreeMap<&PathBuf, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            edges[*n]
                .iter()
                .filter_map(|t| index_of.get(t).copied())
                .collect()
        })
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut next, mut out) = (Vec::new(), 0, Vec::new());
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some((v, child)) = work.pop() {
            if child == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = succ[v].get(child) {
                work.push((v, child + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                loop {
                    let w = stack.pop().unwrap();
                    on_stack[w] = false;
                    component.push(nodes[w].clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    out.push(component);
                }
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    out
}

/// What is wrong with a crate's structure: its circles, and (with rooms) every import that runs
/// from a room up to a later one.
fn problems(src: &Path, rooms: Option<&[&str]>) -> Vec<String> {
    let krate = CrateSource::read(src);
    let edges = krate.edges();
    let mut out: Vec<String> = circles(&edges)
        .into_iter()
        .map(|c| {
            let names: Vec<String> = c.iter().map(|f| krate.rel(f)).collect();
            let ties: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    edges[a]
                        .iter()
                        .filter(|b| c.contains(b))
                        .map(|b| format!("{} -> {}", krate.rel(a), krate.rel(b)))
                })
                .collect();
            format!("import circle: {} ({})", names.join(", "), ties.join("; "))
        })
        .collect();
    if let Some(rooms) = rooms {
        let room = |f: &Path| -> Option<usize> {
            let m = krate.module_of(f);
            let first = m.first()?;
            Some(
                rooms
                    .iter()
                    .position(|r| r == first)
                    .unwrap_or_else(|| panic!("{}: in no room of {rooms:?}", f.display())),
            )
        };
        for (from, tos) in &edges {
            for to in tos {
                if let (Some(a), Some(b)) = (room(from), room(to)) {
                    if b > a {
                        out.push(format!(
                            "{} (room {}) imports {} (room {}), a room above it",
                            krate.rel(from),
                            rooms[a],
                            krate.rel(to),
                            rooms[b]
                        ));
                    }
                }
            }
        }
    }
    out
}

/// Printing and exit codes outside the `cli` room.
fn prints_outside_cli(src: &Path) -> Vec<String> {
    let krate = CrateSource::read(src);
    let mut out = Vec::new();
    for (file, code) in &krate.code {
        if krate.module_of(file).first().map(String::as_str) == Some("cli") {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            for word in [
                "println!",
                "eprintln!",
                "print!",
                "eprint!",
                "dbg!",
                "stdout()",
                "stderr()",
                "process::exit",
                "ExitCode",
                "EXIT_",
            ] {
                let found = line.match_indices(word).any(|(at, _)| {
                    !line[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                });
                if found {
                    out.push(format!("{}:{}: {word}", krate.rel(file), n + 1));
                }
            }
        }
    }
    out
}

fn crate_sources() -> Vec<PathBuf> {
    let mut dirs = vec![repo().join("plugin-api/src")];
    for entry in std::fs::read_dir(repo().join("plugins")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.join("lib.rs").is_file() {
            dirs.push(src);
        }
    }
    dirs.push(repo().join("examples/plugin-template/src"));
    dirs
}

#[test]
fn the_host_has_no_circle_and_its_rooms_import_only_downward() {
    // The check sees the imports it must judge: the command line reaches the scan through a
    // `use`, and the airlock's derivation reaches conversion through a path in code.
    let host = CrateSource::read(&repo().join("host/src"));
    let edges = host.edges();
    let file = |rel: &str| repo().join("host/src").join(rel);
    assert!(edges[&file("cli/mod.rs")].contains(&file("report/scan.rs")));
    assert!(edges[&file("airlock/derive.rs")].contains(&file("convert/mod.rs")));
    assert!(edges.values().map(BTreeSet::len).sum::<usize>() > 100);
    let found = problems(&repo().join("host/src"), Some(HOST_ROOMS));
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn no_plugin_has_an_import_circle() {
    let sources = crate_sources();
    assert!(sources.len() >= 5, "{sources:?}");
    let found: Vec<String> = sources
        .iter()
        .flat_map(|src| {
            problems(src, None)
                .into_iter()
                .map(move |p| format!("{}: {p}", src.display()))
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn only_the_cli_prints_or_knows_exit_codes() {
    let found = prints_outside_cli(&repo().join("host/src"));
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Writes a small crate and returns its `src`.
fn planted(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn a_planted_circle_is_found_and_a_reexport_is_not_one() {
    // a -> b -> c -> a, through a `use`, a path in code and a `super::` path.
    let dir = planted(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod m;\n"),
        ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
        (
            "b.rs",
            "pub struct B;\npub fn f() -> u8 { crate::m::c::C::default().0 }\n",
        ),
        ("m/mod.rs", "pub mod c;\npub mod d;\npub use d::D;\npub use std::rc;\n"),
        (
            "m/c.rs",
            "#[derive(Default)] pub struct C(pub u8);\nfn g() { let _ = super::super::a::A; }\n// crate::b::B in a comment is not an import\n",
        ),
        (
            "m/d.rs",
            "pub struct D;\nfn h() -> crate::m::D { D }\nfn r() -> crate::m::rc::Rc<u8> { todo!() }\n",
        ),
    ]);
    let found = problems(dir.path(), None);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("import circle: a.rs, b.rs, m/c.rs"),
        "{}",
        found[0]
    );
    // m/mod.rs re-exports D from m/d.rs, and m/d.rs names it through m: not a circle.
    assert!(!found[0].contains("m/d.rs"), "{}", found[0]);
}

#[test]
fn a_planted_upward_import_and_a_print_are_found() {
    let dir = planted(&[
        ("lib.rs", "pub mod base;\npub mod cli;\n"),
        ("base/mod.rs", "pub mod x;\n"),
        (
            "base/x.rs",
            "pub fn x() { eprintln!(\"{}\", crate::cli::EXIT_OK); }\n",
        ),
        ("cli/mod.rs", "pub const EXIT_OK: u8 = 0;\n"),
    ]);
    let found = problems(dir.path(), Some(&["base", "cli"]));
    assert_eq!(
        found,
        ["base/x.rs (room base) imports cli/mod.rs (room cli), a room above it"]
    );
    let prints = prints_outside_cli(dir.path());
    assert_eq!(prints, ["base/x.rs:1: eprintln!", "base/x.rs:1: EXIT_"]);
}
