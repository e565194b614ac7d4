//! What the commands print: text that came from a store or a server is escaped (an account
//! name with ESC and a newline neither sets the terminal's title nor forges a line), and a
//! closed standard error, like a closed standard output, never makes a command panic.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use fake_marketplace::FakeMarketplace;
use marketplace_client::oauth::{
    FileStore, RefreshToken, RefreshTokenStore, ScopeSet, StoredRefreshToken,
};

/// An account name that sets the terminal's title (OSC 0 … BEL), clears the screen, and
/// forges a line of `consent list`'s.
const HOSTILE: &str =
    "evil\u{1b}]0;pwned\u{7}\u{1b}[2J\nforged-seller\texpires in 400 days\u{9b}31m\u{202e}";

fn consent(fake: &FakeMarketplace, store: &Path) -> Command {
    let mut cmd = common::clean_command(env!("CARGO_BIN_EXE_consent"));
    cmd.env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env("MARKETPLACE_REDIRECT_URI", "Fake_RuName")
        .arg("--store")
        .arg(store);
    cmd
}

fn store_with(path: &Path, accounts: &[&str]) {
    let store = FileStore::new(path);
    for account in accounts {
        store
            .save(
                account,
                &StoredRefreshToken {
                    refresh_token: RefreshToken::new("rt-never-printed"),
                    scopes: ScopeSet::new(["https://api.ebay.com/oauth/api_scope\u{1b}[31m"]),
                    expires_at: Some(SystemTime::now() + Duration::from_secs(86_400 * 400)),
                },
            )
            .unwrap();
    }
}

/// No byte of `text` is a control character (but the newline ending each line, and the tab
/// between columns) or a bidirectional formatting character.
fn assert_inert(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect();
    assert!(bad.is_empty(), "{what} prints {bad:?} raw: {text:?}");
}

#[test]
fn account_names_from_the_store_are_escaped_in_every_command() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("refresh.json");
    store_with(&store, &[HOSTILE, "plain-seller"]);

    let list = consent(&fake, &store).arg("list").output().unwrap();
    let stdout = String::from_utf8_lossy(&list.stdout);
    assert!(
        list.status.success(),
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );
    assert_inert("list", &stdout);
    assert_inert("list", &String::from_utf8_lossy(&list.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "one line an account: {stdout:?}");
    assert!(
        // The account, its expiry, its eBay user (not recorded here).
        lines.iter().all(|l| l.split('\t').count() == 3),
        "three columns a line: {stdout:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("evil\\u{1b}]0;pwned\\u{7}")),
        "{stdout:?}"
    );
    assert!(!stdout.contains("rt-never-printed"));

    // The commands that print an account name or the stored scopes.
    for args in [&["status"][..], &["forget"], &["token"]] {
        let output = consent(&fake, &store)
            .args(["--account", HOSTILE])
            .args(args)
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_inert(&format!("{args:?}"), &all);
        assert!(!all.contains("rt-never-printed"));
        assert_ne!(output.status.code(), Some(101), "{args:?}: {all}");
    }
}

/// Spawns `command` with its standard error a pipe whose reader is gone (as
/// `cmd 2>&1 | head -0` leaves it), and once more with descriptor 2 closed (`2>&-`).
#[allow(unsafe_code)]
fn with_stderr_closed(command: &mut Command) -> Vec<Output> {
    let mut outputs = Vec::new();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    outputs.push(
        command
            .stdout(Stdio::piped())
            .stderr(writer)
            .output()
            .unwrap(),
    );
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: close(2) is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            command.stderr(Stdio::inherit()).pre_exec(|| {
                libc::close(2);
                Ok(())
            });
        }
        outputs.push(command.output().unwrap());
    }
    outputs
}

#[test]
fn a_closed_standard_error_ends_no_command_with_a_panic() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("none.json");
    let full = dir.path().join("refresh.json");
    store_with(&full, &["plain-seller"]);
    let snapshots = common::snapshots_dir();
    let missing = dir.path().join("no-such-dir");

    // (what, command, the exit code it has with standard error open)
    let mut cases: Vec<(&str, Command, i32)> = Vec::new();
    let mut verify = common::clean_command(env!("CARGO_BIN_EXE_snapshot"));
    verify.args(["verify", "--dir"]).arg(&snapshots);
    cases.push(("snapshot verify", verify, 0));
    let mut failing = common::clean_command(env!("CARGO_BIN_EXE_snapshot"));
    failing.args(["verify", "--dir"]).arg(&missing);
    cases.push(("snapshot verify of no directory", failing, 1));
    let mut list = consent(&fake, &empty);
    list.arg("list");
    cases.push(("consent list of no account", list, 0));
    let mut list = consent(&fake, &full);
    list.arg("list");
    cases.push(("consent list", list, 0));
    let mut status = consent(&fake, &full);
    status.args(["--account", "nobody", "status"]);
    cases.push(("consent status of no account", status, 1));

    for (what, mut command, code) in cases {
        let open = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            open.status.code(),
            Some(code),
            "{what}, standard error open: {}",
            String::from_utf8_lossy(&open.stderr)
        );
        for (n, output) in with_stderr_closed(&mut command).into_iter().enumerate() {
            assert_ne!(output.status.code(), Some(101), "{what} (#{n}) panicked");
            assert_eq!(
                output.status.code(),
                Some(code),
                "{what} (#{n}): the exit code is the command's own"
            );
            assert_eq!(
                output.stdout, open.stdout,
                "{what} (#{n}): standard output is as with standard error open"
            );
        }
    }
}

/// `snapshot search` of words that match nothing says so and names the nearest words of the
/// site's names (`Site::nearest_words`), exiting 1; a seller's compound finds its leaf.
#[test]
fn snapshot_search_of_no_match_names_the_nearest_words() {
    let run = |args: &[&str]| {
        common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
            .arg("search")
            .args(args)
            .output()
            .unwrap()
    };
    let none = run(&["--site", "EBAY_DE", "smartfone"]);
    let stderr = String::from_utf8_lossy(&none.stderr);
    assert_eq!(none.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "no leaf category of EBAY_DE matches \"smartfone\"; nearest words: Smartphones"
        ),
        "{stderr}"
    );
    let found = run(&["--site", "EBAY_DE", "grafikkarte"]);
    assert_eq!(found.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&found.stdout);
    assert!(
        stdout.lines().next().is_some_and(|l| l.contains("27386")),
        "{stdout}"
    );
}
