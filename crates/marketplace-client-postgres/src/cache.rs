//! The shared access-token cache, `marketplace_token_cache`, with single flight across
//! processes.
//!
//! A process that finds no fresh token asks for a [`Lease`] ([`TokenCache::try_lease`]); the
//! database grants it to one holder at a time, by its own clock, and increments the row's
//! fencing counter on every grant. The holder fetches a token from the marketplace and
//! [`publish`](TokenCache::publish)es it; the write happens only while the row's fence still
//! equals the lease's, so a holder whose lease ran out and was granted to another process
//! cannot overwrite the newer holder's work. The others wait and [`read`](TokenCache::read)
//! again. A renewal the token endpoint refused is recorded as a shared back-off
//! ([`record_failure`](TokenCache::record_failure)), so the fleet does not hammer the token
//! endpoint (eBay allows 1,000 client-credentials grants a day per application).

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Utc};
use sqlx::{PgPool, Row};

use crate::crypto::{Keyring, SecretText};
use crate::error::{Error, RowId};
use crate::time::{from_db, from_db_opt, to_db};

const TABLE: &str = "marketplace_token_cache";

/// The longest failure message stored, in characters.
const MAX_MESSAGE_CHARS: usize = 500;

/// Whose token a cache row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// An application token (client-credentials grant); the subject is the scope set.
    Application,
    /// A user token (refreshed from a seller's refresh token); the subject is the account.
    User,
}

impl TokenKind {
    /// The value stored in the `kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Application => "application",
            TokenKind::User => "user",
        }
    }
}

/// Which cached token: environment, client id, kind, subject (the scope set of an
/// application token, space-separated and sorted, or the account of a user token) and, for a
/// user token asked for a subset of the consented scopes, that scope set in a key column of
/// its own (so that no account name can stand for another account's scoped token).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// The environment.
    pub environment: String,
    /// The application's client id.
    pub client_id: String,
    /// Application or user token.
    pub kind: TokenKind,
    /// The scope set (application) or account (user).
    pub subject: String,
    /// The scope set (space-separated, sorted) of a user token asked for a subset of the
    /// consented scopes; empty for the consent's own scopes and for an application token.
    pub scopes: String,
}

/// `scopes` split on whitespace, sorted, deduplicated and joined with one space.
fn normalized(scopes: &str) -> String {
    let mut set: Vec<&str> = scopes.split_whitespace().collect();
    set.sort_unstable();
    set.dedup();
    set.join(" ")
}

impl CacheKey {
    /// The key of an application token for `scopes`: the scopes are split on whitespace,
    /// sorted and deduplicated, so every process names the same set alike.
    pub fn application(
        environment: impl Into<String>,
        client_id: impl Into<String>,
        scopes: &str,
    ) -> Self {
        Self {
            environment: environment.into(),
            client_id: client_id.into(),
            kind: TokenKind::Application,
            subject: normalized(scopes),
            scopes: String::new(),
        }
    }

    /// The key of the user token of `account` (for the scopes of its consent).
    pub fn user(
        environment: impl Into<String>,
        client_id: impl Into<String>,
        account: impl Into<String>,
    ) -> Self {
        Self {
            environment: environment.into(),
            client_id: client_id.into(),
            kind: TokenKind::User,
            subject: account.into(),
            scopes: String::new(),
        }
    }

    /// The key of the user token of `account` asked for `scopes`, a subset of the consented
    /// ones (split on whitespace, sorted and deduplicated; empty: [`CacheKey::user`]).
    pub fn user_for_scopes(
        environment: impl Into<String>,
        client_id: impl Into<String>,
        account: impl Into<String>,
        scopes: &str,
    ) -> Self {
        Self {
            scopes: normalized(scopes),
            ..Self::user(environment, client_id, account)
        }
    }

    pub(crate) fn row(&self) -> RowId {
        RowId {
            table: TABLE,
            environment: self.environment.clone(),
            client_id: self.client_id.clone(),
            kind: Some(self.kind.as_str()),
            subject: self.subject.clone(),
            scopes: self.scopes.clone(),
        }
    }
}

