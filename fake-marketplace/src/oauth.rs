//! The fake's OAuth 2.0 endpoints: the token endpoint (three grants) and the consent page.

use std::time::Duration;

use serde_json::json;

use crate::http::{
    Request, Response, base64_decode, encode_query, parse_form, parse_form_strict, parse_query,
};
use crate::{CodeGrant, ConsentBehavior, FakeState, IssuedToken, RefreshGrant, Route, lock};

/// The token endpoint.
pub const TOKEN_PATH: &str = "/identity/v1/oauth2/token";
/// The consent page.
pub const AUTHORIZE_PATH: &str = "/oauth2/authorize";
/// Where a RuName without a mapping is sent after consent (the "accept URL").
pub const CONSENT_ACCEPTED_PATH: &str = "/consent/accepted";

pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new("POST", TOKEN_PATH, token),
        Route::new("GET", AUTHORIZE_PATH, authorize),
        Route::new("GET", CONSENT_ACCEPTED_PATH, |_, _| {
            Response::text(
                200,
                "Authorization successfully completed. You can close this window.",
            )
        }),
    ]
}

fn oauth_error(status: u16, error: &str, description: &str) -> Response {
    Response::json(
        status,
        &json!({"error": error, "error_description": description}),
    )
}

fn invalid_request(description: &str) -> Response {
    oauth_error(400, "invalid_request", description)
}

fn random_part(state: &FakeState) -> String {
    // Not cryptographic: unique and unpredictable enough for a fake.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = nanos ^ state.next_id().wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    format!("{x:016x}")
}

/// A token in eBay's documented shape (`v^1.1#i^1#p^3#r^1#I^3#f^0#t^…=`): `^`, `#`, letters,
/// digits and a trailing `=`, nothing a form or a query changes but `^` and `#`, which a
/// client that sends it raw still gets through (a lenient reader takes them as they are). With
/// [`strict_encoding`](crate::FakeConfig::strict_encoding), `extra` (the characters clients
/// tend to mangle) is put before the padding.
fn ebay_shaped(state: &FakeState, head: &str, payload: &str, extra: &str) -> String {
    let extra = if state.config().strict_encoding {
        extra
    } else {
        ""
    };
    format!(
        "{head}t^{payload}{}{}{extra}=",
        state.next_id(),
        random_part(state).to_ascii_uppercase()
    )
}

fn expires(state: &FakeState, d: Duration) -> serde_json::Value {
    if state.config().expires_in_as_string {
        json!(d.as_secs().to_string())
    } else {
        json!(d.as_secs())
    }
}

fn check_client(request: &Request, state: &FakeState) -> Result<(), Response> {
    let unauthorized = || oauth_error(401, "invalid_client", "client authentication failed");
    let Some(header) = request.header("Authorization") else {
        return Err(unauthorized());
    };
    let Some(encoded) = header
        .strip_prefix("Basic ")
        .or_else(|| header.strip_prefix("basic "))
    else {
        return Err(unauthorized());
    };
    let Some(decoded) = base64_decode(encoded).and_then(|b| String::from_utf8(b).ok()) else {
        return Err(unauthorized());
    };
    // eBay documents `Basic base64(client_id:client_secret)`, the two as they are (its ids and
    // secrets are letters, digits and `-`, which no encoding changes).
    let Some((id, secret)) = decoded.split_once(':') else {
        return Err(unauthorized());
    };
    let config = state.config();
    if id == config.client_id && secret == config.client_secret {
        Ok(())
    } else {
        Err(unauthorized())
    }
}

fn token(request: &Request, state: &FakeState) -> Response {
    if let Err(r) = check_client(request, state) {
        return r;
    }
    let content_type = request.header("Content-Type").unwrap_or_default();
    if !content_type.split(';').next().is_some_and(|t| {
        t.trim()
            .eq_ignore_ascii_case("application/x-www-form-urlencoded")
    }) {
        return invalid_request("Content-Type must be application/x-www-form-urlencoded");
    }
    let form = if state.config().strict_encoding {
        match request.form() {
            Ok(f) => f,
            Err(e) => return invalid_request(&format!("request body is not form-encoded: {e}")),
        }
    } else {
        parse_form(&request.body)
    };
    let mut fields = std::collections::HashMap::new();
    for (k, v) in form {
        if fields.insert(k.clone(), v).is_some() {
            return invalid_request(&format!("parameter {k} is repeated"));
        }
    }
    let get = |k: &str| fields.get(k).map(String::as_str);
    match get("grant_type") {
        Some("client_credentials") => client_credentials(state, get("scope")),
        Some("authorization_code") => authorization_code(state, get("code"), get("redirect_uri")),
        Some("refresh_token") => refresh_token(state, get("refresh_token"), get("scope")),
        Some(_) => oauth_error(
            400,
            "unsupported_grant_type",
            "grant type in request is not supported by the authorization server",
        ),
        None => invalid_request("request is missing a required parameter: grant_type"),
    }
}

