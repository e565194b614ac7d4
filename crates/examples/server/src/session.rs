//! The application's login: who the seller is comes from here, never from a request's
//! parameters.
//!
//! `POST /login` with `{"account": "seller-1", "password": "…"}` (JSON: a form of another site
//! cannot send it, so no other site logs a browser in) checks the password against the
//! account's Argon2 hash (a PHC string: `$argon2id$v=19$…`, made by `--hash-password`) and
//! answers `204` with a session cookie: the account and the time of login, signed with the
//! application's key (HMAC-SHA256, axum-extra's signed cookies), `HttpOnly`, `SameSite=Lax`
//! (sent on the browser's way back from eBay's consent page), `Secure` unless
//! [`Sessions::with_insecure_cookie`]. A session lasts [`SESSION_HOURS`] hours; `POST /logout`
//! removes the cookie. Every instance of a fleet verifies the cookies of the others when they
//! share the key.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher as _, PasswordVerifier as _};
use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum_extra::extract::cookie::{Cookie, Key, SameSite, SignedCookieJar};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use tokio::sync::Semaphore;

use crate::ApiError;

/// Where a seller logs in: `POST /login`.
pub const LOGIN_PATH: &str = "/login";

/// Where a seller logs out: `POST /logout`.
pub const LOGOUT_PATH: &str = "/logout";

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "session";

/// How long a session lasts, in hours.
pub const SESSION_HOURS: u64 = 12;

/// The shortest signing key accepted, in bytes (HMAC-SHA256's and the cookie crate's).
pub const MIN_KEY_BYTES: usize = 64;

/// The largest login body accepted (an account and a password, as JSON): a larger one is
/// refused (413) before it is read, so a flood of logins cannot queue megabytes each.
pub const MAX_LOGIN_BODY: usize = 4096;

/// How many password checks run at once (Argon2 takes memory and CPU on purpose: a flood of
/// logins waits for its turn rather than exhausting the server).
const CONCURRENT_CHECKS: usize = 2;

/// Why the sessions could not be set up.
#[derive(Debug)]
pub struct SessionError(String);

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SessionError {}

/// The application's users and the key that signs their session cookies.
pub struct Sessions {
    key: Key,
    /// Account → its password's Argon2 hash (a PHC string, checked when loaded).
    users: HashMap<String, String>,
    secure: bool,
    checks: Arc<Semaphore>,
}

impl Sessions {
    /// Sessions signed with `key` (at least [`MIN_KEY_BYTES`] bytes; the same on every
    /// instance) for `users`: each account with its password's Argon2 hash as a PHC string
    /// ([`hash_password`]).
    pub fn new(
        key: &[u8],
        users: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, SessionError> {
        let key = Key::try_from(key).map_err(|_| {
            SessionError(format!(
                "the session key must be at least {MIN_KEY_BYTES} bytes"
            ))
        })?;
        let mut map = HashMap::new();
        for (account, hash) in users {
            check_account(&account).map_err(SessionError)?;
            PasswordHash::new(&hash).map_err(|e| {
                SessionError(format!(
                    "the password hash of account {account:?} is not a PHC string ({e})"
                ))
            })?;
            map.insert(account, hash);
        }
        if map.is_empty() {
            return Err(SessionError("no users: nobody could log in".into()));
        }
        Ok(Self {
            key,
            users: map,
            secure: true,
            checks: Arc::new(Semaphore::new(CONCURRENT_CHECKS)),
        })
    }

    /// Sessions whose key is `EXAMPLE_SESSION_KEY` (base64 of at least [`MIN_KEY_BYTES`]
    /// bytes, e.g. `head -c 64 /dev/urandom | base64 -w0`) and whose users are the lines
    /// `account:PHC-hash` of the file `EXAMPLE_USERS_FILE`; `None` when either is unset.
    pub fn from_env() -> Result<Option<Self>, SessionError> {
        let (Ok(key), Ok(file)) = (
            std::env::var("EXAMPLE_SESSION_KEY"),
            std::env::var("EXAMPLE_USERS_FILE"),
        ) else {
            return Ok(None);
        };
        let key = base64::engine::general_purpose::STANDARD
            .decode(key.trim())
            .map_err(|e| SessionError(format!("EXAMPLE_SESSION_KEY is not base64 ({e})")))?;
        Self::new(&key, users_file(Path::new(&file))?).map(Some)
    }

    /// Cookies without `Secure` (a server on plain `http://`, such as the `--fake` demo on
    /// loopback); a server behind TLS keeps them `Secure`.
    pub fn with_insecure_cookie(mut self) -> Self {
        self.secure = false;
        self
    }

    /// The account of the session that `headers` carry: a cookie signed with this key, of a
    /// login less than [`SESSION_HOURS`] old, of a user still known; `None` otherwise.
    pub fn account(&self, headers: &HeaderMap) -> Option<String> {
        let jar = SignedCookieJar::from_headers(headers, self.key.clone());
        let cookie = jar.get(SESSION_COOKIE)?;
        let (account, since) = cookie.value().split_once('.')?;
        let account = String::from_utf8(URL_SAFE_NO_PAD.decode(account).ok()?).ok()?;
        let since = UNIX_EPOCH.checked_add(Duration::from_secs(since.parse().ok()?))?;
        let age = SystemTime::now().duration_since(since).ok()?;
        (age < Duration::from_secs(SESSION_HOURS * 3600) && self.users.contains_key(&account))
            .then_some(account)
    }

    /// Whether `password` is `account`'s, checked on the blocking pool (Argon2 takes tens of
    /// milliseconds). An unknown account costs a check as well, so that the time taken does
    /// not tell which accounts exist.
    async fn check(&self, account: &str, password: String) -> Result<bool, ApiError> {
        let known = self.users.get(account);
        let Some(hash) = known.or_else(|| self.users.values().next()).cloned() else {
            return Ok(false);
        };
        // The permit goes with the check onto the blocking pool: a request cancelled while its
        // check runs (the client gone) keeps its turn until the check ends, so no more than
        // CONCURRENT_CHECKS checks ever run at once.
        let turn = self
            .checks
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| unavailable())?;
        let matches = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            PasswordHash::new(&hash).is_ok_and(|parsed| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
        })
        .await
        .map_err(|_| unavailable())?;
        Ok(matches && known.is_some())
    }

    /// The session cookie of `account`, logged in now.
    fn cookie(&self, account: &str) -> Cookie<'static> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let value = format!("{}.{now}", URL_SAFE_NO_PAD.encode(account));
        self.shaped(Cookie::new(SESSION_COOKIE, value))
    }

    fn shaped(&self, mut cookie: Cookie<'static>) -> Cookie<'static> {
        cookie.set_http_only(true);
        cookie.set_same_site(SameSite::Lax);
        cookie.set_secure(self.secure);
        cookie.set_path("/");
        cookie
    }
}

