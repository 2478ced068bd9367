//! The `layers` step's own tests: each refusal on a made-up case (an upward path, circles of
//! two and three files, a path dependency into another member, a file over the limit) and
//! today's workspace against its tables.

use super::*;

fn workspace() -> PathBuf {
    crate::regen::workspace_root()
}

fn client_src() -> PathBuf {
    workspace().join(client::TABLE.src)
}

fn lines(items: &[impl ToString]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A change to one file's text.
type Edit = Box<dyn FnOnce(String) -> String>;

/// A copy of the client's sources with `edits` (file, edit) applied, checked.
fn check_edited(edits: Vec<(&str, Edit)>) -> anyhow::Result<Findings> {
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&client_src(), copy.path());
    for (file, edit) in edits {
        let target = copy.path().join(file);
        let text = std::fs::read_to_string(&target).unwrap_or_default();
        std::fs::write(&target, edit(text)).unwrap();
    }
    check(&client::TABLE, copy.path())
}

fn append(code: &'static str) -> Edit {
    Box::new(move |text| format!("{text}\n{code}\n"))
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

/// The circles of `findings` that name `file`.
fn circles_with<'a>(findings: &'a Findings, file: &str) -> Vec<&'a Circle> {
    findings
        .circles
        .iter()
        .filter(|c| c.files.iter().any(|f| f.ends_with(file)))
        .collect()
}

#[test]
fn todays_tables_cover_every_file_and_no_path_points_up_in_the_client_or_the_cli() {
    for table in TABLES {
        let findings = check(table, &workspace().join(table.src))
            .unwrap_or_else(|e| panic!("the {} table: {e:#}", table.name));
        // The mock's table is written against the tree its engineer is restructuring.
        if table.name != "mock" {
            assert!(findings.upward.is_empty(), "{}", lines(&findings.upward));
        }
    }
}

#[test]
fn every_module_of_a_table_has_a_file_and_a_layer() {
    for table in TABLES {
        let files = graph::read_crate(&workspace().join(table.src)).unwrap();
        for (module, layer) in table.modules {
            assert!(*layer < table.layers.len(), "{}: `{module}`", table.name);
            let known = files.iter().any(|f| f.module == *module)
                || files.iter().any(|f| {
                    let text = std::fs::read_to_string(&f.file).unwrap();
                    let name = module.rsplit("::").next().unwrap();
                    module.starts_with(&f.module) && text.contains(&format!("mod {name} {{"))
                });
            assert!(
                known,
                "{}: `{module}` is in the table but not in the crate",
                table.name
            );
        }
    }
}

#[test]
fn the_circles_this_branch_broke_stay_broken() {
    let cli = check(&cli::TABLE, &workspace().join(cli::TABLE.src)).unwrap();
    let outside_export: Vec<&Circle> = cli
        .circles
        .iter()
        .filter(|c| !c.files.iter().all(|f| f.contains("cli/src/export/")))
        .collect();
    assert!(outside_export.is_empty(), "{}", lines(&outside_export));
    let client = check(&client::TABLE, &client_src()).unwrap();
    let datasets = circles_with(&client, "generated_datasets.rs");
    assert!(datasets.is_empty(), "{}", lines(&datasets));
}

#[test]
fn an_upward_edge_is_named_with_file_line_and_layers() {
    let findings = check_edited(vec![(
        "auth/error.rs",
        append("fn upward() -> crate::ClientBuilder {\n    unimplemented!()\n}"),
    )])
    .unwrap();
    let upward: Vec<&Violation> = findings
        .upward
        .iter()
        .filter(|v| v.file.ends_with("auth/error.rs"))
        .collect();
    assert_eq!(upward.len(), 1, "{upward:?}");
    let shown = upward[0].to_string();
    assert!(shown.contains("auth/error.rs:"), "{shown}");
    assert!(
        shown.contains("`auth::error` (layer 0, leaves) uses `crate::ClientBuilder`"),
        "{shown}"
    );
    assert!(shown.contains("`config` (layer 10, config)"), "{shown}");
    assert!(shown.contains("xtask/src/layers/client.rs"), "{shown}");
}

#[test]
fn an_upward_edge_in_a_macro_or_through_a_re_export_is_found() {
    let findings = check_edited(vec![(
        "urls.rs",
        append("fn upward() {\n    let _ = format!(\"{:?}\", crate::auth::WITHOUT_OAUTH2);\n}"),
    )])
    .unwrap();
    let upward: Vec<&Violation> = findings
        .upward
        .iter()
        .filter(|v| v.file.ends_with("urls.rs"))
        .collect();
    assert_eq!(upward.len(), 1, "{upward:?}");
    assert_eq!(upward[0].to, "auth");
    let findings = check_edited(vec![(
        "email.rs",
        append("#[allow(unused_imports)]\nuse crate::Client;"),
    )])
    .unwrap();
    let upward: Vec<&Violation> = findings
        .upward
        .iter()
        .filter(|v| v.file.ends_with("email.rs"))
        .collect();
    assert_eq!(upward.len(), 1, "{upward:?}");
    assert_eq!(upward[0].to, "generated");
}

