//! The example server's eBay notification endpoint at /ebay/notifications, driven by the fake
//! marketplace over loopback as eBay drives it.

use std::sync::Arc;

use fake_marketplace::{AccountDeletionNotice, FakeMarketplace, FakeUser, Tamper};
use taxonomy_example_server::{
    FAKE_VERIFICATION_TOKEN, NOTIFICATIONS_PATH, client_for_fake, notification_endpoint_for_fake,
    router, with_notifications,
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
    let endpoint = notification_endpoint_for_fake(&fake, &url).expect("endpoint");
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
