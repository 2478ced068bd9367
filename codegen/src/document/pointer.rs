//! RFC 6901 JSON pointers: the one spelling of `~0` and `~1` every stage uses.

/// One reference token as written in a pointer: `~` becomes `~0`, `/` becomes `~1`.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// One reference token as a key: the reverse of [`escape`] (`~1` first, so `~01` stays `~1`).
pub fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// The pointer to member `token` of the node at `pointer`.
pub fn child(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    push(&mut out, token);
    out
}

/// Appends `/token` to `pointer` in place (for walks that extend and truncate one buffer).
pub fn push(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// The reference tokens of `pointer`, unescaped (`""`, the whole document, has none).
pub fn tokens(pointer: &str) -> Vec<String> {
    pointer.split('/').skip(1).map(unescape).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_through_escaping() {
        for key in ["plain", "a/b", "~", "~1", "/~0/", ""] {
            let pointer = child("/paths", key);
            assert_eq!(tokens(&pointer), ["paths", key], "{pointer}");
            assert_eq!(unescape(&escape(key)), key);
        }
        assert_eq!(child("", "a/b~c"), "/a~1b~0c");
        assert!(tokens("").is_empty());
    }
}
