//! File names from the server: the one a `Content-Disposition` header suggests (RFC 6266), and
//! any name reduced to a single plain path component before it touches a path.

use std::path::Path;

/// The file name a `Content-Disposition` value suggests (RFC 6266), **not** sanitised: pass it
/// through [`sanitize_file_name`] before using it as a path.
///
/// `filename*` (RFC 8187 `UTF-8''...` or `ISO-8859-1'...'...`) wins over `filename`; quoted
/// strings and backslash escapes are understood; an undecodable `filename*` falls back to
/// `filename`. Returns `None` when neither parameter is present or both are empty.
pub fn content_disposition_file_name(value: &str) -> Option<String> {
    let mut plain: Option<String> = None;
    let mut extended: Option<String> = None;
    for (name, value) in disposition_parameters(value) {
        match name.as_str() {
            "filename*" if extended.is_none() => extended = decode_ext_value(&value),
            "filename" if plain.is_none() => plain = Some(value),
            _ => {}
        }
    }
    extended.or(plain).filter(|name| !name.is_empty())
}

/// The `name=value` parameters after the disposition type, names lower-cased.
fn disposition_parameters(value: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    let mut chars = value.chars().peekable();
    // The disposition type (`attachment`, `inline`, ...) up to the first `;`.
    for c in chars.by_ref() {
        if c == ';' {
            break;
        }
    }
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ';') {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c == ';' {
                break;
            }
            name.push(c);
            chars.next();
        }
        let name = name.trim().to_ascii_lowercase();
        if chars.peek() != Some(&'=') {
            continue;
        }
        chars.next();
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => {
                        if let Some(escaped) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    c => value.push(c),
                }
            }
            // Anything between the closing quote and the next `;` is not part of the value.
            while chars.peek().is_some_and(|c| *c != ';') {
                chars.next();
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ';' {
                    break;
                }
                value.push(c);
                chars.next();
            }
            value = value.trim().to_string();
        }
        if !name.is_empty() {
            params.push((name, value));
        }
    }
    params
}

/// An RFC 8187 `ext-value`: `charset'language'percent-encoded`.
fn decode_ext_value(value: &str) -> Option<String> {
    let mut parts = value.splitn(3, '\'');
    let charset = parts.next()?.trim();
    let _language = parts.next()?;
    let encoded = parts.next()?;
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(encoded).collect();
    if charset.eq_ignore_ascii_case("utf-8") {
        String::from_utf8(bytes).ok()
    } else if charset.eq_ignore_ascii_case("iso-8859-1") {
        Some(bytes.iter().map(|&b| b as char).collect())
    } else {
        None
    }
}

/// The longest file name [`sanitize_file_name`] returns, in bytes (file systems allow 255).
pub const MAX_FILE_NAME_BYTES: usize = 200;

/// Turns a server-suggested file name into one plain, portable path component, or `None` when
/// nothing usable remains.
///
/// Path separators (`/`, `\`), characters Windows forbids (`: * ? " < > |`), control
/// characters and line or paragraph separators become `_`; invisible characters are removed:
/// format characters (Unicode category Cf: the bidirectional overrides and isolates
/// U+202A..U+202E and U+2066..U+2069 that make `invoice\u{202E}fdp.exe` display as
/// `invoiceexe.pdf`, zero-width spaces and joiners, the byte order mark, soft hyphens, tag
/// characters) and the other default ignorable code points (variation selectors, fillers);
/// other spaces become plain spaces; leading dots and spaces are removed (no `..`, no hidden
/// files) as are trailing dots and spaces; Windows device names (`CON`, `NUL`, `COM1`, ...) get a `_` prefix;
/// names longer than [`MAX_FILE_NAME_BYTES`] are shortened, keeping the extension. The result,
/// joined to a directory, always names a file directly inside that directory.
pub fn sanitize_file_name(name: &str) -> Option<String> {
    let replaced: String = name
        .chars()
        .filter_map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => Some('_'),
            c if c.is_control() => Some('_'),
            c if is_invisible(c) => None,
            '\u{2028}' | '\u{2029}' => Some('_'),
            c if c.is_whitespace() => Some(' '),
            c => Some(c),
        })
        .collect();
    let trimmed = replaced
        .trim_start_matches(|c: char| c == '.' || c.is_whitespace())
        .trim_end_matches(|c: char| c == '.' || c.is_whitespace());
    if trimmed.is_empty() || trimmed.chars().all(|c| c == '_') {
        return None;
    }
    let mut result = shorten(trimmed, MAX_FILE_NAME_BYTES);
    let stem = result
        .split('.')
        .next()
        .unwrap_or("")
        .trim_end()
        .to_ascii_uppercase();
    let reserved = matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || ((stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit());
    if reserved {
        result.insert(0, '_');
    }
    // Belt and braces: whatever the rules above missed, never return more than one component.
    let mut components = Path::new(&result).components();
    match (components.next(), components.next()) {
        (Some(std::path::Component::Normal(_)), None) => Some(result),
        _ => None,
    }
}

