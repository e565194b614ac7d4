//! With the PostgreSQL token store (feature `postgres`): a deletion removes the deleted user's
//! tokens from the database, the handled `notificationId`s are remembered there for the whole
//! fleet, and the public keys are shared by `kid`.
//!
//! The statements live in `marketplace-client-postgres` (its `notifications` feature), beside
//! the migrations that make their tables; this module ties them to the endpoint and the key
//! cache. A backend without PostgreSQL compiles neither.

use std::sync::Arc;

use marketplace_client_postgres::PgRefreshTokenStore;
use marketplace_client_postgres::notifications::{NotificationLog, PublicKeyTable};

use crate::handler::{CallbackError, Hook, Log, NotificationEndpoint};
use crate::keys::PublicKeyCache;
use crate::{EbayUser, Notification};

impl NotificationEndpoint {
    /// Uses the PostgreSQL token store `store` (the `PgRefreshTokenStore` of the application's
    /// refresh tokens):
    ///
    /// * each `notificationId` is handled once by all the processes sharing the database
    ///   (table `marketplace_notifications_seen`, a day), instead of once per process; a
    ///   database that cannot be reached answers 503 (eBay sends the notification again);
    /// * an account deletion, before the application's callback, removes the refresh token
    ///   of every account recorded as the deleted user's ([`record_ebay_user`]) and those
    ///   accounts' shared access tokens (`marketplace_token_cache`, every scope set), in one
    ///   statement. A failure answers 500. Logged with the accounts removed.
    ///
    /// The access tokens a `UserTokenProvider` of a process holds in memory are not reached
    /// from here: drop such providers in the application's callback.
    pub fn with_postgres_store(mut self, store: PgRefreshTokenStore) -> Self {
        self.log = Arc::new(Log::Postgres(NotificationLog::new(
            store.pool().clone(),
            store.environment(),
            store.client_id(),
        )));
        let store = Arc::new(store);
        let hook: Hook = Arc::new(move |notification| {
            let store = store.clone();
            Box::pin(async move {
                let Notification::AccountDeletion(deletion) = notification else {
                    return Ok(());
                };
                let accounts = store
                    .delete_ebay_user(&deletion.user_id)
                    .await
                    .map_err(|e| -> CallbackError { Box::new(e) })?;
                crate::handler::log_deletion(&deletion.notification_id, &accounts);
                Ok(())
            })
        });
        self.with_hook(hook)
    }
}

/// Records in the PostgreSQL token store that `account`'s refresh token was granted by `user`
/// (getUser's answer, [`crate::get_user`]), at consent, after the code exchange saved it;
/// false when `store` holds no token for `account`. A later consent of the account clears it.
pub async fn record_ebay_user(
    store: &PgRefreshTokenStore,
    account: &str,
    user: &EbayUser,
) -> Result<bool, marketplace_client::oauth::OAuthError> {
    store
        .set_ebay_user(account, &user.user_id, &user.username)
        .await
}

impl PublicKeyCache {
    /// Shares the keys with the fleet through the database of `pool` (table
    /// `marketplace_notification_keys`, by `kid`; public keys are not secret): a `kid` this
    /// process does not hold is read there first, and a key fetched from getPublicKey is
    /// written there, so that one getPublicKey call serves every process for the key's time
    /// to live. A database that cannot be reached is only logged: getPublicKey is asked.
    pub fn shared_in_postgres(mut self, pool: sqlx::PgPool) -> Self {
        self.shared = Some(PublicKeyTable::new(pool));
        self
    }
}
