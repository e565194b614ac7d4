//! Token providers against the fake: cache, early refresh with an injected clock, single
//! flight under 32 threads, scope keys, failures while the old token is valid, user tokens.

use crate::oauth_support as support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime};

use fake_marketplace::{FakeConfig, FakeMarketplace, Fault, TOKEN_PATH};
use marketplace_client::oauth::{
    AccessTokenSource, ApplicationTokenProvider, MemoryStore, OAuthConfig, OAuthError,
    OAuthErrorCode, RefreshTokenStore, ScopeSet, UserTokenProvider,
};
use marketplace_client::test_util::{Clock, DEFAULT_RETRY_BACKOFF, MAX_RETRY_AFTER, ManualClock};
use support::*;

fn app_provider(fake: &FakeMarketplace, clock: &Arc<ManualClock>) -> ApplicationTokenProvider {
    ApplicationTokenProvider::new(client(fake)).with_clock(clock.clone())
}

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(SystemTime::now()))
}

/// A 503 with no body: the token endpoint is down.
fn unavailable() -> Fault {
    Fault::Status {
        status: 503,
        body: String::new(),
        headers: vec![],
    }
}

#[test]
fn caches_and_refreshes_five_minutes_before_expiry() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = app_provider(&fake, &clock);

    let first = provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 1);
    for _ in 0..10 {
        assert_eq!(provider.access_token().unwrap(), first);
    }
    assert_eq!(fake.token_requests().len(), 1, "cached");

    // 2 h lifetime: at 1 h 54 min (6 min left) the token is still handed out.
    clock.advance(Duration::from_secs(6840));
    assert_eq!(provider.access_token().unwrap(), first);
    assert_eq!(fake.token_requests().len(), 1);

    // 4 min 59 s left: inside the 5-minute margin, renewed.
    clock.advance(Duration::from_secs(61));
    let second = provider.access_token().unwrap();
    assert_ne!(second, first);
    assert_eq!(fake.token_requests().len(), 2);
    assert_eq!(provider.access_token().unwrap(), second);
    assert_eq!(fake.token_requests().len(), 2);
    let cached = provider.cached(&ScopeSet::default()).unwrap();
    assert_eq!(cached.access_token, second);
    assert_eq!(cached.token_type, "Application Access Token");
}

#[test]
fn thirty_two_threads_make_one_request() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = Arc::new(app_provider(&fake, &clock));
    // A slow answer keeps the request in flight while every thread arrives.
    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_millis(300)));

    let run = |provider: &Arc<ApplicationTokenProvider>| {
        let barrier = Arc::new(Barrier::new(32));
        let handles: Vec<_> = (0..32)
            .map(|_| {
                let provider = provider.clone();
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    provider.access_token().unwrap()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    };

    let tokens = run(&provider);
    assert_eq!(fake.token_requests().len(), 1, "exactly one token request");
    assert!(tokens.iter().all(|t| *t == tokens[0]));

    // Again at renewal time: one more request; every thread gets a valid token.
    clock.advance(Duration::from_secs(7200 - 200));
    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_millis(300)));
    let tokens = run(&provider);
    assert_eq!(fake.token_requests().len(), 2, "one request per expiry");
    for t in &tokens {
        assert!(fake.issued_token(t.secret()).is_some());
    }
    assert_eq!(
        provider.access_token().unwrap(),
        provider.cached(&ScopeSet::default()).unwrap().access_token
    );
}

#[test]
fn thirty_two_threads_on_an_expired_cache_make_one_request() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = Arc::new(app_provider(&fake, &clock));
    provider.access_token().unwrap();
    clock.advance(Duration::from_secs(8000)); // fully expired: everyone must wait
    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_millis(300)));
    let barrier = Arc::new(Barrier::new(32));
    let handles: Vec<_> = (0..32)
        .map(|_| {
            let (provider, barrier) = (provider.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                provider.access_token().unwrap()
            })
        })
        .collect();
    let tokens: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(fake.token_requests().len(), 2);
    assert!(tokens.iter().all(|t| *t == tokens[0]));
}

#[test]
fn cache_is_keyed_by_scope_set() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = app_provider(&fake, &clock);
    let a = ScopeSet::new([fake.scope("")]);
    let ab = ScopeSet::new([fake.scope(""), fake.scope("/buy.item.feed")]);
    let ba = ScopeSet::new([fake.scope("/buy.item.feed"), fake.scope("")]);

    let t_a = provider.access_token_for(&a).unwrap();
    let t_ab = provider.access_token_for(&ab).unwrap();
    assert_ne!(t_a, t_ab);
    assert_eq!(fake.token_requests().len(), 2);
    assert_eq!(
        provider.access_token_for(&ba).unwrap(),
        t_ab,
        "order does not matter"
    );
    assert_eq!(provider.access_token_for(&a).unwrap(), t_a);
    assert_eq!(
        provider.access_token().unwrap(),
        t_a,
        "default scope = api_scope"
    );
    assert_eq!(fake.token_requests().len(), 2);
    assert_eq!(fake.issued_token(t_ab.secret()).unwrap().scopes.len(), 2);
}

