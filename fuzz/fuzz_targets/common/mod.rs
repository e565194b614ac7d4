//! What the sanitizer targets share: which secrets can be looked for in a redacted text without
//! false alarms, and the encodings the redactor promises to see through.

// Each target uses a part of this module.
#![allow(dead_code)]

/// Characters a checked secret is made of. Left out: the letters and brackets of `[redacted]`
/// and `…[truncated]`, and the `\`, `u`, `{`, `}` of the `\u{…}` escapes of control characters,
/// so that a secret found in the output can only be made of text the redactor let through;
/// and `<`, `>`, which delimit a planted secret.
pub const ALPHABET: &[u8] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789bfghijklmopqsvwxyz %+&=#^.~-_*!$'(),:;@?|/\"";

/// Whether `secret` can be looked for in a redacted text: the redactor searches secrets of at
/// least 4 bytes, and a secret of hexadecimal digits only could be rebuilt from a `\u{…}`
/// escape.
pub fn checkable(secret: &str) -> bool {
    secret.len() >= 4
        && secret.bytes().all(|b| ALPHABET.contains(&b))
        && !secret.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Bytes for choices, 0 when exhausted.
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    pub fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
}

/// One layer of percent (form) encoding: what must be encoded is, every other byte may be,
/// in upper- or lower-case hex; a space is `+` or `%20`.
pub fn percent(s: &[u8], choices: &mut Bytes<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in s {
        let c = choices.next();
        let must =
            matches!(b, b'%' | b'+' | b'&' | b'=' | b'#' | b'\\' | b'"') || !b.is_ascii_graphic();
        if b == b' ' && c & 1 == 0 {
            out.push(b'+');
        } else if must || c & 2 != 0 {
            let hex = if c & 4 == 0 {
                format!("%{b:02X}")
            } else {
                format!("%{b:02x}")
            };
            out.extend_from_slice(hex.as_bytes());
        } else {
            out.push(b);
        }
    }
    out
}

/// One layer of JSON string escaping: `"` and `\` must be escaped, `/` may be `\/`, any byte
/// may be `\u00XX`.
pub fn json(s: &[u8], choices: &mut Bytes<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in s {
        let c = choices.next();
        match (b, c % 4) {
            (b'"' | b'\\' | b'/', 0 | 1) => out.extend_from_slice(&[b'\\', b]),
            (_, 2) => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            (_, 3) => out.extend_from_slice(format!("\\u{b:04X}").as_bytes()),
            (b'"' | b'\\', _) => out.extend_from_slice(&[b'\\', b]),
            _ => out.push(b),
        }
    }
    out
}
