//! The one error type of the crate.
//!
//! No message carries a token or a key: database errors name the operation, decryption
//! errors name the row (its table and key columns, which are not secret), key errors say
//! what is wrong with the key without echoing it.

use std::fmt;

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A statement failed (or the database could not be reached). `operation` says what was
    /// being done, for example `"save refresh token"`.
    #[error("database error while trying to {operation}: {source}")]
    Database {
        /// What was being done.
        operation: &'static str,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },

    /// The schema migrations failed.
    #[error("could not migrate the token store's schema: {0}")]
    Migration(#[source] sqlx::migrate::MigrateError),

    /// No token key is configured.
    #[error(
        "no token key: set {var} to 32 random bytes in base64, for example the output of \
         `head -c 32 /dev/urandom | base64`"
    )]
    MissingKey {
        /// The environment variable that was read.
        var: &'static str,
    },

    /// A token key that is not 32 bytes of base64. The value itself is never shown.
    #[error(
        "invalid token key{}: {problem} (expected 32 random bytes in base64, for example the \
         output of `head -c 32 /dev/urandom | base64`)",
        from.map(|v| format!(" in {v}")).unwrap_or_default()
    )]
    InvalidKey {
        /// Where the key came from (an environment variable), if known.
        from: Option<&'static str>,
        /// What is wrong with it (never the value).
        problem: KeyProblem,
    },

    /// A stored ciphertext could not be decrypted.
    #[error("cannot decrypt the token stored in {row}: {reason}")]
    Decrypt {
        /// The row: table and key columns.
        row: Box<RowId>,
        /// Why.
        reason: DecryptFailure,
    },

    /// Encryption failed (only on absurd input sizes).
    #[error("cannot encrypt the token for {row}")]
    Encrypt {
        /// The row it was meant for.
        row: Box<RowId>,
    },

    /// A time outside the range the store can represent.
    #[error("the {what} is outside the range of representable times")]
    TimeOutOfRange {
        /// Which time.
        what: &'static str,
    },

    /// A stored value is not what the schema allows (for example a time out of range).
    #[error("unexpected value stored in {row}: {problem}")]
    Corrupt {
        /// The row.
        row: Box<RowId>,
        /// What is wrong.
        problem: &'static str,
    },

    /// The database URL could not be read (it is not repeated: it may hold a password).
    #[error(
        "the token store's database URL cannot be read: expected \
         postgres://user:password@host:port/database"
    )]
    InvalidUrl,

    /// The database did not answer in time.
    #[error("the database did not answer within {} ms while trying to {operation}", after.as_millis())]
    TimedOut {
        /// What was being done.
        operation: &'static str,
        /// How long it waited.
        after: std::time::Duration,
    },

    /// No connection to the database could be made: `reason` is the driver's own (connection
    /// refused, unknown host, authentication failed), found by one direct attempt after the
    /// pool gave up waiting ("pool timed out" says nothing of why).
    #[error("cannot connect to the database at {server} to {operation}: {reason}")]
    Unreachable {
        /// What was being done.
        operation: &'static str,
        /// The server's host and port (never the user or the password).
        server: String,
        /// Why, as the driver says it.
        reason: String,
    },

    /// The runtime of the blocking store could not start.
    #[error("cannot start the token store's runtime: {0}")]
    Runtime(#[source] std::io::Error),

    /// The Key Management API failed (createSigningKey), with the service's own message
    /// (feature `signing`).
    #[cfg(feature = "signing")]
    #[error("the Key Management API failed: {0}")]
    KeyManagement(#[source] Box<marketplace_client::api::ApiError>),

    /// A signing key (stored or just created) cannot be used (feature `signing`); the message
    /// never holds the key.
    #[cfg(feature = "signing")]
    #[error("the signing key cannot be used: {0}")]
    SigningKey(#[source] marketplace_client::signing::SigningError),

    /// The runtime of the blocking store has stopped.
    #[error("the token store's runtime has stopped")]
    RuntimeGone,
}

impl Error {
    pub(crate) fn db(operation: &'static str) -> impl FnOnce(sqlx::Error) -> Error {
        move |source| Error::Database { operation, source }
    }

    /// True when the database could not be reached (no connection, or no answer in time), as
    /// opposed to a statement or a migration the database refused.
    pub fn is_unreachable(&self) -> bool {
        let unreachable = |e: &sqlx::Error| {
            matches!(
                e,
                sqlx::Error::PoolTimedOut
                    | sqlx::Error::PoolClosed
                    | sqlx::Error::Io(_)
                    | sqlx::Error::Tls(_)
                    | sqlx::Error::WorkerCrashed
            )
        };
        match self {
            Error::Database { source, .. } => unreachable(source),
            Error::Migration(sqlx::migrate::MigrateError::Execute(source)) => unreachable(source),
            Error::Unreachable { .. } | Error::TimedOut { .. } | Error::RuntimeGone => true,
            _ => false,
        }
    }

    /// True for the pool's "timed out while waiting for an open connection", which hides why.
    fn is_pool_timeout(&self) -> bool {
        matches!(
            self,
            Error::Database {
                source: sqlx::Error::PoolTimedOut,
                ..
            } | Error::Migration(sqlx::migrate::MigrateError::Execute(
                sqlx::Error::PoolTimedOut
            ))
        )
    }

    /// `self`, or when it is the pool's time-out, why no connection could be made: one direct
    /// connection attempt, within `within`, gives the driver's reason (refused, unknown host,
    /// authentication). When that attempt succeeds the pool was busy, and `self` stays.
    pub(crate) async fn explained(self, pool: &sqlx::PgPool, within: std::time::Duration) -> Error {
        let operation = match &self {
            _ if !self.is_pool_timeout() => return self,
            Error::Database { operation, .. } => *operation,
            _ => "migrate the token store's schema",
        };
        match Error::unreachable(pool, operation, within).await {
            Some(unreachable) => unreachable,
            None => self,
        }
    }

    /// [`Error::Unreachable`] with the driver's reason when one direct connection attempt to
    /// the database of `pool` fails within `within`; `None` when it connects.
    pub(crate) async fn unreachable(
        pool: &sqlx::PgPool,
        operation: &'static str,
        within: std::time::Duration,
    ) -> Option<Error> {
        use sqlx::Connection as _;
        let options = pool.connect_options();
        let server = format!("{}:{}", options.get_host(), options.get_port());
        let reason =
            match tokio::time::timeout(within, sqlx::PgConnection::connect_with(&options)).await {
                Ok(Ok(connection)) => {
                    let _ = connection.close().await;
                    return None;
                }
                Ok(Err(reason)) => reason.to_string(),
                Err(_) => format!("no answer within {} ms", within.as_millis()),
            };
        Some(Error::Unreachable {
            operation,
            server,
            reason,
        })
    }
}

/// What is wrong with a token key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyProblem {
    /// It is not valid base64.
    NotBase64,
    /// It decodes to this many bytes instead of 32.
    WrongLength(usize),
}

impl fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyProblem::NotBase64 => f.write_str("it is not valid base64"),
            KeyProblem::WrongLength(n) => write!(f, "it decodes to {n} bytes, not 32"),
        }
    }
}