#[test]
fn failed_renewal_keeps_the_valid_token_and_reports() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let reported = Arc::new(AtomicUsize::new(0));
    let seen = reported.clone();
    let provider = app_provider(&fake, &clock)
        .with_retry_backoff(Duration::from_secs(30))
        .on_refresh_error(move |e| {
            assert!(matches!(e, OAuthError::Http { status: 500, .. }));
            seen.fetch_add(1, Ordering::SeqCst);
        });
    let old = provider.access_token().unwrap();
    assert!(provider.last_error().is_none());

    clock.advance(Duration::from_secs(7200 - 120)); // 2 minutes left
    fake.fail_next(
        TOKEN_PATH,
        Fault::Status {
            status: 500,
            body: "down".into(),
            headers: vec![],
        },
    );
    assert_eq!(
        provider.access_token().unwrap(),
        old,
        "old token while it is valid"
    );
    assert_eq!(reported.load(Ordering::SeqCst), 1);
    assert!(matches!(
        provider.last_error(),
        Some(OAuthError::Http { status: 500, .. })
    ));
    assert_eq!(fake.token_requests().len(), 2);

    // Within the back-off: no new request.
    clock.advance(Duration::from_secs(10));
    assert_eq!(provider.access_token().unwrap(), old);
    assert_eq!(fake.token_requests().len(), 2);

    // After it: renewed, error cleared.
    clock.advance(Duration::from_secs(25));
    let new = provider.access_token().unwrap();
    assert_ne!(new, old);
    assert_eq!(fake.token_requests().len(), 3);
    assert!(provider.last_error().is_none());
}

#[test]
fn failed_request_without_a_valid_token_is_an_error() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = app_provider(&fake, &clock);
    fake.fail_next(TOKEN_PATH, unavailable());
    assert!(matches!(
        provider.access_token(),
        Err(OAuthError::Http { status: 503, .. })
    ));
    // Without a usable token, calls during the back-off get the same error without a request:
    // at most one request per DEFAULT_RETRY_BACKOFF, however often it is asked.
    for _ in 0..20 {
        assert!(matches!(
            provider.access_token(),
            Err(OAuthError::BackingOff { error, .. }) if matches!(*error, OAuthError::Http { status: 503, .. })
        ));
        clock.advance(Duration::from_secs(1));
    }
    assert_eq!(fake.token_requests().len(), 1);
    clock.advance(DEFAULT_RETRY_BACKOFF);
    provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 2);
}

#[test]
fn short_lived_tokens_are_cached_until_half_way() {
    for (ttl, renew_after) in [(240, 120), (60, 30), (300, 150), (7200, 6900)] {
        let fake = FakeMarketplace::start(FakeConfig {
            access_token_ttl: Duration::from_secs(ttl),
            ..FakeConfig::default()
        })
        .unwrap();
        let clock = clock();
        let provider = app_provider(&fake, &clock);
        let first = provider.access_token().unwrap();
        // 20 calls spread over the first part of the lifetime: one request.
        let step = Duration::from_secs(renew_after - 1) / 20;
        for _ in 0..20 {
            assert_eq!(provider.access_token().unwrap(), first, "ttl {ttl}");
            clock.advance(step);
        }
        assert_eq!(fake.token_requests().len(), 1, "ttl {ttl}");
        let cached = provider.cached(&ScopeSet::default()).unwrap();
        // Time passes (advance); a step of the wall clock (set) would move no deadline.
        let until_renewal = cached.renew_at.duration_since(clock.now()).unwrap();
        clock.advance(until_renewal - Duration::from_secs(1));
        assert_eq!(provider.access_token().unwrap(), first, "ttl {ttl}");
        assert_eq!(
            cached.expires_at.duration_since(cached.renew_at).unwrap(),
            Duration::from_secs(ttl - renew_after),
            "ttl {ttl}"
        );
        clock.advance(Duration::from_secs(1));
        assert_ne!(provider.access_token().unwrap(), first, "ttl {ttl}");
        assert_eq!(fake.token_requests().len(), 2, "ttl {ttl}");
    }
}

#[test]
fn rate_limit_is_honoured_before_asking_again() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = app_provider(&fake, &clock);
    fake.fail_next(
        TOKEN_PATH,
        Fault::TooManyRequests {
            retry_after_secs: 60,
        },
    );
    let err = provider.access_token().unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(60)));
    // Within Retry-After: the same error, no request.
    clock.advance(Duration::from_secs(30));
    assert!(matches!(
        provider.access_token(),
        Err(OAuthError::BackingOff { error, .. }) if matches!(*error, OAuthError::RateLimited { .. })
    ));
    assert_eq!(fake.token_requests().len(), 1);
    clock.advance(Duration::from_secs(31));
    provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 2);
}

