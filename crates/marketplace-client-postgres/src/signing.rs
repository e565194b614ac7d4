//! eBay's request signing keys, shared by a fleet (feature `signing`).
//!
//! eBay shows a signing key's private key once, in createSigningKey's answer, and never again:
//! saving it is part of creating it. [`PgSigningKeys`] keeps an application's keys in
//! `marketplace_signing_keys`, keyed by (environment, client id, signing key id), the private
//! key encrypted like the tokens (AES-256-GCM under the [`Keyring`], the row's identity as
//! associated data); the id, cipher, JWE and times are not secrets and are stored as they are.
//!
//! [`PgSigningKeys::signing_key`] is the one call a backend makes: the newest key when it is
//! not within 30 days of its `expirationTime`; otherwise (no key yet, or one due for
//! replacement) a new key is created with createSigningKey, saved, then used, and the older
//! keys are kept until they expire.
//!
//! A fleet creates exactly one key when several processes find none at once: the process that
//! creates holds a transaction-level advisory lock on (environment, client id) from its second
//! look at the table until the new row is committed. The others wait on the lock, look again
//! and find the new key. A process that dies while it holds the lock loses its connection and
//! with it the lock (and the uncommitted row): the next process creates a key, and the one
//! created by the dead process is left unused at eBay (harmless: it expires).

use marketplace_client::aio::api::ApiClient;
use marketplace_client::signing::{NewSigningKey, SigningKey, replacement_due};
use sqlx::{PgConnection, PgPool};

use crate::crypto::Keyring;
use crate::error::{Error, RowId};

const TABLE: &str = "marketplace_signing_keys";

/// The first half of the advisory lock's two-part key (the ASCII of `MCSK`): the second is a
/// hash of the environment and the client id.
const LOCK_CLASS: i32 = 0x4d43_534b;

/// The cipher of the keys [`PgSigningKeys`] creates unless told otherwise: Ed25519, what eBay
/// recommends.
pub const DEFAULT_SIGNING_CIPHER: &str = "ED25519";

/// A stored signing key as `show` prints it: never its private key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SigningKeySummary {
    /// `signingKeyId`.
    pub signing_key_id: String,
    /// `ED25519` or `RSA`.
    pub cipher: String,
    /// `creationTime`, Unix seconds.
    pub created: Option<u64>,
    /// `expirationTime`, Unix seconds.
    pub expires: Option<u64>,
}

/// An application's signing keys in PostgreSQL, shared by every process of a fleet.
///
/// ```no_run
/// use marketplace_client::aio::api::ApiClient;
/// use marketplace_client_postgres::{Keyring, PgSigningKeys};
/// use marketplace_client::aio::oauth::OAuthConfig;
/// # async fn run(pool: sqlx::PgPool, api: ApiClient) -> Result<(), Box<dyn std::error::Error>> {
/// let oauth = OAuthConfig::from_env()?;
/// let keys = PgSigningKeys::from_config(pool, Keyring::from_env()?, &oauth)?;
/// let key = keys.signing_key(&api).await?; // created on first use, replaced before it expires
/// let signed = api.with_signing_key(key);
/// # let _ = signed; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct PgSigningKeys {
    pool: PgPool,
    keyring: Keyring,
    environment: String,
    client_id: String,
    cipher: String,
    /// Until when a failed renewal is not tried again (the still valid key is used).
    renewal_paused: std::sync::Arc<std::sync::Mutex<Option<std::time::Instant>>>,
}

/// Whether a key that expires at `expires` (Unix seconds) can still sign at `now`.
fn still_valid(expires: Option<u64>, now: u64) -> bool {
    expires.is_none_or(|expires| now < expires)
}

/// One row, its private key still encrypted.
struct Row {
    summary: SigningKeySummary,
    jwe: String,
    private_key: Vec<u8>,
    key_id: String,
}

type RowTuple = (
    String,
    String,
    String,
    Option<i64>,
    Option<i64>,
    Vec<u8>,
    String,
);

fn secs(value: Option<i64>) -> Option<u64> {
    value.and_then(|v| u64::try_from(v).ok())
}

impl From<RowTuple> for Row {
    fn from((id, cipher, jwe, created, expires, private_key, key_id): RowTuple) -> Self {
        Row {
            summary: SigningKeySummary {
                signing_key_id: id,
                cipher,
                created: secs(created),
                expires: secs(expires),
            },
            jwe,
            private_key,
            key_id,
        }
    }
}

const SELECT: &str = "SELECT signing_key_id, cipher, jwe,
        extract(epoch FROM created_at)::bigint, extract(epoch FROM expires_at)::bigint,
        private_key, key_id
    FROM marketplace_signing_keys WHERE environment = $1 AND client_id = $2
    ORDER BY saved_at DESC, expires_at DESC NULLS LAST";

