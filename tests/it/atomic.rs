//! Atomic file replacement: staged files touch nothing until committed, a set of files is
//! replaced all or nothing, concurrent writers to one path never trip over each other's
//! temporary files, and a crashed run's leftovers neither block nor stay.

use std::time::{Duration, SystemTime};

use taxonomy_tree::atomic::{
    STALE_AFTER, commit_all, commit_all_observed, lock_dir, remove_leftovers, stage, write_atomic,
};

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

#[test]
fn a_rename_failing_half_way_puts_back_the_files_already_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    let c = dir.path().join("c.json");
    write_atomic(&a, b"old a", None).unwrap();
    // `b` did not exist before; `c`'s target is a non-empty directory, which no file can
    // replace (whoever runs the test, root included).
    std::fs::create_dir(&c).unwrap();
    std::fs::write(c.join("inside"), b"x").unwrap();
    let before = names(dir.path());
    let staged = vec![
        stage(&a, b"new a", None).unwrap(),
        stage(&b, b"new b", None).unwrap(),
        stage(&c, b"new c", None).unwrap(),
    ];
    let err = commit_all(staged).unwrap_err();
    assert_eq!(err.path, c, "{err}");
    assert_eq!(std::fs::read(&a).unwrap(), b"old a");
    assert!(!b.exists(), "a file that did not exist is removed again");
    assert_eq!(
        names(dir.path()),
        before,
        "no temporary or kept file is left"
    );
    assert_eq!(std::fs::read(c.join("inside")).unwrap(), b"x");
}

#[test]
fn committing_a_set_replaces_every_file_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    write_atomic(&a, b"old a", None).unwrap();
    let staged = vec![
        stage(&a, b"new a", None).unwrap(),
        stage(&b, b"new b", None).unwrap(),
    ];
    commit_all(staged).unwrap();
    assert_eq!(std::fs::read(&a).unwrap(), b"new a");
    assert_eq!(std::fs::read(&b).unwrap(), b"new b");
    assert_eq!(names(dir.path()), vec!["a.json", "b.json"]);
}

/// Sets a file's modification time `age` into the past.
fn age(path: &std::path::Path, age: Duration) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - age).unwrap();
}

#[test]
fn leftover_temporary_files_neither_block_a_write_nor_stay() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.json");
    // What a crashed earlier run with this process id left (in a container the id repeats):
    // every name the old `.NAME.tmp.{pid}.{n}` scheme would have tried.
    let pid = std::process::id();
    for n in 0..1_000 {
        let leftover = dir.path().join(format!(".store.json.tmp.{pid}.{n}"));
        std::fs::write(&leftover, b"torn").unwrap();
        age(&leftover, STALE_AFTER + Duration::from_secs(60));
    }
    // A concurrent writer's live temporary file (fresh) and another target's old one.
    let live = dir.path().join(".store.json.tmp.live");
    std::fs::write(&live, b"being written").unwrap();
    let other = dir.path().join(".other.json.tmp.1.0");
    std::fs::write(&other, b"not ours").unwrap();
    age(&other, STALE_AFTER * 10);

    write_atomic(&path, b"new", None).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"new");
    assert_eq!(
        names(dir.path()),
        vec![".other.json.tmp.1.0", ".store.json.tmp.live", "store.json"],
        "stale leftovers of this target are removed, a live one and other targets' are kept"
    );
}

#[cfg(unix)]
#[test]
fn the_mode_applies_to_the_new_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret.json");
    write_atomic(&path, b"{}", Some(0o600)).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn under_the_lock_every_leftover_of_a_target_goes_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.json");
    std::fs::write(&path, b"whole").unwrap();
    // What a writer killed a moment ago left: a staged file and a kept previous file, fresh.
    for leftover in [
        ".store.json.tmp.K1lled000000",
        ".store.json.tmp.old.K1lled000001",
    ] {
        std::fs::write(dir.path().join(leftover), b"x").unwrap();
    }
    std::fs::write(dir.path().join(".other.json.tmp.Live00000000"), b"x").unwrap();
    // Without the lock only stale ones may go: these are fresh.
    remove_leftovers(&path, STALE_AFTER);
    assert_eq!(names(dir.path()).len(), 4);
    let _lock = lock_dir(dir.path()).unwrap();
    remove_leftovers(&path, Duration::ZERO);
    assert_eq!(
        names(dir.path()),
        vec![".other.json.tmp.Live00000000", "store.json"],
        "the target's leftovers go, another target's stay"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"whole");
}

#[cfg(unix)]
#[test]
fn the_directory_lock_excludes_another_holder() {
    let dir = tempfile::tempdir().unwrap();
    let lock = lock_dir(dir.path()).unwrap();
    assert!(lock.is_held());
    let other = std::fs::File::open(dir.path()).unwrap();
    assert!(other.try_lock().is_err(), "a second holder got the lock");
    drop(lock);
    other.try_lock().unwrap();
}

#[test]
fn the_observer_is_called_before_each_rename_and_after_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let targets: Vec<_> = ["a.json", "b.json", "c.json"]
        .iter()
        .map(|n| dir.path().join(n))
        .collect();
    let staged = targets
        .iter()
        .map(|t| stage(t, b"new", None).unwrap())
        .collect();
    let mut seen = Vec::new();
    commit_all_observed(staged, |done| {
        // Exactly `done` targets are in place when it is called.
        let in_place = targets.iter().filter(|t| t.exists()).count();
        seen.push((done, in_place));
    })
    .unwrap();
    assert_eq!(seen, [(0, 0), (1, 1), (2, 2), (3, 3)]);
    let mut calls = 0;
    commit_all_observed(Vec::new(), |_| calls += 1).unwrap();
    assert_eq!(calls, 0, "nothing to commit, nothing observed");
}
