//! A host that answers 401 to every call does not spend the token quota: a renewal caused by
//! a 401 happens at most once per back-off (per provider), and the error says that the
//! renewed token was refused too. Both fronts, against the fake over loopback, counting the
//! token grants it saw.

use std::sync::Arc;

use fake_marketplace::{FakeMarketplace, Fault};
use marketplace_client::Marketplace;

const SUGGESTIONS_US: &str = "/commerce/taxonomy/v1/category_tree/0/get_category_suggestions";
const CALLS: usize = 50;

fn unauthorized() -> Fault {
    Fault::Status {
        status: 401,
        body: String::new(),
        headers: vec![],
    }
}

/// What every call after the first must say: the renewed token was refused too.
fn says_renewed_token_refused(message: &str) -> bool {
    message.contains("renewed after a refusal was refused too")
}

/// The figures: 50 failing calls made 51 token grants. Now: the first grant, one
/// renewal after the first 401, and none after (the default back-off is 30 s).
#[test]
fn blocking_calls_answered_401_renew_the_token_once_per_backoff() {
    use marketplace_client::oauth::{
        ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
    };
    use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient};
    let fake = FakeMarketplace::new();
    fake.fail_times(SUGGESTIONS_US, unauthorized(), 10 * CALLS);
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let provider = Arc::new(ApplicationTokenProvider::new(oauth));
    let client = TaxonomyClient::new(
        ClientConfig::for_base_url(&fake.base_url()).unwrap(),
        provider,
    )
    .unwrap();
    let mut last = String::new();
    for _ in 0..CALLS {
        let error = client
            .category_suggestions(Marketplace::Us, "iphone")
            .unwrap_err();
        last = error.to_string();
    }
    assert_eq!(
        fake.token_requests().len(),
        2,
        "token grants for {CALLS} calls answered 401; the last error: {last}"
    );
    assert!(says_renewed_token_refused(&last), "{last}");
    assert!(
        fake.requests_to(SUGGESTIONS_US).len() <= 3,
        "no call is sent while no token may be renewed: {}",
        fake.requests_to(SUGGESTIONS_US).len()
    );
}

/// The same on the async front.
#[tokio::test(flavor = "current_thread")]
async fn async_calls_answered_401_renew_the_token_once_per_backoff() {
    use marketplace_client::aio::oauth::{
        ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
    };
    use marketplace_client::aio::taxonomy::{ClientConfig, TaxonomyClient};
    let fake = FakeMarketplace::new();
    fake.fail_times(SUGGESTIONS_US, unauthorized(), 10 * CALLS);
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let provider = Arc::new(ApplicationTokenProvider::new(oauth));
    let client = TaxonomyClient::new(
        ClientConfig::for_base_url(&fake.base_url()).unwrap(),
        provider,
    )
    .unwrap();
    let mut last = String::new();
    for _ in 0..CALLS {
        let error = client
            .category_suggestions(Marketplace::Us, "iphone")
            .await
            .unwrap_err();
        last = error.to_string();
    }
    assert_eq!(
        fake.token_requests().len(),
        2,
        "token grants for {CALLS} calls answered 401; the last error: {last}"
    );
    assert!(says_renewed_token_refused(&last), "{last}");
}
