//! [`AccessTokenSource`], the blocking token source: what the providers implement and the
//! blocking clients take, below both the providers and the bridge that hands a user's source
//! to the async front.

use std::sync::Arc;

use crate::aio::oauth::BoxFuture;
use crate::oauth::{AccessToken, OAuthError};

/// Something that hands out a current bearer token. The taxonomy client takes one of these:
/// on a 401 answer it calls [`invalidate`](Self::invalidate) with the token it sent and asks
/// again.
pub trait AccessTokenSource: Send + Sync {
    /// A token that is valid now.
    fn access_token(&self) -> Result<AccessToken, OAuthError>;

    /// Tells the source that `token` was rejected, so the next call fetches a new one. A token
    /// other than the cached one (already replaced) is ignored.
    fn invalidate(&self, token: &AccessToken);

    /// Ends the wait after a failed request, so the next call asks the server at once instead
    /// of answering [`OAuthError::BackingOff`] (for example once a dependency that was not up
    /// yet is). A cached token is kept. Does nothing by default.
    fn retry_now(&self) {}

    /// The async source's future behind this one, if any: how the blocking clients, which
    /// drive the async ones, reach the library's own providers without a blocking call.
    #[doc(hidden)]
    fn token_future(&self) -> Option<BoxFuture<'_, Result<AccessToken, OAuthError>>> {
        None
    }
}

impl<T: AccessTokenSource + ?Sized> AccessTokenSource for Arc<T> {
    fn access_token(&self) -> Result<AccessToken, OAuthError> {
        (**self).access_token()
    }
    fn invalidate(&self, token: &AccessToken) {
        (**self).invalidate(token)
    }
    fn retry_now(&self) {
        (**self).retry_now()
    }
    fn token_future(&self) -> Option<BoxFuture<'_, Result<AccessToken, OAuthError>>> {
        (**self).token_future()
    }
}

/// A fixed token (for example `MARKETPLACE_ACCESS_TOKEN`) is its own source: it is handed
/// out as is, and [`invalidate`](AccessTokenSource::invalidate) does nothing, since there is
/// nothing to renew it with. Its `Debug` stays `AccessToken([redacted])`.
///
/// ```
/// use marketplace_client::oauth::{AccessToken, AccessTokenSource};
/// let token = AccessToken::new("v^1.1#i^1#…");
/// assert_eq!(token.access_token().unwrap(), token);
/// ```
impl AccessTokenSource for AccessToken {
    fn access_token(&self) -> Result<AccessToken, OAuthError> {
        Ok(self.clone())
    }
    fn invalidate(&self, _token: &AccessToken) {}
    fn token_future(&self) -> Option<BoxFuture<'_, Result<AccessToken, OAuthError>>> {
        Some(Box::pin(std::future::ready(Ok(self.clone()))))
    }
}
