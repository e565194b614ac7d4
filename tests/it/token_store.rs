//! `MARKETPLACE_TOKEN_STORE=postgres://…` in the commands, against a real PostgreSQL (the
//! harness of marketplace-client-postgres's tests) and the fake marketplace: a fleet of
//! `snapshot` processes makes one client-credentials request, still succeeds with the
//! database stopped, and leaves no token in plain text in the database.

use crate::common;
use crate::pg;

use std::process::{Child, Output, Stdio};
use std::time::Duration;

use base64::Engine as _;
use fake_marketplace::{FakeMarketplace, Fault, TOKEN_PATH};
use pg::TestDb;

/// 32 bytes in base64, as `head -c 32 /dev/urandom | base64` prints them.
fn token_key() -> String {
    base64::engine::general_purpose::STANDARD.encode([42u8; 32])
}

/// `snapshot refresh --check --sites EBAY_US` against `fake`, sharing its token through
/// `store`.
fn check_us(fake: &FakeMarketplace, store: &str) -> Child {
    common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .args(["refresh", "--check", "--sites", "EBAY_US", "--dir"])
        .arg(common::snapshots_dir())
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env("MARKETPLACE_TOKEN_STORE", store)
        .env("MARKETPLACE_TOKEN_KEY", token_key())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start snapshot")
}

