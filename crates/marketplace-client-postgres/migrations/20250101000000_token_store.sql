-- The token store of marketplace-client-postgres: encrypted refresh tokens and the shared
-- access-token cache. Token values are stored only as AES-256-GCM ciphertexts whose
-- associated data is the row's identity.

CREATE TABLE IF NOT EXISTS marketplace_refresh_tokens (
    environment   text        NOT NULL,
    client_id     text        NOT NULL,
    account       text        NOT NULL,
    -- 12-byte nonce followed by the ciphertext and its 16-byte tag.
    ciphertext    bytea       NOT NULL,
    -- Which key encrypted it (a fingerprint, not the key), for rotation.
    key_id        text        NOT NULL,
    -- The granted scopes, space-separated.
    scopes        text        NOT NULL,
    expires_at    timestamptz NULL,
    needs_consent boolean     NOT NULL DEFAULT false,
    -- Incremented on every write (compare and set).
    version       bigint      NOT NULL DEFAULT 1,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (environment, client_id, account)
);

CREATE TABLE IF NOT EXISTS marketplace_token_cache (
    environment      text        NOT NULL,
    client_id        text        NOT NULL,
    kind             text        NOT NULL CHECK (kind IN ('application', 'user')),
    -- The scope set (space-separated, sorted) of an application token, or the account of a
    -- user token.
    subject          text        NOT NULL,
    ciphertext       bytea       NULL,
    key_id           text        NULL,
    token_type       text        NULL,
    expires_at       timestamptz NULL,
    renew_at         timestamptz NULL,
    -- The single-flight lease: who renews the token now, until when, and the fencing counter
    -- incremented on every grant.
    lease_holder     text        NULL,
    lease_until      timestamptz NULL,
    fence            bigint      NOT NULL DEFAULT 0,
    -- Shared back-off after a failed renewal (a sanitized message, never a token).
    retry_not_before timestamptz NULL,
    last_error       text        NULL,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (environment, client_id, kind, subject)
);
