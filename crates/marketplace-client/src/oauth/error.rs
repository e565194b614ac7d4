//! The one error type of the OAuth client.
//!
//! Every message says what to check next. No variant holds a secret: every text that came
//! from the server (bodies, `error`, `error_description`) is kept only after the sanitizer of
//! `redact` has cut token-like values, every secret the request carried and control
//! characters.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::redact::Redactor;

/// What [`FileStore::new`](super::FileStore::new)'s file is, as its errors name it
/// (`StoreError::named` puts another file's name in its place).
pub(crate) const REFRESH_TOKEN_STORE: &str = "the refresh-token store";

/// The token request an error came from; it decides which advice a message gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Grant {
    /// `grant_type=client_credentials`: an application token (the client-credentials grant of the Identity API, "Getting an application access token").
    ClientCredentials,
    /// `grant_type=authorization_code`: exchanging a consent code for a user token (the authorization-code grant, "Exchanging the authorization code for a user access token").
    AuthorizationCode,
    /// `grant_type=refresh_token`: a new user access token from a refresh token (the refresh-token grant, "Refreshing a user access token").
    RefreshToken,
}

impl Grant {
    /// The `grant_type` value sent in the form body.
    pub fn as_str(self) -> &'static str {
        match self {
            Grant::ClientCredentials => "client_credentials",
            Grant::AuthorizationCode => "authorization_code",
            Grant::RefreshToken => "refresh_token",
        }
    }
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `error` field of an OAuth 2.0 error body (RFC 6749 §5.2), or of a refused consent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OAuthErrorCode {
    /// `invalid_client`: client authentication failed (wrong application id or certificate id).
    InvalidClient,
    /// `invalid_grant`: the code or refresh token is invalid, expired, revoked or used.
    InvalidGrant,
    /// `invalid_scope`: a requested scope is unknown or exceeds what was granted.
    InvalidScope,
    /// `invalid_request`: a parameter is missing, repeated or malformed.
    InvalidRequest,
    /// `unauthorized_client`: the application may not use this grant type.
    UnauthorizedClient,
    /// `unsupported_grant_type`: the server does not support the grant type.
    UnsupportedGrantType,
    /// Any other code, as the server sent it (for example `access_denied` on a refused consent),
    /// sanitized: secrets of the request and control characters removed.
    Other(String),
}

impl OAuthErrorCode {
    /// Maps the `error` string of an error body. Text from a server goes through
    /// the crate's sanitizing parser instead.
    pub fn from_code(code: &str) -> Self {
        match code {
            "invalid_client" => Self::InvalidClient,
            "invalid_grant" => Self::InvalidGrant,
            "invalid_scope" => Self::InvalidScope,
            "invalid_request" => Self::InvalidRequest,
            "unauthorized_client" => Self::UnauthorizedClient,
            "unsupported_grant_type" => Self::UnsupportedGrantType,
            other => Self::Other(other.to_owned()),
        }
    }

    /// Maps the `error` string a server (or a redirect) sent: an unknown code is kept only
    /// after `redactor` has removed the request's secrets and control characters.
    pub(crate) fn from_server(code: &str, redactor: &Redactor) -> Self {
        match Self::from_code(code) {
            Self::Other(other) => Self::Other(redactor.text(&other)),
            known => known,
        }
    }

    /// The code as the server spells it.
    pub fn as_str(&self) -> &str {
        match self {
            Self::InvalidClient => "invalid_client",
            Self::InvalidGrant => "invalid_grant",
            Self::InvalidScope => "invalid_scope",
            Self::InvalidRequest => "invalid_request",
            Self::UnauthorizedClient => "unauthorized_client",
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::Other(s) => s,
        }
    }
}

impl fmt::Display for OAuthErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A setting that is missing or malformed. The message names the setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A required setting is not set.
    #[error("{name} is not set: {hint}")]
    Missing {
        /// The environment variable or file key.
        name: String,
        /// What to set it to.
        hint: String,
    },
    /// A setting is set but cannot be used.
    #[error("{name} is invalid: {reason}")]
    Invalid {
        /// The environment variable or file key.
        name: String,
        /// Why it cannot be used (never the value of a secret).
        reason: String,
    },
    /// The configuration file cannot be read or parsed.
    #[error("cannot use the configuration file {}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

