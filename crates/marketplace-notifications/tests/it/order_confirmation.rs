//! ORDER_CONFIRMATION notifications, sent by the fake marketplace as eBay sends them (signed
//! with the key getPublicKey serves, to the endpoint subscribed for the seller) when a buyer
//! completes checkout, verified by the endpoint served by axum on loopback, and waking the
//! seller's order feed (`OrderFeed::wake`) at once; the feed's polls stay the backstop. The
//! endpoint subscribed from code (updateConfig, createDestination, createSubscription), the
//! calls and the fake's answers held to eBay's description of the Notification API
//! (tests/contract/commerce_notification_v1_oas3.json).

use crate::openapi;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_marketplace::{DeliveryFault, FakeMarketplace};
use marketplace_client::aio::api::{ApiClient, ClientConfig};
use marketplace_client::aio::oauth::{
    AccessTokenSource, ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
};
use marketplace_notifications::subscribe::{self, SubscribeError};
use marketplace_notifications::{
    Notification, NotificationEndpoint, ORDER_CONFIRMATION_TOPIC, PublicKeyCache, VerificationToken,
};
use marketplace_orders::aio::Orders;
use marketplace_orders::feed::{ChangeKey, FileStore, OrderChange, OrderFeed};

const TOKEN: &str = "Loopback_verification-token_0123456789abcdef";
const SELLER: &str = "fake_seller";

type Handed = Arc<Mutex<Vec<ChangeKey>>>;
type Feed = Arc<tokio::sync::Mutex<OrderFeed<FileStore>>>;

/// A client of `fake` with the application's token (client credentials), without retries.
fn app_api(fake: &FakeMarketplace) -> ApiClient {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    let tokens = Arc::new(ApplicationTokenProvider::new(
        OAuthClient::from_config(&oauth).unwrap(),
    ));
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0);
    ApiClient::new(config, tokens).unwrap()
}

/// The application's key cache for `fake`: getPublicKey with an application token.
fn key_cache(fake: &FakeMarketplace) -> Arc<PublicKeyCache> {
    Arc::new(PublicKeyCache::new(app_api(fake)))
}

/// A client of `fake` with the seller's user token granting `scopes`, without retries.
async fn seller_api(fake: &Arc<FakeMarketplace>, scopes: &'static [&'static str]) -> ApiClient {
    let token = {
        let fake = fake.clone();
        tokio::task::spawn_blocking(move || seller_token(&fake, scopes))
            .await
            .unwrap()
    };
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0);
    ApiClient::new(config, token).unwrap()
}

/// The seller's access token granting `scopes` (suffixes of the fake's scope URL): the fake's
/// consent page visited over loopback, the code exchanged (blocking client, off the runtime's
/// threads).
fn seller_token(fake: &FakeMarketplace, scopes: &[&str]) -> Arc<dyn AccessTokenSource> {
    use marketplace_client::oauth as blocking;
    use marketplace_client::oauth::AccessTokenSource as _;
    let endpoints = blocking::Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let config = blocking::OAuthConfig::new(endpoints)
        .with_credentials(fake.client_id(), fake.client_secret())
        .with_redirect_uri("Fake_Company-FakeApp-PRD-abcdefghi");
    let client = Arc::new(blocking::OAuthClient::from_config(&config).unwrap());
    let scopes = blocking::ScopeSet::new(scopes.iter().map(|s| fake.scope(s)));
    let request = client.consent_request(&scopes).unwrap();
    let code = request
        .complete(&fake_marketplace::consent_redirect(request.url().as_str()).unwrap())
        .expect("consent granted");
    let provider = blocking::UserTokenProvider::new(
        client,
        Arc::new(blocking::MemoryStore::new()),
        "seller-1",
    );
    provider
        .exchange_code(&code, request.scopes())
        .expect("the code exchanged");
    Arc::new(provider.access_token().unwrap())
}

/// The handler: each change handed over, in order.
fn recorder(
    handed: Handed,
) -> impl FnMut(&OrderChange, &mut ()) -> Result<(), Box<dyn std::error::Error + Send + Sync>> + Send
{
    move |change: &OrderChange, _: &mut ()| {
        handed.lock().unwrap().push(change.key.clone());
        Ok(())
    }
}

