//! Where refresh tokens live between runs: on the backend only, never in front-end code.
//!
//! [`RefreshTokenStore`] is the interface; [`MemoryStore`] keeps tokens for the life of the
//! process and [`FileStore`] in a JSON file of mode `0600`, replaced atomically on every write
//! and refused on read when group or others may read it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, Zeroizing};

use super::client::TokenResponse;
use super::error::{OAuthError, StoreError};
use super::lock;
use super::scope::ScopeSet;
use super::secret::RefreshToken;

/// A stored refresh token, with what is needed to use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRefreshToken {
    /// The refresh token.
    pub refresh_token: RefreshToken,
    /// The scopes granted at consent: a refresh asks for these (or a subset).
    pub scopes: ScopeSet,
    /// When the refresh token expires, if the server said.
    pub expires_at: Option<SystemTime>,
}

impl StoredRefreshToken {
    /// The record for a code-exchange (or rotating refresh) answer received at `now`; `None`
    /// when the answer holds no refresh token.
    pub fn from_response(
        response: &TokenResponse,
        scopes: ScopeSet,
        now: SystemTime,
    ) -> Option<Self> {
        let refresh_token = response.refresh_token.clone()?;
        Some(Self {
            refresh_token,
            scopes,
            expires_at: response.refresh_token_expires_in.map(|d| now + d),
        })
    }

    /// True when the token has an expiry that is not after `now`.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        self.expires_at.is_some_and(|t| t <= now)
    }
}

/// Storage of refresh tokens, keyed by an account name of the caller's choice (for example
/// the seller's user id). Implementations must be safe to share between threads.
pub trait RefreshTokenStore: Send + Sync {
    /// The token of `account`, if one is stored.
    fn load(&self, account: &str) -> Result<Option<StoredRefreshToken>, OAuthError>;
    /// Stores (or replaces) the token of `account`.
    fn save(&self, account: &str, token: &StoredRefreshToken) -> Result<(), OAuthError>;
    /// Forgets the token of `account`.
    fn remove(&self, account: &str) -> Result<(), OAuthError>;
}

impl<T: RefreshTokenStore + ?Sized> RefreshTokenStore for Arc<T> {
    fn load(&self, account: &str) -> Result<Option<StoredRefreshToken>, OAuthError> {
        (**self).load(account)
    }
    fn save(&self, account: &str, token: &StoredRefreshToken) -> Result<(), OAuthError> {
        (**self).save(account, token)
    }
    fn remove(&self, account: &str) -> Result<(), OAuthError> {
        (**self).remove(account)
    }
}

/// Refresh tokens in memory, for tests and for processes that redo consent on start.
#[derive(Debug, Default)]
pub struct MemoryStore {
    tokens: Mutex<HashMap<String, StoredRefreshToken>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl RefreshTokenStore for MemoryStore {
    fn load(&self, account: &str) -> Result<Option<StoredRefreshToken>, OAuthError> {
        Ok(lock(&self.tokens).get(account).cloned())
    }
    fn save(&self, account: &str, token: &StoredRefreshToken) -> Result<(), OAuthError> {
        lock(&self.tokens).insert(account.to_owned(), token.clone());
        Ok(())
    }
    fn remove(&self, account: &str) -> Result<(), OAuthError> {
        lock(&self.tokens).remove(account);
        Ok(())
    }
}

/// Refresh tokens in a JSON file that only its owner may read.
///
/// Every write replaces the file atomically (temporary file, fsync, rename) with mode `0600`,
/// so a crash leaves the old file or the new one. Every read-modify-write (`save`, `remove`)
/// holds an exclusive operating-system lock on a companion file (`<file>.lock`, mode `0600`),
/// so processes (and `FileStore` values) sharing the file never lose each other's updates. Reading a file whose mode lets group or
/// others read it fails with [`StoreError::InsecurePermissions`], which names the path and
/// the mode.
///
/// ```
/// use marketplace_client::oauth::{FileStore, RefreshToken, RefreshTokenStore, ScopeSet, StoredRefreshToken};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let store = FileStore::new(dir.path().join("tokens.json"));
/// store.save("seller-1", &StoredRefreshToken {
///     refresh_token: RefreshToken::new("v^1.1#i^1#r^1"),
///     scopes: ScopeSet::new(["https://api.ebay.com/oauth/api_scope/sell.inventory"]),
///     expires_at: None,
/// })?;
/// let back = store.load("seller-1")?.expect("stored");
/// assert_eq!(back.refresh_token.secret(), "v^1.1#i^1#r^1");
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
}

const FORMAT: &str = "marketplace-toolkit refresh tokens";

#[derive(Serialize, Deserialize, Default)]
struct FileBody {
    format: String,
    version: u32,
    accounts: BTreeMap<String, FileRecord>,
}

#[derive(Serialize, Deserialize)]
struct FileRecord {
    refresh_token: String,
    scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
}