/// Whether `c` is drawn as nothing (or changes how its neighbours are drawn) while being part of
/// a name: a format character (category Cf) or another default ignorable code point (Unicode
/// `DerivedCoreProperties.txt`, `Default_Ignorable_Code_Point`).
fn is_invisible(c: char) -> bool {
    use unicode_general_category::{GeneralCategory, get_general_category};
    get_general_category(c) == GeneralCategory::Format
        || matches!(
            c,
            '\u{034F}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{2065}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFF8}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// At most `max` bytes of `name`, cut at a character boundary, keeping a short extension.
fn shorten(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_string();
    }
    let extension = name
        .rfind('.')
        .map(|i| &name[i..])
        .filter(|ext| ext.len() <= 16 && ext.len() < max / 2)
        .unwrap_or("");
    let room = max - extension.len();
    let stem = &name[..name.len() - extension.len()];
    let mut cut = room.min(stem.len());
    while !stem.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{extension}", stem[..cut].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_disposition_forms() {
        let f = content_disposition_file_name;
        assert_eq!(
            f("attachment; filename=report.pdf").as_deref(),
            Some("report.pdf")
        );
        assert_eq!(
            f("attachment; filename=\"a \\\"b\\\".pdf\"").as_deref(),
            Some("a \"b\".pdf")
        );
        assert_eq!(
            f("attachment; filename=\"fallback.pdf\"; filename*=UTF-8''%C3%B6konto%20%E2%82%AC.pdf").as_deref(),
            Some("ökonto €.pdf")
        );
        assert_eq!(
            f("attachment; FILENAME*=utf-8'en'a%2Fb.txt").as_deref(),
            Some("a/b.txt")
        );
        assert_eq!(
            f("attachment; filename*=iso-8859-1''%E4.txt").as_deref(),
            Some("ä.txt")
        );
        // Unknown charset or broken UTF-8: fall back to the plain parameter.
        assert_eq!(
            f("attachment; filename*=koi8-r''%C1; filename=x.txt").as_deref(),
            Some("x.txt")
        );
        assert_eq!(
            f("attachment; filename*=UTF-8''%FF; filename=x.txt").as_deref(),
            Some("x.txt")
        );
        assert_eq!(f("inline"), None);
        assert_eq!(f("attachment; filename=\"\""), None);
        assert_eq!(
            f("attachment; filename=\"unterminated").as_deref(),
            Some("unterminated")
        );
        assert_eq!(
            f("attachment; size=3; filename = a.txt ; x=y").as_deref(),
            Some("a.txt")
        );
    }

    #[test]
    fn sanitised_names_stay_inside_the_directory() {
        let s = sanitize_file_name;
        assert_eq!(s("report.pdf").as_deref(), Some("report.pdf"));
        assert_eq!(s("../../etc/passwd").as_deref(), Some("_.._etc_passwd"));
        assert_eq!(s("/etc/passwd").as_deref(), Some("_etc_passwd"));
        assert_eq!(
            s("..\\..\\windows\\system.ini").as_deref(),
            Some("_.._windows_system.ini")
        );
        assert_eq!(s("C:\\x.txt").as_deref(), Some("C__x.txt"));
        assert_eq!(s(".hidden").as_deref(), Some("hidden"));
        assert_eq!(s("a\0b\nc.txt").as_deref(), Some("a_b_c.txt"));
        assert_eq!(s("trailing. . ").as_deref(), Some("trailing"));
        assert_eq!(s("nul.txt").as_deref(), Some("_nul.txt"));
        assert_eq!(s("COM1").as_deref(), Some("_COM1"));
        assert_eq!(s("computer.txt").as_deref(), Some("computer.txt"));
        assert_eq!(s(".."), None);
        assert_eq!(s("/"), None);
        assert_eq!(s("  "), None);
        let long = format!("{}.pdf", "ä".repeat(300));
        let short = s(&long).unwrap();
        assert!(
            short.len() <= MAX_FILE_NAME_BYTES && short.ends_with(".pdf"),
            "{short}"
        );
        for hostile in [
            "../x",
            "..",
            "a/../../b",
            "\\\\server\\share",
            "~/.ssh/id",
            "./.",
            "x/.",
        ] {
            if let Some(name) = s(hostile) {
                let joined = Path::new("/target").join(&name);
                assert_eq!(
                    joined.parent(),
                    Some(Path::new("/target")),
                    "{hostile} -> {name}"
                );
            }
        }
    }
}
