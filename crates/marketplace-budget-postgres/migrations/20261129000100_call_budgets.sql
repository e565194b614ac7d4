-- marketplace-budget's call budgets shared by a fleet (PgBudgetStore), one row per
-- (scope, API resource): scope is 'application' (getRateLimits) or 'user/' followed by the
-- name the application gives the user (getUserRateLimits).
--
-- Times are milliseconds since the Unix epoch, by the clocks of the processes (as
-- CallBudget's leases count them). remaining is what the fleet has not reserved yet in the
-- window ending at reset_ms; a row is rolled over (remaining back to call_limit, reset_ms on
-- by whole length_ms) by the first reservation past its reset. exhausted_until_ms: eBay
-- answered 429, no call until then. known: the quota was read from getRateLimits (a row made
-- by a 429 alone counts nothing once the 429 is over).
CREATE TABLE IF NOT EXISTS marketplace_call_budgets (
    scope              text        NOT NULL,
    resource           text        NOT NULL,
    call_limit         bigint      NOT NULL,
    remaining          bigint      NOT NULL,
    reset_ms           bigint      NOT NULL,
    length_ms          bigint      NOT NULL DEFAULT 0,
    exhausted_until_ms bigint      NULL,
    known              boolean     NOT NULL,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, resource),
    CHECK (remaining >= 0 AND call_limit >= 0 AND length_ms >= 0)
);