/// What kind of failure a [`StoreError`] is, whatever the store (a file, a database); asked
/// with its predicates ([`StoreError::is_unavailable`], …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The store is not private enough to be used (a file group or others can read).
    Insecure,
    /// The store's path holds something other than a regular file (a directory, a named
    /// pipe, a device), or names a directory.
    NotAFile,
    /// The store cannot be reached, read or written (an I/O error, a database that does not
    /// answer or refuses the connection); trying again later may work.
    Unavailable,
    /// The store holds something it cannot use (not a store this crate wrote, a value the
    /// schema does not allow, a ciphertext that does not decrypt).
    Corrupt,
    /// Another writer changed the entry first (a compare-and-swap that lost, a lease held
    /// by another process).
    Conflict,
}

/// A refresh-token store failed: one error that every store returns (the [`FileStore`]
/// and a database store alike), with the store it is about, what was being done, the kind
/// of failure and its source.
///
/// The kind is asked with a predicate: [`is_unavailable`](Self::is_unavailable) (the store
/// cannot be reached, read or written; trying again later may work),
/// [`is_corrupt`](Self::is_corrupt), [`is_conflict`](Self::is_conflict),
/// [`is_insecure`](Self::is_insecure), [`is_not_a_file`](Self::is_not_a_file).
///
/// The message says what to check next and never holds a secret; a store builds it with
/// the constructors of its kind ([`unavailable`](Self::unavailable),
/// [`corrupt`](Self::corrupt), [`conflict`](Self::conflict)), and may word it its own way
/// with [`with_message`](Self::with_message). The error is `Clone` (its source is shared),
/// like [`OAuthError`].
///
/// ```
/// use marketplace_client::oauth::StoreError;
/// let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
/// let e = StoreError::unavailable("postgres db=tokens", "load a refresh token from", refused);
/// assert!(e.is_unavailable());
/// assert_eq!(
///     e.to_string(),
///     "cannot load a refresh token from the refresh-token store postgres db=tokens: refused"
/// );
/// assert!(std::error::Error::source(&e).is_some());
/// ```
///
/// [`FileStore`]: super::FileStore
#[derive(Clone)]
pub struct StoreError(Box<Inner>);

/// The fields of a [`StoreError`], boxed so that the error (and [`OAuthError`], which
/// holds it) stays small.
#[derive(Debug, Clone)]
struct Inner {
    kind: Kind,
    store: String,
    action: &'static str,
    path: Option<PathBuf>,
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl StoreError {
    /// An error of `kind` while doing `action` (`read`, `save a refresh token to`) on
    /// `store` (a file's path, `postgres …`), whose message is `message` (a whole sentence;
    /// never a secret).
    fn new(kind: Kind, store: impl Into<String>, action: &'static str, message: String) -> Self {
        Self(Box::new(Inner {
            kind,
            store: store.into(),
            action,
            path: None,
            message,
            source: None,
        }))
    }

    /// The error with its cause (returned by [`std::error::Error::source`]).
    pub fn with_source(
        mut self,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        self.0.source = Some(Arc::from(source.into()));
        self
    }

    /// The error with `message` as its text instead of the constructor's (a whole sentence
    /// that says what to check next; never a secret), for a store that words its failures
    /// its own way. The kind, store, action and source stay.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.0.message = message.into();
        self
    }

    /// `store` could not be reached, read or written while doing `action`, because of
    /// `source` ([`is_unavailable`](Self::is_unavailable)): "cannot {action} the
    /// refresh-token store {store}: {source}".
    pub fn unavailable(
        store: impl Into<String>,
        action: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::failure(
            Kind::Unavailable,
            store.into(),
            action,
            Arc::from(source.into()),
        )
    }

