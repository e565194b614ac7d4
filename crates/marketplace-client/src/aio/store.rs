//! The async refresh-token store: the interface beside the blocking
//! [`crate::oauth::RefreshTokenStore`], implemented by the same stores.
//!
//! [`FileStore`] does its file work on tokio's blocking pool (`spawn_blocking`), never on a
//! runtime thread; [`MemoryStore`] does none.

use std::sync::Arc;

use super::future::BoxFuture;
use crate::oauth::consent::not_kept;
use crate::oauth::{
    ConsentRequest, CsrfState, FileStore, MemoryStore, OAuthError, RefreshToken,
    RefreshTokenStore as BlockingStore, StoredRefreshToken,
};

/// Storage of refresh tokens for async programs, keyed by an account name of the caller's
/// choice: the async [`crate::oauth::RefreshTokenStore`], with the same methods and
/// guarantees.
pub trait RefreshTokenStore: Send + Sync {
    /// The token of `account`, if one is stored.
    fn load<'a>(
        &'a self,
        account: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRefreshToken>, OAuthError>>;
    /// Stores (or replaces) the token of `account`.
    fn save<'a>(
        &'a self,
        account: &'a str,
        token: &'a StoredRefreshToken,
    ) -> BoxFuture<'a, Result<(), OAuthError>>;
    /// Forgets the token of `account`.
    fn remove<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<(), OAuthError>>;
    /// Stores `token` only if the store still holds `current` for `account` (compare and
    /// swap); `Ok(false)`, changing nothing, otherwise.
    fn replace<'a>(
        &'a self,
        account: &'a str,
        current: &'a RefreshToken,
        token: &'a StoredRefreshToken,
    ) -> BoxFuture<'a, Result<bool, OAuthError>>;
    /// Marks the token of `account` as needing a new consent, only if the store still holds
    /// `token` there.
    fn mark_needs_consent<'a>(
        &'a self,
        account: &'a str,
        token: &'a RefreshToken,
    ) -> BoxFuture<'a, Result<bool, OAuthError>>;
    /// True when the token of `account` is marked as needing a new consent.
    fn needs_consent<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<bool, OAuthError>>;

    /// Keeps `request` (a pending consent) until its redirect comes back, so that any process
    /// sharing the store completes it ([`OAuthClient::complete_consent`](super::oauth::OAuthClient::complete_consent));
    /// as [`crate::oauth::RefreshTokenStore::save_consent`]. The default: a store error (the
    /// store keeps no pending consents).
    fn save_consent<'a>(
        &'a self,
        request: &'a ConsentRequest,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        let _ = request;
        Box::pin(async { Err(not_kept()) })
    }

    /// Removes and returns the pending consent whose state is `state`, atomically (single
    /// use); as [`crate::oauth::RefreshTokenStore::take_consent`]. The default: a store error.
    fn take_consent<'a>(
        &'a self,
        state: &'a CsrfState,
    ) -> BoxFuture<'a, Result<Option<ConsentRequest>, OAuthError>> {
        let _ = state;
        Box::pin(async { Err(not_kept()) })
    }
}

/// Implements [`RefreshTokenStore`] for the type after `;`, each method the blocking
/// store's (or the inner store's) of the same name, as `$run!(self, method(args))` calls it.
macro_rules! store_impl {
    ($run:ident; $($head:tt)+) => {
        $($head)+ {
            fn load<'a>(
                &'a self,
                account: &'a str,
            ) -> BoxFuture<'a, Result<Option<StoredRefreshToken>, OAuthError>> {
                $run!(self, load(account))
            }
            fn save<'a>(
                &'a self,
                account: &'a str,
                token: &'a StoredRefreshToken,
            ) -> BoxFuture<'a, Result<(), OAuthError>> {
                $run!(self, save(account, token))
            }
            fn remove<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<(), OAuthError>> {
                $run!(self, remove(account))
            }
            fn replace<'a>(
                &'a self,
                account: &'a str,
                current: &'a RefreshToken,
                token: &'a StoredRefreshToken,
            ) -> BoxFuture<'a, Result<bool, OAuthError>> {
                $run!(self, replace(account, current, token))
            }
            fn mark_needs_consent<'a>(
                &'a self,
                account: &'a str,
                token: &'a RefreshToken,
            ) -> BoxFuture<'a, Result<bool, OAuthError>> {
                $run!(self, mark_needs_consent(account, token))
            }
            fn needs_consent<'a>(
                &'a self,
                account: &'a str,
            ) -> BoxFuture<'a, Result<bool, OAuthError>> {
                $run!(self, needs_consent(account))
            }
            fn save_consent<'a>(
                &'a self,
                request: &'a ConsentRequest,
            ) -> BoxFuture<'a, Result<(), OAuthError>> {
                $run!(self, save_consent(request))
            }
            fn take_consent<'a>(
                &'a self,
                state: &'a CsrfState,
            ) -> BoxFuture<'a, Result<Option<ConsentRequest>, OAuthError>> {
                $run!(self, take_consent(state))
            }
        }
    };
}
pub(crate) use store_impl;

/// The inner store's method.
macro_rules! forward {
    ($self:ident, $method:ident($($arg:ident),*)) => {
        (**$self).$method($($arg),*)
    };
}

store_impl!(forward; impl<T: RefreshTokenStore + ?Sized> RefreshTokenStore for Arc<T>);

/// Runs `work` with a copy of `store` on tokio's blocking pool.
async fn on_blocking_pool<T: Send + 'static>(
    store: &FileStore,
    work: impl FnOnce(FileStore) -> Result<T, OAuthError> + Send + 'static,
) -> Result<T, OAuthError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || work(store))
        .await
        .unwrap_or_else(|e| {
            Err(OAuthError::Transport {
                message: format!("the refresh-token store's task failed: {e}"),
            })
        })
}

/// The blocking method on a copy of the store and of the arguments, on the blocking pool.
macro_rules! on_pool {
    ($self:ident, $method:ident($($arg:ident),*)) => {{
        $(let $arg = $arg.to_owned();)*
        Box::pin(on_blocking_pool($self, move |store| {
            BlockingStore::$method(&store, $(&$arg),*)
        }))
    }};
}

store_impl!(on_pool; impl RefreshTokenStore for FileStore);

/// The blocking method, at once: the memory store does no I/O.
macro_rules! at_once {
    ($self:ident, $method:ident($($arg:ident),*)) => {
        Box::pin(async move { BlockingStore::$method($self, $($arg),*) })
    };
}

store_impl!(at_once; impl RefreshTokenStore for MemoryStore);
