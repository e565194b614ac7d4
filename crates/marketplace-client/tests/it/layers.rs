//! The crate's layers (ARCHITECTURE.md): the types (`oauth`, `api`, `taxonomy`, `signing`,
//! `config`, `options`) and the sans-IO `core` never import a front (`aio`, the blocking
//! layer); the fronts import them. An import the other way makes an import circle (the
//! fronts already import the types), so a type module would no longer build, be read or be
//! tested without the HTTP stack. The facades' re-exports of the blocking clients
//! (`pub use crate::blocking::…` in `oauth/mod.rs`, `api/mod.rs`, `taxonomy/mod.rs`) are the
//! public names of the blocking front, not imports, and `trees.rs` and `lib.rs` stand above
//! the fronts (no front imports them).

use std::path::{Path, PathBuf};

/// Paths by which code reaches a front: its modules, or its clients through the facades.
const FRONT_PATHS: [&str; 5] = [
    "crate::aio",
    "crate::blocking",
    "crate::api::ApiClient",
    "crate::oauth::OAuthClient",
    "crate::taxonomy::TaxonomyClient",
];

/// Files above the fronts, which may use them.
const ABOVE_THE_FRONTS: [&str; 2] = ["lib.rs", "trees.rs"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a line: without a comment (doc comments included) and string literals.
fn code(line: &str) -> String {
    let line = line.split("//").next().unwrap_or("");
    let mut out = String::new();
    let mut in_string = false;
    for c in line.chars() {
        if c == '"' {
            in_string = !in_string;
        } else if !in_string {
            out.push(c);
        }
    }
    out
}

/// The front a line of the type or core module `relative` (its path below `src/`) reaches, if
/// any.
fn imports_a_front(relative: &str, line: &str) -> Option<&'static str> {
    let code = code(line);
    // A facade's re-export of a blocking client names the front; it is not an import.
    let facade = ["oauth/mod.rs", "api/mod.rs", "taxonomy/mod.rs"].contains(&relative);
    if facade && code.trim_start().starts_with("pub use crate::blocking::") {
        return None;
    }
    FRONT_PATHS
        .into_iter()
        .find(|path| code.contains(path))
        .or_else(|| {
            code.contains("impl OAuthClient")
                .then_some("impl OAuthClient")
        })
}

#[test]
fn types_and_the_core_never_import_a_front() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 30, "the sources were found: {files:?}");
    let mut found = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if relative.starts_with("aio/")
            || relative.starts_with("blocking/")
            || ABOVE_THE_FRONTS.contains(&relative.as_str())
        {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if let Some(path) = imports_a_front(&relative, line) {
                found.push(format!("src/{relative}:{}: {path}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a type or core module imports a front (move the code into the front, which imports \
         the type):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_an_import_of_a_front() {
    assert_eq!(
        imports_a_front("signing.rs", "        api: &crate::aio::api::ApiClient,"),
        Some("crate::aio")
    );
    assert_eq!(
        imports_a_front(
            "oauth/consent.rs",
            "use crate::blocking::oauth::OAuthClient;"
        ),
        Some("crate::blocking")
    );
    assert_eq!(
        imports_a_front("signing.rs", "/// [`ApiClient`](crate::api::ApiClient)"),
        None
    );
    assert_eq!(
        imports_a_front(
            "oauth/mod.rs",
            "pub use crate::blocking::oauth::OAuthClient;"
        ),
        None
    );
    assert_eq!(
        imports_a_front(
            "oauth/consent.rs",
            "pub use crate::blocking::oauth::OAuthClient;"
        ),
        Some("crate::blocking")
    );
}
