//! `cargo xtask ci`'s `layers` step: every `crate::` path in the client (its generated files
//! included) points to its own layer or one below, checked against the layer table below.
//!
//! The table is data: a module path of `generated-client/src` and its layer. A new file needs
//! one line in [`MODULES`]; the step fails naming it until it has one. A path is resolved to
//! the longest module of the table it starts with (`crate::auth::error::AuthError` →
//! `auth::error`), through the crate root's re-exports (`crate::Client` → `generated`,
//! `crate::types` → `generated::types`). Paths inside macro calls (`format!`, `tracing`) are
//! read from their tokens. Test modules (`#[cfg(test)]`) are not the library and are skipped.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use proc_macro2::{TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// The layers, bottom to top: a module may use its own layer and those below.
pub const LAYERS: &[(&str, &str)] = &[
    (
        "leaves",
        "vocabulary with no dependency in the crate: URLs, body limits, retry rules, the generated types, the authentication error and limits",
    ),
    ("error", "the one `Error` every call returns"),
    (
        "contracts",
        "what an operation is and may send: operation metadata, request limits, the rate limiter, environments",
    ),
    (
        "identity-provider",
        "the one door to the identity provider: every request, one discovery",
    ),
    (
        "token-cache",
        "the token cache with single flight over any grant (`FetchToken`)",
    ),
    (
        "grants",
        "the ways to obtain tokens, each a whole feature-gated module",
    ),
    (
        "auth",
        "the public front of authentication: credentials and the authenticator",
    ),
    (
        "runtime-state",
        "what the generated client carries and calls: its state, path segments, the redirect policy, the one door of every call (`runtime::send`)",
    ),
    (
        "generated",
        "the generated `Client`, its builders and operation table",
    ),
    (
        "client",
        "the generated `Client`'s own methods over the runtime: `access_token`, `rate_limiter`",
    ),
    (
        "config",
        "the builder of a `Client`; nothing in the crate imports it",
    ),
    (
        "features",
        "what the client offers over `Client`: paging, waiting, downloads, statements, files, datasets",
    ),
    (
        "root",
        "the crate root: module declarations, re-exports, the prelude",
    ),
];

/// Every module of `generated-client/src` and its layer (an index of [`LAYERS`]).
pub const MODULES: &[(&str, usize)] = &[
    ("urls", 0),
    ("body_limits", 0),
    ("email", 0),
    ("json", 0),
    ("retry", 0),
    ("auth::error", 0),
    ("auth::access_token", 0),
    ("auth::limits", 0),
    ("auth::credentials", 0),
    ("generated_issuers", 0),
    ("generated::types", 0),
    ("error", 1),
    ("error::api", 1),
    ("error::decode", 1),
    ("operation", 2),
    ("call_options", 2),
    ("limits", 2),
    ("generated_limits", 2),
    ("rate_limit", 2),
    ("rate_limit::store", 2),
    ("environment", 2),
    ("telemetry", 2),
    ("auth::identity_http", 3),
    ("auth::token", 4),
    ("auth::client_credentials", 5),
    ("sign_in", 5),
    ("sign_in::id_token", 5),
    ("sign_in::loopback", 5),
    ("sign_in::provider", 5),
    ("sign_in::sign_out", 5),
    ("sign_in::store", 5),
    ("sign_in::tokens", 5),
    ("auth", 6),
    ("runtime", 7),
    ("runtime::state", 7),
    ("runtime::path", 7),
    ("runtime::redirect", 7),
    ("runtime::call", 7),
    ("generated", 8),
    ("runtime::client", 9),
    ("config", 10),
    ("paging", 11),
    ("wait", 11),
    ("download", 11),
    ("download::file_name", 11),
    ("statement", 11),
    ("source_file", 11),
    ("session_datasets", 11),
    ("dataset_stream", 11),
    ("generated_datasets", 11),
    ("readiness", 11),
    ("wait::data", 11),
    ("", 12),
];

