//! The example server over real HTTP against the fake marketplace: leaves only, every one a
//! leaf of taxonomy-data's snapshot, one token request for a burst of requests, and JSON
//! errors for bad input.

use std::net::SocketAddr;

use fake_marketplace::FakeMarketplace;
use taxonomy_data::Site;
use taxonomy_example_server::{SuggestAnswer, client_for_fake, is_compiled_leaf, router};

/// Serves the router on an ephemeral loopback port; the fake must outlive the test.
async fn start(fake: &FakeMarketplace) -> SocketAddr {
    let client = client_for_fake(fake).expect("client");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        axum::serve(listener, router(client)).await.expect("serve");
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_answer_leaves_with_one_token_request() {
    let fake = FakeMarketplace::new();
    let addr = start(&fake).await;
    let http = reqwest::Client::new();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let http = http.clone();
        tasks.spawn(async move {
            let answer = http
                .get(format!("http://{addr}/suggest?q=iphone"))
                .send()
                .await
                .expect("request");
            assert_eq!(answer.status(), 200);
            answer.json::<SuggestAnswer>().await.expect("JSON answer")
        });
    }
    while let Some(answer) = tasks.join_next().await {
        let answer = answer.expect("task");
        assert_eq!(answer.site, "EBAY_US");
        assert_eq!(answer.q, "iphone");
        assert!(!answer.leaves.is_empty(), "at least one leaf: {answer:?}");
        for leaf in &answer.leaves {
            assert!(is_compiled_leaf(Site::Us, leaf.id), "{} is a leaf", leaf.id);
            let category = Site::Us.category(leaf.id).expect("known");
            assert!(category.is_leaf());
        }
        for id in &answer.dropped {
            assert!(!is_compiled_leaf(Site::Us, *id));
        }
    }
    assert_eq!(
        fake.token_requests().len(),
        1,
        "one shared application token"
    );
}

async fn error(addr: SocketAddr, query: &str) -> (u16, serde_json::Value) {
    let answer = reqwest::get(format!("http://{addr}/suggest{query}"))
        .await
        .expect("request");
    let status = answer.status().as_u16();
    (status, answer.json().await.expect("a JSON error"))
}

#[tokio::test]
async fn bad_input_and_upstream_failures_are_json_errors() {
    let fake = FakeMarketplace::new();
    let addr = start(&fake).await;
    for query in ["", "?q=", "?q=%20%20", "?site=EBAY_US"] {
        let (status, body) = error(addr, query).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body["error"].as_str().unwrap().contains("missing keyword"));
    }
    let (status, body) = error(addr, "?q=iphone&site=EBAY_XX").await;
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("unknown site"));
    let (status, _) = error(addr, "?q=%FF%FE").await;
    assert!(status == 400 || status == 200 || status == 502, "{status}");

    // The service's own error, passed on as a 502.
    fake.fail_next(
        "/commerce/taxonomy/v1/category_tree/0/get_category_suggestions",
        fake_marketplace::Fault::Status {
            status: 400,
            body: r#"{"errors":[{"errorId":62004,"message":"The specified category tree ID was not found."}]}"#.into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
        },
    );
    let (status, body) = error(addr, "?q=iphone").await;
    assert_eq!(status, 502, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("category tree ID was not found"),
        "{body}"
    );

    // A site with its lower-case id works.
    let answer: SuggestAnswer =
        reqwest::get(format!("http://{addr}/suggest?q=iphone&site=ebay_us"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    assert_eq!(answer.site, "EBAY_US");
}
