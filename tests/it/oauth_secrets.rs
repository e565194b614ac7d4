//! No secret can be printed: every secret-bearing type and every error, formatted with `{:?}`
//! and `{}`, is searched for the secrets involved — including errors built from server
//! answers that echo secrets back.

use crate::oauth_support as support;

use std::sync::Arc;
use std::time::Duration;

use fake_marketplace::{FakeConfig, FakeMarketplace, Fault, Response, TOKEN_PATH};
use marketplace_client::oauth::*;
use marketplace_client::test_util::parse_redirect;
use support::*;

const CLIENT_SECRET: &str = "PRD-SUPERSECRET-cert+id 42";

fn assert_clean(what: &str, text: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(!text.contains(secret), "{what} leaks {secret:?}: {text}");
        let encoded = form_encode(secret);
        assert!(
            !text.contains(&encoded),
            "{what} leaks encoded {encoded:?}: {text}"
        );
    }
}

fn check<T: std::fmt::Debug + std::fmt::Display>(what: &str, value: &T, secrets: &[&str]) {
    assert_clean(what, &format!("{value:?}"), secrets);
    assert_clean(what, &format!("{value:#?}"), secrets);
    assert_clean(what, &format!("{value}"), secrets);
}

fn check_debug<T: std::fmt::Debug>(what: &str, value: &T, secrets: &[&str]) {
    assert_clean(what, &format!("{value:?}"), secrets);
    assert_clean(what, &format!("{value:#?}"), secrets);
}

#[test]
fn secret_newtypes_print_redacted() {
    let values = ["v^1.1#i^1#SECRETVALUE", "another-SECRET"];
    for v in values {
        check_debug("ClientSecret", &ClientSecret::new(v), &[v]);
        check_debug("AccessToken", &AccessToken::new(v), &[v]);
        check_debug("RefreshToken", &RefreshToken::new(v), &[v]);
        check_debug("AuthorizationCode", &AuthorizationCode::new(v), &[v]);
        check_debug("CsrfState", &CsrfState::new(v), &[v]);
    }
    assert_eq!(
        format!("{:?}", ClientSecret::new("x")),
        "ClientSecret([redacted])"
    );
    assert_eq!(
        format!("{:?}", AccessToken::new("x")),
        "AccessToken([redacted])"
    );
    assert_eq!(
        format!("{:?}", RefreshToken::new("x")),
        "RefreshToken([redacted])"
    );
    assert_eq!(
        format!("{:?}", AuthorizationCode::new("x")),
        "AuthorizationCode([redacted])"
    );
    assert_eq!(
        format!("{:?}", CsrfState::new("x")),
        "CsrfState([redacted])"
    );
}

