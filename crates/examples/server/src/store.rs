//! Where the sellers' refresh tokens, pending consents and eBay users are kept: a refresh-token
//! file (the processes of one host) or the PostgreSQL token store (a fleet).

use std::path::PathBuf;
use std::sync::Arc;

use marketplace_client::aio::oauth::{FileStore, RefreshTokenStore};
use marketplace_client_postgres::PgRefreshTokenStore;
use marketplace_notifications::{AccountUsers, EbayUser, NotificationEndpoint};

/// The store of the consents: the refresh tokens and pending consents, and which eBay user
/// (getUser) each account belongs to, so that eBay's account deletion notification for that
/// user removes the account's tokens.
#[derive(Clone)]
pub enum TokenStore {
    /// A refresh-token file (`FileStore`); the eBay users in the file beside it
    /// (`AccountUsers::beside`: `refresh-tokens.json` → `refresh-tokens.users.json`).
    File(PathBuf),
    /// The PostgreSQL token store; the eBay user in the account's row.
    Postgres(PgRefreshTokenStore),
}

impl TokenStore {
    /// The refresh tokens and pending consents.
    pub fn refresh_tokens(&self) -> Arc<dyn RefreshTokenStore> {
        match self {
            Self::File(path) => Arc::new(FileStore::new(path.clone())),
            Self::Postgres(store) => Arc::new(store.clone()),
        }
    }

    /// Records that `account`'s refresh token (just stored) was granted by `user`.
    pub async fn record_ebay_user(
        &self,
        account: &str,
        user: &EbayUser,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        match self {
            Self::File(path) => Ok(AccountUsers::beside(path)
                .record(account, user.clone())
                .await?),
            Self::Postgres(store) => {
                if marketplace_notifications::postgres::record_ebay_user(store, account, user)
                    .await?
                {
                    Ok(())
                } else {
                    Err("the account's row was gone when its eBay user was recorded".into())
                }
            }
        }
    }

    /// `endpoint` removing, on an account deletion, the tokens of every account recorded as
    /// the deleted user's (with PostgreSQL also the fleet's cached access tokens, and each
    /// `notificationId` handled once by the fleet), before its own callback runs.
    pub fn delete_tokens_of_deleted_users(
        &self,
        endpoint: NotificationEndpoint,
    ) -> NotificationEndpoint {
        match self {
            Self::File(path) => endpoint.delete_tokens_of_deleted_users(
                AccountUsers::beside(path),
                Arc::new(FileStore::new(path.clone())),
            ),
            Self::Postgres(store) => endpoint.with_postgres_store(store.clone()),
        }
    }
}
