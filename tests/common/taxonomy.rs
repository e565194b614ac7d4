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
