//! Pending consents in `marketplace_pending_consents`: a consent request saved by one process
//! and completed by whichever process receives its redirect
//! ([`RefreshTokenStore::save_consent`](marketplace_client::aio::oauth::RefreshTokenStore::save_consent)).
//!
//! A row is found by the SHA-256 of the state; the consent URL (which holds the state) is
//! encrypted like the tokens, the row's identity as associated data. A take is one
//! `DELETE … RETURNING`: of two processes given the same redirect, one gets the row.

use chrono::{DateTime, Utc};
use marketplace_client::oauth::{ConsentRequest, CsrfState, OAuthError, StoreError};
use sha2::{Digest, Sha256};

use super::PgRefreshTokenStore;
use crate::error::{Error, RowId};
use crate::time::{from_db, to_db};

const TABLE: &str = "marketplace_pending_consents";

/// How the table names itself in errors.
const STORE: &str = "postgres table marketplace_pending_consents";

/// `ciphertext, key_id, account, expires_at`.
type TakenRow = (Vec<u8>, String, Option<String>, DateTime<Utc>);

impl PgRefreshTokenStore {
    /// The identity of the row of the state whose SHA-256 is `hash`.
    fn consent_row(&self, hash: &[u8]) -> RowId {
        RowId {
            table: TABLE,
            environment: self.environment.clone(),
            client_id: self.client_id.clone(),
            kind: Some("pending consent"),
            subject: hash.iter().map(|b| format!("{b:02x}")).collect(),
            scopes: String::new(),
        }
    }

    /// Saves `request` (encrypted), dropping first the pending consents of this application
    /// that expired a day ago or more, then the oldest past the bounds: the account's past
    /// [`ConsentRequest::MAX_PENDING_PER_ACCOUNT`] - 1 and the application's past
    /// [`ConsentRequest::MAX_PENDING`] - 1, so that a flood of consent requests cannot grow
    /// the table. In a transaction under an advisory lock on (environment, client id), so
    /// that saves racing from the processes of a fleet keep the bounds exactly.
    pub(crate) async fn save_pending(&self, request: &ConsentRequest) -> Result<(), OAuthError> {
        let hash = state_hash(request.state());
        let row = self.consent_row(&hash);
        let statement = async {
            let (ciphertext, key_id) = self
                .tokens
                .keyring()
                .encrypt(&row, request.url().as_str())?;
            let expires_at = to_db(request.expires_at(), "consent expiry")?;
            let mut tx = self
                .pool()
                .begin()
                .await
                .map_err(Error::db("save a pending consent"))?;
            sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2 || chr(1) || $3))")
                .bind(LOCK_CLASS)
                .bind(&self.environment)
                .bind(&self.client_id)
                .execute(&mut *tx)
                .await
                .map_err(Error::db("save a pending consent"))?;
            sqlx::query(
                "WITH live AS ( \
                     SELECT state_hash, account, created_at, \
                            row_number() OVER (PARTITION BY account \
                                               ORDER BY created_at DESC, state_hash) AS nth \
                     FROM marketplace_pending_consents \
                     WHERE environment = $1 AND client_id = $2 \
                       AND expires_at >= now() - interval '1 day' \
                 ), kept AS ( \
                     SELECT state_hash FROM live \
                     WHERE NOT (account IS NOT DISTINCT FROM $3 AND nth > $4) \
                     ORDER BY created_at DESC, state_hash \
                     LIMIT $5 \
                 ) \
                 DELETE FROM marketplace_pending_consents \
                 WHERE environment = $1 AND client_id = $2 \
                   AND state_hash NOT IN (SELECT state_hash FROM kept)",
            )
            .bind(&self.environment)
            .bind(&self.client_id)
            .bind(request.account())
            .bind(bound(ConsentRequest::MAX_PENDING_PER_ACCOUNT))
            .bind(bound(ConsentRequest::MAX_PENDING))
            .execute(&mut *tx)
            .await
            .map_err(Error::db("drop the oldest pending consents"))?;
            sqlx::query(
                "INSERT INTO marketplace_pending_consents \
                   (environment, client_id, state_hash, ciphertext, key_id, account, expires_at, \
                    created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp())",
            )
            .bind(&self.environment)
            .bind(&self.client_id)
            .bind(&hash)
            .bind(ciphertext)
            .bind(key_id)
            .bind(request.account())
            .bind(expires_at)
            .execute(&mut *tx)
            .await
            .map_err(Error::db("save a pending consent"))?;
            tx.commit()
                .await
                .map_err(Error::db("save a pending consent"))?;
            Ok(())
        };
        self.bounded_as("save a pending consent to", statement, consent_error)
            .await
    }

    /// Removes and returns the pending consent of `state`, in one `DELETE … RETURNING`.
    pub(crate) async fn take_pending(
        &self,
        state: &CsrfState,
    ) -> Result<Option<ConsentRequest>, OAuthError> {
        let hash = state_hash(state);
        let row = self.consent_row(&hash);
        let statement = async {
            let taken: Option<TakenRow> = sqlx::query_as(
                "DELETE FROM marketplace_pending_consents \
                 WHERE environment = $1 AND client_id = $2 AND state_hash = $3 \
                 RETURNING ciphertext, key_id, account, expires_at",
            )
            .bind(&self.environment)
            .bind(&self.client_id)
            .bind(&hash)
            .fetch_optional(self.pool())
            .await
            .map_err(Error::db("take a pending consent"))?;
            let Some((ciphertext, key_id, account, expires_at)) = taken else {
                return Ok(None);
            };
            let url = self.tokens.keyring().decrypt(&row, &key_id, &ciphertext)?;
            Ok(Some((url, account, from_db(expires_at, "consent expiry")?)))
        };
        let Some((url, account, expires_at)) = self
            .bounded_as("take a pending consent from", statement, consent_error)
            .await?
        else {
            return Ok(None);
        };
        // The state is compared again, in constant time, by the completion.
        ConsentRequest::restore(url.expose(), account.as_deref(), expires_at).map(Some)
    }
}

/// The first half of the advisory lock's two-part key under which a consent is saved (the
/// ASCII of `MCPC`): the second is a hash of the environment and the client id.
const LOCK_CLASS: i32 = 0x4d43_5043;

/// A bound of [`ConsentRequest`] less one (room for the consent being saved), as SQL's
/// `bigint`.
fn bound(max: usize) -> i64 {
    i64::try_from(max.saturating_sub(1)).unwrap_or(i64::MAX)
}

/// The SHA-256 of a state: the row's key (the state itself is only in the ciphertext).
fn state_hash(state: &CsrfState) -> Vec<u8> {
    Sha256::digest(state.secret().as_bytes()).to_vec()
}

/// The store's error for `e`, met while doing `action` on the pending consents.
fn consent_error(action: &'static str, e: Error) -> OAuthError {
    match &e {
        Error::Decrypt { .. } | Error::Corrupt { .. } | Error::TimeOutOfRange { .. } => {
            let message = format!("cannot {action} the pending consents {STORE}: {e}");
            StoreError::corrupt(STORE, action, &e)
                .with_message(message)
                .with_source(e)
        }
        _ => StoreError::unavailable(STORE, action, e),
    }
    .into()
}
