//! Sellers' refresh tokens, encrypted, in `marketplace_refresh_tokens`.

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use sqlx::{PgPool, Row};
use subtle::ConstantTimeEq;

use crate::crypto::{Keyring, SecretText};
use crate::error::{Error, RowId};
use crate::time::{from_db, from_db_opt, to_db_opt};

/// `account, expires_at, needs_consent, updated_at, ebay_user_id, ebay_username`.
type SummaryRow = (
    String,
    Option<DateTime<Utc>>,
    bool,
    DateTime<Utc>,
    Option<String>,
    Option<String>,
);

const TABLE: &str = "marketplace_refresh_tokens";

/// An `UPDATE` (for a `WITH` clause) that clears the access tokens of account `$3` (every
/// scope set) of application `$2` in environment `$1` shared in `marketplace_token_cache`:
/// no token, no back-off, no lease, and the fence moved on, so that a lease granted before
/// cannot publish.
macro_rules! clear_shared_tokens {
    () => {
        "UPDATE marketplace_token_cache SET \
           ciphertext = NULL, key_id = NULL, token_type = NULL, expires_at = NULL, \
           renew_at = NULL, retry_not_before = NULL, last_error = NULL, \
           lease_holder = NULL, lease_until = NULL, fence = fence + 1, updated_at = now() \
         WHERE environment = $1 AND client_id = $2 AND kind = 'user' AND subject = $3 \
         RETURNING 1"
    };
}

/// Which refresh token: the eBay environment (for example `"production"` or `"sandbox"`), the
/// application's client id and the seller's account name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RefreshKey {
    /// The environment.
    pub environment: String,
    /// The application's client id.
    pub client_id: String,
    /// The account (the caller's name for the seller).
    pub account: String,
}

impl RefreshKey {
    /// A key from its three parts.
    pub fn new(
        environment: impl Into<String>,
        client_id: impl Into<String>,
        account: impl Into<String>,
    ) -> Self {
        Self {
            environment: environment.into(),
            client_id: client_id.into(),
            account: account.into(),
        }
    }

    pub(crate) fn row(&self) -> RowId {
        RowId {
            table: TABLE,
            environment: self.environment.clone(),
            client_id: self.client_id.clone(),
            kind: None,
            subject: self.account.clone(),
            scopes: String::new(),
        }
    }
}

/// A refresh token to store.
#[derive(Clone, Copy)]
pub struct NewRefreshToken<'a> {
    /// The refresh token itself.
    pub token: &'a str,
    /// The granted scopes, space-separated.
    pub scopes: &'a str,
    /// When the token expires, if the server said.
    pub expires_at: Option<SystemTime>,
}

impl fmt::Debug for NewRefreshToken<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewRefreshToken")
            .field("token", &"[redacted]")
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// A stored refresh token, decrypted.
#[derive(Debug, Clone)]
pub struct StoredRefresh {
    /// The refresh token.
    pub token: SecretText,
    /// The granted scopes, space-separated.
    pub scopes: String,
    /// When it expires, if known.
    pub expires_at: Option<SystemTime>,
    /// True when the marketplace refused it and the seller must consent again.
    pub needs_consent: bool,
    /// The row's version: 1 on insert, one more on every write.
    pub version: i64,
    /// When the row was last written (the database's clock).
    pub updated_at: SystemTime,
}

/// One account in [`RefreshTokens::list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountSummary {
    /// The account.
    pub account: String,
    /// When its refresh token expires, if known.
    pub expires_at: Option<SystemTime>,
    /// True when it is marked as needing a new consent.
    pub needs_consent: bool,
    /// When the row was last written.
    pub updated_at: SystemTime,
    /// The eBay user who consented (getUser's `userId`), once recorded
    /// ([`RefreshTokens::set_ebay_user`]).
    pub ebay_user_id: Option<String>,
    /// That user's `username`, once recorded.
    pub ebay_username: Option<String>,
}

/// The refresh-token table, over a connection pool, with the keyring that encrypts it.
#[derive(Debug, Clone)]
pub struct RefreshTokens {
    pool: PgPool,
    keyring: Arc<Keyring>,
}

impl RefreshTokens {
    /// The table in the database of `pool` (migrated with [`crate::migrate`]).
    pub fn new(pool: PgPool, keyring: Keyring) -> Self {
        Self {
            pool,
            keyring: Arc::new(keyring),
        }
    }

    /// The connection pool.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The keyring (the pending consents are encrypted with it too).
    pub(crate) fn keyring(&self) -> &Keyring {
        &self.keyring
    }

