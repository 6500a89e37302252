-- Deploy cyclone:limits
-- requires: limits@v0.18.0 tables checks clock wakeups history
-- A complete copy of sql/engine/35_limits.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/35_limits.sql: change `limits` — flow control (SPEC 12): defining limits, the room of a
-- bucket, and the slots a step gives back when it stops running.
-- The model (tables in 11_limits_tables.sql): a limit (cyclone_limits) allows each of its buckets
-- (cyclone_buckets: one per key value, '' without a key, fixed on a step at submit in cyclone_steps.buckets
-- by 21_runs.sql) at most `concurrency` running steps and at most `rate` claims in any `period`. A
-- concurrency slot is a row of cyclone_free_slots while no step holds it and of cyclone_slots while one
-- does; claims add slots up to the concurrency. A rate token is a row of cyclone_bucket_claims holding the
-- time of its latest claim; one whose time has left the period is free. A lowered bound leaves a debt on
-- each bucket: `debt` (held slots to drop, not free, when given back) and `rate_debt` (tokens still in the
-- window above the new rate, deleted as they leave it). Claims enforce all this (24_claim.sql, _admit).
-- Owns: define_limit, drop_limit, _bucket_room, _release_slots and its trigger cyclone_steps_release_slots.
-- Requires: 11_limits_tables.sql, 10_runs_tables.sql (steps), 02_clock.sql (now), 03_checks.sql (_require,
-- _require_given, _name_problem, _shown), 40_wakeups.sql (_wake). Called by: a worker at start, registering
-- its app's limits, the CLI and admins (define_limit, drop_limit: cyclone_worker, cyclone_admin); claim, tick
-- and metrics (_bucket_room); every UPDATE of cyclone_steps (the trigger).
-- Lock order: the engine's (21_runs.sql): runs, then steps, then free slots and rate tokens, then bucket
-- rows by id. The release trigger runs under its statement's step locks, deletes its own slot rows, inserts
-- free ones, and locks a bucket row only to pay a debt (in id order) or to clear held_back (SKIP LOCKED), so
-- no release waits for a claim. define_limit and drop_limit lock their limit row first; define_limit lowering
-- a bound then locks cyclone_free_slots and cyclone_bucket_claims in EXCLUSIVE mode (it waits for the claims
-- and releases in flight and holds off the next ones until it commits).
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=limits NOTE="..."` (docs/architecture.md, Changing the engine).

-- define_limit: insert or replace limit p_name (SPEC 12). Every value is given anew: p_concurrency, and/or
-- p_rate claims per p_period. Guards (22023, nothing written; 22004 for a NULL name): a valid name, at least
-- one bound, p_rate and p_period together, positive values, a period of at most 366 days (a year however it
-- is spelled: '1 year' counts as 360 days). A rate per year is the longest quota an API sets; a longer
-- window only keeps tokens that could never matter, and one of '200000 years' made now - period a raw
-- 22008 in every claim of every worker (and in metrics and cyclone_v_limits). It locks the limit row first,
-- then, for a bound that changes:
-- - lowered (or removed) concurrency: the two slot tables locked EXCLUSIVE (no claim or release in flight;
--   the only time a limit change waits for claims), the limit's free slots deleted, and each bucket owes its
--   held slots above the new concurrency (debt): those are dropped when given back, so no step of the
--   bucket is claimed until its running count is below the new bound. Claims add slots again up to it.
-- - lowered rate: the tokens still in the window stay, since they count against the new rate and against a
--   rate raised again within the period; the surplus above the new rate, oldest first, is deleted if it has
--   left the window and otherwise owed (rate_debt), which a claim pays with tokens as they leave the window
--   instead of using them (_admit). Deleting all but the latest tokens, as it once did, forgot claims: three
--   claims at rate 3, lowered to 1 and raised to 3 again, let two more in at once, five in the hour.
--   A removed rate forgets its tokens and debt: a rate added later starts from an empty window.
-- - raised: the debt shrinks by as much (no table lock: a claim adds the slots and tokens it needs).
-- Unchanged values, as a worker's start usually gives, take no table lock. Applies to the next claim.
CREATE OR REPLACE FUNCTION cyclone.define_limit(
    p_name text,
    p_concurrency integer DEFAULT NULL::integer,
    p_rate integer DEFAULT NULL::integer,
    p_period interval DEFAULT NULL::interval)
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
    PERFORM cyclone._require('define_limit', coalesce(p_period <= interval '366 days', true),
        format('p_period must be at most 366 days, got %s', p_period));
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
COMMENT ON FUNCTION cyclone.define_limit(text,integer,integer,interval) IS 'Insert or replace a limit (SPEC 12): concurrency per bucket, and/or rate claims per period (at most 366 days) per bucket. Bad arguments: 22023, nothing written. Applies to the next claim.';
REVOKE ALL ON FUNCTION cyclone.define_limit(text,integer,integer,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.define_limit(text,integer,integer,interval) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.define_limit(text,integer,integer,interval) TO cyclone_admin;

-- drop_limit: delete limit p_name. False when there is none. Guards: p_name given (22004). It locks the
-- limit row first, which orders it against define_workflow naming the limit (FOR KEY SHARE) and a submit
-- creating one of its buckets. 55000 while a workflow names it (for all its nodes or for one) or an
-- unfinished step takes one of its buckets (a live step: ONLY, through the index cyclone_steps_limited_live).
-- The slot tables have no foreign key to the buckets (its check would lock the bucket row for every slot
-- taken or given back), so it deletes the limit's free and held slots itself; its buckets and rate tokens go
-- with the limit row (ON DELETE CASCADE).
CREATE OR REPLACE FUNCTION cyclone.drop_limit(p_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
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
REVOKE ALL ON FUNCTION cyclone.drop_limit(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.drop_limit(text) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.drop_limit(text) TO cyclone_admin;

-- _bucket_room: how many more claims bucket p_bucket takes now: the least of its concurrency minus its held
-- slots and its rate minus its tokens still in the window (a NULL bound: 2147483647); 0 when full, or when a
-- lowered bound left it over (a debt); NULL for a bucket of no limit (row 0). A period stored before
-- define_limit bounded it counts as 366 days, as in claim (_admit): a larger one made now - period a raw
-- 22008 in claim, tick and metrics. Each count stops at the bound
-- (LIMIT), so a full bucket costs at most that many index entries. An estimate: it reads without locks
-- while other claims take slots and tokens. claim uses it to skip full buckets without reading their queues
-- (_limited_queues, _limited_candidates) and _admit then decides on the rows it locks; tick asks through
-- _claimable_exists, metrics() for its saturated-bucket gauge.
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
                                                                          AND c.at > p_now - least(v_limit.period, interval '366 days')
                                                                        LIMIT v_limit.rate) x)::int);
    END IF;
    RETURN greatest(v_room, 0);
END
$$;
REVOKE ALL ON FUNCTION cyclone._bucket_room(bigint,timestamp with time zone) FROM PUBLIC;

-- _release_slots, the function of the trigger below: a running step that leaves running (complete,
-- complete_many, fail, sweep, cancel, a deadline, a run failing fast: any UPDATE of its state, whichever
-- function makes it) gives its slots back in the same statement. Each slot is free again, or, while its
-- bucket owes a debt after a lowered concurrency, pays one of it and is dropped (under the bucket row's
-- lock, in id order; the debt is read by the statement that frees the slots, so a release that waited for
-- define_limit's table lock sees the debt it set). Rate-only buckets hold no slot. When a claim had found one
-- of the buckets full with steps queued (held_back), the mark is cleared and, if a limited step is due,
-- _wake() notifies waiting workers (SPEC 5): a held-back step may run now. A slot of a bucket with room
-- frees nobody and sends nothing (a NOTIFY serialises commits).
-- A statement trigger over the statement's old and new rows, not a row trigger: complete_many gives back a
-- batch's slots in three statements, where a trigger per step cost more than the completion itself. Every
-- UPDATE of steps (a claim, a renew) fires it; one pass over its old rows ends it when none was a running
-- limited step. search_path is pinned: a trigger runs with the search_path of the statement that fires it,
-- and a direct UPDATE of cyclone_steps (an admin's repair, a test planting a state) failed without it.
CREATE OR REPLACE FUNCTION cyclone._release_slots()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = cyclone, pg_temp
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
REVOKE ALL ON FUNCTION cyclone._release_slots() FROM PUBLIC;
CREATE OR REPLACE TRIGGER cyclone_steps_release_slots
    AFTER UPDATE ON cyclone.cyclone_steps
    REFERENCING OLD TABLE AS old_steps NEW TABLE AS new_steps
    FOR EACH STATEMENT
    EXECUTE FUNCTION cyclone._release_slots();

COMMIT;
