//! The token endpoint client: one blocking HTTP request per grant, with the exact request the
//! service expects and typed answers.
//!
//! Every grant is `POST {base_url}/identity/v1/oauth2/token` with
//! `Content-Type: application/x-www-form-urlencoded` and
//! `Authorization: Basic base64(urlencode(client_id) ":" urlencode(client_secret))`
//! (RFC 6749 §2.3.1). The form body is encoded by the `url` crate, so codes such as
//! `v^1.1#i^1#…` and space-separated scopes arrive intact.

use std::time::{Duration, Instant};

use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use serde::Deserialize;
use url::form_urlencoded;
use zeroize::Zeroizing;

use super::config::{Credentials, Endpoints, require_redirect_uri};
use super::error::{ConfigError, Grant, OAuthError, OAuthErrorCode};
use super::redact::Redactor;
use super::scope::ScopeSet;
use super::secret::{AccessToken, AuthorizationCode, ClientId, RefreshToken};

/// The lifetime assumed when a token answer has no `expires_in` (the documented 2 hours).
pub const DEFAULT_EXPIRES_IN: Duration = Duration::from_secs(2 * 60 * 60);

/// The default time-out of one token request: it bounds the whole call, from connecting to
/// the last byte of the answer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest token-endpoint answer read (64 KiB; a token answer is a few kilobytes). A
/// larger answer ends the call with [`OAuthError::ResponseTooLarge`] as soon as it passes
/// the limit, without reading the rest.
pub const MAX_TOKEN_ANSWER: usize = 64 * 1024;

/// A successful answer of the token endpoint.
#[derive(Debug, Clone)]
pub struct TokenResponse {
    /// The bearer token.
    pub access_token: AccessToken,
    /// `token_type`, for example `Application Access Token` or `User Access Token`.
    pub token_type: String,
    /// `expires_in` (sent as a number or a string); [`DEFAULT_EXPIRES_IN`] when absent.
    pub expires_in: Duration,
    /// `refresh_token` (user grants; on a refresh only when the server rotates it).
    pub refresh_token: Option<RefreshToken>,
    /// `refresh_token_expires_in`.
    pub refresh_token_expires_in: Option<Duration>,
}

/// A client of the token endpoint for one application.
///
/// ```no_run
/// use marketplace_client::oauth::{Credentials, Endpoints, OAuthClient, ScopeSet};
/// # fn main() -> Result<(), marketplace_client::oauth::OAuthError> {
/// let client = OAuthClient::new(Endpoints::sandbox(), Credentials::new("MyApp-SBX-1", "SBX-secret"))?;
/// // An application token for the default scope ({base_url}/oauth/api_scope).
/// let token = client.client_credentials(&ScopeSet::default())?;
/// println!("valid for {} s", token.expires_in.as_secs());
/// # Ok(()) }
/// ```
pub struct OAuthClient {
    endpoints: Endpoints,
    credentials: Credentials,
    http: crate::http::Http,
    /// Bounds each whole call, body included.
    timeout: Duration,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("endpoints", &self.endpoints)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client with the default time-out ([`DEFAULT_TIMEOUT`]).
    pub fn new(endpoints: Endpoints, credentials: Credentials) -> Result<Self, OAuthError> {
        Self::with_timeout(endpoints, credentials, DEFAULT_TIMEOUT)
    }

    /// A client whose requests give up after `timeout`. A time-out too long for the clock
    /// (up to [`Duration::MAX`]) is taken as no deadline beyond what the HTTP client allows.
    pub fn with_timeout(
        endpoints: Endpoints,
        credentials: Credentials,
        timeout: Duration,
    ) -> Result<Self, OAuthError> {
        // A token request carries credentials: the client never follows a redirect with them.
        let http = crate::http::client(
            endpoints.base_url(),
            timeout.min(Duration::from_secs(10)),
            timeout,
        )
        .map_err(|message| OAuthError::Transport { message })?;
        Ok(Self {
            endpoints,
            credentials,
            http,
            timeout,
        })
    }

