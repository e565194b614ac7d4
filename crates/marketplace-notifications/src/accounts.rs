//! Which eBay user each account belongs to, recorded at consent (getUser), so that an account
//! deletion notification removes that account's refresh token.

use std::collections::BTreeMap;
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

/// The scope getUser needs in the user's token (ask for it at consent, beside the others).
pub const IDENTITY_SCOPE: &str = "https://api.ebay.com/oauth/api_scope/commerce.identity.readonly";

/// The host of the Identity API for the API host `base_url`: eBay serves it on
/// `apiz.ebay.com` (`apiz.sandbox.ebay.com`), not on `api.ebay.com`; any other host (a
/// proxy, the fake marketplace) is kept as it is.
///
/// ```
/// # use marketplace_notifications::identity_base_url;
/// assert_eq!(identity_base_url("https://api.ebay.com/"), "https://apiz.ebay.com/");
/// assert_eq!(identity_base_url("https://api.sandbox.ebay.com"), "https://apiz.sandbox.ebay.com");
/// assert_eq!(identity_base_url("http://127.0.0.1:8080/"), "http://127.0.0.1:8080/");
/// ```
pub fn identity_base_url(base_url: &str) -> String {
    for host in ["api.ebay.com", "api.sandbox.ebay.com"] {
        let prefix = format!("https://{host}");
        if let Some(rest) = base_url.strip_prefix(&prefix)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return format!("https://apiz.{}{rest}", &host["api.".len()..]);
        }
    }
    base_url.to_owned()
}

/// getUser (`GET /commerce/identity/v1/user/`) through `api`, a client whose tokens are the
/// user's (`marketplace_client::aio::oauth::UserTokenProvider`, consented with
/// [`IDENTITY_SCOPE`]). On eBay the Identity API is served by `apiz.ebay.com`
/// (`apiz.sandbox.ebay.com`): give `api` that base URL ([`identity_base_url`]).
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
/// (`userId`, `username`). As the refresh-token file is (`FileStore`): every change is made
/// under an exclusive operating-system lock of a companion file (`<file>.lock`), so the
/// `consent` command and the endpoint's processes never lose each other's links; the file is
/// replaced atomically (a temporary file of a name of its own, fsync, rename), of mode 0600
/// on Unix (usernames are personal data), and only when something changed (most deletions
/// eBay sends are of other users). The async methods' file work runs on tokio's blocking
/// pool.
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
    let body = FileBody {
        format: FORMAT.into(),
        version: 1,
        accounts,
    };
    let json = serde_json::to_vec_pretty(&body).map_err(|e| AccountUsersError {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    // Personal data (usernames): readable by the owner only, as the refresh tokens are.
    taxonomy_tree::atomic::write_atomic(path, &json, Some(0o600)).map_err(|e| AccountUsersError {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

/// Takes the exclusive lock of the file at `path` (waiting for its holders, in this or
/// another process): on `<file>.lock`, as the token store's, since every write replaces the
/// file itself. Released when the returned file is dropped.
fn lock_exclusive(path: &Path) -> Result<std::fs::File, AccountUsersError> {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    let lock_path = path.with_file_name(name);
    let error = |action: &str, e: std::io::Error| AccountUsersError {
        path: path.to_owned(),
        reason: format!("cannot {action} the lock file {}: {e}", lock_path.display()),
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&lock_path).map_err(|e| error("open", e))?;
    file.lock().map_err(|e| error("lock", e))?;
    Ok(file)
}

/// Reads the file at `path`, changes it with `change`, and writes it back if that changed
/// anything, all under the file's lock.
fn update_blocking<T>(
    path: &Path,
    change: impl FnOnce(&mut BTreeMap<String, EbayUser>) -> T,
) -> Result<T, AccountUsersError> {
    let _lock = lock_exclusive(path)?;
    let before = read(path)?;
    let mut accounts = before.clone();
    let out = change(&mut accounts);
    if accounts != before {
        write(path, accounts)?;
    }
    Ok(out)
}

impl AccountUsers {
    /// The file at `path` (created at the first record).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            lock: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// The file the `consent` command records the users of the refresh-token file
    /// `store_file` in: beside it, `<name>.users.json` (`refresh-tokens.json` →
    /// `refresh-tokens.users.json`).
    pub fn beside(store_file: &Path) -> Self {
        let stem = store_file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "refresh-tokens".into());
        Self::new(store_file.with_file_name(format!("{stem}.users.json")))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// [`record`](Self::record) for a program without an async runtime (the `consent`
    /// command): blocks the calling thread on the file.
    pub fn record_blocking(&self, account: &str, user: EbayUser) -> Result<(), AccountUsersError> {
        update_blocking(&self.path, |accounts| {
            accounts.insert(account.to_owned(), user);
        })
    }

    /// [`list`](Self::list) for a program without an async runtime.
    pub fn list_blocking(&self) -> Result<BTreeMap<String, EbayUser>, AccountUsersError> {
        read(&self.path)
    }

    /// Forgets the eBay user of `account` (its refresh token was removed), blocking; true when
    /// one was recorded. The file is left alone when it holds nothing of `account`.
    pub fn forget_blocking(&self, account: &str) -> Result<bool, AccountUsersError> {
        update_blocking(&self.path, |accounts| accounts.remove(account).is_some())
    }

    async fn update<T: Send + 'static>(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, EbayUser>) -> T + Send + 'static,
    ) -> Result<T, AccountUsersError> {
        let _one_writer = self.lock.lock().await;
        let path = self.path.clone();
        let joined = tokio::task::spawn_blocking(move || update_blocking(&path, change)).await;
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
    /// (tracing) with the accounts removed (the application's own names), no eBay user data.
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
                crate::handler::log_deletion(&deletion.notification_id, &theirs);
                Ok(())
            })
        });
        self.with_hook(hook)
    }
}
