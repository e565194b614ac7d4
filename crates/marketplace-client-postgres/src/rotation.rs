//! Completing a key rotation: how many stored tokens each key still encrypts
//! ([`key_census`]), and re-encrypting every token under the previous key at once
//! ([`rekey`]), so that `MARKETPLACE_TOKEN_KEY_PREVIOUS` can be dropped knowing that no row
//! needs it.

use sqlx::PgPool;

use crate::cache::{CacheKey, TokenKind};
use crate::crypto::Keyring;
use crate::error::Error;
use crate::refresh::{RefreshKey, reencrypt_refresh_row};

/// How many tokens of one table are encrypted under which key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyUse {
    /// Under the current key (`MARKETPLACE_TOKEN_KEY`).
    pub current: u64,
    /// Under the previous key (`MARKETPLACE_TOKEN_KEY_PREVIOUS`), when the keyring has one.
    pub previous: u64,
    /// Under a key the keyring does not hold: unreadable by this process.
    pub unknown: u64,
}

/// How many stored tokens each key of a [`Keyring`] encrypts, over the whole database (every
/// environment and application: they share the key).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyCensus {
    /// True when the keyring holds a previous key (a rotation is under way).
    pub rotating: bool,
    /// The refresh tokens (`marketplace_refresh_tokens`).
    pub refresh_tokens: KeyUse,
    /// The shared access tokens (`marketplace_token_cache`); an unreadable one is replaced
    /// by the next renewal, at the cost of one token request.
    pub cached_tokens: KeyUse,
    /// The private keys of eBay's request signing keys (`marketplace_signing_keys`).
    pub signing_keys: KeyUse,
}

impl KeyCensus {
    /// The tokens and signing keys still under the previous key: when 0 during a rotation,
    /// the previous key can be dropped.
    pub fn under_previous(&self) -> u64 {
        self.refresh_tokens.previous + self.cached_tokens.previous + self.signing_keys.previous
    }
}

/// What [`rekey`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rekeyed {
    /// Refresh tokens re-encrypted under the current key.
    pub refresh_tokens: u64,
    /// Shared access tokens re-encrypted under the current key.
    pub cached_tokens: u64,
    /// Signing keys' private keys re-encrypted under the current key.
    pub signing_keys: u64,
    /// The census afterwards.
    pub after: KeyCensus,
}

/// How many tokens of the database each key of `keyring` encrypts.
pub async fn key_census(pool: &PgPool, keyring: &Keyring) -> Result<KeyCensus, Error> {
    let count = |sql: &'static str, operation: &'static str| async move {
        let rows: Vec<(String, i64)> = sqlx::query_as(sql)
            .fetch_all(pool)
            .await
            .map_err(Error::db(operation))?;
        let (current, previous) = (keyring.current_id(), keyring.previous_id());
        let mut keys = KeyUse::default();
        for (key_id, n) in rows {
            let n = u64::try_from(n).unwrap_or(0);
            if key_id == current {
                keys.current += n;
            } else if previous.as_deref() == Some(key_id.as_str()) {
                keys.previous += n;
            } else {
                keys.unknown += n;
            }
        }
        Ok::<_, Error>(keys)
    };
    Ok(KeyCensus {
        rotating: keyring.previous_id().is_some(),
        refresh_tokens: count(
            "SELECT key_id, count(*) FROM marketplace_refresh_tokens GROUP BY key_id",
            "count the refresh tokens by key",
        )
        .await?,
        cached_tokens: count(
            "SELECT key_id, count(*) FROM marketplace_token_cache \
             WHERE key_id IS NOT NULL GROUP BY key_id",
            "count the cached tokens by key",
        )
        .await?,
        signing_keys: count(
            "SELECT key_id, count(*) FROM marketplace_signing_keys GROUP BY key_id",
            "count the signing keys by key",
        )
        .await?,
    })
}

/// `environment, client_id, account, ciphertext`.
type RefreshRow = (String, String, String, Vec<u8>);
/// `environment, client_id, kind, subject, scopes, ciphertext`.
type CacheRow = (String, String, String, String, String, Vec<u8>);

