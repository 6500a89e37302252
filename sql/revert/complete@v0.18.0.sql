-- Revert cyclone:complete to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.complete(p_step_id bigint, p_worker text, p_lease_generation bigint, p_output jsonb DEFAULT NULL::jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_run_id uuid;
    v_parent uuid;
BEGIN
    IF p_step_id IS NULL OR p_worker IS NULL OR p_lease_generation IS NULL THEN
        PERFORM cyclone._require_given('complete', p_step_id IS NOT NULL AND p_worker IS NOT NULL
                                 AND p_lease_generation IS NOT NULL, 'p_step_id, p_worker and p_lease_generation are required');
    END IF;
    SELECT r.id, r.parent_run_id INTO v_run_id, v_parent
      FROM ONLY cyclone_steps s JOIN ONLY cyclone_runs r ON r.id = s.run_id WHERE s.id = p_step_id;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF v_parent IS NULL THEN  -- the common case: no ancestors to lock first
        PERFORM 1 FROM ONLY cyclone_runs r WHERE r.id = v_run_id FOR NO KEY UPDATE;
    ELSE
        PERFORM cyclone._lock_run(v_run_id);
    END IF;
    UPDATE ONLY cyclone_steps
       SET state = 'completed', output = p_output, finished_at = cyclone.now(),
           lease_owner = NULL, lease_expiry = NULL, error = NULL, error_kind = NULL
     WHERE id = p_step_id
       AND state = 'running'
       AND lease_owner = p_worker
       AND lease_generation = p_lease_generation;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM cyclone._advance_runs(ARRAY[v_run_id]);
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone.complete(bigint,text,bigint,jsonb) IS 'Complete a leased step and advance its run. False (and no change) when the lease is no longer ours.';

CREATE OR REPLACE FUNCTION cyclone.complete_many(p_worker text, p_step_ids bigint[], p_lease_generations bigint[], p_outputs jsonb[])
 RETURNS TABLE(step_id bigint, accepted boolean)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := cyclone.now();
    v_run_id uuid;
    v_runs uuid[];
    v_done bigint[];
BEGIN
    PERFORM cyclone._require_given('complete_many', p_worker IS NOT NULL AND p_step_ids IS NOT NULL
                             AND p_lease_generations IS NOT NULL AND p_outputs IS NOT NULL,
                             'p_worker and the three arrays are required');
    PERFORM cyclone._require('complete_many',
        cardinality(p_step_ids) = cardinality(p_lease_generations) AND cardinality(p_step_ids) = cardinality(p_outputs)
        AND array_lower(p_step_ids, 1) IS NOT DISTINCT FROM array_lower(p_lease_generations, 1)
        AND array_lower(p_step_ids, 1) IS NOT DISTINCT FROM array_lower(p_outputs, 1),
        'p_step_ids, p_lease_generations and p_outputs must have the same length and bounds');
    PERFORM cyclone._require('complete_many',
        array_position(p_step_ids, NULL) IS NULL AND array_position(p_lease_generations, NULL) IS NULL,
        'step ids and lease generations must not contain NULL');
    PERFORM cyclone._require('complete_many',
        (SELECT count(DISTINCT u) = count(*) FROM unnest(p_step_ids) u), 'a step id is listed twice');

    -- Lock order: the runs by root run, then run id (ancestors first for child runs).
    SELECT array_agg(DISTINCT s.run_id ORDER BY s.run_id) INTO v_runs
      FROM ONLY cyclone_steps s WHERE s.id = ANY (p_step_ids);
    IF EXISTS (SELECT 1 FROM ONLY cyclone_runs r WHERE r.id = ANY (v_runs) AND r.parent_run_id IS NOT NULL) THEN
        FOR v_run_id IN SELECT u FROM unnest(v_runs) u ORDER BY cyclone._root_run(u), u LOOP
            PERFORM cyclone._lock_run(v_run_id);
        END LOOP;
    ELSE
        PERFORM 1 FROM ONLY cyclone_runs r WHERE r.id = ANY (v_runs) ORDER BY r.id FOR NO KEY UPDATE;
    END IF;

    -- Each row finds its own element by array_position (a scan of the id
    -- array, cheap at batch sizes of hundreds) rather than through a join with
    -- unnest(): the generic plan of such a join, from statistics that see few
    -- running steps, re-expanded all three arrays for every row, outputs
    -- included (137 ms for a batch of 370).
    WITH done AS (
        UPDATE ONLY cyclone_steps s
           SET state = 'completed', output = p_outputs[array_position(p_step_ids, s.id)], finished_at = v_now,
               lease_owner = NULL, lease_expiry = NULL, error = NULL, error_kind = NULL
         WHERE s.id = ANY (p_step_ids)
           AND s.state = 'running'
           AND s.lease_owner = p_worker
           AND s.lease_generation = p_lease_generations[array_position(p_step_ids, s.id)]
        RETURNING s.id, s.run_id
    )
    SELECT coalesce(array_agg(d.id), '{}'), array_agg(DISTINCT d.run_id ORDER BY d.run_id)
      INTO v_done, v_runs
      FROM done d;

    IF v_runs IS NOT NULL THEN
        PERFORM cyclone._advance_runs(v_runs);
    END IF;

    RETURN QUERY
    SELECT u.id, u.id = ANY (v_done) FROM unnest(p_step_ids) WITH ORDINALITY AS u(id, ord) ORDER BY u.ord;
END
$$;
COMMENT ON FUNCTION cyclone.complete_many(text,bigint[],bigint[],jsonb[]) IS 'Batch complete: each element is its own compare-and-set with the semantics of complete().';

COMMIT;
