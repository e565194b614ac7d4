-- Which eBay user each account belongs to, recorded at consent from the Identity API's getUser
-- (`userId`, `username`), so that a Marketplace Account Deletion notification, which names the
-- user, finds the accounts whose tokens must go. NULL until recorded; a new consent (a save of
-- the row) clears them until its own getUser is recorded.
ALTER TABLE marketplace_refresh_tokens ADD COLUMN IF NOT EXISTS ebay_user_id text NULL;
ALTER TABLE marketplace_refresh_tokens ADD COLUMN IF NOT EXISTS ebay_username text NULL;

CREATE INDEX IF NOT EXISTS marketplace_refresh_tokens_ebay_user
    ON marketplace_refresh_tokens (environment, client_id, ebay_user_id)
    WHERE ebay_user_id IS NOT NULL;
