-- Revert cyclone:limits (back to its v0.12.0 deploy: the release trigger
-- notifies whenever it frees room for a held-back step)
BEGIN;

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

COMMIT;
