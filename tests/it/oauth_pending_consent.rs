//! Pending consents: a consent started by one process and completed by another, through the
//! stores that keep them (the file store, the memory store) and through a caller's own record
//! (`ConsentRequest::restore`), on both fronts, against the fake's consent page.

use crate::oauth_support as support;

use std::os::unix::fs::PermissionsExt as _;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fake_marketplace::{ConsentBehavior, FakeConfig, FakeMarketplace};
use marketplace_client::oauth::{
    AccessTokenSource as _, ConsentRequest, CsrfState, FileStore, MemoryStore, OAuthError,
    OAuthErrorCode, RefreshTokenStore, ScopeSet, StoredRefreshToken, UserTokenProvider,
};
use support::*;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_consent_saved_by_one_process_completes_in_another_once() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refresh-tokens.json");
    // Two processes: each its own client and its own view of the same files.
    let (client_a, store_a) = (client(&fake), FileStore::new(&path));
    let (client_b, store_b) = (Arc::new(client(&fake)), Arc::new(FileStore::new(&path)));

    let scopes = ScopeSet::new([fake.scope("/sell.inventory")]);
    let request = client_a
        .consent_request(&scopes)
        .unwrap()
        .with_account("seller-1");
    store_a.save_consent(&request).unwrap();
    let consents = dir.path().join("refresh-tokens.consents.json");
    assert_eq!(mode(&consents), 0o600, "owner-only, like the tokens file");
    assert_eq!(
        mode(&dir.path().join("refresh-tokens.consents.json.lock")),
        0o600
    );
    let redirect = consent_redirect(&fake, &request);

    let (pending, code) = client_b.complete_consent(&store_b, &redirect).unwrap();
    assert_eq!(pending.account(), Some("seller-1"));
    assert_eq!(pending.scopes(), &scopes);
    assert_eq!(pending.state(), request.state());
    let text = std::fs::read_to_string(&consents).unwrap();
    assert!(
        !text.contains(request.state().secret()),
        "taken out of the file: {text}"
    );

    // The redirect again, to either process: refused, whatever the store holds.
    for (client, store) in [(&client_a, &store_a), (&*client_b, &*store_b)] {
        let replay = client.complete_consent(store, &redirect);
        assert!(
            matches!(replay, Err(OAuthError::ConsentNotPending)),
            "{replay:?}"
        );
    }

    // The code of the completed consent is good for its account.
    let provider = UserTokenProvider::new(client_b.clone(), store_b.clone(), "seller-1");
    provider.exchange_code(&code, pending.scopes()).unwrap();
    assert!(store_b.load("seller-1").unwrap().is_some());
    provider.access_token().unwrap();
}

#[test]
fn an_expired_consent_is_refused_and_used_up() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().join("tokens.json"));
    let client = client(&fake);
    let request = client
        .consent_request(&ScopeSet::new([fake.scope("")]))
        .unwrap()
        .with_ttl(Duration::ZERO);
    assert!(request.is_expired(SystemTime::now()));
    store.save_consent(&request).unwrap();
    let redirect = consent_redirect(&fake, &request);
    let expired = client.complete_consent(&store, &redirect);
    assert!(
        matches!(expired, Err(OAuthError::ConsentExpired { .. })),
        "{expired:?}"
    );
    assert!(
        expired
            .unwrap_err()
            .to_string()
            .contains("start the consent flow again")
    );
    assert!(matches!(
        client.complete_consent(&store, &redirect),
        Err(OAuthError::ConsentNotPending)
    ));

    // The default lifetime: 10 minutes.
    let fresh = client
        .consent_request(&ScopeSet::new([fake.scope("")]))
        .unwrap();
    let left = fresh
        .expires_at()
        .duration_since(SystemTime::now())
        .unwrap();
    assert!(left > Duration::from_secs(590) && left <= ConsentRequest::DEFAULT_TTL);
}

#[test]
fn a_forged_or_missing_state_takes_nothing() {
    let fake = FakeMarketplace::new();
    let store = MemoryStore::new();
    let client = client(&fake);
    let request = client
        .consent_request(&ScopeSet::new([fake.scope("")]))
        .unwrap();
    store.save_consent(&request).unwrap();
    let forged = client.complete_consent(&store, "?state=not-the-state&code=abc");
    assert!(
        matches!(forged, Err(OAuthError::ConsentNotPending)),
        "{forged:?}"
    );
    let missing = client.complete_consent(&store, "?code=abc");
    assert!(
        matches!(missing, Err(OAuthError::StateMismatch)),
        "{missing:?}"
    );
    // The genuine redirect still completes.
    let redirect = consent_redirect(&fake, &request);
    client.complete_consent(&store, &redirect).unwrap();
}

