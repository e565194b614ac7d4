//! The exact requests of the three grants and the typed errors, against the fake over loopback.

use crate::oauth_support as support;

use std::time::{Duration, Instant};

use fake_marketplace::{FakeConfig, FakeMarketplace, Fault, TOKEN_PATH};
use marketplace_client::oauth::{Grant, OAuthError, OAuthErrorCode, RefreshToken, ScopeSet};
use support::*;

fn assert_token_request_headers(fake: &FakeMarketplace, request: &fake_marketplace::Request) {
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, TOKEN_PATH);
    assert_eq!(request.query, None);
    assert_eq!(
        request.headers_named("Content-Type"),
        vec!["application/x-www-form-urlencoded"]
    );
    assert_eq!(
        request.headers_named("Authorization"),
        vec![expected_basic(fake.client_id(), fake.client_secret())]
    );
    // eBay's form: base64 of `id:secret` as they are.
    assert_eq!(
        expected_basic(fake.client_id(), fake.client_secret()),
        format!(
            "Basic {}",
            base64_of("FakeApp-PRD-0a1b2c3d4-5e6f7a8b:PRD-fa4e0c1d2b3a-9f8e-4d7c-b6a5-0f1e")
        )
    );
}

/// The fake's default credentials keep to the alphabet of eBay's real application ids and
/// certificate ids: letters, digits and `-`.
#[test]
fn the_default_credentials_use_ebays_alphabet() {
    let fake = strict_fake();
    for (what, value) in [("id", fake.client_id()), ("secret", fake.client_secret())] {
        assert!(
            !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "the default client {what} {value:?} has a character eBay's do not"
        );
    }
}

