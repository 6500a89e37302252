-- Deploy cyclone:limits
-- requires: limits@v0.15.0 tables checks clock wakeups history
-- Reworked after v0.15.0 (the functions below, as they were with ONLY added): the
-- engine reads and writes the live tables only (ONLY cyclone_runs, ONLY
-- cyclone_steps); finished runs move to history.sql's day tables, which a query
-- on cyclone_runs or cyclone_steps reads too. The previous files of this change
-- have the rest of it and the comments.
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._release_slots()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'cyclone', 'pg_temp'
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION cyclone.drop_limit(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $function$
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
$function$;

COMMIT;
