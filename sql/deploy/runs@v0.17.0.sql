-- Deploy cyclone:runs
-- requires: runs@v0.16.0 tables clock limits traces step_workflow shards history live_runs
-- Reworked after v0.16.0 (the function below): a run that ends is queued for
-- archive() in cyclone_archive_queue (live_runs.sql), by the statement's
-- transaction. runs@v0.14.0.sql has the rest of the change and the lock order.
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._end_run(p_run_id uuid, p_state text, p_error text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_finished_at timestamptz;
BEGIN
    UPDATE ONLY cyclone_runs
       SET state = p_state, finished_at = cyclone.now(), paused_at = NULL
     WHERE id = p_run_id AND state IN ('running', 'paused')
    RETURNING finished_at INTO v_finished_at;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO cyclone_archive_queue (run_id, finished_at) VALUES (p_run_id, v_finished_at);
    PERFORM cyclone._cancel_steps(p_run_id, NULL, p_error);
    RETURN true;
END
$function$;

COMMIT;
