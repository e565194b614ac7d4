//! A token cache shared by many processes: the interface a provider renews its tokens
//! through, so that a fleet asks the token endpoint once per expiry, not once per process.
//!
//! eBay allows each application 1,000 client-credentials grants a day ("Access token rate
//! limits and best practices"): twenty processes that each fetch their own application token
//! at every start or renewal use that up. A provider given a shared cache
//! ([`ApplicationTokenProvider::with_shared_cache`](crate::oauth::ApplicationTokenProvider::with_shared_cache),
//! and the same on the user provider and the `aio` providers) still keeps its own in-process
//! cache, with one flight per token in the process; that flight asks the shared cache, which
//! hands out the fleet's current token or elects one process to fetch it.
//!
//! The implementation on PostgreSQL is the `marketplace-client-postgres` crate. A cache that
//! cannot be reached answers [`SharedCacheError::Unavailable`], and the provider then fetches
//! its own token, with a warning: a token call does not fail because the database is down.

use std::time::Duration;

use crate::oauth::{AccessToken, Endpoints, OAuthError, ScopeSet, TokenResponse};

/// Which token a provider wants from a shared cache, with the provider's timing policy (the
/// shared cache renews and backs off as the provider would).
#[derive(Debug, Clone)]
pub struct SharedTokenRequest {
    /// The service the token is for: [`SharedTokenRequest::environment_of`] the endpoints.
    pub environment: String,
    /// The application's client id.
    pub client_id: String,
    /// The account of a user token; `None` for an application token.
    pub account: Option<String>,
    /// The scopes of an application token (a user token's are the refresh token's).
    pub scopes: ScopeSet,
    /// A token the marketplace refused (a 401): never handed out again.
    pub rejected: Option<AccessToken>,
    /// Renew this long before expiry (never before half the lifetime).
    pub refresh_margin: Duration,
    /// After a failed grant, no process asks again for this long.
    pub retry_backoff: Duration,
}

impl SharedTokenRequest {
    /// How long no process should ask again after `error`: the server's `Retry-After` (up to
    /// 2 minutes) when it sent one, otherwise [`retry_backoff`](Self::retry_backoff), as a
    /// provider waits on its own.
    pub fn backoff_after(&self, error: &OAuthError) -> Duration {
        error.retry_after().map_or(self.retry_backoff, |after| {
            after.min(crate::oauth::MAX_RETRY_AFTER)
        })
    }

    /// The name of the service `endpoints` point at, as the shared cache and the refresh-token
    /// stores key it: `production`, `sandbox`, or the base URL of any other host.
    ///
    /// ```
    /// use marketplace_client::oauth::{Endpoints, SharedTokenRequest};
    /// assert_eq!(SharedTokenRequest::environment_of(&Endpoints::production()), "production");
    /// assert_eq!(SharedTokenRequest::environment_of(&Endpoints::sandbox()), "sandbox");
    /// let fake = Endpoints::custom("http://127.0.0.1:8080", "http://127.0.0.1:8080").unwrap();
    /// assert_eq!(SharedTokenRequest::environment_of(&fake), "http://127.0.0.1:8080/");
    /// ```
    pub fn environment_of(endpoints: &Endpoints) -> String {
        use crate::oauth::Environment;
        match endpoints.environment() {
            Environment::Production => "production".into(),
            Environment::Sandbox => "sandbox".into(),
            Environment::Custom => endpoints.base_url().to_string(),
        }
    }
}

/// A token from a shared cache, with its deadlines counted from the moment it was handed
/// out (the cache's clock, so that hosts with skewed clocks agree).
#[derive(Debug, Clone)]
pub struct SharedToken {
    /// The bearer token.
    pub access_token: AccessToken,
    /// Its `token_type`.
    pub token_type: String,
    /// Time left until it expires.
    pub expires_in: Duration,
    /// Time left until it should be renewed (at most `expires_in`).
    pub renew_in: Duration,
}

impl SharedToken {
    /// The token of a grant's answer just received, renewed per `request`'s margin.
    pub fn from_response(response: &TokenResponse, request: &SharedTokenRequest) -> Self {
        let lifetime = response.expires_in;
        Self {
            access_token: response.access_token.clone(),
            token_type: response.token_type.clone(),
            expires_in: lifetime,
            renew_in: renew_after(lifetime, request.refresh_margin),
        }
    }
}

/// When a token of `lifetime` is renewed: the later of `margin` before expiry and half-way
/// through its lifetime (the providers' rule).
pub(crate) fn renew_after(lifetime: Duration, margin: Duration) -> Duration {
    lifetime.saturating_sub(margin).max(lifetime / 2)
}

/// Why a shared cache gave no token.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SharedCacheError {
    /// The cache could not be used (unreachable, too slow, unreadable): the provider fetches
    /// its own token and logs a warning with this message.
    #[error("the shared token cache is unavailable: {0}")]
    Unavailable(String),
    /// The grant failed: this process's request, or another process's within the shared
    /// back-off ([`OAuthError::BackingOff`] around [`OAuthError::FailedElsewhere`]).
    #[error(transparent)]
    Grant(OAuthError),
}

/// A token cache shared by processes, for the blocking providers.
///
/// [`token`](Self::token) returns the fleet's current token for `request`, or calls `fetch`
/// (at most once) when this process is the one elected to ask the token endpoint, and shares
/// its answer. `fetch` is the provider's own grant; it runs on the calling thread. Once
/// `fetch` has been called, the answer is never [`SharedCacheError::Unavailable`]: the
/// fetched token (or the grant's error) is returned even when it could not be shared.
pub trait SharedTokenCache: Send + Sync {
    /// The current token of `request`, from the cache or from `fetch`.
    fn token(
        &self,
        request: &SharedTokenRequest,
        fetch: &mut dyn FnMut() -> Result<TokenResponse, OAuthError>,
    ) -> Result<SharedToken, SharedCacheError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renewal_is_the_later_of_the_margin_and_half_the_lifetime() {
        let minutes = |m: u64| Duration::from_secs(60 * m);
        assert_eq!(renew_after(minutes(120), minutes(5)), minutes(115));
        assert_eq!(renew_after(minutes(4), minutes(5)), minutes(2));
        assert_eq!(renew_after(Duration::ZERO, minutes(5)), Duration::ZERO);
    }
}
