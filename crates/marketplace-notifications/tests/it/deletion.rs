//! The seller's data deleted: two sellers consent against the fake (their eBay users recorded
//! with getUser), an account deletion notification for one removes that seller's refresh
//! token from the file store and nothing of the other's; a retry calls the callback once; a
//! tampered one deletes nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use fake_marketplace::{AccountDeletionNotice, FakeMarketplace, FakeUser};
use marketplace_client::aio::api::{ApiClient, ClientConfig};
use marketplace_client::aio::oauth::{
    ApplicationTokenProvider, Endpoints, FileStore, OAuthClient, OAuthConfig, RefreshTokenStore,
    ScopeSet, UserTokenProvider,
};
use marketplace_notifications::{
    AccountUsers, NotificationEndpoint, PublicKeyCache, VerificationToken, get_user,
};

const TOKEN: &str = "Loopback_verification-token_0123456789abcdef";
const URL: &str = "https://seller.example/ebay/notifications";

fn oauth(fake: &FakeMarketplace) -> Arc<OAuthClient> {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    Arc::new(
        OAuthClient::from_config(
            &OAuthConfig::new(endpoints)
                .with_credentials(fake.client_id(), fake.client_secret())
                .with_redirect_uri("Test_App-TestApp-SBX-abcdef"),
        )
        .unwrap(),
    )
}

/// The consent flow for `account` as eBay user `user`, then getUser recorded.
async fn consent(
    fake: &FakeMarketplace,
    store: &Arc<FileStore>,
    users: &AccountUsers,
    account: &str,
    user: FakeUser,
) {
    fake.set_user(user);
    let client = oauth(fake);
    // getUser needs the Identity API's scope.
    let scopes = ScopeSet::new([
        fake.scope("/sell.inventory"),
        fake.scope("/commerce.identity.readonly"),
    ]);
    let request = client.consent_request(&scopes).unwrap();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = browser.get(request.url().as_str()).send().await.unwrap();
    let landed = page.headers()["location"].to_str().unwrap().to_owned();
    let code = request.complete(&landed).unwrap();
    let provider = Arc::new(UserTokenProvider::new(client, store.clone(), account));
    provider
        .exchange_code(&code, request.scopes())
        .await
        .unwrap();
    let api = ApiClient::new(
        ClientConfig::for_base_url(&fake.base_url()).unwrap(),
        provider,
    )
    .unwrap();
    users
        .record(account, get_user(&api).await.unwrap())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_removes_the_sellers_refresh_token_once_and_a_forgery_nothing() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FileStore::new(dir.path().join("tokens.json")));
    let users = AccountUsers::new(dir.path().join("account-users.json"));
    let alice = FakeUser {
        user_id: "aliceUserId01".into(),
        username: "alice_sells".into(),
    };
    let bob = FakeUser {
        user_id: "bobUserId0002".into(),
        username: "bob_sells".into(),
    };
    consent(&fake, &store, &users, "seller-a", alice.clone()).await;
    consent(&fake, &store, &users, "seller-b", bob.clone()).await;
    let recorded = users.list().await.unwrap();
    assert_eq!(recorded["seller-a"].user_id, "aliceUserId01");
    assert_eq!(recorded["seller-b"].username, "bob_sells");

    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let app = Arc::new(ApplicationTokenProvider::new(
        OAuthClient::from_config(
            &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
        )
        .unwrap(),
    ));
    let keys = PublicKeyCache::new(
        ApiClient::new(ClientConfig::for_base_url(&fake.base_url()).unwrap(), app).unwrap(),
    );
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let endpoint =
        NotificationEndpoint::new(URL, VerificationToken::new(TOKEN).unwrap(), Arc::new(keys))
            .unwrap()
            .delete_tokens_of_deleted_users(users.clone(), store.clone())
            .on_notification(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                async { Ok::<(), std::io::Error>(()) }
            });
    let post = |body: String, header: String| {
        let endpoint = &endpoint;
        async move {
            endpoint
                .handle(
                    "POST",
                    None,
                    &[("X-EBAY-SIGNATURE", &header)],
                    body.as_bytes(),
                )
                .await
        }
    };

    // A tampered deletion of bob: 412, nothing deleted.
    let forged = AccountDeletionNotice::new(&fake, &bob);
    let mut forged_body = forged.body();
    let header = fake.signature_header(forged_body.as_bytes());
    forged_body = forged_body.replace("bob_sells", "bob_sellz");
    assert_eq!(post(forged_body, header).await.status, 412);
    assert!(
        RefreshTokenStore::load(&*store, "seller-b")
            .await
            .unwrap()
            .is_some()
    );

    // alice's deletion, then its retry.
    let notice = AccountDeletionNotice::new(&fake, &alice);
    for attempt in [notice.clone(), notice.retry()] {
        let body = attempt.body();
        let header = fake.signature_header(body.as_bytes());
        let answer = post(body, header).await;
        assert_eq!(answer.status, 204, "{}", answer.body_str());
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the callback runs once");
    assert!(
        RefreshTokenStore::load(&*store, "seller-a")
            .await
            .unwrap()
            .is_none(),
        "alice's refresh token is gone"
    );
    let file = std::fs::read_to_string(dir.path().join("tokens.json")).unwrap();
    assert!(!file.contains("seller-a"), "{file}");
    assert!(
        RefreshTokenStore::load(&*store, "seller-b")
            .await
            .unwrap()
            .is_some()
    );
    let left = users.list().await.unwrap();
    assert_eq!(left.keys().collect::<Vec<_>>(), ["seller-b"]);
}

