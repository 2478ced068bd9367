//! `cargo xtask regen` and `cargo xtask check`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use creditdata_codegen::document;
use creditdata_codegen::pipeline::{self, Inputs, Layout, Outputs};
use creditdata_codegen::{diff, document::DocumentError};

/// The workspace root (this crate lives in `<root>/xtask`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

#[derive(Args, Debug)]
pub struct RegenArgs {
    /// The published description to generate from (default: spec/openapi.json).
    #[arg(long, value_name = "PATH")]
    spec: Option<PathBuf>,
    /// The directory of overlays, applied in file-name order (default: overlays/).
    #[arg(long, value_name = "DIR")]
    overlays: Option<PathBuf>,
    /// Write openapi.effective.json, generated.rs and SURFACE.md into DIR instead of their
    /// checked-in places (for a newer published version, or another service).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Report overlay actions that select nothing as warnings instead of failing.
    #[arg(long)]
    lenient: bool,
}

#[derive(Args, Debug, Default)]
pub struct CheckArgs {
    /// The published description (default: spec/openapi.json).
    #[arg(long, value_name = "PATH")]
    spec: Option<PathBuf>,
    /// The directory of overlays (default: overlays/).
    #[arg(long, value_name = "DIR")]
    overlays: Option<PathBuf>,
    /// Report overlay actions that select nothing as warnings instead of failing.
    #[arg(long)]
    lenient: bool,
}

fn inputs(spec: Option<&Path>, overlays: Option<&Path>, lenient: bool) -> Inputs {
    let root = workspace_root();
    Inputs {
        spec: spec
            .map(Path::to_path_buf)
            .unwrap_or_else(|| root.join("spec/openapi.json")),
        overlays: overlays
            .map(Path::to_path_buf)
            .unwrap_or_else(|| root.join("overlays")),
        lenient,
        display_root: root,
    }
}

fn run_pipeline(inputs: &Inputs) -> Result<Outputs, String> {
    let outputs = pipeline::run(inputs).map_err(|e| format!("error: {e}"))?;
    for warning in &outputs.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(outputs)
}

/// `cargo xtask regen`.
pub fn regen(args: &RegenArgs) -> Result<(), String> {
    let started = Instant::now();
    let inputs = inputs(args.spec.as_deref(), args.overlays.as_deref(), args.lenient);
    let outputs = run_pipeline(&inputs)?;
    let (root, layout) = match &args.out {
        Some(dir) => (dir.clone(), Layout::flat()),
        None => (workspace_root(), Layout::workspace()),
    };
    let previous_effective = root.join(&layout.effective);
    let previous = match document::load(&previous_effective) {
        Ok(value) => Some(value),
        Err(DocumentError::Read { .. }) => None,
        Err(e) => {
            eprintln!("warning: the previous effective document cannot be compared: {e}");
            None
        }
    };
    let written = pipeline::write(&outputs, &root, &layout).map_err(|e| format!("error: {e}"))?;
    for path in &written {
        println!(
            "wrote {}",
            path.strip_prefix(workspace_root())
                .unwrap_or(path)
                .display()
        );
    }
    println!(
        "{} operations, {} overlay file(s), {} open enum(s), {} request-side enum copy(ies); {:.2} s",
        outputs.generated.surface.lines().count(),
        outputs.overlay_files,
        outputs.plan.open.len(),
        outputs.plan.request_variants.len(),
        started.elapsed().as_secs_f64()
    );
    match previous {
        Some(old) => {
            println!("\nWhat changed since the previous generation:");
            print!(
                "{}",
                diff::compare(
                    &diff::Side::effective(&old),
                    &diff::Side::effective(&outputs.effective)
                )
            );
        }
        None => println!("\nNo previous effective document to compare with: everything is new."),
    }
    Ok(())
}

/// `cargo xtask check`.
pub fn check(args: &CheckArgs) -> Result<(), String> {
    let outputs = run_pipeline(&inputs(
        args.spec.as_deref(),
        args.overlays.as_deref(),
        args.lenient,
    ))?;
    let drift = pipeline::drift(&outputs, &workspace_root(), &Layout::workspace());
    if drift.is_empty() {
        println!("check: every generated file matches its inputs");
        return Ok(());
    }
    for d in &drift {
        print!("{}", d.diff);
    }
    let names: Vec<String> = drift
        .iter()
        .map(|d| {
            d.path
                .strip_prefix(workspace_root())
                .unwrap_or(&d.path)
                .display()
                .to_string()
        })
        .collect();
    Err(format!(
        "error: {} generated file(s) differ from what spec/ and overlays/ produce: {}\n\
         Generated files are never edited by hand: change the description, an overlay or the \
         generator, then run `cargo xtask regen` and commit the result.",
        drift.len(),
        names.join(", ")
    ))
}