impl PgSigningKeys {
    /// The signing keys of `oauth`'s application (its client id) on `oauth`'s service
    /// (production, the sandbox, or another host), in the database of `pool`, encrypted under
    /// `keyring`: the same rows as every other process configured alike, with no name to
    /// spell. New keys are Ed25519. Fails only when `oauth` has no client id.
    pub fn from_config(
        pool: PgPool,
        keyring: Keyring,
        oauth: &marketplace_client::oauth::OAuthConfig,
    ) -> Result<Self, marketplace_client::oauth::ConfigError> {
        let client_id = oauth.require_client_id()?;
        Ok(Self::new(
            pool,
            keyring,
            marketplace_client::oauth::SharedTokenRequest::environment_of(&oauth.endpoints),
            client_id.as_str(),
        ))
    }

    /// The keys of the application `client_id` in `environment` (private: a typo in either
    /// would silently name another set of keys; [`from_config`](Self::from_config) takes both
    /// from the configuration).
    pub(crate) fn new(
        pool: PgPool,
        keyring: Keyring,
        environment: impl Into<String>,
        client_id: impl Into<String>,
    ) -> Self {
        Self {
            pool,
            keyring,
            environment: environment.into(),
            client_id: client_id.into(),
            cipher: DEFAULT_SIGNING_CIPHER.into(),
            renewal_paused: Default::default(),
        }
    }

    /// New keys with `cipher` (`ED25519` or `RSA`, as createSigningKey names them).
    pub fn with_cipher(mut self, cipher: impl Into<String>) -> Self {
        self.cipher = cipher.into();
        self
    }

    fn row_id(&self, signing_key_id: &str) -> RowId {
        RowId {
            table: TABLE,
            environment: self.environment.clone(),
            client_id: self.client_id.clone(),
            kind: None,
            subject: signing_key_id.to_owned(),
            scopes: String::new(),
        }
    }

    async fn newest(&self, conn: &mut PgConnection) -> Result<Option<Row>, Error> {
        // Constants only: nothing of the caller's reaches the statement's text.
        let row: Option<RowTuple> =
            sqlx::query_as(sqlx::AssertSqlSafe(format!("{SELECT} LIMIT 1")))
                .bind(&self.environment)
                .bind(&self.client_id)
                .fetch_optional(conn)
                .await
                .map_err(Error::db("load the signing key"))?;
        Ok(row.map(Row::from))
    }

    async fn now(conn: &mut PgConnection) -> Result<u64, Error> {
        let now: i64 = sqlx::query_scalar("SELECT extract(epoch FROM now())::bigint")
            .fetch_one(conn)
            .await
            .map_err(Error::db("read the database clock"))?;
        Ok(u64::try_from(now).unwrap_or(0))
    }

    fn open(&self, row: &Row) -> Result<SigningKey, Error> {
        let id = self.row_id(&row.summary.signing_key_id);
        let private_key = self.keyring.decrypt(&id, &row.key_id, &row.private_key)?;
        SigningKey::from_der_base64(private_key.expose(), row.jwe.clone())
            .map_err(Error::SigningKey)
    }

    /// The application's keys, newest first (the first one signs), without their private keys.
    pub async fn list(&self) -> Result<Vec<SigningKeySummary>, Error> {
        let rows: Vec<RowTuple> = sqlx::query_as(SELECT)
            .bind(&self.environment)
            .bind(&self.client_id)
            .fetch_all(&self.pool)
            .await
            .map_err(Error::db("list the signing keys"))?;
        Ok(rows.into_iter().map(|r| Row::from(r).summary).collect())
    }

    /// The newest stored key, ready to sign, without creating one (`None`: no key yet).
    pub async fn current(&self) -> Result<Option<SigningKey>, Error> {
        let mut conn = self
            .pool
            .acquire()
            .await
            .map_err(Error::db("load the signing key"))?;
        match self.newest(&mut conn).await? {
            Some(row) => self.open(&row).map(Some),
            None => Ok(None),
        }
    }

    /// The key to sign with: the newest stored key unless it is within 30 days of its
    /// expiry; otherwise a new key, created with createSigningKey through `api` (an
    /// application token suffices), saved, then returned. Several processes finding no key at
    /// once create exactly one (see the [module](self)). When the creation fails while the
    /// stored key has not expired yet, that key is returned (a warning is logged) and the
    /// creation is tried again after
    /// [`SigningKeyFile::RENEWAL_RETRY`](marketplace_client::signing::SigningKeyFile::RENEWAL_RETRY).
    pub async fn signing_key(&self, api: &ApiClient) -> Result<SigningKey, Error> {
        {
            let mut conn = self
                .pool
                .acquire()
                .await
                .map_err(Error::db("load the signing key"))?;
            let now = Self::now(&mut conn).await?;
            if let Some(row) = self.newest(&mut conn).await?
                && (!replacement_due(row.summary.expires, now)
                    || (self.renewal_paused() && still_valid(row.summary.expires, now)))
            {
                return self.open(&row);
            }
        }
        self.create(api, false).await
    }

