-- When the cached token was obtained by a renewal caused by a refusal (a 401 of the token
-- before it); NULL for an ordinary grant. A token renewed after a refusal and refused again
-- within the back-off is not renewed again by any process of the fleet before the back-off
-- ends: a host that refuses every token would otherwise cost a grant per process.
ALTER TABLE marketplace_token_cache ADD COLUMN IF NOT EXISTS renewed_after_refusal_at timestamptz NULL;