    /// A client that sends through `http` (for shared connection pools or custom TLS). Give it
    /// a redirect policy of `none`. Each call is bounded by [`DEFAULT_TIMEOUT`], body included.
    pub fn with_http_client(
        endpoints: Endpoints,
        credentials: Credentials,
        http: reqwest::blocking::Client,
    ) -> Self {
        Self {
            endpoints,
            credentials,
            http: crate::http::Http::new(http),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The endpoints.
    pub fn endpoints(&self) -> &Endpoints {
        &self.endpoints
    }

    /// The application id.
    pub fn client_id(&self) -> &ClientId {
        &self.credentials.client_id
    }

    /// The redirect URI (RuName) of the consent flow, if configured.
    pub fn redirect_uri(&self) -> Option<&str> {
        self.credentials.redirect_uri.as_deref()
    }

    pub(crate) fn require_redirect_uri(&self) -> Result<&str, OAuthError> {
        Ok(require_redirect_uri(self.redirect_uri())?)
    }

    /// Requests an application token (the client-credentials grant of the Identity API, "Getting an application access token"): `grant_type=client_credentials` and `scope`.
    /// An empty `scopes` asks for the default scope `{base_url}/oauth/api_scope`.
    pub fn client_credentials(&self, scopes: &ScopeSet) -> Result<TokenResponse, OAuthError> {
        let scope = if scopes.is_empty() {
            self.endpoints.default_scope()
        } else {
            scopes.to_space_separated()
        };
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", Grant::ClientCredentials.as_str());
        form.append_pair("scope", &scope);
        self.post(Grant::ClientCredentials, Zeroizing::new(form.finish()), &[])
    }

    /// Exchanges an authorization code for a user token (the authorization-code grant, "Exchanging the authorization code for a user access token"):
    /// `grant_type=authorization_code`, `code` and the configured `redirect_uri`.
    pub fn exchange_code(&self, code: &AuthorizationCode) -> Result<TokenResponse, OAuthError> {
        let redirect_uri = self.require_redirect_uri()?;
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", Grant::AuthorizationCode.as_str());
        form.append_pair("code", code.secret());
        form.append_pair("redirect_uri", redirect_uri);
        self.post(
            Grant::AuthorizationCode,
            Zeroizing::new(form.finish()),
            &[code.secret()],
        )
    }

    /// Gets a new user access token from a refresh token (the refresh-token grant, "Refreshing a user access token"):
    /// `grant_type=refresh_token`, `refresh_token` and `scope`.
    ///
    /// `scopes` must be the scopes granted at consent or a subset of them (asking for more is
    /// answered with `invalid_scope`). An empty set leaves `scope` out, which RFC 6749 §6
    /// defines as "the scopes originally granted"; the service documents `scope` as required,
    /// so pass the granted scopes.
    pub fn refresh(
        &self,
        refresh_token: &RefreshToken,
        scopes: &ScopeSet,
    ) -> Result<TokenResponse, OAuthError> {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", Grant::RefreshToken.as_str());
        form.append_pair("refresh_token", refresh_token.secret());
        if !scopes.is_empty() {
            form.append_pair("scope", &scopes.to_space_separated());
        }
        self.post(
            Grant::RefreshToken,
            Zeroizing::new(form.finish()),
            &[refresh_token.secret()],
        )
    }

    fn basic_authorization(&self) -> Zeroizing<String> {
        let id: String =
            form_urlencoded::byte_serialize(self.credentials.client_id.as_str().as_bytes())
                .collect();
        let secret: Zeroizing<String> = Zeroizing::new(
            form_urlencoded::byte_serialize(self.credentials.client_secret.secret().as_bytes())
                .collect(),
        );
        let pair = Zeroizing::new(format!("{id}:{}", secret.as_str()));
        Zeroizing::new(format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair.as_bytes())
        ))
    }

    /// One token request, on a thread of its own when a tokio runtime is current (reqwest's
    /// blocking client panics on a runtime's thread; see [`crate::http::off_runtime`]).
    fn post(
        &self,
        grant: Grant,
        body: Zeroizing<String>,
        request_secrets: &[&str],
    ) -> Result<TokenResponse, OAuthError> {
        crate::http::off_runtime(
            || self.post_here(grant, body, request_secrets),
            |message| OAuthError::Transport { message },
        )
    }

    /// One token request on this thread, in named steps: send it, turn an error status into
    /// its error, parse the body, check what it holds. Every text of the answer that reaches
    /// an error passes the request's [`Redactor`].
    fn post_here(
        &self,
        grant: Grant,
        body: Zeroizing<String>,
        request_secrets: &[&str],
    ) -> Result<TokenResponse, OAuthError> {
        let authorization = self.basic_authorization();
        let redactor = self.redactor(&authorization, request_secrets);
        let answer = self.send(grant, &authorization, body)?;
        answer.check_status(grant, &redactor)?;
        let raw = answer.parse(grant, &redactor)?;
        raw.into_response(grant, answer.status, &redactor)
    }

    /// A sanitizer that knows every secret of this request: the client secret, its Basic
    /// form, and `request_secrets` (the code or the refresh token).
    fn redactor(&self, authorization: &str, request_secrets: &[&str]) -> Redactor {
        let mut redactor = Redactor::new()
            .with(self.credentials.client_secret.secret())
            .with(authorization.trim_start_matches("Basic "));
        for secret in request_secrets {
            redactor.add(secret);
        }
        redactor
    }

    /// Sends the form with the Basic credentials and reads the answer: at most
    /// [`MAX_TOKEN_ANSWER`] bytes, and all of it before the time-out.
    fn send(
        &self,
        grant: Grant,
        authorization: &str,
        body: Zeroizing<String>,
    ) -> Result<Answer, OAuthError> {
        // A time-out too long to add to the clock (Duration::MAX) means no deadline.
        let deadline = Instant::now().checked_add(self.timeout);
        let mut auth_value = HeaderValue::from_str(authorization).map_err(|_| {
            OAuthError::Config(ConfigError::Invalid {
                name: "client credentials".into(),
                reason: "they contain characters that cannot be sent in a header".into(),
            })
        })?;
        auth_value.set_sensitive(true);
        let response = self
            .http
            .post(self.endpoints.token_url())
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(AUTHORIZATION, auth_value)
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body.as_bytes().to_vec())
            .timeout(self.timeout)
            .send()
            .map_err(|e| transport_error(&e))?;
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let bytes = read_answer(response, grant, deadline, self.timeout)?;
        Ok(Answer {
            status,
            retry_after,
            bytes,
        })
    }
}