/// The prefix of eBay's scope URLs. Like the sandbox, which takes production's scope URLs, the
/// fake takes them for its own `{base_url}/oauth/api_scope…` scopes.
const EBAY_SCOPE_PREFIX: &str = "https://api.ebay.com/oauth/api_scope";

/// True when `scope` is one of `known` (the configured scopes), or eBay's URL of one of them.
fn is_known_scope(state: &FakeState, known: &[String], scope: &str) -> bool {
    known.iter().any(|k| k == scope)
        || scope.strip_prefix(EBAY_SCOPE_PREFIX).is_some_and(|rest| {
            let own = format!("{}/oauth/api_scope{rest}", state.base_url());
            known.contains(&own)
        })
}

fn scopes_of(scope: &str) -> Vec<String> {
    scope
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// An access token of `token_type` with `scopes`; `user`: the seller (username) a user token
/// was granted by.
fn issue_access(
    state: &FakeState,
    token_type: &str,
    scopes: Vec<String>,
    user: Option<String>,
) -> (String, Duration) {
    let ttl = state.config().access_token_ttl;
    let head = if token_type.starts_with("User") {
        "v^1.1#i^1#f^0#p^3#I^3#r^0#"
    } else {
        "v^1.1#i^1#f^0#p^1#I^3#r^0#"
    };
    let token = ebay_shaped(state, head, "H4sIAAAAAAAA", "");
    lock(&state.grants).access.insert(
        token.clone(),
        IssuedToken {
            token_type: token_type.to_owned(),
            scopes,
            expires_at: state.now() + ttl,
            user,
        },
    );
    (token, ttl)
}

fn issue_refresh(state: &FakeState, scopes: Vec<String>, user: String) -> (String, Duration) {
    let ttl = state.config().refresh_token_ttl;
    let token = ebay_shaped(state, "v^1.1#i^1#p^3#I^3#r^1#f^0#", "Ul4xMF8y", ":+rt/=");
    lock(&state.grants).refresh.insert(
        token.clone(),
        RefreshGrant {
            scopes,
            expires_at: state.now() + ttl,
            revoked: false,
            user,
        },
    );
    (token, ttl)
}

fn client_credentials(state: &FakeState, scope: Option<&str>) -> Response {
    let Some(scope) = scope.filter(|s| !s.trim().is_empty()) else {
        return invalid_request("request is missing a required parameter: scope");
    };
    let scopes = scopes_of(scope);
    if scopes
        .iter()
        .any(|s| !is_known_scope(state, &state.config().app_scopes, s))
        || scopes.is_empty()
    {
        return oauth_error(
            400,
            "invalid_scope",
            "The requested scope is invalid, unknown, malformed, or exceeds the scope granted to the client",
        );
    }
    let (token, ttl) = issue_access(state, "Application Access Token", scopes, None);
    Response::json(
        200,
        &json!({
            "access_token": token,
            "expires_in": expires(state, ttl),
            "token_type": "Application Access Token",
        }),
    )
}

fn authorization_code(
    state: &FakeState,
    code: Option<&str>,
    redirect_uri: Option<&str>,
) -> Response {
    let (Some(code), Some(redirect_uri)) = (code, redirect_uri) else {
        return invalid_request("request is missing a required parameter: code or redirect_uri");
    };
    let now = state.now();
    let grant = {
        let mut grants = lock(&state.grants);
        match grants.codes.get_mut(code) {
            Some(g) if !g.used && now < g.expires_at && g.redirect_uri == redirect_uri => {
                g.used = true;
                Some(g.clone())
            }
            _ => None,
        }
    };
    let Some(grant) = grant else {
        return oauth_error(
            400,
            "invalid_grant",
            "the provided authorization grant code is invalid or was issued to another client",
        );
    };
    let (access, ttl) = issue_access(
        state,
        "User Access Token",
        grant.scopes.clone(),
        Some(grant.user.clone()),
    );
    let (refresh, refresh_ttl) = issue_refresh(state, grant.scopes, grant.user);
    Response::json(
        200,
        &json!({
            "access_token": access,
            "expires_in": expires(state, ttl),
            "refresh_token": refresh,
            "refresh_token_expires_in": expires(state, refresh_ttl),
            "token_type": "User Access Token",
        }),
    )
}

fn refresh_token(state: &FakeState, refresh: Option<&str>, scope: Option<&str>) -> Response {
    let Some(refresh) = refresh else {
        return invalid_request("request is missing a required parameter: refresh_token");
    };
    let now = state.now();
    let grant = lock(&state.grants).refresh.get(refresh).cloned();
    let Some(grant) = grant.filter(|g| !g.revoked && now < g.expires_at) else {
        return oauth_error(
            400,
            "invalid_grant",
            "the provided authorization refresh token is invalid or was issued to another client",
        );
    };
    let scopes = match scope {
        Some(s) => scopes_of(s),
        None => grant.scopes.clone(),
    };
    if scopes.is_empty() || scopes.iter().any(|s| !grant.scopes.contains(s)) {
        return oauth_error(
            400,
            "invalid_scope",
            "The requested scope is invalid, unknown, malformed, or exceeds the scope granted to the client",
        );
    }
    let (access, ttl) = issue_access(state, "User Access Token", scopes, Some(grant.user.clone()));
    let mut body = json!({
        "access_token": access,
        "expires_in": expires(state, ttl),
        "token_type": "User Access Token",
    });
    if state.config().rotate_refresh_tokens {
        if let Some(g) = lock(&state.grants).refresh.get_mut(refresh) {
            g.revoked = true;
        }
        let (new_refresh, refresh_ttl) = issue_refresh(state, grant.scopes, grant.user);
        body["refresh_token"] = json!(new_refresh);
        body["refresh_token_expires_in"] = expires(state, refresh_ttl);
    }
    Response::json(200, &body)
}

fn authorize(request: &Request, state: &FakeState) -> Response {
    // Read as eBay reads it (`scope=https://…%20https://…` as eBay's OAuth client sends it);
    // strictly with `strict_encoding`: a consent URL the client did not encode fully is caught.
    let query = request.query.as_deref().unwrap_or("");
    let pairs = if state.config().strict_encoding {
        match parse_form_strict(query.as_bytes()) {
            Ok(p) => p,
            Err(e) => return Response::text(400, format!("malformed query: {e}")),
        }
    } else {
        parse_query(query)
    };
    let get = |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let config = state.config();
    if get("client_id") != Some(config.client_id.as_str()) {
        return Response::text(400, "unknown client_id");
    }
    let Some(redirect_uri) = get("redirect_uri").filter(|r| !r.is_empty()) else {
        return Response::text(400, "redirect_uri is required");
    };
    if get("response_type") != Some("code") {
        return Response::text(400, "response_type must be code");
    }
    let target = if redirect_uri.starts_with("http://") || redirect_uri.starts_with("https://") {
        redirect_uri.to_owned()
    } else {
        config
            .ru_names
            .iter()
            .find(|(name, _)| name == redirect_uri)
            .map(|(_, url)| url.clone())
            .unwrap_or_else(|| format!("{}{CONSENT_ACCEPTED_PATH}", state.base_url()))
    };
    let separator = if target.contains('?') { '&' } else { '?' };
    let client_state = get("state").unwrap_or_default();
    let scopes = scopes_of(get("scope").unwrap_or_default());
    if scopes.is_empty()
        || scopes
            .iter()
            .any(|s| !is_known_scope(state, &config.user_scopes, s))
    {
        let q = encode_query(&[
            ("state", client_state),
            ("error", "invalid_scope"),
            ("error_description", "The requested scope is invalid"),
        ]);
        return Response::redirect(format!("{target}{separator}{q}"));
    }
    if config.consent == ConsentBehavior::Deny {
        let q = encode_query(&[
            ("state", client_state),
            ("error", "access_denied"),
            ("error_description", "The user declined the consent"),
        ]);
        return Response::redirect(format!("{target}{separator}{q}"));
    }
    // eBay's shape (`^`, `#`); with `strict_encoding` also `%`, `+` and `/`.
    let code = ebay_shaped(state, "v^1.1#i^1#p^3#r^1#I^3#f^0#", "Ul41XzA6", "%+x/=");
    lock(&state.grants).codes.insert(
        code.clone(),
        CodeGrant {
            redirect_uri: redirect_uri.to_owned(),
            scopes,
            expires_at: state.now() + config.code_ttl,
            used: false,
            user: lock(&state.notify.user).username.clone(),
        },
    );
    let ttl = config.code_ttl.as_secs().to_string();
    let q = encode_query(&[
        ("state", client_state),
        ("code", &code),
        ("expires_in", &ttl),
    ]);
    Response::redirect(format!("{target}{separator}{q}"))
}