/// The same from blocking code: the async endpoint (configured with the deletion of the
/// sellers' tokens) driven by `blocking::NotificationEndpoint::from_async`, from a plain
/// thread.
#[test]
fn from_blocking_code_a_deletion_removes_the_sellers_refresh_token_once() {
    use marketplace_notifications::blocking;

    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FileStore::new(dir.path().join("tokens.json")));
    let users = AccountUsers::new(dir.path().join("account-users.json"));
    let alice = FakeUser {
        user_id: "aliceUserId01".into(),
        username: "alice_sells".into(),
    };
    let bob = FakeUser {
        user_id: "bobUserId0002".into(),
        username: "bob_sells".into(),
    };
    // The consent flows are the async client's (a runtime of the test's, gone afterwards).
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            consent(&fake, &store, &users, "seller-a", alice.clone()).await;
            consent(&fake, &store, &users, "seller-b", bob.clone()).await;
        });

    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let app = Arc::new(ApplicationTokenProvider::new(
        OAuthClient::from_config(
            &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
        )
        .unwrap(),
    ));
    let keys = blocking::PublicKeyCache::new(PublicKeyCache::new(
        ApiClient::new(ClientConfig::for_base_url(&fake.base_url()).unwrap(), app).unwrap(),
    ))
    .unwrap();
    let configured = NotificationEndpoint::new(
        URL,
        VerificationToken::new(TOKEN).unwrap(),
        keys.as_async().clone(),
    )
    .unwrap()
    .delete_tokens_of_deleted_users(users.clone(), store.clone());
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let endpoint =
        blocking::NotificationEndpoint::from_async(configured, &keys).on_notification(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok::<(), std::io::Error>(())
        });

    let notice = AccountDeletionNotice::new(&fake, &alice);
    for attempt in [notice.clone(), notice.retry()] {
        let body = attempt.body();
        let header = fake.signature_header(body.as_bytes());
        let answer = endpoint.handle(
            "POST",
            None,
            &[("X-EBAY-SIGNATURE", &header)],
            body.as_bytes(),
        );
        assert_eq!(answer.status, 204, "{}", answer.body_str());
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the callback runs once");
    let file = std::fs::read_to_string(dir.path().join("tokens.json")).unwrap();
    assert!(
        !file.contains("seller-a"),
        "alice's refresh token is gone: {file}"
    );
    assert!(file.contains("seller-b"), "bob's is kept: {file}");
}

fn user(i: usize) -> marketplace_notifications::EbayUser {
    marketplace_notifications::EbayUser {
        user_id: format!("consentedUser{i:04}"),
        username: format!("seller_{i}"),
    }
}

/// Two runs of the `consent` command and the endpoint are three processes with a handle
/// each on the same file (three `AccountUsers` here): consents recorded by both while eBay's
/// deletions of unrelated users arrive lose no link and fail no write.
#[test]
fn consents_of_two_processes_and_unrelated_deletions_keep_every_link() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refresh-tokens.users.json");
    let first_consent = AccountUsers::new(&path);
    let second_consent = AccountUsers::new(&path);
    let endpoint_side = AccountUsers::new(&path);
    let consents = |users: &AccountUsers, from: usize| {
        (from..from + 100)
            .filter_map(|i| users.record_blocking(&format!("seller-{i}"), user(i)).err())
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    };
    let (first, second, removed) = std::thread::scope(|scope| {
        let first = scope.spawn(|| consents(&first_consent, 0));
        let second = scope.spawn(|| consents(&second_consent, 100));
        let deletions = scope.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let mut errors = Vec::new();
                for i in 0..188 {
                    match endpoint_side
                        .remove_user(&format!("unrelatedUser{i}"))
                        .await
                    {
                        Ok(gone) => assert!(gone.is_empty()),
                        Err(e) => errors.push(e.to_string()),
                    }
                }
                errors
            })
        });
        (
            first.join().unwrap(),
            second.join().unwrap(),
            deletions.join().unwrap(),
        )
    });
    let links = endpoint_side.list_blocking().unwrap().len();
    let errors = first.len() + second.len() + removed.len();
    assert_eq!(
        (links, errors),
        (200, 0),
        "links kept, write errors (the first: {:?})",
        first.iter().chain(&second).chain(&removed).next()
    );
}

/// A deletion of a user the file does not hold (most of eBay's) leaves the file unwritten.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_of_an_unrelated_user_does_not_rewrite_the_users_file() {
    use std::os::unix::fs::MetadataExt as _;

    let dir = tempfile::tempdir().unwrap();
    let users = AccountUsers::beside(&dir.path().join("refresh-tokens.json"));
    users.record("seller-1", user(1)).await.unwrap();
    let before = std::fs::metadata(users.path()).unwrap();
    let gone = users.remove_user("someoneElse").await.unwrap();
    assert!(gone.is_empty());
    let after = std::fs::metadata(users.path()).unwrap();
    assert_eq!(
        (before.ino(), before.mtime_nsec()),
        (after.ino(), after.mtime_nsec()),
        "the file was replaced"
    );
    assert!(users.forget_blocking("no-such-account").is_ok());
    assert_eq!(std::fs::metadata(users.path()).unwrap().ino(), before.ino());
    assert_eq!(users.list().await.unwrap().len(), 1);
}
