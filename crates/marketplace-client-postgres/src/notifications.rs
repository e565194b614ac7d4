//! eBay's notifications shared by a fleet (feature `notifications`, used by
//! `marketplace-notifications`' `postgres` feature): the `notificationId`s handled, so that
//! eBay's retries of one notification are handled once by all the processes together
//! ([`NotificationLog`]), and the public keys of getPublicKey by `kid`, fetched once for all
//! ([`PublicKeyTable`]).
//!
//! The tables (`marketplace_notifications_seen`, `marketplace_notification_keys`) are made by
//! [`crate::migrate`], with or without the feature; without it, no code here is compiled.

use std::time::Duration;

use sqlx::PgPool;

use crate::error::Error;

/// How long a handled `notificationId` is remembered (eBay retries a notification for about a
/// day).
pub const HANDLED_RETENTION: Duration = Duration::from_secs(24 * 3600);

/// How long a claim holds before another process may take the notification over (a process
/// that died while handling it).
pub const DEFAULT_CLAIM: Duration = Duration::from_secs(300);

/// What [`NotificationLog::claim`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// This caller handles the notification; then [`NotificationLog::handled`] or
    /// [`NotificationLog::release`] with this holder.
    Mine(ClaimHolder),
    /// It was handled already (within [`HANDLED_RETENTION`]).
    Handled,
    /// Another caller is handling it now.
    InFlight,
}

/// The holder of a claim (a random id the database made).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimHolder(String);

/// The `notificationId`s an application's endpoint handled, in `marketplace_notifications_seen`,
/// keyed by environment and client id as the refresh tokens are.
#[derive(Debug, Clone)]
pub struct NotificationLog {
    pool: PgPool,
    environment: String,
    client_id: String,
    claim: Duration,
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

impl NotificationLog {
    /// The log of `client_id`'s notifications in `environment`, in the database of `pool`
    /// (migrated with [`crate::migrate`]).
    pub fn new(pool: PgPool, environment: impl Into<String>, client_id: impl Into<String>) -> Self {
        Self {
            pool,
            environment: environment.into(),
            client_id: client_id.into(),
            claim: DEFAULT_CLAIM,
        }
    }

    /// Sets how long a claim holds ([`DEFAULT_CLAIM`]).
    pub fn with_claim(mut self, claim: Duration) -> Self {
        self.claim = claim;
        self
    }

    /// Claims `notification_id` for handling, in one statement: a new id, a claim past its
    /// deadline, or one handled longer than [`HANDLED_RETENTION`] ago is this caller's.
    pub async fn claim(&self, notification_id: &str) -> Result<Claim, Error> {
        let holder: Option<String> = sqlx::query_scalar(
            "INSERT INTO marketplace_notifications_seen AS s \
               (environment, client_id, notification_id, holder, claimed_until) \
             VALUES ($1, $2, $3, gen_random_uuid()::text, now() + $4 * interval '1 microsecond') \
             ON CONFLICT (environment, client_id, notification_id) DO UPDATE SET \
               holder = EXCLUDED.holder, claimed_until = EXCLUDED.claimed_until, handled_at = NULL \
             WHERE (s.handled_at IS NULL AND s.claimed_until <= now()) \
                OR s.handled_at < now() - $5 * interval '1 microsecond' \
             RETURNING holder",
        )
        .bind(&self.environment)
        .bind(&self.client_id)
        .bind(notification_id)
        .bind(micros(self.claim))
        .bind(micros(HANDLED_RETENTION))
        .fetch_optional(&self.pool)
        .await
        .map_err(Error::db("claim a notification"))?;
        if let Some(holder) = holder {
            return Ok(Claim::Mine(ClaimHolder(holder)));
        }
        let handled: Option<bool> = sqlx::query_scalar(
            "SELECT handled_at IS NOT NULL FROM marketplace_notifications_seen \
             WHERE environment = $1 AND client_id = $2 AND notification_id = $3",
        )
        .bind(&self.environment)
        .bind(&self.client_id)
        .bind(notification_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(Error::db("read a notification's state"))?;
        // A row released in between: someone is at it, or eBay sends it again.
        Ok(if handled == Some(true) {
            Claim::Handled
        } else {
            Claim::InFlight
        })
    }

    /// Marks `notification_id`, claimed by `holder`, as handled, and forgets the ids handled
    /// longer than [`HANDLED_RETENTION`] ago.
    pub async fn handled(&self, notification_id: &str, holder: &ClaimHolder) -> Result<(), Error> {
        sqlx::query(
            "WITH pruned AS ( \
                 DELETE FROM marketplace_notifications_seen \
                 WHERE handled_at < now() - $5 * interval '1 microsecond' RETURNING 1 \
             ) UPDATE marketplace_notifications_seen SET \
               handled_at = now(), holder = NULL, claimed_until = NULL \
             WHERE environment = $1 AND client_id = $2 AND notification_id = $3 AND holder = $4",
        )
        .bind(&self.environment)
        .bind(&self.client_id)
        .bind(notification_id)
        .bind(&holder.0)
        .bind(micros(HANDLED_RETENTION))
        .execute(&self.pool)
        .await
        .map_err(Error::db("mark a notification as handled"))?;
        Ok(())
    }

    /// Gives up the claim of `holder` on `notification_id` (its handling failed: eBay sends
    /// it again, and the next delivery is handled).
    pub async fn release(&self, notification_id: &str, holder: &ClaimHolder) -> Result<(), Error> {
        sqlx::query(
            "DELETE FROM marketplace_notifications_seen \
             WHERE environment = $1 AND client_id = $2 AND notification_id = $3 AND holder = $4 \
               AND handled_at IS NULL",
        )
        .bind(&self.environment)
        .bind(&self.client_id)
        .bind(notification_id)
        .bind(&holder.0)
        .execute(&self.pool)
        .await
        .map_err(Error::db("release a notification"))?;
        Ok(())
    }
}

/// The public keys of eBay's Notification API by `kid`, in `marketplace_notification_keys`
/// (PEMs as getPublicKey answers them; a public key is not secret).
#[derive(Debug, Clone)]
pub struct PublicKeyTable {
    pool: PgPool,
}

impl PublicKeyTable {
    /// The table in the database of `pool` (migrated with [`crate::migrate`]).
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// The PEM of `kid`, if one was stored less than `max_age` ago.
    pub async fn get(&self, kid: &str, max_age: Duration) -> Result<Option<String>, Error> {
        sqlx::query_scalar(
            "SELECT pem FROM marketplace_notification_keys \
             WHERE kid = $1 AND fetched_at > now() - $2 * interval '1 microsecond'",
        )
        .bind(kid)
        .bind(micros(max_age))
        .fetch_optional(&self.pool)
        .await
        .map_err(Error::db("read a notification public key"))
    }

    /// Stores the PEM of `kid` (fetched now).
    pub async fn put(&self, kid: &str, pem: &str) -> Result<(), Error> {
        sqlx::query(
            "INSERT INTO marketplace_notification_keys (kid, pem, fetched_at) \
             VALUES ($1, $2, now()) \
             ON CONFLICT (kid) DO UPDATE SET pem = EXCLUDED.pem, fetched_at = now()",
        )
        .bind(kid)
        .bind(pem)
        .execute(&self.pool)
        .await
        .map_err(Error::db("store a notification public key"))?;
        Ok(())
    }
}
