//! The consent URL and the redirect, against the fake's consent page.

use crate::oauth_support as support;

use fake_marketplace::{ConsentBehavior, FakeConfig, FakeMarketplace, parse_form_strict};
use marketplace_client::oauth::{CsrfState, OAuthClient, OAuthError, OAuthErrorCode, ScopeSet};
use marketplace_client::test_util::parse_redirect;
use support::*;

#[test]
fn consent_url_carries_every_parameter_encoded() {
    let fake = strict_fake();
    let client = client(&fake);
    let scopes = ScopeSet::new([fake.scope(""), fake.scope("/sell.inventory")]);
    let request = client
        .consent_request(&scopes)
        .unwrap()
        .with_prompt("login")
        .with_locale("de-DE");
    let url = request.url().as_str().to_owned();
    let (base, query) = url.split_once('?').unwrap();
    assert_eq!(base, format!("{}/oauth2/authorize", fake.auth_url()));
    let pairs = parse_form_strict(query.as_bytes()).expect("strictly encoded");
    let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "client_id",
            "redirect_uri",
            "response_type",
            "scope",
            "state",
            "prompt",
            "locale"
        ]
    );
    let get = |k: &str| pairs.iter().find(|(key, _)| key == k).unwrap().1.clone();
    assert_eq!(get("client_id"), fake.client_id());
    assert_eq!(get("redirect_uri"), RU_NAME);
    assert_eq!(get("response_type"), "code");
    assert_eq!(
        get("scope"),
        format!("{} {}", fake.scope(""), fake.scope("/sell.inventory"))
    );
    assert_eq!(get("state"), request.state().secret());
    assert_eq!(get("state").len(), 43, "256 bits, base64url");
    assert_eq!(get("prompt"), "login");
    assert_eq!(get("locale"), "de-DE");
    assert!(query.contains("scope=http%3A%2F%2F127.0.0.1"), "{query}");
    assert!(query.contains("+http%3A"), "space as +: {query}");

    let other = client
        .consent_request(&scopes)
        .unwrap()
        .with_prompt("login")
        .with_locale("de-DE");
    assert_ne!(other.state(), request.state(), "a fresh state every time");
}

#[test]
fn consent_grant_round_trip() {
    let fake = strict_fake();
    let client = client(&fake);
    let request = client
        .consent_request(&ScopeSet::new([fake.scope("/sell.account")]))
        .unwrap();
    let location = consent_redirect(&fake, &request);
    assert!(
        location.starts_with(&format!("{}/consent/accepted?", fake.base_url())),
        "{location}"
    );

    let parsed = parse_redirect(&location).unwrap();
    assert_eq!(parsed.expires_in, Some(std::time::Duration::from_secs(299)));
    assert!(parsed.code.secret().contains("%+x"));
    let code = request.complete(&location).unwrap();
    // The query string alone works too.
    let query = location.split_once('?').unwrap().1;
    assert_eq!(request.complete(query).unwrap(), code);
    assert_eq!(request.complete(&format!("?{query}")).unwrap(), code);

    // The landing page of the RuName exists on the fake.
    let landing = browser_no_redirect().get(&location).send().unwrap();
    assert_eq!(landing.status().as_u16(), 200);
    client.exchange_code(&code).unwrap();
}

#[test]
fn state_mismatch_is_rejected() {
    let fake = strict_fake();
    let client = client(&fake);
    let scopes = ScopeSet::new([fake.scope("")]);
    let mine = client.consent_request(&scopes).unwrap();
    let theirs = client.consent_request(&scopes).unwrap();
    let their_redirect = consent_redirect(&fake, &theirs);
    let err = mine.complete(&their_redirect).unwrap_err();
    assert!(matches!(err, OAuthError::StateMismatch));
    assert!(
        err.to_string().contains("start the consent flow again"),
        "{err}"
    );

    // A missing state is a mismatch too; a prefix of the state is not accepted.
    let code_only = "https://example.com/cb?code=abc";
    assert!(matches!(
        mine.complete(code_only),
        Err(OAuthError::StateMismatch)
    ));
    let prefix = &mine.state().secret()[..10];
    let truncated = format!("https://example.com/cb?code=abc&state={prefix}");
    assert!(matches!(
        mine.complete(&truncated),
        Err(OAuthError::StateMismatch)
    ));
    let r = parse_redirect(&their_redirect).unwrap();
    assert!(matches!(
        r.verify_state(&CsrfState::new("")),
        Err(OAuthError::StateMismatch)
    ));
}

