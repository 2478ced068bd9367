//! Findings on schemas the open-enum stage made (a request-side `...Input` copy, a hoisted
//! inline enum) are reported, and fixed, where their author wrote them: a suggested overlay
//! action that targets a schema the published description does not have would fix nothing.

use serde_json::Value;

use super::loc::Loc;
use super::report::{Finding, SuggestedFix};
use crate::document::pointer;
use crate::open_enums;

/// Where the open-enum stage took the component schema `name` from: its hoisted-from place,
/// or (for a request-side copy) its original's. `None` for a schema of the document itself.
pub(super) fn schema_source(doc: &Value, name: &str) -> Option<Loc> {
    let mut name = name.to_string();
    let mut copied = false;
    for _ in 0..8 {
        let schema = Loc::root()
            .key("components")
            .key("schemas")
            .key(&name)
            .get(doc)?;
        if let Some(from) = schema.get(open_enums::HOISTED_MARK).and_then(Value::as_str) {
            return Some(Loc::of_pointer(doc, from));
        }
        match schema
            .get(open_enums::REQUEST_VARIANT_MARK)
            .and_then(Value::as_str)
        {
            Some(original) if original != name => {
                name = original.to_string();
                copied = true;
            }
            _ => break,
        }
    }
    copied.then(|| Loc::root().key("components").key("schemas").key(&name))
}

/// `finding`, moved from a schema the open-enum stage made to where that schema came from.
pub(super) fn at_source(doc: &Value, mut finding: Finding) -> Finding {
    let prefix = "/components/schemas/";
    let Some(rest) = finding.pointer.strip_prefix(prefix) else {
        return finding;
    };
    let (token, inner) = rest.split_once('/').map_or((rest, ""), |(t, i)| (t, i));
    let name = pointer::unescape(token);
    let Some(source) = schema_source(doc, &name) else {
        return finding;
    };
    let made = Loc::root().key("components").key("schemas").key(&name);
    finding.pointer = if inner.is_empty() {
        source.pointer()
    } else {
        format!("{}/{inner}", source.pointer())
    };
    let (made_path, source_path) = (made.path(), source.path());
    let retarget = |fix: &mut SuggestedFix| {
        if let Some(rest) = fix.target.strip_prefix(&made_path)
            && (rest.is_empty() || rest.starts_with(['.', '[']))
        {
            fix.target = format!("{source_path}{rest}");
        }
    };
    retarget(&mut finding.fix);
    finding.follow_up.iter_mut().for_each(retarget);
    finding
}