    /// Creates a new key now (whatever the stored ones' expiry), saves it and returns it: the
    /// older keys are kept until they expire.
    pub async fn rotate(&self, api: &ApiClient) -> Result<SigningKey, Error> {
        self.create(api, true).await
    }

    fn renewal_pause(&self) -> std::sync::MutexGuard<'_, Option<std::time::Instant>> {
        self.renewal_paused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether a renewal failed less than `RENEWAL_RETRY` ago.
    fn renewal_paused(&self) -> bool {
        self.renewal_pause()
            .is_some_and(|until| std::time::Instant::now() < until)
    }

    /// Under the lock: looks again (unless `always`), creates, saves, forgets expired keys.
    async fn create(&self, api: &ApiClient, always: bool) -> Result<SigningKey, Error> {
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(Error::db("lock the signing keys"))?;
        sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2 || chr(1) || $3))")
            .bind(LOCK_CLASS)
            .bind(&self.environment)
            .bind(&self.client_id)
            .execute(&mut *tx)
            .await
            .map_err(Error::db("lock the signing keys"))?;
        // Due for renewal but still valid: what signs when no new key can be had now.
        let mut fallback = None;
        if !always {
            let now = Self::now(&mut tx).await?;
            if let Some(row) = self.newest(&mut tx).await? {
                if !replacement_due(row.summary.expires, now) {
                    tx.commit()
                        .await
                        .map_err(Error::db("lock the signing keys"))?;
                    return self.open(&row);
                }
                if still_valid(row.summary.expires, now) {
                    fallback = Some(row);
                }
            }
        }
        let created = match api.create_signing_key(&self.cipher).await {
            Ok(created) => created,
            Err(e) => {
                let Some(row) = fallback else {
                    return Err(Error::KeyManagement(Box::new(e)));
                };
                // The lock is released with the transaction, rolled back on drop.
                drop(tx);
                tracing::warn!(
                    signing_key_id = %row.summary.signing_key_id,
                    error = %e,
                    retry_in_secs = marketplace_client::signing::SigningKeyFile::RENEWAL_RETRY.as_secs(),
                    "the signing key is due for renewal and createSigningKey failed; signing \
                     with the stored key, valid until its expiry"
                );
                *self.renewal_pause() = Some(
                    std::time::Instant::now()
                        + marketplace_client::signing::SigningKeyFile::RENEWAL_RETRY,
                );
                return self.open(&row);
            }
        };
        let key = created.signing_key().map_err(Error::SigningKey)?;
        self.insert(&mut tx, &created).await?;
        sqlx::query(
            "DELETE FROM marketplace_signing_keys
             WHERE environment = $1 AND client_id = $2 AND expires_at < now()",
        )
        .bind(&self.environment)
        .bind(&self.client_id)
        .execute(&mut *tx)
        .await
        .map_err(Error::db("forget the expired signing keys"))?;
        tx.commit()
            .await
            .map_err(Error::db("save the signing key"))?;
        Ok(key)
    }

    /// Saves a key created elsewhere (createSigningKey's answer, for example by a command), the
    /// private key encrypted; it becomes the newest key.
    pub async fn save(&self, created: &NewSigningKey) -> Result<(), Error> {
        let mut conn = self
            .pool
            .acquire()
            .await
            .map_err(Error::db("save the signing key"))?;
        self.insert(&mut conn, created).await
    }

    async fn insert(&self, conn: &mut PgConnection, created: &NewSigningKey) -> Result<(), Error> {
        let info = &created.info;
        let id = self.row_id(&info.signing_key_id);
        let (sealed, key_id) = self.keyring.encrypt(&id, created.private_key())?;
        let at = |t: Option<u64>| t.and_then(|t| i64::try_from(t).ok());
        sqlx::query(
            "INSERT INTO marketplace_signing_keys
                 (environment, client_id, signing_key_id, cipher, jwe, created_at, expires_at,
                  private_key, key_id)
             VALUES ($1, $2, $3, $4, $5, to_timestamp($6), to_timestamp($7), $8, $9)",
        )
        .bind(&self.environment)
        .bind(&self.client_id)
        .bind(&info.signing_key_id)
        .bind(&info.cipher)
        .bind(&info.jwe)
        .bind(at(info.creation_time))
        .bind(at(info.expiration_time))
        .bind(sealed)
        .bind(key_id)
        .execute(conn)
        .await
        .map_err(Error::db("save the signing key"))?;
        Ok(())
    }
}
