//! Shared helpers of the integration tests: the committed snapshots and the saved responses.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use marketplaces::Marketplace;
use taxonomy_tree::decode::Provenance;
use taxonomy_tree::snapshot;
use taxonomy_tree::tree::CategoryTree;

/// A command for `program` that sees none of the caller's `MARKETPLACE_*` or `TAXONOMY_*`
/// settings (nor `RUSTFLAGS`): a test gives it exactly the environment it means to.
pub fn clean_command(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.starts_with("MARKETPLACE_") || text.starts_with("TAXONOMY_") || text == "RUSTFLAGS"
        {
            command.env_remove(&name);
        }
    }
    command
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The marketplaces with a committed snapshot.
pub fn snapshot_sites() -> Vec<Marketplace> {
    snapshot::sites_in(&snapshots_dir())
}

/// The committed snapshots directory.
pub fn snapshots_dir() -> PathBuf {
    root().join("snapshots")
}

/// The committed snapshot of a site.
pub fn committed(site: Marketplace) -> CategoryTree {
    snapshot::read(&snapshots_dir().join(site.snapshot_file_name())).unwrap()
}

/// The saved get-category-tree response of a site (`tests/fixtures/trees/N.json.gz`).
pub fn saved_response(site: Marketplace) -> Vec<u8> {
    let path = root().join(format!("tests/fixtures/trees/{}.json.gz", site.tree_id()));
    let file = std::fs::File::open(&path).unwrap();
    let mut body = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut body)
        .unwrap();
    body
}

/// The provenance recorded in a committed snapshot.
pub fn provenance_of(tree: &CategoryTree) -> Provenance {
    Provenance {
        language: tree.meta.language.clone(),
        taken_at: tree.meta.taken_at.clone(),
        source: tree.meta.source.clone(),
        note: tree.meta.note.clone(),
    }
}

/// A fresh temporary directory holding a copy of the committed snapshots.
pub fn copy_of_snapshots() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for site in snapshot_sites() {
        let name = site.snapshot_file_name();
        std::fs::copy(snapshots_dir().join(name), dir.path().join(name)).unwrap();
    }
    dir
}

/// Every file's bytes in a directory, sorted by name.
pub fn dir_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// `tree` without leaf `id` (removed from its parent's children too).
pub fn without(mut tree: CategoryTree, id: u32) -> CategoryTree {
    tree.categories.retain(|c| c.id != id);
    for c in &mut tree.categories {
        c.children.retain(|&k| k != id);
    }
    tree
}
