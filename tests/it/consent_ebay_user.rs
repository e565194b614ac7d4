//! `consent` records which eBay user each account belongs to (the Identity API's getUser,
//! served by the fake), in both stores: beside a refresh-token file, and in the PostgreSQL
//! store's row (checked in the database); `consent list` shows it, escaped.

use crate::common;
use crate::oauth_support as support;
use crate::pg;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Output, Stdio};

use base64::Engine as _;
use fake_marketplace::{FakeMarketplace, FakeUser};
use pg::TestDb;
use support::{RU_NAME, visit_consent};

/// `consent` against `fake`, with `store` (a file path or a postgres:// URL).
fn consent(fake: &FakeMarketplace, store: &str) -> Command {
    let mut cmd = common::clean_command(env!("CARGO_BIN_EXE_consent"));
    cmd.env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env("MARKETPLACE_REDIRECT_URI", RU_NAME)
        .env(
            "MARKETPLACE_TOKEN_KEY",
            base64::engine::general_purpose::STANDARD.encode([42u8; 32]),
        )
        .args(["--store", store]);
    cmd
}

/// `consent --account ACCOUNT authorize --input stdin` as eBay user `user`, the test playing
/// the seller's browser.
fn authorize(fake: &FakeMarketplace, store: &str, account: &str, user: &FakeUser) -> Output {
    fake.set_user(user.clone());
    let mut child = consent(fake, store)
        .args(["--account", account, "authorize", "--input", "stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    stdout.read_line(&mut url).unwrap();
    let landed = visit_consent(url.trim());
    writeln!(child.stdin.take().unwrap(), "{landed}").unwrap();
    let mut err = Vec::new();
    child.stderr.take().unwrap().read_to_end(&mut err).unwrap();
    let mut out = Vec::new();
    stdout.read_to_end(&mut out).unwrap();
    Output {
        status: child.wait().unwrap(),
        stdout: out,
        stderr: err,
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn alice() -> FakeUser {
    FakeUser {
        user_id: "aliceUserId01".into(),
        username: "alice_sells".into(),
    }
}

/// A username with ESC and a newline: `consent list` must neither pass the escape to the
/// terminal nor forge a line.
fn hostile() -> FakeUser {
    FakeUser {
        user_id: "bobUserId0002".into(),
        username: "bob\u{1b}]0;pwned\u{7}\nforged-seller\texpires".into(),
    }
}

/// `consent list`'s lines, with no control character but the tabs.
fn list(fake: &FakeMarketplace, store: &str) -> Vec<String> {
    let output = consent(fake, store).arg("list").output().unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        !stdout
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "list prints a control character raw: {stdout:?}"
    );
    stdout.lines().map(str::to_owned).collect()
}

fn check_listed(lines: &[String]) {
    assert_eq!(lines.len(), 2, "one line an account: {lines:?}");
    let a = lines.iter().find(|l| l.starts_with("seller-a\t")).unwrap();
    assert!(
        a.ends_with("\teBay user alice_sells (aliceUserId01)"),
        "{a}"
    );
    let b = lines.iter().find(|l| l.starts_with("seller-b\t")).unwrap();
    assert!(
        b.ends_with(
            "\teBay user bob\\u{1b}]0;pwned\\u{7}\\u{a}forged-seller\\u{9}expires (bobUserId0002)"
        ),
        "the username escaped: {b}"
    );
    assert_eq!(b.split('\t').count(), 3, "three columns: {b}");
}

#[test]
fn consent_records_the_ebay_user_beside_the_file_store_and_list_shows_it() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("refresh-tokens.json");
    let store = store.to_str().unwrap();
    for (account, user) in [("seller-a", alice()), ("seller-b", hostile())] {
        let output = authorize(&fake, store, account, &user);
        let stderr = text(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("Recorded the eBay user of account {account:?}")),
            "{stderr}"
        );
        assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    }
    // getUser was asked with each new user token, on the fake's API host.
    assert_eq!(
        fake.requests_to(fake_marketplace::notify::USER_PATH).len(),
        2
    );

    let users: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("refresh-tokens.users.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(users["accounts"]["seller-a"]["userId"], "aliceUserId01");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.path().join("refresh-tokens.users.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the owner's only");
    }
    assert_eq!(users["accounts"]["seller-a"]["username"], "alice_sells");
    check_listed(&list(&fake, store));

    // `forget` removes the account's user with its token.
    let forgot = consent(&fake, store)
        .args(["--account", "seller-a", "forget"])
        .output()
        .unwrap();
    assert!(forgot.status.success(), "{}", text(&forgot.stderr));
    let users = std::fs::read_to_string(dir.path().join("refresh-tokens.users.json")).unwrap();
    assert!(!users.contains("aliceUserId01"), "{users}");
    assert!(users.contains("bobUserId0002"), "{users}");
}

#[tokio::test(flavor = "multi_thread")]
async fn consent_records_the_ebay_user_in_the_postgres_row_and_list_shows_it() {
    let db = TestDb::new().await;
    let fake = FakeMarketplace::new();
    let url = db.url();
    tokio::task::block_in_place(|| {
        for (account, user) in [("seller-a", alice()), ("seller-b", hostile())] {
            let output = authorize(&fake, &url, account, &user);
            assert!(output.status.success(), "{}", text(&output.stderr));
        }
    });
    let rows: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT account, ebay_user_id, ebay_username FROM marketplace_refresh_tokens \
         ORDER BY account",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        rows,
        [
            (
                "seller-a".to_owned(),
                Some("aliceUserId01".to_owned()),
                Some("alice_sells".to_owned())
            ),
            (
                "seller-b".to_owned(),
                Some("bobUserId0002".to_owned()),
                Some(hostile().username)
            ),
        ]
    );
    let lines = tokio::task::block_in_place(|| list(&fake, &url));
    check_listed(&lines);

    // A new consent of an account by another user replaces the recorded user.
    tokio::task::block_in_place(|| {
        let output = authorize(&fake, &url, "seller-b", &alice());
        assert!(output.status.success(), "{}", text(&output.stderr));
    });
    let user: Option<String> = sqlx::query_scalar(
        "SELECT ebay_user_id FROM marketplace_refresh_tokens WHERE account = 'seller-b'",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(user.as_deref(), Some("aliceUserId01"));
}

/// getUser refused after the exchange: the token is stored (the code is spent), no user is
/// recorded, and the command fails saying that a deletion would not find the account.
#[test]
fn a_refused_get_user_fails_the_consent_saying_the_account_cannot_be_found() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("refresh-tokens.json");
    let store = store.to_str().unwrap();
    fake.fail_times(
        fake_marketplace::notify::USER_PATH,
        fake_marketplace::Fault::Status {
            status: 403,
            body: r#"{"errors":[{"errorId":1100,"domain":"ACCESS","category":"REQUEST","message":"Access denied"}]}"#.into(),
            headers: Vec::new(),
        },
        10,
    );
    let output = authorize(&fake, store, "seller-a", &alice());
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("refresh token of account \"seller-a\" is stored"),
        "{stderr}"
    );
    assert!(stderr.contains("getUser"), "{stderr}");
    assert!(stderr.contains("will not find the account"), "{stderr}");
    assert!(!dir.path().join("refresh-tokens.users.json").exists());
    let lines = list(&fake, store);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].ends_with("\teBay user not recorded (consent again to record it)"),
        "{lines:?}"
    );
}