    /// `store` holds something it cannot use ([`is_corrupt`](Self::is_corrupt)); `reason`
    /// says what (never a secret).
    pub fn corrupt(
        store: impl Into<String>,
        action: &'static str,
        reason: impl fmt::Display,
    ) -> Self {
        let store = store.into();
        let message = format!("the refresh-token store {store} holds what it cannot use: {reason}");
        Self::new(Kind::Corrupt, store, action, message)
    }

    /// Another writer changed the entry first while doing `action` on `store`
    /// ([`is_conflict`](Self::is_conflict)); `reason` says what.
    pub fn conflict(
        store: impl Into<String>,
        action: &'static str,
        reason: impl fmt::Display,
    ) -> Self {
        let store = store.into();
        let message = format!("cannot {action} the refresh-token store {store}: {reason}");
        Self::new(Kind::Conflict, store, action, message)
    }

    fn failure(
        kind: Kind,
        store: String,
        action: &'static str,
        source: Arc<dyn std::error::Error + Send + Sync>,
    ) -> Self {
        let message = format!("cannot {action} the refresh-token store {store}: {source}");
        let mut error = Self::new(kind, store, action, message);
        error.0.source = Some(source);
        error
    }

    /// Reading or writing the store file `path` failed.
    pub(crate) fn file_io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::failure(
            Kind::Unavailable,
            path.display().to_string(),
            action,
            Arc::new(source),
        )
        .at(path)
    }

    /// The same failure while doing `action` instead (an I/O failure's message is rebuilt).
    pub(crate) fn while_doing(self, action: &'static str) -> Self {
        match (&self.0.source, self.0.kind) {
            (Some(source), Kind::Unavailable) => {
                let mut e =
                    Self::failure(self.0.kind, self.0.store.clone(), action, source.clone());
                e.0.path = self.0.path.clone();
                e
            }
            _ => self,
        }
    }

    /// The store file `path` can be read by group or others (`mode`).
    pub(crate) fn insecure_file(path: &Path, mode: u32) -> Self {
        let shown = path.display();
        let message = format!(
            "refusing to read the refresh-token store {shown}: its mode is {mode:04o}, so group \
             or others can read it; run `chmod 600 {shown}` (and consider revoking the refresh \
             tokens it holds)"
        );
        Self::new(Kind::Insecure, shown.to_string(), "read", message).at(path)
    }

    /// `path` is `what` (`a directory`, `a named pipe (FIFO)`, …), not a regular file.
    pub(crate) fn not_a_file(path: &Path, what: &str) -> Self {
        let shown = path.display();
        let message = format!(
            "{shown} is {what}, where the refresh-token store must be a regular file; give the \
             path of a file (it is created on the first save)"
        );
        Self::new(Kind::NotAFile, shown.to_string(), "open", message).at(path)
    }

    /// The store file `path` is not a store this crate wrote.
    pub(crate) fn corrupt_file(path: &Path, action: &'static str, reason: &str) -> Self {
        let shown = path.display();
        let message = format!(
            "the refresh-token store {shown} is not valid: {reason}; fix or delete it and run \
             consent again"
        );
        Self::new(Kind::Corrupt, shown.to_string(), action, message).at(path)
    }

    fn at(mut self, path: &Path) -> Self {
        self.0.path = Some(path.to_owned());
        self
    }

    /// The same error about a file that is `what` ("the signing-key file") rather than the
    /// refresh-token store: its message says so, and advice that only fits the tokens
    /// (`run consent again`) is left out.
    pub(crate) fn named(mut self, what: &'static str) -> Self {
        if what != REFRESH_TOKEN_STORE {
            self.0.message = self
                .0
                .message
                .replace(
                    "; fix or delete it and run consent again",
                    "; fix or delete it",
                )
                .replace(
                    " (and consider revoking the refresh tokens it holds)",
                    " (and consider replacing the keys it holds)",
                )
                .replace(REFRESH_TOKEN_STORE, what);
        }
        self
    }

    /// The store cannot be reached, read or written (an I/O error, a database that does not
    /// answer or refuses the connection); trying again later may work. A provider keeps
    /// using the refresh token it holds in memory meanwhile.
    pub fn is_unavailable(&self) -> bool {
        self.0.kind == Kind::Unavailable
    }

    /// The store holds something it cannot use (not a store this crate wrote, a value the
    /// schema does not allow, a ciphertext that does not decrypt).
    pub fn is_corrupt(&self) -> bool {
        self.0.kind == Kind::Corrupt
    }

    /// Another writer changed the entry first (a compare-and-swap that lost, a lease held by
    /// another process).
    pub fn is_conflict(&self) -> bool {
        self.0.kind == Kind::Conflict
    }

    /// The store is not private enough to be used (a file group or others can read).
    pub fn is_insecure(&self) -> bool {
        self.0.kind == Kind::Insecure
    }

    /// The store's path holds something other than a regular file (a directory, a named
    /// pipe, a device), or names a directory.
    pub fn is_not_a_file(&self) -> bool {
        self.0.kind == Kind::NotAFile
    }

    /// The store it is about: a file's path, or what a database store calls itself.
    pub fn store(&self) -> &str {
        &self.0.store
    }

    /// What was being done (`read`, `write`, `open the lock file of`, …).
    pub fn action(&self) -> &'static str {
        self.0.action
    }

    /// The file, for a store in a file.
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl fmt::Debug for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreError")
            .field("kind", &self.0.kind)
            .field("store", &self.0.store)
            .field("action", &self.0.action)
            .field("message", &self.0.message)
            .field("source", &self.0.source)
            .finish()
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

