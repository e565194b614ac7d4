-- A user token asked for a subset of the consented scopes is keyed by that scope set in a
-- column of its own. It was keyed by the text "{account} [{scopes}]" in `subject`, which an
-- account named that way shared (and was handed the other account's token).

-- The scope set (space-separated, sorted) a user token was asked for when narrower than the
-- consent's; '' for the consent's own scopes, and for application tokens (whose scope set is
-- their subject).
ALTER TABLE marketplace_token_cache ADD COLUMN IF NOT EXISTS scopes text NOT NULL DEFAULT '';

-- Cached user tokens keyed the old way cannot be told apart: dropped. Each account's next call
-- refreshes once; the refresh tokens are not touched.
DELETE FROM marketplace_token_cache WHERE kind = 'user';

ALTER TABLE marketplace_token_cache DROP CONSTRAINT IF EXISTS marketplace_token_cache_pkey;
ALTER TABLE marketplace_token_cache
    ADD CONSTRAINT marketplace_token_cache_pkey
    PRIMARY KEY (environment, client_id, kind, subject, scopes);
