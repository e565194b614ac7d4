//! A checked `LeafCategory` (taxonomy-data's `category!`), a `Category` and a `Site` go to
//! both taxonomy clients as they are, against the fake marketplace over loopback: each
//! request carries the category's marketplace (header, tree and language) and its id.

use crate::taxonomy_support as support;

use std::sync::Arc;

use fake_marketplace::taxonomy::{aspects_path, subtree_path, suggestions_path};
use fake_marketplace::{FakeMarketplace, Request};
use marketplace_client::{Marketplace, MarketplaceCategory};
use marketplaces::MARKETPLACE_HEADER;
use support::*;
use taxonomy_data::{LeafCategory, Site};
use taxonomy_macros::category;

/// Handys & Smartphones on the German site.
const HANDYS: LeafCategory = category!(EBAY_DE, "9355").leaf();

/// The last request the fake saw at `path`.
fn last_request_to(fake: &FakeMarketplace, path: &str) -> Request {
    fake.requests()
        .into_iter()
        .rev()
        .find(|r| r.path == path)
        .unwrap_or_else(|| panic!("no request to {path}"))
}

/// The request went to `site`'s tree with `site`'s marketplace header and language, and asked
/// for `category_id`.
fn assert_addressed(r: &Request, site: Marketplace, category_id: Option<u32>) {
    assert_eq!(
        r.headers_named(MARKETPLACE_HEADER),
        vec![site.marketplace_id()]
    );
    assert_eq!(r.header("Accept-Language"), Some(site.default_language()));
    assert_eq!(
        r.query_param("category_id"),
        category_id.map(|id| id.to_string()),
        "{}",
        r.path
    );
}

#[test]
fn the_blocking_client_takes_a_leaf_category_a_category_and_a_site() {
    assert_eq!(
        (HANDYS.marketplace(), HANDYS.category_id()),
        (Marketplace::De, 9355)
    );
    let fake = fake();
    let (client, _) = client(&fake);

    let aspects = client.item_aspects(HANDYS).unwrap();
    assert_eq!(aspects.category_id, 9355);
    assert!(!aspects.aspects.is_empty());
    assert_addressed(
        &last_request_to(&fake, &aspects_path(77)),
        Marketplace::De,
        Some(9355),
    );
    // The pair says the same as the checked leaf.
    assert_eq!(
        client.item_aspects((Marketplace::De, 9355)).unwrap(),
        aspects
    );

    // A leaf of another site goes to that site's tree (Australia: tree 15).
    let au = category!(EBAY_AU, "9355");
    assert_eq!(client.item_aspects(au).unwrap().category_id, 9355);
    assert_addressed(
        &last_request_to(&fake, &aspects_path(15)),
        Marketplace::Au,
        Some(9355),
    );

    // A category that is not a leaf, for getCategorySubtree.
    let top = Site::De.top_level().next().expect("a top-level category");
    let subtree = client.category_subtree(top).unwrap();
    assert_eq!(subtree.root().id, top.id());
    assert_addressed(
        &last_request_to(&fake, &subtree_path(77)),
        Marketplace::De,
        Some(top.id()),
    );

    // A site where only a marketplace is taken.
    client.category_suggestions(Site::Au, "handy").unwrap();
    assert_addressed(
        &last_request_to(&fake, &suggestions_path(15)),
        Marketplace::Au,
        None,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_client_takes_a_leaf_category_a_category_and_a_site() {
    use marketplace_client::aio::oauth::{
        ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
    };
    use marketplace_client::aio::taxonomy::TaxonomyClient;

    let fake = fake();
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let tokens = Arc::new(ApplicationTokenProvider::new(oauth));
    let client = TaxonomyClient::new(config(&fake), tokens).unwrap();

    let aspects = client.item_aspects(HANDYS).await.unwrap();
    assert_eq!(aspects.category_id, 9355);
    assert_addressed(
        &last_request_to(&fake, &aspects_path(77)),
        Marketplace::De,
        Some(9355),
    );
    assert_eq!(
        client.item_aspects(&HANDYS).await.unwrap(),
        client.item_aspects((Site::De, 9355)).await.unwrap()
    );

    let au = category!(EBAY_AU, "9355");
    client.item_aspects(au).await.unwrap();
    assert_addressed(
        &last_request_to(&fake, &aspects_path(15)),
        Marketplace::Au,
        Some(9355),
    );

    let top = Site::Au.top_level().next().expect("a top-level category");
    let subtree = client.category_subtree(top).await.unwrap();
    assert_eq!(subtree.root().id, top.id());
    assert_addressed(
        &last_request_to(&fake, &subtree_path(15)),
        Marketplace::Au,
        Some(top.id()),
    );

    client
        .category_suggestions(Site::De, "handy")
        .await
        .unwrap();
    assert_addressed(
        &last_request_to(&fake, &suggestions_path(77)),
        Marketplace::De,
        None,
    );
}