/// Re-encrypts every token stored under the previous key of `keyring` under its current key
/// (each row only if it still holds what was read: a token written meanwhile is left as
/// written), and counts what is left. A row that does not decrypt is left as it is and
/// counted in [`Rekeyed::after`]. Without a previous key, nothing is rewritten.
pub async fn rekey(pool: &PgPool, keyring: &Keyring) -> Result<Rekeyed, Error> {
    let mut done = Rekeyed::default();
    if let Some(previous) = keyring.previous_id() {
        let rows: Vec<RefreshRow> = sqlx::query_as(
            "SELECT environment, client_id, account, ciphertext \
             FROM marketplace_refresh_tokens WHERE key_id = $1",
        )
        .bind(&previous)
        .fetch_all(pool)
        .await
        .map_err(Error::db("list the refresh tokens under the previous key"))?;
        for (environment, client_id, account, ciphertext) in rows {
            let key = RefreshKey::new(environment, client_id, account);
            let Ok(token) = keyring.decrypt(&key.row(), &previous, &ciphertext) else {
                tracing::warn!(account = %key.account, "a refresh token under the previous key does not decrypt; left as it is");
                continue;
            };
            if reencrypt_refresh_row(pool, keyring, &key, &previous, &ciphertext, &token).await? {
                done.refresh_tokens += 1;
            }
        }
        let rows: Vec<CacheRow> = sqlx::query_as(
            "SELECT environment, client_id, kind, subject, scopes, ciphertext \
             FROM marketplace_token_cache WHERE key_id = $1 AND ciphertext IS NOT NULL",
        )
        .bind(&previous)
        .fetch_all(pool)
        .await
        .map_err(Error::db("list the cached tokens under the previous key"))?;
        for (environment, client_id, kind, subject, scopes, ciphertext) in rows {
            let kind = match kind.as_str() {
                "application" => TokenKind::Application,
                _ => TokenKind::User,
            };
            let key = CacheKey {
                environment,
                client_id,
                kind,
                subject,
                scopes,
            };
            let Ok(token) = keyring.decrypt(&key.row(), &previous, &ciphertext) else {
                continue;
            };
            let (new_ciphertext, new_key_id) = keyring.encrypt(&key.row(), token.expose())?;
            let rewritten = sqlx::query(
                "UPDATE marketplace_token_cache SET ciphertext = $8, key_id = $9 \
                 WHERE environment = $1 AND client_id = $2 AND kind = $3 AND subject = $4 \
                   AND scopes = $5 AND key_id = $6 AND ciphertext = $7",
            )
            .bind(&key.environment)
            .bind(&key.client_id)
            .bind(key.kind.as_str())
            .bind(&key.subject)
            .bind(&key.scopes)
            .bind(&previous)
            .bind(&ciphertext)
            .bind(new_ciphertext)
            .bind(new_key_id)
            .execute(pool)
            .await
            .map_err(Error::db("re-encrypt a cached token"))?;
            done.cached_tokens += rewritten.rows_affected();
        }
        done.signing_keys = rekey_signing_keys(pool, keyring, &previous).await?;
    }
    done.after = key_census(pool, keyring).await?;
    tracing::info!(
        refresh_tokens = done.refresh_tokens,
        cached_tokens = done.cached_tokens,
        signing_keys = done.signing_keys,
        left_under_previous = done.after.under_previous(),
        "tokens re-encrypted under the current key"
    );
    Ok(done)
}

/// Re-encrypts the signing keys' private keys under `previous` with the current key (each row
/// only if it still holds what was read); returns how many were rewritten.
async fn rekey_signing_keys(
    pool: &PgPool,
    keyring: &Keyring,
    previous: &str,
) -> Result<u64, Error> {
    let rows: Vec<(String, String, String, Vec<u8>)> = sqlx::query_as(
        "SELECT environment, client_id, signing_key_id, private_key \
         FROM marketplace_signing_keys WHERE key_id = $1",
    )
    .bind(previous)
    .fetch_all(pool)
    .await
    .map_err(Error::db("list the signing keys under the previous key"))?;
    let mut done = 0;
    for (environment, client_id, signing_key_id, sealed) in rows {
        let row = crate::error::RowId {
            table: "marketplace_signing_keys",
            environment,
            client_id,
            kind: None,
            subject: signing_key_id,
            scopes: String::new(),
        };
        let Ok(private_key) = keyring.decrypt(&row, previous, &sealed) else {
            tracing::warn!(signing_key_id = %row.subject, "a signing key under the previous key does not decrypt; left as it is");
            continue;
        };
        let (resealed, key_id) = keyring.encrypt(&row, private_key.expose())?;
        let rewritten = sqlx::query(
            "UPDATE marketplace_signing_keys SET private_key = $5, key_id = $6 \
             WHERE environment = $1 AND client_id = $2 AND signing_key_id = $3 \
               AND private_key = $4",
        )
        .bind(&row.environment)
        .bind(&row.client_id)
        .bind(&row.subject)
        .bind(&sealed)
        .bind(resealed)
        .bind(key_id)
        .execute(pool)
        .await
        .map_err(Error::db("re-encrypt a signing key"))?;
        done += rewritten.rows_affected();
    }
    Ok(done)
}
