//! Which eBay user each account belongs to, recorded at consent (getUser), so that an account
//! deletion notification removes that account's refresh token.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use marketplace_client::aio::api::{ApiClient, ApiError, ApiRequest};
use marketplace_client::aio::oauth::RefreshTokenStore;
use serde::{Deserialize, Serialize};

use crate::Notification;
use crate::handler::{CallbackError, Hook, NotificationEndpoint};

/// An eBay user as the Identity API's getUser answers it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EbayUser {
    /// `userId`: eBay's immutable id of the user (what a deletion notification names).
    #[serde(rename = "userId")]
    pub user_id: String,
    /// `username`.
    pub username: String,
}

impl std::fmt::Debug for EbayUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EbayUser(<personal data>)")
    }
}

/// getUser (`GET /commerce/identity/v1/user/`) through `api`, a client whose tokens are the
/// user's (`marketplace_client::aio::oauth::UserTokenProvider`). On eBay the Identity API is
/// served by `apiz.ebay.com` (`apiz.sandbox.ebay.com`): give `api` that base URL.
pub async fn get_user(api: &ApiClient) -> Result<EbayUser, ApiError> {
    api.send(ApiRequest::get("/commerce/identity/v1/user/").operation("getUser"))
        .await?
        .json()
}

/// Why the file of account users could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("account users file {path}: {reason}")]
pub struct AccountUsersError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub reason: String,
}

const FORMAT: &str = "marketplace-toolkit account users";

#[derive(Serialize, Deserialize)]
struct FileBody {
    format: String,
    version: u32,
    accounts: BTreeMap<String, EbayUser>,
}

/// A JSON file beside the refresh-token file: account → the eBay user who consented
/// (`userId`, `username`). Replaced atomically (a temporary file, fsync, rename); the file
/// operations run on tokio's blocking pool.
#[derive(Debug, Clone)]
pub struct AccountUsers {
    path: PathBuf,
    lock: Arc<tokio::sync::Mutex<()>>,
}

fn read(path: &Path) -> Result<BTreeMap<String, EbayUser>, AccountUsersError> {
    let error = |reason: String| AccountUsersError {
        path: path.to_owned(),
        reason,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(error(e.to_string())),
    };
    let body: FileBody = serde_json::from_str(&text).map_err(|e| error(e.to_string()))?;
    if body.format != FORMAT || body.version != 1 {
        return Err(error(format!(
            "not a {FORMAT:?} file of version 1 (format {:?}, version {})",
            body.format, body.version
        )));
    }
    Ok(body.accounts)
}

fn write(path: &Path, accounts: BTreeMap<String, EbayUser>) -> Result<(), AccountUsersError> {
    let error = |reason: String| AccountUsersError {
        path: path.to_owned(),
        reason,
    };
    let body = FileBody {
        format: FORMAT.into(),
        version: 1,
        accounts,
    };
    let json = serde_json::to_vec_pretty(&body).map_err(|e| error(e.to_string()))?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let written = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&json)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        error(e.to_string())
    })
}

impl AccountUsers {
    /// The file at `path` (created at the first record).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            lock: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    async fn update<T: Send + 'static>(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, EbayUser>) -> T + Send + 'static,
    ) -> Result<T, AccountUsersError> {
        let _one_writer = self.lock.lock().await;
        let path = self.path.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let mut accounts = read(&path)?;
            let out = change(&mut accounts);
            write(&path, accounts)?;
            Ok(out)
        })
        .await;
        joined.unwrap_or_else(|e| {
            Err(AccountUsersError {
                path: self.path.clone(),
                reason: e.to_string(),
            })
        })
    }

    /// Records that `account` belongs to `user` (at consent).
    pub async fn record(&self, account: &str, user: EbayUser) -> Result<(), AccountUsersError> {
        let account = account.to_owned();
        self.update(move |accounts| {
            accounts.insert(account, user);
        })
        .await
    }

    /// The eBay user of every account.
    pub async fn list(&self) -> Result<BTreeMap<String, EbayUser>, AccountUsersError> {
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || read(&path))
            .await
            .unwrap_or_else(|e| {
                Err(AccountUsersError {
                    path: self.path.clone(),
                    reason: e.to_string(),
                })
            })
    }

    /// Forgets the accounts of eBay user `user_id`, and returns them.
    pub async fn remove_user(&self, user_id: &str) -> Result<Vec<String>, AccountUsersError> {
        let user_id = user_id.to_owned();
        self.update(move |accounts| {
            let gone: Vec<String> = accounts
                .iter()
                .filter(|(_, u)| u.user_id == user_id)
                .map(|(a, _)| a.clone())
                .collect();
            for account in &gone {
                accounts.remove(account);
            }
            gone
        })
        .await
    }
}

impl NotificationEndpoint {
    /// On an account deletion, before the application's callback: removes the refresh token
    /// of every account that `users` records as the deleted eBay user's from `store`, then the
    /// record itself. A failure answers 500 (eBay sends the notification again). Logged
    /// (tracing) with the number of accounts only, no user data.
    ///
    /// The access tokens a `UserTokenProvider` of this process holds in memory for such an
    /// account are not reached from here: drop the provider (the application's callback).
    pub fn delete_tokens_of_deleted_users(
        self,
        users: AccountUsers,
        store: Arc<dyn RefreshTokenStore>,
    ) -> Self {
        let hook: Hook = Arc::new(move |notification| {
            let users = users.clone();
            let store = store.clone();
            Box::pin(async move {
                let Notification::AccountDeletion(deletion) = notification else {
                    return Ok(());
                };
                let accounts = users
                    .list()
                    .await
                    .map_err(|e| -> CallbackError { Box::new(e) })?;
                let theirs: Vec<&String> = accounts
                    .iter()
                    .filter(|(_, u)| u.user_id == deletion.user_id)
                    .map(|(a, _)| a)
                    .collect();
                for account in &theirs {
                    store.remove(account).await?;
                }
                users.remove_user(&deletion.user_id).await?;
                tracing::info!(
                    target: "marketplace_notifications",
                    notification_id = %deletion.notification_id,
                    accounts = theirs.len(),
                    "account deletion: refresh tokens removed"
                );
                Ok(())
            })
        });
        self.with_hook(hook)
    }
}
