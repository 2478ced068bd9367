//! Reading one crate's sources into a file-level import graph: every `crate::`, `self::` and
//! `super::` path (in macros too), resolved through the crate root's re-exports, and the
//! strongly connected components of that graph (Tarjan).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::Context;
use proc_macro2::{TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// One path of a file that names a module of its crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The line of the path in its file.
    pub line: usize,
    /// The module using it (an inline module's own path inside its file).
    pub from: String,
    /// The path as written (`crate::auth::Credentials`).
    pub path: String,
    /// The module path it resolves to (`auth::Credentials`).
    pub target: String,
}

/// One source file of the crate, parsed, with its module path.
pub struct SourceFile {
    pub file: PathBuf,
    /// `auth::token` for `src/auth/token.rs`, `` for the crate root.
    pub module: String,
    /// A binary's root next to a library (`src/main.rs` beside `src/lib.rs`): a crate of its
    /// own, which reaches the library by its name, so its `crate::` paths are not the library's.
    pub binary: bool,
    pub syntax: syn::File,
}

/// Every `.rs` file under `src`, parsed, except those of modules declared `#[cfg(test)]`.
pub fn read_crate(src: &Path) -> anyhow::Result<Vec<SourceFile>> {
    let mut paths = Vec::new();
    collect(src, &mut paths)?;
    paths.sort();
    let has_lib = src.join("lib.rs").is_file();
    let mut files = Vec::new();
    for file in paths {
        let (module, binary) = module_path(src, &file, has_lib);
        let syntax = parse(&file)?;
        files.push(SourceFile {
            file,
            module,
            binary,
            syntax,
        });
    }
    let mut tests = BTreeSet::new();
    for file in &files {
        test_modules(&file.syntax.items, &file.module, &mut tests);
    }
    files.retain(|f| {
        !tests
            .iter()
            .any(|t| f.module == *t || f.module.starts_with(&format!("{t}::")))
    });
    Ok(files)
}

/// The modules declared `#[cfg(test)] mod name;` (a file of tests, not the library).
fn test_modules(items: &[syn::Item], module: &str, found: &mut BTreeSet<String>) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            let inner = joined_with(&split(module), &[m.ident.to_string()]);
            if is_test(&m.attrs) {
                found.insert(inner);
            } else if let Some((_, items)) = &m.content {
                test_modules(items, &inner, found);
            }
        }
    }
}

pub fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    Ok(())
}

fn parse(file: &Path) -> anyhow::Result<syn::File> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    syn::parse_file(&text).with_context(|| format!("{} does not parse", file.display()))
}

/// `src/auth/mod.rs` → `auth`, `src/auth/token.rs` → `auth::token`, `src/lib.rs` → ``;
/// `src/main.rs` → `` where there is no `lib.rs`, else `main`, a binary of its own.
pub fn module_path(src: &Path, file: &Path, has_lib: bool) -> (String, bool) {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if has_lib && parts == ["main"] {
        return ("main".to_string(), true);
    }
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib"))
        || (parts.len() == 1 && parts[0] == "main")
    {
        parts.pop();
    }
    (parts.join("::"), false)
}

/// What the crate root re-exports: a name (`Client`, `types`, `Error`) and the module path it
/// stands for. A glob re-export (`pub use generated::*`) answers for any other name.
#[derive(Debug, Default)]
pub struct Aliases {
    named: BTreeMap<String, String>,
    glob: Option<String>,
}

pub fn root_aliases(root: &syn::File) -> Aliases {
    fn walk(tree: &syn::UseTree, prefix: &mut Vec<String>, aliases: &mut Aliases) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, aliases);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                aliases.named.insert(name, prefix.join("::"));
            }
            syn::UseTree::Rename(r) => {
                aliases
                    .named
                    .insert(r.rename.to_string(), prefix.join("::"));
            }
            syn::UseTree::Glob(_) => aliases.glob = Some(prefix.join("::")),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    walk(tree, prefix, aliases);
                }
            }
        }
    }
    let mut aliases = Aliases::default();
    for item in &root.items {
        if let syn::Item::Use(u) = item
            && matches!(u.vis, syn::Visibility::Public(_))
        {
            walk(&u.tree, &mut Vec::new(), &mut aliases);
        }
    }
    aliases
}

/// The paths of one file that name a module of its crate.
pub fn edges(file: &SourceFile, modules: &[String], aliases: &Aliases) -> Vec<Edge> {
    if file.binary {
        return Vec::new();
    }
    let mut visitor = Edges {
        module: vec![file.module.clone()],
        modules,
        aliases,
        found: Vec::new(),
    };
    visitor.visit_file(&file.syntax);
    visitor.found
}

struct Edges<'a> {
    /// The module the visitor is in (inline modules push onto it).
    module: Vec<String>,
    /// Every module the crate has (its files' and its table's).
    modules: &'a [String],
    aliases: &'a Aliases,
    found: Vec<Edge>,
}

