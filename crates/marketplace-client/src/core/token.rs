//! The token endpoint without I/O: the request of each grant (the exact form and headers the
//! service expects) and the reading of its answer (status to typed outcome, the OAuth error
//! body, what a success must hold). Both fronts send what [`TokenCall::request`] gives and
//! hand the answer to [`TokenCall::read_answer`].
//!
//! Every grant is `POST {base_url}/identity/v1/oauth2/token` with
//! `Content-Type: application/x-www-form-urlencoded` and
//! `Authorization: Basic base64(client_id ":" client_secret)`, the two as they are, as eBay's
//! "Using OAuth to access eBay APIs" documents it (eBay's ids and secrets are letters, digits
//! and `-`, which RFC 6749 §2.3.1's form-encoding would leave unchanged anyway). The form
//! body is encoded by the `url` crate, so codes such as
//! `v^1.1#i^1#…` and space-separated scopes arrive intact.

use std::time::Duration;

use base64::Engine as _;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use serde::Deserialize;
use url::form_urlencoded;
use zeroize::Zeroizing;

use super::exchange::{Answer, Failure, FailureKind, Limits};
use crate::oauth::redact::Redactor;
use crate::oauth::{
    AccessToken, AuthorizationCode, ConfigError, Credentials, Endpoints, Grant, OAuthError,
    OAuthErrorCode, RefreshToken, ScopeSet,
};

/// The lifetime assumed when a token answer has no `expires_in` (the documented 2 hours).
pub const DEFAULT_EXPIRES_IN: Duration = Duration::from_secs(2 * 60 * 60);

/// The default time-out of one token request: it bounds the whole call, from connecting to
/// the last byte of the answer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest token-endpoint answer read (64 KiB; a token answer is a few kilobytes). A
/// larger answer ends the call with [`OAuthError::ResponseTooLarge`] as soon as it passes
/// the limit, without reading the rest.
pub const MAX_TOKEN_ANSWER: usize = 64 * 1024;

/// The longest `Retry-After` honoured (2 minutes): the token providers wait at most this long
/// after a 429 before asking again, and the taxonomy client's default limit is the same. A
/// larger value (one answer of `Retry-After: 999999` would lock a provider out for days) is
/// taken as this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// The longest token lifetime believed (ten years; the service's refresh tokens live 18
/// months): a larger `expires_in` is taken as this.
pub const MAX_LIFETIME: Duration = Duration::from_secs(10 * 365 * 86_400);

/// A successful answer of the token endpoint.
#[derive(Debug, Clone)]
pub struct TokenResponse {
    /// The bearer token.
    pub access_token: AccessToken,
    /// `token_type`, for example `Application Access Token` or `User Access Token`.
    pub token_type: String,
    /// `expires_in` (sent as a number or a string); 2 hours when absent.
    pub expires_in: Duration,
    /// `refresh_token` (user grants; on a refresh only when the server rotates it).
    pub refresh_token: Option<RefreshToken>,
    /// `refresh_token_expires_in`.
    pub refresh_token_expires_in: Option<Duration>,
}

/// One token request, ready to send, and what reading its answer needs.
pub(crate) struct TokenCall {
    /// The grant (for errors and traces).
    pub(crate) grant: Grant,
    /// The request: method, URL, headers (the `Authorization` value marked sensitive) and
    /// the form body.
    pub(crate) request: http::Request<Vec<u8>>,
    /// Knows every secret of the request, for every text of the answer kept in an error.
    redactor: Redactor,
    /// The time-out of the call.
    pub(crate) timeout: Duration,
    /// The token endpoint.
    url: url::Url,
    /// The scopes asked for (no secret), for traces.
    scopes: String,
}

/// The request of an application token (the client-credentials grant of the Identity API,
/// "Getting an application access token"): `grant_type=client_credentials` and `scope`. An
/// empty `scopes` asks for the default scope `{base_url}/oauth/api_scope`.
pub(crate) fn client_credentials(
    endpoints: &Endpoints,
    credentials: &Credentials,
    scopes: &ScopeSet,
    timeout: Duration,
) -> Result<TokenCall, OAuthError> {
    let scope = if scopes.is_empty() {
        endpoints.default_scope()
    } else {
        scopes.to_space_separated()
    };
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", Grant::ClientCredentials.as_str());
    form.append_pair("scope", &scope);
    TokenCall::new(
        endpoints,
        credentials,
        Grant::ClientCredentials,
        Zeroizing::new(form.finish()),
        &[],
        timeout,
    )
    .map(|call| call.with_scopes(scope))
}

