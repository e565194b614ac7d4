-- eBay's notifications shared by a fleet (used with the `notifications` feature).

-- The notificationIds an endpoint handled (or is handling), so that eBay's retries of one
-- notification are handled once by the whole fleet. A row is claimed (handled_at NULL, a holder
-- and a claim deadline) before the application's callback runs, marked handled after it, and
-- deleted if it failed; a claim past its deadline (a process that died) can be taken again.
-- Handled rows are kept a day (eBay retries a notification for about that long).
CREATE TABLE IF NOT EXISTS marketplace_notifications_seen (
    environment     text        NOT NULL,
    client_id       text        NOT NULL,
    notification_id text        NOT NULL,
    holder          text        NULL,
    claimed_until   timestamptz NULL,
    handled_at      timestamptz NULL,
    PRIMARY KEY (environment, client_id, notification_id)
);
CREATE INDEX IF NOT EXISTS marketplace_notifications_seen_handled
    ON marketplace_notifications_seen (handled_at);

-- The public keys of the Notification API's getPublicKey, by kid: a key fetched by one process
-- is read by the others. A public key is not secret: stored as the PEM getPublicKey answers.
CREATE TABLE IF NOT EXISTS marketplace_notification_keys (
    kid        text        PRIMARY KEY,
    pem        text        NOT NULL,
    fetched_at timestamptz NOT NULL DEFAULT now()
);
