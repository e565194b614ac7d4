-- Pending consents: a consent request (its URL, which holds the state) saved by the process
-- that sent the seller to eBay's consent page, so that whichever process of the fleet receives
-- the redirect completes it, once. Found by the SHA-256 of the state (the state itself is only
-- in the ciphertext, AES-256-GCM under the tokens' keyring); taken with DELETE ... RETURNING,
-- so two processes given the same redirect cannot both have it.

CREATE TABLE IF NOT EXISTS marketplace_pending_consents (
    environment text        NOT NULL,
    client_id   text        NOT NULL,
    -- SHA-256 of the state.
    state_hash  bytea       NOT NULL,
    -- The consent URL, encrypted: 12-byte nonce, ciphertext, 16-byte tag.
    ciphertext  bytea       NOT NULL,
    key_id      text        NOT NULL,
    -- The account the consent is for, if the caller named one.
    account     text        NULL,
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (environment, client_id, state_hash)
);

-- Saves drop the pending consents that expired a day ago or more.
CREATE INDEX IF NOT EXISTS marketplace_pending_consents_expiry
    ON marketplace_pending_consents (expires_at);