#[test]
fn a_huge_retry_after_is_capped_and_invalidate_clears_the_back_off() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = app_provider(&fake, &clock);
    fake.fail_next(
        TOKEN_PATH,
        Fault::TooManyRequests {
            retry_after_secs: 999_999,
        },
    );
    assert!(matches!(
        provider.access_token(),
        Err(OAuthError::RateLimited { .. })
    ));
    // Honoured up to MAX_RETRY_AFTER (2 minutes), not for 11 days.
    clock.advance(MAX_RETRY_AFTER - Duration::from_secs(1));
    assert!(provider.access_token().is_err());
    assert_eq!(fake.token_requests().len(), 1);
    clock.advance(Duration::from_secs(2));
    let token = provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 2);

    // A pending back-off can be reset: invalidate() asks again at once.
    provider.invalidate(&token);
    fake.fail_next(
        TOKEN_PATH,
        Fault::TooManyRequests {
            retry_after_secs: 999_999,
        },
    );
    assert!(provider.access_token().is_err());
    assert_eq!(fake.token_requests().len(), 3);
    assert!(provider.access_token().is_err(), "backing off");
    assert_eq!(fake.token_requests().len(), 3);
    provider.invalidate(&token);
    provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 4);
}

#[test]
fn invalidate_forces_a_new_token_once() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = app_provider(&fake, &clock);
    let first = provider.access_token().unwrap();
    provider.invalidate(&first);
    let second = provider.access_token().unwrap();
    assert_ne!(first, second);
    assert_eq!(fake.token_requests().len(), 2);
    // A stale token (already replaced) does not drop the current one.
    provider.invalidate(&first);
    assert_eq!(provider.access_token().unwrap(), second);
    assert_eq!(fake.token_requests().len(), 2);
}

#[test]
fn token_source_from_config() {
    let fake = FakeMarketplace::new();
    let base = fake.base_url();
    let vars = [
        ("MARKETPLACE_BASE_URL", base.clone()),
        ("MARKETPLACE_AUTH_URL", base.clone()),
        ("MARKETPLACE_CLIENT_ID", fake.client_id().to_owned()),
        ("MARKETPLACE_CLIENT_SECRET", fake.client_secret().to_owned()),
    ];
    let lookup = |extra: Option<(&'static str, String)>| {
        let vars = vars.clone();
        move |name: &str| {
            vars.iter()
                .cloned()
                .chain(extra.clone())
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v)
        }
    };
    let source =
        ApplicationTokenProvider::source(&OAuthConfig::from_lookup(lookup(None)).unwrap()).unwrap();
    let token = source.access_token().unwrap();
    assert!(fake.issued_token(token.secret()).is_some());

    let ready = ApplicationTokenProvider::source(
        &OAuthConfig::from_lookup(lookup(Some((
            "MARKETPLACE_ACCESS_TOKEN",
            "ready-token".into(),
        ))))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(ready.access_token().unwrap().secret(), "ready-token");
    assert_eq!(fake.token_requests().len(), 1);
}

fn consented_user<S: RefreshTokenStore + 'static>(
    fake: &FakeMarketplace,
    clock: &Arc<ManualClock>,
    store: Arc<S>,
    scopes: &ScopeSet,
) -> UserTokenProvider {
    let client = Arc::new(client(fake));
    let provider =
        UserTokenProvider::new(client.clone(), store, "seller-1").with_clock(clock.clone());
    let consent = client.consent_request(scopes).unwrap();
    let code = consent.complete(&consent_redirect(fake, &consent)).unwrap();
    provider.exchange_code(&code, consent.scopes()).unwrap();
    provider
}

#[test]
fn user_tokens_refresh_from_the_store() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let store = Arc::new(MemoryStore::new());
    let scopes = ScopeSet::new([fake.scope(""), fake.scope("/sell.inventory")]);
    let provider = consented_user(&fake, &clock, store.clone(), &scopes);
    assert_eq!(fake.token_requests().len(), 1, "the code exchange");
    let stored = store.load("seller-1").unwrap().unwrap();
    assert_eq!(stored.scopes, scopes);
    assert!(
        fake.live_refresh_tokens()
            .contains(&stored.refresh_token.secret().to_owned())
    );

    // The exchange's access token is cached.
    let first = provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 1);
    assert_eq!(
        fake.issued_token(first.secret()).unwrap().token_type,
        "User Access Token"
    );

    clock.advance(Duration::from_secs(7200 - 299));
    let second = provider.access_token().unwrap();
    assert_ne!(first, second);
    let requests = fake.token_requests();
    assert_eq!(requests.len(), 2);
    let form = requests[1].form().unwrap();
    assert_eq!(form[0].1, "refresh_token");
    assert_eq!(form[1].1, stored.refresh_token.secret());
    assert_eq!(form[2].1, scopes.to_space_separated(), "the granted scopes");
    // The real service does not rotate: the stored token is unchanged.
    assert_eq!(
        store.load("seller-1").unwrap().unwrap().refresh_token,
        stored.refresh_token
    );
}

