//! Helpers shared by the OAuth integration tests (included with `#[path]`; no tests here).
#![allow(dead_code)]

use std::time::Duration;

use fake_marketplace::{AUTHORIZE_PATH, FakeMarketplace};
use marketplace_client::oauth::{ConsentRequest, Endpoints, OAuthClient, OAuthConfig};

/// The RuName the tests use as redirect_uri.
pub const RU_NAME: &str = "Fake_Company-FakeApp-PRD-abcdefghi";

/// The fake's configuration for tests of our client's encoding: strict (see
/// `FakeConfig::strict_encoding`): a parameter the client did not encode is a `400`, and codes
/// and refresh tokens carry `%`, `+`, `/` and `:` besides eBay's `^` and `#`.
pub fn strict_config() -> fake_marketplace::FakeConfig {
    fake_marketplace::FakeConfig {
        strict_encoding: true,
        ..fake_marketplace::FakeConfig::default()
    }
}

/// A fake started with [`strict_config`].
pub fn strict_fake() -> FakeMarketplace {
    FakeMarketplace::start(strict_config()).expect("the fake marketplace binds a loopback port")
}

/// The fake's endpoints.
pub fn endpoints(fake: &FakeMarketplace) -> Endpoints {
    Endpoints::custom(&fake.base_url(), &fake.auth_url()).expect("loopback endpoints")
}

/// The fake's endpoints and credentials, with [`RU_NAME`] as redirect URI.
pub fn oauth_config(fake: &FakeMarketplace) -> OAuthConfig {
    OAuthConfig::new(endpoints(fake))
        .with_credentials(fake.client_id(), fake.client_secret())
        .with_redirect_uri(RU_NAME)
}

/// A client of the fake.
pub fn client(fake: &FakeMarketplace) -> OAuthClient {
    OAuthClient::from_config(&oauth_config(fake)).expect("client")
}

/// A client of the fake with a request time-out.
pub fn client_with_timeout(fake: &FakeMarketplace, timeout: Duration) -> OAuthClient {
    OAuthClient::with_timeout(&oauth_config(fake), timeout).expect("client")
}

/// A reqwest client that does not follow redirects.
pub fn browser_no_redirect() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap()
}

/// Plays the user's browser: opens the consent URL on the fake and returns the Location it
/// redirects to.
pub fn visit_consent(url: &str) -> String {
    let response = browser_no_redirect().get(url).send().expect("consent page");
    assert_eq!(
        response.status().as_u16(),
        302,
        "consent page must redirect"
    );
    response
        .headers()
        .get("location")
        .expect("Location")
        .to_str()
        .unwrap()
        .to_owned()
}

/// Runs the whole consent step against the fake and returns the redirect address.
pub fn consent_redirect(fake: &FakeMarketplace, request: &ConsentRequest) -> String {
    assert!(
        request
            .url()
            .as_str()
            .starts_with(&format!("{}{AUTHORIZE_PATH}?", fake.auth_url()))
    );
    visit_consent(request.url().as_str())
}

/// Percent-encodes like a form (independent of the url crate): unreserved kept, space as `+`.
pub fn form_encode(s: &str) -> String {
    fake_marketplace::percent_encode(s).replace("%20", "+")
}

/// The expected Basic header, built by hand as eBay documents it: base64 of
/// `client_id:client_secret`, nothing encoded inside.
pub fn expected_basic(id: &str, secret: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
    )
}

/// A loopback port with nothing listening on it: bound, then released (a connection to it
/// is refused until something binds it again).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().expect("its address").port()
}

/// Endpoints and the fake's default credentials for a fake not started yet, on `port`.
pub fn client_for_port(port: u16) -> OAuthClient {
    let base = format!("http://127.0.0.1:{port}");
    let config = fake_marketplace::FakeConfig::default();
    OAuthClient::from_config(
        &OAuthConfig::new(Endpoints::custom(&base, &base).expect("loopback endpoints"))
            .with_credentials(config.client_id, config.client_secret)
            .with_redirect_uri(RU_NAME),
    )
    .expect("client")
}