/// eBay documents the client's Basic credentials as base64 of `client_id:client_secret`, and
/// nothing else: the fake takes them so, and the client sends them so, even for a secret a
/// form-encoding would change (the client must not encode it).
#[test]
fn basic_credentials_are_base64_of_id_and_secret_as_ebay_documents() {
    let fake = strict_fake();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let token = |id: &str, secret: &str| {
        http.post(format!("{}{TOKEN_PATH}", fake.base_url()))
            .header("Authorization", format!("Basic {}", base64_of(&format!("{id}:{secret}"))))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body("grant_type=client_credentials&scope=https%3A%2F%2Fapi.ebay.com%2Foauth%2Fapi_scope")
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(token(fake.client_id(), fake.client_secret()), 200);
    assert_eq!(token(fake.client_id(), "PRD-not-the-secret"), 401);

    // A fake configured with a secret that form-encoding changes: the client sends it as is.
    let secret = "PRD-odd secret+/%42";
    let odd = FakeMarketplace::start(FakeConfig {
        client_secret: secret.into(),
        ..strict_config()
    })
    .unwrap();
    let client = client(&odd);
    client
        .client_credentials(&ScopeSet::new([odd.scope("")]))
        .expect("the fake takes base64(id:secret)");
    assert_eq!(
        odd.token_requests()[0].headers_named("Authorization"),
        vec![format!(
            "Basic {}",
            base64_of(&format!("{}:{secret}", odd.client_id()))
        )]
    );
}

fn base64_of(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[test]
fn client_credentials_request_is_exact() {
    let fake = strict_fake();
    let client = client(&fake);
    let scopes = ScopeSet::new([fake.scope("/buy.item.feed"), fake.scope("")]);
    let token = client.client_credentials(&scopes).unwrap();

    let requests = fake.token_requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_token_request_headers(&fake, request);
    let base = fake.base_url().replace(':', "%3A").replace('/', "%2F");
    assert_eq!(
        request.body_str(),
        format!(
            "grant_type=client_credentials&scope={base}%2Foauth%2Fapi_scope+{base}%2Foauth%2Fapi_scope%2Fbuy.item.feed"
        )
    );
    assert_eq!(
        request.form().unwrap(),
        vec![
            ("grant_type".to_owned(), "client_credentials".to_owned()),
            (
                "scope".to_owned(),
                format!("{} {}", fake.scope(""), fake.scope("/buy.item.feed"))
            ),
        ]
    );

    let issued = fake
        .issued_token(token.access_token.secret())
        .expect("issued by the fake");
    assert_eq!(issued.token_type, "Application Access Token");
    assert_eq!(token.token_type, "Application Access Token");
    assert_eq!(token.expires_in, Duration::from_secs(7200));
    assert!(token.refresh_token.is_none());
}

#[test]
fn empty_scope_set_asks_for_the_base_scope() {
    let fake = strict_fake();
    client(&fake)
        .client_credentials(&ScopeSet::default())
        .unwrap();
    let form = fake.token_requests()[0].form().unwrap();
    assert_eq!(
        form[1],
        (
            "scope".to_owned(),
            format!("{}/oauth/api_scope", fake.base_url())
        )
    );
}

#[test]
fn expires_in_as_a_string_is_accepted() {
    let fake = FakeMarketplace::start(FakeConfig {
        expires_in_as_string: true,
        ..strict_config()
    })
    .unwrap();
    let token = client(&fake)
        .client_credentials(&ScopeSet::default())
        .unwrap();
    assert_eq!(token.expires_in, Duration::from_secs(7200));
}

#[test]
fn code_exchange_request_is_exact_and_keeps_special_characters() {
    let fake = strict_fake();
    let client = client(&fake);
    let scopes = ScopeSet::new([fake.scope("/sell.inventory"), fake.scope("/sell.account")]);
    let consent = client.consent_request(&scopes).unwrap();
    let redirect = consent_redirect(&fake, &consent);
    let code = consent.complete(&redirect).unwrap();
    for c in ['^', '#', '%', '+'] {
        assert!(code.secret().contains(c), "the fake's code has {c}");
    }

    let token = client.exchange_code(&code).unwrap();
    let request = &fake.token_requests()[0];
    assert_token_request_headers(&fake, request);
    let body = request.body_str();
    assert_eq!(
        body,
        format!(
            "grant_type=authorization_code&code={}&redirect_uri={}",
            form_encode(code.secret()),
            form_encode(RU_NAME)
        )
    );
    for raw in ['^', '#'] {
        assert!(!body.contains(raw), "{raw} must be encoded: {body}");
    }
    for escaped in ["%5E", "%23", "%25", "%2B"] {
        assert!(body.contains(escaped), "{escaped} missing: {body}");
    }
    assert_eq!(token.token_type, "User Access Token");
    assert!(token.refresh_token.is_some());
    assert_eq!(
        token.refresh_token_expires_in,
        Some(Duration::from_secs(47_304_000))
    );
    assert!(fake.issued_token(token.access_token.secret()).is_some());

    // A code works once.
    let again = client.exchange_code(&code).unwrap_err();
    assert_eq!(again.code(), Some(&OAuthErrorCode::InvalidGrant));
    assert!(again.to_string().contains("consent"), "{again}");
}

#[test]
fn refresh_request_is_exact() {
    let fake = strict_fake();
    let client = client(&fake);
    let scopes = ScopeSet::new([fake.scope(""), fake.scope("/sell.inventory")]);
    let consent = client.consent_request(&scopes).unwrap();
    let code = consent
        .complete(&consent_redirect(&fake, &consent))
        .unwrap();
    let refresh = client.exchange_code(&code).unwrap().refresh_token.unwrap();
    fake.clear_requests();

    let token = client.refresh(&refresh, &scopes).unwrap();
    let request = &fake.token_requests()[0];
    assert_token_request_headers(&fake, request);
    assert_eq!(
        request.body_str(),
        format!(
            "grant_type=refresh_token&refresh_token={}&scope={}+{}",
            form_encode(refresh.secret()),
            form_encode(&fake.scope("")),
            form_encode(&fake.scope("/sell.inventory"))
        )
    );
    assert_eq!(
        fake.issued_token(token.access_token.secret())
            .unwrap()
            .scopes
            .len(),
        2
    );

    // A subset of the granted scopes is fine; more is invalid_scope.
    client
        .refresh(&refresh, &ScopeSet::new([fake.scope("/sell.inventory")]))
        .unwrap();
    let err = client
        .refresh(&refresh, &ScopeSet::new([fake.scope("/sell.fulfillment")]))
        .unwrap_err();
    assert_eq!(err.code(), Some(&OAuthErrorCode::InvalidScope));
    assert!(err.to_string().contains("granted at consent"), "{err}");

    // Revoked consent.
    fake.revoke_refresh_tokens();
    let err = client.refresh(&refresh, &scopes).unwrap_err();
    assert!(matches!(
        &err,
        OAuthError::Server {
            grant: Grant::RefreshToken,
            code: OAuthErrorCode::InvalidGrant,
            status: 400,
            ..
        }
    ));
    assert!(
        err.to_string()
            .contains("revoked consent or the token expired"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("the account needs the seller's consent again"),
        "{err}"
    );
}

/// A client is built from a configuration, on either front: without the application id or
/// the certificate id it is refused with the error naming the missing setting (as with
/// `OAuthConfig::from_env`); what the builder methods set is what the client holds.
#[test]
fn a_client_from_a_configuration_names_a_missing_credential() {
    use marketplace_client::aio::oauth::OAuthClient as AsyncClient;
    use marketplace_client::oauth::{Endpoints, OAuthClient, OAuthConfig};
    let without = OAuthConfig::new(Endpoints::sandbox());
    let mut id_only = OAuthConfig::new(Endpoints::sandbox()).with_credentials("MyApp-SBX-1", "c");
    id_only.client_secret = None;
    for (config, missing) in [
        (&without, "MARKETPLACE_CLIENT_ID is not set"),
        (&id_only, "MARKETPLACE_CLIENT_SECRET is not set"),
    ] {
        let blocking = OAuthClient::from_config(config).unwrap_err();
        assert!(
            matches!(&blocking, OAuthError::Config(e) if e.to_string().contains(missing)),
            "{blocking}"
        );
        let aio = AsyncClient::from_config(config).unwrap_err();
        assert!(
            matches!(&aio, OAuthError::Config(e) if e.to_string().contains(missing)),
            "{aio}"
        );
    }
    let config = OAuthConfig::new(Endpoints::sandbox())
        .with_credentials("MyApp-SBX-1", "SBX-cert")
        .with_redirect_uri(RU_NAME);
    let blocking = OAuthClient::from_config(&config).unwrap();
    let aio = AsyncClient::from_config(&config).unwrap();
    for (client_id, redirect_uri) in [
        (blocking.client_id(), blocking.redirect_uri()),
        (aio.client_id(), aio.redirect_uri()),
    ] {
        assert_eq!(client_id.as_str(), "MyApp-SBX-1");
        assert_eq!(redirect_uri, Some(RU_NAME));
    }
}

#[test]
fn wrong_credentials_are_invalid_client() {
    let fake = strict_fake();
    let client = marketplace_client::oauth::OAuthClient::from_config(
        &marketplace_client::oauth::OAuthConfig::new(endpoints(&fake))
            .with_credentials(fake.client_id(), "wrong"),
    )
    .unwrap();
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    assert!(matches!(
        &err,
        OAuthError::Server {
            code: OAuthErrorCode::InvalidClient,
            status: 401,
            ..
        }
    ));
    assert!(
        err.to_string().contains("MARKETPLACE_CLIENT_SECRET"),
        "{err}"
    );
}

#[test]
fn unknown_scope_is_invalid_scope() {
    let fake = strict_fake();
    let err = client(&fake)
        .client_credentials(&ScopeSet::new([fake.scope("/sell.inventory")]))
        .unwrap_err();
    assert_eq!(err.code(), Some(&OAuthErrorCode::InvalidScope));
    assert_eq!(err.status(), Some(400));
}

#[test]
fn every_oauth_error_code_is_mapped_with_its_description() {
    let fake = strict_fake();
    let client = client(&fake);
    let cases = [
        ("invalid_client", OAuthErrorCode::InvalidClient, 401),
        ("invalid_grant", OAuthErrorCode::InvalidGrant, 400),
        ("invalid_scope", OAuthErrorCode::InvalidScope, 400),
        ("invalid_request", OAuthErrorCode::InvalidRequest, 400),
        (
            "unauthorized_client",
            OAuthErrorCode::UnauthorizedClient,
            400,
        ),
        (
            "unsupported_grant_type",
            OAuthErrorCode::UnsupportedGrantType,
            400,
        ),
        (
            "temporarily_unavailable",
            OAuthErrorCode::Other("temporarily_unavailable".into()),
            400,
        ),
    ];
    for (error, expected, status) in cases {
        fake.fail_next(
            TOKEN_PATH,
            Fault::OAuthError {
                status,
                error: error.into(),
                description: format!("description of {error}"),
            },
        );
        let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
        match &err {
            OAuthError::Server {
                code,
                description,
                status: s,
                grant,
            } => {
                assert_eq!(code, &expected);
                assert_eq!(
                    description.as_deref(),
                    Some(format!("description of {error}").as_str())
                );
                assert_eq!(*s, status);
                assert_eq!(*grant, Grant::ClientCredentials);
            }
            other => panic!("{error}: {other:?}"),
        }
        let message = err.to_string();
        assert!(message.contains(error), "{message}");
        assert!(
            message.contains(&format!("description of {error}")),
            "{message}"
        );
        assert!(!err.is_transient());
    }
}

#[test]
fn rate_limit_and_server_errors_are_typed() {
    let fake = strict_fake();
    let client = client(&fake);

    fake.fail_next(
        TOKEN_PATH,
        Fault::TooManyRequests {
            retry_after_secs: 120,
        },
    );
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    assert!(
        matches!(err, OAuthError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_secs(120))
    );
    assert_eq!(err.retry_after(), Some(Duration::from_secs(120)));
    assert_eq!(err.status(), Some(429));
    assert!(err.is_transient());
    assert!(err.to_string().contains("retry after 120 s"), "{err}");

    for status in [500, 502, 503] {
        fake.fail_next(
            TOKEN_PATH,
            Fault::Status {
                status,
                body: "upstream failure".into(),
                headers: vec![],
            },
        );
        let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
        assert!(
            matches!(&err, OAuthError::Http { status: s, body, .. } if *s == status && body == "upstream failure"),
            "{err:?}"
        );
        assert!(err.is_transient());
    }

    // A 401 without an OAuth body.
    fake.fail_next(
        TOKEN_PATH,
        Fault::Status {
            status: 401,
            body: "<html>denied</html>".into(),
            headers: vec![],
        },
    );
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    assert!(
        matches!(&err, OAuthError::Http { status: 401, .. }),
        "{err:?}"
    );

    // The fake still works afterwards.
    client.client_credentials(&ScopeSet::default()).unwrap();
}

#[test]
fn time_out_is_reported() {
    let fake = strict_fake();
    let client = client_with_timeout(&fake, Duration::from_millis(300));
    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_secs(2)));
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    assert!(matches!(err, OAuthError::Timeout { .. }), "{err:?}");
    assert!(err.is_transient());
}

#[test]
fn an_endless_time_out_does_not_panic() {
    // Duration::MAX: `Instant::now() + timeout` overflowed in every grant. It is taken as no
    // deadline of the client's own, and the requests still work.
    let fake = strict_fake();
    let client = client_with_timeout(&fake, Duration::MAX);
    let token = client.client_credentials(&ScopeSet::default()).unwrap();
    assert!(fake.issued_token(token.access_token.secret()).is_some());
}

#[test]
fn cut_off_body_and_closed_connection_are_transport_errors() {
    let fake = strict_fake();
    let client = client(&fake);
    fake.fail_next(TOKEN_PATH, Fault::CutOffBody);
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    assert!(matches!(err, OAuthError::Transport { .. }), "{err:?}");

    fake.fail_next(TOKEN_PATH, Fault::Close);
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    assert!(matches!(err, OAuthError::Transport { .. }), "{err:?}");
}

#[test]
fn connection_refused_is_a_transport_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}");
    let client = marketplace_client::oauth::OAuthClient::from_config(
        &marketplace_client::oauth::OAuthConfig::new(
            marketplace_client::oauth::Endpoints::custom(&base, &base).unwrap(),
        )
        .with_credentials("id", "secret"),
    )
    .unwrap();
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    assert!(matches!(err, OAuthError::Transport { .. }), "{err:?}");
    assert!(err.to_string().contains("check the base URL"), "{err}");
}