/// The exchange of an authorization code ("Exchanging the authorization code for a user
/// access token"): `grant_type=authorization_code`, `code` and the configured
/// `redirect_uri`.
pub(crate) fn exchange_code(
    endpoints: &Endpoints,
    credentials: &Credentials,
    code: &AuthorizationCode,
    timeout: Duration,
) -> Result<TokenCall, OAuthError> {
    let redirect_uri = crate::oauth::require_redirect_uri(credentials.redirect_uri.as_deref())?;
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", Grant::AuthorizationCode.as_str());
    form.append_pair("code", code.secret());
    form.append_pair("redirect_uri", redirect_uri);
    TokenCall::new(
        endpoints,
        credentials,
        Grant::AuthorizationCode,
        Zeroizing::new(form.finish()),
        &[code.secret()],
        timeout,
    )
}

/// A new user access token from a refresh token ("Refreshing a user access token"):
/// `grant_type=refresh_token`, `refresh_token` and `scope` (left out when `scopes` is empty,
/// which RFC 6749 §6 defines as "the scopes originally granted").
pub(crate) fn refresh(
    endpoints: &Endpoints,
    credentials: &Credentials,
    refresh_token: &RefreshToken,
    scopes: &ScopeSet,
    timeout: Duration,
) -> Result<TokenCall, OAuthError> {
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", Grant::RefreshToken.as_str());
    form.append_pair("refresh_token", refresh_token.secret());
    if !scopes.is_empty() {
        form.append_pair("scope", &scopes.to_space_separated());
    }
    TokenCall::new(
        endpoints,
        credentials,
        Grant::RefreshToken,
        Zeroizing::new(form.finish()),
        &[refresh_token.secret()],
        timeout,
    )
    .map(|call| call.with_scopes(scopes.to_space_separated()))
}

impl TokenCall {
    fn new(
        endpoints: &Endpoints,
        credentials: &Credentials,
        grant: Grant,
        body: Zeroizing<String>,
        request_secrets: &[&str],
        timeout: Duration,
    ) -> Result<Self, OAuthError> {
        let authorization = basic_authorization(credentials);
        // A sanitizer that knows every secret of this request: the client secret, its Basic
        // form, and `request_secrets` (the code or the refresh token).
        let mut redactor = Redactor::new()
            .with(credentials.client_secret.secret())
            .with(authorization.trim_start_matches("Basic "));
        for secret in request_secrets {
            redactor.add(secret);
        }
        let mut auth_value = HeaderValue::from_str(&authorization).map_err(|_| {
            OAuthError::Config(ConfigError::Invalid {
                name: "client credentials".into(),
                reason: "they contain characters that cannot be sent in a header".into(),
            })
        })?;
        auth_value.set_sensitive(true);
        let url = endpoints.token_url();
        let mut request = http::Request::new(body.as_bytes().to_vec());
        *request.method_mut() = http::Method::POST;
        *request.uri_mut() = url.as_str().parse().map_err(|_| {
            OAuthError::Config(ConfigError::Invalid {
                name: "token endpoint".into(),
                reason: "not a URL that can be requested".into(),
            })
        })?;
        let headers = request.headers_mut();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        headers.insert(AUTHORIZATION, auth_value);
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        Ok(Self {
            grant,
            request,
            redactor,
            timeout,
            url,
            scopes: String::new(),
        })
    }

    fn with_scopes(mut self, scopes: String) -> Self {
        self.scopes = scopes;
        self
    }

    /// The span of this request (see [`super::trace`]): operation `token`, its grant and
    /// scopes.
    pub(crate) fn span(&self) -> tracing::Span {
        let span = super::trace::attempt("token", &http::Method::POST, &self.url, None, 1);
        span.record("grant", tracing::field::display(self.grant.as_str()));
        span.record("scopes", tracing::field::display(&self.scopes));
        span
    }

