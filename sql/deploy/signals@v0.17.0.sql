-- Deploy cyclone:signals
-- requires: signals@v0.15.0 advance runs checks clock history
-- Reworked after v0.15.0 (the functions below, as they were with ONLY added): the
-- engine reads and writes the live tables only (ONLY cyclone_runs, ONLY
-- cyclone_steps); finished runs move to history.sql's day tables, which a query
-- on cyclone_runs or cyclone_steps reads too. The previous files of this change
-- have the rest of it and the comments.
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.signal(p_run_id uuid, p_name text, p_payload jsonb DEFAULT NULL::jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $function$
DECLARE
    v_run cyclone.cyclone_runs;
    v_now timestamptz := cyclone.now();
BEGIN
    PERFORM cyclone._require('signal', p_name <> '', 'p_name must be a non-empty signal name');
    PERFORM cyclone._check_payload('signal: p_payload', p_payload);
    v_run := cyclone._lock_existing_run('signal', p_run_id);
    IF v_run.state NOT IN ('running', 'paused') THEN
        RETURN false;
    END IF;
    UPDATE ONLY cyclone_steps
       SET state = 'completed', output = p_payload, finished_at = v_now
     WHERE run_id = p_run_id AND kind = 'wait' AND signal = p_name AND state = 'waiting';
    IF FOUND THEN
        PERFORM cyclone._advance(p_run_id);
        RETURN true;
    END IF;
    IF EXISTS (SELECT 1 FROM ONLY cyclone_steps s
                WHERE s.run_id = p_run_id AND s.kind = 'wait' AND s.signal = p_name AND s.state = 'pending') THEN
        INSERT INTO cyclone_signals (run_id, name, payload, received_at) VALUES (p_run_id, p_name, p_payload, v_now);
        RETURN true;
    END IF;
    RETURN false;
END
$function$;

COMMIT;