/// Everything that can go wrong while getting, refreshing or storing a token.
///
/// The error is `Clone` so a failure can be shared by every thread that waited for the same
/// token request. No variant holds a secret.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The token endpoint answered with an OAuth 2.0 error body (`{"error": …}`).
    #[error("{}", server_message(*grant, code, description.as_deref(), *status))]
    Server {
        /// The request that failed.
        grant: Grant,
        /// The `error` field.
        code: OAuthErrorCode,
        /// The `error_description` field, if any.
        description: Option<String>,
        /// The HTTP status.
        status: u16,
    },
    /// HTTP 429: the token endpoint's quota (for example 1,000 client-credentials grants a day)
    /// is used up or requests come too fast.
    #[error(
        "the token endpoint is rate limiting this application (HTTP 429, {grant} grant){}; \
         reuse cached tokens instead of requesting new ones, and check the daily quota",
        match retry_after { Some(d) => format!(", retry after {} s", d.as_secs()), None => String::new() }
    )]
    RateLimited {
        /// The request that failed.
        grant: Grant,
        /// The `Retry-After` header (seconds form), if sent.
        retry_after: Option<Duration>,
        /// The start of the body, sanitized.
        body: String,
    },
    /// Any other HTTP status that is not success and carries no OAuth error body.
    #[error(
        "the token endpoint answered HTTP {status} to a {grant} request{}{}",
        if *status >= 500 { " (a server-side failure: retry later)" } else { "" },
        if body.is_empty() { String::new() } else { format!("; body: {body}") }
    )]
    Http {
        /// The request that failed.
        grant: Grant,
        /// The HTTP status.
        status: u16,
        /// The start of the body, sanitized.
        body: String,
    },
    /// The request did not get an answer in time.
    #[error(
        "the token endpoint did not answer in time ({message}); check the network or raise the time-out"
    )]
    Timeout {
        /// What timed out.
        message: String,
    },
    /// The request could not be sent or its answer not read (DNS, connection, TLS, cut-off body).
    #[error("cannot reach the token endpoint: {message}; check the base URL and the network")]
    Transport {
        /// The transport error and its causes.
        message: String,
    },
    /// The answer is larger than any token answer (64 KiB);
    /// reading stopped at the limit.
    #[error(
        "the token endpoint's answer to a {grant} request is larger than {limit} bytes; \
         check the base URL (it may not point at the token endpoint)"
    )]
    ResponseTooLarge {
        /// The request.
        grant: Grant,
        /// The limit.
        limit: usize,
    },
    /// A success status with a body that is not the expected JSON.
    #[error(
        "the token endpoint answered HTTP {status} to a {grant} request with an unexpected body \
         ({reason}); body: {body}"
    )]
    UnexpectedBody {
        /// The request.
        grant: Grant,
        /// The HTTP status.
        status: u16,
        /// Why it was not accepted.
        reason: String,
        /// The start of the body, sanitized (token values and known secrets cut out).
        body: String,
    },
    /// The `state` in the redirect is not the one sent in the consent URL.
    #[error(
        "the state in the redirect does not match the consent request: the redirect belongs to \
         another consent request (or was forged); start the consent flow again"
    )]
    StateMismatch,
    /// No pending consent has the redirect's state: the redirect was used already (a replay:
    /// a pending consent completes once), or its consent was never started with this store,
    /// or it expired long ago and was dropped. See
    /// [`OAuthClient::complete_consent`](super::OAuthClient::complete_consent).
    #[error(
        "no pending consent has the state of this redirect: the redirect was used already \
         (a consent completes once), or the consent was started elsewhere or expired long ago; \
         start the consent flow again"
    )]
    ConsentNotPending,
    /// The pending consent of the redirect expired before the redirect came back (it is used
    /// up all the same). See [`ConsentRequest::with_ttl`](super::ConsentRequest::with_ttl).
    #[error(
        "the consent request of this redirect expired {} s ago; start the consent flow again",
        expired_ago.as_secs()
    )]
    ConsentExpired {
        /// How long ago it expired (whole seconds).
        expired_ago: Duration,
    },
    /// The user refused consent, or the consent page returned an error. The message says who
    /// must act: the user (`access_denied`) or whoever configured the request (a scope, the
    /// client id or the redirect URI the consent page refused).
    #[error(
        "consent was not granted ({code}){}; {}",
        description.as_deref().map(|d| format!(": {d}")).unwrap_or_default(),
        consent_denied_advice(code, scopes.as_ref())
    )]
    ConsentDenied {
        /// The `error` parameter of the redirect (usually `access_denied`).
        code: OAuthErrorCode,
        /// The `error_description` parameter.
        description: Option<String>,
        /// The scopes the consent URL asked for, when known: set by
        /// [`ConsentRequest::complete`](super::ConsentRequest::complete), which knows its
        /// request; `None` when the redirect was parsed without its request. An
        /// `invalid_scope` names them.
        scopes: Option<super::ScopeSet>,
    },
    /// The redirect URL cannot be used.
    #[error(
        "the redirect URL cannot be used: {reason}; paste the full address the browser ended on"
    )]
    InvalidRedirect {
        /// What is wrong with it.
        reason: String,
    },
    /// No refresh token is stored for this account.
    #[error(
        "no refresh token is stored for account {account:?}: the account needs the seller's \
         consent (no consent flow has completed for it, or its token was deleted)"
    )]
    NoRefreshToken {
        /// The store key.
        account: String,
    },
    /// The stored refresh token has passed its expiry.
    #[error(
        "the refresh token of account {account:?} has expired: the account needs the \
         seller's consent again"
    )]
    RefreshTokenExpired {
        /// The store key.
        account: String,
    },
    /// The token endpoint refused the stored refresh token of `account` (`invalid_grant` on
    /// a refresh): the seller or eBay revoked it, or it expired early. The provider marks the
    /// account in its store ([`RefreshTokenStore::mark_needs_consent`](super::RefreshTokenStore::mark_needs_consent))
    /// so `consent status` shows it; a new consent clears the mark.
    #[error(
        "the refresh token of account {account:?} was refused (invalid_grant, HTTP {status}): \
         the seller or eBay revoked this application's access, or the token expired; the \
         account needs the seller's consent again{}",
        description.as_deref().filter(|d| !d.is_empty()).map(|d| format!("; server said: {d}")).unwrap_or_default()
    )]
    ConsentRevoked {
        /// The store key.
        account: String,
        /// The `error_description` field, if any (sanitized).
        description: Option<String>,
        /// The HTTP status.
        status: u16,
    },
    /// The operating system's random source failed.
    #[error("cannot get random bytes for the state: {0}")]
    Random(String),
    /// A setting is missing or malformed.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The refresh-token store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The last token request failed moments ago and the provider is waiting out its back-off:
    /// `error` is that failure, answered again without a request.
    /// [`retry_now`](super::AccessTokenSource::retry_now) ends the wait.
    #[error(
        "{error} (a cached failure: the last attempt failed {} s ago; next attempt in {} s, or at once after `retry_now()`)",
        failed_ago.as_secs(),
        retry_in.as_secs() + u64::from(retry_in.subsec_nanos() > 0)
    )]
    BackingOff {
        /// The failure of the last request.
        error: Box<OAuthError>,
        /// How long ago it failed.
        failed_ago: Duration,
        /// How long until the provider asks the server again.
        retry_in: Duration,
    },
    /// The marketplace refused (401) the access token that was renewed after its last
    /// refusal, less than the back-off ago: the credentials, scopes or host are wrong, and a
    /// renewal for each refused call would spend the day's grants. No token is requested
    /// before the back-off has passed (answered inside [`BackingOff`](Self::BackingOff));
    /// [`retry_now`](super::AccessTokenSource::retry_now) ends the wait.
    #[error(
        "the marketplace refused the access token, and the token renewed after a refusal was refused too ({} s after it was renewed): no new token is requested before the back-off ends; check the credentials, the scopes and the API host",
        renewed_ago.as_secs()
    )]
    RenewedTokenRefused {
        /// How long after the renewal it was refused.
        renewed_ago: Duration,
    },
    /// Another process sharing the token cache asked for this token and failed; `message` is
    /// its error as the cache stored it (never a secret). Answered, inside
    /// [`BackingOff`](Self::BackingOff), until the shared back-off has passed.
    #[error("another process sharing the token cache failed to get this token: {message}")]
    FailedElsewhere {
        /// The other process's error message.
        message: String,
    },
}