/// A refresh token deleted from the store (eBay's account deletion notification, `consent
/// forget`, another process of the fleet) takes the cached access token with it: a running
/// provider does not hand out the deleted user's token from memory until it expires.
#[test]
fn a_deleted_refresh_token_takes_the_cached_access_token_with_it() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refresh-tokens.json");
    let store = Arc::new(marketplace_client::oauth::FileStore::new(&path));
    let scopes = ScopeSet::new([fake.scope("")]);
    let provider = consented_user(&fake, &clock, store, &scopes);
    provider.access_token().expect("the consent's access token");
    // Another process (another value on the same file) deletes the account's refresh token.
    marketplace_client::oauth::FileStore::new(&path)
        .remove("seller-1")
        .unwrap();
    clock.advance(Duration::from_secs(2));
    let error = provider.access_token().unwrap_err();
    assert!(
        matches!(&error, OAuthError::NoRefreshToken { account } if account == "seller-1"),
        "{error:?}"
    );
    assert!(provider.cached().is_none(), "the cached token is dropped");
    assert_eq!(fake.token_requests().len(), 1, "no refresh was tried");
}

/// A store whose `load` fails while `down` is set, counting the loads.
struct DownStore {
    inner: MemoryStore,
    down: std::sync::atomic::AtomicBool,
    loads: AtomicUsize,
}

impl RefreshTokenStore for DownStore {
    fn load(
        &self,
        account: &str,
    ) -> Result<Option<marketplace_client::oauth::StoredRefreshToken>, OAuthError> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        if self.down.load(Ordering::SeqCst) {
            return Err(OAuthError::Store(
                marketplace_client::oauth::StoreError::unavailable(
                    "flaky",
                    "load a refresh token from",
                    std::io::Error::other("down"),
                ),
            ));
        }
        self.inner.load(account)
    }
    fn save(
        &self,
        account: &str,
        token: &marketplace_client::oauth::StoredRefreshToken,
    ) -> Result<(), OAuthError> {
        self.inner.save(account, token)
    }
    fn remove(&self, account: &str) -> Result<(), OAuthError> {
        self.inner.remove(account)
    }
}

/// A store that cannot be reached leaves the cached token in use, and is asked again once a
/// recheck interval has passed, not at every call while it is down.
#[test]
fn a_store_that_is_down_is_not_asked_at_every_call() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let store = Arc::new(DownStore {
        inner: MemoryStore::new(),
        down: false.into(),
        loads: AtomicUsize::new(0),
    });
    let provider = consented_user(
        &fake,
        &clock,
        store.clone(),
        &ScopeSet::new([fake.scope("")]),
    );
    let token = provider.access_token().unwrap();
    store.down.store(true, Ordering::SeqCst);
    clock.advance(Duration::from_secs(2));
    let before = store.loads.load(Ordering::SeqCst);
    for _ in 0..20 {
        assert_eq!(
            provider.access_token().unwrap(),
            token,
            "the cached token, kept"
        );
    }
    assert_eq!(
        store.loads.load(Ordering::SeqCst) - before,
        1,
        "one load, not twenty"
    );
}

#[test]
fn user_token_refresh_can_ask_for_a_subset() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let store = Arc::new(MemoryStore::new());
    let scopes = ScopeSet::new([fake.scope(""), fake.scope("/sell.inventory")]);
    consented_user(&fake, &clock, store.clone(), &scopes);
    let subset = ScopeSet::new([fake.scope("/sell.inventory")]);
    let provider = UserTokenProvider::new(client(&fake), store, "seller-1")
        .with_clock(clock.clone())
        .with_scopes(subset.clone());
    let token = provider.access_token().unwrap();
    assert_eq!(
        fake.issued_token(token.secret()).unwrap().scopes,
        vec![fake.scope("/sell.inventory")]
    );
    assert_eq!(
        fake.token_requests()[1].form().unwrap()[2].1,
        subset.to_space_separated()
    );
}