#[test]
fn unexpected_bodies_are_kept_truncated() {
    let fake = strict_fake();
    let client = client(&fake);

    let html = format!("<html><body>{}</body></html>", "maintenance ".repeat(100));
    fake.fail_next(
        TOKEN_PATH,
        Fault::Status {
            status: 200,
            body: html,
            headers: vec![],
        },
    );
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    match &err {
        OAuthError::UnexpectedBody {
            status: 200, body, ..
        } => {
            // A successful token answer may hold new tokens the sanitizer cannot know: a body
            // that does not parse is withheld, only where it failed is kept.
            assert!(body.starts_with("[withheld"), "{body}");
            assert!(!body.contains("maintenance"), "{body}");
            assert!(err.to_string().contains("line 1 column 1"), "{err}");
        }
        other => panic!("{other:?}"),
    }
    // An error answer's body is kept, sanitized and cut.
    let html = format!("<html><body>{}</body></html>", "maintenance ".repeat(100));
    fake.fail_next(
        TOKEN_PATH,
        Fault::Status {
            status: 404,
            body: html,
            headers: vec![],
        },
    );
    match client.client_credentials(&ScopeSet::default()).unwrap_err() {
        OAuthError::Http {
            status: 404, body, ..
        } => {
            assert!(body.starts_with("<html><body>maintenance"), "{body}");
            assert!(
                body.len() <= marketplace_client::test_util::MAX_BODY_IN_ERROR + 20,
                "{}",
                body.len()
            );
            assert!(body.ends_with("[truncated]"));
        }
        other => panic!("{other:?}"),
    }

    fake.fail_next(
        TOKEN_PATH,
        Fault::Status {
            status: 200,
            body: r#"{"token_type":"x"}"#.into(),
            headers: vec![],
        },
    );
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    assert!(
        matches!(&err, OAuthError::UnexpectedBody { reason, .. } if reason.contains("access_token")),
        "{err:?}"
    );

    fake.fail_next(
        TOKEN_PATH,
        Fault::Status {
            status: 200,
            body: r#"{"access_token":"abc","expires_in":"soon"}"#.into(),
            headers: vec![],
        },
    );
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    assert!(
        matches!(&err, OAuthError::UnexpectedBody { reason, .. } if reason.contains("expires_in")),
        "{err:?}"
    );
}