impl OAuthError {
    /// The OAuth error code, when the server sent an error body.
    pub fn code(&self) -> Option<&OAuthErrorCode> {
        match self {
            OAuthError::BackingOff { error, .. } => error.code(),
            OAuthError::Server { code, .. } | OAuthError::ConsentDenied { code, .. } => Some(code),
            OAuthError::ConsentRevoked { .. } => Some(&OAuthErrorCode::InvalidGrant),
            _ => None,
        }
    }

    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            OAuthError::BackingOff { error, .. } => error.status(),
            OAuthError::Server { status, .. }
            | OAuthError::ConsentRevoked { status, .. }
            | OAuthError::Http { status, .. }
            | OAuthError::UnexpectedBody { status, .. } => Some(*status),
            OAuthError::RateLimited { .. } => Some(429),
            _ => None,
        }
    }

    /// The delay the server asked for (429 `Retry-After`).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            // The fleet's back-off: the time left of it.
            OAuthError::BackingOff {
                error, retry_in, ..
            } if matches!(**error, OAuthError::FailedElsewhere { .. }) => Some(*retry_in),
            OAuthError::BackingOff { error, .. } => error.retry_after(),
            OAuthError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
    /// The account whose seller must consent (again) before its calls can work: a missing,
    /// expired or refused refresh token ([`NoRefreshToken`](Self::NoRefreshToken),
    /// [`RefreshTokenExpired`](Self::RefreshTokenExpired),
    /// [`ConsentRevoked`](Self::ConsentRevoked)). What to do about it is the application's to
    /// say (a backend sends the seller to its consent page; the `consent` command prints
    /// itself): the message only says what is wrong.
    pub fn account_needing_consent(&self) -> Option<&str> {
        match self {
            OAuthError::NoRefreshToken { account }
            | OAuthError::RefreshTokenExpired { account }
            | OAuthError::ConsentRevoked { account, .. } => Some(account),
            _ => None,
        }
    }

    /// True for failures that may go away by themselves: time-outs, transport errors, 429 and
    /// 5xx. False for answers that need a person (wrong credentials, revoked consent).
    pub fn is_transient(&self) -> bool {
        match self {
            OAuthError::BackingOff { error, .. } => error.is_transient(),
            OAuthError::Timeout { .. }
            | OAuthError::Transport { .. }
            | OAuthError::RateLimited { .. } => true,
            OAuthError::Http { status, .. } | OAuthError::UnexpectedBody { status, .. } => {
                *status >= 500
            }
            _ => false,
        }
    }
}

