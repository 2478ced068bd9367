//! Strings within a schema's lengths and `pattern`: padding or cutting to length, and the
//! generator of a pattern's strings (`rand_regex`, limited to printable characters).

use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind,
    Repetition,
};
use serde_json::Value;

use super::leaf::describe;
use super::unmakeable::MAX_ANSWER_SIZE;

/// `base`, and when its length is outside `min..=max` the ways to bring it inside: padded at
/// the end with its last character or with `x`, at the start with its first; cut at `max`. A
/// pattern or format may refuse some; the caller checks each.
pub(super) fn fitted(base: String, min: usize, max: Option<usize>) -> Vec<String> {
    let length = base.chars().count();
    if length < min {
        let missing = min - length;
        let last = base.chars().last().unwrap_or('x');
        let first = base.chars().next().unwrap_or('x');
        let mut candidates = Vec::with_capacity(3);
        for (pad, at_end) in [(last, true), ('x', true), (first, false)] {
            let mut text = String::with_capacity(base.len() + missing * pad.len_utf8());
            if !at_end {
                text.extend(std::iter::repeat_n(pad, missing));
            }
            text.push_str(&base);
            if at_end {
                text.extend(std::iter::repeat_n(pad, missing));
            }
            candidates.push(text);
        }
        candidates.dedup();
        return candidates;
    }
    match max {
        Some(max) if length > max => vec![base.chars().take(max).collect()],
        _ => vec![base],
    }
}

pub(super) fn describe_string(schema: &Value) -> String {
    describe(schema, &["format", "pattern", "minLength", "maxLength"])
}

/// A generator of the strings `pattern` matches, each at most `left` characters: classes
/// narrowed to printable ASCII where they allow it (ECMA's `\d` is ASCII, and answers stay
/// readable), anchors dropped (a generated string is the whole match, which the validator checks
/// afterwards), `*`, `+` and `{n,}` repeating at most `repeat` more times (none more when that
/// could outgrow `left`).
pub(super) fn pattern_generator(
    pattern: &str,
    repeat: u32,
    left: usize,
) -> Result<rand_regex::Regex, String> {
    let original = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|error| {
            let reason = match &error {
                regex_syntax::Error::Parse(error) => error.kind().to_string(),
                regex_syntax::Error::Translate(error) => error.kind().to_string(),
                other => other.to_string(),
            };
            format!("the mock cannot generate from the pattern {pattern} ({reason})")
        })?;
    let narrowed = |repeat| {
        printable(original.clone(), repeat).map_err(|why| format!("the pattern {pattern} {why}"))
    };
    let (mut hir, size) = narrowed(repeat)?;
    if size > left {
        let (least, size) = narrowed(0)?;
        if size > left {
            return Err(format!(
                "the pattern {pattern} needs more than the {MAX_ANSWER_SIZE} characters of one \
                 answer"
            ));
        }
        hir = least;
    }
    let generator = rand_regex::Regex::with_hir(hir, repeat).map_err(|error| {
        format!("the mock cannot generate from the pattern {pattern} ({error})")
    })?;
    if !generator.is_utf8() {
        return Err(format!(
            "the pattern {pattern} matches bytes that are not text"
        ));
    }
    Ok(generator)
}

/// `hir` as [`pattern_generator`] wants it, with the most characters it can produce (counted
/// with saturation: only what fits in an answer goes on to rand_regex, so no size it computes
/// overflows).
pub(super) fn printable(hir: Hir, repeat: u32) -> Result<(Hir, usize), String> {
    Ok(match hir.into_kind() {
        HirKind::Empty | HirKind::Look(_) => (Hir::empty(), 0),
        HirKind::Literal(literal) => {
            let length = literal.0.len();
            (Hir::literal(literal.0), length)
        }
        HirKind::Class(Class::Unicode(class)) => {
            let mut ascii = ClassUnicode::new([ClassUnicodeRange::new(' ', '~')]);
            ascii.intersect(&class);
            let class = if ascii.ranges().is_empty() {
                class
            } else {
                ascii
            };
            if class.ranges().is_empty() {
                return Err("matches no character in one of its classes".to_owned());
            }
            (Hir::class(Class::Unicode(class)), 1)
        }
        HirKind::Class(Class::Bytes(class)) => {
            let mut ascii = ClassBytes::new([ClassBytesRange::new(b' ', b'~')]);
            ascii.intersect(&class);
            if ascii.ranges().is_empty() {
                return Err("matches no printable character in one of its classes".to_owned());
            }
            (Hir::class(Class::Bytes(ascii)), 1)
        }
        HirKind::Repetition(repetition) => {
            let (sub, each) = printable(*repetition.sub, repeat)?;
            let max = repetition
                .max
                .unwrap_or(u32::MAX)
                .min(repetition.min.saturating_add(repeat));
            (
                Hir::repetition(Repetition {
                    min: repetition.min,
                    max: Some(max),
                    greedy: repetition.greedy,
                    sub: Box::new(sub),
                }),
                each.saturating_mul(max as usize),
            )
        }
        HirKind::Capture(capture) => {
            let (sub, size) = printable(*capture.sub, repeat)?;
            (
                Hir::capture(Capture {
                    index: capture.index,
                    name: capture.name,
                    sub: Box::new(sub),
                }),
                size,
            )
        }
        HirKind::Concat(parts) => {
            let mut size = 0usize;
            let mut out = Vec::with_capacity(parts.len());
            for part in parts {
                let (part, part_size) = printable(part, repeat)?;
                size = size.saturating_add(part_size);
                out.push(part);
            }
            (Hir::concat(out), size)
        }
        HirKind::Alternation(branches) => {
            let mut size = 0usize;
            let mut out = Vec::with_capacity(branches.len());
            for branch in branches {
                let (branch, branch_size) = printable(branch, repeat)?;
                size = size.max(branch_size);
                out.push(branch);
            }
            (Hir::alternation(out), size)
        }
    })
}
