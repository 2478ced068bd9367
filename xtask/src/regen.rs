//! `cargo xtask regen` and `cargo xtask check`, and what they share with `cargo xtask drift`:
//! the previous generation as one side of the change report.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use creditdata_codegen::diff::{self, ChangeReport, Side, keep_behaviour, keep_names};
use creditdata_codegen::document::{self, DocumentError};
use creditdata_codegen::pipeline::{self, Inputs, Layout, Outputs, sha256_hex};
use serde_json::Value;

/// The workspace root (this crate lives in `<root>/xtask`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

/// How the change report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ReportFormat {
    /// For a terminal.
    #[default]
    Text,
    /// For a pull-request body or a CHANGELOG entry.
    Markdown,
    /// The published shape (codegen/CHANGE-REPORT.md), for CI.
    Json,
}

impl ReportFormat {
    pub fn render(self, report: &ChangeReport) -> String {
        match self {
            ReportFormat::Text => report.to_text(),
            ReportFormat::Markdown => report.to_markdown(),
            ReportFormat::Json => report.to_json(),
        }
    }
}

#[derive(Args, Debug)]
pub struct RegenArgs {
    /// The published description to generate from (default: spec/openapi.json).
    #[arg(long, value_name = "PATH")]
    spec: Option<PathBuf>,
    /// The directory of overlays, applied in file-name order (default: overlays/).
    #[arg(long, value_name = "DIR")]
    overlays: Option<PathBuf>,
    /// Write openapi.effective.json, generated.rs, SURFACE.md, generated_datasets.rs, generated_session_datasets.rs, generated_issuers.rs and generated_limits.rs into DIR
    /// instead of their checked-in places (for a newer published version, or another service).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Report overlay actions that select nothing as warnings instead of failing.
    #[arg(long)]
    lenient: bool,
    /// How to print the change report. With markdown or json, stdout carries the report alone
    /// and progress goes to stderr.
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT")]
    report: ReportFormat,
    /// Also write the JSON report to this file (atomically), whatever --report prints.
    #[arg(long, value_name = "PATH")]
    json_out: Option<PathBuf>,
    /// Pin the old Rust names of every operationId and schema the vendor renamed: add overlay
    /// actions to overlays/90-keep-names.overlay.yaml (created if missing), then generate with
    /// them, so existing callers keep compiling. (Names derived for operations without an
    /// operationId are pinned there without this flag.)
    #[arg(long)]
    keep_names: bool,
    /// Move every behaviour pin to the description as it is: rewrite
    /// overlays/91-keep-behaviour.overlay.yaml so that every operation sends the description's
    /// info.version as its api-version and every dataset is in the default readiness gate. The
    /// report lists each move as a behaviour change: for a breaking release of
    /// creditdata-client. (Without it, regen only adds pins for what is not pinned yet.)
    #[arg(long)]
    adopt_behaviour: bool,
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

pub fn inputs(spec: Option<&Path>, overlays: Option<&Path>, lenient: bool) -> Inputs {
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

pub fn run_pipeline(inputs: &Inputs) -> anyhow::Result<Outputs> {
    let outputs = pipeline::run(inputs)?;
    for warning in &outputs.warnings {
        eprintln!("warning: {warning}");
    }
    for derived in &outputs.derived {
        eprintln!("note: {}", derived.note());
    }
    Ok(outputs)
}

/// What a previous generation left under an output root: the effective document, the generated
/// code, and the published description it was made from when that file is still there unchanged
/// (the header of generated.rs names it with its digest).
pub struct Previous {
    pub effective: Value,
    pub code: Option<String>,
    pub published: Option<Value>,
}

impl Previous {
    /// `Ok(None)` when there is no previous effective document.
    pub fn read(root: &Path, layout: &Layout) -> anyhow::Result<Option<Previous>> {
        let effective = match document::load(&root.join(&layout.effective)) {
            Ok(value) => value,
            Err(DocumentError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(None);
            }
            // Unreadable is not absent: reporting "everything is new" would hide every change.
            Err(e) => {
                return Err(anyhow::Error::new(e).context(
                    "the previous effective document cannot be compared (repair or delete it, \
                     then run again)",
                ));
            }
        };
        let code = std::fs::read_to_string(root.join(&layout.generated)).ok();
        let published = code.as_deref().and_then(published_input);
        Ok(Some(Previous {
            effective,
            code,
            published,
        }))
    }

    pub fn side(&self) -> Side<'_> {
        Side {
            effective: &self.effective,
            published: self.published.as_ref(),
            code: self.code.as_deref(),
        }
    }
}

/// The published description a generated file was made from: the first input its header lists,
/// if that file still has the recorded digest.
fn published_input(code: &str) -> Option<Value> {
    let line = code
        .lines()
        .skip_while(|l| !l.starts_with("// Inputs (sha256):"))
        .nth(1)?;
    let (digest, path) = line.trim_start_matches("//").trim().split_once("  ")?;
    let path = Path::new(path.trim());
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace_root().join(path)
    };
    let bytes = std::fs::read(&path).ok()?;
    (sha256_hex(&bytes) == digest)
        .then(|| document::load(&path).ok())
        .flatten()
}

