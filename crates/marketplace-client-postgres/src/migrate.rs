//! The store's schema migrations, recorded in a table of their own,
//! `marketplace_client_migrations`, never in sqlx's default `_sqlx_migrations`: that table
//! belongs to the application, whose own `sqlx::migrate!` refuses a history holding versions
//! it does not know (and this crate's migrator would refuse the application's).
//!
//! Versions before this one recorded the store's migrations in `_sqlx_migrations`. Such a
//! record (the same version and the same checksum as one of this crate's migrations) is moved
//! here, so that the application's migrator finds only its own history again; a record of the
//! same version with another checksum is the application's and is left alone.

use std::sync::LazyLock;

use sqlx::SqlSafeStr as _;
use sqlx::migrate::{MigrateError, Migration, MigrationType};
use sqlx::{Executor as _, PgConnection, PgPool};

use crate::error::Error;

/// The migrations of `migrations/`, embedded, as sqlx reads a migrations directory: the
/// version and description (`_` read as a blank) from the file's name, the checksum of its
/// statements. Listed by hand rather than with `sqlx::migrate!`, whose procedural macro
/// compiles sqlx a second time (for the compiler) into every build of this crate; the test
/// `embedded_as_sqlx_reads_the_directory` keeps the list and the directory in step.
static MIGRATIONS: LazyLock<Vec<Migration>> = LazyLock::new(|| {
    [
        (
            20250101000000,
            "token store",
            include_str!("../migrations/20250101000000_token_store.sql"),
        ),
        (
            20251126000000,
            "scoped user tokens",
            include_str!("../migrations/20251126000000_scoped_user_tokens.sql"),
        ),
        (
            20251127000000,
            "refusal renewals",
            include_str!("../migrations/20251127000000_refusal_renewals.sql"),
        ),
        (
            20251128000000,
            "account ebay users",
            include_str!("../migrations/20251128000000_account_ebay_users.sql"),
        ),
        (
            20251128000001,
            "notifications",
            include_str!("../migrations/20251128000001_notifications.sql"),
        ),
        (
            20251129000000,
            "signing keys",
            include_str!("../migrations/20251129000000_signing_keys.sql"),
        ),
        (
            20251130000000,
            "pending consents",
            include_str!("../migrations/20251130000000_pending_consents.sql"),
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

/// The table recording which of the store's migrations ran.
pub(crate) const MIGRATIONS_TABLE: &str = "marketplace_client_migrations";

/// The transaction-level advisory lock every [`run`] takes first: one migration at a time
/// per database, whichever process runs it (the ASCII of `MCPGMIGR`).
const LOCK_ID: i64 = 0x4d43_5047_4d49_4752;

fn failed(e: sqlx::Error) -> Error {
    Error::Migration(MigrateError::Execute(e))
}

/// Runs the migrations not yet recorded, in one transaction under [`LOCK_ID`]. A version
/// recorded with another checksum is an error (a migration changed after it ran); a recorded
/// version this build does not know (a newer build ran it) is left as is.
pub(crate) async fn run(pool: &PgPool) -> Result<(), Error> {
    let mut tx = pool.begin().await.map_err(failed)?;
    run_in(&mut tx).await?;
    tx.commit().await.map_err(failed)
}

/// [`run`]'s statements, in the transaction of `tx`.
async fn run_in(tx: &mut PgConnection) -> Result<(), Error> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(LOCK_ID)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    // Without parameters: the simple query protocol, which runs several statements.
    tx.execute(
        "CREATE TABLE IF NOT EXISTS marketplace_client_migrations (
             version      bigint      PRIMARY KEY,
             description  text        NOT NULL,
             checksum     bytea       NOT NULL,
             installed_on timestamptz NOT NULL DEFAULT now()
         )",
    )
    .await
    .map_err(failed)?;
    adopt_from_sqlx_table(tx).await?;
    let applied: Vec<(i64, Vec<u8>)> =
        sqlx::query_as("SELECT version, checksum FROM marketplace_client_migrations")
            .fetch_all(&mut *tx)
            .await
            .map_err(failed)?;
    for migration in MIGRATIONS.iter() {
        match applied.iter().find(|(v, _)| *v == migration.version) {
            Some((_, checksum)) if *checksum == *migration.checksum => continue,
            Some(_) => {
                return Err(Error::Migration(MigrateError::VersionMismatch(
                    migration.version,
                )));
            }
            None => {}
        }
        tx.execute(migration.sql.as_ref())
            .await
            .map_err(|e| Error::Migration(MigrateError::ExecuteMigration(e, migration.version)))?;
        sqlx::query(
            "INSERT INTO marketplace_client_migrations (version, description, checksum) \
             VALUES ($1, $2, $3)",
        )
        .bind(migration.version)
        .bind(&*migration.description)
        .bind(&*migration.checksum)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        tracing::info!(
            version = migration.version,
            description = %migration.description,
            "token store schema migrated"
        );
    }
    Ok(())
}

/// Moves the records of this crate's migrations that an earlier version wrote into sqlx's
/// `_sqlx_migrations` (found through the search path, as sqlx finds it) into
/// [`MIGRATIONS_TABLE`]: same version and same checksum only.
async fn adopt_from_sqlx_table(tx: &mut PgConnection) -> Result<(), Error> {
    let exists: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(&mut *tx)
        .await
        .map_err(failed)?;
    if !exists {
        return Ok(());
    }
    for migration in MIGRATIONS.iter() {
        let moved = sqlx::query(
            "WITH moved AS ( \
                 DELETE FROM _sqlx_migrations WHERE version = $1 AND checksum = $3 \
                 RETURNING version \
             ) \
             INSERT INTO marketplace_client_migrations (version, description, checksum) \
             SELECT version, $2, $3 FROM moved \
             ON CONFLICT (version) DO NOTHING",
        )
        .bind(migration.version)
        .bind(&*migration.description)
        .bind(&*migration.checksum)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        if moved.rows_affected() > 0 {
            tracing::info!(
                version = migration.version,
                "the token store's migration record moved from _sqlx_migrations to {MIGRATIONS_TABLE}"
            );
        }
    }
    Ok(())
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
