-- eBay's request signing keys (createSigningKey, Key Management API), one application's keys
-- per (environment, client_id): the newest is the one that signs, an older one is kept until
-- it expires. The private key, which eBay shows once and never again, is stored only as
-- AES-256-GCM ciphertext (nonce || ciphertext || tag) under the token key whose fingerprint
-- is in key_id; the associated data is the row's identity (table, environment, client_id,
-- signing_key_id). A fleet creates one key at a time: the creator holds a transaction-level
-- advisory lock on (environment, client_id) while it calls createSigningKey and inserts.
CREATE TABLE IF NOT EXISTS marketplace_signing_keys (
    environment         text        NOT NULL,
    client_id           text        NOT NULL,
    signing_key_id      text        NOT NULL,
    cipher              text        NOT NULL,
    jwe                 text        NOT NULL,
    created_at          timestamptz NULL,
    expires_at          timestamptz NULL,
    private_key         bytea       NOT NULL,
    key_id              text        NOT NULL,
    saved_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (environment, client_id, signing_key_id)
);
