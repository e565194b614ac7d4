//! ORDER_CONFIRMATION notifications, sent by the fake marketplace as eBay sends them (signed
//! with the key getPublicKey serves, to the endpoint subscribed for the seller) when a buyer
//! completes checkout, verified by the endpoint served by axum on loopback, and waking the
//! seller's order feed (`OrderFeed::wake`) at once; the feed's polls stay the backstop.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_marketplace::{DeliveryFault, FakeMarketplace};
use marketplace_client::aio::api::{ApiClient, ClientConfig};
use marketplace_client::aio::oauth::{
    AccessTokenSource, ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
};
use marketplace_notifications::{
    Notification, NotificationEndpoint, PublicKeyCache, VerificationToken,
};
use marketplace_orders::aio::Orders;
use marketplace_orders::feed::{ChangeKey, FileStore, OrderChange, OrderFeed};

const TOKEN: &str = "Loopback_verification-token_0123456789abcdef";
const SELLER: &str = "fake_seller";

type Handed = Arc<Mutex<Vec<ChangeKey>>>;
type Feed = Arc<tokio::sync::Mutex<OrderFeed<FileStore>>>;

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

/// The seller's access token granting `sell.fulfillment`: the fake's consent page visited
/// over loopback, the code exchanged (blocking client, off the runtime's threads).
fn seller_token(fake: &FakeMarketplace) -> Arc<dyn AccessTokenSource> {
    use marketplace_client::oauth as blocking;
    use marketplace_client::oauth::AccessTokenSource as _;
    let endpoints = blocking::Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let config = blocking::OAuthConfig::new(endpoints)
        .with_credentials(fake.client_id(), fake.client_secret())
        .with_redirect_uri("Fake_Company-FakeApp-PRD-abcdefghi");
    let client = Arc::new(blocking::OAuthClient::from_config(&config).unwrap());
    let scopes = blocking::ScopeSet::new([fake.scope("/sell.fulfillment")]);
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

/// The seller's order feed (file store, the fake's clock), and the application's notification
/// endpoint served by axum, whose callback wakes the feed for an ORDER_CONFIRMATION's order;
/// the endpoint subscribed to ORDER_CONFIRMATION for the seller on the fake.
async fn app() -> App {
    let fake = Arc::new(FakeMarketplace::new());
    let state = tempfile::tempdir().unwrap();
    let token = {
        let fake = fake.clone();
        tokio::task::spawn_blocking(move || seller_token(&fake))
            .await
            .unwrap()
    };
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0);
    let clock = fake.state().clone();
    let feed: Feed = Arc::new(tokio::sync::Mutex::new(
        OrderFeed::new(
            Orders::new(ApiClient::new(config, token).unwrap()),
            FileStore::new(state.path()),
            SELLER,
        )
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
    fake.subscribe_order_confirmations(SELLER, &url);
    let listing = fake.add_listing(SELLER, "BOLT-1", 100, "1.00");
    App {
        fake,
        feed,
        handed,
        notified,
        listing,
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
