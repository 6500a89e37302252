-- Revert cyclone:limits to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._bucket_room(p_bucket bigint, p_now timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
 STABLE
AS $$
-- PL/pgSQL, not SQL: claim calls it inside its queries, and a SQL function that
-- cannot be inlined would be planned again on every call.
DECLARE
    v_limit cyclone.cyclone_limits;
    v_room int := 2147483647;
BEGIN
    SELECT l.* INTO v_limit
      FROM cyclone_buckets b JOIN cyclone_limits l ON l.name = b.limit_name
     WHERE b.id = p_bucket;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF v_limit.concurrency IS NOT NULL THEN
        v_room := v_limit.concurrency - (SELECT count(*) FROM (SELECT 1 FROM cyclone_slots s
                                                                 WHERE s.bucket_id = p_bucket
                                                                 LIMIT v_limit.concurrency) x)::int;
    END IF;
    IF v_limit.rate IS NOT NULL AND v_room > 0 THEN
        v_room := least(v_room, v_limit.rate - (SELECT count(*) FROM (SELECT 1 FROM cyclone_bucket_claims c
                                                                        WHERE c.bucket_id = p_bucket
                                                                          AND c.at > p_now - v_limit.period
                                                                        LIMIT v_limit.rate) x)::int);
    END IF;
    RETURN greatest(v_room, 0);
END
$$;
COMMENT ON FUNCTION cyclone._bucket_room(bigint,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._release_slots()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
DECLARE
    v_buckets bigint[];
    v_held_back boolean;
    v_freed int;
    v_bucket bigint;
    v_wake boolean := false;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM old_steps o WHERE o.state = 'running' AND o.buckets <> '{}') THEN
        RETURN NULL;
    END IF;
    WITH released AS (
        -- By index, whatever the planner guesses of the transition tables.
        DELETE FROM cyclone_slots s
         WHERE s.step_id = ANY (ARRAY(SELECT o.id FROM old_steps o JOIN new_steps n ON n.id = o.id
                                       WHERE o.state = 'running' AND n.state <> 'running' AND o.buckets <> '{}'))
        RETURNING s.bucket_id
    )
    SELECT array_agg(r.bucket_id ORDER BY r.bucket_id), bool_or(k.held_back)
      INTO v_buckets, v_held_back
      FROM released r JOIN cyclone_buckets k ON k.id = r.bucket_id;
    IF v_buckets IS NULL THEN
        RETURN NULL;  -- rate-only buckets hold no slot
    END IF;
    -- The debt is read by the statement that frees the slots: one that waited
    -- for define_limit's table lock sees the debt it set.
    INSERT INTO cyclone_free_slots (bucket_id)
    SELECT u.bucket_id FROM unnest(v_buckets) AS u(bucket_id)
     WHERE NOT EXISTS (SELECT 1 FROM cyclone_buckets k WHERE k.id = u.bucket_id AND k.debt > 0);
    GET DIAGNOSTICS v_freed = ROW_COUNT;
    IF v_freed < cardinality(v_buckets) THEN
        -- Rare: a lowered concurrency. Each slot not freed pays one of its
        -- bucket's debt under the bucket row's lock, in id order; a debt
        -- another release paid meanwhile leaves the slot free after all.
        FOREACH v_bucket IN ARRAY ARRAY(SELECT u.bucket_id FROM unnest(v_buckets) AS u(bucket_id)
                                          JOIN cyclone_buckets k ON k.id = u.bucket_id AND k.debt > 0
                                         ORDER BY u.bucket_id) LOOP
            UPDATE cyclone_buckets k SET debt = k.debt - 1 WHERE k.id = v_bucket AND k.debt > 0;
            IF NOT FOUND THEN
                INSERT INTO cyclone_free_slots (bucket_id) VALUES (v_bucket);
            END IF;
        END LOOP;
    END IF;
    IF v_held_back THEN
        -- A claim found a bucket full: wake. The mark is cleared where no
        -- other transaction holds the bucket row (a release never waits for a
        -- claim); one left set costs one more wake-up.
        UPDATE cyclone_buckets k SET held_back = false
         WHERE k.id = ANY (ARRAY(SELECT b.id FROM cyclone_buckets b WHERE b.id = ANY (v_buckets) AND b.held_back
                                  FOR UPDATE SKIP LOCKED));
        v_wake := true;
    END IF;
    IF v_wake THEN
        PERFORM 1 FROM ONLY cyclone_steps s
         WHERE s.state = 'available' AND s.queue_bucket > 0 AND s.scheduled_at <= cyclone.now()
         LIMIT 1;
        IF FOUND THEN
            PERFORM cyclone._wake();
        END IF;
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION cyclone._release_slots() IS NULL;

CREATE OR REPLACE FUNCTION cyclone.define_limit(p_name text, p_concurrency integer DEFAULT NULL::integer, p_rate integer DEFAULT NULL::integer, p_period interval DEFAULT NULL::interval)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
COMMENT ON FUNCTION cyclone.define_limit(text,integer,integer,interval) IS 'Insert or replace a limit (SPEC 12): concurrency per bucket, and/or rate claims per period per bucket. Bad arguments: 22023, nothing written. Applies to the next claim.';

CREATE OR REPLACE FUNCTION cyclone.drop_limit(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
DECLARE
    v_workflow text;
    v_step bigint;
BEGIN
    PERFORM cyclone._require_given('drop_limit', p_name IS NOT NULL, 'p_name is required');
    -- The row lock orders this against define_workflow naming the limit and
    -- against a submit creating one of its buckets.
    PERFORM 1 FROM cyclone_limits l WHERE l.name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    SELECT min(w.name) INTO v_workflow
      FROM cyclone_workflows w
     WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(w.definition -> 'limits', '[]')) l
                    WHERE l ->> 'name' = p_name)
        OR EXISTS (SELECT 1 FROM jsonb_array_elements(w.definition -> 'nodes') n,
                                 jsonb_array_elements(coalesce(n -> 'limits', '[]')) l
                    WHERE l ->> 'name' = p_name);
    IF v_workflow IS NOT NULL THEN
        RAISE EXCEPTION 'drop_limit: limit % is named by workflow %', cyclone._shown(p_name), cyclone._shown(v_workflow)
            USING ERRCODE = '55000';
    END IF;
    SELECT min(s.id) INTO v_step
      FROM ONLY cyclone_steps s
     WHERE s.buckets <> '{}' AND s.finished_at IS NULL
       AND s.buckets && ARRAY(SELECT b.id FROM cyclone_buckets b WHERE b.limit_name = p_name);
    IF v_step IS NOT NULL THEN
        RAISE EXCEPTION 'drop_limit: limit % is taken by step % (not finished)', cyclone._shown(p_name), v_step
            USING ERRCODE = '55000';
    END IF;
    DELETE FROM cyclone_free_slots f USING cyclone_buckets k WHERE f.bucket_id = k.id AND k.limit_name = p_name;
    DELETE FROM cyclone_slots x USING cyclone_buckets k WHERE x.bucket_id = k.id AND k.limit_name = p_name;
    DELETE FROM cyclone_limits l WHERE l.name = p_name;  -- its buckets and rate tokens go with it
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone.drop_limit(text) IS 'Drop a limit. False when there is none; 55000 while a workflow names it or an unfinished step takes it.';

CREATE OR REPLACE TRIGGER cyclone_steps_release_slots AFTER UPDATE ON cyclone.cyclone_steps REFERENCING OLD TABLE AS old_steps NEW TABLE AS new_steps FOR EACH STATEMENT EXECUTE FUNCTION cyclone._release_slots();

COMMIT;
