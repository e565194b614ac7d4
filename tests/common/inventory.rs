//! The Inventory API of the fake marketplace with a seller's user token, as the listing tests
//! and benches use it (included with `#[path]`; no tests here): no retries, of the client or
//! of `publish`, so that a fault is the failure it stands for.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use fake_marketplace::FakeMarketplace;
use marketplace_client::api::{ApiClient, ClientConfig};
use marketplace_client::oauth::{
    AccessTokenSource, Endpoints, MemoryStore, OAuthClient, OAuthConfig, ScopeSet,
    UserTokenProvider,
};
use marketplace_listing::blocking::Inventory;

/// The scope eBay's Inventory API reference gives every call that writes (createOffer,
/// publishOffer, bulkPublishOffer, …), as the fake's scope URL.
pub const INVENTORY: &str = "/sell.inventory";

/// A seller's user tokens on `fake` for `scopes` (suffixes of `{base_url}/oauth/api_scope`,
/// such as [`INVENTORY`]): the fake's consent page visited over loopback, the code exchanged,
/// refreshed by a `UserTokenProvider`.
pub fn seller_tokens(fake: &FakeMarketplace, scopes: &[&str]) -> Arc<dyn AccessTokenSource> {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let config = OAuthConfig::new(endpoints)
        .with_credentials(fake.client_id(), fake.client_secret())
        .with_redirect_uri("Fake_Company-FakeApp-PRD-abcdefghi");
    let client = Arc::new(OAuthClient::from_config(&config).unwrap());
    let scopes = ScopeSet::new(scopes.iter().map(|s| fake.scope(s)));
    let request = client.consent_request(&scopes).unwrap();
    let code = request
        .complete(&fake_marketplace::consent_redirect(request.url().as_str()).unwrap())
        .expect("consent granted");
    let provider = UserTokenProvider::new(client, Arc::new(MemoryStore::new()), "seller-1");
    provider
        .exchange_code(&code, request.scopes())
        .expect("the code exchanged");
    Arc::new(provider)
}

/// A client of `fake` with `tokens`, without retries.
pub fn api_with(fake: &FakeMarketplace, tokens: Arc<dyn AccessTokenSource>) -> ApiClient {
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0);
    ApiClient::new(config, tokens).unwrap()
}

/// A client of `fake` with a seller's token granting `sell.inventory`, without retries.
pub fn api(fake: &FakeMarketplace) -> ApiClient {
    api_with(fake, seller_tokens(fake, &[INVENTORY]))
}

/// [`api`]'s Inventory API, `publish` without retries either (a failure is the crash).
pub fn inventory(fake: &FakeMarketplace) -> Inventory {
    Inventory::new(api(fake)).with_retries(0, Duration::ZERO)
}