/// One path that points up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub file: PathBuf,
    pub line: usize,
    pub from: String,
    pub path: String,
    pub to: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let layer = |module: &str| {
            let n = layer_of(module).unwrap_or(usize::MAX);
            format!("layer {n}, {}", LAYERS.get(n).map_or("?", |l| l.0))
        };
        write!(
            f,
            "{}:{}: `{}` ({}) uses `{}`, which is `{}` ({}): an import must point to its own \
             layer or one below (docs/architecture.md, xtask/src/layers.rs)",
            self.file.display(),
            self.line,
            shown(&self.from),
            layer(&self.from),
            self.path,
            shown(&self.to),
            layer(&self.to),
        )
    }
}

fn shown(module: &str) -> &str {
    if module.is_empty() { "crate" } else { module }
}

/// The layer of the longest module of the table `module` starts with.
fn layer_of(module: &str) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (name, layer) in MODULES {
        let matches =
            name.is_empty() || module == *name || module.starts_with(&format!("{name}::"));
        if matches && best.is_none_or(|(len, _)| name.len() >= len) {
            best = Some((name.len(), *layer));
        }
    }
    best.map(|(_, layer)| layer)
}

/// The module of the table a resolved path (`auth::error::AuthError`) lands in.
fn module_of(path: &str) -> String {
    MODULES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| name.is_empty() || path == *name || path.starts_with(&format!("{name}::")))
        .max_by_key(|name| name.len())
        .unwrap_or("")
        .to_string()
}

