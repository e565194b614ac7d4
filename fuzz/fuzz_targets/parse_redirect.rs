//! The address the browser lands on after consent: `parse_redirect` never panics, an accepted
//! redirect has a code, and a refusal's texts are sanitized (no control character, bounded,
//! without the redirect's own code and state).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use marketplace_client::oauth::{OAuthError};
use marketplace_client::test_util::{MAX_BODY_IN_ERROR, parse_redirect};
use url::{Url, form_urlencoded};

/// The query as `parse_redirect` reads it (a full URL's, the text after `?`, or all of it).
fn query_of(input: &str) -> Option<String> {
    let input = input.trim();
    if input.contains("://") {
        Some(Url::parse(input).ok()?.query()?.to_owned())
    } else {
        Some(input.split_once('?').map_or(input, |(_, q)| q).to_owned())
    }
}

fn check_sanitized(text: &str, secrets: &[String]) {
    assert!(!text.chars().any(char::is_control), "{text:?}");
    assert!(
        text.len() <= MAX_BODY_IN_ERROR + "…[truncated]".len(),
        "{}",
        text.len()
    );
    for secret in secrets.iter().filter(|s| common::checkable(s)) {
        assert!(
            !text.contains(secret.as_str()),
            "{secret:?} survived in {text:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    match parse_redirect(input) {
        Ok(response) => assert!(!response.code.secret().is_empty()),
        Err(OAuthError::ConsentDenied {
            code, description, ..
        }) => {
            let query = query_of(input).expect("a refusal was read from a query");
            let secrets: Vec<String> = form_urlencoded::parse(query.as_bytes())
                .filter(|(k, _)| k == "code" || k == "state")
                .map(|(_, v)| v.into_owned())
                .collect();
            check_sanitized(code.as_str(), &secrets);
            if let Some(description) = description {
                check_sanitized(&description, &secrets);
            }
        }
        Err(OAuthError::InvalidRedirect { reason }) => {
            assert!(!reason.chars().any(char::is_control), "{reason:?}");
        }
        Err(other) => panic!("unexpected error for a redirect: {other:?}"),
    }
});
