-- One row per (scope, API resource, window length): getRateLimits may answer several rates for
-- one resource (a daily one and a shorter one), and a reservation takes from each row of the
-- resource. A window's roll is decided by the database's clock (clock_timestamp()), not by
-- the clock of the process that reserves; a row of length_ms 0 (a rate without timeWindow)
-- never rolls over by itself. A 429 (exhausted_until_ms) is written on every row of the
-- resource.
ALTER TABLE marketplace_call_budgets DROP CONSTRAINT IF EXISTS marketplace_call_budgets_pkey;
ALTER TABLE marketplace_call_budgets ADD PRIMARY KEY (scope, resource, length_ms);
