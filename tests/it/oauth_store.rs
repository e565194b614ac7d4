//! The refresh-token file store: mode 0600, atomic replacement, refusal of readable files.

#![cfg(unix)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use marketplace_client::oauth::{
    FileStore, MemoryStore, OAuthError, RefreshToken, RefreshTokenStore, ScopeSet, StoreError,
    StoredRefreshToken,
};

fn record(token: &str) -> StoredRefreshToken {
    StoredRefreshToken {
        refresh_token: RefreshToken::new(token),
        scopes: ScopeSet::new(["https://api.ebay.com/oauth/api_scope/sell.inventory"]),
        expires_at: Some(UNIX_EPOCH + Duration::from_secs(2_000_000_000)),
    }
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn file_store_writes_mode_0600_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/tokens.json");
    let store = FileStore::new(&path);
    assert!(
        store.load("seller-1").unwrap().is_none(),
        "missing file: nothing stored"
    );

    store
        .save("seller-1", &record("v^1.1#i^1#r^1%+one"))
        .unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700,
        "a created directory is private too"
    );
    let back = store.load("seller-1").unwrap().unwrap();
    assert_eq!(back, record("v^1.1#i^1#r^1%+one"));

    store.save("seller-2", &record("two")).unwrap();
    assert_eq!(
        store
            .load("seller-1")
            .unwrap()
            .unwrap()
            .refresh_token
            .secret(),
        "v^1.1#i^1#r^1%+one"
    );
    assert_eq!(store.accounts().unwrap(), vec!["seller-1", "seller-2"]);
    store.remove("seller-1").unwrap();
    assert!(store.load("seller-1").unwrap().is_none());
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn file_store_replaces_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let store = FileStore::new(&path);
    store.save("a", &record("first")).unwrap();
    let inode_before = std::fs::metadata(&path).unwrap().ino();
    // A reader holding the old file keeps seeing the old, complete content.
    let old_content = std::fs::read_to_string(&path).unwrap();
    let held = std::fs::File::open(&path).unwrap();

    store.save("a", &record("second")).unwrap();
    let inode_after = std::fs::metadata(&path).unwrap().ino();
    assert_ne!(
        inode_before, inode_after,
        "a new file was renamed over the old one"
    );
    let mut still_old = String::new();
    use std::io::Read as _;
    (&held).read_to_string(&mut still_old).unwrap();
    assert_eq!(still_old, old_content);
    assert!(old_content.contains("first"));

    let new_content = std::fs::read_to_string(&path).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&new_content).expect("complete JSON");
    assert_eq!(parsed["accounts"]["a"]["refresh_token"], "second");
    assert_eq!(mode(&path), 0o600);
    // No temporary file is left behind; the (empty, 0600) lock file stays, as lock files do:
    // removing it would race with a process about to lock it.
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, vec!["tokens.json", "tokens.json.lock"]);
    assert_eq!(mode(&dir.path().join("tokens.json.lock")), 0o600);
    assert_eq!(
        std::fs::metadata(dir.path().join("tokens.json.lock"))
            .unwrap()
            .len(),
        0
    );
}

#[test]
fn file_store_refuses_files_others_can_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let store = FileStore::new(&path);
    store.save("a", &record("secret-refresh-token")).unwrap();

    for bad in [0o644, 0o640, 0o604, 0o660] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(bad)).unwrap();
        let err = store.load("a").unwrap_err();
        match &err {
            OAuthError::Store(e) if e.is_insecure() => {
                assert_eq!(e.path(), Some(path.as_path()));
                assert_eq!(e.store(), path.display().to_string());
                assert!(
                    e.to_string().contains(&format!("its mode is {bad:04o}")),
                    "{e}"
                );
            }
            other => panic!("{other:?}"),
        }
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains(&format!("{bad:04o}")), "{message}");
        assert!(message.contains("chmod 600"), "{message}");
        assert!(!message.contains("secret-refresh-token"));
        // Writing is refused as well (the old content may already have leaked).
        assert!(store.save("b", &record("x")).is_err());
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(store.load("a").unwrap().is_some());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
    assert!(
        store.load("a").unwrap().is_some(),
        "owner read-only is fine"
    );
}

