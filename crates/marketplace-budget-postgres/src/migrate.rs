//! The store's schema migrations (`migrations/`), recorded in a table of their own,
//! `marketplace_budget_migrations`, never in sqlx's default `_sqlx_migrations`: that table
//! belongs to the application, whose own `sqlx::migrate!` refuses a history holding versions
//! it does not know (as marketplace-client-postgres and marketplace-orders-postgres record theirs in
//! `marketplace_client_migrations` and `marketplace_orders_migrations`).

use std::sync::LazyLock;

use sqlx::SqlSafeStr as _;
use sqlx::migrate::{MigrateError, Migration, MigrationType};
use sqlx::{Executor as _, PgPool};

use crate::PgBudgetError;

/// The migrations of `migrations/`, embedded, as sqlx reads a migrations directory: the
/// version and description (`_` read as a blank) from the file's name, the checksum of its
/// statements. Listed by hand rather than with `sqlx::migrate!`, whose procedural macro
/// compiles sqlx a second time (for the compiler) into every build of this crate; the test
/// `embedded_as_sqlx_reads_the_directory` keeps the list and the directory in step.
static MIGRATIONS: LazyLock<Vec<Migration>> = LazyLock::new(|| {
    [
        (
            20261129000100,
            "call budgets",
            include_str!("../migrations/20261129000100_call_budgets.sql"),
        ),
        (
            20261129000200,
            "call budget windows",
            include_str!("../migrations/20261129000200_call_budget_windows.sql"),
        ),
    ]
    .into_iter()
    .map(|(version, description, sql): (i64, &str, &'static str)| {
        let no_tx = sql.starts_with("-- no-transaction");
        Migration::new(
            version,
            description.into(),
            MigrationType::Simple,
            sql.into_sql_str(),
            no_tx,
        )
    })
    .collect()
});

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

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;
    use sqlx::migrate::{Migration, Migrator};

    /// What sqlx reads from `migrations/` (as `sqlx::migrate!` and `sqlx migrate run` do) is
    /// what this crate runs: the same files, versions, descriptions, checksums, statements.
    #[tokio::test]
    async fn embedded_as_sqlx_reads_the_directory() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let read = Migrator::new(dir.as_path()).await.unwrap();
        let fields = |m: &Migration| {
            (
                m.version,
                m.description.to_string(),
                m.migration_type,
                m.checksum.to_vec(),
                m.no_tx,
                m.sql.as_str().to_owned(),
            )
        };
        let embedded: Vec<_> = MIGRATIONS.iter().map(fields).collect();
        assert!(!embedded.is_empty());
        assert_eq!(embedded, read.iter().map(fields).collect::<Vec<_>>());
    }
}