#[test]
fn refused_consent_is_reported() {
    let fake = FakeMarketplace::start(FakeConfig {
        consent: ConsentBehavior::Deny,
        ..strict_config()
    })
    .unwrap();
    let client = client(&fake);
    let request = client
        .consent_request(&ScopeSet::new([fake.scope("")]))
        .unwrap();
    let location = consent_redirect(&fake, &request);
    match request.complete(&location) {
        Err(OAuthError::ConsentDenied {
            code, description, ..
        }) => {
            assert_eq!(code, OAuthErrorCode::Other("access_denied".into()));
            assert_eq!(
                description.as_deref(),
                Some("The user declined the consent")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn scopes_the_user_cannot_grant_come_back_as_an_error() {
    let fake = strict_fake();
    let client = client(&fake);
    let request = client
        .consent_request(&ScopeSet::new([fake.scope("/not.a.scope")]))
        .unwrap();
    let err = request
        .complete(&consent_redirect(&fake, &request))
        .unwrap_err();
    assert!(matches!(
        &err,
        OAuthError::ConsentDenied {
            code: OAuthErrorCode::InvalidScope,
            scopes: Some(asked),
            ..
        } if asked == request.scopes()
    ));
    // The configuration is at fault, and the message names the scope it asked for.
    let text = err.to_string();
    assert!(text.contains(&fake.scope("/not.a.scope")), "{text}");
    assert!(text.contains("check the configured scopes"), "{text}");
    assert!(!text.contains("ask the user"), "{text}");
}

#[test]
fn malformed_redirects_are_errors_not_panics() {
    for input in [
        "",
        "   ",
        "https://",
        "https://example.com/cb",
        "https://example.com/cb?state=x",
        "state=x&code=",
        "code=a&code=b&state=x",
        "%%%",
        "?",
    ] {
        match parse_redirect(input) {
            Err(OAuthError::InvalidRedirect { reason }) => assert!(!reason.is_empty()),
            other => panic!("{input:?}: {other:?}"),
        }
    }
}

#[test]
fn consent_needs_a_redirect_uri() {
    let fake = strict_fake();
    let client = marketplace_client::oauth::OAuthClient::from_config(
        &marketplace_client::oauth::OAuthConfig::new(endpoints(&fake))
            .with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let err = client.consent_request(&ScopeSet::default()).unwrap_err();
    assert!(
        err.to_string().contains("MARKETPLACE_REDIRECT_URI"),
        "{err}"
    );
}

/// Without `MARKETPLACE_AUTH_URL`, application tokens work (they never use the consent host)
/// and the consent URL is refused, naming the variable.
#[test]
fn the_consent_host_is_required_only_for_consent() {
    let fake = strict_fake();
    let vars = [
        ("MARKETPLACE_BASE_URL", fake.base_url()),
        ("MARKETPLACE_CLIENT_ID", fake.client_id().to_string()),
        (
            "MARKETPLACE_CLIENT_SECRET",
            fake.client_secret().to_string(),
        ),
        ("MARKETPLACE_REDIRECT_URI", RU_NAME.to_string()),
    ];
    let config = marketplace_client::oauth::OAuthConfig::from_lookup(|name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    })
    .expect("the API host alone is a configuration");
    let client = OAuthClient::from_config(&config).unwrap();
    let token = client.client_credentials(&ScopeSet::default()).unwrap();
    assert!(!token.access_token.secret().is_empty());
    let e = client.consent_request(&ScopeSet::default()).unwrap_err();
    assert!(matches!(e, OAuthError::Config(_)), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("MARKETPLACE_AUTH_URL is not set"), "{text}");
    assert!(text.contains("consent"), "{text}");
}

/// Set for the child process of [`taxonomy_client_from_env_needs_only_the_api_host`].
const FROM_ENV_CHILD: &str = "MARKETPLACE_TOOLKIT_TEST_FROM_ENV_CHILD";

/// `TaxonomyClient::from_env()` with `MARKETPLACE_BASE_URL` and the credentials only, and no
/// `MARKETPLACE_AUTH_URL`: the same rule as `snapshot refresh --base-url` (application tokens
/// never use the consent host). `from_env` reads the process environment, so this runs the
/// test below in a child process with exactly those variables.
#[test]
fn taxonomy_client_from_env_needs_only_the_api_host() {
    let fake = strict_fake();
    let exe = std::env::current_exe().unwrap();
    let mut child = std::process::Command::new(exe);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("MARKETPLACE_") {
            child.env_remove(name);
        }
    }
    let out = child
        .args([
            &format!("{}::from_env_in_a_child_process", module_name()),
            "--exact",
            "--nocapture",
        ])
        .env(FROM_ENV_CHILD, "1")
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1 passed"), "the child test ran: {stdout}");
    // One application token each for the blocking and the async client, from this fake.
    assert_eq!(fake.token_requests().len(), 2);
    assert_eq!(
        fake.requests_to(fake_marketplace::taxonomy::DEFAULT_TREE_ID_PATH)
            .len(),
        2
    );
}

/// The child of [`taxonomy_client_from_env_needs_only_the_api_host`]; passes at once in a
/// normal run.
#[test]
fn from_env_in_a_child_process() {
    if std::env::var_os(FROM_ENV_CHILD).is_none() {
        return;
    }
    assert!(std::env::var_os("MARKETPLACE_AUTH_URL").is_none());
    let client = marketplace_client::taxonomy::TaxonomyClient::from_env()
        .expect("the API host alone configures a taxonomy client");
    let id = client
        .default_tree_id("EBAY_DE")
        .expect("getDefaultCategoryTreeId");
    assert_eq!(id.tree_id, 77);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let id = runtime.block_on(async {
        let client = marketplace_client::aio::taxonomy::TaxonomyClient::from_env()
            .expect("the API host alone configures an async taxonomy client");
        client.default_tree_id("EBAY_DE").await
    });
    assert_eq!(id.expect("getDefaultCategoryTreeId").tree_id, 77);
}

/// This module's path without the crate's name: the prefix of its tests' names in the test
/// binary (`oauth_store::store_writer_child`), for running one of them in a child process.
fn module_name() -> &'static str {
    module_path!()
        .split_once("::")
        .map_or("", |(_, module)| module)
}