/// The account of the `--fake` demo's user.
pub const FAKE_DEMO_ACCOUNT: &str = "seller-1";

/// The password of the `--fake` demo's user (a demo on loopback against the fake marketplace;
/// a real server's users are in `EXAMPLE_USERS_FILE`).
pub const FAKE_DEMO_PASSWORD: &str = "demo-password";

/// The sessions of the `--fake` demo: one user, [`FAKE_DEMO_ACCOUNT`] with
/// [`FAKE_DEMO_PASSWORD`], a key made at start, cookies without `Secure` (plain `http://`).
pub fn sessions_for_fake() -> Result<Sessions, SessionError> {
    let key = Key::generate();
    let users = [(
        FAKE_DEMO_ACCOUNT.to_owned(),
        hash_password(FAKE_DEMO_PASSWORD)?,
    )];
    Ok(Sessions::new(key.master(), users)?.with_insecure_cookie())
}

/// The PHC string of `password`'s Argon2id hash (the crate's default parameters, a random
/// salt): what a line of `EXAMPLE_USERS_FILE` holds after `account:`.
pub fn hash_password(password: &str) -> Result<String, SessionError> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|e| SessionError(format!("cannot hash the password: {e}")))
}

/// The users of a file of `account:PHC-hash` lines (blank lines and `#` comments skipped).
fn users_file(path: &Path) -> Result<Vec<(String, String)>, SessionError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| SessionError(format!("cannot read {}: {e}", path.display())))?;
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .enumerate()
        .map(|(n, line)| {
            line.split_once(':')
                .map(|(account, hash)| (account.to_owned(), hash.to_owned()))
                .ok_or_else(|| {
                    SessionError(format!(
                        "{}: user {} is not `account:hash`",
                        path.display(),
                        n + 1
                    ))
                })
        })
        .collect()
}

/// The longest account name accepted (a session's accounts, and the consent endpoints').
pub const MAX_ACCOUNT_CHARS: usize = 128;

/// An account name is 1 to [`MAX_ACCOUNT_CHARS`] characters, not blank.
fn check_account(account: &str) -> Result<(), String> {
    if account.trim().is_empty() || account.chars().count() > MAX_ACCOUNT_CHARS {
        return Err(format!(
            "an account name is 1 to {MAX_ACCOUNT_CHARS} characters, not blank"
        ));
    }
    Ok(())
}

fn unavailable() -> ApiError {
    ApiError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        message: "the password check failed; try again".into(),
    }
}

/// The body of `POST /login`.
#[derive(Deserialize)]
struct Login {
    account: String,
    password: String,
}

/// `router` with [`LOGIN_PATH`] and [`LOGOUT_PATH`].
pub fn with_login(router: Router, sessions: Arc<Sessions>) -> Router {
    router.merge(
        Router::new()
            .route(
                LOGIN_PATH,
                post(login).layer(axum::extract::DefaultBodyLimit::max(MAX_LOGIN_BODY)),
            )
            .route(LOGOUT_PATH, post(logout))
            .with_state(sessions),
    )
}

async fn login(
    State(sessions): State<Arc<Sessions>>,
    body: Result<Json<Login>, JsonRejection>,
) -> Result<(StatusCode, SignedCookieJar), ApiError> {
    // The rejection's own status: 413 for a body over MAX_LOGIN_BODY, 400 or 415 otherwise.
    let Json(login) = body.map_err(|e| ApiError {
        status: e.status(),
        message: e.body_text(),
    })?;
    if check_account(&login.account).is_err()
        || !sessions.check(&login.account, login.password).await?
    {
        return Err(ApiError {
            status: StatusCode::UNAUTHORIZED,
            message: "unknown account or wrong password".into(),
        });
    }
    let jar = SignedCookieJar::new(sessions.key.clone()).add(sessions.cookie(&login.account));
    Ok((StatusCode::NO_CONTENT, jar))
}

async fn logout(
    State(sessions): State<Arc<Sessions>>,
    headers: HeaderMap,
) -> (StatusCode, SignedCookieJar) {
    // The jar of the request's cookies: removing one it holds sends the expired cookie.
    let removal = sessions.shaped(Cookie::from(SESSION_COOKIE));
    let jar = SignedCookieJar::from_headers(&headers, sessions.key.clone()).remove(removal);
    (StatusCode::NO_CONTENT, jar)
}
