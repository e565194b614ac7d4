//! The endpoint served by axum on loopback, driven by the fake marketplace as eBay drives
//! it: the challenge, signed account deletions (retried, tampered, a hundred at once), with
//! the keys from the fake's getPublicKey.

use std::sync::{Arc, Mutex};

use fake_marketplace::notify::PUBLIC_KEY_PATH;
use fake_marketplace::{
    AccountDeletionNotice, FakeMarketplace, FakeUser, Fault, FaultRule, Tamper,
};
use marketplace_client::aio::api::{ApiClient, ClientConfig};
use marketplace_client::aio::oauth::{
    ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
};
use marketplace_notifications::{
    Notification, NotificationEndpoint, PublicKeyCache, VerificationToken,
};

type Case<'a> = (
    &'a str,
    Option<&'a str>,
    Vec<(&'a str, String)>,
    Vec<u8>,
    u16,
    &'a str,
);

const TOKEN: &str = "Loopback_verification-token_0123456789abcdef";

struct Served {
    fake: Arc<FakeMarketplace>,
    url: String,
    endpoint: Arc<NotificationEndpoint>,
    received: Arc<Mutex<Vec<Notification>>>,
}

/// The application's key cache for `fake`: getPublicKey with an application token.
fn key_cache(fake: &FakeMarketplace) -> Arc<PublicKeyCache> {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    let tokens = Arc::new(ApplicationTokenProvider::new(
        OAuthClient::from_config(&oauth).unwrap(),
    ));
    let api = ApiClient::new(
        ClientConfig::for_base_url(&fake.base_url()).unwrap(),
        tokens,
    )
    .unwrap();
    Arc::new(PublicKeyCache::new(api))
}