/// Why a ciphertext did not decrypt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecryptFailure {
    /// The row was encrypted under a key the keyring does not hold (its fingerprint is shown).
    UnknownKey(String),
    /// Authentication failed: the key is wrong, the ciphertext was altered, or it belongs to
    /// another row.
    Authentication,
    /// The stored value is too short to be a ciphertext.
    Malformed,
    /// The plaintext is not UTF-8.
    NotUtf8,
}

impl fmt::Display for DecryptFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecryptFailure::UnknownKey(id) => write!(
                f,
                "it was encrypted under key {id}, which is neither the current nor the \
                 previous key"
            ),
            DecryptFailure::Authentication => f.write_str(
                "authentication failed (a wrong key, an altered ciphertext, or a ciphertext \
                 copied from another row)",
            ),
            DecryptFailure::Malformed => f.write_str("the stored value is too short"),
            DecryptFailure::NotUtf8 => f.write_str("the decrypted token is not UTF-8"),
        }
    }
}

/// The identity of a row, as shown in errors and bound into its ciphertext.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowId {
    pub(crate) table: &'static str,
    pub(crate) environment: String,
    pub(crate) client_id: String,
    pub(crate) kind: Option<&'static str>,
    pub(crate) subject: String,
    /// The scope set of a user token asked for a subset of the consented scopes, else empty.
    pub(crate) scopes: String,
}

impl RowId {
    /// The associated data of the row's ciphertext: every part length-prefixed, so that no two
    /// identities encode alike. A scoped user token's scope set is a seventh part (rows without
    /// one keep the six parts they were written with).
    pub(crate) fn associated_data(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        let parts: [&str; 6] = [
            "marketplace-client-postgres/v1",
            self.table,
            &self.environment,
            &self.client_id,
            self.kind.unwrap_or(""),
            &self.subject,
        ];
        let scopes = (!self.scopes.is_empty()).then_some(self.scopes.as_str());
        for part in parts.into_iter().chain(scopes) {
            out.extend_from_slice(&(part.len() as u64).to_be_bytes());
            out.extend_from_slice(part.as_bytes());
        }
        out
    }
}

impl fmt::Display for RowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (environment {:?}, client id {:?}",
            self.table, self.environment, self.client_id
        )?;
        match self.kind {
            Some(kind) if self.scopes.is_empty() => {
                write!(f, ", kind {kind:?}, subject {:?})", self.subject)
            }
            Some(kind) => write!(
                f,
                ", kind {kind:?}, subject {:?}, scopes {:?})",
                self.subject, self.scopes
            ),
            None => write!(f, ", account {:?})", self.subject),
        }
    }
}