/// `report` with the version of creditdata-client the changes call for.
pub fn with_client_version(report: ChangeReport) -> anyhow::Result<ChangeReport> {
    let version = client_version()?;
    report
        .with_version(&version)
        .map_err(anyhow::Error::msg)
        .context("creditdata-client's version")
}

/// The version of creditdata-client (its own, or the workspace's).
pub fn client_version() -> anyhow::Result<String> {
    let root = workspace_root();
    let read = |path: &Path| -> anyhow::Result<toml::Table> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        text.parse::<toml::Table>()
            .with_context(|| format!("{} is not valid TOML", path.display()))
    };
    let client = read(&root.join("generated-client/Cargo.toml"))?;
    let own = client
        .get("package")
        .and_then(|p| p.get("version"))
        .and_then(|v| v.as_str())
        .map(str::to_string);
    if let Some(version) = own {
        return Ok(version);
    }
    read(&root.join("Cargo.toml"))?
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("version"))
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .context("no version for creditdata-client in its Cargo.toml or the workspace's")
}

/// Writes the JSON report to `path`, atomically.
pub fn write_json(report: &ChangeReport, path: &Path) -> anyhow::Result<()> {
    Ok(document::write_atomic(path, report.to_json().as_bytes())?)
}

/// Copies every overlay of `dir` into a temporary directory, with `pins` as the file `name`
/// (`None`: without that file).
fn overlays_with_pins(
    dir: &Path,
    name: &str,
    pins: Option<&str>,
) -> anyhow::Result<tempfile::TempDir> {
    let temp = tempfile::tempdir().context("cannot create a temporary directory")?;
    for file in pipeline::overlay_files(dir)? {
        let file_name = file.file_name().unwrap_or_default();
        if file_name == name {
            continue;
        }
        std::fs::copy(&file, temp.path().join(file_name))
            .with_context(|| format!("cannot copy {}", file.display()))?;
    }
    if let Some(pins) = pins {
        std::fs::write(temp.path().join(name), pins).context("cannot write a temporary overlay")?;
    }
    Ok(temp)
}

