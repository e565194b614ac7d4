//! A fleet sharing tokens through a real PostgreSQL (see `support/pg.rs`), counted at the
//! fake marketplace's token endpoint: worker processes (this same binary, started with
//! `FLEET_WORKER=1`) and in-process providers that stand for processes of their own.
//!
//! A test binary of its own (`harness = false`) because it starts itself as the workers.

mod support;

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_marketplace::{FakeConfig, FakeMarketplace, Fault, TOKEN_PATH};
use marketplace_client::aio::oauth::RefreshTokenStore as _;
use marketplace_client::aio::oauth::{
    AccessTokenSource, ApplicationTokenProvider, AuthorizationCode, OAuthClient, OAuthError,
    UserTokenProvider,
};
use marketplace_client::oauth::ScopeSet;
use marketplace_client_postgres::{PgRefreshTokenStore, PgTokenCache, TokenCache, migrate};
use support::fleet::{
    Worker, application_key, client, fingerprint, is_worker, keyring, seed_expired, worker,
};
use support::pg::TestDb;

/// A test: its future, run on the driver's runtime.
type Test = fn() -> std::pin::Pin<Box<dyn Future<Output = ()>>>;

fn main() -> ExitCode {
    if is_worker() {
        return worker::main();
    }
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let tests: [(&str, Test); 11] = [
        ("eight_processes_of_32_tasks_make_one_token_request", || {
            Box::pin(eight_processes_of_32_tasks_make_one_token_request())
        }),
        (
            "a_leader_killed_mid_request_is_replaced_when_its_lease_runs_out",
            || Box::pin(a_leader_killed_mid_request_is_replaced_when_its_lease_runs_out()),
        ),
        ("every_call_succeeds_while_the_database_is_stopped", || {
            Box::pin(every_call_succeeds_while_the_database_is_stopped())
        }),
        ("a_grant_slower_than_the_lease_is_still_one_request", || {
            Box::pin(a_grant_slower_than_the_lease_is_still_one_request())
        }),
        (
            "a_token_the_marketplace_refused_is_not_shared_again",
            || Box::pin(a_token_the_marketplace_refused_is_not_shared_again()),
        ),
        (
            "a_refusal_of_a_token_from_memory_is_the_store_being_down",
            || Box::pin(a_refusal_of_a_token_from_memory_is_the_store_being_down()),
        ),
        ("a_failed_grant_is_a_back_off_for_the_whole_fleet", || {
            Box::pin(a_failed_grant_is_a_back_off_for_the_whole_fleet())
        }),
        (
            "an_account_named_after_a_scoped_token_gets_none_of_it",
            || Box::pin(an_account_named_after_a_scoped_token_gets_none_of_it()),
        ),
        ("a_new_consent_reaches_every_process_at_once", || {
            Box::pin(a_new_consent_reaches_every_process_at_once())
        }),
        (
            "a_process_with_a_wrong_key_does_not_back_off_the_fleet",
            || Box::pin(a_process_with_a_wrong_key_does_not_back_off_the_fleet()),
        ),
        (
            "a_host_refusing_every_token_costs_the_fleet_one_renewal_per_backoff",
            || Box::pin(a_host_refusing_every_token_costs_the_fleet_one_renewal_per_backoff()),
        ),
    ];
    // As libtest lists its tests (`--list`, and `--list --ignored`: none here;
    // `.ci/test-names` reads them).
    if std::env::args().any(|a| a == "--list") {
        if !std::env::args().any(|a| a == "--ignored") {
            for (name, _) in tests {
                println!("{name}: test");
            }
        }
        return ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("runtime");
    let mut ran = 0;
    for (name, test) in tests {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        println!("test {name} ...");
        runtime.block_on(test());
        println!("test {name} ... ok");
        ran += 1;
    }
    println!("fleet: {ran} passed");
    ExitCode::SUCCESS
}

async fn eight_processes_of_32_tasks_make_one_token_request() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    // A slow token endpoint, so that every process asks while the first request runs.
    fake.fail_times(TOKEN_PATH, Fault::Delay(Duration::from_millis(300)), 1);
    let key = application_key(&fake);
    seed_expired(&db, &key).await;

    let mut workers: Vec<Worker> = (0..8)
        .map(|_| Worker::start(&db, &fake, 32, Duration::from_secs(10)))
        .collect();
    tokio::task::block_in_place(|| {
        workers.iter_mut().for_each(Worker::wait_ready);
        workers.iter_mut().for_each(Worker::go);
    });
    let answers: Vec<String> =
        tokio::task::block_in_place(|| workers.into_iter().flat_map(Worker::finish).collect());

    assert_eq!(answers.len(), 8 * 32);
    let distinct: BTreeSet<&String> = answers.iter().collect();
    assert_eq!(distinct.len(), 1, "one token for the fleet: {distinct:?}");
    assert!(answers[0].starts_with("token "), "{}", answers[0]);
    assert_eq!(
        fake.token_requests().len(),
        1,
        "8 processes x 32 tasks at expiry make one token request"
    );
    let row = TokenCache::new(db.pool.clone(), keyring())
        .read(&key)
        .await
        .unwrap()
        .expect("the row");
    assert_eq!(
        format!(
            "token {}",
            fingerprint(row.token.as_ref().unwrap().expose())
        ),
        answers[0],
        "the token published is the one every task got"
    );
    assert_eq!(
        row.fence, 2,
        "one lease for the process that seeded the row, one for the whole fleet"
    );
}