#[test]
fn corrupt_store_is_reported_without_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    std::fs::write(
        &path,
        r#"{"accounts": {"a": {"refresh_token": "leaky-secret", "#,
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = FileStore::new(&path).load("a").unwrap_err();
    assert!(
        matches!(&err, OAuthError::Store(e) if e.is_corrupt()),
        "{err:?}"
    );
    assert!(!format!("{err} {err:?}").contains("leaky-secret"));

    std::fs::write(
        &path,
        r#"{"format": "something else", "version": 1, "accounts": {}}"#,
    )
    .unwrap();
    let err = FileStore::new(&path).load("a").unwrap_err();
    assert!(
        matches!(&err, OAuthError::Store(e) if e.is_corrupt()),
        "{err:?}"
    );
}

#[test]
fn memory_store_round_trip() {
    let store = MemoryStore::new();
    assert!(store.load("a").unwrap().is_none());
    store.save("a", &record("t")).unwrap();
    assert_eq!(store.load("a").unwrap().unwrap(), record("t"));
    store.remove("a").unwrap();
    assert!(store.load("a").unwrap().is_none());
    assert!(record("t").is_expired(SystemTime::now() + Duration::from_secs(4_000_000_000)));
}

/// The environment variables that turn [`store_writer_child`] into a writer (set only by
/// [`two_processes_saving_at_once_lose_nothing`] when it re-executes this test binary).
const CHILD_STORE: &str = "OAUTH_STORE_TEST_CHILD_STORE";
const CHILD_PREFIX: &str = "OAUTH_STORE_TEST_CHILD_PREFIX";
const ACCOUNTS_PER_PROCESS: usize = 50;

/// Not a test of its own: run by the test below in two child processes, each saving
/// [`ACCOUNTS_PER_PROCESS`] accounts into the same file. Without the variables it does nothing.
#[test]
fn store_writer_child() {
    let (Some(path), Some(prefix)) = (
        std::env::var_os(CHILD_STORE),
        std::env::var(CHILD_PREFIX).ok(),
    ) else {
        return;
    };
    let store = FileStore::new(path);
    for i in 0..ACCOUNTS_PER_PROCESS {
        store
            .save(
                &format!("{prefix}-{i}"),
                &record(&format!("v^1.1#{prefix}-{i}")),
            )
            .unwrap();
    }
}

#[test]
fn two_processes_saving_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|prefix| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    &format!("{}::store_writer_child", module_name()),
                    "--test-threads",
                    "1",
                ])
                .env(CHILD_STORE, &path)
                .env(CHILD_PREFIX, prefix)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let accounts = FileStore::new(&path).accounts().unwrap();
    assert_eq!(accounts.len(), 2 * ACCOUNTS_PER_PROCESS, "{accounts:?}");
    assert_eq!(mode(&path), 0o600);
    let store = FileStore::new(&path);
    for prefix in ["a", "b"] {
        let back = store.load(&format!("{prefix}-7")).unwrap().unwrap();
        assert_eq!(back.refresh_token.secret(), format!("v^1.1#{prefix}-7"));
    }
}

/// Runs `f` on a thread and fails the test if it has not returned within 10 s (a store call
/// that opens a named pipe to read blocks until a writer comes: forever).
fn within_10_s<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{what} still hangs after 10 s"))
}

fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg("-m")
        .arg("600")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(status.success());
}

#[test]
fn a_directory_at_the_store_path_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    std::fs::create_dir(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let store = FileStore::new(&path);
    for err in [
        store.load("a").unwrap_err(),
        store.save("a", &record("t")).unwrap_err(),
        store.check().unwrap_err(),
    ] {
        let message = err.to_string();
        assert!(
            message.contains(&path.display().to_string()) && message.contains("is a directory"),
            "{message}"
        );
        // Not "its mode is 0755, run chmod 600": no chmod makes a directory a store.
        assert!(
            !message.contains("chmod") && !message.contains("0755"),
            "{message}"
        );
        assert!(
            matches!(&err, OAuthError::Store(e) if e.is_not_a_file()),
            "{err:?}"
        );
    }
}