async fn serve() -> Served {
    let fake = Arc::new(FakeMarketplace::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/ebay/notifications",
        listener.local_addr().unwrap()
    );
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let endpoint = Arc::new(
        NotificationEndpoint::new(
            &url,
            VerificationToken::new(TOKEN).unwrap(),
            key_cache(&fake),
        )
        .unwrap()
        .on_notification(move |n| {
            sink.lock().unwrap().push(n);
            async { Ok::<(), std::io::Error>(()) }
        }),
    );
    let app: axum::Router =
        marketplace_notifications::axum::router("/ebay/notifications", endpoint.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Served {
        fake,
        url,
        endpoint,
        received,
    }
}

/// Runs a blocking call of the fake (its HTTP client is std's) off the runtime's threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_challenge_is_answered_as_ebay_checks_it() {
    let s = serve().await;
    let (fake, url) = (s.fake.clone(), s.url.clone());
    let outcome = blocking(move || fake.run_challenge(&url, TOKEN).unwrap()).await;
    assert!(outcome.passed(), "{outcome:?}");
    // Registered with another token, eBay would refuse the endpoint.
    let (fake, url) = (s.fake.clone(), s.url.clone());
    let other = blocking(move || {
        fake.run_challenge(&url, "Another_verification-token_0123456789abcdef")
            .unwrap()
    })
    .await;
    assert!(!other.passed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_deletion_gets_204_and_reaches_the_application_once_even_when_retried() {
    let s = serve().await;
    let user = FakeUser {
        user_id: "seller42Id".into(),
        username: "seller_42".into(),
    };
    let notice = AccountDeletionNotice::new(&s.fake, &user);
    let (fake, url, first) = (s.fake.clone(), s.url.clone(), notice.clone());
    let (a, b) = blocking(move || {
        let a = fake.send_notification(&url, &first).unwrap();
        let b = fake.send_notification(&url, &first.retry()).unwrap();
        (a, b)
    })
    .await;
    assert_eq!((a.status, b.status), (204, 204), "{}", a.body_str());
    let received = s.received.lock().unwrap().clone();
    assert_eq!(received.len(), 1, "the retry is not handled twice");
    let Notification::AccountDeletion(deletion) = &received[0] else {
        panic!("{:?}", received[0]);
    };
    assert_eq!(deletion.user_id, "seller42Id");
    assert_eq!(deletion.username, "seller_42");
    assert_eq!(deletion.notification_id, notice.notification_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_body_or_signature_gets_412_and_reaches_nobody() {
    let s = serve().await;
    let notice = AccountDeletionNotice::new(&s.fake, &FakeUser::default());
    for tamper in [Tamper::Body, Tamper::Signature] {
        let (fake, url, spoiled) = (s.fake.clone(), s.url.clone(), notice.tampered(tamper));
        let answer = blocking(move || fake.send_notification(&url, &spoiled).unwrap()).await;
        assert_eq!(answer.status, 412, "{tamper:?}: {}", answer.body_str());
        assert!(
            answer.body_str().contains("does not verify"),
            "{}",
            answer.body_str()
        );
    }
    assert!(s.received.lock().unwrap().is_empty());
    // The genuine one is still handled afterwards (a forgery does not burn its id).
    let (fake, url) = (s.fake.clone(), s.url.clone());
    let answer = blocking(move || fake.send_notification(&url, &notice).unwrap()).await;
    assert_eq!(answer.status, 204);
    assert_eq!(s.received.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_notifications_at_once_make_one_get_public_key_call() {
    let s = serve().await;
    let fake = s.fake.clone();
    let url = s.url.clone();
    let statuses = blocking(move || {
        let notices: Vec<AccountDeletionNotice> = (0..100)
            .map(|i| {
                AccountDeletionNotice::new(
                    &fake,
                    &FakeUser {
                        user_id: format!("user{i}"),
                        username: format!("name{i}"),
                    },
                )
            })
            .collect();
        std::thread::scope(|scope| {
            let handles: Vec<_> = notices
                .iter()
                .map(|n| scope.spawn(|| fake.send_notification(&url, n).unwrap().status))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<u16>>()
        })
    })
    .await;
    assert!(statuses.iter().all(|&s| s == 204), "{statuses:?}");
    let kid = s.fake.notification_kid();
    let calls = s.fake.requests_to(&format!("{PUBLIC_KEY_PATH}{kid}"));
    assert_eq!(calls.len(), 1, "getPublicKey calls");
    assert_eq!(s.received.lock().unwrap().len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_a_typed_4xx_never_a_500() {
    let s = serve().await;
    let e = &s.endpoint;
    let notice = AccountDeletionNotice::new(&s.fake, &FakeUser::default());
    let body = notice.body();
    let signed = s.fake.signature_header(body.as_bytes());
    // (method, query, headers, body, status, what the error says)
    let cases: Vec<Case> = vec![
        ("GET", None, vec![], vec![], 400, "without a challenge_code"),
        ("GET", Some("challenge_code="), vec![], vec![], 400, "challenge_code is empty"),
        ("PUT", None, vec![], vec![], 405, "answers GET"),
        ("POST", None, vec![], body.clone().into_bytes(), 400, "no X-EBAY-SIGNATURE"),
        (
            "POST",
            None,
            vec![("x-ebay-signature", "e30=".into())],
            body.clone().into_bytes(),
            400,
            "field \\\"alg\\\"",
        ),
        (
            "POST",
            None,
            vec![("X-EBAY-SIGNATURE", "!!".into())],
            body.clone().into_bytes(),
            400,
            "not base64",
        ),
        (
            "POST",
            None,
            vec![("X-EBAY-SIGNATURE", signed.clone())],
            vec![b' '; 70_000],
            413,
            "more than the",
        ),
        (
            "POST",
            None,
            vec![(
                "X-EBAY-SIGNATURE",
                fake_marketplace::notify::base64_encode(
                    br#"{"alg":"ecdsa","kid":"no-such-kid","signature":"MAYCAQECAQE=","digest":"SHA1"}"#,
                ),
            )],
            body.clone().into_bytes(),
            412,
            "getPublicKey does not know it",
        ),
    ];
    for (method, query, headers, body, status, says) in cases {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let answer = e.handle(method, query, &headers, &body).await;
        assert_eq!(
            answer.status,
            status,
            "{method} {query:?}: {}",
            answer.body_str()
        );
        assert!(answer.body_str().contains(says), "{}", answer.body_str());
        assert_eq!(
            answer
                .headers
                .iter()
                .find(|(k, _)| *k == "Content-Type")
                .map(|(_, v)| v.as_str()),
            Some("application/json")
        );
    }
    // Signed, but not a notification: 400 naming the field.
    let not_a_notification = br#"{"metadata":{}}"#;
    let header = s.fake.signature_header(not_a_notification);
    let answer = e
        .handle(
            "POST",
            None,
            &[("X-EBAY-SIGNATURE", &header)],
            not_a_notification,
        )
        .await;
    assert_eq!(answer.status, 400);
    assert!(
        answer.body_str().contains("metadata.topic"),
        "{}",
        answer.body_str()
    );
    assert!(s.received.lock().unwrap().is_empty());
}

/// An `X-EBAY-SIGNATURE` header naming `kid`, with a signature that verifies nothing.
fn forged_header(kid: &str) -> String {
    fake_marketplace::notify::base64_encode(
        serde_json::json!({
            "alg": "ecdsa",
            "kid": kid,
            "signature": "MAYCAQECAQE=",
            "digest": "SHA1",
        })
        .to_string()
        .as_bytes(),
    )
}

/// getPublicKey calls the fake received, whatever the `kid`.
fn get_public_key_calls(fake: &FakeMarketplace) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.path.starts_with(PUBLIC_KEY_PATH))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_kids_cost_a_bounded_number_of_get_public_key_calls() {
    let s = serve().await;
    let body = AccountDeletionNotice::new(&s.fake, &FakeUser::default()).body();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for i in 0..300 {
        let header = forged_header(&format!("forged-kid-{i}"));
        let answer = s
            .endpoint
            .handle(
                "POST",
                None,
                &[("X-EBAY-SIGNATURE", &header)],
                body.as_bytes(),
            )
            .await;
        *statuses.entry(answer.status).or_default() += 1;
    }
    let calls = get_public_key_calls(&s.fake);
    assert!(
        calls <= 20,
        "300 forged kids made {calls} getPublicKey calls (answers {statuses:?})"
    );
    assert!(
        statuses.keys().all(|s| [412, 503].contains(s)),
        "{statuses:?}"
    );
    // `.` and `..` are path segments, not kids: refused as unknown, asked of nobody.
    for kid in [".", ".."] {
        let header = forged_header(kid);
        let answer = s
            .endpoint
            .handle(
                "POST",
                None,
                &[("X-EBAY-SIGNATURE", &header)],
                body.as_bytes(),
            )
            .await;
        assert_eq!(answer.status, 412, "kid {kid:?}: {}", answer.body_str());
    }
    assert_eq!(get_public_key_calls(&s.fake), calls);
    assert!(s.received.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ebays_key_stays_cached_through_a_flood_of_forged_kids() {
    let s = serve().await;
    let kid = s.fake.notification_kid();
    let first = AccountDeletionNotice::new(&s.fake, &FakeUser::default());
    let (fake, url) = (s.fake.clone(), s.url.clone());
    let answer = blocking(move || fake.send_notification(&url, &first).unwrap()).await;
    assert_eq!(answer.status, 204, "{}", answer.body_str());
    // More forged kids than the cache holds, twice over.
    let body = AccountDeletionNotice::new(&s.fake, &FakeUser::default()).body();
    for _round in 0..2 {
        for i in 0..65 {
            let header = forged_header(&format!("forged-kid-{i}"));
            let answer = s
                .endpoint
                .handle(
                    "POST",
                    None,
                    &[("X-EBAY-SIGNATURE", &header)],
                    body.as_bytes(),
                )
                .await;
            assert!([412, 503].contains(&answer.status), "{}", answer.body_str());
        }
    }
    let second = AccountDeletionNotice::new(&s.fake, &FakeUser::default());
    let (fake, url) = (s.fake.clone(), s.url.clone());
    let answer = blocking(move || fake.send_notification(&url, &second).unwrap()).await;
    assert_eq!(answer.status, 204, "{}", answer.body_str());
    let calls = s.fake.requests_to(&format!("{PUBLIC_KEY_PATH}{kid}")).len();
    assert_eq!(calls, 1, "getPublicKey calls for eBay's own kid");
    assert_eq!(s.received.lock().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_get_public_key_is_shared_by_the_deliveries_waiting_for_it() {
    let s = serve().await;
    let kid = s.fake.notification_kid();
    let path = format!("{PUBLIC_KEY_PATH}{kid}");
    s.fake.inject(FaultRule {
        method: None,
        path: Some(path.clone()),
        times: None,
        fault: Fault::Status {
            status: 500,
            body: r#"{"errors":[{"errorId":10001,"domain":"API_NOTIFICATION","category":"APPLICATION","message":"System error."}]}"#.into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
        },
    });
    let (fake, url) = (s.fake.clone(), s.url.clone());
    let started = std::time::Instant::now();
    let answers = blocking(move || {
        let notices: Vec<AccountDeletionNotice> = (0..20)
            .map(|_| AccountDeletionNotice::new(&fake, &FakeUser::default()))
            .collect();
        std::thread::scope(|scope| {
            let handles: Vec<_> = notices
                .iter()
                // The sender gives up after 30 s without an answer.
                .map(|n| scope.spawn(|| fake.send_notification(&url, n)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        })
    })
    .await;
    let elapsed = started.elapsed();
    // One getPublicKey call and the client's retries of it (3 by default), shared by all 20.
    let calls = s.fake.requests_to(&path).len();
    let unanswered = answers.iter().filter(|a| a.is_err()).count();
    assert!(
        calls <= 4 && unanswered == 0,
        "20 deliveries during getPublicKey's 500 made {calls} calls; {unanswered} unanswered after {elapsed:?}"
    );
    for answer in answers {
        let answer = answer.unwrap();
        assert_eq!(answer.status, 503, "{}", answer.body_str());
        assert_eq!(answer.header("Retry-After"), Some("60"));
    }
    assert!(s.received.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_dropped_mid_callback_does_not_block_its_retries() {
    let fake = Arc::new(FakeMarketplace::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{addr}/ebay/notifications");
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Arc::new(tokio::sync::Notify::new());
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let (c, st, g) = (calls.clone(), started.clone(), gate.clone());
    let endpoint = Arc::new(
        NotificationEndpoint::new(
            &url,
            VerificationToken::new(TOKEN).unwrap(),
            key_cache(&fake),
        )
        .unwrap()
        .on_notification(move |_n| {
            let first = c.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
            let (st, g) = (st.clone(), g.clone());
            async move {
                if first {
                    // The first delivery's callback is slow: eBay gives up on it.
                    st.notify_one();
                    g.acquire().await.unwrap().forget();
                }
                Ok::<(), std::io::Error>(())
            }
        }),
    );
    let app: axum::Router =
        marketplace_notifications::axum::router("/ebay/notifications", endpoint.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let notice = AccountDeletionNotice::new(&fake, &FakeUser::default());
    let body = notice.body();
    let header = fake.signature_header(body.as_bytes());
    let stream = blocking(move || {
        use std::io::Write as _;
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        let head = format!(
            "POST /ebay/notifications HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nX-EBAY-SIGNATURE: {header}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body.as_bytes()).unwrap();
        stream
    })
    .await;
    tokio::time::timeout(std::time::Duration::from_secs(10), started.notified())
        .await
        .expect("the callback is called");
    // The connection drops while the callback runs; then the callback finishes.
    drop(stream);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    gate.add_permits(1);

    // eBay's retries: answered (204) once the first delivery's handling has ended.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let answer = loop {
        let (f, u, retry) = (fake.clone(), url.clone(), notice.retry());
        let answer = blocking(move || f.send_notification(&u, &retry).unwrap()).await;
        if answer.status != 409 || std::time::Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(answer.status, 204, "{}", answer.body_str());
    // The first delivery's handling ran to its end: the retry was not handled again.
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// `NotificationEndpoint::new` takes the URL as an owned `String` too (an application reads
/// it from its configuration), as well as a `&str`, and keeps it exactly (the challenge
/// hashes it).
#[test]
fn an_endpoint_takes_its_url_as_a_string_or_a_str() {
    let fake = FakeMarketplace::new();
    let url: String = ["https://seller.example", "/ebay/notifications"].concat();
    let owned = NotificationEndpoint::new(
        url.clone(),
        VerificationToken::new(TOKEN).unwrap(),
        key_cache(&fake),
    )
    .unwrap();
    assert_eq!(owned.endpoint(), url);
    let borrowed = NotificationEndpoint::new(
        url.as_str(),
        VerificationToken::new(TOKEN).unwrap(),
        key_cache(&fake),
    )
    .unwrap();
    assert_eq!(borrowed.endpoint(), url);
    // A refused URL still names itself in the error.
    let error = NotificationEndpoint::new(
        format!("{url}?x=1"),
        VerificationToken::new(TOKEN).unwrap(),
        key_cache(&fake),
    )
    .err()
    .unwrap();
    assert!(error.to_string().contains("?x=1"), "{error}");
}