/// What a cache row holds.
#[derive(Debug, Clone)]
pub struct CachedRow {
    /// The cached token, decrypted, if one was published.
    pub token: Option<SecretText>,
    /// Its type (for example `"Bearer"`).
    pub token_type: Option<String>,
    /// When the token expires.
    pub expires_at: Option<SystemTime>,
    /// When it should be renewed (before it expires).
    pub renew_at: Option<SystemTime>,
    /// No renewal should be tried before this time (shared back-off), if set.
    pub retry_not_before: Option<SystemTime>,
    /// The sanitized message of the last failed renewal, if any.
    pub last_error: Option<String>,
    /// The holder of the lease, if one is recorded (it may have run out).
    pub lease_holder: Option<String>,
    /// Until when the lease runs.
    pub lease_until: Option<SystemTime>,
    /// The fencing counter: the number of leases granted so far.
    pub fence: i64,
    /// When the row was last written (a publish, a lease, a failure), by the database's clock.
    pub updated_at: SystemTime,
    /// When the token was published, if its grant was a renewal caused by a refusal of the
    /// token before it (see [`NewCachedToken::renewed_after_refusal`]).
    pub renewed_after_refusal_at: Option<SystemTime>,
    /// The database's clock when the row was read: compare the times above with it, never
    /// with a host's clock.
    pub read_at: SystemTime,
}

/// The right to renew one cached token, granted by [`TokenCache::try_lease`]. Only its
/// holder's writes with it succeed, and only until another lease is granted.
#[derive(Clone, PartialEq, Eq)]
pub struct Lease {
    holder: String,
    fence: i64,
    until: SystemTime,
}

impl Lease {
    /// The fencing counter of this grant (higher than every earlier grant's on the row).
    pub fn fence(&self) -> i64 {
        self.fence
    }

    /// The holder it was granted to.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// When it runs out (the database's clock).
    pub fn until(&self) -> SystemTime {
        self.until
    }
}

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lease")
            .field("holder", &self.holder)
            .field("fence", &self.fence)
            .field("until", &self.until)
            .finish()
    }
}

/// A token to publish into the cache.
#[derive(Clone, Copy)]
pub struct NewCachedToken<'a> {
    /// The access token itself.
    pub token: &'a str,
    /// Its type (for example `"Bearer"`).
    pub token_type: &'a str,
    /// When it expires.
    pub expires_at: SystemTime,
    /// When it should be renewed.
    pub renew_at: SystemTime,
    /// Whether its grant was a renewal caused by a refusal (a 401) of the token before it:
    /// the row then records when it was published, so that no process of the fleet renews
    /// it again within the back-off if it is refused too.
    pub renewed_after_refusal: bool,
}

impl fmt::Debug for NewCachedToken<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewCachedToken")
            .field("token", &"[redacted]")
            .field("token_type", &self.token_type)
            .field("expires_at", &self.expires_at)
            .field("renew_at", &self.renew_at)
            .field("renewed_after_refusal", &self.renewed_after_refusal)
            .finish()
    }
}

/// The shared access-token cache, over a connection pool, with the keyring that encrypts it.
#[derive(Debug, Clone)]
pub struct TokenCache {
    pool: PgPool,
    keyring: Arc<Keyring>,
}

impl TokenCache {
    /// The pool the cache reads and writes through.
    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }
}

impl TokenCache {
    /// The cache in the database of `pool` (migrated with [`crate::migrate`]).
    pub fn new(pool: PgPool, keyring: Keyring) -> Self {
        Self {
            pool,
            keyring: Arc::new(keyring),
        }
    }

