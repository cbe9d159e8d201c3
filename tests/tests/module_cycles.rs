//! No crate of the workspace has a cycle among its modules.
//!
//! Every library and binary target of every workspace member (found from
//! `cargo metadata`, not from a list kept here) is read from its crate root,
//! following `mod` declarations (with `#[path]`) as rustc does. A module is a
//! file: `x.rs`, or the `mod.rs` (or `#[path]` file) of a folder; an inline
//! `mod x { .. }` belongs to its file. `#[cfg(test)]` items and `*_tests.rs`
//! files are left out.
//!
//! Module `a` depends on module `b` when `a` names an item of `b` by a path:
//! a `use` of `crate::…`, `super::…`, `self::…` or a child module, or such a
//! path in code (`crate::x::f()`, `super::T`, `child::f()`). A name is
//! followed through named re-exports (`pub use b::T` in `a`'s parent makes
//! `super::T` an edge to `b`); a name a module only re-exports (a `pub use`
//! it does not use itself) and a `mod` declaration are not edges; a name
//! reached through a glob re-export or from another crate is an edge to the
//! module it was named through. So a child naming its parent's items depends
//! on the parent, and a parent calling into its child depends on the child.
//! Doc links are text, not paths, and are not edges.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod workspace;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use proc_macro2::{Spacing, TokenStream, TokenTree};
use quote::ToTokens;
use serde_json::Value;

/// Every library and binary target of the workspace: (name, crate root).
fn crate_roots() -> Vec<(String, PathBuf)> {
    let metadata = workspace::metadata();
    let mut roots = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        for target in package["targets"].as_array().unwrap() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            if kinds
                .iter()
                .any(|k| matches!(*k, "lib" | "rlib" | "proc-macro" | "bin"))
            {
                let name = format!(
                    "{} ({})",
                    package["name"].as_str().unwrap(),
                    target["name"].as_str().unwrap()
                );
                roots.push((name, PathBuf::from(target["src_path"].as_str().unwrap())));
            }
        }
    }
    roots.sort();
    roots
}

/// One leaf of a `use` tree: `a::b::c` (binding `c`), `a::b as x`
/// (binding `x`), or `a::b::*` (no binding).
#[derive(Debug, Clone)]
struct UseLeaf {
    public: bool,
    path: Vec<String>,
    binding: Option<String>,
}

#[derive(Debug)]
struct Module {
    /// `a::b::c` from the crate root (empty for the root).
    path: Vec<String>,
    file: PathBuf,
    parent: Option<usize>,
    /// The file module this module belongs to (itself for a file).
    node: usize,
    children: BTreeMap<String, usize>,
    uses: Vec<UseLeaf>,
    /// Paths of two or more segments written in code (outside `use`).
    code_paths: Vec<Vec<String>>,
    /// Every identifier of the module's code (outside `use`).
    idents: BTreeSet<String>,
}

/// The modules of one crate, index 0 the root.
struct Crate {
    modules: Vec<Module>,
}

fn is_test_cfg(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .to_token_stream()
                .into_iter()
                .any(|t| contains_ident(&t, "test"))
    })
}

fn contains_ident(tree: &TokenTree, name: &str) -> bool {
    match tree {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => g.stream().into_iter().any(|t| contains_ident(&t, name)),
        _ => false,
    }
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

fn use_leaves(tree: &syn::UseTree, prefix: &mut Vec<String>, public: bool, out: &mut Vec<UseLeaf>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, public, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut path = prefix.clone();
            let binding = if name == "self" {
                prefix.last().cloned()
            } else {
                path.push(name.clone());
                Some(name)
            };
            out.push(UseLeaf {
                public,
                path,
                binding,
            });
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            out.push(UseLeaf {
                public,
                path,
                binding: Some(r.rename.to_string()),
            });
        }
        syn::UseTree::Glob(_) => out.push(UseLeaf {
            public,
            path: prefix.clone(),
            binding: None,
        }),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_leaves(t, prefix, public, out);
            }
        }
    }
}