    /// The token of `key`, decrypted; `None` when none is stored.
    pub async fn load(&self, key: &RefreshKey) -> Result<Option<StoredRefresh>, Error> {
        let row = sqlx::query(
            "SELECT ciphertext, key_id, scopes, expires_at, needs_consent, version, updated_at \
             FROM marketplace_refresh_tokens \
             WHERE environment = $1 AND client_id = $2 AND account = $3",
        )
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(&key.account)
        .fetch_optional(&self.pool)
        .await
        .map_err(Error::db("load a refresh token"))?;
        let Some(row) = row else { return Ok(None) };
        let get = |e| Error::db("read a refresh token row")(e);
        let ciphertext: Vec<u8> = row.try_get("ciphertext").map_err(get)?;
        let key_id: String = row.try_get("key_id").map_err(get)?;
        let token = self.keyring.decrypt(&key.row(), &key_id, &ciphertext)?;
        if key_id != self.keyring.current_id() {
            self.reencrypt(key, &key_id, &ciphertext, &token).await;
        }
        Ok(Some(StoredRefresh {
            token,
            scopes: row.try_get("scopes").map_err(get)?,
            expires_at: from_db_opt(row.try_get("expires_at").map_err(get)?, "expiry")?,
            needs_consent: row.try_get("needs_consent").map_err(get)?,
            version: row.try_get("version").map_err(get)?,
            updated_at: from_db(row.try_get("updated_at").map_err(get)?, "update time")?,
        }))
    }

    /// Writes `token`, just read from the row of `key` under the previous key (`key_id`,
    /// `ciphertext`), again under the current key, if the row still holds that ciphertext: a
    /// refresh token is written only at consent and rotation, so without this a rotation
    /// would never complete. The token, its version and its update time stay as they are. A
    /// failure is only logged: the token was read.
    async fn reencrypt(
        &self,
        key: &RefreshKey,
        key_id: &str,
        ciphertext: &[u8],
        token: &SecretText,
    ) {
        match reencrypt_refresh_row(&self.pool, &self.keyring, key, key_id, ciphertext, token).await
        {
            Ok(true) => tracing::info!(
                environment = %key.environment,
                client_id = %key.client_id,
                account = %key.account,
                "refresh token re-encrypted under the current key"
            ),
            Ok(false) => {}
            Err(e) => tracing::warn!(
                reason = %e,
                "could not re-encrypt a refresh token read under the previous key"
            ),
        }
    }

    /// Stores `token` for `key`, encrypted under the current key, in one statement: inserted
    /// with version 1, or replacing the stored token with its version incremented. Clears the
    /// needs-consent mark. Returns the new version.
    ///
    /// A save is a new consent: in the same statement, the access tokens of the account
    /// shared in `marketplace_token_cache` (those of the consent it replaces) are cleared,
    /// with their back-off, and their leases fenced off, so that no process is handed them
    /// again and a refresh still running with the replaced token cannot publish its answer.
    /// The eBay user recorded for the replaced consent is cleared too: record the new one
    /// with [`set_ebay_user`](Self::set_ebay_user).
    pub async fn save(&self, key: &RefreshKey, token: NewRefreshToken<'_>) -> Result<i64, Error> {
        let (ciphertext, key_id) = self.keyring.encrypt(&key.row(), token.token)?;
        let expires_at = to_db_opt(token.expires_at, "expiry")?;
        let version: i64 = sqlx::query_scalar(concat!(
            "WITH cleared AS (",
            clear_shared_tokens!(),
            ") INSERT INTO marketplace_refresh_tokens AS t \
               (environment, client_id, account, ciphertext, key_id, scopes, expires_at, \
                needs_consent, version, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, false, 1, now()) \
             ON CONFLICT (environment, client_id, account) DO UPDATE SET \
               ciphertext = EXCLUDED.ciphertext, key_id = EXCLUDED.key_id, \
               scopes = EXCLUDED.scopes, expires_at = EXCLUDED.expires_at, \
               needs_consent = false, version = t.version + 1, updated_at = now(), \
               ebay_user_id = NULL, ebay_username = NULL \
             RETURNING version",
        ))
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(&key.account)
        .bind(ciphertext)
        .bind(key_id)
        .bind(token.scopes)
        .bind(expires_at)
        .fetch_one(&self.pool)
        .await
        .map_err(Error::db("save a refresh token"))?;
        tracing::debug!(
            environment = %key.environment,
            client_id = %key.client_id,
            account = %key.account,
            version,
            "refresh token saved"
        );
        Ok(version)
    }