    /// The outcome of the request (`elapsed` after it started) as the grant's result,
    /// recorded in its `span`.
    pub(crate) fn finish(
        &self,
        outcome: Result<Answer, Failure>,
        span: &tracing::Span,
        elapsed: Duration,
    ) -> Result<TokenResponse, OAuthError> {
        match outcome {
            Ok(answer) => {
                let result = self.read_answer(&answer);
                super::trace::answered(
                    span,
                    answer.status,
                    elapsed,
                    result.as_ref().err().and_then(OAuthError::retry_after),
                    &[],
                );
                if let Ok(response) = &result {
                    span.record("expires_in_s", response.expires_in.as_secs());
                }
                result
            }
            Err(failure) => {
                super::trace::failed(span, elapsed, &failure.message);
                Err(self.failed(failure))
            }
        }
    }

    /// The limits of the answer: [`MAX_TOKEN_ANSWER`] whatever the status.
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            success: MAX_TOKEN_ANSWER as u64,
            error: MAX_TOKEN_ANSWER as u64,
        }
    }

    /// A failed exchange (no answer, or an answer cut short) as the grant's error.
    pub(crate) fn failed(&self, failure: Failure) -> OAuthError {
        match failure.kind {
            FailureKind::TooLarge => OAuthError::ResponseTooLarge {
                grant: self.grant,
                limit: MAX_TOKEN_ANSWER,
            },
            FailureKind::TimedOut => OAuthError::Timeout {
                message: if failure.answered {
                    format!(
                        "the answer was not complete after {} ms",
                        self.timeout.as_millis()
                    )
                } else {
                    failure.message
                },
            },
            FailureKind::Cut { .. } => OAuthError::Transport {
                message: format!("the answer was cut off: {}", failure.message),
            },
            FailureKind::Connect | FailureKind::Other => OAuthError::Transport {
                message: failure.message,
            },
        }
    }

    /// Reads the answer, in named steps: an error status becomes its error, the body is
    /// parsed, what it holds is checked. Every text of the answer that reaches an error
    /// passes the request's sanitizer.
    pub(crate) fn read_answer(&self, answer: &Answer) -> Result<TokenResponse, OAuthError> {
        let grant = self.grant;
        let redactor = &self.redactor;
        check_status(answer, grant, redactor)?;
        let raw = parse(answer, grant, redactor)?;
        raw.into_response(grant, answer.status, redactor)
    }
}

/// `Basic base64(client_id:client_secret)`, as eBay documents it: nothing encoded inside.
fn basic_authorization(credentials: &Credentials) -> Zeroizing<String> {
    let pair = Zeroizing::new(format!(
        "{}:{}",
        credentials.client_id.as_str(),
        credentials.client_secret.secret()
    ));
    Zeroizing::new(format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair.as_bytes())
    ))
}

/// 429, 5xx and other error statuses become their errors; a success passes.
fn check_status(answer: &Answer, grant: Grant, redactor: &Redactor) -> Result<(), OAuthError> {
    let status = answer.status;
    if status == 429 {
        return Err(OAuthError::RateLimited {
            grant,
            retry_after: retry_after(&answer.headers),
            body: redactor.body(&answer.body),
        });
    }
    if status >= 500 {
        return Err(OAuthError::Http {
            grant,
            status,
            body: redactor.body(&answer.body),
        });
    }
    if (200..300).contains(&status) {
        return Ok(());
    }
    Err(match serde_json::from_slice::<RawTokenBody>(&answer.body) {
        Ok(mut raw) if raw.error.is_some() => raw.server_error(grant, status, redactor),
        _ => OAuthError::Http {
            grant,
            status,
            body: redactor.body(&answer.body),
        },
    })
}

/// The JSON of a success answer. An answer that does not parse is not kept: a successful
/// token answer holds secrets the sanitizer cannot know (the new tokens).
fn parse(answer: &Answer, grant: Grant, redactor: &Redactor) -> Result<RawTokenBody, OAuthError> {
    let mut raw: RawTokenBody =
        serde_json::from_slice(&answer.body).map_err(|e| OAuthError::UnexpectedBody {
            grant,
            status: answer.status,
            // serde_json's message may quote the body: keep only where it failed.
            reason: format!(
                "not the expected JSON ({:?} error at line {} column {})",
                e.classify(),
                e.line(),
                e.column()
            ),
            body: WITHHELD.to_owned(),
        })?;
    if raw.error.is_some() {
        return Err(raw.server_error(grant, answer.status, redactor));
    }
    Ok(raw)
}