#[test]
fn containers_of_secrets_print_no_secret() {
    let fake = FakeMarketplace::start(FakeConfig {
        client_secret: CLIENT_SECRET.into(),
        rotate_refresh_tokens: true,
        ..FakeConfig::default()
    })
    .unwrap();
    let config = OAuthConfig::new(endpoints(&fake))
        .with_credentials(fake.client_id(), CLIENT_SECRET)
        .with_redirect_uri(RU_NAME);
    check_debug("OAuthConfig::with_credentials", &config, &[CLIENT_SECRET]);
    let client = Arc::new(OAuthClient::from_config(&config).unwrap());
    check_debug("OAuthClient", &client, &[CLIENT_SECRET]);

    let config = OAuthConfig::from_lookup(|name| match name {
        "MARKETPLACE_CLIENT_ID" => Some("id".into()),
        "MARKETPLACE_CLIENT_SECRET" => Some(CLIENT_SECRET.into()),
        "MARKETPLACE_ACCESS_TOKEN" => Some("READY-ACCESS-TOKEN".into()),
        _ => None,
    })
    .unwrap();
    check_debug(
        "OAuthConfig",
        &config,
        &[CLIENT_SECRET, "READY-ACCESS-TOKEN"],
    );
    check_debug(
        "AccessToken as AccessTokenSource",
        &AccessToken::new("READY-ACCESS-TOKEN"),
        &["READY-ACCESS-TOKEN"],
    );

    let app = client.client_credentials(&ScopeSet::default()).unwrap();
    let app_token = app.access_token.secret().to_owned();
    check_debug("TokenResponse", &app, &[&app_token, CLIENT_SECRET]);

    let scopes = ScopeSet::new([fake.scope("")]);
    let consent = client.consent_request(&scopes).unwrap();
    let state = consent.state().secret().to_owned();
    check_debug("ConsentRequest", &consent, &[&state]);
    let redirect = consent_redirect(&fake, &consent);
    let parsed = parse_redirect(&redirect).unwrap();
    let code = parsed.code.secret().to_owned();
    check_debug("AuthorizationResponse", &parsed, &[&code, &state]);

    let store = Arc::new(MemoryStore::new());
    let provider = UserTokenProvider::new(client.clone(), store.clone(), "seller");
    let code_value = consent.complete(&redirect).unwrap();
    let record = provider.exchange_code(&code_value, &scopes).unwrap();
    let refresh = record.refresh_token.secret().to_owned();
    let user_access = provider.access_token().unwrap().secret().to_owned();
    let all = [
        CLIENT_SECRET,
        &app_token,
        &state,
        &code,
        &refresh,
        &user_access,
    ];
    check_debug("StoredRefreshToken", &record, &all);
    check_debug("CachedToken", &provider.cached().unwrap(), &all);
    check_debug("UserTokenProvider", &provider, &all);
    check_debug("MemoryStore", &*store, &all);
    let app_provider = ApplicationTokenProvider::new(client.clone());
    app_provider.access_token().unwrap();
    check_debug("ApplicationTokenProvider", &app_provider, &all);
}

/// Routes that echo secrets back in error answers, as misbehaving servers and proxies do.
fn echoing_fake() -> FakeMarketplace {
    FakeMarketplace::start(FakeConfig {
        client_secret: CLIENT_SECRET.into(),
        ..FakeConfig::default()
    })
    .unwrap()
}

fn echo_route(fake: &FakeMarketplace, status: u16, shape: &'static str) {
    fake.route("POST", TOKEN_PATH, move |req, _| {
        let body = req.body_str();
        let auth = req.header("Authorization").unwrap_or_default().to_owned();
        let form = req.form().unwrap_or_default();
        let get = |k: &str| form.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).unwrap_or_default();
        let text = match shape {
            "raw" => format!("bad request: {body} with {auth} and {}", get("refresh_token")),
            "oauth" => serde_json::json!({
                "error": "invalid_grant",
                "error_description": format!("code {} / token {} / auth {auth}", get("code"), get("refresh_token")),
            })
            .to_string(),
            "token" => format!(
                r#"{{"access_token": "ECHOED-ACCESS-{}", "refresh_token": "{}", "expires_in": "later"}}"#,
                get("grant_type"),
                get("refresh_token")
            ),
            _ => unreachable!(),
        };
        Response::new(status, text).with_header("Content-Type", "application/json")
    });
}

#[test]
fn errors_from_echoing_servers_print_no_secret() {
    let refresh = "v^1.1#i^1#REFRESH-SECRET%+x";
    let code = AuthorizationCode::new("v^1.1#i^1#CODE-SECRET%+x");
    let mut errors: Vec<OAuthError> = Vec::new();
    for (status, shape) in [
        (400, "raw"),
        (500, "raw"),
        (429, "raw"),
        (400, "oauth"),
        (401, "oauth"),
        (200, "token"),
        (200, "raw"),
    ] {
        let fake = echoing_fake();
        echo_route(&fake, status, shape);
        let client = client_for_secret(&fake);
        errors.push(
            client
                .refresh(
                    &RefreshToken::new(refresh),
                    &ScopeSet::new([fake.scope("")]),
                )
                .unwrap_err(),
        );
        errors.push(client.exchange_code(&code).unwrap_err());
        errors.push(client.client_credentials(&ScopeSet::default()).unwrap_err());
    }
    let basic = expected_basic(support_client_id(), CLIENT_SECRET);
    let basic_b64 = basic.trim_start_matches("Basic ");
    let secrets = [
        refresh,
        code.secret(),
        CLIENT_SECRET,
        basic_b64,
        "ECHOED-ACCESS",
    ];
    assert!(errors.len() >= 21);
    for e in &errors {
        check("OAuthError", e, &secrets);
    }
    // The kinds seen: raw bodies kept (sanitized), OAuth descriptions, unexpected bodies.
    assert!(errors.iter().any(|e| matches!(e, OAuthError::Http { .. })));
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, OAuthError::Server { .. }))
    );
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, OAuthError::RateLimited { .. }))
    );
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, OAuthError::UnexpectedBody { .. }))
    );
}