/// Reads the body of `response`: at most [`MAX_TOKEN_ANSWER`] bytes, and only until
/// `deadline` (a slow drip is cut there, whatever the per-read time-outs allow).
fn read_answer(
    mut response: reqwest::blocking::Response,
    grant: Grant,
    deadline: Option<Instant>,
    timeout: Duration,
) -> Result<Zeroizing<Vec<u8>>, OAuthError> {
    use std::io::Read as _;
    let past_deadline = || deadline.is_some_and(|d| Instant::now() >= d);
    let too_large = || OAuthError::ResponseTooLarge {
        grant,
        limit: MAX_TOKEN_ANSWER,
    };
    let timed_out = || OAuthError::Timeout {
        message: format!(
            "the answer was not complete after {} ms",
            timeout.as_millis()
        ),
    };
    if response
        .content_length()
        .is_some_and(|n| n > MAX_TOKEN_ANSWER as u64)
    {
        return Err(too_large());
    }
    let mut bytes = Zeroizing::new(Vec::new());
    let mut chunk = Zeroizing::new([0u8; 8 * 1024]);
    loop {
        if past_deadline() {
            return Err(timed_out());
        }
        match response.read(chunk.as_mut()) {
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                if bytes.len() + n > MAX_TOKEN_ANSWER {
                    return Err(too_large());
                }
                bytes.extend_from_slice(&chunk[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if past_deadline() || e.kind() == std::io::ErrorKind::TimedOut => {
                return Err(timed_out());
            }
            Err(e) => {
                return Err(OAuthError::Transport {
                    message: format!("the answer was cut off: {}", error_chain(&e)),
                });
            }
        }
    }
}

/// The token endpoint's answer, before it is trusted.
struct Answer {
    status: u16,
    retry_after: Option<Duration>,
    bytes: Zeroizing<Vec<u8>>,
}

impl Answer {
    fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// 429, 5xx and other error statuses become their errors; a success passes.
    fn check_status(&self, grant: Grant, redactor: &Redactor) -> Result<(), OAuthError> {
        let status = self.status;
        if status == 429 {
            return Err(OAuthError::RateLimited {
                grant,
                retry_after: self.retry_after,
                body: redactor.body(&self.bytes),
            });
        }
        if status >= 500 {
            return Err(OAuthError::Http {
                grant,
                status,
                body: redactor.body(&self.bytes),
            });
        }
        if self.is_success() {
            return Ok(());
        }
        Err(match serde_json::from_slice::<RawTokenBody>(&self.bytes) {
            Ok(mut raw) if raw.error.is_some() => raw.server_error(grant, status, redactor),
            _ => OAuthError::Http {
                grant,
                status,
                body: redactor.body(&self.bytes),
            },
        })
    }

    /// The JSON of a success answer. An answer that does not parse is not kept: a successful
    /// token answer holds secrets the sanitizer cannot know (the new tokens).
    fn parse(&self, grant: Grant, redactor: &Redactor) -> Result<RawTokenBody, OAuthError> {
        let mut raw: RawTokenBody = serde_json::from_slice(&self.bytes).map_err(|e| {
            OAuthError::UnexpectedBody {
                grant,
                status: self.status,
                // serde_json's message may quote the body: keep only where it failed.
                reason: format!(
                    "not the expected JSON ({:?} error at line {} column {})",
                    e.classify(),
                    e.line(),
                    e.column()
                ),
                body: WITHHELD.to_owned(),
            }
        })?;
        if raw.error.is_some() {
            return Err(raw.server_error(grant, self.status, redactor));
        }
        Ok(raw)
    }
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

fn transport_error(e: &reqwest::Error) -> OAuthError {
    let message = error_chain(e);
    if e.is_timeout() {
        OAuthError::Timeout { message }
    } else {
        OAuthError::Transport { message }
    }
}

/// The `Retry-After` of an answer, in seconds (the HTTP-date form is not read).
/// Capped at one day, so that adding it to a time cannot overflow.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|s| Duration::from_secs(s.min(86_400)))
}

/// The longest `Retry-After` honoured (2 minutes): the token providers wait at most this long
/// after a 429 before asking again, and the taxonomy client's default limit is the same. A
/// larger value (one answer of `Retry-After: 999999` would lock a provider out for days) is
/// taken as this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// The longest token lifetime believed (ten years; the service's refresh tokens live 18
/// months): a larger `expires_in` is taken as this.
pub const MAX_LIFETIME: Duration = Duration::from_secs(10 * 365 * 86_400);

use crate::http::error_chain;
