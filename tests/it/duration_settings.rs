//! No public `Duration` setting panics: every time-out, back-off, margin and delay of the
//! clients and providers, set to `Duration::MAX` (and to zero where zero means something),
//! then used by a call against the fake marketplace over loopback. (The PostgreSQL store's
//! settings: crates/marketplace-client-postgres/tests/it/settings.rs.)

use crate::taxonomy_support as support;

use std::sync::Arc;
use std::time::Duration;

use fake_marketplace::{FakeMarketplace, Fault, TOKEN_PATH};
use marketplace_client::Marketplace;
use marketplace_client::api::{ApiClient, ApiRequest};
use marketplace_client::oauth::{
    AccessTokenSource, ApplicationTokenProvider, Endpoints, HttpOptions, OAuthClient, OAuthConfig,
    OAuthError,
};
use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient};
use marketplace_client::test_util::RecordingSleeper;

const DEFAULT_TREE: &str = "/commerce/taxonomy/v1/get_default_category_tree_id";

fn oauth_config(fake: &FakeMarketplace) -> OAuthConfig {
    OAuthConfig::new(Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap())
        .with_credentials(fake.client_id(), fake.client_secret())
}

fn config_with(fake: &FakeMarketplace, d: Duration) -> ClientConfig {
    ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_connect_timeout(d)
        .with_timeout(d)
        .with_backoff(d, d)
        .with_max_retry_after(d)
        .with_download_timeout(d)
}

fn unavailable() -> Fault {
    Fault::Status {
        status: 503,
        body: "down".into(),
        headers: Vec::new(),
    }
}

#[test]
fn the_blocking_clients_take_any_time_out_and_back_off() {
    for d in [Duration::MAX, Duration::ZERO] {
        let fake = FakeMarketplace::new();
        let sleeper = Arc::new(RecordingSleeper::default());
        // Time-outs of zero fail every call: only the back-offs are zero then.
        let config = if d.is_zero() {
            support::config(&fake)
                .with_backoff(d, d)
                .with_max_retry_after(d)
        } else {
            config_with(&fake, d)
        };
        let client = TaxonomyClient::new(config.clone(), support::tokens(&fake))
            .unwrap()
            .with_sleeper(sleeper.clone());
        fake.fail_next(DEFAULT_TREE, unavailable());
        fake.fail_next(
            DEFAULT_TREE,
            Fault::TooManyRequests {
                retry_after_secs: 60,
            },
        );
        let answer = client.default_tree_id("EBAY_US");
        if d.is_zero() {
            // A Retry-After beyond the longest wait (zero) is the caller's to honour.
            assert!(
                matches!(&answer, Err(e) if e.retry_after() == Some(Duration::from_secs(60))),
                "{d:?}: {answer:?}"
            );
            assert_eq!(
                sleeper.delays(),
                [Duration::ZERO],
                "{d:?}: one wait, of zero"
            );
        } else {
            assert!(answer.is_ok(), "{d:?}: {answer:?}");
            assert_eq!(sleeper.delays().len(), 2, "{d:?}: two waits");
            assert!(sleeper.delays().contains(&Duration::from_secs(60)), "{d:?}");
        }

        let dir = tempfile::tempdir().unwrap();
        let file = client.fetch_item_aspects(
            Marketplace::Us,
            &dir.path().join("EBAY_US.json.gz"),
            &mut |_, _| {},
        );
        assert!(file.is_ok(), "{d:?}: {file:?}");

        let api = ApiClient::new(config, support::tokens(&fake))
            .unwrap()
            .with_sleeper(sleeper.clone());
        let sent = api.send(
            ApiRequest::get("/commerce/taxonomy/v1/get_default_category_tree_id")
                .query("marketplace_id", "EBAY_US")
                .timeout(if d.is_zero() {
                    Duration::from_secs(30)
                } else {
                    d
                }),
        );
        assert!(sent.is_ok(), "{d:?}: {sent:?}");
    }
}

#[test]
fn the_blocking_providers_take_any_margin_back_off_and_time_out() {
    for d in [Duration::MAX, Duration::ZERO] {
        let fake = FakeMarketplace::new();
        let client = if d.is_zero() {
            OAuthClient::from_config(&oauth_config(&fake)).unwrap()
        } else {
            OAuthClient::with_options(
                &oauth_config(&fake),
                HttpOptions::default()
                    .with_timeout(d)
                    .with_connect_timeout(d),
            )
            .unwrap()
        };
        let provider = ApplicationTokenProvider::new(client)
            .with_refresh_margin(d)
            .with_retry_backoff(d);
        fake.fail_next(TOKEN_PATH, unavailable());
        let failed = provider.access_token();
        assert!(failed.is_err(), "{d:?}: the grant failed");
        let again = provider.access_token();
        if d.is_zero() {
            assert!(again.is_ok(), "{d:?}: no back-off: {again:?}");
        } else {
            assert!(
                matches!(again, Err(OAuthError::BackingOff { .. })),
                "{d:?}: {again:?}"
            );
            provider.retry_now();
        }
        let token = provider.access_token();
        assert!(token.is_ok(), "{d:?}: {token:?}");
        // A margin of MAX renews at half the lifetime at the soonest: the token is kept.
        let same = provider.access_token().unwrap();
        assert_eq!(same.secret(), token.unwrap().secret(), "{d:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_clients_and_providers_take_any_setting() {
    use marketplace_client::aio::oauth::{
        AccessTokenSource as _, ApplicationTokenProvider, OAuthClient,
    };
    use marketplace_client::aio::taxonomy::TaxonomyClient;
    for d in [Duration::MAX, Duration::ZERO] {
        let fake = FakeMarketplace::new();
        let client = if d.is_zero() {
            OAuthClient::from_config(&oauth_config(&fake)).unwrap()
        } else {
            OAuthClient::with_timeout(&oauth_config(&fake), d).unwrap()
        };
        let provider = Arc::new(
            ApplicationTokenProvider::new(client)
                .with_refresh_margin(d)
                .with_retry_backoff(d),
        );
        fake.fail_next(TOKEN_PATH, unavailable());
        assert!(provider.access_token().await.is_err(), "{d:?}");
        let again = provider.access_token().await;
        if d.is_zero() {
            assert!(again.is_ok(), "{d:?}: {again:?}");
        } else {
            assert!(
                matches!(again, Err(OAuthError::BackingOff { .. })),
                "{d:?}: {again:?}"
            );
            provider.retry_now();
        }
        assert!(provider.access_token().await.is_ok(), "{d:?}");

        // No real back-off can be waited for here: MAX time-outs, zero back-offs.
        let config = config_with(&fake, Duration::MAX).with_backoff(Duration::ZERO, Duration::ZERO);
        let config = if d.is_zero() {
            config.with_max_retry_after(d)
        } else {
            config
        };
        let taxonomy = TaxonomyClient::new(config, provider.clone()).unwrap();
        fake.fail_next(DEFAULT_TREE, unavailable());
        let answer = taxonomy.default_tree_id("EBAY_US").await;
        assert!(answer.is_ok(), "{d:?}: {answer:?}");
        let dir = tempfile::tempdir().unwrap();
        let file = taxonomy
            .fetch_item_aspects(Marketplace::Us, &dir.path().join("a.json.gz"), |_, _| {})
            .await;
        assert!(file.is_ok(), "{d:?}: {file:?}");
    }
}
