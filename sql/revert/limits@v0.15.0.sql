-- Revert cyclone:limits (back to its v0.13.0 state: define_limit as v0.12.0
-- deployed it, which deletes all but the latest tokens of a lowered rate)
BEGIN;

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
    -- A lowered (or removed) bound: the free slots and the surplus tokens go,
    -- with no claim or release in flight (the table locks wait for them and
    -- hold off the next ones until this commits), and each bucket owes its
    -- held slots above the new concurrency. Claims add slots again up to it.
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
        IF coalesce(p_rate, 0) < v_old.rate THEN
            DELETE FROM cyclone_bucket_claims c
             USING (SELECT x.id, row_number() OVER (PARTITION BY x.bucket_id ORDER BY x.at DESC) AS n
                      FROM cyclone_bucket_claims x JOIN cyclone_buckets k ON k.id = x.bucket_id
                     WHERE k.limit_name = p_name) r
             WHERE c.id = r.id AND r.n > coalesce(p_rate, 0);
        END IF;
    END IF;
    -- A raised one: the debt shrinks by as much (no table lock: a claim adds
    -- the slots it needs).
    IF p_concurrency > coalesce(v_old.concurrency, 0) THEN
        UPDATE cyclone_buckets k SET debt = greatest(k.debt - (p_concurrency - coalesce(v_old.concurrency, 0)), 0)
         WHERE k.limit_name = p_name AND k.debt > 0;
    END IF;
    INSERT INTO cyclone_limits AS l (name, concurrency, rate, period, updated_at)
    VALUES (p_name, p_concurrency, p_rate, p_period, cyclone.now())
    ON CONFLICT (name) DO UPDATE
       SET concurrency = excluded.concurrency, rate = excluded.rate, period = excluded.period,
           updated_at = excluded.updated_at;
END
$$;

ALTER TABLE cyclone.cyclone_buckets DROP COLUMN rate_debt;

COMMIT;