    /// Stores `token` for `key` only if the stored token is `current` (compare and swap, under
    /// a row lock in one transaction); `Ok(false)`, changing nothing, when another token or
    /// none is stored. A refresh saves a rotated refresh token this way, so that it never
    /// overwrites a newer consent saved meanwhile.
    pub async fn replace(
        &self,
        key: &RefreshKey,
        current: &str,
        token: NewRefreshToken<'_>,
    ) -> Result<bool, Error> {
        let (ciphertext, key_id) = self.keyring.encrypt(&key.row(), token.token)?;
        let expires_at = to_db_opt(token.expires_at, "expiry")?;
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(Error::db("begin replacing a refresh token"))?;
        if !self
            .holds(&mut tx, key, current, "replace a refresh token")
            .await?
        {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE marketplace_refresh_tokens SET \
               ciphertext = $4, key_id = $5, scopes = $6, expires_at = $7, \
               needs_consent = false, version = version + 1, updated_at = now() \
             WHERE environment = $1 AND client_id = $2 AND account = $3",
        )
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(&key.account)
        .bind(ciphertext)
        .bind(key_id)
        .bind(token.scopes)
        .bind(expires_at)
        .execute(&mut *tx)
        .await
        .map_err(Error::db("replace a refresh token"))?;
        tx.commit()
            .await
            .map_err(Error::db("commit replacing a refresh token"))?;
        Ok(true)
    }

    /// Locks the row of `key` in `tx` and tells whether its token is `expected`.
    async fn holds(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
        key: &RefreshKey,
        expected: &str,
        operation: &'static str,
    ) -> Result<bool, Error> {
        let row: Option<(Vec<u8>, String)> = sqlx::query_as(
            "SELECT ciphertext, key_id FROM marketplace_refresh_tokens \
             WHERE environment = $1 AND client_id = $2 AND account = $3 FOR UPDATE",
        )
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(&key.account)
        .fetch_optional(&mut **tx)
        .await
        .map_err(Error::db(operation))?;
        let Some((ciphertext, key_id)) = row else {
            return Ok(false);
        };
        let held = self.keyring.decrypt(&key.row(), &key_id, &ciphertext)?;
        Ok(bool::from(
            held.expose().as_bytes().ct_eq(expected.as_bytes()),
        ))
    }

    /// Forgets the token of `key`; true when one was stored. In the same statement, the
    /// account's access tokens shared in `marketplace_token_cache` are cleared (as by
    /// [`save`](Self::save)): no process is handed them again.
    pub async fn delete(&self, key: &RefreshKey) -> Result<bool, Error> {
        let done = sqlx::query(concat!(
            "WITH cleared AS (",
            clear_shared_tokens!(),
            ") DELETE FROM marketplace_refresh_tokens \
             WHERE environment = $1 AND client_id = $2 AND account = $3",
        ))
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(&key.account)
        .execute(&self.pool)
        .await
        .map_err(Error::db("delete a refresh token"))?;
        Ok(done.rows_affected() > 0)
    }

    /// Records that the refresh token of `key` was granted by eBay user `user_id` (getUser's
    /// `userId`, with its `username`), so that an account deletion notification for that
    /// user finds it ([`delete_ebay_user`](Self::delete_ebay_user)). False, changing nothing,
    /// when no token is stored for `key`.
    pub async fn set_ebay_user(
        &self,
        key: &RefreshKey,
        user_id: &str,
        username: &str,
    ) -> Result<bool, Error> {
        let done = sqlx::query(
            "UPDATE marketplace_refresh_tokens SET ebay_user_id = $4, ebay_username = $5 \
             WHERE environment = $1 AND client_id = $2 AND account = $3",
        )
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(&key.account)
        .bind(user_id)
        .bind(username)
        .execute(&self.pool)
        .await
        .map_err(Error::db("record the eBay user of a refresh token"))?;
        Ok(done.rows_affected() > 0)
    }

    /// Deletes, in one statement, the refresh token of every account of `environment` and
    /// `client_id` recorded as eBay user `user_id`'s, and every access token of those
    /// accounts in `marketplace_token_cache` (all their scope sets, the rows themselves):
    /// what a Marketplace Account Deletion notification for that user asks. Returns the
    /// accounts deleted (none when the user is unknown here).
    ///
    /// A process still renewing such an access token holds a lease on a row that is gone:
    /// its publish matches no row (the fence and the holder are the row's), so nothing comes
    /// back.
    pub async fn delete_ebay_user(
        &self,
        environment: &str,
        client_id: &str,
        user_id: &str,
    ) -> Result<Vec<String>, Error> {
        let mut accounts: Vec<String> = sqlx::query_scalar(
            "WITH gone AS ( \
                 DELETE FROM marketplace_refresh_tokens \
                 WHERE environment = $1 AND client_id = $2 AND ebay_user_id = $3 \
                 RETURNING account \
             ), cached AS ( \
                 DELETE FROM marketplace_token_cache c USING gone \
                 WHERE c.environment = $1 AND c.client_id = $2 AND c.kind = 'user' \
                   AND c.subject = gone.account \
                 RETURNING 1 \
             ) SELECT account FROM gone",
        )
        .bind(environment)
        .bind(client_id)
        .bind(user_id)
        .fetch_all(&self.pool)
        .await
        .map_err(Error::db(
            "delete the refresh tokens of a deleted eBay user",
        ))?;
        accounts.sort();
        Ok(accounts)
    }

