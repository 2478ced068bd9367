//! `cargo xtask release-day`'s release: made from the vendored description as it is, it applies
//! to it, and to the vendored description after the vendor published every hand-written release
//! fixture (what stopped the rehearsal: "the release ... does not apply"). The rehearsal itself
//! runs the whole `ci` of a copy: CI's last step, not a test.

use std::path::Path;

use creditdata_codegen::document::{self, Format};
use creditdata_codegen::made_release;
use creditdata_codegen::overlay::{self, ApplyOptions, Overlay};
use serde_json::Value;

use crate::support::{text, workspace_root, xtask};

fn vendored() -> Value {
    document::load(&workspace_root().join("spec/openapi.json")).expect("the vendored description")
}

#[test]
fn print_release_prints_an_overlay_that_applies_to_the_vendored_description() {
    let output = xtask()
        .args(["release-day", "--print-release"])
        .output()
        .expect("xtask runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let printed = text(&output.stdout);
    let overlay =
        Overlay::parse(&printed, Format::Yaml, "the printed release").expect("an overlay");
    let mut released = vendored();
    overlay::apply(&mut released, &[overlay], &ApplyOptions { lenient: false })
        .expect("the printed release applies");
    assert_ne!(released["info"]["version"], vendored()["info"]["version"]);
    assert!(
        released["paths"].as_object().unwrap().len()
            > vendored()["paths"].as_object().unwrap().len()
    );
}

#[test]
fn the_release_applies_after_the_vendor_published_every_fixture() {
    let dir = workspace_root().join("codegen/tests/data/release-day");
    let mut published = vendored();
    for entry in std::fs::read_dir(&dir).expect("the release-day fixtures") {
        let path = entry.expect("an entry").path();
        if !path.to_string_lossy().ends_with(".overlay.yaml") {
            continue;
        }
        let fixture = Overlay::load(&path).expect("a valid fixture");
        let mut candidate = published.clone();
        // A fixture the vendor already published (or that no longer fits) is left out.
        if overlay::apply(&mut candidate, &[fixture], &ApplyOptions::default()).is_ok() {
            published = candidate;
        }
    }
    let made = made_release::make(&published).expect("a release is made");
    let released = made.apply(&published).expect("it applies");
    // And once more: the vendor published the made release too.
    let again = made_release::make(&released).expect("a release is made again");
    again.apply(&released).expect("it applies again");
    assert!(Path::new(&dir).is_dir());
}