/// Paths of at least two segments in `tokens` (`a::b`, `crate::x::y`), and
/// every identifier.
fn scan_tokens(tokens: TokenStream, paths: &mut Vec<Vec<String>>, idents: &mut BTreeSet<String>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let is_colon2 = |i: usize| {
        matches!((trees.get(i), trees.get(i + 1)),
            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
    };
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Group(g) => scan_tokens(g.stream(), paths, idents),
            TokenTree::Ident(ident) => {
                idents.insert(ident.to_string());
                let after_field =
                    i >= 1 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.');
                let after_path_or_field = after_field || (i >= 2 && is_colon2(i - 2));
                if !after_path_or_field && is_colon2(i + 1) {
                    let mut path = vec![ident.to_string()];
                    let mut j = i + 1;
                    while is_colon2(j) {
                        match trees.get(j + 2) {
                            Some(TokenTree::Ident(next)) => {
                                path.push(next.to_string());
                                idents.insert(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    paths.push(path);
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

impl Crate {
    fn load(root: &Path) -> Crate {
        let mut krate = Crate {
            modules: Vec::new(),
        };
        krate.load_file(root, Vec::new(), None, true);
        krate
    }

    /// Loads the module in `file`; `owns_dir`: its children are files of
    /// its own folder (a crate root, a `mod.rs`, a `#[path]` file).
    fn load_file(
        &mut self,
        file: &Path,
        path: Vec<String>,
        parent: Option<usize>,
        owns_dir: bool,
    ) -> usize {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let parsed = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("cannot parse {}: {e}", file.display()));
        let index = self.new_module(path, file, parent, None);
        let dir = if owns_dir {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        self.load_items(index, &parsed.items, &dir);
        index
    }

    fn new_module(
        &mut self,
        path: Vec<String>,
        file: &Path,
        parent: Option<usize>,
        node: Option<usize>,
    ) -> usize {
        let index = self.modules.len();
        self.modules.push(Module {
            path,
            file: file.to_path_buf(),
            parent,
            node: node.unwrap_or(index),
            children: BTreeMap::new(),
            uses: Vec::new(),
            code_paths: Vec::new(),
            idents: BTreeSet::new(),
        });
        index
    }

    fn load_items(&mut self, index: usize, items: &[syn::Item], dir: &Path) {
        for item in items {
            match item {
                syn::Item::Use(u) if !is_test_cfg(&u.attrs) => {
                    let public = !matches!(u.vis, syn::Visibility::Inherited);
                    let mut leaves = Vec::new();
                    use_leaves(&u.tree, &mut Vec::new(), public, &mut leaves);
                    self.modules[index].uses.extend(leaves);
                }
                syn::Item::Mod(m) if !is_test_cfg(&m.attrs) => {
                    let m_is_file_level = self.modules[index].node == index;
                    let name = m.ident.to_string();
                    let mut path = self.modules[index].path.clone();
                    path.push(name.clone());
                    let child = match &m.content {
                        Some((_, items)) => {
                            let file = self.modules[index].file.clone();
                            let node = self.modules[index].node;
                            let child = self.new_module(path, &file, Some(index), Some(node));
                            self.load_items(child, items, &dir.join(&name));
                            child
                        }
                        None => {
                            let (file, owns_dir) = match path_attr(&m.attrs) {
                                // Relative to the folder of the file that declares it.
                                Some(p) if m_is_file_level => {
                                    (self.modules[index].file.parent().unwrap().join(p), true)
                                }
                                Some(p) => (dir.join(p), true),
                                None => {
                                    let flat = dir.join(format!("{name}.rs"));
                                    if flat.is_file() {
                                        (flat, false)
                                    } else {
                                        (dir.join(&name).join("mod.rs"), true)
                                    }
                                }
                            };
                            if file.to_string_lossy().ends_with("_tests.rs") {
                                continue;
                            }
                            self.load_file(&file, path, Some(index), owns_dir)
                        }
                    };
                    self.modules[index].children.insert(name, child);
                }
                syn::Item::Impl(imp) if !is_test_cfg(&imp.attrs) => {
                    let mut imp = imp.clone();
                    imp.items.retain(|i| match i {
                        syn::ImplItem::Fn(f) => !is_test_cfg(&f.attrs),
                        syn::ImplItem::Const(c) => !is_test_cfg(&c.attrs),
                        syn::ImplItem::Type(t) => !is_test_cfg(&t.attrs),
                        _ => true,
                    });
                    self.scan(index, imp.to_token_stream());
                }
                syn::Item::Use(_) | syn::Item::Mod(_) | syn::Item::Impl(_) => {}
                other => {
                    let attrs: &[syn::Attribute] = match other {
                        syn::Item::Fn(f) => &f.attrs,
                        syn::Item::Const(c) => &c.attrs,
                        syn::Item::Static(s) => &s.attrs,
                        syn::Item::Struct(s) => &s.attrs,
                        syn::Item::Enum(e) => &e.attrs,
                        syn::Item::Trait(t) => &t.attrs,
                        syn::Item::Type(t) => &t.attrs,
                        syn::Item::Macro(m) => &m.attrs,
                        _ => &[],
                    };
                    if !is_test_cfg(attrs) {
                        self.scan(index, other.to_token_stream());
                    }
                }
            }
        }
    }

    fn scan(&mut self, index: usize, tokens: TokenStream) {
        let module = &mut self.modules[index];
        scan_tokens(tokens, &mut module.code_paths, &mut module.idents);
    }

    fn root_of(&self, mut index: usize) -> usize {
        while let Some(p) = self.modules[index].parent {
            index = p;
        }
        index
    }

    /// Where `path`, written in module `from`, leads: `Ok(module)` when it
    /// names a module, `Err(Some(module))` for an item of that module,
    /// `Err(None)` for another crate's.
    fn resolve(&self, from: usize, path: &[String], depth: usize) -> Result<usize, Option<usize>> {
        if depth > 16 || path.is_empty() {
            return Err(None);
        }
        let (mut current, rest) = match path[0].as_str() {
            "crate" => (self.root_of(from), &path[1..]),
            "self" => (from, &path[1..]),
            "super" => {
                let mut current = from;
                let mut rest = path;
                while rest.first().map(String::as_str) == Some("super") {
                    current = self.modules[current].parent.ok_or(None)?;
                    rest = &rest[1..];
                }
                (current, rest)
            }
            first => match self.modules[from].children.get(first) {
                Some(&child) => (child, &path[1..]),
                None => match self.alias(from, first, depth) {
                    Some(module) => (module, &path[1..]),
                    None => return Err(None),
                },
            },
        };
        for (k, segment) in rest.iter().enumerate() {
            if segment == "self" {
                continue;
            }
            if let Some(&child) = self.modules[current].children.get(segment) {
                current = child;
                continue;
            }
            let leaf = self.modules[current]
                .uses
                .iter()
                .find(|u| u.binding.as_deref() == Some(segment.as_str()));
            let Some(leaf) = leaf else {
                return Err(Some(current));
            };
            match self.resolve(current, &leaf.path, depth + 1) {
                Ok(module) if k + 1 < rest.len() => current = module,
                Ok(module) => return Ok(module),
                Err(Some(module)) => return Err(Some(module)),
                Err(None) => return Err(Some(current)),
            }
        }
        Ok(current)
    }

    /// The module a `use` of module `from` binds to `name`, if any.
    fn alias(&self, from: usize, name: &str, depth: usize) -> Option<usize> {
        let leaf = self.modules[from]
            .uses
            .iter()
            .find(|u| u.binding.as_deref() == Some(name))?;
        if leaf.path.first().map(String::as_str) == Some(name) {
            return None;
        }
        self.resolve(from, &leaf.path, depth + 1).ok()
    }

    /// Edges between file modules: (from, to) → the path that made it.
    fn edges(&self) -> BTreeMap<(usize, usize), String> {
        let mut edges = BTreeMap::new();
        for (index, module) in self.modules.iter().enumerate() {
            let mut add = |target: usize, why: &[String]| {
                let (a, b) = (module.node, self.modules[target].node);
                if a != b {
                    edges.entry((a, b)).or_insert_with(|| why.join("::"));
                }
            };
            for leaf in &module.uses {
                let used = match &leaf.binding {
                    Some(binding) => !leaf.public || module.idents.contains(binding),
                    None => !leaf.public,
                };
                match self.resolve(index, &leaf.path, 0) {
                    // A module imported by name: its items, named in code, are the edges.
                    Ok(_) if leaf.binding.is_some() => {}
                    Ok(target) | Err(Some(target)) if used => add(target, &leaf.path),
                    _ => {}
                }
            }
            for path in &module.code_paths {
                if let Ok(target) | Err(Some(target)) = self.resolve(index, path, 0) {
                    add(target, path);
                }
            }
        }
        edges
    }

    fn name(&self, node: usize) -> String {
        let module = &self.modules[node];
        let path = if module.path.is_empty() {
            "crate".to_string()
        } else {
            module.path.join("::")
        };
        let file = module
            .file
            .strip_prefix(workspace::root())
            .unwrap_or(&module.file);
        format!("{path} ({})", file.display())
    }
}

/// One shortest cycle of every strongly connected component with more than
/// one node.
fn cycles(
    nodes: &[usize],
    edges: &BTreeMap<(usize, usize), String>,
) -> Vec<(BTreeSet<usize>, Vec<usize>)> {
    let mut next: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &(a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    let reach = |from: usize| -> BTreeSet<usize> {
        let mut seen = BTreeSet::from([from]);
        let mut queue = VecDeque::from([from]);
        while let Some(n) = queue.pop_front() {
            for &m in next.get(&n).into_iter().flatten() {
                if seen.insert(m) {
                    queue.push_back(m);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<usize, BTreeSet<usize>> = nodes.iter().map(|&n| (n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut found = Vec::new();
    for &n in nodes {
        if done.contains(&n) {
            continue;
        }
        let component: BTreeSet<usize> = reaches[&n]
            .iter()
            .copied()
            .filter(|m| reaches[m].contains(&n))
            .collect();
        done.extend(component.iter().copied());
        if component.len() < 2 {
            continue;
        }
        // Shortest way from n back to n inside the component.
        let mut from: BTreeMap<usize, usize> = BTreeMap::new();
        let mut queue = VecDeque::from([n]);
        'search: while let Some(a) = queue.pop_front() {
            for &b in next.get(&a).into_iter().flatten() {
                if !component.contains(&b) {
                    continue;
                }
                if b == n {
                    let mut cycle = vec![a];
                    let mut at = a;
                    while at != n {
                        at = from[&at];
                        cycle.push(at);
                    }
                    cycle.reverse();
                    found.push((component.clone(), cycle));
                    break 'search;
                }
                if b != n && !from.contains_key(&b) {
                    from.insert(b, a);
                    queue.push_back(b);
                }
            }
        }
    }
    found
}

/// A strongly connected set of modules: its members' paths (`crate` for
/// the root), sorted, and one shortest cycle through them, as text.
#[derive(Debug)]
struct Found {
    members: Vec<String>,
    cycle: String,
}

/// The cycles of the crate at `root`.
fn crate_cycles(root: &Path) -> Vec<Found> {
    let krate = Crate::load(root);
    let edges = krate.edges();
    let nodes: Vec<usize> = (0..krate.modules.len())
        .filter(|&i| krate.modules[i].node == i)
        .collect();
    let path = |node: usize| match krate.modules[node].path.join("::") {
        root if root.is_empty() => "crate".to_string(),
        path => path,
    };
    cycles(&nodes, &edges)
        .into_iter()
        .map(|(component, cycle)| {
            let mut text = krate.name(cycle[0]);
            for (k, &a) in cycle.iter().enumerate() {
                let b = cycle[(k + 1) % cycle.len()];
                text += &format!(" -[{}]-> {}", edges[&(a, b)], krate.name(b));
            }
            let mut members: Vec<String> = component.into_iter().map(path).collect();
            members.sort();
            Found {
                members,
                cycle: text,
            }
        })
        .collect()
}

#[test]
fn no_crate_has_a_module_cycle() {
    let roots = crate_roots();
    assert!(
        roots
            .iter()
            .any(|(name, _)| name.starts_with("hermes-runtime ")),
        "crates found: {roots:?}"
    );
    let mut found = Vec::new();
    for (name, root) in &roots {
        for cycle in crate_cycles(root) {
            found.push(format!("{name}: {:?}\n    {}", cycle.members, cycle.cycle));
        }
    }
    assert!(
        found.is_empty(),
        "module cycles (each `a -[path]-> b`: a names an item of b by that path):\n{}",
        found.join("\n")
    );
}

/// Writes `files` (path → text) under a temporary folder and returns the
/// cycles of the crate rooted at its `lib.rs`.
fn cycles_of(files: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    crate_cycles(&dir.path().join("lib.rs"))
        .into_iter()
        .map(|found| found.cycle)
        .collect()
}

#[test]
fn the_check_finds_the_kinds_of_cycle_it_is_for() {
    // Siblings through `super::`.
    let found = cycles_of(&[
        ("lib.rs", "mod a; mod b;"),
        ("a.rs", "use super::b::B; pub struct A;"),
        ("b.rs", "pub struct B; fn f() -> crate::a::A { todo!() }"),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("a (") && found[0].contains("-[super::b::B]-> b ("),
        "{found:?}"
    );

    // The crate root calling a child that calls a root function.
    let found = cycles_of(&[
        (
            "lib.rs",
            "mod a; pub fn run() { a::go() } pub fn helper() {}",
        ),
        ("a.rs", "pub fn go() { crate::helper() }"),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");

    // A name reached through the parent's re-export leads to its module,
    // and a re-export alone is no edge: no cycle.
    let found = cycles_of(&[
        ("lib.rs", "mod a; mod b; pub use a::A; pub use b::B;"),
        ("a.rs", "pub struct A; fn f(_: crate::B) {}"),
        ("b.rs", "pub struct B;"),
    ]);
    assert_eq!(found, Vec::<String>::new());

    // ... but through a glob re-export, or a re-export the parent itself
    // uses, it is an edge to the parent.
    let found = cycles_of(&[
        ("lib.rs", "mod a; pub use a::*; fn g() -> a::A { a::A }"),
        (
            "a.rs",
            "pub struct A; fn f() -> Option<crate::Other> { None }",
        ),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");

    // A folder module, its children and `#[path]`; a child's `use super::*`.
    let found = cycles_of(&[
        ("lib.rs", "#[path = \"x/main.rs\"] mod x;"),
        ("x/main.rs", "mod y; pub struct T; fn f() { self::y::g(); }"),
        ("x/y.rs", "use super::*; pub fn g() {}"),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("x/y.rs"), "{found:?}");

    // Test code and `*_tests.rs` files are left out.
    let found = cycles_of(&[
        (
            "lib.rs",
            "mod a; pub struct R; #[cfg(test)] fn t() { a::f(); } #[cfg(test)] #[path = \"a_tests.rs\"] mod tests;",
        ),
        ("a.rs", "pub fn f() -> crate::R { crate::R }"),
        ("a_tests.rs", "use crate::a::f;"),
    ]);
    assert_eq!(found, Vec::<String>::new());
}