impl Edges<'_> {
    fn current(&self) -> &str {
        self.module.last().map_or("", String::as_str)
    }

    fn is_module(&self, name: &str) -> bool {
        self.modules.iter().any(|m| m == name)
    }

    /// Records `segments` (a path as written) when it names a module of this crate.
    fn record(&mut self, segments: &[String], line: usize) {
        let Some(target) = self.resolve(segments) else {
            return;
        };
        self.found.push(Edge {
            line,
            from: self.current().to_string(),
            path: segments.join("::"),
            target,
        });
    }

    fn resolve(&self, segments: &[String]) -> Option<String> {
        let (first, rest) = segments.split_first()?;
        let mut base: Vec<String> = match first.as_str() {
            "crate" => Vec::new(),
            "self" => split(self.current()),
            "super" => {
                let mut here = split(self.current());
                here.pop();
                here
            }
            // A child module of the current one, named without `self::` (`use token::X`).
            child => {
                let mut here = split(self.current());
                here.push(child.to_string());
                if !self.is_module(&here.join("::")) {
                    return None;
                }
                return Some(joined_with(&here, rest));
            }
        };
        let mut rest = rest;
        while let Some((next, tail)) = rest.split_first() {
            if next != "super" {
                break;
            }
            base.pop();
            rest = tail;
        }
        if base.is_empty()
            && let Some((name, tail)) = rest.split_first()
            && !self.is_module(name)
        {
            if let Some(target) = self.aliases.named.get(name) {
                return Some(joined_with(&split(target), tail));
            }
            if let Some(glob) = &self.aliases.glob {
                return Some(joined_with(&split(glob), rest));
            }
        }
        Some(joined_with(&base, rest))
    }

    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                if n.ident != "self" {
                    path.push(n.ident.to_string());
                }
                self.record(&path, n.ident.span().start().line);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                self.record(&path, r.ident.span().start().line);
            }
            syn::UseTree::Glob(g) => {
                self.record(prefix, g.star_token.span().start().line);
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(tree, prefix);
                }
            }
        }
    }

    /// Paths in a macro's tokens: `crate`, `self` or `super` followed by `::` and names.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(start)
                    if ["crate", "self", "super"].contains(&start.to_string().as_str()) =>
                {
                    let mut segments = vec![start.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(name)),
                    ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(name.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        self.record(&segments, start.span().start().line);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

pub fn split(module: &str) -> Vec<String> {
    module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn joined_with(base: &[String], rest: &[String]) -> String {
    base.iter()
        .chain(rest)
        .cloned()
        .collect::<Vec<_>>()
        .join("::")
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

impl<'ast> Visit<'ast> for Edges<'_> {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if is_test(&item.attrs) {
            return;
        }
        let mut inner = split(self.current());
        inner.push(item.ident.to_string());
        self.module.push(inner.join("::"));
        syn::visit::visit_item_mod(self, item);
        self.module.pop();
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        if !is_test(&item.attrs) {
            syn::visit::visit_item_fn(self, item);
        }
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if !is_test(&item.attrs) {
            syn::visit::visit_item_impl(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if !is_test(&item.attrs) {
            self.use_tree(&item.tree, &mut Vec::new());
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            self.record(&segments, path.span().start().line);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

/// The longest of `modules` that `path` (a resolved path) starts with; `` (the root) if none.
pub fn longest_prefix<'a>(modules: impl IntoIterator<Item = &'a str>, path: &str) -> &'a str {
    modules
        .into_iter()
        .filter(|name| name.is_empty() || path == *name || path.starts_with(&format!("{name}::")))
        .max_by_key(|name| name.len())
        .unwrap_or("")
}

/// The strongly connected components of a graph of `n` nodes (Tarjan), each sorted; only
/// those of more than one node.
pub fn circles(n: usize, next: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        next: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        found: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.counter);
            self.low[v] = self.counter;
            self.counter += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.next[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(index) if self.on_stack[w] => self.low[v] = self.low[v].min(index),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort_unstable();
                    self.found.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        next,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if tarjan.index[v].is_none() {
            tarjan.visit(v);
        }
    }
    tarjan.found.sort();
    tarjan.found
}

/// The shortest way round from `start` back to `start` inside `component` (breadth first): the
/// nodes in order, `start` first.
pub fn shortest_cycle(start: usize, component: &[usize], next: &[BTreeSet<usize>]) -> Vec<usize> {
    let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &next[v] {
            if !component.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![v];
                let mut at = v;
                while at != start {
                    at = came_from[&at];
                    path.push(at);
                }
                path.reverse();
                return path;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = came_from.entry(w) {
                e.insert(v);
                queue.push_back(w);
            }
        }
    }
    vec![start]
}