/// What to do after the consent page answered with `code` instead of a code.
fn consent_denied_advice(code: &OAuthErrorCode, scopes: Option<&super::ScopeSet>) -> String {
    let advice = match code {
        OAuthErrorCode::InvalidScope => {
            let asked = scopes
                .filter(|s| !s.is_empty())
                .map(|s| format!(" ({})", s.iter().collect::<Vec<_>>().join(", ")))
                .unwrap_or_default();
            return format!(
                "the consent URL asked for a scope{asked} this application may not request: \
                 this is the configuration, not the user; check the configured scopes and ask \
                 only for scopes the application's keyset lists (`consent --scope …`, \
                 repeatable, or MARKETPLACE_SCOPE; the sandbox too takes \
                 https://api.ebay.com/oauth/api_scope/… URLs), then run the consent flow again"
            );
        }
        OAuthErrorCode::InvalidRequest
        | OAuthErrorCode::InvalidClient
        | OAuthErrorCode::UnauthorizedClient => {
            "the consent page refused the request: check the application id \
             (MARKETPLACE_CLIENT_ID) and the redirect URI (MARKETPLACE_REDIRECT_URI, the RuName) \
             of this environment, then run the consent flow again"
        }
        _ => "ask the user to run the consent flow again and accept",
    };
    advice.to_owned()
}