    /// The row of `key`, with its token decrypted; `None` when there is no row.
    pub async fn read(&self, key: &CacheKey) -> Result<Option<CachedRow>, Error> {
        let row = sqlx::query(
            "SELECT ciphertext, key_id, token_type, expires_at, renew_at, retry_not_before, \
                    last_error, lease_holder, lease_until, fence, updated_at, \
                    renewed_after_refusal_at, now() AS read_at \
             FROM marketplace_token_cache \
             WHERE environment = $1 AND client_id = $2 AND kind = $3 AND subject = $4 \
               AND scopes = $5",
        )
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(key.kind.as_str())
        .bind(&key.subject)
        .bind(&key.scopes)
        .fetch_optional(&self.pool)
        .await
        .map_err(Error::db("read the token cache"))?;
        let Some(row) = row else { return Ok(None) };
        let get = |e| Error::db("read a token cache row")(e);
        let ciphertext: Option<Vec<u8>> = row.try_get("ciphertext").map_err(get)?;
        let key_id: Option<String> = row.try_get("key_id").map_err(get)?;
        let token = match (ciphertext, key_id) {
            (Some(ciphertext), Some(key_id)) => {
                Some(self.keyring.decrypt(&key.row(), &key_id, &ciphertext)?)
            }
            (None, None) => None,
            _ => {
                return Err(Error::Corrupt {
                    row: Box::new(key.row()),
                    problem: "a ciphertext without a key id or a key id without a ciphertext",
                });
            }
        };
        let time = |name: &'static str, what: &'static str| -> Result<Option<SystemTime>, Error> {
            from_db_opt(
                row.try_get::<Option<DateTime<Utc>>, _>(name).map_err(get)?,
                what,
            )
        };
        Ok(Some(CachedRow {
            token,
            token_type: row.try_get("token_type").map_err(get)?,
            expires_at: time("expires_at", "expiry")?,
            renew_at: time("renew_at", "renewal time")?,
            retry_not_before: time("retry_not_before", "back-off time")?,
            last_error: row.try_get("last_error").map_err(get)?,
            lease_holder: row.try_get("lease_holder").map_err(get)?,
            lease_until: time("lease_until", "lease end")?,
            fence: row.try_get("fence").map_err(get)?,
            updated_at: from_db(row.try_get("updated_at").map_err(get)?, "update time")?,
            renewed_after_refusal_at: time("renewed_after_refusal_at", "renewal time")?,
            read_at: from_db(row.try_get("read_at").map_err(get)?, "database clock")?,
        }))
    }

    /// Grants `holder` the lease of `key` for `lease`, by the database's clock, when no lease
    /// is held or the held one ran out; `None` when another holder's lease still runs. Each
    /// grant increments the row's fence (creating the row, without a token, if needed).
    ///
    /// The caller should check [`CachedRow::retry_not_before`] first: a lease is granted
    /// during a shared back-off too.
    pub async fn try_lease(
        &self,
        key: &CacheKey,
        holder: &str,
        lease: Duration,
    ) -> Result<Option<Lease>, Error> {
        let micros = i64::try_from(lease.as_micros()).map_err(|_| Error::TimeOutOfRange {
            what: "lease duration",
        })?;
        let granted: Option<(i64, DateTime<Utc>)> = sqlx::query_as(
            "INSERT INTO marketplace_token_cache AS c \
               (environment, client_id, kind, subject, scopes, lease_holder, lease_until, fence) \
             VALUES ($1, $2, $3, $4, $7, $5, now() + $6 * interval '1 microsecond', 1) \
             ON CONFLICT (environment, client_id, kind, subject, scopes) DO UPDATE SET \
               lease_holder = EXCLUDED.lease_holder, lease_until = EXCLUDED.lease_until, \
               fence = c.fence + 1, updated_at = now() \
             WHERE c.lease_until IS NULL OR c.lease_until <= now() \
             RETURNING fence, lease_until",
        )
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(key.kind.as_str())
        .bind(&key.subject)
        .bind(holder)
        .bind(micros)
        .bind(&key.scopes)
        .fetch_optional(&self.pool)
        .await
        .map_err(Error::db("take a token cache lease"))?;
        let Some((fence, until)) = granted else {
            return Ok(None);
        };
        tracing::debug!(
            environment = %key.environment,
            client_id = %key.client_id,
            kind = key.kind.as_str(),
            subject = %key.subject,
            holder,
            fence,
            "token cache lease granted"
        );
        Ok(Some(Lease {
            holder: holder.to_owned(),
            fence,
            until: from_db(until, "lease end")?,
        }))
    }

    /// Publishes `token` under `lease` and ends the lease (and any back-off); true when
    /// written, false (0 rows, nothing changed) when the lease is stale: another lease was
    /// granted since, or this one was already released or used.
    pub async fn publish(
        &self,
        key: &CacheKey,
        lease: &Lease,
        token: NewCachedToken<'_>,
    ) -> Result<bool, Error> {
        let (ciphertext, key_id) = self.keyring.encrypt(&key.row(), token.token)?;
        let done = fenced(
            key,
            lease,
            fenced_update!(
                "ciphertext = $8, key_id = $9, token_type = $10, expires_at = $11, renew_at = $12, \
                 lease_holder = NULL, lease_until = NULL, retry_not_before = NULL, \
                 last_error = NULL, updated_at = now(), \
                 renewed_after_refusal_at = CASE WHEN $13 THEN now() END"
            ),
        )
        .bind(ciphertext)
        .bind(key_id)
        .bind(token.token_type)
        .bind(to_db(token.expires_at, "expiry")?)
        .bind(to_db(token.renew_at, "renewal time")?)
        .bind(token.renewed_after_refusal)
        .execute(&self.pool)
        .await
        .map_err(Error::db("publish a cached token"))?;
        let written = done.rows_affected() > 0;
        if !written {
            tracing::warn!(
                environment = %key.environment,
                client_id = %key.client_id,
                kind = key.kind.as_str(),
                subject = %key.subject,
                fence = lease.fence,
                "stale lease: the token was not published"
            );
        }
        Ok(written)
    }