#[test]
fn a_refusal_is_reported_and_uses_the_consent() {
    let fake = FakeMarketplace::start(FakeConfig {
        consent: ConsentBehavior::Deny,
        ..FakeConfig::default()
    })
    .unwrap();
    let store = MemoryStore::new();
    let client = client(&fake);
    let request = client
        .consent_request(&ScopeSet::new([fake.scope("")]))
        .unwrap();
    store.save_consent(&request).unwrap();
    let redirect = consent_redirect(&fake, &request);
    match client.complete_consent(&store, &redirect) {
        Err(OAuthError::ConsentDenied { code, scopes, .. }) => {
            assert_eq!(code, OAuthErrorCode::Other("access_denied".into()));
            assert_eq!(scopes.as_ref(), Some(request.scopes()));
        }
        other => panic!("expected ConsentDenied, got {other:?}"),
    }
    assert!(matches!(
        client.complete_consent(&store, &redirect),
        Err(OAuthError::ConsentNotPending)
    ));
}

#[test]
fn a_caller_keeps_the_consent_itself_and_restores_it() {
    let fake = FakeMarketplace::new();
    let client = client(&fake);
    let request = client
        .consent_request(&ScopeSet::new([fake.scope("/sell.account")]))
        .unwrap()
        .with_locale("de-DE")
        .with_account("seller-9")
        .with_ttl(Duration::from_secs(60));
    // What the caller stores: three fields.
    let saved = (
        request.url().as_str().to_owned(),
        request.account().map(str::to_owned),
        request.expires_at(),
    );
    let restored = ConsentRequest::restore(&saved.0, saved.1.as_deref(), saved.2).unwrap();
    assert_eq!(restored.url(), request.url());
    assert_eq!(restored.state(), request.state());
    assert_eq!(restored.scopes(), request.scopes());
    assert_eq!(restored.account(), Some("seller-9"));
    assert_eq!(restored.expires_at(), request.expires_at());
    let redirect = consent_redirect(&fake, &restored);
    assert!(restored.complete(&redirect).is_ok());

    // Its Debug shows no state.
    let shown = format!("{restored:?}");
    assert!(!shown.contains(request.state().secret()), "{shown}");

    // A record that is no consent request is a store error, never a panic.
    let no_state = request.url().as_str().replace("state=", "other=");
    for bad in ["", "not a url", &no_state] {
        let err = ConsentRequest::restore(bad, None, SystemTime::now()).unwrap_err();
        match &err {
            OAuthError::Store(e) => assert!(e.is_corrupt(), "{e}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

/// A store of the caller's that keeps no pending consents.
struct TokensOnly;

impl RefreshTokenStore for TokensOnly {
    fn load(&self, _: &str) -> Result<Option<StoredRefreshToken>, OAuthError> {
        Ok(None)
    }
    fn save(&self, _: &str, _: &StoredRefreshToken) -> Result<(), OAuthError> {
        Ok(())
    }
    fn remove(&self, _: &str) -> Result<(), OAuthError> {
        Ok(())
    }
}

#[test]
fn a_store_without_pending_consents_says_so() {
    let fake = FakeMarketplace::new();
    let client = client(&fake);
    let request = client
        .consent_request(&ScopeSet::new([fake.scope("")]))
        .unwrap();
    let err = TokensOnly.save_consent(&request).unwrap_err();
    assert!(
        err.to_string().contains("keeps no pending consents"),
        "{err}"
    );
    let err = TokensOnly.take_consent(&CsrfState::new("s-1")).unwrap_err();
    assert!(matches!(err, OAuthError::Store(_)), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_front_completes_a_consent_of_the_file_store() {
    use marketplace_client::aio::oauth::{
        AccessTokenSource as _, OAuthClient, RefreshTokenStore as AsyncStore, UserTokenProvider,
    };
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let client_a = OAuthClient::from_config(&oauth_config(&fake)).unwrap();
    let client_b = Arc::new(OAuthClient::from_config(&oauth_config(&fake)).unwrap());
    let store_b = Arc::new(FileStore::new(&path));
    let request = client_a
        .consent_request(&ScopeSet::new([fake.scope("/sell.inventory")]))
        .unwrap()
        .with_account("seller-2");
    AsyncStore::save_consent(&FileStore::new(&path), &request)
        .await
        .unwrap();
    let url = request.url().as_str().to_owned();
    let redirect = tokio::task::spawn_blocking(move || visit_consent(&url))
        .await
        .unwrap();

    let (pending, code) = client_b
        .complete_consent(&*store_b, &redirect)
        .await
        .unwrap();
    assert_eq!(pending.account(), Some("seller-2"));
    let replay = client_b.complete_consent(&*store_b, &redirect).await;
    assert!(
        matches!(replay, Err(OAuthError::ConsentNotPending)),
        "{replay:?}"
    );
    let provider = UserTokenProvider::new(client_b.clone(), store_b, "seller-2");
    provider
        .exchange_code(&code, pending.scopes())
        .await
        .unwrap();
    provider.access_token().await.unwrap();
}

/// Saves a flood of consent requests through `save` (a store's `save_consent`): three times
/// [`ConsentRequest::MAX_PENDING_PER_ACCOUNT`] for `seller-1`, then
/// [`ConsentRequest::MAX_PENDING`] for as many other accounts. Returns them in order.
fn flood(
    client: &marketplace_client::oauth::OAuthClient,
    save: impl Fn(&ConsentRequest),
) -> (Vec<ConsentRequest>, Vec<ConsentRequest>) {
    let scopes = ScopeSet::new(["https://api.ebay.com/oauth/api_scope/sell.inventory"]);
    let one: Vec<ConsentRequest> = (0..3 * ConsentRequest::MAX_PENDING_PER_ACCOUNT)
        .map(|_| {
            let request = client
                .consent_request(&scopes)
                .unwrap()
                .with_account("seller-1");
            save(&request);
            request
        })
        .collect();
    let many: Vec<ConsentRequest> = (0..ConsentRequest::MAX_PENDING)
        .map(|i| {
            let request = client
                .consent_request(&scopes)
                .unwrap()
                .with_account(format!("flooder-{i}"));
            save(&request);
            request
        })
        .collect();
    (one, many)
}

/// Whether `store` still holds `request` (taking it).
fn still_pending(store: &dyn RefreshTokenStore, request: &ConsentRequest) -> bool {
    store.take_consent(request.state()).unwrap().is_some()
}

#[test]
fn a_flood_of_consents_keeps_the_memory_store_bounded() {
    let fake = FakeMarketplace::new();
    let client = client(&fake);
    let store = MemoryStore::new();
    let scopes = ScopeSet::new([fake.scope("")]);
    // One account: only its newest requests stay.
    let mine: Vec<ConsentRequest> = (0..3 * ConsentRequest::MAX_PENDING_PER_ACCOUNT)
        .map(|_| {
            let request = client
                .consent_request(&scopes)
                .unwrap()
                .with_account("seller-1");
            store.save_consent(&request).unwrap();
            request
        })
        .collect();
    let kept = mine.iter().filter(|r| still_pending(&store, r)).count();
    assert_eq!(kept, ConsentRequest::MAX_PENDING_PER_ACCOUNT, "per account");

    let (one, many) = flood(&client, |r| store.save_consent(r).unwrap());
    // In all: the oldest dropped (seller-1's first), every later one kept.
    let kept_one = one.iter().filter(|r| still_pending(&store, r)).count();
    let kept_many = many.iter().filter(|r| still_pending(&store, r)).count();
    assert_eq!(
        (kept_one, kept_many),
        (0, ConsentRequest::MAX_PENDING),
        "in all"
    );
}

#[test]
fn a_flood_of_consents_keeps_the_file_store_bounded() {
    let fake = FakeMarketplace::new();
    let client = client(&fake);
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().join("refresh-tokens.json"));
    let consents = dir.path().join("refresh-tokens.consents.json");
    let records = || {
        let text = std::fs::read_to_string(&consents).unwrap();
        let body: serde_json::Value = serde_json::from_str(&text).unwrap();
        body["consents"].as_array().unwrap().len()
    };
    let (one, many) = flood(&client, |r| store.save_consent(r).unwrap());
    assert_eq!(records(), ConsentRequest::MAX_PENDING, "in all");
    // The oldest were dropped: seller-1's, then none of the others.
    assert!(!still_pending(&store, one.last().unwrap()));
    assert!(still_pending(&store, &many[0]));
    assert!(still_pending(&store, many.last().unwrap()));

    // One account: only its newest requests stay.
    let store = FileStore::new(dir.path().join("other.json"));
    let scopes = ScopeSet::new([fake.scope("")]);
    let mine: Vec<ConsentRequest> = (0..3 * ConsentRequest::MAX_PENDING_PER_ACCOUNT)
        .map(|_| {
            let request = client
                .consent_request(&scopes)
                .unwrap()
                .with_account("seller-1");
            store.save_consent(&request).unwrap();
            request
        })
        .collect();
    let (dropped, kept) = mine.split_at(mine.len() - ConsentRequest::MAX_PENDING_PER_ACCOUNT);
    assert!(
        dropped.iter().all(|r| !still_pending(&store, r)),
        "per account"
    );
    assert!(kept.iter().all(|r| still_pending(&store, r)));
}