fn server_message(
    grant: Grant,
    code: &OAuthErrorCode,
    description: Option<&str>,
    status: u16,
) -> String {
    let advice = match (code, grant) {
        (OAuthErrorCode::InvalidClient, _) => {
            "the client credentials were rejected: check the application id \
             (MARKETPLACE_CLIENT_ID) and certificate id (MARKETPLACE_CLIENT_SECRET), and that they \
             belong to the environment (production or sandbox) of the base URL"
        }
        (OAuthErrorCode::InvalidGrant, Grant::RefreshToken) => {
            "the refresh token is no longer valid: the user revoked consent or the token expired; \
             the account needs the seller's consent again"
        }
        (OAuthErrorCode::InvalidGrant, Grant::AuthorizationCode) => {
            "the authorization code was rejected: a code can be used once and expires about 5 \
             minutes after consent, and redirect_uri must be the one of the consent URL; run the \
             consent flow again"
        }
        (OAuthErrorCode::InvalidGrant, Grant::ClientCredentials) => {
            "the grant was rejected: check that the application's keys are enabled"
        }
        (OAuthErrorCode::InvalidScope, Grant::RefreshToken) => {
            "a requested scope was rejected: a refresh may ask only for the scopes granted at \
             consent, or a subset of them"
        }
        (OAuthErrorCode::InvalidScope, _) => {
            "a requested scope was rejected: request only scopes the application has been granted \
             for this grant type"
        }
        (OAuthErrorCode::InvalidRequest, _) => {
            "the token request was malformed: check redirect_uri (the RuName) and the parameters"
        }
        (OAuthErrorCode::UnauthorizedClient, _) => {
            "the application is not allowed to use this grant type: check its settings"
        }
        (OAuthErrorCode::UnsupportedGrantType, _) => {
            "the server does not support this grant type: check the base URL"
        }
        (OAuthErrorCode::Other(_), _) => "the token endpoint refused the request",
    };
    let mut msg = format!("{grant} grant failed with {code} (HTTP {status}): {advice}");
    if let Some(d) = description.filter(|d| !d.is_empty()) {
        msg.push_str("; server said: ");
        msg.push_str(d);
    }
    msg
}
