-- marketplace-orders' order feeds (OrderFeed over PgFeedStore), one row per seller account.

-- The feed of one account: its watermark (every change up to it was handed over; NULL before
-- the first poll that reached its end) and its lease: one process feeds an account at a time,
-- until lease_until by the database's clock; each grant increments fence, and a commit is
-- accepted only with the row's current fence (a stale holder's commit is refused).
CREATE TABLE IF NOT EXISTS marketplace_order_feeds (
    account     text        PRIMARY KEY,
    watermark   text        NULL,
    fence       bigint      NOT NULL DEFAULT 0,
    holder      text        NULL,
    lease_until timestamptz NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The changes (orderId, lastModifiedDate) handed over within the overlap window below the
-- watermark, or after it: those a poll reads again are not handed over twice.
CREATE TABLE IF NOT EXISTS marketplace_order_feed_keys (
    account            text NOT NULL REFERENCES marketplace_order_feeds (account) ON DELETE CASCADE,
    order_id           text NOT NULL,
    last_modified_date text NOT NULL,
    PRIMARY KEY (account, order_id, last_modified_date)
);
