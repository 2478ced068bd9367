//! The READMEs' Rust: `generated-client/README.md` is the crate's front page, and
//! `docs/readme-snippets` compiles every README's blocks as a user pastes them; the workspace
//! README repeats the crate's example, which must stay a verbatim copy. Neither may use
//! rustdoc's hidden lines (`# ...`), which a forge would show as is.

const CRATE_README: &str = include_str!("../../README.md");
const WORKSPACE_README: &str = include_str!("../../../README.md");

/// The fenced blocks of `markdown` whose info string starts with `rust`.
fn rust_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None if line.starts_with("```rust") => current = Some(String::new()),
            None => {}
            Some(_) if line.starts_with("```") => blocks.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    assert!(current.is_none(), "an unclosed code block");
    blocks
}

/// The part of `markdown` under the heading `heading`, up to the next heading of its level.
fn section<'a>(markdown: &'a str, heading: &str) -> &'a str {
    let start = markdown
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no section {heading:?}"));
    let body = &markdown[start + heading.len() + 2..];
    let level = heading.split(' ').next().unwrap_or_default();
    let end = body.find(&format!("\n{level} ")).unwrap_or(body.len());
    &body[..end]
}

#[test]
fn the_workspace_readme_repeats_the_crate_readme_example_verbatim() {
    let shown = rust_blocks(section(WORKSPACE_README, "## Using the client"));
    assert!(!shown.is_empty(), "the workspace README shows no Rust");
    let compiled = rust_blocks(CRATE_README);
    for block in &shown {
        assert!(
            compiled.contains(block),
            "README.md's example is not a block of generated-client/README.md (which rustdoc \
             compiles); copy it from there:\n{block}"
        );
    }
}

#[test]
fn no_readme_snippet_hides_lines() {
    for (readme, text) in [
        ("generated-client/README.md", CRATE_README),
        ("README.md", WORKSPACE_README),
    ] {
        for block in rust_blocks(text) {
            for line in block.lines() {
                let trimmed = line.trim_start();
                assert!(
                    trimmed != "#" && !trimmed.starts_with("# "),
                    "{readme}: a rustdoc-hidden line shows on the forge: {line:?}"
                );
            }
        }
    }
}
