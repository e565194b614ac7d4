-- A second migration of the backend, so that its history is longer than one step.
ALTER TABLE app_items ADD COLUMN price_cents bigint NOT NULL DEFAULT 0;
