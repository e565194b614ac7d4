//! The Inventory API of the fake marketplace with an application token, as the listing tests
//! and benches use it (included with `#[path]`; no tests here): no retries, of the client or
//! of `publish`, so that a fault is the failure it stands for.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use fake_marketplace::FakeMarketplace;
use marketplace_client::api::{ApiClient, ClientConfig};
use marketplace_client::oauth::{ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig};
use marketplace_listing::blocking::Inventory;

/// A client of `fake` with its application's token, without retries.
pub fn api(fake: &FakeMarketplace) -> ApiClient {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0);
    ApiClient::new(config, Arc::new(ApplicationTokenProvider::new(oauth))).unwrap()
}

/// [`api`]'s Inventory API, `publish` without retries either (a failure is the crash).
pub fn inventory(fake: &FakeMarketplace) -> Inventory {
    Inventory::new(api(fake)).with_retries(0, Duration::ZERO)
}