#[test]
fn a_refresh_token_is_never_sent_unencoded() {
    // A refresh token with every awkward character still reaches the fake intact
    // (the fake decodes strictly and rejects unknown tokens with invalid_grant, not
    // invalid_request, which it would answer for a malformed body).
    let fake = strict_fake();
    let err = client(&fake)
        .refresh(
            &RefreshToken::new("v^1.1#i^1 %+&=/x"),
            &ScopeSet::new([fake.scope("")]),
        )
        .unwrap_err();
    assert_eq!(err.code(), Some(&OAuthErrorCode::InvalidGrant));
    let form = fake.token_requests()[0].form().unwrap();
    assert_eq!(
        form[1],
        ("refresh_token".to_owned(), "v^1.1#i^1 %+&=/x".to_owned())
    );
}

#[test]
fn a_huge_token_answer_is_refused_at_the_size_limit() {
    use marketplace_client::test_util::MAX_TOKEN_ANSWER;
    let fake = strict_fake();
    let client = client_with_timeout(&fake, Duration::from_secs(10));
    for announce_length in [true, false] {
        // 1 GiB, as fast as the fake can send it.
        fake.fail_next(
            TOKEN_PATH,
            Fault::Drip {
                total: 1 << 30,
                chunk: 64 * 1024,
                interval: Duration::ZERO,
                announce_length,
            },
        );
        let started = Instant::now();
        let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
        assert!(
            matches!(err, OAuthError::ResponseTooLarge { limit, .. } if limit == MAX_TOKEN_ANSWER),
            "{err:?}"
        );
        assert!(err.to_string().contains("65536 bytes"), "{err}");
        // Refused at the limit, not after reading a gigabyte (generous bound).
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}

/// The token endpoint's error answers go through the same sanitizer as the taxonomy
/// client's, which reads only their start: the largest answer read (64 KiB) of escapes that
/// every layer of decoding changes, as a body and as an `error_description`, gives a short,
/// marked error.
#[test]
fn hostile_error_answers_are_cut_before_they_are_sanitized() {
    use marketplace_client::test_util::{MAX_BODY_IN_ERROR, MAX_TOKEN_ANSWER};
    let fake = strict_fake();
    let client = client(&fake);
    let hostile = r"%252525\u0025".repeat(MAX_TOKEN_ANSWER / 13);
    // JSON doubles the backslashes: still within the limit.
    let description = hostile[..hostile.len() / 2].to_owned();
    let faults = [
        (503, hostile.clone()),
        (400, hostile.clone()),
        (
            400,
            serde_json::json!({"error": "invalid_request", "error_description": description})
                .to_string(),
        ),
    ];
    for (status, body) in faults {
        fake.fail_next(
            TOKEN_PATH,
            Fault::Status {
                status,
                body,
                headers: vec![],
            },
        );
        let started = Instant::now();
        let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
        // A guard against sanitizing the whole text (tens of seconds), not a speed figure:
        // generous, as a debug build on a loaded machine is slow.
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        let kept = match &err {
            OAuthError::Http { body, .. } => body.clone(),
            OAuthError::Server { description, .. } => description.clone().unwrap_or_default(),
            other => panic!("{other:?}"),
        };
        assert!(kept.starts_with(r"%252525\u0025"), "{kept}");
        assert!(kept.ends_with("…[truncated]"), "{kept}");
        assert!(kept.len() <= MAX_BODY_IN_ERROR + "…[truncated]".len());
    }
}

#[test]
fn a_slow_drip_answer_is_cut_at_the_time_out() {
    let fake = strict_fake();
    let timeout = Duration::from_secs(1);
    let client = client_with_timeout(&fake, timeout);
    // 2 KiB at one byte per 20 ms: about 40 s in all, each byte well within any per-read
    // time-out.
    fake.fail_next(
        TOKEN_PATH,
        Fault::Drip {
            total: 2048,
            chunk: 1,
            interval: Duration::from_millis(20),
            announce_length: true,
        },
    );
    let started = Instant::now();
    let err = client.client_credentials(&ScopeSet::default()).unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err, OAuthError::Timeout { .. }), "{err:?}");
    assert!(err.is_transient());
    // Cut at about the time-out (generous bounds: a correctness check, not a benchmark).
    assert!(took >= timeout, "{took:?}");
    assert!(took < timeout * 5, "{took:?}");
}