fn support_client_id() -> &'static str {
    "FakeApp-PRD-0a1b2c3d4-5e6f7a8b"
}

fn client_for_secret(fake: &FakeMarketplace) -> OAuthClient {
    assert_eq!(fake.client_id(), support_client_id());
    OAuthClient::with_timeout(
        &OAuthConfig::new(endpoints(fake))
            .with_credentials(fake.client_id(), CLIENT_SECRET)
            .with_redirect_uri(RU_NAME),
        Duration::from_secs(1),
    )
    .unwrap()
}

#[test]
fn every_other_error_prints_no_secret() {
    let fake = echoing_fake();
    let client = client_for_secret(&fake);
    let secrets = [CLIENT_SECRET, "STATE-SECRET", "CODE-SECRET"];
    let mut errors: Vec<OAuthError> = Vec::new();

    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_secs(3)));
    errors.push(client.client_credentials(&ScopeSet::default()).unwrap_err()); // Timeout
    fake.fail_next(TOKEN_PATH, Fault::CutOffBody);
    errors.push(client.client_credentials(&ScopeSet::default()).unwrap_err()); // Transport
    let state = CsrfState::new("STATE-SECRET");
    errors.push(
        parse_redirect("https://x/cb?code=CODE-SECRET&state=other")
            .unwrap()
            .verify_state(&state)
            .unwrap_err(),
    ); // StateMismatch
    errors.push(parse_redirect("https://x/cb?error=access_denied&state=STATE-SECRET").unwrap_err());
    errors.push(parse_redirect("https://x/cb?code=CODE-SECRET&code=CODE-SECRET").unwrap_err());
    errors.push(parse_redirect("https://x/cb?state=STATE-SECRET").unwrap_err());
    errors.push(OAuthError::NoRefreshToken {
        account: "a".into(),
    });
    errors.push(OAuthError::RefreshTokenExpired {
        account: "a".into(),
    });
    errors.push(OAuthError::Random("no entropy".into()));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.json");
    std::fs::write(&path, r#"{"format": "marketplace-toolkit refresh tokens", "version": 1, "accounts": {"a": {"refresh_token": "CODE-SECRET", "scopes": 5}}}"#).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        errors.push(FileStore::new(&path).load("a").unwrap_err()); // Corrupt
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        errors.push(FileStore::new(&path).load("a").unwrap_err()); // InsecurePermissions
    }
    errors.push(FileStore::new(dir.path()).load("a").unwrap_err()); // Io (a directory)

    // A bad environment name is not a secret, so it may be quoted; the client secret is not.
    let lookup_err = OAuthConfig::from_lookup(|n| match n {
        "MARKETPLACE_ENV" => Some("staging".to_owned()),
        "MARKETPLACE_CLIENT_SECRET" => Some(CLIENT_SECRET.to_owned()),
        _ => None,
    })
    .unwrap_err();
    errors.push(OAuthError::Config(lookup_err));
    let file = dir.path().join("sdk.yaml");
    std::fs::write(
        &file,
        format!("api.ebay.com:\n  appid: [1]\n  certid: {CLIENT_SECRET}\n"),
    )
    .unwrap();
    errors.push(OAuthError::Config(
        OAuthConfig::from_sdk_file(&file, Endpoints::production()).unwrap_err(),
    ));
    std::fs::write(
        &file,
        format!("api.ebay.com: [\n  certid: {CLIENT_SECRET}\n"),
    )
    .unwrap();
    let yaml_err = OAuthConfig::from_sdk_file(&file, Endpoints::production()).unwrap_err();
    errors.push(OAuthError::Config(yaml_err));

    for e in &errors {
        check("OAuthError", e, &secrets);
    }
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, OAuthError::Timeout { .. }))
    );
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, OAuthError::Transport { .. }))
    );
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, OAuthError::StateMismatch))
    );
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, OAuthError::ConsentDenied { .. }))
    );
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, OAuthError::InvalidRedirect { .. }))
    );
}

