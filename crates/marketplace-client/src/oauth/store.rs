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

use super::consent::{ConsentRequest, is_stale, make_room, not_kept};
use super::error::{OAuthError, REFRESH_TOKEN_STORE, StoreError};
use super::lock;
use super::scope::ScopeSet;
use super::secret::{CsrfState, RefreshToken};
use crate::core::token::TokenResponse;

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

    /// Stores `token` for `account` only if the store still holds `current` there (compare
    /// and swap); `Ok(false)`, changing nothing, when it holds another token or none. A
    /// refresh saves a rotated refresh token this way, so it never overwrites a newer consent
    /// saved while it ran.
    ///
    /// The default loads, compares and saves, which is atomic only within one process for a
    /// store whose `save` is; a store shared between processes implements it under its lock,
    /// as [`FileStore`] does.
    fn replace(
        &self,
        account: &str,
        current: &RefreshToken,
        token: &StoredRefreshToken,
    ) -> Result<bool, OAuthError> {
        match self.load(account)? {
            Some(held) if held.refresh_token.ct_eq(current) => {
                self.save(account, token)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Marks the token of `account` as needing a new consent (the token endpoint refused it:
    /// revoked by the seller or eBay), only if the store still holds `token` there, so a
    /// consent saved meanwhile is never marked. The record stays; the next
    /// [`save`](Self::save) of the account clears the mark. `Ok(false)` when it holds another
    /// token or none, or when the store keeps no marks (the default).
    fn mark_needs_consent(&self, account: &str, token: &RefreshToken) -> Result<bool, OAuthError> {
        let _ = (account, token);
        Ok(false)
    }

    /// True when the token of `account` is marked as needing a new consent
    /// ([`mark_needs_consent`](Self::mark_needs_consent)); false for a store that keeps no
    /// marks (the default).
    fn needs_consent(&self, account: &str) -> Result<bool, OAuthError> {
        let _ = account;
        Ok(false)
    }

    /// Keeps `request` (a pending consent) until its redirect comes back, so that any process
    /// sharing the store completes it ([`OAuthClient::complete_consent`](super::OAuthClient::complete_consent)).
    /// A store drops the pending consents that expired a day ago or more when it saves one,
    /// and keeps at most [`ConsentRequest::MAX_PENDING_PER_ACCOUNT`] of an account and
    /// [`ConsentRequest::MAX_PENDING`] in all (the oldest dropped), so that a flood of consent
    /// requests cannot grow it.
    /// The default: a store error (the store keeps no pending consents).
    fn save_consent(&self, request: &ConsentRequest) -> Result<(), OAuthError> {
        let _ = request;
        Err(not_kept())
    }

    /// Removes and returns the pending consent whose state is `state` (compared in constant
    /// time), expired or not; `None` when none has it. The removal is atomic: of two processes
    /// taking the same state, one gets the request. The default: a store error.
    fn take_consent(&self, state: &CsrfState) -> Result<Option<ConsentRequest>, OAuthError> {
        let _ = state;
        Err(not_kept())
    }
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
    fn replace(
        &self,
        account: &str,
        current: &RefreshToken,
        token: &StoredRefreshToken,
    ) -> Result<bool, OAuthError> {
        (**self).replace(account, current, token)
    }
    fn mark_needs_consent(&self, account: &str, token: &RefreshToken) -> Result<bool, OAuthError> {
        (**self).mark_needs_consent(account, token)
    }
    fn needs_consent(&self, account: &str) -> Result<bool, OAuthError> {
        (**self).needs_consent(account)
    }
    fn save_consent(&self, request: &ConsentRequest) -> Result<(), OAuthError> {
        (**self).save_consent(request)
    }
    fn take_consent(&self, state: &CsrfState) -> Result<Option<ConsentRequest>, OAuthError> {
        (**self).take_consent(state)
    }
}

/// Refresh tokens in memory, for tests and for processes that redo consent on start.
#[derive(Debug, Default)]
pub struct MemoryStore {
    /// Each account's token, and whether it is marked as needing consent.
    tokens: Mutex<HashMap<String, (StoredRefreshToken, bool)>>,
    /// The pending consents.
    consents: Mutex<Vec<ConsentRequest>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies `change` to the record of `account` if it holds `token`; whether it did.
    fn change_if_holding(
        &self,
        account: &str,
        token: &RefreshToken,
        change: impl FnOnce(&mut (StoredRefreshToken, bool)),
    ) -> Result<bool, OAuthError> {
        let mut tokens = lock(&self.tokens);
        let held = tokens
            .get_mut(account)
            .filter(|held| held.0.refresh_token.ct_eq(token));
        Ok(held.map(change).is_some())
    }
}

impl RefreshTokenStore for MemoryStore {
    fn load(&self, account: &str) -> Result<Option<StoredRefreshToken>, OAuthError> {
        Ok(lock(&self.tokens).get(account).map(|(t, _)| t.clone()))
    }
    fn save(&self, account: &str, token: &StoredRefreshToken) -> Result<(), OAuthError> {
        lock(&self.tokens).insert(account.to_owned(), (token.clone(), false));
        Ok(())
    }
    fn remove(&self, account: &str) -> Result<(), OAuthError> {
        lock(&self.tokens).remove(account);
        Ok(())
    }
    fn replace(
        &self,
        account: &str,
        current: &RefreshToken,
        token: &StoredRefreshToken,
    ) -> Result<bool, OAuthError> {
        self.change_if_holding(account, current, |held| *held = (token.clone(), false))
    }
    fn mark_needs_consent(&self, account: &str, token: &RefreshToken) -> Result<bool, OAuthError> {
        self.change_if_holding(account, token, |held| held.1 = true)
    }
    fn needs_consent(&self, account: &str) -> Result<bool, OAuthError> {
        Ok(lock(&self.tokens)
            .get(account)
            .is_some_and(|(_, marked)| *marked))
    }
    fn save_consent(&self, request: &ConsentRequest) -> Result<(), OAuthError> {
        let now = SystemTime::now();
        let mut consents = lock(&self.consents);
        consents.retain(|r| !is_stale(r.expires_at(), now));
        make_room(&mut consents, request.account(), ConsentRequest::account);
        consents.push(request.clone());
        Ok(())
    }
    fn take_consent(&self, state: &CsrfState) -> Result<Option<ConsentRequest>, OAuthError> {
        let mut consents = lock(&self.consents);
        // Every request is compared, the match not ending the loop.
        let mut found = None;
        for (i, request) in consents.iter().enumerate() {
            if request.state().ct_eq(state) {
                found = Some(i);
            }
        }
        Ok(found.map(|i| consents.remove(i)))
    }
}

/// Refresh tokens in a JSON file that only its owner may read.
///
/// Every write replaces the file atomically (temporary file, fsync, rename) with mode `0600`,
/// so a crash leaves the old file or the new one. Every read-modify-write (`save`, `remove`)
/// holds an exclusive operating-system lock on a companion file (`<file>.lock`, mode `0600`),
/// so processes (and `FileStore` values) sharing the file never lose each other's updates;
/// [`replace`](RefreshTokenStore::replace) compares and saves under that lock. Reading a file
/// whose mode lets group or others read it fails with a [`StoreError`] that [`is_insecure`](StoreError::is_insecure),
/// which names the path and the mode; a path that holds anything but a regular file (a
/// directory, a named pipe, a device) fails with a [`StoreError`] that [`is_not_a_file`](StoreError::is_not_a_file), which says what is
/// there, and is never opened to read. [`check`](Self::check) tries all of that, and whether
/// the directory takes a new file, before a token is at stake.
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
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
    /// What the file is, as errors name it ("the refresh-token store", "the signing-key
    /// file"): the same private-file machinery keeps other secrets beside the tokens.
    what: &'static str,
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
    /// The token endpoint refused this token (revoked): the account needs consent again.
    /// Absent (false) in files written before the mark existed, and written only when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    needs_consent: bool,
}

impl FileRecord {
    /// Whether this record holds `token` (compared in constant time).
    fn holds(&self, token: &RefreshToken) -> bool {
        use subtle::ConstantTimeEq as _;
        bool::from(
            self.refresh_token
                .as_bytes()
                .ct_eq(token.secret().as_bytes()),
        )
    }
}

impl Drop for FileRecord {
    fn drop(&mut self) {
        self.refresh_token.zeroize();
    }
}

impl FileStore {
    /// A store in `path` (created on the first save, with its directory).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            what: REFRESH_TOKEN_STORE,
        }
    }

    /// The same machinery for another private file, named `what` in errors ("the signing-key
    /// file").
    pub(crate) fn private_file(path: impl Into<PathBuf>, what: &'static str) -> Self {
        Self {
            path: path.into(),
            what,
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `error` about this file, named as what it is.
    fn named(&self, error: OAuthError) -> OAuthError {
        match error {
            OAuthError::Store(e) => OAuthError::Store(e.named(self.what)),
            other => other,
        }
    }

    fn io_error(&self, action: &'static str, e: std::io::Error) -> OAuthError {
        OAuthError::Store(StoreError::file_io(action, &self.path, e).named(self.what))
    }

    /// Refuses a path that cannot name the store file: one that ends in a slash (or in `.`
    /// or `..`), where a save would fail only after the token was obtained.
    fn check_path(&self) -> Result<(), OAuthError> {
        let names_a_file = self.path.file_name().is_some_and(|name| {
            self.path
                .as_os_str()
                .as_encoded_bytes()
                .ends_with(name.as_encoded_bytes())
        });
        if names_a_file {
            return Ok(());
        }
        let bytes = self.path.as_os_str().as_encoded_bytes();
        let what = if bytes
            .last()
            .is_some_and(|&b| std::path::is_separator(b as char))
        {
            "the name of a directory (it ends in a slash)"
        } else {
            "not the name of a file"
        };
        Err(OAuthError::Store(
            StoreError::not_a_file(&self.path, what).named(self.what),
        ))
    }

    /// Opens `path` without blocking and checks that it is a regular file. A named pipe
    /// opened to read would block until a writer comes, and a directory opens like a file:
    /// both are refused (before opening when possible, and always on the opened file, in case
    /// the path changed in between). `Ok(None)`: nothing is there.
    fn open_regular(
        &self,
        path: &Path,
        options: &mut std::fs::OpenOptions,
    ) -> Result<Option<(std::fs::File, std::fs::Metadata)>, OAuthError> {
        match std::fs::metadata(path) {
            Ok(meta) => require_regular(path, &meta).map_err(|e| self.named(e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(self.io_error("inspect", e)),
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let file = match options.open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io_error("open", e)),
        };
        let meta = file.metadata().map_err(|e| self.io_error("inspect", e))?;
        require_regular(path, &meta).map_err(|e| self.named(e))?;
        Ok(Some((file, meta)))
    }

    /// The file's bytes (zeroed on drop), after the checks of a read (a regular file, mode
    /// `0600` or stricter); `None` when there is no file yet.
    pub(crate) fn read_private(&self) -> Result<Option<Zeroizing<Vec<u8>>>, OAuthError> {
        use std::io::Read as _;
        self.check_path()?;
        let mut read = std::fs::OpenOptions::new();
        read.read(true);
        let Some((mut file, meta)) = self.open_regular(&self.path, &mut read)? else {
            return Ok(None);
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = meta.permissions().mode() & 0o7777;
            if mode & 0o077 != 0 {
                return Err(OAuthError::Store(
                    StoreError::insecure_file(&self.path, mode).named(self.what),
                ));
            }
        }
        #[cfg(not(unix))]
        let _ = meta;
        let mut bytes = Zeroizing::new(Vec::new());
        file.read_to_end(&mut bytes)
            .map_err(|e| self.io_error("read", e))?;
        Ok(Some(bytes))
    }

    /// A JSON file's body, or the empty body (`T::default()`) when there is no file yet;
    /// `format` is checked.
    pub(crate) fn read_json<T: serde::de::DeserializeOwned + Default>(
        &self,
        format: &str,
        version_of: impl FnOnce(&T) -> (&str, u32),
    ) -> Result<T, OAuthError> {
        let Some(bytes) = self.read_private()? else {
            return Ok(T::default());
        };
        let body: T = serde_json::from_slice(&bytes).map_err(|e| {
            OAuthError::Store(
                StoreError::corrupt_file(
                    &self.path,
                    "read",
                    &format!(
                        "not valid JSON ({:?} error at line {} column {})",
                        e.classify(),
                        e.line(),
                        e.column()
                    ),
                )
                .named(self.what),
            )
        })?;
        if version_of(&body) != (format, 1) {
            return Err(OAuthError::Store(
                StoreError::corrupt_file(
                    &self.path,
                    "read",
                    &format!("expected format {format:?} version 1"),
                )
                .named(self.what),
            ));
        }
        Ok(body)
    }

    fn read_body(&self) -> Result<FileBody, OAuthError> {
        self.read_json(FORMAT, |b: &FileBody| (&b.format, b.version))
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
    pub(crate) fn lock_exclusive(&self) -> Result<std::fs::File, OAuthError> {
        self.check_path()?;
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
        let (file, _) = self
            .open_regular(&lock_path, &mut options)
            .map_err(|e| match e {
                OAuthError::Store(e) if e.is_unavailable() => {
                    OAuthError::Store(e.while_doing("open the lock file of"))
                }
                other => other,
            })?
            .ok_or_else(|| {
                self.io_error(
                    "open the lock file of",
                    std::io::Error::from(std::io::ErrorKind::NotFound),
                )
            })?;
        file.lock().map_err(|e| self.io_error("lock", e))?;
        Ok(file)
    }

    /// Checks that the store can be read and then replaced, changing nothing but creating
    /// its directory (mode 0700) and lock file: the path names a regular file or nothing yet
    /// (not a directory, a named pipe, a device, nor a name ending in a slash), the file is
    /// private and holds a store, and its directory takes a new file (every save writes one
    /// and renames it into place).
    ///
    /// Call it before spending what cannot be had twice, such as a one-time authorization
    /// code, on a store that could not keep the result; the `consent` command does.
    pub fn check(&self) -> Result<(), OAuthError> {
        let _lock = self.lock_exclusive()?;
        self.read_body()?;
        // The first half of a save; dropping the staged file removes it.
        let staged = taxonomy_tree::atomic::stage(&self.path, b"", Some(0o600))
            .map_err(|e| self.io_error("create a file beside", e))?;
        drop(staged);
        Ok(())
    }

    /// Replaces the file atomically with `body` as JSON, mode `0600`, in a directory made
    /// with mode `0700` when missing.
    pub(crate) fn write_json<T: Serialize>(&self, body: &T) -> Result<(), OAuthError> {
        self.create_dir()?;
        let bytes = Zeroizing::new(serde_json::to_vec_pretty(body).map_err(|_| {
            OAuthError::Store(
                StoreError::corrupt_file(&self.path, "write", "cannot serialize the store")
                    .named(self.what),
            )
        })?);
        taxonomy_tree::atomic::write_atomic(&self.path, &bytes, Some(0o600))
            .map_err(|e| self.io_error("write", e))
    }

    /// The accounts that have a stored token.
    pub fn accounts(&self) -> Result<Vec<String>, OAuthError> {
        Ok(self.read_body()?.accounts.keys().cloned().collect())
    }

    /// A read-modify-write of the tokens under the store's lock, so that no process writes in
    /// between: `change` returns its result and whether the body changed (then it is written).
    fn update<T>(&self, change: impl FnOnce(&mut FileBody) -> (T, bool)) -> Result<T, OAuthError> {
        let _lock = self.lock_exclusive()?;
        let mut body = self.read_body()?;
        let (result, changed) = change(&mut body);
        if changed {
            self.write_json(&body)?;
        }
        Ok(result)
    }
}

impl FileBody {
    /// Sets the record of `account` (and the format, for a new file).
    fn insert(&mut self, account: &str, token: &StoredRefreshToken) {
        self.format = FORMAT.into();
        self.version = 1;
        self.accounts.insert(
            account.to_owned(),
            FileRecord {
                refresh_token: token.refresh_token.secret().to_owned(),
                scopes: token.scopes.iter().map(str::to_owned).collect(),
                expires_at: token.expires_at.map(to_unix),
                needs_consent: false,
            },
        );
    }
}

/// Refuses anything but a regular file at `path`, saying what is there instead.
fn require_regular(path: &Path, meta: &std::fs::Metadata) -> Result<(), OAuthError> {
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let mut what = if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            what = "a named pipe (FIFO)";
        } else if kind.is_socket() {
            what = "a socket";
        } else if kind.is_block_device() {
            what = "a block device";
        } else if kind.is_char_device() {
            what = "a character device";
        }
    }
    Err(OAuthError::Store(StoreError::not_a_file(path, what)))
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
        self.update(|body| {
            body.insert(account, token);
            ((), true)
        })
    }

    fn remove(&self, account: &str) -> Result<(), OAuthError> {
        self.update(|body| ((), body.accounts.remove(account).is_some()))
    }

    /// Compares and saves under the store's lock, so no process can write in between.
    fn replace(
        &self,
        account: &str,
        current: &RefreshToken,
        token: &StoredRefreshToken,
    ) -> Result<bool, OAuthError> {
        self.update(|body| {
            let holds_current = body.accounts.get(account).is_some_and(|r| r.holds(current));
            if holds_current {
                body.insert(account, token);
            }
            (holds_current, holds_current)
        })
    }

    /// Marks under the store's lock, so no process can save a new consent in between.
    fn mark_needs_consent(&self, account: &str, token: &RefreshToken) -> Result<bool, OAuthError> {
        self.update(
            |body| match body.accounts.get_mut(account).filter(|r| r.holds(token)) {
                Some(record) => (true, !std::mem::replace(&mut record.needs_consent, true)),
                None => (false, false),
            },
        )
    }

    fn needs_consent(&self, account: &str) -> Result<bool, OAuthError> {
        Ok(self
            .read_body()?
            .accounts
            .get(account)
            .is_some_and(|r| r.needs_consent))
    }

    /// In a file beside the tokens file (`refresh-tokens.json`:
    /// `refresh-tokens.consents.json`), mode `0600`, replaced atomically under its lock.
    fn save_consent(&self, request: &ConsentRequest) -> Result<(), OAuthError> {
        self.save_pending(request)
    }

    /// Under the consents file's lock: one process takes a given state.
    fn take_consent(&self, state: &CsrfState) -> Result<Option<ConsentRequest>, OAuthError> {
        self.take_pending(state)
    }
}