#[test]
fn a_module_missing_from_the_table_says_where_to_add_it() {
    let error = check_edited(vec![("readiness_probe.rs", append("//! New."))])
        .unwrap_err()
        .to_string();
    assert!(error.contains("readiness_probe"), "{error}");
    assert!(
        error.contains("MODULES in xtask/src/layers/client.rs"),
        "{error}"
    );
}

#[test]
fn a_test_module_needs_no_line_and_its_imports_are_not_edges() {
    let findings = check_edited(vec![
        ("lib.rs", append("#[cfg(test)]\nmod test_support;")),
        (
            "test_support.rs",
            append("//! Test helpers.\nuse crate::Client;"),
        ),
        (
            "urls.rs",
            append("#[cfg(test)]\nmod up {\n    use crate::ClientBuilder;\n}"),
        ),
    ])
    .unwrap();
    let upward: Vec<&Violation> = findings
        .upward
        .iter()
        .filter(|v| v.file.ends_with("urls.rs") || v.file.ends_with("test_support.rs"))
        .collect();
    assert!(upward.is_empty(), "{upward:?}");
}

#[test]
fn a_circle_of_two_files_of_one_layer_is_refused_with_the_import_that_closes_it() {
    let before = check(&client::TABLE, &client_src()).unwrap();
    assert!(circles_with(&before, "paging.rs").is_empty());
    let findings = check_edited(vec![
        (
            "paging.rs",
            append("#[allow(dead_code)]\nfn to_statement() -> Option<crate::statement::Made> {\n    None\n}"),
        ),
        (
            "statement.rs",
            append("#[allow(dead_code)]\npub struct Made;\n#[allow(unused_imports)]\nuse crate::paging::SessionFilter;"),
        ),
    ])
    .unwrap();
    // Same layer: no upward path, and still refused.
    assert_eq!(
        client::TABLE.layer_of("paging"),
        client::TABLE.layer_of("statement")
    );
    assert!(
        !findings
            .upward
            .iter()
            .any(|v| v.file.ends_with("paging.rs")),
        "{}",
        lines(&findings.upward)
    );
    let circles = circles_with(&findings, "paging.rs");
    assert_eq!(circles.len(), 1, "{}", lines(&circles));
    let circle = circles[0];
    assert_eq!(circle.files.len(), 2, "{circle}");
    assert!(
        circle.files.iter().any(|f| f.ends_with("statement.rs")),
        "{circle}"
    );
    let shown = circle.to_string();
    assert!(shown.contains("import each other in a circle"), "{shown}");
    assert!(shown.contains("uses `crate::statement::Made`"), "{shown}");
    assert!(
        shown.contains("uses `crate::paging::SessionFilter`"),
        "{shown}"
    );
    let last = circle.links.last().unwrap();
    assert!(
        shown.contains(&format!(
            "the import at {}:{} closes it",
            last.file.display(),
            last.line
        )),
        "{shown}"
    );
    assert!(
        shown.contains("Move what both ends need into a module below"),
        "{shown}"
    );
}

#[test]
fn a_circle_of_three_files_is_refused_with_every_step() {
    let findings = check_edited(vec![
        ("paging.rs", append("#[allow(unused_imports)]\nuse crate::statement::Made;")),
        (
            "statement.rs",
            append("#[allow(dead_code)]\npub struct Made;\n#[allow(unused_imports)]\nuse crate::source_file::Third;"),
        ),
        (
            "source_file.rs",
            append("#[allow(dead_code)]\npub struct Third;\nfn _back() {\n    let _ = crate::paging::DEFAULT_TAKE;\n}"),
        ),
    ])
    .unwrap();
    let circles = circles_with(&findings, "paging.rs");
    assert_eq!(circles.len(), 1, "{}", lines(&circles));
    let circle = circles[0];
    assert_eq!(circle.files.len(), 3, "{circle}");
    assert_eq!(circle.links.len(), 3, "{circle}");
    for file in ["paging.rs", "statement.rs", "source_file.rs"] {
        assert!(
            circle.links.iter().any(|l| l.file.ends_with(file)),
            "{file}: {circle}"
        );
    }
}

