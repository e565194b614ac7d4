//! What the commands print, on both streams.
//!
//! Standard output: a reader that leaves early (`snapshot verify | head`) ends the command
//! quietly, as a process killed by SIGPIPE would end, instead of the panic `println!` raises
//! on a closed pipe. Standard error: a message that cannot be written (a closed stream,
//! `2>&-`, or a reader that left) is dropped and the command goes on to its own exit code,
//! instead of the panic `eprintln!` raises.
//!
//! Escaping: whatever came from a store or a server (an account name, a scope, a tree's
//! version, an aspect's name, an error's text) may hold a terminal escape (ESC, CSI), a
//! newline that forges a line, or a bidirectional override. Every line printed through these
//! macros has such characters escaped ([`for_terminal`]); a single field of a line (a name in
//! a column) goes through [`escaped`], which escapes newlines and tabs too.

use std::borrow::Cow;

/// Writes `args` to standard output and flushes it. When the reader has gone (a broken pipe),
/// exits at once with status 141 (128 + SIGPIPE) and no message: nobody wants the rest. On any
/// other write failure, says so on standard error and exits with status 1.
pub fn write(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let text = args.to_string();
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(for_terminal(&text).as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        write_err(format_args!(
            "error: cannot write to standard output: {e}\n"
        ));
        std::process::exit(1);
    }
}

/// Writes `args` to standard error. A failure (a closed stream, a reader that left) drops the
/// message: standard error is where a command explains itself, and a command whose reader of
/// it left still ends with its own exit code.
pub fn write_err(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let text = args.to_string();
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(for_terminal(&text).as_bytes())
        .and_then(|()| stderr.flush());
}

/// True for a character a terminal may act on: a control character (C0, DEL, C1) or a
/// bidirectional formatting character (taxonomy-tree's rule, the one validation applies).
fn is_unsafe(c: char) -> bool {
    taxonomy_tree::tree::is_unsafe_char(c)
}

/// `text` as one field of a line: every control character (newline and tab included) and
/// every bidirectional formatting character escaped as Rust writes it (`\u{1b}`).
pub fn escaped(text: &str) -> Cow<'_, str> {
    escape_but(text, &[])
}

/// `text` as lines for a terminal: as [`escaped`], but newlines and tabs stay (the commands'
/// own line breaks and columns).
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    escape_but(text, &['\n', '\t'])
}

/// JSON text for a terminal: every control or bidirectional formatting character but the
/// newline (serde_json escapes those inside strings, except DEL, C1 and the bidirectional
/// ones) written as a JSON escape (`\u202e`), so the text stays the same JSON.
pub fn json_for_terminal(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c != '\n' && is_unsafe(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

fn escape_but<'a>(text: &'a str, kept: &[char]) -> Cow<'a, str> {
    let unsafe_here = |c: char| is_unsafe(c) && !kept.contains(&c);
    if !text.chars().any(unsafe_here) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_here(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `println!` that escapes ([`for_terminal`]) and ends the command quietly on a closed pipe
/// ([`write()`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that escapes ([`for_terminal`]) and ends the command quietly on a closed pipe
/// ([`write()`]).
#[allow(unused_macros)]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*))
    };
}

/// `eprintln!` that escapes ([`for_terminal`]) and never panics: a message standard error
/// cannot take is dropped ([`write_err()`]).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::write_err(format_args!("{}\n", format_args!($($arg)*)))
    };
}