#[test]
fn rotated_refresh_tokens_are_kept() {
    let fake = FakeMarketplace::start(FakeConfig {
        rotate_refresh_tokens: true,
        ..FakeConfig::default()
    })
    .unwrap();
    let clock = clock();
    let store = Arc::new(MemoryStore::new());
    let provider = consented_user(
        &fake,
        &clock,
        store.clone(),
        &ScopeSet::new([fake.scope("")]),
    );
    let before = store.load("seller-1").unwrap().unwrap().refresh_token;
    clock.advance(Duration::from_secs(7200));
    provider.access_token().unwrap();
    let after = store.load("seller-1").unwrap().unwrap().refresh_token;
    assert_ne!(before, after);
    assert_eq!(fake.live_refresh_tokens(), vec![after.secret().to_owned()]);
    // And the rotated token works for the next refresh.
    clock.advance(Duration::from_secs(7200));
    provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 3);
}

#[test]
fn revoked_consent_and_missing_tokens_say_to_run_consent() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let store = Arc::new(MemoryStore::new());
    let provider = consented_user(
        &fake,
        &clock,
        store.clone(),
        &ScopeSet::new([fake.scope("")]),
    );
    fake.revoke_refresh_tokens();
    clock.advance(Duration::from_secs(7300));
    let err = provider.access_token().unwrap_err();
    assert_eq!(err.code(), Some(&OAuthErrorCode::InvalidGrant));
    assert!(err.to_string().contains("consent"), "{err}");

    let nobody = UserTokenProvider::new(client(&fake), store.clone(), "nobody");
    let err = nobody.access_token().unwrap_err();
    assert!(matches!(err, OAuthError::NoRefreshToken { .. }));
    assert!(
        err.to_string().contains("needs the seller's consent"),
        "{err}"
    );
    assert_eq!(err.account_needing_consent(), Some("nobody"));

    // An expired stored refresh token is not sent at all.
    let mut record = store.load("seller-1").unwrap().unwrap();
    record.expires_at = Some(SystemTime::now() - Duration::from_secs(1));
    store.save("expired", &record).unwrap();
    let before = fake.token_requests().len();
    let err = UserTokenProvider::new(client(&fake), store, "expired")
        .access_token()
        .unwrap_err();
    assert!(matches!(err, OAuthError::RefreshTokenExpired { .. }));
    assert_eq!(fake.token_requests().len(), before);
}

#[test]
fn absurd_lifetimes_from_the_server_do_not_panic() {
    let fake = FakeMarketplace::new();
    fake.route("POST", TOKEN_PATH, |_, _| {
        fake_marketplace::Response::json(
            200,
            &serde_json::json!({
                "access_token": "v^1.1#forever",
                "expires_in": u64::MAX,
                "token_type": "Application Access Token",
            }),
        )
    });
    let clock = Arc::new(ManualClock::new(SystemTime::now()));
    let provider = app_provider(&fake, &clock);
    let token = provider.access_token().unwrap();
    assert_eq!(token.secret(), "v^1.1#forever");
    // Capped at ten years: still cached a year later, one request in all.
    clock.advance(Duration::from_secs(365 * 86_400));
    provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 1);

    // A 429 with an absurd Retry-After on a renewal is capped too.
    let fake = FakeMarketplace::new();
    let clock = Arc::new(ManualClock::new(SystemTime::now()));
    let provider = app_provider(&fake, &clock);
    provider.access_token().unwrap();
    clock.advance(Duration::from_secs(7200 - 60));
    fake.fail_next(
        TOKEN_PATH,
        Fault::TooManyRequests {
            retry_after_secs: u64::MAX,
        },
    );
    // The old token is still valid: it is handed out and the failure reported.
    assert!(provider.access_token().is_ok());
}

/// A store whose saves can be made to fail (a full disk, a read-only volume).
struct FlakyStore {
    inner: MemoryStore,
    fail_saves: std::sync::atomic::AtomicBool,
}

impl RefreshTokenStore for FlakyStore {
    fn load(
        &self,
        account: &str,
    ) -> Result<Option<marketplace_client::oauth::StoredRefreshToken>, OAuthError> {
        self.inner.load(account)
    }
    fn save(
        &self,
        account: &str,
        token: &marketplace_client::oauth::StoredRefreshToken,
    ) -> Result<(), OAuthError> {
        if self.fail_saves.load(Ordering::SeqCst) {
            return Err(OAuthError::Store(
                marketplace_client::oauth::StoreError::unavailable(
                    "/full-disk/tokens.json",
                    "write",
                    std::io::Error::other("no space left on device"),
                ),
            ));
        }
        self.inner.save(account, token)
    }
    fn remove(&self, account: &str) -> Result<(), OAuthError> {
        self.inner.remove(account)
    }
}

