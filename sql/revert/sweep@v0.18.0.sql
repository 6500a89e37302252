-- Revert cyclone:sweep to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._sweep_candidates(p_now timestamp with time zone, p_limit integer)
 RETURNS TABLE(id bigint, run_id uuid, lease_generation bigint)
 LANGUAGE sql
 STABLE
AS $$
    SELECT s.id, s.run_id, s.lease_generation
      FROM ONLY cyclone.cyclone_steps s
     WHERE s.state = 'running' AND (s.lease_expiry < p_now OR s.started_at + s.timeout < p_now)
     ORDER BY s.id
     LIMIT p_limit
$$;
COMMENT ON FUNCTION cyclone._sweep_candidates(timestamp with time zone,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.sweep(p_max_reclaims integer DEFAULT 0, p_limit integer DEFAULT 100)
 RETURNS TABLE(step_id bigint, run_id uuid, node text, action text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := cyclone.now();
    v_candidate record;
    v_step cyclone.cyclone_steps;
BEGIN
    PERFORM cyclone._require('sweep', p_max_reclaims >= 0, 'p_max_reclaims must be 0 (unbounded) or positive');
    PERFORM cyclone._require('sweep', p_limit > 0, 'p_limit must be positive');
    FOR v_candidate IN
        SELECT c.id, c.run_id, c.lease_generation
          FROM cyclone._sweep_candidates(v_now, p_limit) c
         ORDER BY cyclone._root_run(c.run_id), c.run_id, c.id
    LOOP
        PERFORM cyclone._lock_run(v_candidate.run_id);
        SELECT s.* INTO v_step FROM ONLY cyclone_steps s
         WHERE s.id = v_candidate.id AND s.state = 'running'
           AND s.lease_generation = v_candidate.lease_generation
           FOR UPDATE;
        CONTINUE WHEN NOT FOUND;

        IF v_step.started_at + v_step.timeout < v_now THEN
            step_id := v_step.id; run_id := v_step.run_id; node := v_step.node;
            action := CASE cyclone._fail_step(v_step.id, format('step timed out after %s', v_step.timeout),
                                              'timeout', NULL)
                      WHEN 'available' THEN 'retried' ELSE 'discarded' END;
            RETURN NEXT;
        ELSIF v_step.lease_expiry < v_now THEN
            step_id := v_step.id; run_id := v_step.run_id; node := v_step.node;
            IF p_max_reclaims > 0 AND v_step.reclaims >= p_max_reclaims THEN
                PERFORM cyclone._discard_step(v_step.id,
                    format('lease expired again after %s reclaims (max reclaims %s)', v_step.reclaims, p_max_reclaims),
                    'reclaim_limit');
                action := 'discarded';
            ELSE
                UPDATE ONLY cyclone_steps
                   SET state = 'available', lease_owner = NULL, lease_expiry = NULL,
                       reclaims = reclaims + 1, rerun_attempt = true
                 WHERE id = v_step.id;
                PERFORM pg_notify('cyclone_wakeup', '');
                action := 'reclaimed';
            END IF;
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION cyclone.sweep(integer,integer) IS 'Recover running steps: timeouts (retried/discarded) and expired leases (reclaimed, or discarded as reclaim_limit once p_max_reclaims > 0 reclaims are spent). At most p_limit steps a call.';

COMMIT;
