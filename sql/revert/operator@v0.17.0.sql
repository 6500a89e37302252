-- Revert cyclone:operator (back to its v0.16.0 body of the function below)
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._reopen(p_run cyclone.cyclone_runs, p_step_ids bigint[], p_additional_attempts integer, p_reason text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_now timestamptz := cyclone.now();
    v_count int;
BEGIN
    IF p_run.state = 'cancelled' THEN
        RAISE EXCEPTION 'run % is cancelled; its steps cannot be retried', p_run.id USING ERRCODE = '55000';
    END IF;
    WITH reopened AS (
        UPDATE ONLY cyclone_steps
           SET state = 'pending', max_attempts = greatest(max_attempts, attempt + p_additional_attempts),
               reclaims = 0, rerun_attempt = false, error = NULL, error_kind = NULL, output = NULL,
               finished_at = NULL, contained = false, child_run_id = NULL, wait_expires_at = NULL
         WHERE run_id = p_run.id AND state = 'discarded' AND id = ANY (p_step_ids)
        RETURNING node
    ), audited AS (
        INSERT INTO cyclone_audit (at, run_id, node, action, reason)
        SELECT v_now, p_run.id, r.node, 'retry', p_reason FROM reopened r
        RETURNING 1
    )
    SELECT count(*) INTO v_count FROM audited;
    IF v_count = 0 THEN
        RETURN 0;
    END IF;

    IF p_run.state IN ('failed', 'completed') THEN
        -- An operator retry takes over from a deadline that has already passed.
        UPDATE ONLY cyclone_runs
           SET state = 'running', finished_at = NULL, output = NULL,
               deadline_at = CASE WHEN deadline_at <= v_now THEN NULL ELSE deadline_at END
         WHERE id = p_run.id;
    END IF;

    -- Steps cancelled by the failure (or by a contained branch) come back, in
    -- dependency order, unless a dependency is still discarded or cancelled.
    LOOP
        UPDATE ONLY cyclone_steps s
           SET state = 'pending', error = NULL, error_kind = NULL, finished_at = NULL,
               child_run_id = NULL, wait_expires_at = NULL
         WHERE s.run_id = p_run.id AND s.state = 'cancelled'
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps d
                            WHERE d.run_id = p_run.id AND d.node = ANY (s.deps)
                              AND d.state IN ('discarded', 'cancelled'));
        EXIT WHEN NOT FOUND;
    END LOOP;

    PERFORM cyclone._advance(p_run.id);
    RETURN v_count;
END
$function$;

COMMIT;