#[test]
fn a_named_pipe_at_the_store_path_is_refused_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    mkfifo(&path);
    let store = std::sync::Arc::new(FileStore::new(&path));
    for call in ["load", "save", "check"] {
        let store = store.clone();
        let err = within_10_s(call, move || match call {
            "load" => store.load("a").map(|_| ()),
            "save" => store.save("a", &record("t")),
            _ => store.check(),
        })
        .unwrap_err();
        let message = err.to_string();
        assert!(message.contains("is a named pipe"), "{call}: {message}");
        assert!(!message.contains("chmod"), "{call}: {message}");
    }

    // The lock file beside the store is held to the same rule.
    let path = dir.path().join("other.json");
    mkfifo(&dir.path().join("other.json.lock"));
    let store = FileStore::new(&path);
    let err = within_10_s("save", move || store.save("a", &record("t"))).unwrap_err();
    assert!(err.to_string().contains("is a named pipe"), "{err}");
}

#[test]
fn check_finds_what_a_save_would_fail_on_and_writes_no_store() {
    let dir = tempfile::tempdir().unwrap();

    // Nothing there yet: fine, and no store file is created (its directory and lock file are).
    let path = dir.path().join("new/tokens.json");
    FileStore::new(&path).check().unwrap();
    assert!(!path.exists());
    let mut names: Vec<_> = std::fs::read_dir(dir.path().join("new"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, vec!["tokens.json.lock"], "no temporary file left");

    // A good store: fine, unchanged.
    let good = dir.path().join("good.json");
    FileStore::new(&good).save("a", &record("kept")).unwrap();
    let before = std::fs::read(&good).unwrap();
    FileStore::new(&good).check().unwrap();
    assert_eq!(std::fs::read(&good).unwrap(), before);

    // Readable by others, not a store, a directory's name: each refused, saying why.
    let open = dir.path().join("open.json");
    FileStore::new(&open).save("a", &record("t")).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "not a store").unwrap();
    std::fs::set_permissions(&garbage, std::fs::Permissions::from_mode(0o600)).unwrap();
    let slash = format!("{}/", dir.path().join("slash.json").display());
    for (path, says) in [
        (open.clone(), "chmod 600"),
        (garbage.clone(), "is not valid"),
        (slash.clone().into(), "ends in a slash"),
    ] {
        let err = FileStore::new(&path).check().unwrap_err();
        assert!(err.to_string().contains(says), "{}: {err}", path.display());
    }
    assert!(
        !dir.path().join("slash.json").exists() && !dir.path().join("slash.json.lock").exists(),
        "nothing is created for a path that cannot be a file"
    );
    // A save to such a path fails the same way, before it writes anything.
    let err = FileStore::new(&slash).save("a", &record("t")).unwrap_err();
    assert!(err.to_string().contains("ends in a slash"), "{err}");
}

#[test]
fn replace_saves_only_over_the_token_it_started_from() {
    let dir = tempfile::tempdir().unwrap();
    let file = FileStore::new(dir.path().join("tokens.json"));
    let memory = MemoryStore::new();
    let stores: [&dyn RefreshTokenStore; 2] = [&file, &memory];
    for store in stores {
        store.save("a", &record("first")).unwrap();
        // Still holding "first": replaced.
        assert!(
            store
                .replace("a", &RefreshToken::new("first"), &record("rotated"))
                .unwrap()
        );
        assert_eq!(
            store.load("a").unwrap().unwrap().refresh_token.secret(),
            "rotated"
        );
        // A newer token was saved meanwhile (a new consent): left alone.
        store.save("a", &record("new-consent")).unwrap();
        assert!(
            !store
                .replace("a", &RefreshToken::new("rotated"), &record("stale"))
                .unwrap()
        );
        assert_eq!(
            store.load("a").unwrap().unwrap().refresh_token.secret(),
            "new-consent"
        );
        // Nothing stored for the account: nothing to replace.
        assert!(
            !store
                .replace("b", &RefreshToken::new("first"), &record("x"))
                .unwrap()
        );
        assert!(store.load("b").unwrap().is_none());
    }
}

