-- Deploy cyclone:limits
-- requires: limits@v0.13.0 tables checks clock wakeups
-- Reworked after v0.13.0 (limits@v0.12.0.sql and limits@v0.13.0.sql have the
-- rest of the change, which stays): a lowered rate no longer forgets the claim
-- times still in its window. It deleted all but the latest rate tokens, so a
-- rate lowered and raised again within one period let claims in that the
-- window had already had (three claims at rate 3, lowered to 1 and raised to
-- 3: two more at once, five in the hour). Now the tokens in the window stay
-- and each bucket owes its surplus above the new rate (rate_debt): a claim
-- pays it with the tokens that leave the window before it may use one, and a
-- raise forgives as much. Invariant: a bucket holds at most rate + rate_debt
-- tokens, so the claims in any window are at most the rate in force (or, for
-- a window that began before a lowering, the claims it already had).
BEGIN;

ALTER TABLE cyclone.cyclone_buckets
    ADD COLUMN rate_debt int NOT NULL DEFAULT 0 CONSTRAINT bucket_rate_debt_not_negative CHECK (rate_debt >= 0);
COMMENT ON COLUMN cyclone.cyclone_buckets.rate_debt IS
    'Rate tokens above a lowered rate, kept while their claims are in the window: a claim deletes this many '
    'as they leave it instead of using them.';

CREATE OR REPLACE FUNCTION cyclone.define_limit(
    p_name text,
    p_concurrency int DEFAULT NULL,
    p_rate int DEFAULT NULL,
    p_period interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_old cyclone_limits;
    v_now timestamptz := cyclone.now();
BEGIN
    PERFORM cyclone._require_given('define_limit', p_name IS NOT NULL, 'p_name is required');
    PERFORM cyclone._require('define_limit', cyclone._name_problem(p_name) IS NULL,
        format('the limit name %s %s', cyclone._shown(p_name), cyclone._name_problem(p_name)));
    PERFORM cyclone._require('define_limit', p_concurrency IS NOT NULL OR p_rate IS NOT NULL OR p_period IS NOT NULL,
        'give p_concurrency, or p_rate with p_period, or both');
    PERFORM cyclone._require('define_limit', (p_rate IS NULL) = (p_period IS NULL),
        'p_rate and p_period come together');
    PERFORM cyclone._require('define_limit', coalesce(p_concurrency > 0, true),
        format('p_concurrency must be positive, got %s', p_concurrency));
    PERFORM cyclone._require('define_limit', coalesce(p_rate > 0, true), format('p_rate must be positive, got %s', p_rate));
    PERFORM cyclone._require('define_limit', coalesce(p_period > interval '0', true),
        format('p_period must be positive, got %s', p_period));
    SELECT l.* INTO v_old FROM cyclone_limits l WHERE l.name = p_name FOR UPDATE;
    -- A lowered (or removed) bound, with no claim or release in flight (the
    -- table locks wait for them and hold off the next ones until this
    -- commits): the free slots go, and each bucket owes its held slots above
    -- the new concurrency; claims add slots again up to it. A lowered rate
    -- keeps the claim times still in the window (they count against the new
    -- rate, and against a rate raised again within the period), drops the
    -- tokens that left it as far as it can, and owes the rest above the new
    -- rate: a claim pays that debt with tokens as they leave the window
    -- instead of using them (claim.sql, _admit). A removed rate forgets them.
    IF coalesce(p_concurrency, 0) < v_old.concurrency OR coalesce(p_rate, 0) < v_old.rate THEN
        LOCK TABLE cyclone_free_slots, cyclone_bucket_claims IN EXCLUSIVE MODE;
        IF coalesce(p_concurrency, 0) < v_old.concurrency THEN
            DELETE FROM cyclone_free_slots f
             USING cyclone_buckets k
             WHERE f.bucket_id = k.id AND k.limit_name = p_name;
            UPDATE cyclone_buckets k
               SET debt = greatest((SELECT count(*) FROM cyclone_slots x WHERE x.bucket_id = k.id)::int
                                   - coalesce(p_concurrency, 0), 0)
             WHERE k.limit_name = p_name;
        END IF;
        IF p_rate IS NULL THEN
            DELETE FROM cyclone_bucket_claims c USING cyclone_buckets k
             WHERE c.bucket_id = k.id AND k.limit_name = p_name;
            UPDATE cyclone_buckets k SET rate_debt = 0 WHERE k.limit_name = p_name AND k.rate_debt > 0;
        ELSIF p_rate < v_old.rate THEN
            -- Tokens beyond the new rate (counting the debt already owed),
            -- oldest first; those out of the window go now.
            WITH surplus AS (
                SELECT x.id, x.bucket_id, x.at <= v_now - p_period AS free
                  FROM (SELECT c.id, c.bucket_id, c.at,
                               row_number() OVER (PARTITION BY c.bucket_id ORDER BY c.at, c.id) AS n,
                               count(*) OVER (PARTITION BY c.bucket_id) AS tokens
                          FROM cyclone_bucket_claims c JOIN cyclone_buckets k ON k.id = c.bucket_id
                         WHERE k.limit_name = p_name) x
                 WHERE x.n <= x.tokens - p_rate
            ), gone AS (
                DELETE FROM cyclone_bucket_claims c USING surplus s WHERE c.id = s.id AND s.free
            )
            UPDATE cyclone_buckets k SET rate_debt = d.owed
              FROM (SELECT s.bucket_id, count(*) FILTER (WHERE NOT s.free)::int AS owed
                      FROM surplus s GROUP BY s.bucket_id) d
             WHERE k.id = d.bucket_id AND k.rate_debt <> d.owed;
        END IF;
    END IF;
    -- A raised one: the debt shrinks by as much (no table lock: a claim adds
    -- the slots and tokens it needs).
    IF p_concurrency > coalesce(v_old.concurrency, 0) THEN
        UPDATE cyclone_buckets k SET debt = greatest(k.debt - (p_concurrency - coalesce(v_old.concurrency, 0)), 0)
         WHERE k.limit_name = p_name AND k.debt > 0;
    END IF;
    IF p_rate > v_old.rate THEN
        UPDATE cyclone_buckets k SET rate_debt = greatest(k.rate_debt - (p_rate - v_old.rate), 0)
         WHERE k.limit_name = p_name AND k.rate_debt > 0;
    END IF;
    INSERT INTO cyclone_limits AS l (name, concurrency, rate, period, updated_at)
    VALUES (p_name, p_concurrency, p_rate, p_period, cyclone.now())
    ON CONFLICT (name) DO UPDATE
       SET concurrency = excluded.concurrency, rate = excluded.rate, period = excluded.period,
           updated_at = excluded.updated_at;
END
$$;

COMMIT;