#[test]
fn paths_resolve_to_the_longest_module_of_the_table() {
    let table = &client::TABLE;
    assert_eq!(table.module_of("auth::error::AuthError"), "auth::error");
    assert_eq!(table.module_of("auth::Credentials"), "auth");
    assert_eq!(
        table.module_of("generated::types::Session"),
        "generated::types"
    );
    assert_eq!(
        table.module_of("generated::builder::GetSession"),
        "generated"
    );
    assert_eq!(table.layer_of("sign_in::provider"), Some(5));
}

#[test]
fn tarjan_finds_each_circle_once_and_not_a_chain() {
    let next = |edges: &[(usize, usize)], n: usize| {
        let mut next = vec![BTreeSet::new(); n];
        for &(a, b) in edges {
            next[a].insert(b);
        }
        next
    };
    // 0 → 1 → 2 → 0, 3 → 4 (a chain), 4 → 0.
    let graph = next(&[(0, 1), (1, 2), (2, 0), (3, 4), (4, 0)], 5);
    assert_eq!(graph::circles(5, &graph), vec![vec![0, 1, 2]]);
    assert_eq!(graph::shortest_cycle(1, &[0, 1, 2], &graph), vec![1, 2, 0]);
    let chain = next(&[(0, 1), (1, 2)], 3);
    assert!(graph::circles(3, &chain).is_empty());
}

/// A made-up workspace: `files` (path, text) under a temporary root.
fn made_workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = root.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

const MEMBER: &str = "[package]\nname = \"m\"\nversion = \"0.1.0\"\n";

#[test]
fn a_path_dependency_into_another_members_folder_is_refused() {
    let root = made_workspace(&[
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"app\", \"tool\", \"tool/shared\"]\n\n[workspace.dependencies]\nshared = { path = \"tool/shared\" }\n",
        ),
        (
            "app/Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nshared.workspace = true\n\n[target.'cfg(unix)'.dev-dependencies]\nshared-too = { path = \"../tool/shared\", package = \"shared\" }\n",
        ),
        ("tool/Cargo.toml", MEMBER),
        ("tool/shared/Cargo.toml", MEMBER),
    ]);
    let found = manifests::check(root.path()).unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    let shown = lines(&found);
    assert!(
        shown.contains("Cargo.toml:5: dependency `shared` points to `tool/shared`, inside `tool/`"),
        "{shown}"
    );
    assert!(
        shown.contains("app/Cargo.toml:9: dependency `shared-too` points to `tool/shared`"),
        "{shown}"
    );
    assert!(shown.contains("lives at the top level"), "{shown}");
}

#[test]
fn a_path_dependency_to_a_member_at_the_top_or_inside_its_own_folder_passes() {
    let root = made_workspace(&[
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"app\", \"shared\", \"tool\"]\n\n[workspace.dependencies]\nshared = { path = \"shared\" }\n",
        ),
        (
            "app/Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nshared.workspace = true\nown = { path = \"own\" }\n",
        ),
        ("shared/Cargo.toml", MEMBER),
        ("tool/Cargo.toml", MEMBER),
    ]);
    let found = manifests::check(root.path()).unwrap();
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn todays_workspace_has_no_path_dependency_into_another_member() {
    let found = manifests::check(&workspace()).unwrap();
    assert!(found.is_empty(), "{}", lines(&found));
}

#[test]
fn a_hand_written_file_over_900_lines_is_refused_and_a_generated_one_is_not() {
    let long = |n: usize| "fn f() {}\n".repeat(n);
    let generated = format!(
        "{} (`cargo xtask regen`). DO NOT EDIT.\n{}",
        creditdata_codegen::pipeline::GENERATED_MARK,
        long(2000)
    );
    let root = made_workspace(&[
        ("a/src/long.rs", &long(901)),
        ("a/src/fits.rs", &long(900)),
        ("a/src/generated_long.rs", &generated),
        ("a/target/debug/build/out.rs", &long(5000)),
        ("BENCHMARKS.md", &long(5000)),
    ]);
    let found = size::check(root.path()).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].file, Path::new("a/src/long.rs"));
    assert_eq!(found[0].lines, 901);
    let shown = found[0].to_string();
    assert!(
        shown.starts_with("a/src/long.rs: 901 lines, over the 900"),
        "{shown}"
    );
    assert!(shown.contains("split it"), "{shown}");
}

#[test]
fn the_architecture_document_shows_each_table_as_the_data_says() {
    let doc = std::fs::read_to_string(workspace().join("docs/architecture.md")).unwrap();
    for table in TABLES {
        let shown = markdown(table);
        assert!(
            doc.contains(&shown),
            "docs/architecture.md lacks the {}'s layer table as {} has it; paste:\n{shown}",
            table.name,
            table.table_file
        );
    }
}