    /// The accounts holding a token for this environment and application, those expiring
    /// soonest first (tokens without a known expiry last), then by account.
    pub async fn list(
        &self,
        environment: &str,
        client_id: &str,
    ) -> Result<Vec<AccountSummary>, Error> {
        let rows: Vec<SummaryRow> = sqlx::query_as(
            "SELECT account, expires_at, needs_consent, updated_at, ebay_user_id, ebay_username \
             FROM marketplace_refresh_tokens WHERE environment = $1 AND client_id = $2 \
             ORDER BY expires_at ASC NULLS LAST, account ASC",
        )
        .bind(environment)
        .bind(client_id)
        .fetch_all(&self.pool)
        .await
        .map_err(Error::db("list refresh tokens"))?;
        rows.into_iter()
            .map(
                |(account, expires_at, needs_consent, updated_at, user_id, username)| {
                    Ok(AccountSummary {
                        account,
                        expires_at: from_db_opt(expires_at, "expiry")?,
                        needs_consent,
                        updated_at: from_db(updated_at, "update time")?,
                        ebay_user_id: user_id,
                        ebay_username: username,
                    })
                },
            )
            .collect()
    }

    /// Marks the token of `key` as needing a new consent, if it is still `refused` (the token
    /// the marketplace refused); false, changing nothing, when another token (a newer consent)
    /// or none is stored.
    pub async fn mark_needs_consent(&self, key: &RefreshKey, refused: &str) -> Result<bool, Error> {
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(Error::db("begin marking a refresh token"))?;
        if !self
            .holds(
                &mut tx,
                key,
                refused,
                "mark a refresh token as needing consent",
            )
            .await?
        {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE marketplace_refresh_tokens SET \
               needs_consent = true, version = version + 1, updated_at = now() \
             WHERE environment = $1 AND client_id = $2 AND account = $3",
        )
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(&key.account)
        .execute(&mut *tx)
        .await
        .map_err(Error::db("mark a refresh token as needing consent"))?;
        tx.commit()
            .await
            .map_err(Error::db("commit marking a refresh token"))?;
        tracing::info!(
            environment = %key.environment,
            client_id = %key.client_id,
            account = %key.account,
            "refresh token marked as needing consent"
        );
        Ok(true)
    }

    /// True when the token of `key` is marked as needing a new consent; false when it is not
    /// or none is stored.
    pub async fn needs_consent(&self, key: &RefreshKey) -> Result<bool, Error> {
        let marked: Option<bool> = sqlx::query_scalar(
            "SELECT needs_consent FROM marketplace_refresh_tokens \
             WHERE environment = $1 AND client_id = $2 AND account = $3",
        )
        .bind(&key.environment)
        .bind(&key.client_id)
        .bind(&key.account)
        .fetch_optional(&self.pool)
        .await
        .map_err(Error::db("read a needs-consent mark"))?;
        Ok(marked.unwrap_or(false))
    }
}

/// Writes `token` (read from the row of `key` as `ciphertext` under `key_id`) under the
/// current key of `keyring`, when the row still holds `ciphertext`; true when rewritten.
pub(crate) async fn reencrypt_refresh_row(
    pool: &PgPool,
    keyring: &Keyring,
    key: &RefreshKey,
    key_id: &str,
    ciphertext: &[u8],
    token: &SecretText,
) -> Result<bool, Error> {
    let (new_ciphertext, new_key_id) = keyring.encrypt(&key.row(), token.expose())?;
    let done = sqlx::query(
        "UPDATE marketplace_refresh_tokens SET ciphertext = $6, key_id = $7 \
         WHERE environment = $1 AND client_id = $2 AND account = $3 \
           AND key_id = $4 AND ciphertext = $5",
    )
    .bind(&key.environment)
    .bind(&key.client_id)
    .bind(&key.account)
    .bind(key_id)
    .bind(ciphertext)
    .bind(new_ciphertext)
    .bind(new_key_id)
    .execute(pool)
    .await
    .map_err(Error::db("re-encrypt a refresh token"))?;
    Ok(done.rows_affected() > 0)
}