async fn a_leader_killed_mid_request_is_replaced_when_its_lease_runs_out() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    // The leader's request hangs at the token endpoint until the leader is dead.
    fake.fail_times(TOKEN_PATH, Fault::Delay(Duration::from_secs(8)), 1);
    let lease = Duration::from_secs(1);

    let mut leader = Worker::start(&db, &fake, 1, lease);
    tokio::task::block_in_place(|| {
        leader.wait_ready();
        leader.go();
    });
    let asked = Instant::now();
    while fake.token_requests().is_empty() {
        assert!(
            asked.elapsed() < Duration::from_secs(20),
            "the leader never asked"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    leader.child.kill().expect("SIGKILL the leader");
    let killed = Instant::now();
    let status = leader.child.wait().unwrap();
    assert!(!status.success(), "the leader was killed: {status}");

    let mut others: Vec<Worker> = (0..4)
        .map(|_| Worker::start(&db, &fake, 8, lease))
        .collect();
    tokio::task::block_in_place(|| {
        others.iter_mut().for_each(Worker::wait_ready);
        others.iter_mut().for_each(Worker::go);
    });
    let answers: Vec<String> =
        tokio::task::block_in_place(|| others.into_iter().flat_map(Worker::finish).collect());
    let took_over = killed.elapsed();

    assert_eq!(answers.len(), 32);
    let distinct: BTreeSet<&String> = answers.iter().collect();
    assert_eq!(distinct.len(), 1, "{distinct:?}");
    assert!(answers[0].starts_with("token "), "{}", answers[0]);
    assert_eq!(
        fake.token_requests().len(),
        2,
        "the dead leader's request and its successor's"
    );
    println!(
        "  (a lease of {} ms: every task held the successor's token {} ms after the SIGKILL)",
        lease.as_millis(),
        took_over.as_millis()
    );
}

/// Consent against the fake (the test plays the seller's browser): the consent request and
/// the authorization code it brought.
async fn consent(
    client: &OAuthClient,
    scopes: &ScopeSet,
) -> (marketplace_client::oauth::ConsentRequest, AuthorizationCode) {
    let request = client.consent_request(scopes).unwrap();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap();
    let answer = browser.get(request.url().as_str()).send().await.unwrap();
    assert_eq!(
        answer.status().as_u16(),
        302,
        "the fake's consent page redirects"
    );
    let landed = answer.headers()["location"].to_str().unwrap().to_owned();
    let code = request.complete(&landed).unwrap();
    (request, code)
}

/// The database's refresh-token store of `client`'s application, with a 2 s time-out so
/// that a stopped database answers quickly.
fn user_store(db: &TestDb, client: &OAuthClient, fake: &FakeMarketplace) -> PgRefreshTokenStore {
    PgRefreshTokenStore::from_config(
        db.pool.clone(),
        keyring(),
        &marketplace_client::oauth::OAuthConfig::new(client.endpoints().clone())
            .with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap()
    .with_timeout(Duration::from_secs(2))
}

async fn every_call_succeeds_while_the_database_is_stopped() {
    let mut db = TestDb::with_own_server().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::start(FakeConfig {
        rotate_refresh_tokens: true,
        ..FakeConfig::default()
    })
    .unwrap();
    let client = Arc::new(client(&fake));
    // Each call that reaches the stopped database waits for it this long (at each of the
    // cache's and the store's steps) before going on without it: the defaults (2 s) would
    // make the outage's ten rounds take 80 s.
    let outage_wait = Duration::from_millis(500);
    let cache =
        Arc::new(PgTokenCache::new(db.pool.clone(), keyring()).with_db_timeout(outage_wait));
    let store = Arc::new(user_store(&db, &client, &fake).with_timeout(outage_wait));
    // Every third call is refused below (a 401): a back-off of 1 ms lets each refusal renew,
    // where the default would take the second refusal within 30 s as a host refusing every
    // token and answer from the back-off without a renewal.
    let backoff = Duration::from_millis(1);
    let app = ApplicationTokenProvider::new(client.clone())
        .with_shared_cache(cache.clone())
        .with_retry_backoff(backoff);
    let user = UserTokenProvider::new(client.clone(), store.clone(), "seller-1")
        .with_shared_cache(cache.clone())
        .with_retry_backoff(backoff);

    let scopes = ScopeSet::new([fake.scope("/sell.inventory")]);
    let (request, code) = consent(&client, &scopes).await;
    user.exchange_code(&code, request.scopes()).await.unwrap();

    let mut seen = Vec::new();
    let mut failures = Vec::new();
    for round in 0..30 {
        if round == 10 {
            db.server().stop().expect("stop the database");
        }
        if round == 20 {
            db.server().start().expect("start the database again");
            // The pool has a connection again before the providers need one: their 500 ms
            // are for the outage, not for reconnecting on a machine busy with other tests.
            let back = std::time::Instant::now();
            while sqlx::query("SELECT 1").execute(&db.pool).await.is_err() {
                assert!(
                    back.elapsed() < Duration::from_secs(30),
                    "the database did not come back"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        for (who, source) in [("app", &app as &dyn AccessTokenSource), ("user", &user)] {
            match source.access_token().await {
                Ok(token) => {
                    if round % 3 == 2 {
                        // A 401 from the API: the next call renews.
                        source.invalidate(&token);
                    }
                    seen.push(token.secret().to_owned());
                }
                Err(e) => failures.push(format!("round {round}, {who}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "every call succeeds: {failures:#?}");

    // The database is back: a renewal goes through the shared cache again.
    let now = app.access_token().await.unwrap();
    let row = TokenCache::new(db.pool.clone(), keyring())
        .read(&application_key(&fake))
        .await
        .unwrap()
        .expect("the application token's row");
    assert_eq!(
        row.token.as_ref().map(|t| t.expose()),
        Some(now.secret()),
        "the token renewed after the outage is the one shared"
    );
    assert!(
        user.unsaved_refresh_token().is_none(),
        "the refresh token rotated during the outage was saved once the database was back"
    );

    // No refresh token lost: the stored one works for a process that starts now.
    let stored = store.load("seller-1").await.unwrap().expect("stored");
    assert!(
        fake.live_refresh_tokens()
            .contains(&stored.refresh_token.secret().to_owned()),
        "the stored refresh token is one the marketplace still honours"
    );
    let newcomer = UserTokenProvider::new(Arc::new(self::client(&fake)), store.clone(), "seller-1");
    newcomer
        .access_token()
        .await
        .expect("a new process refreshes with the stored token");

    // Nothing in plain text in a dump of the database.
    let dump = db.pg_dump();
    assert!(
        dump.contains("marketplace_token_cache"),
        "the dump holds the tables"
    );
    let mut secrets = seen;
    secrets.extend(fake.live_refresh_tokens());
    for secret in &secrets {
        assert!(
            !dump.contains(secret.as_str()),
            "a token in plain text in pg_dump"
        );
    }
}

async fn a_grant_slower_than_the_lease_is_still_one_request() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    // 2.5 s at the token endpoint, with a lease of 1 s: the leader extends its lease while it
    // waits, so nobody takes over.
    fake.fail_times(TOKEN_PATH, Fault::Delay(Duration::from_millis(2500)), 1);
    let provider = || {
        Arc::new(
            ApplicationTokenProvider::new(client(&fake)).with_shared_cache(Arc::new(
                PgTokenCache::new(db.pool.clone(), keyring()).with_lease(Duration::from_secs(1)),
            )),
        )
    };
    let (one, other) = (provider(), provider());
    let first = tokio::spawn({
        let one = one.clone();
        async move { one.access_token().await }
    });
    while fake.token_requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let second = other
        .access_token()
        .await
        .expect("the other process's token");
    let first = first.await.unwrap().expect("the leader's token");
    assert_eq!(first, second, "one token for both");
    assert_eq!(
        fake.token_requests().len(),
        1,
        "a grant slower than the lease is not asked twice"
    );
}

async fn a_token_the_marketplace_refused_is_not_shared_again() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    let one = ApplicationTokenProvider::new(client(&fake))
        .with_shared_cache(Arc::new(PgTokenCache::new(db.pool.clone(), keyring())));
    let other = ApplicationTokenProvider::new(client(&fake))
        .with_shared_cache(Arc::new(PgTokenCache::new(db.pool.clone(), keyring())));

    let first = one.access_token().await.unwrap();
    assert_eq!(other.access_token().await.unwrap(), first, "shared");
    assert_eq!(fake.token_requests().len(), 1);

    one.invalidate(&first);
    let second = one.access_token().await.unwrap();
    assert_ne!(second, first, "the refused token is not handed out again");
    assert_eq!(fake.token_requests().len(), 2);
    other.invalidate(&first);
    assert_eq!(
        other.access_token().await.unwrap(),
        second,
        "the other process takes the renewed token from the cache"
    );
    assert_eq!(fake.token_requests().len(), 2);
}

/// While the store is down, a refresh uses the last refresh token read from it; if the
/// marketplace refuses that one, the store may hold a newer consent: the answer is the store's
/// error, and no account is marked as needing consent.
async fn a_refusal_of_a_token_from_memory_is_the_store_being_down() {
    let mut db = TestDb::with_own_server().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    let client = Arc::new(client(&fake));
    let store = Arc::new(user_store(&db, &client, &fake));
    let user = UserTokenProvider::new(client.clone(), store.clone(), "seller-1");
    let scopes = ScopeSet::new([fake.scope("/sell.inventory")]);
    let (request, code) = consent(&client, &scopes).await;
    user.exchange_code(&code, request.scopes()).await.unwrap();
    let token = user.access_token().await.unwrap();

    db.server().stop().expect("stop the database");
    fake.revoke_refresh_tokens();
    user.invalidate(&token);
    let refused = user.access_token().await.unwrap_err();
    assert!(
        matches!(refused, OAuthError::Store(ref e) if e.is_unavailable()),
        "the store being down, not a revoked consent: {refused:?}"
    );

    db.server().start().expect("start the database again");
    assert!(
        !store.needs_consent("seller-1").await.unwrap(),
        "nothing was marked while the store was down"
    );
    // The database back (its pool reconnecting takes a try or two): the refusal now names
    // the account and marks it.
    let mut refused = None;
    for _ in 0..5 {
        user.retry_now();
        match user.access_token().await {
            Err(OAuthError::Store(_)) => tokio::time::sleep(Duration::from_millis(200)).await,
            other => {
                refused = Some(other);
                break;
            }
        }
    }
    let refused = refused.expect("the store answers again").unwrap_err();
    assert!(
        matches!(refused, OAuthError::ConsentRevoked { ref account, .. } if account == "seller-1"),
        "with the store back, the revoked consent is named: {refused:?}"
    );
    assert!(store.needs_consent("seller-1").await.unwrap(), "and marked");
}

async fn a_failed_grant_is_a_back_off_for_the_whole_fleet() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    fake.fail_next(
        TOKEN_PATH,
        Fault::Status {
            status: 503,
            body: "down for maintenance".into(),
            headers: Vec::new(),
        },
    );
    let backoff = Duration::from_millis(800);
    let provider = || {
        ApplicationTokenProvider::new(client(&fake))
            .with_retry_backoff(backoff)
            .with_shared_cache(Arc::new(PgTokenCache::new(db.pool.clone(), keyring())))
    };
    let (one, other) = (provider(), provider());

    let failed = one.access_token().await.unwrap_err();
    assert_eq!(failed.status(), Some(503), "{failed}");
    let shared = other.access_token().await.unwrap_err();
    match &shared {
        OAuthError::BackingOff {
            error, retry_in, ..
        } => {
            assert!(
                matches!(**error, OAuthError::FailedElsewhere { .. }),
                "{error:?}"
            );
            assert!(*retry_in <= backoff, "{retry_in:?}");
        }
        e => panic!("expected the fleet's back-off, got {e:?}"),
    }
    assert!(shared.to_string().contains("503"), "{shared}");
    assert_eq!(
        fake.token_requests().len(),
        1,
        "no request during the back-off"
    );

    // The fleet's back-off ends at the same moment in every process: no `retry_now` needed.
    tokio::time::sleep(backoff + Duration::from_millis(200)).await;
    other.access_token().await.expect("after the back-off");
    assert_eq!(fake.token_requests().len(), 2);
}

/// The shared cache keys a user token asked for a subset of the consented scopes apart from
/// the account's own: an account literally named like such a token (`seller-1 [scope]`), with
/// no refresh token of its own, is not handed seller-1's token.
async fn an_account_named_after_a_scoped_token_gets_none_of_it() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    let client = Arc::new(client(&fake));
    let cache = Arc::new(PgTokenCache::new(db.pool.clone(), keyring()));
    let store = Arc::new(user_store(&db, &client, &fake));
    let inventory = fake.scope("/sell.inventory");
    let scopes = ScopeSet::new([inventory.clone(), fake.scope("/sell.account")]);
    let (request, code) = consent(&client, &scopes).await;
    UserTokenProvider::new(client.clone(), store.clone(), "seller-1")
        .exchange_code(&code, request.scopes())
        .await
        .unwrap();
    let narrow = UserTokenProvider::new(client.clone(), store.clone(), "seller-1")
        .with_scopes(ScopeSet::new([inventory.clone()]))
        .with_shared_cache(cache.clone());
    let sellers = narrow.access_token().await.unwrap();
    let requests = fake.token_requests().len();

    let name = format!("seller-1 [{inventory}]");
    let impostor = UserTokenProvider::new(client.clone(), store.clone(), name.as_str())
        .with_shared_cache(cache.clone());
    match impostor.access_token().await {
        Ok(token) => {
            assert_ne!(
                token, sellers,
                "the account {name:?} was handed seller-1's token"
            );
            panic!("the account {name:?} has no refresh token, yet got a token");
        }
        Err(e) => assert!(
            matches!(&e, OAuthError::NoRefreshToken { account } if *account == name),
            "{e:?}"
        ),
    }
    assert_eq!(
        fake.token_requests().len(),
        requests,
        "nothing to refresh with"
    );

    // seller-1's scoped token is still shared with seller-1's other processes.
    let twin = UserTokenProvider::new(client.clone(), store.clone(), "seller-1")
        .with_scopes(ScopeSet::new([inventory]))
        .with_shared_cache(cache.clone());
    assert_eq!(twin.access_token().await.unwrap(), sellers);
    assert_eq!(fake.token_requests().len(), requests);
}

/// A new consent (other scopes, say) replaces the account's refresh token: a process started
/// after it gets an access token of the new consent, not the old consent's shared token.
async fn a_new_consent_reaches_every_process_at_once() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    let client = Arc::new(client(&fake));
    let cache = Arc::new(PgTokenCache::new(db.pool.clone(), keyring()));
    let store = Arc::new(user_store(&db, &client, &fake));
    let process = || {
        UserTokenProvider::new(client.clone(), store.clone(), "seller-1")
            .with_shared_cache(cache.clone())
    };
    let first_scopes = ScopeSet::new([fake.scope("/sell.inventory")]);
    let (request, code) = consent(&client, &first_scopes).await;
    process()
        .exchange_code(&code, request.scopes())
        .await
        .unwrap();
    let old = process().access_token().await.unwrap();
    assert_eq!(process().access_token().await.unwrap(), old, "shared");

    let second_scopes = ScopeSet::new([
        fake.scope("/sell.inventory"),
        fake.scope("/sell.fulfillment"),
    ]);
    let (request, code) = consent(&client, &second_scopes).await;
    let consenting = process();
    consenting
        .exchange_code(&code, request.scopes())
        .await
        .unwrap();
    // The code exchange's own access token (held in the consenting process).
    let exchanged = consenting.access_token().await.unwrap();
    let requests = fake.token_requests().len();

    let started_after = process().access_token().await.unwrap();
    assert_ne!(
        started_after, old,
        "a process started after the new consent got the old consent's token"
    );
    assert_eq!(
        started_after, exchanged,
        "the new consent's access token reached the shared cache"
    );
    assert_eq!(fake.token_requests().len(), requests, "no refresh needed");
    let issued = fake
        .issued_token(started_after.secret())
        .expect("a token the fake issued");
    let mut granted: Vec<String> = second_scopes.iter().map(str::to_owned).collect();
    granted.sort();
    let mut scopes = issued.scopes.clone();
    scopes.sort();
    assert_eq!(scopes, granted, "the new consent's token");
}

/// A process whose MARKETPLACE_TOKEN_KEY cannot decrypt the stored refresh token fails on its
/// own: its failure is not the fleet's back-off, so the healthy processes keep refreshing.
async fn a_process_with_a_wrong_key_does_not_back_off_the_fleet() {
    use marketplace_client_postgres::{Keyring, TokenKey};
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    let client = Arc::new(client(&fake));
    let store = Arc::new(user_store(&db, &client, &fake));
    let scopes = ScopeSet::new([fake.scope("/sell.inventory")]);
    let (request, code) = consent(&client, &scopes).await;
    UserTokenProvider::new(client.clone(), store.clone(), "seller-1")
        .exchange_code(&code, request.scopes())
        .await
        .unwrap();
    let before = fake.token_requests().len();

    let wrong = Keyring::new(TokenKey::from_bytes([0x5A; 32]));
    let misconfigured = UserTokenProvider::new(
        client.clone(),
        Arc::new(
            PgRefreshTokenStore::from_config(
                db.pool.clone(),
                wrong.clone(),
                &marketplace_client::oauth::OAuthConfig::new(client.endpoints().clone())
                    .with_credentials(fake.client_id(), fake.client_secret()),
            )
            .unwrap()
            .with_timeout(Duration::from_secs(2)),
        ),
        "seller-1",
    )
    .with_shared_cache(Arc::new(PgTokenCache::new(db.pool.clone(), wrong)));
    let failed = misconfigured.access_token().await.unwrap_err();
    assert!(
        matches!(&failed, OAuthError::Store(e) if e.is_corrupt()),
        "the wrong key's own error: {failed:?}"
    );
    assert_eq!(fake.token_requests().len(), before, "nothing to send");

    let healthy = UserTokenProvider::new(client.clone(), store.clone(), "seller-1")
        .with_shared_cache(Arc::new(PgTokenCache::new(db.pool.clone(), keyring())));
    let token = healthy
        .access_token()
        .await
        .expect("a healthy process refreshes despite the misconfigured one");
    assert_eq!(
        fake.token_requests().len(),
        before + 1,
        "the healthy process asked the token endpoint"
    );
    assert!(fake.issued_token(token.secret()).is_some());
}

/// A host that answers 401 to every call: the renewal caused by a refusal happens once per
/// back-off for the whole fleet, not once per process. Five processes (providers with caches
/// of their own over one database) calling through the taxonomy client, counted at the fake's
/// token endpoint: the first grant, one renewal, and after the back-off one more.
async fn a_host_refusing_every_token_costs_the_fleet_one_renewal_per_backoff() {
    use marketplace_client::Marketplace;
    use marketplace_client::aio::taxonomy::{ClientConfig, TaxonomyClient};
    const SUGGESTIONS_US: &str = "/commerce/taxonomy/v1/category_tree/0/get_category_suggestions";
    const PROCESSES: usize = 5;
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    fake.fail_times(
        SUGGESTIONS_US,
        Fault::Status {
            status: 401,
            body: String::new(),
            headers: Vec::new(),
        },
        1000,
    );
    let backoff = Duration::from_millis(1500);
    let clients: Vec<TaxonomyClient> = (0..PROCESSES)
        .map(|_| {
            let provider = ApplicationTokenProvider::new(client(&fake))
                .with_retry_backoff(backoff)
                .with_shared_cache(Arc::new(PgTokenCache::new(db.pool.clone(), keyring())));
            TaxonomyClient::new(
                ClientConfig::for_base_url(&fake.base_url()).unwrap(),
                Arc::new(provider),
            )
            .unwrap()
        })
        .collect();
    let round = || async {
        let mut errors = Vec::new();
        for _ in 0..4 {
            for client in &clients {
                let error = client
                    .category_suggestions(Marketplace::Us, "iphone")
                    .await
                    .unwrap_err();
                errors.push(error.to_string());
            }
        }
        errors
    };

    let errors = round().await;
    assert_eq!(
        fake.token_requests().len(),
        2,
        "the first grant and one renewal for {PROCESSES} processes (each renewing on its own \
         would make {}); the last error: {}",
        1 + PROCESSES,
        errors.last().unwrap()
    );
    let refused_too = errors
        .iter()
        .filter(|e| e.contains("renewed after a refusal was refused too"))
        .count();
    assert!(
        refused_too >= errors.len() - 1,
        "every call but the first says so: {errors:#?}"
    );

    // After the back-off, the fleet renews once more, not once per process.
    tokio::time::sleep(backoff + Duration::from_millis(300)).await;
    let errors = round().await;
    assert_eq!(
        fake.token_requests().len(),
        3,
        "one renewal for the fleet after the back-off; the last error: {}",
        errors.last().unwrap()
    );
}
