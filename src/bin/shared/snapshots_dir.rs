//! The snapshots directory the commands read (`snapshot` and `listing`), resolved one way:
//! `--dir`, else `TAXONOMY_SNAPSHOTS_DIR` (what the build reads, as a project's
//! `.cargo/config.toml` sets it), else `./snapshots`; and printed one way on standard error.

use std::path::{Path, PathBuf};

use taxonomy_codegen::build_script::SNAPSHOTS_DIR_ENV;

/// Where the snapshots directory came from, as [`announce`] prints it.
pub(crate) const FROM_DEFAULT: &str = "the default, ./snapshots";

/// The snapshots directory: `--dir` (`flag`), else `TAXONOMY_SNAPSHOTS_DIR`, else
/// `./snapshots`; and where that came from (`--dir`, the variable's name or [`FROM_DEFAULT`]).
pub(crate) fn snapshots_dir(flag: Option<PathBuf>) -> (PathBuf, &'static str) {
    if let Some(dir) = flag {
        return (dir, "--dir");
    }
    match std::env::var_os(SNAPSHOTS_DIR_ENV) {
        Some(dir) if !dir.is_empty() => (PathBuf::from(dir), SNAPSHOTS_DIR_ENV),
        _ => (PathBuf::from("snapshots"), FROM_DEFAULT),
    }
}

/// `dir` made absolute (as printed), or as given when it cannot be.
pub(crate) fn shown(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Prints which snapshots directory is used and where that came from, on standard error:
/// `snapshots: /abs/dir (from --dir)`.
pub(crate) fn announce(dir: &Path, from: &str) {
    errln!("snapshots: {} (from {from})", shown(dir).display());
}
