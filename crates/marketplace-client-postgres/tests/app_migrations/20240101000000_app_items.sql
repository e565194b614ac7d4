-- A backend's own schema, migrated with its own `sqlx::migrate!` into sqlx's default
-- `_sqlx_migrations` table (tests/postgres.rs: the store's migrations live beside it).
CREATE TABLE app_items (
    id   bigserial PRIMARY KEY,
    name text      NOT NULL
);
