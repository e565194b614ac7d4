//! What users implement as blocking traits, seen by the async front as its own: a token
//! source, a refresh-token store, a shared token cache. Their methods run inside
//! `tokio::task::block_in_place` on the blocking front's runtime ([`super::Driver`], a
//! multi-thread one), so a store that waits (a file, a database on a runtime of its own) waits
//! outside any runtime context, and the runtime's work goes on meanwhile.

use std::sync::Arc;

use tokio::task::block_in_place;

use crate::aio::oauth::{self as aio, BoxFuture};
use crate::oauth::{
    AccessToken, AccessTokenSource, ConsentRequest, CsrfState, OAuthError, RefreshToken,
    RefreshTokenStore, SharedCacheError, SharedToken, SharedTokenCache, SharedTokenRequest,
    StoredRefreshToken, TokenResponse,
};

/// A blocking token source, for the async clients the blocking ones wrap. The library's own
/// providers hand over their async provider's future ([`AccessTokenSource::token_future`]);
/// a source of the user's runs in `block_in_place`.
pub(crate) struct Source(pub(crate) Arc<dyn AccessTokenSource>);

impl aio::AccessTokenSource for Source {
    fn access_token(&self) -> BoxFuture<'_, Result<AccessToken, OAuthError>> {
        self.0
            .token_future()
            .unwrap_or_else(|| Box::pin(async move { block_in_place(|| self.0.access_token()) }))
    }
    fn invalidate(&self, token: &AccessToken) {
        self.0.invalidate(token)
    }
    fn retry_now(&self) {
        self.0.retry_now()
    }
}

/// A blocking refresh-token store (the user's, or [`FileStore`](crate::oauth::FileStore) and
/// [`MemoryStore`](crate::oauth::MemoryStore) given as one), for the async user provider.
pub(crate) struct Store(pub(crate) Arc<dyn RefreshTokenStore>);

/// One store method, in `block_in_place`.
macro_rules! in_place {
    ($self:ident, $method:ident($($arg:ident),*)) => {
        Box::pin(async move { block_in_place(|| $self.0.$method($($arg),*)) })
    };
}

crate::aio::store::store_impl!(in_place; impl aio::RefreshTokenStore for Store);

/// A blocking shared token cache, for the async providers: the cache runs in
/// `block_in_place`, and the grant it may ask for (`fetch`) is the async provider's, waited
/// for on the calling thread, as the blocking trait says.
pub(crate) struct Cache(pub(crate) Arc<dyn SharedTokenCache>);

impl aio::SharedTokenCache for Cache {
    fn token<'a, 'f: 'a>(
        &'a self,
        request: &'a SharedTokenRequest,
        fetch: &'a (
                dyn Fn() -> BoxFuture<'f, Result<TokenResponse, OAuthError>> + Send + Sync + 'f
            ),
    ) -> BoxFuture<'a, Result<SharedToken, SharedCacheError>> {
        Box::pin(async move {
            let runtime = tokio::runtime::Handle::current();
            block_in_place(|| self.0.token(request, &mut || runtime.block_on(fetch())))
        })
    }
}
