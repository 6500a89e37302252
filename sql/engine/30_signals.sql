-- @@ engine file of change signals; header of signals@v0.15.0.sql:
-- Deploy cyclone:signals
-- requires: advance runs checks clock
-- signal(): completes the waiting wait node(s) for a signal and advances the run,
-- or keeps a signal that came before its node was reached (consumed, oldest
-- first, when the node is reached: see _advance). Lock order: the run, then steps.
-- @@ plan notes of every version of this change:
-- @@ [signals@v0.15.0.sql] signal: complete a waiting node, or keep an early signal.
-- @@ [signals.sql] signal reads and writes the live tables only (ONLY): finished runs are in history.sql's day tables; an archived run is terminal (false).

-- @@ last defined in signals.sql (a dump); prose below from signals@v0.15.0.sql; redefined since in: signals.sql
CREATE OR REPLACE FUNCTION cyclone.signal(p_run_id uuid, p_name text, p_payload jsonb DEFAULT NULL::jsonb)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
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
REVOKE ALL ON FUNCTION cyclone.signal(uuid,text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.signal(uuid,text,jsonb) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.signal(uuid,text,jsonb) TO cyclone_admin;
