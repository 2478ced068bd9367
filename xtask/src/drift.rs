//! `cargo xtask drift`: what a new published description would change, without changing
//! anything.
//!
//! The new description is downloaded (with the fetch stage's checks: both documents, equal as
//! data) into a temporary directory, or read where it is with `--spec`. The whole pipeline runs
//! on it in memory, progenitor included, so a description the generator cannot take is caught
//! here too. The report compares with the checked-in generation. Exit status: 0 no change, 3
//! compatible changes only, 4 a breaking change; 1 when the comparison could not be made (the
//! download failed, the new description needs an overlay fix, bad arguments).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{ArgGroup, Args};
use creditdata_codegen::diff::{self, Side};
use creditdata_codegen::document;
use creditdata_codegen::fetch::{self, Options, Source, Urls, redacted_url};
use creditdata_codegen::pipeline::Layout;

use crate::regen::{self, Previous, ReportFormat, workspace_root};

/// Compare a new published description with the checked-in generation, and say what it would
/// change for users of creditdata-client. Writes nothing (except --json-out).
///
/// Exit status: 0 no change; 3 changes, all compatible; 4 a breaking change (deployed clients
/// or existing Rust code affected); 1 the comparison could not be made.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("source").args(["url", "spec"])))]
pub struct DriftArgs {
    /// Download the description from this address (ending in .json, .yaml or .yml; the other
    /// form is fetched too and must agree). Default: the publisher's addresses in
    /// spec/source.toml.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Read the description from this file instead of downloading it.
    #[arg(long, value_name = "PATH")]
    spec: Option<PathBuf>,
    /// The directory of overlays (default: overlays/).
    #[arg(long, value_name = "DIR")]
    overlays: Option<PathBuf>,
    /// Report overlay actions that select nothing as warnings instead of failing (a release
    /// may publish what an overlay used to supply).
    #[arg(long)]
    lenient: bool,
    /// How to print the report on stdout.
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT")]
    report: ReportFormat,
    /// Also write the JSON report to this file (atomically).
    #[arg(long, value_name = "PATH")]
    json_out: Option<PathBuf>,
    /// Give up on a download after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    timeout: u64,
}

/// Runs the command; `Ok` carries the exit status.
pub fn run(args: &DriftArgs) -> anyhow::Result<u8> {
    let root = workspace_root();
    // Kept alive until the pipeline has read the downloaded description.
    let mut _download_dir = None;
    let spec = match &args.spec {
        Some(path) => path.clone(),
        None => {
            let urls = match &args.url {
                Some(url) => Urls::from_one(url)?,
                None => {
                    let spec_dir = root.join("spec");
                    Source::load(&spec_dir)
                        .and_then(|s| s.publisher_urls(&spec_dir.join(fetch::SOURCE_FILE)))
                        .context(
                            "no address to download the new description from (`cargo xtask \
                             drift` takes --url URL or --spec PATH as well)",
                        )?
                }
            };
            eprintln!(
                "fetching {} and {}",
                redacted_url(&urls.json),
                redacted_url(&urls.yaml)
            );
            let options = Options {
                timeout: Duration::from_secs(args.timeout.max(1)),
                ..Options::default()
            };
            let published = fetch::download(&urls, &options)?;
            let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
            let path = dir.path().join("openapi.json");
            document::write_atomic(&path, &published.json)?;
            _download_dir = Some(dir);
            path
        }
    };
    let inputs = regen::inputs(Some(&spec), args.overlays.as_deref(), args.lenient);
    let outputs = match regen::run_pipeline(&inputs) {
        Ok(outputs) => outputs,
        // The release took away what an overlay patched (most often: it removed an operation).
        // That is the report's to classify: compare as --lenient would, and say which actions
        // no longer apply. `regen` stays strict, so they are looked at before anything is written.
        Err(e) if !inputs.lenient && only_vanished_targets(&e) => {
            eprintln!(
                "note: overlay actions select nothing in the new description (it removed what \
                 they patch); compared as --lenient, and `cargo xtask regen` will stop on them \
                 until they are updated:\n{e:#}"
            );
            regen::run_pipeline(&regen::inputs(Some(&spec), args.overlays.as_deref(), true))
                .context("the new description cannot be generated as it is; nothing was compared")?
        }
        Err(e) => {
            return Err(e.context(
                "the new description cannot be generated as it is; nothing was compared",
            ));
        }
    };
    let previous = Previous::read(&root, &Layout::workspace())?.context(
        "there is no checked-in spec/openapi.effective.json to compare with: run `cargo xtask \
         regen` first",
    )?;
    let published = document::load(&spec)?;
    let report = diff::compare(
        &previous.side(),
        &Side {
            effective: &outputs.effective,
            published: Some(&published),
            code: Some(&outputs.generated.code),
        },
    );
    let report = regen::with_client_version(report)?;
    if let Some(path) = &args.json_out {
        regen::write_json(&report, path)?;
    }
    print!("{}", args.report.render(&report));
    Ok(report.exit_code())
}

/// Whether the pipeline failed only because overlay targets select nothing (strict mode).
fn only_vanished_targets(error: &anyhow::Error) -> bool {
    use creditdata_codegen::pipeline::PipelineError;
    match error.downcast_ref::<PipelineError>() {
        Some(PipelineError::Overlay(errors)) => {
            !errors.errors.is_empty() && errors.errors.iter().all(|e| e.is_zero_match())
        }
        _ => false,
    }
}