#[test]
fn a_rotated_refresh_token_that_cannot_be_saved_is_not_lost() {
    let fake = FakeMarketplace::start(FakeConfig {
        rotate_refresh_tokens: true,
        ..FakeConfig::default()
    })
    .unwrap();
    let clock = clock();
    let store = Arc::new(FlakyStore {
        inner: MemoryStore::new(),
        fail_saves: false.into(),
    });
    let provider = consented_user(
        &fake,
        &clock,
        store.clone(),
        &ScopeSet::new([fake.scope("")]),
    );
    store.fail_saves.store(true, Ordering::SeqCst);
    clock.advance(Duration::from_secs(7200));
    // The refresh works and the save failure is reported, not fatal.
    provider.access_token().unwrap();
    assert!(matches!(provider.last_error(), Some(OAuthError::Store(_))));
    // The old refresh token is dead now; the rotated one, kept in memory, still works…
    clock.advance(Duration::from_secs(7200));
    provider.access_token().unwrap();
    // …and is saved as soon as the store works again.
    store.fail_saves.store(false, Ordering::SeqCst);
    clock.advance(Duration::from_secs(7200));
    provider.access_token().unwrap();
    let stored = store.load("seller-1").unwrap().unwrap().refresh_token;
    assert_eq!(fake.live_refresh_tokens(), vec![stored.secret().to_owned()]);
}

/// Waits until the fake has received `n` token requests: a request is recorded before a
/// `Fault::Delay` holds its answer, so the caller knows that flight is under way.
fn wait_for_token_requests(fake: &FakeMarketplace, n: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while fake.token_requests().len() < n {
        assert!(
            std::time::Instant::now() < deadline,
            "the fake did not receive token request {n}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Consents again, for `scopes`, on `provider`: the new refresh token and access token.
fn consent_again(
    fake: &FakeMarketplace,
    provider: &UserTokenProvider,
    scopes: &ScopeSet,
) -> marketplace_client::oauth::StoredRefreshToken {
    let consent = client(fake).consent_request(scopes).unwrap();
    let code = consent.complete(&consent_redirect(fake, &consent)).unwrap();
    provider.exchange_code(&code, consent.scopes()).unwrap()
}

#[test]
fn a_new_consent_is_not_overwritten_by_an_older_refresh_in_flight() {
    let fake = FakeMarketplace::start(FakeConfig {
        rotate_refresh_tokens: true,
        ..FakeConfig::default()
    })
    .unwrap();
    let clock = clock();
    let store = Arc::new(MemoryStore::new());
    let provider = Arc::new(consented_user(
        &fake,
        &clock,
        store.clone(),
        &ScopeSet::new([fake.scope("")]),
    ));
    clock.advance(Duration::from_secs(7200));

    // A refresh with the first consent's token, held by the server (3 s: long enough for
    // the consent below on a busy machine)…
    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_secs(3)));
    let refreshing = {
        let provider = provider.clone();
        std::thread::spawn(move || provider.access_token())
    };
    wait_for_token_requests(&fake, 2);
    // …while the seller consents to more scopes.
    let more = ScopeSet::new([fake.scope(""), fake.scope("/sell.inventory")]);
    let consent = consent_again(&fake, &provider, &more);
    let new_token = provider.cached().unwrap().access_token;
    assert_eq!(
        fake.issued_token(new_token.secret()).unwrap().scopes.len(),
        2
    );

    // The refresh lands: its caller gets the newer token, and nothing of the old grant
    // replaces the new consent, in the cache or in the store.
    let from_refresh = refreshing.join().unwrap().unwrap();
    assert_eq!(fake.token_requests().len(), 3);
    assert_eq!(
        from_refresh, new_token,
        "the older flight's token was handed out"
    );
    assert_eq!(provider.access_token().unwrap(), new_token);
    assert_eq!(provider.cached().unwrap().access_token, new_token);
    let stored = store.load("seller-1").unwrap().unwrap();
    assert_eq!(
        stored.refresh_token, consent.refresh_token,
        "the rotated token of the old grant overwrote the new consent"
    );
    assert_eq!(stored.scopes, more);
    assert!(
        fake.live_refresh_tokens()
            .contains(&stored.refresh_token.secret().to_owned())
    );
    assert!(provider.unsaved_refresh_token().is_none());
    assert!(provider.last_error().is_none());

    // And the next refresh uses the new consent.
    clock.advance(Duration::from_secs(7200));
    let next = provider.access_token().unwrap();
    assert_eq!(fake.issued_token(next.secret()).unwrap().scopes.len(), 2);
}

#[test]
fn a_refresh_that_starts_during_a_consent_does_not_undo_it() {
    let fake = FakeMarketplace::start(FakeConfig {
        rotate_refresh_tokens: true,
        ..FakeConfig::default()
    })
    .unwrap();
    let clock = clock();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(marketplace_client::oauth::FileStore::new(
        dir.path().join("tokens.json"),
    ));
    let provider = Arc::new(consented_user(
        &fake,
        &clock,
        store.clone(),
        &ScopeSet::new([fake.scope("")]),
    ));
    clock.advance(Duration::from_secs(7200));

    // The code exchange of a new consent, held 1 s by the server…
    let more = ScopeSet::new([fake.scope(""), fake.scope("/sell.account")]);
    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_secs(1)));
    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_secs(3)));
    let consenting = {
        let provider = provider.clone();
        let consent = client(&fake).consent_request(&more).unwrap();
        let code = consent
            .complete(&consent_redirect(&fake, &consent))
            .unwrap();
        std::thread::spawn(move || provider.exchange_code(&code, consent.scopes()))
    };
    wait_for_token_requests(&fake, 2);
    // …and a refresh that starts meanwhile from the old refresh token, held 3 s: it lands
    // after the consent.
    let refreshed = provider.access_token().unwrap();
    let consent = consenting.join().unwrap().unwrap();
    assert_eq!(fake.token_requests().len(), 3);

    let new_token = provider.cached().unwrap().access_token;
    assert_eq!(refreshed, new_token);
    assert_eq!(
        fake.issued_token(new_token.secret()).unwrap().scopes.len(),
        2
    );
    let stored = store.load("seller-1").unwrap().unwrap();
    assert_eq!(stored.refresh_token, consent.refresh_token);
    assert_eq!(stored.scopes, more);
}