impl Drop for FileRecord {
    fn drop(&mut self) {
        self.refresh_token.zeroize();
    }
}

impl FileStore {
    /// A store in `path` (created on the first save, with its directory).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io_error(&self, action: &'static str, e: std::io::Error) -> OAuthError {
        OAuthError::Store(StoreError::Io {
            action,
            path: self.path.clone(),
            source: Arc::new(e),
        })
    }

    fn read_body(&self) -> Result<FileBody, OAuthError> {
        use std::io::Read as _;
        let mut file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileBody::default()),
            Err(e) => return Err(self.io_error("open", e)),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let meta = file.metadata().map_err(|e| self.io_error("inspect", e))?;
            let mode = meta.permissions().mode() & 0o7777;
            if mode & 0o077 != 0 {
                return Err(OAuthError::Store(StoreError::InsecurePermissions {
                    path: self.path.clone(),
                    mode,
                }));
            }
        }
        let mut bytes = Zeroizing::new(Vec::new());
        file.read_to_end(&mut bytes)
            .map_err(|e| self.io_error("read", e))?;
        let body: FileBody = serde_json::from_slice(&bytes).map_err(|e| {
            OAuthError::Store(StoreError::Corrupt {
                path: self.path.clone(),
                reason: format!(
                    "not valid JSON ({:?} error at line {} column {})",
                    e.classify(),
                    e.line(),
                    e.column()
                ),
            })
        })?;
        if body.format != FORMAT || body.version != 1 {
            return Err(OAuthError::Store(StoreError::Corrupt {
                path: self.path.clone(),
                reason: format!("expected format {FORMAT:?} version 1"),
            }));
        }
        Ok(body)
    }

    fn create_dir(&self) -> Result<(), OAuthError> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.exists()
        {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt as _;
                builder.mode(0o700);
            }
            builder
                .create(dir)
                .map_err(|e| self.io_error("create the directory of", e))?;
        }
        Ok(())
    }

    /// Takes the exclusive lock of the store (blocking until other holders, in this or another
    /// process, release it). The lock is on `<file>.lock`, not on the store file, because
    /// every write replaces the store file: a lock on it would be on the replaced inode. It is
    /// released when the returned file is dropped (or the process ends).
    fn lock_exclusive(&self) -> Result<std::fs::File, OAuthError> {
        self.create_dir()?;
        let mut name = self.path.file_name().unwrap_or_default().to_owned();
        name.push(".lock");
        let lock_path = self.path.with_file_name(name);
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let file = options
            .open(&lock_path)
            .map_err(|e| self.io_error("open the lock file of", e))?;
        file.lock().map_err(|e| self.io_error("lock", e))?;
        Ok(file)
    }

    fn write_body(&self, body: &FileBody) -> Result<(), OAuthError> {
        self.create_dir()?;
        let bytes = Zeroizing::new(serde_json::to_vec_pretty(body).map_err(|_| {
            OAuthError::Store(StoreError::Corrupt {
                path: self.path.clone(),
                reason: "cannot serialize the store".into(),
            })
        })?);
        taxonomy_tree::atomic::write_atomic(&self.path, &bytes, Some(0o600))
            .map_err(|e| self.io_error("write", e))
    }

    /// The accounts that have a stored token.
    pub fn accounts(&self) -> Result<Vec<String>, OAuthError> {
        Ok(self.read_body()?.accounts.keys().cloned().collect())
    }
}

fn to_unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl RefreshTokenStore for FileStore {
    fn load(&self, account: &str) -> Result<Option<StoredRefreshToken>, OAuthError> {
        let mut body = self.read_body()?;
        Ok(body.accounts.get_mut(account).map(|r| StoredRefreshToken {
            refresh_token: RefreshToken::new(std::mem::take(&mut r.refresh_token)),
            scopes: ScopeSet::new(r.scopes.iter().map(String::as_str)),
            expires_at: r
                .expires_at
                .and_then(|s| UNIX_EPOCH.checked_add(Duration::from_secs(s))),
        }))
    }

    fn save(&self, account: &str, token: &StoredRefreshToken) -> Result<(), OAuthError> {
        let _lock = self.lock_exclusive()?;
        let mut body = self.read_body()?;
        body.format = FORMAT.into();
        body.version = 1;
        body.accounts.insert(
            account.to_owned(),
            FileRecord {
                refresh_token: token.refresh_token.secret().to_owned(),
                scopes: token.scopes.iter().map(str::to_owned).collect(),
                expires_at: token.expires_at.map(to_unix),
            },
        );
        self.write_body(&body)
    }

    fn remove(&self, account: &str) -> Result<(), OAuthError> {
        let _lock = self.lock_exclusive()?;
        let mut body = self.read_body()?;
        if body.accounts.remove(account).is_some() {
            self.write_body(&body)?;
        }
        Ok(())
    }
}
