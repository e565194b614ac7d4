//! The fake driven with the exact requests of clients nobody here wrote: eBay's official OAuth
//! client for Node.js (`ebay-oauth-nodejs-client`, its `generateUserAuthorizationUrl`,
//! `exchangeCodeForAccessToken` and `getAccessToken`), which builds its consent URL and its
//! token forms by string concatenation, nothing encoded but the `%20` between scopes. The fake
//! reads them as eBay does; with `strict_encoding` (what our client's own tests use) it still
//! refuses them.

use fake_marketplace::{AUTHORIZE_PATH, FakeConfig, FakeMarketplace, TOKEN_PATH, parse_query};
use serde_json::Value;

/// The RuName eBay's client sends as `redirect_uri`, as it is.
const RU_NAME: &str = "Fake_Company-FakeApp-PRD-abcdefghi";

/// The scopes as eBay's client joins them: `scopes.join('%20')`, the URLs as they are.
fn node_scopes() -> String {
    [
        "https://api.ebay.com/oauth/api_scope",
        "https://api.ebay.com/oauth/api_scope/sell.inventory",
        "https://api.ebay.com/oauth/api_scope/sell.finances",
    ]
    .join("%20")
}

fn browser() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap()
}

/// `generateUserAuthorizationUrl(env, scopes, {state})`: `client_id=…&redirect_uri=…&
/// response_type=code&scope=…&state=…`, concatenated, then opened in a browser. Returns the
/// status and the `Location` the consent page answered.
fn node_consent(fake: &FakeMarketplace, state: &str) -> (u16, String) {
    let url = format!(
        "{}{AUTHORIZE_PATH}?client_id={}&redirect_uri={RU_NAME}&response_type=code&scope={}&state={state}",
        fake.auth_url(),
        fake.client_id(),
        node_scopes()
    );
    let answer = browser().get(&url).send().expect("consent page");
    let status = answer.status().as_u16();
    let location = answer
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_owned())
        .unwrap_or_else(|| answer.text().unwrap_or_default());
    (status, location)
}

/// `postRequest(data, credentials)`: a `POST` of `data` as it is, with the headers eBay's
/// client sets (`Content-Length`, `Content-Type`, `authorization: Basic …`).
fn node_post(fake: &FakeMarketplace, data: &str) -> (u16, Value) {
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        fake.client_id(),
        fake.client_secret()
    ));
    let answer = browser()
        .post(format!("{}{TOKEN_PATH}", fake.base_url()))
        .header("Content-Length", data.len())
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("authorization", format!("Basic {basic}"))
        .body(data.to_owned())
        .send()
        .expect("token endpoint");
    let status = answer.status().as_u16();
    (status, answer.json().unwrap_or(Value::Null))
}

/// The code of a consent redirect: as it stands in the `Location` (still encoded) and
/// decoded (what a web framework's `req.query.code` hands the application).
fn code_of(location: &str) -> (String, String) {
    let query = location.split_once('?').expect("a query").1;
    let raw = query
        .split('&')
        .find_map(|p| p.strip_prefix("code="))
        .unwrap_or_else(|| panic!("no code in {location}"))
        .to_owned();
    let decoded = parse_query(query)
        .into_iter()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1;
    (raw, decoded)
}

/// `exchangeCodeForAccessToken(env, code)`: `code=${code}&grant_type=authorization_code&
/// redirect_uri=${redirectUri}`.
fn node_exchange(fake: &FakeMarketplace, code: &str) -> (u16, Value) {
    node_post(
        fake,
        &format!("code={code}&grant_type=authorization_code&redirect_uri={RU_NAME}"),
    )
}

#[test]
fn ebay_oauth_nodejs_client_consents_exchanges_and_refreshes_against_the_fake() {
    let fake = FakeMarketplace::new();

    // The consent URL as eBay's client builds it: `:` and `/` of the scope URLs unencoded.
    let (status, location) = node_consent(&fake, "node-state-1");
    assert_eq!(status, 302, "consent page: {location}");
    assert!(location.contains("state=node-state-1"), "{location}");
    assert!(!location.contains("error="), "{location}");

    // The code exchanged as it stands in the redirect (still percent-encoded)…
    let (raw, _) = code_of(&location);
    let (status, first) = node_exchange(&fake, &raw);
    assert_eq!(status, 200, "code as in the redirect: {first}");

    // …and decoded, as an application's web framework hands it over: `^` and `#` raw.
    let (_, location) = node_consent(&fake, "node-state-2");
    let (_, decoded) = code_of(&location);
    assert!(decoded.contains('^') && decoded.contains('#'), "{decoded}");
    let (status, second) = node_exchange(&fake, &decoded);
    assert_eq!(status, 200, "decoded code: {second}");
    assert_eq!(second["token_type"], "User Access Token");

    // getAccessToken(env, refreshToken, scopes): the token as issued, the scopes unencoded.
    for answer in [&first, &second] {
        let refresh = answer["refresh_token"].as_str().expect("a refresh token");
        let (status, refreshed) = node_post(
            &fake,
            &format!(
                "refresh_token={refresh}&grant_type=refresh_token&scope={}",
                node_scopes()
            ),
        );
        assert_eq!(status, 200, "refresh: {refreshed}");
        let token = refreshed["access_token"].as_str().unwrap();
        let issued = fake.issued_token(token).expect("issued by the fake");
        assert_eq!(issued.scopes.len(), 3, "{:?}", issued.scopes);
    }
}

#[test]
fn codes_and_refresh_tokens_have_ebays_shape() {
    let fake = FakeMarketplace::new();
    let (_, location) = node_consent(&fake, "s");
    let (_, code) = code_of(&location);
    let (status, answer) = node_exchange(&fake, &code);
    assert_eq!(status, 200, "{answer}");
    let refresh = answer["refresh_token"].as_str().unwrap().to_owned();
    let access = answer["access_token"].as_str().unwrap().to_owned();
    for (what, token) in [
        ("code", &code),
        ("refresh token", &refresh),
        ("access", &access),
    ] {
        assert!(token.starts_with("v^1.1#i^1#"), "{what}: {token}");
        let body = token.trim_end_matches('=');
        assert!(
            body.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '^' | '#' | '.')),
            "{what} holds a character eBay's tokens do not: {token}"
        );
    }
}

#[test]
fn strict_encoding_still_refuses_what_a_client_did_not_encode() {
    let fake = FakeMarketplace::start(FakeConfig {
        strict_encoding: true,
        ..FakeConfig::default()
    })
    .unwrap();
    let (status, body) = node_consent(&fake, "s");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("malformed query"), "{body}");
    let (status, answer) = node_post(
        &fake,
        &format!(
            "refresh_token=v^1.1#x&grant_type=refresh_token&scope={}",
            node_scopes()
        ),
    );
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"], "invalid_request");
}
