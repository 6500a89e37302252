-- Revert cyclone:signals to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.signal(p_run_id uuid, p_name text, p_payload jsonb DEFAULT NULL::jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
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
$$;
COMMENT ON FUNCTION cyclone.signal(uuid,text,jsonb) IS 'Deliver a signal: completes the waiting wait node with p_payload as output, or keeps it for a node still to come. False when the run is over or no wait node for it is still to come.';

COMMIT;
