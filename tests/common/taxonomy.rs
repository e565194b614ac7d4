//! Helpers shared by the taxonomy client tests (included with `#[path]`; no tests here).
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use fake_marketplace::FakeMarketplace;
use marketplace_client::oauth::{
    AccessTokenSource, ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
};
use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient};
use marketplace_client::test_util::RecordingSleeper;
use marketplaces::Marketplace;
use taxonomy_tree::tree::{Category, CategoryTree, TreeMeta};

/// A fake with the default configuration (no tree delay).
pub fn fake() -> FakeMarketplace {
    FakeMarketplace::new()
}

/// A token provider that asks the fake's token endpoint (so token requests can be counted).
pub fn tokens(fake: &FakeMarketplace) -> Arc<dyn AccessTokenSource> {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).expect("endpoints");
    let client = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )
    .expect("oauth client");
    Arc::new(ApplicationTokenProvider::new(client))
}

/// The fake's base URL with a 1 ms back-off, so retries cost nothing.
pub fn config(fake: &FakeMarketplace) -> ClientConfig {
    ClientConfig::for_base_url(&fake.base_url())
        .expect("loopback base URL")
        .with_backoff(Duration::from_millis(1), Duration::from_millis(8))
}

/// A client of the fake with `config` and a recording sleeper (no real waits).
pub fn client_with(
    fake: &FakeMarketplace,
    config: ClientConfig,
) -> (TaxonomyClient, Arc<RecordingSleeper>) {
    let sleeper = Arc::new(RecordingSleeper::default());
    let client = TaxonomyClient::new(config, tokens(fake))
        .expect("client")
        .with_sleeper(sleeper.clone());
    (client, sleeper)
}

/// A client of the fake with [`config`].
pub fn client(fake: &FakeMarketplace) -> (TaxonomyClient, Arc<RecordingSleeper>) {
    client_with(fake, config(fake))
}

/// A small valid tree for `site`: Root > {Phones > {Smartphones, Cases}, Books}.
pub fn small_tree(site: Marketplace) -> CategoryTree {
    let cat = |id, name: &str, parent, children: Vec<u32>| Category {
        id,
        name: name.into(),
        parent,
        leaf: parent.is_some() && children.is_empty(),
        children,
    };
    CategoryTree {
        meta: TreeMeta {
            tree_id: site.tree_id(),
            marketplace_id: site.marketplace_id().into(),
            language: site.default_language().into(),
            version: "7".into(),
            taken_at: "2026-01-01".into(),
            source: "test".into(),
            note: None,
            complete: true,
        },
        categories: vec![
            cat(0, "Root", None, vec![10, 20]),
            cat(10, "Phones", Some(0), vec![11, 12]),
            cat(11, "Smartphones", Some(10), vec![]),
            cat(12, "Phone Cases", Some(10), vec![]),
            cat(20, "Books", Some(0), vec![]),
        ],
    }
}

/// The scopes a seller consents to for the signed calls the fake serves: the Key Management
/// API (`api_scope`), the Finances API (`sell.finances`) and issueRefund (`sell.fulfillment`),
/// as suffixes of `{base_url}/oauth/api_scope`.
pub const SELLER_SCOPES: [&str; 3] = ["", "/sell.finances", "/sell.fulfillment"];

/// The fake's OAuth settings with a RuName, for consent.
pub fn seller_config(fake: &FakeMarketplace) -> OAuthConfig {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).expect("endpoints");
    OAuthConfig::new(endpoints)
        .with_credentials(fake.client_id(), fake.client_secret())
        .with_redirect_uri("Fake_Company-FakeApp-PRD-abcdefghi")
}

/// A seller's user tokens: consent to [`SELLER_SCOPES`] on the fake's consent page, the code
/// exchanged, refreshed by a `UserTokenProvider` (what the Finances API and issueRefund take).
pub fn seller_tokens(fake: &FakeMarketplace) -> Arc<dyn AccessTokenSource> {
    use marketplace_client::oauth::{MemoryStore, ScopeSet, UserTokenProvider};
    let client = Arc::new(OAuthClient::from_config(&seller_config(fake)).expect("oauth client"));
    let scopes = ScopeSet::new(SELLER_SCOPES.iter().map(|s| fake.scope(s)));
    let request = client.consent_request(&scopes).expect("a consent request");
    let code = request
        .complete(&fake_marketplace::consent_redirect(request.url().as_str()).unwrap())
        .expect("consent granted");
    let provider = UserTokenProvider::new(client, Arc::new(MemoryStore::new()), "seller-1");
    provider
        .exchange_code(&code, request.scopes())
        .expect("the code exchanged");
    Arc::new(provider)
}

/// [`seller_tokens`] for the async front.
pub async fn aio_seller_tokens(
    fake: &FakeMarketplace,
) -> Arc<dyn marketplace_client::aio::oauth::AccessTokenSource> {
    use marketplace_client::aio::oauth::{MemoryStore, OAuthClient, ScopeSet, UserTokenProvider};
    let client = Arc::new(OAuthClient::from_config(&seller_config(fake)).expect("oauth client"));
    let scopes = ScopeSet::new(SELLER_SCOPES.iter().map(|s| fake.scope(s)));
    let request = client.consent_request(&scopes).expect("a consent request");
    let url = request.url().to_string();
    let location =
        tokio::task::spawn_blocking(move || fake_marketplace::consent_redirect(&url).unwrap())
            .await
            .unwrap();
    let code = request.complete(&location).expect("consent granted");
    let provider = UserTokenProvider::new(client, Arc::new(MemoryStore::new()), "seller-1");
    provider
        .exchange_code(&code, request.scopes())
        .await
        .expect("the code exchanged");
    Arc::new(provider)
}

/// The `Authorization` header of the client's first request to `path` on `fake`, and a plain
/// HTTP client (no proxy, no gzip): to ask the fake directly what the client does not send.
pub fn first_bearer_and_http(
    fake: &FakeMarketplace,
    path: &str,
) -> (String, reqwest::blocking::Client) {
    let token = fake
        .requests_to(path)
        .first()
        .and_then(|r| r.header("Authorization").map(str::to_owned))
        .expect("a request of the client's to that path");
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    (token, http)
}
