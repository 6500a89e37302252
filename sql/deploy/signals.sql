-- Deploy cyclone:signals
-- requires: signals@v0.22.0 advance runs checks clock history coordination_tables
-- A complete copy of sql/engine/30_signals.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/30_signals.sql: change `signals` — delivering a signal to a run's wait nodes (SPEC section 9).
-- Owns: signal. A signal completes the wait node(s) waiting for it; one that comes before its node is
-- reached is kept in cyclone_signals and consumed, oldest first, when the node is reached (_advance,
-- 22_advance.sql).
-- Requires: 10_runs_tables.sql (cyclone_runs, cyclone_steps, cyclone_signals), 21_runs.sql
-- (_lock_existing_run), 22_advance.sql (_advance), 03_checks.sql (_require, _check_payload), 02_clock.sql.
-- Called by: cyclone_client and cyclone_admin (the CLI's signal; on a router, the run's shard).
-- Lock order: the run row, after its ancestors (_lock_existing_run), then its steps. Live tables only
-- (ONLY): an archived run is finished, and a signal to it answers false.
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=signals NOTE="..."` (docs/architecture.md, Changing the engine).

-- signal: delivers p_name with p_payload to a running or paused run. Every wait node of that signal that is
-- waiting completes with p_payload as its output, and the DAG advances (true). Else, when a wait node of
-- that signal is still pending (not reached yet), the signal is kept for it (true). Otherwise false: the
-- run is over, or no wait node of that signal is still to come (a signal no node will consume is not
-- kept). Guards: p_name a name a wait node could have (_name_problem: 1 to 200 characters, no control
-- characters; 22023, NULL: 22004), p_payload within the limits of any JSON the engine
-- stores (22023 from _check_payload, 03_checks.sql: at most 1 MiB, nested at most 100 levels: the payload
-- becomes the wait node's output, which every reader of the run decodes), P0002 for an unknown run. NULL
-- is no payload. A signal delivered or kept is audited (action signal, node its name, detail its payload's
-- size in bytes; cyclone_audit, 10_runs_tables.sql); one answered false changed nothing and is not.
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
    IF cyclone._name_problem(p_name) IS NOT NULL THEN
        RAISE EXCEPTION 'signal: p_name % %: a wait node''s signal is a name of 1 to 200 characters without control characters',
            cyclone._shown(p_name), cyclone._name_problem(p_name) USING ERRCODE = '22023';
    END IF;
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
    ELSIF EXISTS (SELECT 1 FROM ONLY cyclone_steps s
                   WHERE s.run_id = p_run_id AND s.kind = 'wait' AND s.signal = p_name AND s.state = 'pending') THEN
        INSERT INTO cyclone_signals (run_id, name, payload, received_at) VALUES (p_run_id, p_name, p_payload, v_now);
    ELSE
        RETURN false;
    END IF;
    -- Audited (an approval gate's one record that matters): who, the signal's name and its payload's size,
    -- never its content.
    INSERT INTO cyclone_audit (run_id, node, action, detail)
    VALUES (p_run_id, p_name, 'signal', jsonb_build_object('payload_bytes', coalesce(pg_column_size(p_payload), 0)));
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone.signal(uuid,text,jsonb) IS 'Deliver a signal: completes the waiting wait node with p_payload as output, or keeps it for a node still to come. False when the run is over or no wait node for it is still to come.';
REVOKE ALL ON FUNCTION cyclone.signal(uuid,text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.signal(uuid,text,jsonb) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.signal(uuid,text,jsonb) TO cyclone_admin;

COMMIT;