#[test]
fn stepping_the_wall_clock_back_does_not_extend_a_back_off() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = app_provider(&fake, &clock);
    fake.fail_next(TOKEN_PATH, unavailable());
    assert!(provider.access_token().is_err());
    // The wall clock is stepped an hour back (NTP, an administrator, a resumed VM).
    clock.set(clock.now() - Duration::from_secs(3600));
    assert!(
        provider.access_token().is_err(),
        "still within the back-off"
    );
    assert_eq!(fake.token_requests().len(), 1);
    // The 30 s back-off ends 30 s later all the same, not an hour and 30 s later.
    clock.advance(DEFAULT_RETRY_BACKOFF);
    provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 2);
}

#[test]
fn stepping_the_wall_clock_moves_no_token_deadline() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = app_provider(&fake, &clock);
    let first = provider.access_token().unwrap();

    // A day forward on the wall: the token has not aged, it is not renewed.
    clock.set(clock.now() + Duration::from_secs(86_400));
    assert_eq!(provider.access_token().unwrap(), first);
    assert_eq!(fake.token_requests().len(), 1);

    // Two days back (a day behind where it started): renewed on time all the same, 5 minutes
    // before its expiry by the time that passed.
    clock.set(clock.now() - Duration::from_secs(2 * 86_400));
    clock.advance(Duration::from_secs(7200 - 301));
    assert_eq!(provider.access_token().unwrap(), first);
    clock.advance(Duration::from_secs(2));
    let second = provider.access_token().unwrap();
    assert_ne!(second, first, "renewed when 5 minutes were left");
    assert_eq!(fake.token_requests().len(), 2);

    // While every renewal fails, the token is handed out until it expires, and not after.
    fake.fail_times(TOKEN_PATH, unavailable(), 100);
    clock.advance(Duration::from_secs(7200 - 10));
    assert_eq!(provider.access_token().unwrap(), second, "still valid");
    clock.advance(Duration::from_secs(11));
    assert!(
        matches!(
            provider.access_token(),
            Err(OAuthError::BackingOff { error, .. }) if matches!(*error, OAuthError::Http { status: 503, .. })
        ),
        "an expired token was handed out"
    );
    let cached = provider.cached(&ScopeSet::default()).unwrap();
    assert!(cached.expires_at < clock.now());
    fake.clear_faults();
}

/// During the back-off after a failure, the answer says it is the cached failure, how old it
/// is and when the next attempt comes; `retry_now` asks the server at once (a start-up race
/// need not be a 30 s outage).
#[test]
fn a_cached_failure_says_so_and_retry_now_asks_again() {
    let fake = FakeMarketplace::new();
    let clock = clock();
    let provider = app_provider(&fake, &clock);
    fake.fail_next(TOKEN_PATH, unavailable());
    let fresh = provider.access_token().unwrap_err();
    assert!(matches!(fresh, OAuthError::Http { status: 503, .. }));
    assert!(!fresh.to_string().contains("last attempt"), "{fresh}");

    clock.advance(Duration::from_secs(2));
    let cached = provider.access_token().unwrap_err();
    let text = cached.to_string();
    assert!(text.starts_with(&fresh.to_string()), "{text}");
    assert!(
        text.contains("the last attempt failed 2 s ago; next attempt in 28 s"),
        "{text}"
    );
    assert_eq!(fake.token_requests().len(), 1);
    let OAuthError::BackingOff {
        error,
        failed_ago,
        retry_in,
    } = &cached
    else {
        panic!("{cached:?}")
    };
    assert!(matches!(**error, OAuthError::Http { status: 503, .. }));
    assert_eq!(
        (*failed_ago, *retry_in),
        (Duration::from_secs(2), Duration::from_secs(28))
    );
    assert_eq!(cached.status(), Some(503));
    assert!(cached.is_transient());

    // The caller knows the service is up now: no need to wait 28 s.
    let source: &dyn AccessTokenSource = &provider;
    source.retry_now();
    provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 2);
}

