//! Comparing the published description with the vendored copy: same bytes, same digests, same
//! data, and otherwise where the data differs and a preview of the change report.

use std::fmt;

use serde_json::Value;

use super::{Differences, MAX_POINTERS, Published, SOURCE_FILE, Source, VendoredCopy, differences};
use crate::diff::{self, ChangeReport};
use crate::document::{self, Format};
use crate::downconvert;
use crate::pipeline::sha256_hex;

/// How the published description compares with the vendored copy.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The published JSON has the vendored JSON's bytes.
    pub json_same_bytes: bool,
    /// The published YAML has the vendored YAML's bytes.
    pub yaml_same_bytes: bool,
    /// `source.toml`'s digests are those of the published bytes.
    pub digests_current: bool,
    /// The published document equals the vendored JSON as data; `None` when there is no
    /// readable vendored JSON to compare with (missing or not parseable: see `vendored_problem`).
    pub same_data: Option<bool>,
    /// Why the vendored JSON could not be compared as data.
    pub vendored_problem: Option<String>,
    /// Where the data differs.
    pub differences: Differences,
    pub paths_added: usize,
    pub paths_removed: usize,
    /// A preview of the change report: the two published descriptions compared after
    /// down-convert, without overlays (`cargo xtask drift` runs the whole pipeline). `None` when
    /// the vendored copy could not be compared.
    pub report: Option<ChangeReport>,
    /// File names, for messages.
    pub json_name: String,
    pub yaml_name: String,
}

impl Comparison {
    /// Whether fetching would write nothing: both files and the digests are current.
    pub fn is_up_to_date(&self) -> bool {
        self.json_same_bytes && self.yaml_same_bytes && self.digests_current
    }

    /// Whether the bytes differ but the data is the same (a reformatting by the publisher).
    pub fn only_formatting_differs(&self) -> bool {
        !(self.json_same_bytes && self.yaml_same_bytes) && self.same_data == Some(true)
    }
}

/// Compares the published description with the vendored copy and `source`'s digests.
pub fn compare(published: &Published, vendored: &VendoredCopy, source: &Source) -> Comparison {
    let json_same_bytes = vendored.json.as_deref() == Some(&published.json[..]);
    let yaml_same_bytes = vendored.yaml.as_deref() == Some(&published.yaml[..]);
    let digests_current = source
        .vendored
        .json_sha256
        .eq_ignore_ascii_case(&sha256_hex(&published.json))
        && source
            .vendored
            .yaml_sha256
            .eq_ignore_ascii_case(&sha256_hex(&published.yaml));
    let old = match &vendored.json {
        None => Err(format!("there is no vendored {}", source.vendored.json)),
        Some(bytes) => std::str::from_utf8(bytes)
            .map_err(|e| format!("the vendored {} is not UTF-8: {e}", source.vendored.json))
            .and_then(|text| {
                document::parse(text, Format::Json, &source.vendored.json)
                    .map_err(|e| e.to_string())
            }),
    };
    let mut comparison = Comparison {
        json_same_bytes,
        yaml_same_bytes,
        digests_current,
        same_data: None,
        vendored_problem: None,
        differences: Differences::default(),
        paths_added: 0,
        paths_removed: 0,
        report: None,
        json_name: source.vendored.json.clone(),
        yaml_name: source.vendored.yaml.clone(),
    };
    match old {
        Err(problem) => comparison.vendored_problem = Some(problem),
        Ok(old) => {
            let new = &published.document;
            comparison.same_data = Some(&old == new);
            comparison.differences = differences(&old, new, MAX_POINTERS);
            let paths = |doc: &Value| -> Vec<String> {
                doc.get("paths")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default()
            };
            let (old_paths, new_paths) = (paths(&old), paths(new));
            comparison.paths_added = new_paths.iter().filter(|p| !old_paths.contains(p)).count();
            comparison.paths_removed = old_paths.iter().filter(|p| !new_paths.contains(p)).count();
            // The differ reads OpenAPI 3.0, as the generator does.
            let as_3_0 = |doc: &Value| {
                downconvert::downconvert(doc)
                    .map(|c| c.document)
                    .unwrap_or_else(|_| doc.clone())
            };
            let (old, new) = (as_3_0(&old), as_3_0(new));
            // Without the overlays, the behaviour pins are not there to hold anything: what
            // they keep is drift's and regen's to report.
            comparison.report = Some(
                diff::compare(&diff::Side::effective(&old), &diff::Side::effective(&new))
                    .without_pinned_behaviour(),
            );
        }
    }
    comparison
}

impl fmt::Display for Comparison {
    /// A short summary: what differs, the counts, the first differing pointers, then the
    /// operations and schemas report when the data differs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_up_to_date() {
            return writeln!(
                f,
                "Up to date: the published {} and {} are the vendored ones, byte for byte.",
                self.json_name, self.yaml_name
            );
        }
        let differing: Vec<&str> = [
            (!self.json_same_bytes).then_some(self.json_name.as_str()),
            (!self.yaml_same_bytes).then_some(self.yaml_name.as_str()),
        ]
        .into_iter()
        .flatten()
        .collect();
        if differing.is_empty() {
            writeln!(
                f,
                "The vendored files are the published ones, but the digests in {SOURCE_FILE} are \
                 not theirs."
            )?;
            return Ok(());
        }
        writeln!(
            f,
            "The published {} differ{} from the vendored copy.",
            differing.join(" and "),
            if differing.len() == 1 { "s" } else { "" }
        )?;
        if let Some(problem) = &self.vendored_problem {
            return writeln!(f, "It cannot be compared as data: {problem}.");
        }
        if self.only_formatting_differs() {
            return writeln!(f, "Only formatting differs: the data is the same.");
        }
        writeln!(
            f,
            "Paths: {} added, {} removed.",
            self.paths_added, self.paths_removed
        )?;
        let d = &self.differences;
        writeln!(
            f,
            "{} difference{} as data (`+` new, `-` gone, `~` changed){}:",
            d.count,
            if d.count == 1 { "" } else { "s" },
            if d.count > d.pointers.len() {
                format!(", the first {}", d.pointers.len())
            } else {
                String::new()
            }
        )?;
        for pointer in &d.pointers {
            writeln!(f, "  {pointer}")?;
        }
        if let Some(report) = &self.report {
            writeln!(
                f,
                "\nPreview of the change report (the published descriptions without overlays, so \
                 without what overlays/91-keep-behaviour pins; `cargo xtask drift --spec` runs the \
                 whole pipeline):"
            )?;
            write!(f, "{}", report.to_text())?;
        }
        Ok(())
    }
}