struct App {
    fake: Arc<FakeMarketplace>,
    feed: Feed,
    handed: Handed,
    /// The notificationIds the application's callback was called with.
    notified: Arc<Mutex<Vec<String>>>,
    listing: String,
    /// The endpoint's URL.
    url: String,
    _state: tempfile::TempDir,
}

impl App {
    /// A purchase of one item, off the runtime's threads (the fake sends the notification
    /// before the purchase returns): the order's id.
    async fn buy(&self) -> String {
        let (fake, listing) = (self.fake.clone(), self.listing.clone());
        let id = tokio::task::spawn_blocking(move || fake.buy(&listing, 1).unwrap())
            .await
            .unwrap();
        self.fake.advance_clock(Duration::from_millis(5));
        id
    }

    /// One poll of the feed: how many changes it handed over.
    async fn poll(&self) -> usize {
        let mut handler = recorder(self.handed.clone());
        self.feed
            .lock()
            .await
            .poll_once(&mut handler)
            .await
            .unwrap()
            .handed_over
    }

    /// The order ids handed over so far, in order.
    fn handed(&self) -> Vec<String> {
        let handed = self.handed.lock().unwrap();
        handed.iter().map(|k| k.order_id.clone()).collect()
    }

    /// What the endpoint answered to each delivery of the last notification sent.
    fn last_answers(&self) -> Vec<Result<u16, String>> {
        let sent = self.fake.sent_notifications();
        let last = sent.last().expect("a notification was sent");
        assert_eq!(last.topic, "ORDER_CONFIRMATION");
        last.answers.clone()
    }
}

/// [`unsubscribed`], the endpoint subscribed to ORDER_CONFIRMATION for the seller in the
/// fake's process.
async fn app() -> App {
    let app = unsubscribed().await;
    app.fake.subscribe_order_confirmations(SELLER, &app.url);
    app
}

