//! `cargo xtask fetch`: refreshes the vendored published description from its publisher.
//!
//! The logic is `creditdata_codegen::fetch`; this module reads the command line and prints.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::bail;
use clap::{ArgGroup, Args};
use creditdata_codegen::fetch::{
    self, FetchError, Options, Source, Urls, VendoredCopy, redacted_url,
};

use crate::regen::workspace_root;

/// Download the published OpenAPI description (JSON and YAML) and replace the vendored copy.
///
/// The addresses come from spec/source.toml, or from --url / --json-url and --yaml-url (used for
/// this run only, unless --save-urls). Both documents must parse as OpenAPI 3.x and be equal as
/// data; only then are spec/openapi.json and spec/openapi.yaml replaced, each atomically and byte
/// for byte as published, and the digests in spec/source.toml rewritten (its comments kept).
/// Any failure leaves the vendored copy untouched.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("addresses").args(["url", "json_url", "yaml_url"]).multiple(true)))]
pub struct FetchArgs {
    /// Only compare: exit 0 if the published documents are the vendored ones byte for byte (and
    /// the digests match), 1 with a summary of what differs (also when only formatting differs).
    #[arg(long)]
    check: bool,
    /// Fetch from this address instead of spec/source.toml's. It must end in .json, .yaml or
    /// .yml: the other document's address is the same with the extension swapped (.json ↔
    /// .yaml; a .yml address pairs with .json). Otherwise give --json-url and --yaml-url.
    #[arg(long, value_name = "URL", conflicts_with_all = ["json_url", "yaml_url"])]
    url: Option<String>,
    /// The JSON document's address (with --yaml-url).
    #[arg(long, value_name = "URL", requires = "yaml_url")]
    json_url: Option<String>,
    /// The YAML document's address (with --json-url).
    #[arg(long, value_name = "URL", requires = "json_url")]
    yaml_url: Option<String>,
    /// Record the addresses given on the command line in spec/source.toml as the publisher's
    /// (and set placeholder = false). Without it they are used for this run only.
    #[arg(long, requires = "addresses", conflicts_with = "check")]
    save_urls: bool,
    /// Give up on a download after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    timeout: u64,
    /// The directory holding source.toml and the vendored documents [default: the workspace's
    /// spec/].
    #[arg(long, value_name = "DIR")]
    spec_dir: Option<PathBuf>,
}

/// Runs the command. `Err` is an error, or (with --check) that the vendored copy is not the
/// published one.
pub fn fetch(args: &FetchArgs) -> anyhow::Result<()> {
    let spec_dir = args
        .spec_dir
        .clone()
        .unwrap_or_else(|| workspace_root().join("spec"));
    match run(args, &spec_dir) {
        Ok(true) => Ok(()),
        Ok(false) => bail!(
            "the vendored description in {} is not the published one: run `cargo xtask fetch` \
             to update it",
            spec_dir.display()
        ),
        Err(e) if e.vendored_unchanged() && !args.check => {
            Err(anyhow::Error::new(e).context(format!(
                "fetch failed; nothing was written, the vendored copy in {} is unchanged",
                spec_dir.display()
            )))
        }
        Err(e) => Err(e.into()),
    }
}

/// Fetches (or, with --check, compares). `Ok(false)`: --check found differences.
pub fn run(args: &FetchArgs, spec_dir: &Path) -> Result<bool, FetchError> {
    let source = Source::load(spec_dir)?;
    let urls = match (&args.url, &args.json_url, &args.yaml_url) {
        (Some(url), _, _) => Urls::from_one(url)?,
        (None, Some(json), Some(yaml)) => Urls::new(json, yaml)?,
        _ => source.publisher_urls(&spec_dir.join(fetch::SOURCE_FILE))?,
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
    let info_version = published
        .document
        .pointer("/info/version")
        .and_then(|v| v.as_str())
        .unwrap_or("(none)");
    eprintln!(
        "published: OpenAPI {}, info.version {info_version}, {} operations; the JSON and the YAML \
         agree",
        published.version,
        published.operation_count()
    );
    if !(published.version.starts_with("3.0.") || published.version.starts_with("3.1.")) {
        eprintln!(
            "warning: OpenAPI {} is neither 3.0.x nor 3.1.x, the versions down-convert reads: \
             `cargo xtask regen` will refuse it",
            published.version
        );
    }
    let vendored = VendoredCopy::read(spec_dir, &source)?;
    let comparison = fetch::compare(&published, &vendored, &source);

    if args.check {
        print!("{comparison}");
        return Ok(comparison.is_up_to_date());
    }

    let written = fetch::write(spec_dir, &source, &vendored, &published, args.save_urls)?;
    if written.is_empty() {
        println!(
            "up to date: {} and {} in {} are the published ones",
            source.vendored.json,
            source.vendored.yaml,
            spec_dir.display()
        );
        return Ok(true);
    }
    for name in &written.files {
        println!("wrote {}", spec_dir.join(name).display());
    }
    if comparison.json_same_bytes && comparison.yaml_same_bytes {
        // Only source.toml changed: digests corrected, or addresses saved.
        return Ok(true);
    }
    print!("{comparison}");
    if comparison.json_same_bytes {
        // The generator reads the JSON document only.
        println!(
            "Only {} changed: `cargo xtask regen` is not needed.",
            source.vendored.yaml
        );
    } else {
        // Even a formatting-only change moves the input digest recorded in generated.rs.
        println!(
            "Next: run `cargo xtask regen` to regenerate the client from the new description."
        );
    }
    Ok(true)
}