/// Checks every `.rs` file under `src` (the client's `src`): the violations found, or an error
/// for a file whose module is not in the table, or that does not parse.
pub fn check(src: &Path) -> anyhow::Result<Vec<Violation>> {
    let mut files = Vec::new();
    collect(src, &mut files)?;
    files.sort();
    let root = parse(&src.join("lib.rs"))?;
    let aliases = root_aliases(&root);
    let known: Vec<String> = files.iter().map(|f| module_path(src, f)).collect();
    let mut violations = Vec::new();
    for (file, module) in files.iter().zip(&known) {
        if !MODULES.iter().any(|(name, _)| name == module) {
            bail!(
                "{}: module `{}` is not in the client's layer table: add a line \
                 (\"{}\", LAYER) to MODULES in xtask/src/layers.rs, and a row to the table in \
                 docs/architecture.md",
                file.display(),
                shown(module),
                module
            );
        }
        let syntax = parse(file)?;
        let mut visitor = Edges {
            module: vec![module.clone()],
            known: &known,
            aliases: &aliases,
            found: Vec::new(),
        };
        visitor.visit_file(&syntax);
        for (line, from, path, target) in visitor.found {
            let to = module_of(&target);
            if layer_of(&to) > layer_of(&from) {
                violations.push(Violation {
                    file: file.clone(),
                    line,
                    from,
                    path,
                    to,
                });
            }
        }
    }
    Ok(violations)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
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

/// `src/auth/mod.rs` → `auth`, `src/auth/token.rs` → `auth::token`, `src/lib.rs` → ``.
fn module_path(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// What the crate root re-exports: a name (`Client`, `types`, `Error`) and the module path it
/// stands for. A glob re-export (`pub use generated::*`) answers for any other name.
#[derive(Debug, Default)]
struct Aliases {
    named: BTreeMap<String, String>,
    glob: Option<String>,
}

fn root_aliases(root: &syn::File) -> Aliases {
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

/// The paths of one file: (line, module using, path as written, module path it resolves to).
struct Edges<'a> {
    /// The module the visitor is in (inline modules push onto it).
    module: Vec<String>,
    known: &'a [String],
    aliases: &'a Aliases,
    found: Vec<(usize, String, String, String)>,
}

impl Edges<'_> {
    fn current(&self) -> &str {
        self.module.last().map_or("", String::as_str)
    }

    /// Records `segments` (a path as written) when it names a module of this crate.
    fn record(&mut self, segments: &[String], line: usize) {
        let Some(resolved) = self.resolve(segments) else {
            return;
        };
        self.found.push((
            line,
            self.current().to_string(),
            segments.join("::"),
            resolved,
        ));
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
                let joined = here.join("::");
                if !self.known.contains(&joined) && !MODULES.iter().any(|(n, _)| *n == joined) {
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
        {
            let is_module = MODULES.iter().any(|(n, _)| n == name);
            if !is_module {
                if let Some(target) = self.aliases.named.get(name) {
                    return Some(joined_with(&split(target), tail));
                }
                if let Some(glob) = &self.aliases.glob {
                    return Some(joined_with(&split(glob), rest));
                }
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

fn split(module: &str) -> Vec<String> {
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

/// The `layers` step: fails listing every upward edge.
pub fn run() -> anyhow::Result<()> {
    let src = crate::regen::workspace_root().join("generated-client/src");
    let violations = check(&src)?;
    if violations.is_empty() {
        println!("every `crate::` path of the client points to its own layer or below");
        return Ok(());
    }
    for violation in &violations {
        eprintln!("{violation}");
    }
    bail!(
        "{} path(s) of the client point to a higher layer",
        violations.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn todays_client_has_no_upward_edge() {
        let src = crate::regen::workspace_root().join("generated-client/src");
        let violations = check(&src).unwrap();
        assert!(
            violations.is_empty(),
            "{}",
            violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    /// A copy of the client's sources with `edit` applied, checked.
    fn check_edited(
        file: &str,
        edit: impl FnOnce(String) -> String,
    ) -> anyhow::Result<Vec<Violation>> {
        let src = crate::regen::workspace_root().join("generated-client/src");
        let copy = tempfile::tempdir().unwrap();
        copy_dir(&src, copy.path());
        let target = copy.path().join(file);
        let text = std::fs::read_to_string(&target).unwrap();
        std::fs::write(&target, edit(text)).unwrap();
        check(copy.path())
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let dest = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy_dir(&path, &dest);
            } else {
                std::fs::copy(&path, &dest).unwrap();
            }
        }
    }

    #[test]
    fn an_upward_edge_is_named_with_file_line_and_layers() {
        let violations = check_edited("auth/error.rs", |text| {
            format!("{text}\nfn upward() -> crate::ClientBuilder {{\n    unimplemented!()\n}}\n")
        })
        .unwrap();
        assert_eq!(violations.len(), 1, "{violations:?}");
        let shown = violations[0].to_string();
        assert!(shown.contains("auth/error.rs:"), "{shown}");
        assert!(
            shown.contains("`auth::error` (layer 0, leaves) uses `crate::ClientBuilder`"),
            "{shown}"
        );
        assert!(shown.contains("`config` (layer 10, config)"), "{shown}");
    }

    #[test]
    fn an_upward_edge_in_a_macro_or_through_a_re_export_is_found() {
        let violations = check_edited("urls.rs", |text| {
            format!("{text}\nfn upward() {{\n    let _ = format!(\"{{:?}}\", crate::auth::WITHOUT_OAUTH2);\n}}\n")
        })
        .unwrap();
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].to, "auth");
        let violations = check_edited("error.rs", |text| {
            text.replacen("use std::fmt;", "use std::fmt;\nuse crate::Client;", 1)
        })
        .unwrap();
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].to, "generated");
    }

    #[test]
    fn a_module_missing_from_the_table_says_where_to_add_it() {
        let src = crate::regen::workspace_root().join("generated-client/src");
        let copy = tempfile::tempdir().unwrap();
        copy_dir(&src, copy.path());
        std::fs::write(copy.path().join("readiness_probe.rs"), "//! New.\n").unwrap();
        let error = check(copy.path()).unwrap_err().to_string();
        assert!(error.contains("readiness_probe"), "{error}");
        assert!(error.contains("MODULES in xtask/src/layers.rs"), "{error}");
    }

    #[test]
    fn paths_resolve_to_the_longest_module_of_the_table() {
        assert_eq!(module_of("auth::error::AuthError"), "auth::error");
        assert_eq!(module_of("auth::Credentials"), "auth");
        assert_eq!(module_of("generated::types::Session"), "generated::types");
        assert_eq!(module_of("generated::builder::GetSession"), "generated");
        assert_eq!(layer_of("sign_in::provider"), Some(5));
    }
}