#[test]
fn a_successful_answer_with_a_token_under_an_unknown_key_is_withheld() {
    let fake = FakeMarketplace::new();
    fake.route("POST", TOKEN_PATH, |_, _| {
        Response::json(
            200,
            &serde_json::json!({"accessToken": "v^1.1#UNKNOWN-KEY-SECRET", "expires_in": 7200}),
        )
    });
    let err = client(&fake)
        .client_credentials(&ScopeSet::new([fake.scope("")]))
        .unwrap_err();
    assert!(matches!(err, OAuthError::UnexpectedBody { .. }), "{err:?}");
    for shown in [format!("{err}"), format!("{err:?}"), format!("{err:#?}")] {
        assert!(!shown.contains("UNKNOWN-KEY-SECRET"), "{shown}");
    }
}

/// A secret as JSON serializers may write it: `/` as `\/` and every other punctuation
/// character as `\u00XX` (both valid JSON escapes of the same string).
fn json_escaped(secret: &str) -> String {
    secret
        .chars()
        .map(|c| match c {
            '/' => r"\/".to_owned(),
            c if c.is_ascii_alphanumeric() => c.to_string(),
            c => format!("\\u{:04x}", c as u32),
        })
        .collect()
}

/// Token-endpoint answers that echo the request's secrets in every place a server text can
/// reach an error: the `error` code, `error_description`, error bodies and 2xx garbage, raw
/// and JSON-escaped (`\/`, `\u0023`).
#[test]
fn oauth_errors_sanitize_every_server_text_with_every_request_secret() {
    let refresh = "v^1.1#i^1#REFRESH/SECRET%+x==";
    let code = AuthorizationCode::new("v^1.1#i^1#CODE/SECRET%+x==");
    let mut errors: Vec<OAuthError> = Vec::new();
    for shape in [
        "code",
        "code-escaped",
        "description-escaped",
        "body-escaped",
        "garbage-2xx",
    ] {
        let fake = echoing_fake();
        fake.route("POST", TOKEN_PATH, move |req, _| {
            let form = req.form().unwrap_or_default();
            let get = |k: &str| {
                form.iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            // Whichever secret this grant carried: the code, the refresh token, or the
            // client secret (decoded from the Basic header by the fake's own check).
            let echoed = [get("code"), get("refresh_token")]
                .into_iter()
                .find(|s| !s.is_empty())
                .unwrap_or_else(|| CLIENT_SECRET.to_owned());
            let escaped = json_escaped(&echoed);
            let (status, body) = match shape {
                "code" => (
                    400,
                    serde_json::json!({"error": format!("bad_{echoed}\u{1b}[2J")}).to_string(),
                ),
                "code-escaped" => (400, format!(r#"{{"error": "bad_{escaped}"}}"#)),
                "description-escaped" => (
                    400,
                    format!(r#"{{"error": "invalid_grant", "error_description": "no {escaped}"}}"#),
                ),
                "body-escaped" => (403, format!(r#"{{"note": "{escaped}"}}"#)),
                "garbage-2xx" => (200, format!("<html>{echoed} / {escaped}</html>")),
                _ => unreachable!(),
            };
            Response::new(status, body).with_header("Content-Type", "application/json")
        });
        let client = client_for_secret(&fake);
        errors.push(
            client
                .refresh(
                    &RefreshToken::new(refresh),
                    &ScopeSet::new([fake.scope("")]),
                )
                .unwrap_err(),
        );
        errors.push(client.exchange_code(&code).unwrap_err());
        errors.push(client.client_credentials(&ScopeSet::default()).unwrap_err());
    }
    let escaped: Vec<String> = [refresh, code.secret(), CLIENT_SECRET]
        .iter()
        .map(|s| json_escaped(s))
        .collect();
    let mut secrets = vec![refresh, code.secret(), CLIENT_SECRET];
    secrets.extend(escaped.iter().map(String::as_str));
    assert_eq!(errors.len(), 15);
    for e in &errors {
        check("OAuthError", e, &secrets);
        for shown in [format!("{e}"), format!("{e:?}")] {
            assert!(
                !shown.contains('\u{1b}'),
                "control character kept: {shown:?}"
            );
        }
    }
    // The unknown `error` codes were kept (sanitized), not dropped.
    assert!(errors.iter().any(|e| matches!(
        e,
        OAuthError::Server { code: OAuthErrorCode::Other(c), .. } if c.starts_with("bad_")
    )));
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, OAuthError::UnexpectedBody { status: 200, .. }))
    );
}

/// The taxonomy client's errors: the service echoes the bearer token in its error messages
/// (400 and 429), in a body that is not its error body, and in a 2xx answer that does not
/// parse.
#[test]
fn taxonomy_errors_never_hold_the_bearer_token() {
    use marketplace_client::taxonomy::{ApiError, ClientConfig, TaxonomyClient};
    let token = "v^1.1#i^1#f^0#BEARER/SECRET%+x==";
    let fake = FakeMarketplace::new();
    let path = "/commerce/taxonomy/v1/get_default_category_tree_id";
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0);
    let client = TaxonomyClient::new(config, Arc::new(AccessToken::new(token))).unwrap();
    let mut errors: Vec<ApiError> = Vec::new();
    for shape in ["service", "service-429", "plain", "garbage-2xx", "json-2xx"] {
        fake.route("GET", path, move |req, _| {
            let bearer = req
                .header("Authorization")
                .and_then(|h| h.strip_prefix("Bearer "))
                .unwrap_or_default()
                .to_owned();
            let escaped = json_escaped(&bearer);
            let service = |status: u16| {
                Response::new(
                    status,
                    format!(
                        r#"{{"errors": [{{"errorId": 1001, "domain": "OAuth {escaped}",
                        "message": "Invalid access token {escaped}\n",
                        "longMessage": "token {bearer} is not valid",
                        "inputRefIds": ["{escaped}"],
                        "parameters": [{{"name": "token", "value": "{escaped}"}}]}}]}}"#
                    ),
                )
                .with_header("Content-Type", "application/json")
            };
            match shape {
                "service" => service(400),
                "service-429" => service(429).with_header("Retry-After", "1"),
                "plain" => Response::text(403, format!("forbidden for Bearer {bearer}")),
                "garbage-2xx" => Response::text(200, format!("<html>{bearer}</html>")),
                "json-2xx" => Response::new(200, format!(r#"{{"echo": "{escaped}"}}"#))
                    .with_header("Content-Type", "application/json"),
                _ => unreachable!(),
            }
        });
        errors.push(client.default_tree_id("EBAY_US").unwrap_err());
    }
    let escaped = json_escaped(token);
    for e in &errors {
        assert_clean("ApiError", &format!("{e}"), &[token, &escaped]);
        assert_clean("ApiError", &format!("{e:?}"), &[token, &escaped]);
        assert!(!format!("{e}").contains('\n'), "newline kept: {e}");
    }
    assert!(
        matches!(errors[0], ApiError::Service { .. }),
        "{:?}",
        errors[0]
    );
    assert!(
        matches!(errors[1], ApiError::RateLimited { .. }),
        "{:?}",
        errors[1]
    );
    assert!(
        matches!(errors[2], ApiError::Http { .. }),
        "{:?}",
        errors[2]
    );
    assert!(
        matches!(errors[3], ApiError::UnexpectedBody { .. }),
        "{:?}",
        errors[3]
    );
    assert!(
        matches!(errors[4], ApiError::UnexpectedBody { .. }),
        "{:?}",
        errors[4]
    );
    // The service's message is still there, without the token.
    assert!(
        errors[0]
            .to_string()
            .contains("Invalid access token [redacted]"),
        "{}",
        errors[0]
    );
}