    /// Extends `lease` to `lease_for` from now (the database's clock), while its holder still
    /// works under it; false, changing nothing, when it is stale.
    pub async fn extend(
        &self,
        key: &CacheKey,
        lease: &Lease,
        lease_for: Duration,
    ) -> Result<bool, Error> {
        let micros = i64::try_from(lease_for.as_micros()).map_err(|_| Error::TimeOutOfRange {
            what: "lease duration",
        })?;
        let done = fenced(
            key,
            lease,
            fenced_update!("lease_until = now() + $8 * interval '1 microsecond'"),
        )
        .bind(micros)
        .execute(&self.pool)
        .await
        .map_err(Error::db("extend a token cache lease"))?;
        Ok(done.rows_affected() > 0)
    }

    /// Ends `lease` without publishing; false when it was already stale.
    pub async fn release(&self, key: &CacheKey, lease: &Lease) -> Result<bool, Error> {
        let done = fenced(
            key,
            lease,
            fenced_update!("lease_holder = NULL, lease_until = NULL"),
        )
        .execute(&self.pool)
        .await
        .map_err(Error::db("release a token cache lease"))?;
        Ok(done.rows_affected() > 0)
    }

    /// Records a failed renewal under `lease` and ends the lease: no process should try again
    /// before `retry_not_before`. `message` must not contain a token; it is stored without
    /// control characters and cut to 500 characters. False when the lease was stale.
    pub async fn record_failure(
        &self,
        key: &CacheKey,
        lease: &Lease,
        retry_not_before: SystemTime,
        message: &str,
    ) -> Result<bool, Error> {
        let message = sanitize(message);
        let done = fenced(
            key,
            lease,
            fenced_update!(
                "retry_not_before = $8, last_error = $9, lease_holder = NULL, \
                 lease_until = NULL, updated_at = now()"
            ),
        )
        .bind(to_db(retry_not_before, "back-off time")?)
        .bind(&message)
        .execute(&self.pool)
        .await
        .map_err(Error::db("record a token renewal failure"))?;
        Ok(done.rows_affected() > 0)
    }
}

/// An `UPDATE` of one row that changes it only while `lease` is its current one (the row's
/// fence and holder): `$1`…`$7` are the key and the lease, the `SET` clause's own
/// parameters start at `$8`.
macro_rules! fenced_update {
    ($set:literal) => {
        concat!(
            "UPDATE marketplace_token_cache SET ",
            $set,
            " WHERE environment = $1 AND client_id = $2 AND kind = $3 AND subject = $4 \
               AND scopes = $5 AND fence = $6 AND lease_holder = $7"
        )
    };
}
use fenced_update;

/// `sql` (a [`fenced_update!`]) with the key's and the lease's parameters bound.
fn fenced<'q>(
    key: &'q CacheKey,
    lease: &'q Lease,
    sql: &'static str,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    sqlx::query(sql)
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(key.kind.as_str())
        .bind(&key.subject)
        .bind(&key.scopes)
        .bind(lease.fence)
        .bind(&lease.holder)
}

/// `message` without control characters, cut to [`MAX_MESSAGE_CHARS`].
fn sanitize(message: &str) -> String {
    message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_MESSAGE_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_subject_is_sorted_and_deduplicated() {
        let key = CacheKey::application("production", "App", "  b a\tb c ");
        assert_eq!(key.subject, "a b c");
    }

    #[test]
    fn messages_are_sanitized() {
        assert_eq!(sanitize("a\nb\u{1b}[2J"), "a b [2J");
        assert_eq!(sanitize(&"x".repeat(600)).chars().count(), 500);
    }
}
