//! The example server's eBay notification endpoint at /ebay/notifications, driven by the fake
//! marketplace over loopback as eBay drives it; with the refresh-token file of the consents, a
//! deletion of the seller who consented removes the account's refresh token.

use std::sync::Arc;

use fake_marketplace::{AccountDeletionNotice, FakeConfig, FakeMarketplace, FakeUser, Tamper};
use marketplace_client::aio::oauth::{FileStore, RefreshTokenStore as _};
use marketplace_notifications::AccountUsers;
use taxonomy_example_server::consent::{CALLBACK_PATH, CONSENT_PATH};
use taxonomy_example_server::session::{LOGIN_PATH, hash_password};
use taxonomy_example_server::{
    FAKE_VERIFICATION_TOKEN, NOTIFICATIONS_PATH, Sessions, TokenStore, client_for_fake,
    consent_endpoints_for_fake, notification_endpoint_for_fake, router, with_consent,
    with_notifications,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_server_answers_the_challenge_and_verifies_notifications() {
    let fake = Arc::new(FakeMarketplace::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!(
        "http://{}{NOTIFICATIONS_PATH}",
        listener.local_addr().expect("addr")
    );
    let endpoint = notification_endpoint_for_fake(&fake, &url, None).expect("endpoint");
    let app = with_notifications(router(client_for_fake(&fake).expect("client")), endpoint);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let driver = fake.clone();
    let (challenge, signed, retried, tampered) = tokio::task::spawn_blocking(move || {
        let notice = AccountDeletionNotice::new(&driver, &FakeUser::default());
        (
            driver
                .run_challenge(&url, FAKE_VERIFICATION_TOKEN)
                .expect("challenge"),
            driver.send_notification(&url, &notice).expect("send"),
            driver
                .send_notification(&url, &notice.retry())
                .expect("send"),
            driver
                .send_notification(&url, &notice.tampered(Tamper::Body))
                .expect("send"),
        )
    })
    .await
    .expect("driver");
    assert!(challenge.passed(), "{challenge:?}");
    assert_eq!(signed.status, 204, "{}", signed.body_str());
    assert_eq!(retried.status, 204);
    assert_eq!(tampered.status, 412);
}

/// The `--fake` setup's store, a refresh-token file: a logged-in seller's consent records the
/// eBay user beside it, and eBay's deletion notification for that user removes the account's
/// refresh token (and the record).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_removes_the_token_of_the_seller_who_consented_from_the_file() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let fake = Arc::new(FakeMarketplace::start(FakeConfig::default()).expect("fake"));
    let dir = std::env::temp_dir().join(format!("example-server-deletion-{}", std::process::id()));
    let path = dir.join("refresh-tokens.json");
    let store = TokenStore::File(path.clone());
    let sessions = Sessions::new(
        &[3; 64],
        [("seller-1".to_owned(), hash_password("secret one").unwrap())],
    )
    .unwrap()
    .with_insecure_cookie();
    let consent = consent_endpoints_for_fake(
        &fake,
        &format!("http://{addr}{CALLBACK_PATH}"),
        store.clone(),
        Arc::new(sessions),
    )
    .expect("consent");
    let url = format!("http://{addr}{NOTIFICATIONS_PATH}");
    let notifications =
        notification_endpoint_for_fake(&fake, &url, Some(&store)).expect("endpoint");
    let app = with_notifications(
        with_consent(
            router(client_for_fake(&fake).expect("client")),
            Arc::new(consent),
        ),
        notifications,
    );
    tokio::spawn(async move { axum::serve(listener, app).await });

    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap();
    let login = browser
        .post(format!("http://{addr}{LOGIN_PATH}"))
        .json(&serde_json::json!({"account": "seller-1", "password": "secret one"}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status().as_u16(), 204);
    let cookie = login.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let mut next = format!("http://{addr}{CONSENT_PATH}");
    // The consent, the fake's consent page, the callback.
    for _ in 0..2 {
        let answer = browser
            .get(&next)
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap();
        assert!(
            answer.status().is_redirection(),
            "{next}: {}",
            answer.status()
        );
        next = answer.headers()["location"].to_str().unwrap().to_owned();
    }
    let answer = browser
        .get(&next)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    let file = FileStore::new(&path);
    assert!(file.load("seller-1").await.unwrap().is_some());
    let users = AccountUsers::beside(&path).list().await.unwrap();
    assert_eq!(users["seller-1"].user_id, FakeUser::default().user_id);

    let driver = fake.clone();
    let delivered = tokio::task::spawn_blocking(move || {
        let notice = AccountDeletionNotice::new(&driver, &FakeUser::default());
        driver.send_notification(&url, &notice).expect("send")
    })
    .await
    .expect("driver");
    assert_eq!(delivered.status, 204, "{}", delivered.body_str());
    assert!(
        file.load("seller-1").await.unwrap().is_none(),
        "the deleted seller's refresh token is removed"
    );
    assert!(AccountUsers::beside(&path).list().await.unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