/// What an error shows instead of the body of a successful token answer.
const WITHHELD: &str = "[withheld: a successful token answer may hold secrets]";

#[derive(Deserialize)]
struct RawTokenBody {
    access_token: Option<String>,
    token_type: Option<String>,
    expires_in: Option<Seconds>,
    refresh_token: Option<String>,
    refresh_token_expires_in: Option<Seconds>,
    error: Option<String>,
    error_description: Option<String>,
}

impl RawTokenBody {
    /// The OAuth error body (`{"error": …}`) as an error; its texts pass `redactor`.
    fn server_error(&mut self, grant: Grant, status: u16, redactor: &Redactor) -> OAuthError {
        OAuthError::Server {
            grant,
            code: OAuthErrorCode::from_server(self.error.as_deref().unwrap_or_default(), redactor),
            description: self.error_description.as_deref().map(|d| redactor.text(d)),
            status,
        }
    }

    /// Checks what a success answer holds and takes it.
    fn into_response(
        mut self,
        grant: Grant,
        status: u16,
        redactor: &Redactor,
    ) -> Result<TokenResponse, OAuthError> {
        // A successful answer that lacks what we need may carry a token under a key we do
        // not know: its body is withheld rather than redacted.
        let unexpected = |reason: &str| OAuthError::UnexpectedBody {
            grant,
            status,
            reason: reason.to_owned(),
            body: WITHHELD.to_owned(),
        };
        let Some(access_token) = self.access_token.take().filter(|t| !t.is_empty()) else {
            return Err(unexpected("no access_token"));
        };
        let access_token = AccessToken::new(access_token);
        // Lifetimes are capped, so no answer can make an expiry time overflow.
        let expires_in = match &self.expires_in {
            None => DEFAULT_EXPIRES_IN,
            Some(v) => v
                .seconds()
                .ok_or_else(|| unexpected("expires_in is not a number of seconds"))?,
        }
        .min(MAX_LIFETIME);
        let refresh_token_expires_in = match &self.refresh_token_expires_in {
            None => None,
            Some(v) => Some(
                v.seconds()
                    .ok_or_else(|| {
                        unexpected("refresh_token_expires_in is not a number of seconds")
                    })?
                    .min(MAX_LIFETIME),
            ),
        };
        let refresh_token = self
            .refresh_token
            .take()
            .filter(|t| !t.is_empty())
            .map(RefreshToken::new);
        // `token_type` is server text that is kept (and printed by `Debug`): it passes the
        // sanitizer too, which now also knows the new tokens.
        let mut redactor = redactor.clone().with(access_token.secret());
        if let Some(refresh) = &refresh_token {
            redactor.add(refresh.secret());
        }
        let token_type = redactor.text(self.token_type.as_deref().unwrap_or_default());
        Ok(TokenResponse {
            access_token,
            token_type,
            expires_in,
            refresh_token,
            refresh_token_expires_in,
        })
    }
}

impl Drop for RawTokenBody {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        self.access_token.zeroize();
        self.refresh_token.zeroize();
    }
}

/// `expires_in` as the service sends it: a number, or a string holding one.
#[derive(Deserialize)]
#[serde(untagged)]
enum Seconds {
    Int(u64),
    Float(f64),
    Text(String),
}

impl Seconds {
    fn seconds(&self) -> Option<Duration> {
        match self {
            Seconds::Int(n) => Some(Duration::from_secs(*n)),
            Seconds::Float(f) if f.is_finite() && *f >= 0.0 && *f < 1e12 => {
                Some(Duration::from_secs(*f as u64))
            }
            Seconds::Float(_) => None,
            Seconds::Text(s) => s.trim().parse::<u64>().ok().map(Duration::from_secs),
        }
    }
}

/// The `Retry-After` of an answer, in seconds (the HTTP-date form is not read).
/// Capped at one day, so that adding it to a time cannot overflow.
pub(crate) fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|s| Duration::from_secs(s.min(86_400)))
}