#[test]
fn a_revoked_refresh_token_names_the_account_and_marks_it_as_needing_consent() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(marketplace_client::oauth::FileStore::new(
        dir.path().join("tokens.json"),
    ));
    let fake = FakeMarketplace::new();
    let clock = clock();
    let scopes = ScopeSet::new([fake.scope("")]);
    let provider = consented_user(&fake, &clock, store.clone(), &scopes);
    assert!(!store.needs_consent("seller-1").unwrap());

    fake.revoke_refresh_tokens();
    clock.advance(Duration::from_secs(7300));
    let err = provider.access_token().unwrap_err();
    assert!(
        matches!(&err, OAuthError::ConsentRevoked { account, .. } if account == "seller-1"),
        "{err:?}"
    );
    assert_eq!(err.code(), Some(&OAuthErrorCode::InvalidGrant));
    let message = err.to_string();
    assert!(message.contains("\"seller-1\""), "{message}");
    assert_eq!(err.account_needing_consent(), Some("seller-1"), "{message}");
    assert!(store.needs_consent("seller-1").unwrap());

    // A new consent clears the mark.
    let again = consented_user(&fake, &clock, store.clone(), &scopes);
    assert!(!store.needs_consent("seller-1").unwrap());
    clock.advance(Duration::from_secs(7300));
    again.access_token().unwrap();
}

/// Against a closed port (a dependency still starting): the first call is the refused
/// connection; the second answers that failure again without a request, and says so; once
/// something listens there, the provider still waits out its back-off (the fake started on
/// that port sees no request) until `retry_now()`, reached through the `AccessTokenSource`
/// the caller holds, makes the next call ask at once.
#[test]
fn a_refused_connection_is_cached_says_so_and_retry_now_asks_again() {
    let port = closed_port();
    let provider: Arc<dyn AccessTokenSource> =
        Arc::new(ApplicationTokenProvider::new(client_for_port(port)));
    let refused = provider.access_token().unwrap_err();
    assert!(
        matches!(refused, OAuthError::Transport { .. }),
        "{refused:?}"
    );
    assert!(!refused.to_string().contains("cached"), "{refused}");

    let cached = provider.access_token().unwrap_err();
    let text = cached.to_string();
    assert!(text.starts_with(&refused.to_string()), "{text}");
    assert!(
        text.contains("a cached failure: the last attempt failed"),
        "{text}"
    );
    assert!(text.contains("next attempt in"), "{text}");
    assert!(text.contains("retry_now()"), "{text}");
    // The original error stays reachable, typed.
    let OAuthError::BackingOff { error, .. } = &cached else {
        panic!("{cached:?}")
    };
    assert!(matches!(**error, OAuthError::Transport { .. }), "{error:?}");
    assert!(cached.is_transient());

    let fake = FakeMarketplace::start_on(port, FakeConfig::default()).unwrap();
    let still = provider.access_token().unwrap_err();
    assert!(matches!(still, OAuthError::BackingOff { .. }), "{still:?}");
    assert_eq!(
        fake.token_requests().len(),
        0,
        "no request during the back-off"
    );

    provider.retry_now();
    provider.access_token().unwrap();
    assert_eq!(fake.token_requests().len(), 1);
}

/// The library's errors say what is wrong, never which command to run: a web backend's log
/// and HTTP answer would otherwise tell its users to `cargo run` a tool they do not have. The
/// commands add their own advice (`consent --account …`).
#[test]
fn no_library_error_text_gives_command_line_advice() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut libraries = vec![
        root.join("taxonomy-data/src"),
        root.join("taxonomy-macros/src"),
    ];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.file_name().is_some_and(|n| n != "examples") {
            libraries.push(dir.join("src"));
        }
    }
    let mut found = Vec::new();
    let mut files = 0;
    while let Some(dir) = libraries.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                libraries.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            files += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if !code.starts_with("//") && code.contains("cargo run") {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, code));
                }
            }
        }
    }
    assert!(
        files > 100,
        "the libraries' sources were read ({files} files)"
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
    // And as an error reads, for each kind that names an account needing consent.
    for error in [
        OAuthError::NoRefreshToken {
            account: "seller-de".into(),
        },
        OAuthError::RefreshTokenExpired {
            account: "seller-de".into(),
        },
    ] {
        let text = error.to_string();
        assert!(
            !text.contains("cargo run") && text.contains("seller-de"),
            "{text}"
        );
        assert_eq!(error.account_needing_consent(), Some("seller-de"));
    }
}
