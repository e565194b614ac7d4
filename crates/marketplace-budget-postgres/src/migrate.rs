//! The store's schema migrations (`migrations/`), recorded in a table of their own,
//! `marketplace_budget_migrations`, never in sqlx's default `_sqlx_migrations`: that table
//! belongs to the application, whose own `sqlx::migrate!` refuses a history holding versions
//! it does not know (as marketplace-client-postgres and marketplace-orders-postgres record theirs in
//! `marketplace_client_migrations` and `marketplace_orders_migrations`).

use sqlx::migrate::{MigrateError, Migrator};
use sqlx::{Executor as _, PgPool};

use crate::PgBudgetError;

/// The migrations of `migrations/`, embedded.
static MIGRATIONS: Migrator = sqlx::migrate!("./migrations");

/// The transaction-level advisory lock every [`migrate`] takes first: one migration at a time
/// per database, whichever process runs it (the ASCII of `MBPGMIGR`).
const LOCK_ID: i64 = 0x4d42_5047_4d49_4752;

fn failed(e: sqlx::Error) -> PgBudgetError {
    PgBudgetError::Migration(MigrateError::Execute(e))
}

/// Creates or updates the call budget's table (`marketplace_call_budgets`)
/// beside the application's: the migrations not yet recorded
/// in `marketplace_budget_migrations`, in one transaction, one process at a time. Idempotent:
/// run it at start-up. A recorded migration whose checksum differs is refused; a recorded
/// version this build does not know (a newer build ran it) is left as is.
pub async fn migrate(pool: &PgPool) -> Result<(), PgBudgetError> {
    let mut tx = pool.begin().await.map_err(failed)?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(LOCK_ID)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    // Without parameters: the simple query protocol, which runs several statements.
    tx.execute(
        "CREATE TABLE IF NOT EXISTS marketplace_budget_migrations (
             version      bigint      PRIMARY KEY,
             description  text        NOT NULL,
             checksum     bytea       NOT NULL,
             installed_on timestamptz NOT NULL DEFAULT now()
         )",
    )
    .await
    .map_err(failed)?;
    let applied: Vec<(i64, Vec<u8>)> =
        sqlx::query_as("SELECT version, checksum FROM marketplace_budget_migrations")
            .fetch_all(&mut *tx)
            .await
            .map_err(failed)?;
    for migration in MIGRATIONS.iter() {
        match applied.iter().find(|(v, _)| *v == migration.version) {
            Some((_, checksum)) if *checksum == *migration.checksum => continue,
            Some(_) => {
                return Err(PgBudgetError::Migration(MigrateError::VersionMismatch(
                    migration.version,
                )));
            }
            None => {}
        }
        tx.execute(migration.sql.as_ref()).await.map_err(|e| {
            PgBudgetError::Migration(MigrateError::ExecuteMigration(e, migration.version))
        })?;
        sqlx::query(
            "INSERT INTO marketplace_budget_migrations (version, description, checksum) \
             VALUES ($1, $2, $3)",
        )
        .bind(migration.version)
        .bind(&*migration.description)
        .bind(&*migration.checksum)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    }
    tx.commit().await.map_err(failed)
}