/// The seller's order feed (file store, the fake's clock), and the application's notification
/// endpoint served by axum, whose callback wakes the feed for an ORDER_CONFIRMATION's order.
async fn unsubscribed() -> App {
    let fake = Arc::new(FakeMarketplace::new());
    let state = tempfile::tempdir().unwrap();
    let api = seller_api(&fake, &["/sell.fulfillment"]).await;
    let clock = fake.state().clone();
    let feed: Feed = Arc::new(tokio::sync::Mutex::new(
        OrderFeed::new(Orders::new(api), FileStore::new(state.path()), SELLER)
            .starting_at(fake.now() - Duration::from_secs(60))
            .with_clock(move || clock.now()),
    ));
    let handed: Handed = Arc::default();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/ebay/notifications",
        listener.local_addr().unwrap()
    );
    let notified: Arc<Mutex<Vec<String>>> = Arc::default();
    let (woken, sink, calls) = (feed.clone(), handed.clone(), notified.clone());
    let endpoint = Arc::new(
        NotificationEndpoint::new(
            &url,
            VerificationToken::new(TOKEN).unwrap(),
            key_cache(&fake),
        )
        .unwrap()
        .on_notification(move |n| {
            let (feed, sink) = (woken.clone(), sink.clone());
            calls.lock().unwrap().push(n.notification_id().to_owned());
            async move {
                if let Notification::OrderConfirmation(confirmed) = n {
                    let mut handler = recorder(sink);
                    feed.lock()
                        .await
                        .wake(&confirmed.order_id, &mut handler)
                        .await?;
                }
                Ok::<(), marketplace_orders::feed::FeedError>(())
            }
        }),
    );
    let router: axum::Router =
        marketplace_notifications::axum::router("/ebay/notifications", endpoint);
    tokio::spawn(async move { axum::serve(listener, router).await });
    let listing = fake.add_listing(SELLER, "BOLT-1", 100, "1.00");
    App {
        fake,
        feed,
        handed,
        notified,
        listing,
        url,
        _state: state,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_confirmation_hands_the_order_over_at_once_and_the_next_poll_not_again() {
    let app = app().await;
    assert_eq!(app.poll().await, 0);
    let order = app.buy().await;
    // Verified (the fake's key, through getPublicKey) and handled before the purchase returned.
    assert_eq!(app.last_answers(), [Ok(204)]);
    assert_eq!(app.handed(), std::slice::from_ref(&order));
    // The poll reads the order too: one handover for the notification and the poll.
    assert_eq!(app.poll().await, 0);
    let another = app.buy().await;
    assert_eq!(app.poll().await, 0);
    assert_eq!(app.handed(), [order, another]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_order_confirmation_loses_no_order_the_next_poll_hands_it_over_once() {
    let app = app().await;
    app.fake.fault_next_notification(DeliveryFault::Drop);
    let lost = app.buy().await;
    assert_eq!(app.last_answers(), []);
    assert!(app.handed().is_empty(), "{:?}", app.handed());
    assert_eq!(app.poll().await, 1);
    assert_eq!(app.handed(), std::slice::from_ref(&lost));
    // The next one arrives at once again, and nothing twice.
    let next = app.buy().await;
    assert_eq!(app.last_answers(), [Ok(204)]);
    assert_eq!(app.poll().await, 0);
    assert_eq!(app.handed(), [lost, next]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_confirmation_delivered_twice_hands_the_order_over_once() {
    let app = app().await;
    app.fake.fault_next_notification(DeliveryFault::Twice);
    let order = app.buy().await;
    // Both deliveries answered 204: the second as already handled (its notificationId).
    assert_eq!(app.last_answers(), [Ok(204), Ok(204)]);
    assert_eq!(app.notified.lock().unwrap().len(), 1);
    assert_eq!(app.handed(), std::slice::from_ref(&order));
    assert_eq!(app.poll().await, 0);
    assert_eq!(app.handed(), [order]);
}

const ALERTS: &str = "alerts@seller.example";
const SUBSCRIBER: &[&str] = &["/sell.fulfillment", "/commerce.notification.subscription"];

/// The error id of a call eBay refused.
fn refused<T: std::fmt::Debug>(result: Result<T, SubscribeError>) -> u32 {
    let error = result.unwrap_err();
    assert!(
        error.to_string().contains("create") || error.to_string().contains("update"),
        "the error names its call: {error}"
    );
    error
        .error_id()
        .unwrap_or_else(|| panic!("no errorId: {error}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_subscribed_from_code_is_challenged_and_gets_its_sellers_order_confirmations() {
    let app = unsubscribed().await;
    let (api, seller) = (app_api(&app.fake), seller_api(&app.fake, SUBSCRIBER).await);
    let token = VerificationToken::new(TOKEN).unwrap();
    // eBay requires the config first.
    let early = subscribe::create_destination(&api, "orders", &app.url, &token).await;
    assert_eq!(refused(early), 195003);
    // An endpoint that answers the challenge with another token is not registered.
    subscribe::update_config(&api, ALERTS).await.unwrap();
    let other = VerificationToken::new("Another_verification-token_0123456789abcdef").unwrap();
    let challenged = subscribe::create_destination(&api, "orders", &app.url, &other).await;
    assert_eq!(refused(challenged), 195020);
    let subscribed = subscribe::subscribe_to_order_confirmations(
        &api, &seller, ALERTS, "orders", &app.url, &token,
    )
    .await
    .unwrap();
    assert!(!subscribed.destination_id.is_empty() && !subscribed.subscription_id.is_empty());
    // The application's token may not subscribe to a seller's topic; twice is refused.
    let by_app =
        subscribe::create_subscription(&api, ORDER_CONFIRMATION_TOPIC, &subscribed.destination_id);
    assert_eq!(refused(by_app.await), 195011);
    let again = subscribe::create_subscription(
        &seller,
        ORDER_CONFIRMATION_TOPIC,
        &subscribed.destination_id,
    );
    assert_eq!(refused(again.await), 195012);
    let same = subscribe::create_destination(&api, "orders", &app.url, &token).await;
    assert_eq!(refused(same), 195021);

    let order = app.buy().await;
    assert_eq!(app.last_answers(), [Ok(204)]);
    assert_eq!(app.handed(), [order]);
    assert_eq!(app.poll().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_subscribe_calls_and_the_fakes_answers_are_as_the_notification_api_describes_them() {
    let doc = openapi::Document::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/contract/commerce_notification_v1_oas3.json"),
    );
    let base = doc.base_path();
    let app = unsubscribed().await;
    let (api, seller) = (app_api(&app.fake), seller_api(&app.fake, SUBSCRIBER).await);
    let token = VerificationToken::new(TOKEN).unwrap();
    // Each call: (operationId, the errorId eBay answered, if any).
    let mut calls: Vec<(&str, Option<u32>)> = Vec::new();
    fn id<T>(r: Result<T, SubscribeError>) -> Option<u32> {
        r.err().and_then(|e| e.error_id())
    }
    calls.push((
        "createDestination",
        id(subscribe::create_destination(&api, "orders", &app.url, &token).await),
    ));
    calls.push((
        "updateConfig",
        id(subscribe::update_config(&api, "no-email").await),
    ));
    calls.push((
        "updateConfig",
        id(subscribe::update_config(&api, ALERTS).await),
    ));
    for (name, endpoint) in [
        ("x".repeat(65), app.url.as_str()),
        ("orders".into(), "ftp://x"),
    ] {
        let r = subscribe::create_destination(&api, &name, endpoint, &token).await;
        calls.push(("createDestination", id(r)));
    }
    let destination = subscribe::create_destination(&api, "orders", &app.url, &token)
        .await
        .unwrap();
    calls.push(("createDestination", None));
    for (topic, destination, by) in [
        ("NO_SUCH_TOPIC", destination.as_str(), &seller),
        (ORDER_CONFIRMATION_TOPIC, "no-such-destination", &seller),
        (ORDER_CONFIRMATION_TOPIC, destination.as_str(), &api),
        (ORDER_CONFIRMATION_TOPIC, destination.as_str(), &seller),
        (ORDER_CONFIRMATION_TOPIC, destination.as_str(), &seller),
    ] {
        let r = subscribe::create_subscription(by, topic, destination).await;
        calls.push(("createSubscription", id(r)));
    }
    let errors: Vec<u32> = calls.iter().filter_map(|(_, e)| *e).collect();
    assert_eq!(
        errors,
        [
            195003, 195025, 195016, 195017, 195027, 195007, 195011, 195012
        ],
        "the calls above meet each of these refusals"
    );

    let schemas = [
        ("updateConfig", "Config"),
        ("createDestination", "DestinationRequest"),
        ("createSubscription", "CreateSubscriptionRequest"),
    ];
    let writes = |method: &str| method == "PUT" || method == "POST";
    let requests: Vec<_> = app
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with(&base) && writes(&r.method))
        .collect();
    let answers: Vec<_> = app
        .fake
        .answers()
        .into_iter()
        .filter(|a| a.path.starts_with(&base) && writes(&a.method))
        .collect();
    assert_eq!((requests.len(), answers.len()), (calls.len(), calls.len()));
    let operations = doc.operations();
    // The fake serves no Notification API path the description does not list.
    for (method, pattern) in app.fake.route_patterns() {
        let pattern = pattern.replace("{kid}", "{public_key_id}");
        if pattern.starts_with(&base) {
            assert!(
                operations
                    .iter()
                    .any(|o| o.method == method && o.path == pattern),
                "the fake serves {method} {pattern}, not in the description"
            );
        }
    }
    for (((call, error_id), request), answer) in calls.iter().zip(&requests).zip(&answers) {
        let path = &request.path;
        let operation = operations
            .iter()
            .find(|o| o.method.eq_ignore_ascii_case(&request.method) && o.matches(path))
            .unwrap_or_else(|| panic!("{} {path} is not in the description", request.method));
        assert_eq!(&operation.id, call, "{} {path}", request.method);
        let schema = schemas.iter().find(|(c, _)| c == call).unwrap().1;
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(
            doc.conformance(&body, schema),
            Vec::<String>::new(),
            "{call}"
        );
        let documented = operation
            .responses
            .get(&answer.status)
            .unwrap_or_else(|| panic!("{call} answered {}, undocumented", answer.status));
        match error_id {
            Some(id) => assert!(
                documented.errors.iter().any(|e| e.id == *id),
                "{call}: errorId {id} is not documented for {}",
                answer.status
            ),
            None => assert!(answer.status < 300, "{call}: {}", answer.status),
        }
    }
}