#[test]
fn a_needs_consent_mark_is_kept_only_for_the_token_it_names_and_old_files_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    // A store file written before the mark existed.
    std::fs::write(
        &path,
        r#"{"format":"marketplace-toolkit refresh tokens","version":1,"accounts":{"seller-1":{"refresh_token":"old","scopes":["s"]}}}"#,
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let file = FileStore::new(&path);
    let memory = MemoryStore::new();
    memory.save("seller-1", &record("old")).unwrap();
    for store in [&file as &dyn RefreshTokenStore, &memory] {
        assert!(!store.needs_consent("seller-1").unwrap());
        assert!(!store.needs_consent("nobody").unwrap());
        // Another token than the stored one (a consent saved meanwhile) is not marked.
        assert!(
            !store
                .mark_needs_consent("seller-1", &RefreshToken::new("other"))
                .unwrap()
        );
        assert!(!store.needs_consent("seller-1").unwrap());
        assert!(
            store
                .mark_needs_consent("seller-1", &RefreshToken::new("old"))
                .unwrap()
        );
        assert!(store.needs_consent("seller-1").unwrap());
        // The marked record still loads; a new save clears the mark.
        assert_eq!(
            store
                .load("seller-1")
                .unwrap()
                .unwrap()
                .refresh_token
                .secret(),
            "old"
        );
        store.save("seller-1", &record("new")).unwrap();
        assert!(!store.needs_consent("seller-1").unwrap());
    }
}

#[test]
fn a_store_error_of_any_store_keeps_its_kind_store_and_source() {
    // What a database store returns: not file-shaped, with its cause.
    let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
    let e = StoreError::unavailable("postgres db=tokens", "load a refresh token from", refused);
    assert!(e.is_unavailable());
    assert_eq!(e.store(), "postgres db=tokens");
    assert_eq!(e.action(), "load a refresh token from");
    assert_eq!(e.path(), None);
    assert_eq!(
        e.to_string(),
        "cannot load a refresh token from the refresh-token store postgres db=tokens: \
         connection refused"
    );
    let err = OAuthError::Store(e.clone());
    let source = std::error::Error::source(&err).expect("the store error's cause");
    let io = source
        .downcast_ref::<std::io::Error>()
        .expect("the cause as given");
    assert_eq!(io.kind(), std::io::ErrorKind::ConnectionRefused);

    let lost = StoreError::conflict("postgres db=tokens", "save", "another process saved first");
    assert!(lost.is_conflict());
    assert!(std::error::Error::source(&lost).is_none());
    assert!(lost.to_string().contains("another process saved first"));
    let bad = StoreError::corrupt("postgres db=tokens", "load", "row 3 does not decrypt")
        .with_source(std::io::Error::other("tag mismatch"));
    assert!(bad.is_corrupt());
    assert_eq!(
        std::error::Error::source(&bad).map(ToString::to_string),
        Some("tag mismatch".to_owned())
    );
}

#[test]
fn a_file_store_io_failure_has_the_io_error_as_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("plain-file");
    std::fs::write(&not_a_dir, b"x").unwrap();
    let path = not_a_dir.join("tokens.json");
    let err = FileStore::new(&path)
        .save("a", &record("secret-refresh-token"))
        .unwrap_err();
    let OAuthError::Store(e) = &err else {
        panic!("{err:?}")
    };
    assert!(e.is_unavailable(), "{e}");
    assert_eq!(e.path(), Some(path.as_path()));
    assert!(e.to_string().starts_with("cannot "), "{e}");
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");
    assert!(
        std::error::Error::source(e)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .is_some(),
        "{e:?}"
    );
    assert!(!format!("{err} {err:?}").contains("secret-refresh-token"));
}

/// This module's path without the crate's name: the prefix of its tests' names in the test
/// binary (`oauth_store::store_writer_child`), for running one of them in a child process.
fn module_name() -> &'static str {
    module_path!()
        .split_once("::")
        .map_or("", |(_, module)| module)
}
