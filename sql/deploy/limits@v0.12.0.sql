-- Deploy cyclone:limits
-- requires: limits@v0.7.0 tables checks clock
-- Reworked after v0.7.0: no claim waits for another claim's bucket lock.
-- Before, every claim of a limited step locked its bucket rows FOR UPDATE until
-- it committed, so all claims of one bucket ran one at a time, even under a
-- limit that never binds (a drain at 0.15x of the unlimited one). Now a
-- bucket's room is rows that claims take with FOR UPDATE SKIP LOCKED, as they
-- take steps:
-- * a concurrency slot is a row of cyclone_free_slots while no step holds it
--   and of cyclone_slots (as before) while one does. A claim deletes free rows
--   and inserts its steps' slots; a step leaving running inserts a free row
--   again (the trigger below). A bucket starts with no rows: a claim that finds
--   too few free ones locks the bucket row and counts held and free slots to
--   add up to the concurrency. So held + free never exceeds it, and nothing
--   but adding slots serialises claims. A release inserts and a claim deletes:
--   neither ever waits for the other (a claim that read a free row another
--   claim deleted skips it; updating a row in place would leave such a claim
--   holding a lock on it that a release then waits for).
-- * a rate token is a row of cyclone_bucket_claims (as before: bucket, the time
--   of a claim), now kept, at most rate of them per bucket: a claim takes a row
--   whose time has left the window and sets it to now, or adds one while the
--   bucket has fewer than rate. In any window at most rate claims: exactly
--   the sliding window of SPEC 12.
-- define_limit lowering a bound removes the free slots and surplus tokens
-- under a table lock (the only time a limit change waits for claims). When the
-- running count is then above the new concurrency, the bucket's debt says how
-- many of its held slots are dropped when released instead of freed.
-- Lock order: steps, then free slots and tokens (SKIP LOCKED: never waited
-- on, but by define_limit's table lock), then bucket rows by id (a claim adding
-- slots or tokens; a release only to pay debt after define_limit lowered a
-- concurrency); define_limit and drop_limit take their limit row first.
BEGIN;

ALTER TABLE cyclone.cyclone_buckets
    ADD COLUMN debt int NOT NULL DEFAULT 0 CONSTRAINT bucket_debt_not_negative CHECK (debt >= 0),
    ADD COLUMN held_back boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN cyclone.cyclone_buckets.debt IS
    'Held slots to drop, not free, when released: the running count above a lowered concurrency.';
COMMENT ON COLUMN cyclone.cyclone_buckets.held_back IS
    'A claim found the bucket full with steps queued: the next slot given back wakes idle workers.';

-- No foreign key on the slot tables: its check locks the bucket row (FOR KEY
-- SHARE) for every slot taken or given back, which cost more than the rest of
-- the release. drop_limit deletes a limit's slots itself; check_invariants
-- reports a slot of no running step.
ALTER TABLE cyclone.cyclone_slots DROP CONSTRAINT cyclone_slots_bucket_id_fkey;
CREATE TABLE cyclone.cyclone_free_slots (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bucket_id bigint NOT NULL
);
CREATE INDEX cyclone_free_slots_bucket ON cyclone.cyclone_free_slots (bucket_id, id);
COMMENT ON TABLE cyclone.cyclone_free_slots IS
    'The concurrency slots of a bucket no step holds: one row each; a claim takes one into cyclone_slots.';

-- A token per row, at most rate per bucket; the rows beyond a bucket's rate
-- (left behind by the v0.7.0 claim, which deleted times only once they left the
-- window) go, the latest stay.
ALTER TABLE cyclone.cyclone_bucket_claims ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
DELETE FROM cyclone.cyclone_bucket_claims c
 USING (SELECT x.id, row_number() OVER (PARTITION BY x.bucket_id ORDER BY x.at DESC) AS n, l.rate
          FROM cyclone.cyclone_bucket_claims x
          JOIN cyclone.cyclone_buckets k ON k.id = x.bucket_id
          JOIN cyclone.cyclone_limits l ON l.name = k.limit_name) r
 WHERE c.id = r.id AND (r.rate IS NULL OR r.n > r.rate);
COMMENT ON TABLE cyclone.cyclone_bucket_claims IS
    'Rate tokens: at most rate rows per bucket, each the time of its latest claim; one whose time has left '
    'the period is free.';

-- A running step that leaves running (complete, complete_many, fail, sweep,
-- cancel, deadline, a run failing fast: any UPDATE of its state) gives its
-- slots back in the same statement: each is free again, or pays one of its
-- bucket's debt (dropped). When a claim found one of its buckets full with
-- steps queued (held_back) and a limited step is due, a held-back step may now
-- run: wake idle workers (SPEC 5). A slot of a bucket with room frees nobody,
-- and sends nothing (a NOTIFY serialises commits).
-- A statement trigger over the statement's old and new rows, not a row
-- trigger: complete_many gives back a batch's slots in three statements,
-- where a trigger per step cost more than the completion itself. Every UPDATE
-- of steps (a claim, a renew) fires it; one pass over its old rows ends it when
-- none was a running limited step.
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
        PERFORM 1 FROM cyclone_steps s
         WHERE s.state = 'available' AND s.queue_bucket > 0 AND s.scheduled_at <= cyclone.now()
         LIMIT 1;
        IF FOUND THEN
            PERFORM pg_notify('cyclone_wakeup', '');
        END IF;
    END IF;
    RETURN NULL;
END
$$;
DROP TRIGGER cyclone_steps_release_slots ON cyclone.cyclone_steps;
CREATE TRIGGER cyclone_steps_release_slots
    AFTER UPDATE ON cyclone.cyclone_steps
    REFERENCING OLD TABLE AS old_steps NEW TABLE AS new_steps
    FOR EACH STATEMENT
    EXECUTE FUNCTION cyclone._release_slots();

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
      FROM cyclone_steps s
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

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.define_limit(text, int, int, interval) TO cyclone_worker, cyclone_admin;
GRANT SELECT ON cyclone.cyclone_free_slots TO cyclone_admin;

COMMIT;