/// The pin file `name` of `inputs.overlays`, if there is one.
fn read_pins(inputs: &Inputs, name: &str) -> anyhow::Result<(PathBuf, Option<String>)> {
    let pin_file = inputs.overlays.join(name);
    match std::fs::read_to_string(&pin_file) {
        Ok(text) => Ok((pin_file, Some(text))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((pin_file, None)),
        Err(e) => Err(anyhow::Error::new(e).context(format!("cannot read {}", pin_file.display()))),
    }
}

/// Adds `actions` to the keep-names file of `inputs.overlays` and generates with it; the file is
/// written only when the pins apply. Returns the outputs with the pins and the file's path.
fn pin(inputs: &Inputs, actions: &[Value], what: &str) -> anyhow::Result<(Outputs, PathBuf)> {
    let (pin_file, existing) = read_pins(inputs, keep_names::KEEP_NAMES_FILE)?;
    let text = keep_names::extended_file(existing.as_deref(), actions, &pin_file)
        .with_context(|| what.to_string())?;
    write_pins(inputs, keep_names::KEEP_NAMES_FILE, &text, what)
}

/// Generates with `text` as the pin file `name` of `inputs.overlays`, then writes it: nothing is
/// written unless the pins apply. Returns the outputs with the pins and the file's path.
fn write_pins(
    inputs: &Inputs,
    name: &str,
    text: &str,
    what: &str,
) -> anyhow::Result<(Outputs, PathBuf)> {
    let pin_file = inputs.overlays.join(name);
    // Generate with the pins first: nothing is written unless they work.
    let trial = overlays_with_pins(&inputs.overlays, name, Some(text))?;
    run_pipeline(&Inputs {
        overlays: trial.path().to_path_buf(),
        ..inputs.clone()
    })
    .with_context(|| {
        format!(
            "{what}: the pins do not apply; {} is unchanged",
            pin_file.display()
        )
    })?;
    document::write_atomic(&pin_file, text.as_bytes())?;
    // Once more from the real directory: the generated header names the overlays it read.
    Ok((run_pipeline(inputs)?, pin_file))
}

/// Clients generated from the generator's test documents, which the client's tests compile and
/// serve (document, generated file; both relative to the workspace root). `regen` writes them
/// and `check` compares them, like every other generated file.
pub const TEST_CLIENTS: &[(&str, &str)] = &[(
    "codegen/tests/data/decode-shapes.yaml",
    "generated-client/tests/decoding/generated.rs",
)];

/// A vendor release rehearsed on today's description: `spec/openapi.json` with this release
/// applied, generated with `overlays/`, into the second file (a client the client's tests
/// compile and serve, so they show the typed client decodes what the release adds).
pub const RELEASE_CLIENT: (&str, &str) = (
    "codegen/tests/data/releases/22-polymorphic-income-sources.overlay.yaml",
    "generated-client/tests/decoding/release.rs",
);

/// The generated code of each of [`TEST_CLIENTS`] and of [`RELEASE_CLIENT`]: (path relative to
/// the root, contents).
fn test_clients() -> anyhow::Result<Vec<(PathBuf, String)>> {
    let root = workspace_root();
    let no_overlays = tempfile::tempdir().context("cannot create a temporary directory")?;
    let mut out = Vec::new();
    for (spec, generated) in TEST_CLIENTS {
        let outputs = pipeline::run(&Inputs {
            spec: root.join(spec),
            overlays: no_overlays.path().to_path_buf(),
            lenient: false,
            display_root: root.clone(),
        })
        .with_context(|| format!("the test client of {spec}"))?;
        out.push((PathBuf::from(generated), outputs.generated.code));
    }

    let (release, generated) = RELEASE_CLIENT;
    let what = || format!("today's description with the release {release}");
    let released = creditdata_codegen::overlay::apply_files(
        &root.join("spec/openapi.json"),
        &[root.join(release)],
        &creditdata_codegen::overlay::ApplyOptions { lenient: false },
    )
    .map_err(|e| anyhow::anyhow!("{e}"))
    .with_context(what)?
    .document;
    let spec = no_overlays.path().join("openapi.json");
    document::write_atomic(
        &spec,
        document::to_string(&released, document::Format::Json).as_bytes(),
    )?;
    let outputs = pipeline::run(&Inputs {
        spec: spec.clone(),
        overlays: root.join("overlays"),
        lenient: false,
        display_root: root.clone(),
    })
    .with_context(what)?;
    // The header names the inputs: the released document is a temporary file.
    let code = outputs.generated.code.replacen(
        &spec.display().to_string(),
        &format!("spec/openapi.json with {release}"),
        1,
    );
    out.push((PathBuf::from(generated), code));
    Ok(out)
}

/// The behaviour pins `outputs` lacks, as overlay actions ([`keep_behaviour`]).
fn missing_behaviour_pins(outputs: &Outputs) -> anyhow::Result<Vec<Value>> {
    keep_behaviour::missing_pin_actions(&outputs.effective)
        .context("finding what the behaviour pins must keep")
}

/// Pins what `outputs` does not pin yet (or, `adopt`, rewrites every pin from the description
/// as it is) in the behaviour file of `inputs.overlays`. Returns the new outputs and what was
/// done, or `None` when there was nothing to pin.
fn pin_behaviour(
    inputs: &Inputs,
    outputs: &Outputs,
    adopt: bool,
) -> anyhow::Result<Option<(Outputs, String)>> {
    let name = keep_behaviour::KEEP_BEHAVIOUR_FILE;
    let (pin_file, existing) = read_pins(inputs, name)?;
    if adopt {
        // The description as it is: what the pipeline makes of it without any behaviour pin.
        let bare = overlays_with_pins(&inputs.overlays, name, None)?;
        let unpinned = run_pipeline(&Inputs {
            overlays: bare.path().to_path_buf(),
            ..inputs.clone()
        })?;
        let actions = missing_behaviour_pins(&unpinned)?;
        let text = keep_behaviour::extended_file(None, &actions, &pin_file)
            .context("--adopt-behaviour")?;
        let (outputs, pin_file) = write_pins(inputs, name, &text, "--adopt-behaviour")?;
        return Ok(Some((
            outputs,
            format!(
                "--adopt-behaviour: rewrote {} from the description as it is ({} pin(s)); the \
                 report lists every pin that moved",
                shown(&pin_file),
                actions.len()
            ),
        )));
    }
    let actions = missing_behaviour_pins(outputs)?;
    if actions.is_empty() {
        return Ok(None);
    }
    let text = keep_behaviour::extended_file(existing.as_deref(), &actions, &pin_file)
        .context("pinning behaviour")?;
    let (outputs, pin_file) = write_pins(inputs, name, &text, "pinning behaviour")?;
    Ok(Some((
        outputs,
        format!(
            "pinned the api-version and readiness gate of what was not pinned yet ({} action(s)) \
             in {}",
            actions.len(),
            shown(&pin_file)
        ),
    )))
}

/// `cargo xtask regen`.
pub fn regen(args: &RegenArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let inputs = inputs(args.spec.as_deref(), args.overlays.as_deref(), args.lenient);
    let mut outputs = run_pipeline(&inputs)?;
    let (root, layout) = match &args.out {
        Some(dir) => (dir.clone(), Layout::flat()),
        None => (workspace_root(), Layout::workspace()),
    };
    let previous = Previous::read(&root, &layout)?;
    let published = document::load(&inputs.spec)?;
    // Progress goes where it does not mix with a machine-read report.
    let say = |line: String| {
        if args.report == ReportFormat::Text {
            println!("{line}");
        } else {
            eprintln!("{line}");
        }
    };
    let empty =
        serde_json::json!({"openapi": "3.0.3", "info": {"title": "", "version": ""}, "paths": {}});
    let compare = |outputs: &Outputs| {
        let old = previous
            .as_ref()
            .map(Previous::side)
            .unwrap_or_else(|| Side::effective(&empty));
        let new = Side {
            effective: &outputs.effective,
            published: Some(&published),
            code: Some(&outputs.generated.code),
        };
        diff::compare(&old, &new)
    };
    // A derived name is pinned at once, so it outlives the rule and the vendor's own name. A
    // preview (`--out` with the workspace's overlays) changes nothing of the workspace.
    if !outputs.derived.is_empty() {
        if args.out.is_none() || args.overlays.is_some() {
            let actions = keep_names::derived_pin_actions(&outputs.derived);
            let count = outputs.derived.len();
            let pin_file;
            (outputs, pin_file) = pin(&inputs, &actions, "pinning the derived operation names")?;
            say(format!(
                "pinned {count} derived operation name(s) in {}",
                shown(&pin_file)
            ));
        } else {
            say(format!(
                "{} derived operation name(s) not pinned: --out writes elsewhere; `cargo xtask \
                 regen` pins them in overlays/{}",
                outputs.derived.len(),
                keep_names::KEEP_NAMES_FILE
            ));
        }
    }

    // What existing code was written against: pinned at once, as names are. A preview (`--out`
    // with the workspace's overlays) changes nothing of the workspace.
    if args.out.is_none() || args.overlays.is_some() {
        if let Some((pinned, what)) = pin_behaviour(&inputs, &outputs, args.adopt_behaviour)? {
            outputs = pinned;
            say(what);
        }
    } else if args.adopt_behaviour {
        bail!(
            "--adopt-behaviour rewrites overlays/{}; with --out, give --overlays too",
            keep_behaviour::KEEP_BEHAVIOUR_FILE
        );
    } else if !missing_behaviour_pins(&outputs)?.is_empty() {
        say(format!(
            "behaviour not pinned: --out writes elsewhere; `cargo xtask regen` pins it in \
             overlays/{}",
            keep_behaviour::KEEP_BEHAVIOUR_FILE
        ));
    }

    let mut report = compare(&outputs);
    if args.keep_names {
        let renames: Vec<&diff::Change> = report.renames().collect();
        if renames.is_empty() {
            say("--keep-names: no operationId or schema was renamed; nothing to pin".into());
        } else {
            let actions = keep_names::pin_actions(renames.iter().copied(), &published)
                .context("--keep-names")?;
            let count = renames.len();
            let pin_file;
            (outputs, pin_file) = pin(&inputs, &actions, "--keep-names")?;
            say(format!("pinned {count} rename(s) in {}", shown(&pin_file)));
            report = compare(&outputs);
        }
    }

    if args.out.is_none() {
        report = with_client_version(report)?;
    }
    let mut written = pipeline::write(&outputs, &root, &layout)?;
    if args.out.is_none() && args.spec.is_none() && args.overlays.is_none() {
        for (relative, code) in test_clients()? {
            let path = root.join(relative);
            document::write_atomic(&path, code.as_bytes())?;
            written.push(path);
        }
    }
    for path in &written {
        say(format!("wrote {}", shown(path)));
    }
    say(format!(
        "{} operations, {} overlay file(s), {} open enum(s), {} request-side enum copy(ies); {:.2} s",
        outputs.generated.surface.lines().count(),
        outputs.overlay_files,
        outputs.plan.open.len(),
        outputs.plan.request_variants.len(),
        started.elapsed().as_secs_f64()
    ));
    if let Some(path) = &args.json_out {
        write_json(&report, path)?;
    }
    // The workspace's own regeneration feeds the client's changelog (a preview does not).
    if args.out.is_none() {
        let version = |doc: Option<&Value>| {
            doc.and_then(|d| d.pointer("/info/version"))
                .and_then(Value::as_str)
                .unwrap_or("(none)")
                .to_string()
        };
        let old = version(previous.as_ref().map(|p| &p.effective));
        let new = version(Some(&outputs.effective));
        if let Some(path) = crate::changelog::record(&root, &report, &old, &new)? {
            say(format!(
                "added the change report to {} (Unreleased)",
                shown(&path)
            ));
        }
    }
    match (args.report, &previous) {
        (ReportFormat::Text, None) => {
            println!("\nNo previous effective document to compare with: everything is new.")
        }
        (ReportFormat::Text, Some(_)) => {
            println!("\nWhat changed since the previous generation:");
            print!("{}", report.to_text());
        }
        (format, _) => print!("{}", format.render(&report)),
    }
    Ok(())
}

fn shown(path: &Path) -> String {
    path.strip_prefix(workspace_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `cargo xtask check`.
pub fn check(args: &CheckArgs) -> anyhow::Result<()> {
    let outputs = run_pipeline(&inputs(
        args.spec.as_deref(),
        args.overlays.as_deref(),
        args.lenient,
    ))?;
    if !outputs.derived.is_empty() {
        bail!(
            "{} operation(s) without an operationId are named by the pipeline but not pinned in \
             overlays/{} (see the notes above): run `cargo xtask regen`, which pins them, and \
             commit the result.",
            outputs.derived.len(),
            keep_names::KEEP_NAMES_FILE
        );
    }
    let missing = missing_behaviour_pins(&outputs)?;
    if !missing.is_empty() {
        bail!(
            "{} behaviour pin action(s) missing from overlays/{} (an operation without its \
             api-version, a dataset without its readiness gate): run `cargo xtask regen`, which \
             pins them, and commit the result.",
            missing.len(),
            keep_behaviour::KEEP_BEHAVIOUR_FILE
        );
    }
    let mut drift = pipeline::drift(&outputs, &workspace_root(), &Layout::workspace());
    if args.spec.is_none() && args.overlays.is_none() {
        for (relative, expected) in test_clients()? {
            drift.extend(pipeline::drift_of(&workspace_root(), &relative, &expected));
        }
    }
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
    bail!(
        "{} generated file(s) differ from what spec/ and overlays/ produce: {}\n\
         Generated files are never edited by hand: change the description, an overlay or the \
         generator, then run `cargo xtask regen` and commit the result.",
        drift.len(),
        names.join(", ")
    )
}
