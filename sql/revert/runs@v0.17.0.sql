-- Revert cyclone:runs (back to its v0.16.0 body of the function below)
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._end_run(p_run_id uuid, p_state text, p_error text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    UPDATE ONLY cyclone_runs
       SET state = p_state, finished_at = cyclone.now(), paused_at = NULL
     WHERE id = p_run_id AND state IN ('running', 'paused');
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM cyclone._cancel_steps(p_run_id, NULL, p_error);
    RETURN true;
END
$function$;

COMMIT;