fn succeeded(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "snapshot failed: {}\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// The bearer tokens the fake saw on its Taxonomy and Metadata APIs.
fn bearer_tokens(fake: &FakeMarketplace) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|r| r.path != TOKEN_PATH)
        .filter_map(|r| r.header("authorization"))
        .filter_map(|h| h.strip_prefix("Bearer ").map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn eight_snapshot_processes_share_one_token_and_go_on_without_the_database() {
    let mut db = TestDb::with_own_server().await;
    let fake = FakeMarketplace::new();
    // A slow token endpoint: the processes ask while the first request runs.
    fake.fail_times(TOKEN_PATH, Fault::Delay(Duration::from_millis(500)), 1);
    let store = db.url();

    let fleet: Vec<Child> = (0..8).map(|_| check_us(&fake, &store)).collect();
    let outputs: Vec<Output> = tokio::task::block_in_place(|| {
        fleet
            .into_iter()
            .map(|child| child.wait_with_output().unwrap())
            .collect()
    });
    for out in &outputs {
        let stderr = succeeded(out);
        assert!(!stderr.contains("warning"), "{stderr}");
    }
    assert_eq!(
        fake.token_requests().len(),
        1,
        "8 processes make one client-credentials request between them"
    );
    let tokens = bearer_tokens(&fake);
    // Each process asked getDefaultCategoryTreeId, then (the tree being current)
    // getItemConditionPolicies and getListingStructurePolicies: the policies change without a
    // new tree version.
    assert_eq!(
        tokens.len(),
        24,
        "each process asked getDefaultCategoryTreeId, getItemConditionPolicies and \
         getListingStructurePolicies"
    );
    assert!(tokens.iter().all(|t| *t == tokens[0]), "one token for all");

    let dump = db.pg_dump();
    assert!(
        dump.contains("marketplace_token_cache") && dump.contains("application"),
        "the dump holds the cached token's row"
    );
    assert!(
        !dump.contains(&tokens[0]),
        "the token is in plain text in pg_dump"
    );

    // The database stopped: the same command still succeeds, with a warning, on a token of
    // its own.
    db.server().stop().expect("stop the database");
    let out = tokio::task::block_in_place(|| check_us(&fake, &store).wait_with_output().unwrap());
    let stderr = succeeded(&out);
    assert!(
        stderr.contains("token store cannot be reached"),
        "a warning says the database is down: {stderr}"
    );
    assert!(
        stderr.contains("the shared token cache is unavailable"),
        "the token call says it goes on alone: {stderr}"
    );
    assert_eq!(fake.token_requests().len(), 2, "it asked for its own token");
}

#[test]
fn a_token_store_without_a_key_is_refused_with_how_to_make_one() {
    let fake = FakeMarketplace::new();
    let out = common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .args(["refresh", "--check", "--sites", "EBAY_US", "--dir"])
        .arg(common::snapshots_dir())
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env(
            "MARKETPLACE_TOKEN_STORE",
            "postgres://nobody@127.0.0.1:1/none",
        )
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MARKETPLACE_TOKEN_KEY"), "{stderr}");
    assert!(
        stderr.contains("head -c 32 /dev/urandom | base64"),
        "{stderr}"
    );
    assert!(fake.token_requests().is_empty(), "nothing was asked");
}

#[tokio::test(flavor = "multi_thread")]
async fn consent_list_shows_the_accounts_of_the_database_soonest_expiry_first() {
    use marketplace_client::aio::oauth::RefreshTokenStore as _;
    use marketplace_client::oauth::{Endpoints, RefreshToken, ScopeSet, StoredRefreshToken};
    use marketplace_client_postgres::{Keyring, PgRefreshTokenStore, TokenKey, migrate};
    use std::time::SystemTime;

    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let store = PgRefreshTokenStore::from_config(
        db.pool.clone(),
        Keyring::new(TokenKey::from_bytes([42u8; 32])),
        &marketplace_client::oauth::OAuthConfig::new(endpoints.clone())
            .with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let day = Duration::from_secs(86_400);
    let record = |token: &str, days: u64| StoredRefreshToken {
        refresh_token: RefreshToken::new(token),
        scopes: ScopeSet::new([fake.scope("/sell.inventory")]),
        expires_at: Some(SystemTime::now() + day * days as u32),
    };
    store
        .save("late-seller", &record("rt-late", 400))
        .await
        .unwrap();
    store
        .save("soon-seller", &record("rt-soon", 10))
        .await
        .unwrap();
    store
        .save("revoked-seller", &record("rt-revoked", 200))
        .await
        .unwrap();
    assert!(
        store
            .mark_needs_consent("revoked-seller", &RefreshToken::new("rt-revoked"))
            .await
            .unwrap()
    );

    let out = tokio::task::block_in_place(|| {
        common::clean_command(env!("CARGO_BIN_EXE_consent"))
            .arg("list")
            .env("MARKETPLACE_BASE_URL", fake.base_url())
            .env("MARKETPLACE_AUTH_URL", fake.auth_url())
            .env("MARKETPLACE_CLIENT_ID", fake.client_id())
            .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
            .env("MARKETPLACE_TOKEN_STORE", db.url())
            .env("MARKETPLACE_TOKEN_KEY", token_key())
            .output()
            .unwrap()
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].starts_with("soon-seller\t"), "{stdout}");
    assert!(lines[0].contains("within 30 days"), "{stdout}");
    assert!(lines[1].starts_with("revoked-seller\t"), "{stdout}");
    assert!(lines[1].contains("needs consent"), "{stdout}");
    assert!(lines[2].starts_with("late-seller\t"), "{stdout}");
    assert!(!stdout.contains("rt-"), "no token is printed: {stdout}");
}

/// `snapshot` with a URL of another scheme as its token store fails, naming the scheme only
/// (never the password), instead of sharing nothing in silence.
#[test]
fn a_store_url_of_another_scheme_is_refused_without_echoing_it() {
    const PASSWORD: &str = "hunter2-S3cret";
    let fake = FakeMarketplace::new();
    let cwd = tempfile::tempdir().unwrap();
    let url =
        format!("jdbc:postgresql://db.internal:5432/backend?user=backend&password={PASSWORD}");
    for flag in [false, true] {
        let mut command = common::clean_command(env!("CARGO_BIN_EXE_snapshot"));
        command
            .current_dir(cwd.path())
            .args(["refresh", "--check", "--sites", "EBAY_US", "--dir"])
            .arg(common::snapshots_dir())
            .env("MARKETPLACE_BASE_URL", fake.base_url())
            .env("MARKETPLACE_CLIENT_ID", fake.client_id())
            .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
            .env("MARKETPLACE_TOKEN_KEY", token_key());
        if flag {
            command.args(["--token-store", &url]);
        } else {
            command.env("MARKETPLACE_TOKEN_STORE", &url);
        }
        let out = command.output().unwrap();
        let all = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "flag {flag}: {all}");
        assert!(!all.contains(PASSWORD), "flag {flag}: {all}");
        assert!(all.contains("jdbc:postgresql://"), "flag {flag}: {all}");
        assert!(std::fs::read_dir(cwd.path()).unwrap().next().is_none());
    }
    assert!(fake.token_requests().is_empty(), "nothing was asked");
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A refused connection says it was refused (not "pool timed out"), in `consent` and in
/// `snapshot`'s warning; a migration the database refuses (a role that may not create
/// tables) says it was refused (not "cannot be reached").
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_connection_and_a_refused_migration_say_so() {
    let fake = FakeMarketplace::new();
    let refused = format!(
        "postgres://backend:hunter2@127.0.0.1:{}/backend",
        closed_port()
    );
    let out = tokio::task::block_in_place(|| {
        common::clean_command(env!("CARGO_BIN_EXE_consent"))
            .arg("list")
            .env("MARKETPLACE_BASE_URL", fake.base_url())
            .env("MARKETPLACE_AUTH_URL", fake.auth_url())
            .env("MARKETPLACE_CLIENT_ID", fake.client_id())
            .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
            .env("MARKETPLACE_TOKEN_STORE", &refused)
            .env("MARKETPLACE_TOKEN_KEY", token_key())
            .output()
            .unwrap()
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("refused"), "consent: {stderr}");
    assert!(!stderr.contains("pool timed out"), "consent: {stderr}");
    assert!(!stderr.contains("hunter2"), "consent: {stderr}");
    let out = tokio::task::block_in_place(|| check_us(&fake, &refused).wait_with_output().unwrap());
    let stderr = succeeded(&out);
    assert!(
        stderr.contains("cannot be reached") && stderr.contains("refused"),
        "snapshot: {stderr}"
    );
    assert!(!stderr.contains("pool timed out"), "snapshot: {stderr}");

    // A role that may connect but not create tables.
    let db = TestDb::new().await;
    sqlx::query("CREATE ROLE mcp_reader LOGIN")
        .execute(&db.pool)
        .await
        .ok();
    sqlx::query("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        .execute(&db.pool)
        .await
        .unwrap();
    let url = db.url();
    let (scheme, rest) = url.split_once("://").unwrap();
    let (_, host) = rest.split_once('@').unwrap();
    let reader = format!("{scheme}://mcp_reader@{host}");
    let out = tokio::task::block_in_place(|| check_us(&fake, &reader).wait_with_output().unwrap());
    let stderr = succeeded(&out);
    assert!(
        stderr.contains("refused to create or update its tables"),
        "snapshot: {stderr}"
    );
    assert!(!stderr.contains("cannot be reached"), "snapshot: {stderr}");
}

/// `consent COMMAND --account ACCOUNT` against `fake`, its tokens in `db` under `key` (and
/// `previous`, as `MARKETPLACE_TOKEN_KEY_PREVIOUS`, when given).
fn consent_command(
    fake: &FakeMarketplace,
    db: &TestDb,
    args: &[&str],
    key: &str,
    previous: Option<&str>,
) -> Output {
    let mut command = common::clean_command(env!("CARGO_BIN_EXE_consent"));
    command
        .args(args)
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env("MARKETPLACE_TOKEN_STORE", db.url())
        .env("MARKETPLACE_TOKEN_KEY", key);
    if let Some(previous) = previous {
        command.env("MARKETPLACE_TOKEN_KEY_PREVIOUS", previous);
    }
    tokio::task::block_in_place(|| command.output().unwrap())
}

/// A process of the fleet: seller-1 consented against `fake` (the test plays the seller's
/// browser), the refresh token in `db` under [`token_key`], the access token shared through
/// the database's cache. Returns the shared access token.
async fn consented_fleet(db: &TestDb, fake: &FakeMarketplace) -> String {
    use marketplace_client::aio::oauth::{
        AccessTokenSource as _, Endpoints, OAuthClient, OAuthConfig, ScopeSet, UserTokenProvider,
    };
    use marketplace_client_postgres::{Keyring, PgRefreshTokenStore, PgTokenCache, TokenKey};
    use std::sync::Arc;

    marketplace_client_postgres::migrate(&db.pool)
        .await
        .unwrap();
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let client = Arc::new(
        OAuthClient::from_config(
            &OAuthConfig::new(endpoints.clone())
                .with_credentials(fake.client_id(), fake.client_secret())
                .with_redirect_uri("Fake_Company-FakeApp-PRD-abcdefghi"),
        )
        .unwrap(),
    );
    let keyring = Keyring::new(TokenKey::from_bytes([42u8; 32]));
    let store = Arc::new(
        PgRefreshTokenStore::from_config(
            db.pool.clone(),
            keyring.clone(),
            &marketplace_client::oauth::OAuthConfig::new(endpoints.clone())
                .with_credentials(fake.client_id(), fake.client_secret()),
        )
        .unwrap(),
    );
    let cache = Arc::new(PgTokenCache::new(db.pool.clone(), keyring));
    let request = client
        .consent_request(&ScopeSet::new([fake.scope("/sell.inventory")]))
        .unwrap();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap();
    let answer = browser.get(request.url().as_str()).send().await.unwrap();
    let landed = answer.headers()["location"].to_str().unwrap().to_owned();
    let code = request.complete(&landed).unwrap();
    UserTokenProvider::new(client.clone(), store.clone(), "seller-1")
        .exchange_code(&code, request.scopes())
        .await
        .unwrap();
    // Another process: it refreshes, and shares the access token through the cache.
    let process = UserTokenProvider::new(client, store, "seller-1").with_shared_cache(cache);
    process.access_token().await.unwrap().secret().to_owned()
}

/// After `consent forget`, the fleet's shared access token of the account goes too: `consent
/// token` does not print it.
#[tokio::test(flavor = "multi_thread")]
async fn after_consent_forget_consent_token_prints_no_old_token() {
    let db = TestDb::new().await;
    let fake = FakeMarketplace::new();
    let shared = consented_fleet(&db, &fake).await;
    let key = token_key();
    let args = |command: &'static str| [command, "--account", "seller-1"];

    let out = consent_command(&fake, &db, &args("token"), &key, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        shared,
        "the fleet's shared token, before forget"
    );

    let out = consent_command(&fake, &db, &args("forget"), &key, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = consent_command(&fake, &db, &args("token"), &key, None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains(&shared),
        "consent token printed the forgotten account's old access token"
    );
    assert!(!out.status.success(), "no token after forget: {stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no refresh token"), "{stderr}");
}

/// `consent status` checks the refresh token at the token endpoint even when the fleet shares
/// a valid access token: a revoked refresh token is reported as such.
#[tokio::test(flavor = "multi_thread")]
async fn consent_status_reports_a_revoked_refresh_token_despite_a_shared_access_token() {
    let db = TestDb::new().await;
    let fake = FakeMarketplace::new();
    consented_fleet(&db, &fake).await;
    let key = token_key();
    let args = ["status", "--account", "seller-1"];

    let out = consent_command(&fake, &db, &args, &key, None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("refreshed, valid for"), "{stdout}");

    fake.revoke_refresh_tokens();
    let before = fake.token_requests().len();
    let out = consent_command(&fake, &db, &args, &key, None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stdout.contains("refreshed"),
        "consent status reports a revoked refresh token as working: {stdout}"
    );
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        fake.token_requests().len(),
        before + 1,
        "consent status asked the token endpoint"
    );
    assert!(stderr.contains("revoked"), "{stderr}");
    assert!(
        stderr.contains("needs the seller's consent again"),
        "{stderr}"
    );
    assert!(stderr.contains("run `consent --account"), "{stderr}");
}

/// Key rotation completes: `consent list` counts the refresh tokens still under the previous
/// key, `consent rekey` re-encrypts them, and then none is left.
#[tokio::test(flavor = "multi_thread")]
async fn consent_rekey_re_encrypts_every_token_under_the_previous_key() {
    use marketplace_client::aio::oauth::RefreshTokenStore as _;
    use marketplace_client::oauth::{Endpoints, RefreshToken, ScopeSet, StoredRefreshToken};
    use marketplace_client_postgres::{Keyring, PgRefreshTokenStore, TokenKey, migrate};

    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let old = TokenKey::from_bytes([42u8; 32]);
    let new_bytes = [43u8; 32];
    let new = TokenKey::from_bytes(new_bytes);
    let under_old = PgRefreshTokenStore::from_config(
        db.pool.clone(),
        Keyring::new(old.clone()),
        &marketplace_client::oauth::OAuthConfig::new(endpoints.clone())
            .with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    for account in ["seller-1", "seller-2"] {
        let record = StoredRefreshToken {
            refresh_token: RefreshToken::new(format!("rt-of-{account}")),
            scopes: ScopeSet::new([fake.scope("/sell.inventory")]),
            expires_at: None,
        };
        under_old.save(account, &record).await.unwrap();
    }
    let new_key = base64::engine::general_purpose::STANDARD.encode(new_bytes);
    let old_key = token_key();

    let out = consent_command(&fake, &db, &["list"], &new_key, Some(&old_key));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("2 refresh tokens are still encrypted under the previous key"),
        "consent list says how many rows the previous key still holds: {stderr}"
    );

    let out = consent_command(&fake, &db, &["rekey"], &new_key, Some(&old_key));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Re-encrypted 2 refresh tokens"), "{stderr}");
    assert!(
        stderr.contains("MARKETPLACE_TOKEN_KEY_PREVIOUS can be removed"),
        "{stderr}"
    );
    let key_ids: Vec<String> =
        sqlx::query_scalar("SELECT key_id FROM marketplace_refresh_tokens ORDER BY account")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(key_ids, [new.id(), new.id()]);

    let out = consent_command(&fake, &db, &["list"], &new_key, Some(&old_key));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("No token is left under the previous key"),
        "{stderr}"
    );
    // And the previous key dropped, the tokens still read.
    let only_new = PgRefreshTokenStore::from_config(
        db.pool.clone(),
        Keyring::new(new),
        &marketplace_client::oauth::OAuthConfig::new(endpoints.clone())
            .with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let loaded = only_new.load("seller-2").await.unwrap().unwrap();
    assert_eq!(loaded.refresh_token.secret(), "rt-of-seller-2");
}

/// The blocking front's code exchange hands its access token to the shared cache too: a
/// process started after the consent gets that token without a request.
#[tokio::test(flavor = "multi_thread")]
async fn a_blocking_consent_shares_its_access_token_with_the_fleet() {
    use marketplace_client::oauth::{
        AccessTokenSource as _, Endpoints, OAuthClient, OAuthConfig, ScopeSet, UserTokenProvider,
    };
    use marketplace_client_postgres::{Keyring, TokenKey, blocking::TokenStore};
    use std::sync::Arc;

    let db = TestDb::new().await;
    let fake = FakeMarketplace::new();
    let url = db.url();
    let (base, auth) = (fake.base_url(), fake.auth_url());
    let (id, secret) = (fake.client_id().to_owned(), fake.client_secret().to_owned());
    let scope = fake.scope("/sell.inventory");
    let requests = tokio::task::spawn_blocking(move || {
        let store =
            TokenStore::connect(&url, Keyring::new(TokenKey::from_bytes([42u8; 32]))).unwrap();
        store.migrate().unwrap();
        let endpoints = Endpoints::custom(&base, &auth).unwrap();
        let config = OAuthConfig::new(endpoints.clone())
            .with_credentials(id.as_str(), secret.as_str())
            .with_redirect_uri("Fake_Company-FakeApp-PRD-abcdefghi");
        let tokens = Arc::new(store.refresh_tokens(&config).unwrap());
        let process = || {
            UserTokenProvider::new(
                OAuthClient::from_config(&config).unwrap(),
                tokens.clone(),
                "seller-1",
            )
            .with_shared_cache(store.token_cache())
        };
        let client = OAuthClient::from_config(&config).unwrap();
        let request = client.consent_request(&ScopeSet::new([scope])).unwrap();
        let browser = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .unwrap();
        let answer = browser.get(request.url().as_str()).send().unwrap();
        let landed = answer.headers()["location"].to_str().unwrap().to_owned();
        let code = request.complete(&landed).unwrap();
        let consenting = process();
        consenting.exchange_code(&code, request.scopes()).unwrap();
        let exchanged = consenting.access_token().unwrap();
        let started_after = process().access_token().unwrap();
        assert_eq!(
            started_after, exchanged,
            "the consent's access token reached the shared cache"
        );
    })
    .await;
    requests.unwrap();
    assert_eq!(
        fake.token_requests().len(),
        1,
        "the code exchange only: no refresh"
    );
}

/// `consent signing-key create|show|rotate` with MARKETPLACE_TOKEN_STORE a PostgreSQL URL: the
/// key is created once, kept in `marketplace_signing_keys` with its private key encrypted, and
/// never printed.
#[tokio::test(flavor = "multi_thread")]
async fn consent_signing_key_keeps_the_key_in_the_database() {
    let db = TestDb::new().await;
    let fake = FakeMarketplace::new();
    let key = token_key();
    let run = |args: &[&str]| consent_command(&fake, &db, args, &key, None);
    let posts = || {
        fake.requests_to(fake_marketplace::signatures::SIGNING_KEY_PATH)
            .iter()
            .filter(|r| r.method == "POST")
            .count()
    };
    let stdout = |out: &Output| {
        succeeded(out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let created = run(&["signing-key", "create"]);
    let created_out = stdout(&created);
    assert_eq!(posts(), 1);
    let again = run(&["signing-key", "create"]);
    assert_eq!(stdout(&again), created_out, "an existing key is kept");
    assert_eq!(posts(), 1);
    let (id, cipher): (String, String) =
        sqlx::query_as("SELECT signing_key_id, cipher FROM marketplace_signing_keys")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert!(
        created_out.starts_with(&format!("signing-key {id} cipher {cipher} created ")),
        "{created_out}"
    );
    let rotated = run(&["signing-key", "rotate"]);
    let rotated_out = stdout(&rotated);
    assert_eq!(posts(), 2);
    assert_eq!(rotated_out.lines().count(), 2, "{rotated_out}");
    let shown = run(&["signing-key", "show"]);
    assert_eq!(stdout(&shown), rotated_out);
    // The private keys are ciphertext: no row holds the opening of a base64 PKCS#8 Ed25519
    // key (version 1 or 2; a public key's SubjectPublicKeyInfo opens otherwise: MCow).
    let plain: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM marketplace_signing_keys t
         WHERE position('MC4CAQAwBQYDK2Vw' IN t::text) > 0
            OR position('MFMCAQEwBQYDK2Vw' IN t::text) > 0",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(plain, 0);
}
