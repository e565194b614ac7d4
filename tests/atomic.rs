//! Atomic file replacement: staged files touch nothing until committed, and concurrent
//! writers to one path never trip over each other's temporary files.

use taxonomy_tree::atomic::{stage, write_atomic};

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

#[test]
fn a_staged_file_changes_nothing_until_committed() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    write_atomic(&a, b"old a", None).unwrap();
    write_atomic(&b, b"old b", None).unwrap();
    let staged_a = stage(&a, b"new a", None).unwrap();
    let staged_b = stage(&b, b"new b", None).unwrap();
    assert_eq!(std::fs::read(&a).unwrap(), b"old a");
    assert_eq!(
        names(dir.path()).len(),
        4,
        "two targets, two temporary files"
    );
    // Abandoning one (as when a later step fails) removes its temporary file.
    drop(staged_b);
    staged_a.commit().unwrap();
    assert_eq!(std::fs::read(&a).unwrap(), b"new a");
    assert_eq!(std::fs::read(&b).unwrap(), b"old b");
    assert_eq!(names(dir.path()), vec!["a.json", "b.json"]);
}

#[test]
fn concurrent_writers_to_one_path_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.json");
    std::thread::scope(|s| {
        for i in 0..16 {
            let path = &path;
            s.spawn(move || {
                for j in 0..20 {
                    write_atomic(
                        path,
                        format!("writer {i} round {j}").as_bytes(),
                        Some(0o600),
                    )
                    .unwrap();
                }
            });
        }
    });
    let content = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
    assert!(
        content.starts_with("writer ") && content.ends_with("round 19"),
        "{content}"
    );
    assert_eq!(
        names(dir.path()),
        vec!["store.json"],
        "no temporary file left"
    );
}

#[test]
fn a_path_without_a_file_name_is_an_error_not_a_panic() {
    let err = write_atomic(std::path::Path::new("/"), b"x", None).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}
