//! The async refresh-token store: the interface beside the blocking
//! [`crate::oauth::RefreshTokenStore`], implemented by the same stores.
//!
//! [`FileStore`] does its file work on tokio's blocking pool (`spawn_blocking`), never on a
//! runtime thread; [`MemoryStore`] does none.

use std::sync::Arc;

use super::oauth::BoxFuture;
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

impl<T: RefreshTokenStore + ?Sized> RefreshTokenStore for Arc<T> {
    fn load<'a>(
        &'a self,
        account: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRefreshToken>, OAuthError>> {
        (**self).load(account)
    }
    fn save<'a>(
        &'a self,
        account: &'a str,
        token: &'a StoredRefreshToken,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        (**self).save(account, token)
    }
    fn remove<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<(), OAuthError>> {
        (**self).remove(account)
    }
    fn replace<'a>(
        &'a self,
        account: &'a str,
        current: &'a RefreshToken,
        token: &'a StoredRefreshToken,
    ) -> BoxFuture<'a, Result<bool, OAuthError>> {
        (**self).replace(account, current, token)
    }
    fn mark_needs_consent<'a>(
        &'a self,
        account: &'a str,
        token: &'a RefreshToken,
    ) -> BoxFuture<'a, Result<bool, OAuthError>> {
        (**self).mark_needs_consent(account, token)
    }
    fn needs_consent<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<bool, OAuthError>> {
        (**self).needs_consent(account)
    }
    fn save_consent<'a>(
        &'a self,
        request: &'a ConsentRequest,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        (**self).save_consent(request)
    }
    fn take_consent<'a>(
        &'a self,
        state: &'a CsrfState,
    ) -> BoxFuture<'a, Result<Option<ConsentRequest>, OAuthError>> {
        (**self).take_consent(state)
    }
}

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

impl RefreshTokenStore for FileStore {
    fn load<'a>(
        &'a self,
        account: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRefreshToken>, OAuthError>> {
        let account = account.to_owned();
        Box::pin(on_blocking_pool(self, move |s| {
            BlockingStore::load(&s, &account)
        }))
    }
    fn save<'a>(
        &'a self,
        account: &'a str,
        token: &'a StoredRefreshToken,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        let (account, token) = (account.to_owned(), token.clone());
        Box::pin(on_blocking_pool(self, move |s| {
            BlockingStore::save(&s, &account, &token)
        }))
    }
    fn remove<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<(), OAuthError>> {
        let account = account.to_owned();
        Box::pin(on_blocking_pool(self, move |s| {
            BlockingStore::remove(&s, &account)
        }))
    }
    fn replace<'a>(
        &'a self,
        account: &'a str,
        current: &'a RefreshToken,
        token: &'a StoredRefreshToken,
    ) -> BoxFuture<'a, Result<bool, OAuthError>> {
        let (account, current, token) = (account.to_owned(), current.clone(), token.clone());
        Box::pin(on_blocking_pool(self, move |s| {
            BlockingStore::replace(&s, &account, &current, &token)
        }))
    }
    fn mark_needs_consent<'a>(
        &'a self,
        account: &'a str,
        token: &'a RefreshToken,
    ) -> BoxFuture<'a, Result<bool, OAuthError>> {
        let (account, token) = (account.to_owned(), token.clone());
        Box::pin(on_blocking_pool(self, move |s| {
            BlockingStore::mark_needs_consent(&s, &account, &token)
        }))
    }
    fn needs_consent<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<bool, OAuthError>> {
        let account = account.to_owned();
        Box::pin(on_blocking_pool(self, move |s| {
            BlockingStore::needs_consent(&s, &account)
        }))
    }
    fn save_consent<'a>(
        &'a self,
        request: &'a ConsentRequest,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        let request = request.clone();
        Box::pin(on_blocking_pool(self, move |s| {
            BlockingStore::save_consent(&s, &request)
        }))
    }
    fn take_consent<'a>(
        &'a self,
        state: &'a CsrfState,
    ) -> BoxFuture<'a, Result<Option<ConsentRequest>, OAuthError>> {
        let state = state.clone();
        Box::pin(on_blocking_pool(self, move |s| {
            BlockingStore::take_consent(&s, &state)
        }))
    }
}

/// The memory store does no I/O: its async methods answer at once.
impl RefreshTokenStore for MemoryStore {
    fn load<'a>(
        &'a self,
        account: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRefreshToken>, OAuthError>> {
        Box::pin(async move { BlockingStore::load(self, account) })
    }
    fn save<'a>(
        &'a self,
        account: &'a str,
        token: &'a StoredRefreshToken,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        Box::pin(async move { BlockingStore::save(self, account, token) })
    }
    fn remove<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<(), OAuthError>> {
        Box::pin(async move { BlockingStore::remove(self, account) })
    }
    fn replace<'a>(
        &'a self,
        account: &'a str,
        current: &'a RefreshToken,
        token: &'a StoredRefreshToken,
    ) -> BoxFuture<'a, Result<bool, OAuthError>> {
        Box::pin(async move { BlockingStore::replace(self, account, current, token) })
    }
    fn mark_needs_consent<'a>(
        &'a self,
        account: &'a str,
        token: &'a RefreshToken,
    ) -> BoxFuture<'a, Result<bool, OAuthError>> {
        Box::pin(async move { BlockingStore::mark_needs_consent(self, account, token) })
    }
    fn needs_consent<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<bool, OAuthError>> {
        Box::pin(async move { BlockingStore::needs_consent(self, account) })
    }
    fn save_consent<'a>(
        &'a self,
        request: &'a ConsentRequest,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        Box::pin(async move { BlockingStore::save_consent(self, request) })
    }
    fn take_consent<'a>(
        &'a self,
        state: &'a CsrfState,
    ) -> BoxFuture<'a, Result<Option<ConsentRequest>, OAuthError>> {
        Box::pin(async move { BlockingStore::take_consent(self, state) })
    }
}
