-- Deploy cyclone:coordination
-- requires: coordination@v0.22.0 coordination_tables advance runs submit signals checks clock wakeups
-- A complete copy of sql/engine/46_coordination.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/46_coordination.sql: change `coordination` — runs that wait on the world and on each other
-- (SPEC 17): event nodes and emit_event, await nodes and the end of the run they await, signal_with_start,
-- debounced submits and rerun.
-- Owns: _event_key, _event_lock (helpers); _reach_event, _reach_await (the DAG advance reaches an event or
-- await node through them, 22_advance.sql); _notify_awaiters (a run's end ends the await nodes waiting on it:
-- _end_run, 21_runs.sql, and _finish_runs, 22_advance.sql, call it); emit_event; _debounce (submit,
-- 23_submit.sql); signal_with_start; rerun.
-- Requires: 14_events_tables.sql (cyclone_events), 10_runs_tables.sql (runs, steps, audit), 21_runs.sql
-- (_lock_run, _lock_existing_run, _root_run, _create_runs), 22_advance.sql (_advance_runs, _discard_step),
-- 23_submit.sql (submit), 30_signals.sql (signal), 03_checks.sql (_require, _check_payload, _shown),
-- 02_clock.sql.
-- Called by: cyclone_client and cyclone_admin (emit_event, signal_with_start), cyclone_admin (rerun); the
-- rest by the engine.
--
-- No lost wake-up. An event node is reached and an event emitted under one key lock (_event_lock: shared by
-- the reach, exclusive by emit_event), so either the reach sees the event or the emit sees the waiting node.
-- An await node reads the awaited run's row FOR SHARE, which waits for a transaction ending that run (it holds
-- the row FOR NO KEY UPDATE) and then reads the row as that transaction left it; a run's end that commits
-- first is seen, and one that comes after sees the waiting node.
-- Both hold under READ COMMITTED, where each statement sees what committed before it: a caller at REPEATABLE
-- READ or SERIALIZABLE reads one snapshot for its whole transaction and can miss the other side (the
-- engine's functions are meant to be called at READ COMMITTED, PostgreSQL's default; docs/coordination.md).
-- Lock order. emit_event: the key lock, then the runs of the waiting nodes (root, then run id: _lock_run),
-- then their steps. A run's end (_notify_awaiters): the ended run is held; the awaiting runs are locked after
-- it, in root then run-id order, then their steps. Neither order is the other's: a transaction that holds a
-- run and then waits for a key (reaching a second event node of a key while emit_event of that key waits
-- for the run) or for an awaited run (a second await of the same run reached while that run ends, or a
-- batch of completions holding both) can meet the other waiting for it; PostgreSQL then aborts one of the
-- two with 40P01 and nothing is half-written (the Python worker retries a report that met it).
-- _debounce: the debounce key's lock, then the run (_lock_run), then its steps.
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=coordination NOTE="..."` (docs/architecture.md, Changing the engine).

-- The key an event node's template makes from its run's values (SPEC 17): each {path} replaced by the text of
-- the value at that path in p_doc ({"input", "deps"}: a string's characters, any other value's JSON), or NULL
-- when a path finds nothing or JSON null. define_workflow has checked that the braces pair up without
-- nesting and that each path is one _path_problem accepts.
CREATE OR REPLACE FUNCTION cyclone._event_key(p_template text, p_doc jsonb)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_key text := '';
    v_rest text := p_template;
    v_open int;
    v_close int;
    v_value text;
BEGIN
    LOOP
        v_open := strpos(v_rest, '{');
        EXIT WHEN v_open = 0;
        v_close := strpos(v_rest, '}');
        v_value := p_doc #>> string_to_array(substr(v_rest, v_open + 1, v_close - v_open - 1), '.');
        IF v_value IS NULL THEN
            RETURN NULL;
        END IF;
        v_key := v_key || left(v_rest, v_open - 1) || v_value;
        v_rest := substr(v_rest, v_close + 1);
    END LOOP;
    RETURN v_key || v_rest;
END
$$;
REVOKE ALL ON FUNCTION cyclone._event_key(text,jsonb) FROM PUBLIC;

-- The advisory lock of an event key: class 1667591 ("cyclone events"), the key's hash. Two keys that share a
-- hash only share a lock (they wait for each other, nothing more).
CREATE OR REPLACE FUNCTION cyclone._event_lock(p_key text)
RETURNS integer
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT hashtext(p_key)
$$;
REVOKE ALL ON FUNCTION cyclone._event_lock(text) FROM PUBLIC;

-- Reaches event node p_step_id (SPEC 17; _advance holds the run lock and has checked its conditions): makes its
-- key from the template and p_doc; then, under the key's lock (shared), completes it at once with the payload
-- of the earliest event of that key emitted at or after its run's created_at, or leaves it waiting on the key
-- (event_key; max_wait counts from now, as a wait node's). A template whose path finds nothing, or a key that
-- is empty or over 1,000 bytes (what emit_event accepts), discards the node as bad_input (its failure policy
-- applies). True when the node ended here (the caller looks for more to reach).
CREATE OR REPLACE FUNCTION cyclone._reach_event(p_step_id bigint, p_doc jsonb)
RETURNS boolean
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_step cyclone.cyclone_steps;
    v_key text;
    v_event cyclone.cyclone_events;
BEGIN
    SELECT s.* INTO v_step FROM ONLY cyclone_steps s WHERE s.id = p_step_id AND s.state = 'pending' FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    v_key := cyclone._event_key(v_step.spec ->> 'key', p_doc);
    IF v_key IS NULL OR v_key = '' OR octet_length(v_key) > 1000 THEN
        PERFORM cyclone._discard_step(p_step_id,
            CASE WHEN v_key IS NULL
                 THEN format('event key %s: a path in it found nothing', cyclone._shown(v_step.spec ->> 'key'))
                 ELSE format('event key %s made a key of %s bytes (1 to 1000)', cyclone._shown(v_step.spec ->> 'key'),
                             octet_length(v_key)) END,
            'bad_input');
        RETURN true;
    END IF;
    PERFORM pg_advisory_xact_lock_shared(1667591, cyclone._event_lock(v_key));
    SELECT e.* INTO v_event FROM cyclone_events e
     WHERE e.key = v_key
       AND e.emitted_at >= (SELECT r.created_at FROM ONLY cyclone_runs r WHERE r.id = v_step.run_id)
     ORDER BY e.emitted_at, e.id
     LIMIT 1;
    IF FOUND THEN
        UPDATE ONLY cyclone_steps
           SET state = 'completed', started_at = v_now, finished_at = v_now, output = v_event.payload,
               event_key = v_key
         WHERE id = p_step_id;
        RETURN true;
    END IF;
    UPDATE ONLY cyclone_steps
       SET state = 'waiting', started_at = v_now, event_key = v_key,
           wait_expires_at = v_now + least(v_step.max_wait, interval '366 days')
     WHERE id = p_step_id;
    RETURN false;
END
$$;
REVOKE ALL ON FUNCTION cyclone._reach_event(bigint,jsonb) FROM PUBLIC;

-- Reaches await node p_step_id (SPEC 17; _advance holds the run lock and has checked its conditions): reads the
-- run id at its "run" path in p_doc, then that run's row, FOR SHARE when it is live (see the header: this waits
-- for a transaction ending it). A run that completed completes the node with its output; one that failed or
-- was cancelled discards it as awaited_run_failed; a live one leaves it waiting (awaited_run_id; max_wait counts
-- from now). An archived run is terminal. A value that is not a run id, a run that does not exist, or the
-- node's own run (it would wait for itself) discards the node as bad_input. True when the node ended here.
CREATE OR REPLACE FUNCTION cyclone._reach_await(p_step_id bigint, p_doc jsonb)
RETURNS boolean
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_step cyclone.cyclone_steps;
    v_value jsonb;
    v_target uuid;
    v_run cyclone.cyclone_runs;
BEGIN
    SELECT s.* INTO v_step FROM ONLY cyclone_steps s WHERE s.id = p_step_id AND s.state = 'pending' FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    v_value := p_doc #> string_to_array(v_step.spec ->> 'run', '.');
    IF jsonb_typeof(v_value) = 'string'
       AND (v_value #>> '{}') ~* '^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$' THEN
        v_target := (v_value #>> '{}')::uuid;
    END IF;
    IF v_target IS NULL THEN
        PERFORM cyclone._discard_step(p_step_id,
            format('await run %s: %s is not a run id', v_step.spec ->> 'run',
                   coalesce(left(v_value::text, 100), 'nothing')), 'bad_input');
        RETURN true;
    END IF;
    IF v_target = v_step.run_id THEN
        PERFORM cyclone._discard_step(p_step_id,
            format('await run %s: run %s cannot await itself', v_step.spec ->> 'run', v_target), 'bad_input');
        RETURN true;
    END IF;
    SELECT r.* INTO v_run FROM ONLY cyclone_runs r WHERE r.id = v_target FOR SHARE;
    IF NOT FOUND THEN
        SELECT r.* INTO v_run FROM cyclone_runs r WHERE r.id = v_target;
        IF NOT FOUND THEN
            PERFORM cyclone._discard_step(p_step_id,
                format('await run %s: no run %s', v_step.spec ->> 'run', v_target), 'bad_input');
            RETURN true;
        END IF;
    END IF;
    IF v_run.state = 'completed' THEN
        UPDATE ONLY cyclone_steps
           SET state = 'completed', started_at = v_now, finished_at = v_now, output = v_run.output,
               awaited_run_id = v_target
         WHERE id = p_step_id;
        RETURN true;
    ELSIF v_run.state IN ('failed', 'cancelled') THEN
        UPDATE ONLY cyclone_steps SET awaited_run_id = v_target WHERE id = p_step_id;
        PERFORM cyclone._discard_step(p_step_id, format('awaited run %s %s', v_target, v_run.state),
                                      'awaited_run_failed');
        RETURN true;
    END IF;
    UPDATE ONLY cyclone_steps
       SET state = 'waiting', started_at = v_now, awaited_run_id = v_target,
           wait_expires_at = v_now + least(v_step.max_wait, interval '366 days')
     WHERE id = p_step_id;
    RETURN false;
END
$$;
REVOKE ALL ON FUNCTION cyclone._reach_await(bigint,jsonb) FROM PUBLIC;

-- The runs p_run_ids just ended (completed, failed or cancelled; the caller holds them): every await node
-- waiting on one of them ends in this transaction (SPEC 17). Its run is locked (root, then run id); a
-- completed run's awaiting nodes complete with its output in one statement and their runs advance together
-- (_advance_runs); a failed or cancelled run's are discarded one by one as awaited_run_failed, each with its
-- failure policy. One probe of cyclone_steps_awaiting when nobody awaits them, which is the common case.
-- The ended runs are read through the day tables too: a run of one step that complete_many ends has gone
-- straight to today's table by now (_complete_solo_runs, 22_advance.sql).
CREATE OR REPLACE FUNCTION cyclone._notify_awaiters(p_run_ids uuid[])
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_runs uuid[];
    v_run_id uuid;
    v_step record;
BEGIN
    SELECT array_agg(DISTINCT s.run_id) INTO v_runs FROM ONLY cyclone_steps s
     WHERE s.awaited_run_id = ANY (p_run_ids) AND s.state = 'waiting' AND s.awaited_run_id IS NOT NULL;
    IF v_runs IS NULL THEN
        RETURN;
    END IF;
    FOR v_run_id IN SELECT u FROM unnest(v_runs) u ORDER BY cyclone._root_run(u), u LOOP
        PERFORM cyclone._lock_run(v_run_id);
    END LOOP;
    WITH done AS (
        UPDATE ONLY cyclone_steps s
           SET state = 'completed', output = r.output, finished_at = v_now
          FROM cyclone_runs r
         WHERE s.awaited_run_id = ANY (p_run_ids) AND s.state = 'waiting' AND s.awaited_run_id IS NOT NULL
           AND r.id = s.awaited_run_id AND r.state = 'completed'
        RETURNING s.run_id
    )
    SELECT array_agg(DISTINCT d.run_id) INTO v_runs FROM done d;
    IF v_runs IS NOT NULL THEN
        PERFORM cyclone._advance_runs(v_runs);
    END IF;
    FOR v_step IN
        SELECT s.id, s.awaited_run_id, r.state FROM ONLY cyclone_steps s
          JOIN cyclone_runs r ON r.id = s.awaited_run_id
         WHERE s.awaited_run_id = ANY (p_run_ids) AND s.state = 'waiting' AND s.awaited_run_id IS NOT NULL
           AND r.state IN ('failed', 'cancelled')
         ORDER BY s.id
    LOOP
        -- An earlier discard's policy may have ended this node's run meanwhile.
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps s WHERE s.id = v_step.id AND s.state = 'waiting');
        PERFORM cyclone._discard_step(v_step.id, format('awaited run %s %s', v_step.awaited_run_id, v_step.state),
                                      'awaited_run_failed');
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION cyclone._notify_awaiters(uuid[]) FROM PUBLIC;

-- emit_event: records an event of p_key with p_payload (kept until prune removes events older than its cutoff)
-- and, in this transaction, completes every event node waiting on that key with the payload as its output,
-- advancing their runs together; returns how many nodes it completed. A node reached later completes with it
-- too, if its run was created at or before now (SPEC 17). Guards: p_key non-empty and at most 1,000 bytes
-- (22023; NULL: 22004), p_payload within the limits of any JSON the engine stores (_check_payload: 1 MiB,
-- 100 levels; 22023). NULL is no payload.
CREATE OR REPLACE FUNCTION cyclone.emit_event(p_key text, p_payload jsonb DEFAULT NULL::jsonb)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_runs uuid[];
    v_run_id uuid;
    v_count int;
BEGIN
    PERFORM cyclone._require('emit_event', p_key <> '', 'p_key must be a non-empty event key');
    IF octet_length(p_key) > 1000 THEN
        RAISE EXCEPTION 'emit_event: p_key is % bytes long; the limit is 1000 bytes', octet_length(p_key)
            USING ERRCODE = '22023';
    END IF;
    PERFORM cyclone._check_payload('emit_event: p_payload', p_payload);
    PERFORM pg_advisory_xact_lock(1667591, cyclone._event_lock(p_key));
    INSERT INTO cyclone_events (key, payload, emitted_at) VALUES (p_key, p_payload, v_now);
    SELECT array_agg(DISTINCT s.run_id) INTO v_runs FROM ONLY cyclone_steps s
     WHERE s.event_key = p_key AND s.state = 'waiting';
    IF v_runs IS NULL THEN
        RETURN 0;
    END IF;
    FOR v_run_id IN SELECT u FROM unnest(v_runs) u ORDER BY cyclone._root_run(u), u LOOP
        PERFORM cyclone._lock_run(v_run_id);
    END LOOP;
    UPDATE ONLY cyclone_steps
       SET state = 'completed', output = p_payload, finished_at = v_now
     WHERE event_key = p_key AND state = 'waiting';
    GET DIAGNOSTICS v_count = ROW_COUNT;
    PERFORM cyclone._advance_runs(v_runs);
    RETURN v_count;
END
$$;
COMMENT ON FUNCTION cyclone.emit_event(text,jsonb) IS 'Record an event of p_key and complete every event node waiting on it with p_payload as output (SPEC 17); returns how many it completed. Kept until prune.';
REVOKE ALL ON FUNCTION cyclone.emit_event(text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.emit_event(text,jsonb) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.emit_event(text,jsonb) TO cyclone_admin;

-- A debounced submit (SPEC 17; submit has checked its arguments): under the lock of the workflow's debounce key
-- (class 1667592, held to the end of the transaction, so concurrent submits of one key take turns), the newest
-- running run of that workflow and key none of whose steps has been claimed takes p_input (the run's and each
-- of its own steps' copy) and its root tasks are due at least(now + p_debounce, created_at + p_debounce_max)
-- (no bound when p_debounce_max is NULL); its id is returned. NULL when there is no such run: submit then
-- makes one, due at now + p_debounce. The run's steps are locked (after the run) before they are checked, so
-- a claim under way is waited for and seen. What a run decided at its submit stays: its limit buckets, and
-- root nodes other than tasks (a root map's items, a root condition), which were reached with its first input.
CREATE OR REPLACE FUNCTION cyclone._debounce(p_workflow text, p_key text, p_input jsonb, p_debounce interval,
                                             p_debounce_max interval)
RETURNS uuid
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_run cyclone.cyclone_runs;
BEGIN
    PERFORM pg_advisory_xact_lock(1667592, hashtext(p_workflow || chr(31) || p_key));
    SELECT r.* INTO v_run FROM ONLY cyclone_runs r
     WHERE r.workflow = p_workflow AND r.debounce_key = p_key AND r.state = 'running'
     ORDER BY r.created_at DESC, r.id
     LIMIT 1;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    PERFORM cyclone._lock_run(v_run.id);
    IF EXISTS (SELECT 1 FROM (SELECT s.attempt, s.state FROM ONLY cyclone_steps s
                               WHERE s.run_id = v_run.id FOR UPDATE) s
                WHERE s.attempt > 0 OR s.state = 'running') THEN
        RETURN NULL;
    END IF;
    UPDATE ONLY cyclone_runs SET input = p_input WHERE id = v_run.id AND state = 'running';
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    UPDATE ONLY cyclone_steps
       SET input = p_input,
           scheduled_at = CASE WHEN state = 'available' AND cardinality(deps) = 0
                               THEN least(v_now + p_debounce, v_run.created_at + p_debounce_max)
                               ELSE scheduled_at END
     WHERE run_id = v_run.id AND item_index IS NULL;
    RETURN v_run.id;
END
$$;
REVOKE ALL ON FUNCTION cyclone._debounce(text,text,jsonb,interval,interval) FROM PUBLIC;

-- signal_with_start: in one transaction, the run of p_workflow with idempotency key p_idempotency_key (made by
-- submit with p_input when there is none, or when its run was pruned), then signal(p_signal, p_payload) on it;
-- returns the run's id (SPEC 17). A signal no wait node of the run will consume is not kept, as signal's.
-- Guards: a NULL or empty key 22023 (a run without a key cannot be found again); submit's and signal's own
-- (P0002 for an unknown workflow, 22023 for a bad input, signal name or payload); 55000 when the key's run is
-- already terminal (nothing is written).
CREATE OR REPLACE FUNCTION cyclone.signal_with_start(
    p_workflow text,
    p_idempotency_key text,
    p_signal text,
    p_payload jsonb DEFAULT NULL::jsonb,
    p_input jsonb DEFAULT '{}'::jsonb)
RETURNS uuid
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_id uuid;
    v_state text;
BEGIN
    IF p_idempotency_key IS NULL OR p_idempotency_key = '' THEN
        RAISE EXCEPTION 'signal_with_start: p_idempotency_key must be a non-empty key' USING ERRCODE = '22023';
    END IF;
    PERFORM cyclone._require('signal_with_start', p_signal <> '', 'p_signal must be a non-empty signal name');
    -- signal()'s own check, made before a run is started for it.
    IF cyclone._name_problem(p_signal) IS NOT NULL THEN
        RAISE EXCEPTION 'signal_with_start: p_signal % %: a wait node''s signal is a name of 1 to 200 characters without control characters',
            cyclone._shown(p_signal), cyclone._name_problem(p_signal) USING ERRCODE = '22023';
    END IF;
    PERFORM cyclone._check_payload('signal_with_start: p_payload', p_payload);
    v_id := cyclone.submit(p_workflow, p_input, NULL, p_idempotency_key);
    SELECT r.state INTO v_state FROM cyclone_runs r WHERE r.id = v_id;
    IF v_state NOT IN ('running', 'paused') THEN
        RAISE EXCEPTION 'signal_with_start: the run % of key % is already %', v_id, cyclone._shown(p_idempotency_key),
            v_state USING ERRCODE = '55000';
    END IF;
    PERFORM cyclone.signal(v_id, p_signal, p_payload);
    RETURN v_id;
END
$$;
COMMENT ON FUNCTION cyclone.signal_with_start(text,text,text,jsonb,jsonb) IS 'The run of the workflow and idempotency key (submitted with p_input when there is none), then signal on it, in one transaction (SPEC 17). A terminal run of the key: 55000.';
REVOKE ALL ON FUNCTION cyclone.signal_with_start(text,text,text,jsonb,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.signal_with_start(text,text,text,jsonb,jsonb) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.signal_with_start(text,text,text,jsonb,jsonb) TO cyclone_admin;

-- rerun: a new run of the original's workflow, as defined now, with its input, priority and deadline length
-- (deadline_at - created_at), and rerun_of = p_run_id (SPEC 17); not its idempotency or debounce key (they
-- would name the original again). Without p_from_node every node runs again. With it, every node that is
-- neither p_from_node nor downstream of it in the current definition, and that completed in the original,
-- starts completed with its original output (a map with its output, no items; a child node without a child
-- run); the rest run afresh, reached as in any run once the kept nodes are in place. Audited on the new run
-- (action rerun, node p_from_node, p_reason). Guards: 22004 for a NULL run id; P0002 for an unknown run (live
-- or archived), for a workflow no longer defined, and for a p_from_node the current definition does not have;
-- 55000 while the original is not terminal. The original is locked (_lock_existing_run) so that an operator's
-- retry cannot revive it meanwhile.
CREATE OR REPLACE FUNCTION cyclone.rerun(p_run_id uuid, p_from_node text DEFAULT NULL::text,
                                         p_reason text DEFAULT NULL::text)
RETURNS uuid
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_run cyclone.cyclone_runs;
    v_definition jsonb;
    v_id uuid;
BEGIN
    IF p_run_id IS NULL THEN
        RAISE EXCEPTION 'rerun: p_run_id must not be NULL' USING ERRCODE = '22004';
    END IF;
    v_run := cyclone._lock_existing_run('rerun', p_run_id);
    IF v_run.state NOT IN ('completed', 'failed', 'cancelled') THEN
        RAISE EXCEPTION 'rerun: run % is %; only a completed, failed or cancelled run can be rerun', p_run_id,
            v_run.state USING ERRCODE = '55000';
    END IF;
    SELECT w.definition INTO v_definition FROM cyclone_workflows w WHERE w.name = v_run.workflow;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'rerun: workflow "%" is not defined any more', v_run.workflow USING ERRCODE = 'P0002';
    END IF;
    IF p_from_node IS NOT NULL AND NOT jsonb_path_exists(v_definition, '$.nodes[*] ? (@.name == $n)',
                                                         jsonb_build_object('n', p_from_node)) THEN
        RAISE EXCEPTION 'rerun: workflow "%" has no node %', v_run.workflow, cyclone._shown(p_from_node)
            USING ERRCODE = 'P0002';
    END IF;
    v_id := (cyclone._create_runs(v_run.workflow, v_definition, ARRAY[v_run.input],
                                  v_run.deadline_at - v_run.created_at, NULL, NULL, NULL, NULL, v_run.traceparent,
                                  v_run.priority))[1];
    UPDATE ONLY cyclone_runs SET rerun_of = p_run_id WHERE id = v_id;
    IF p_from_node IS NOT NULL THEN
        -- The nodes to run again: p_from_node and everything downstream of it, by the steps' deps.
        WITH RECURSIVE again(node) AS (
            SELECT p_from_node
            UNION
            SELECT s.node FROM ONLY cyclone_steps s JOIN again a ON a.node = ANY (s.deps)
             WHERE s.run_id = v_id AND s.item_index IS NULL
        )
        UPDATE ONLY cyclone_steps s
           SET state = 'completed', output = o.output, started_at = v_now, finished_at = v_now
          FROM cyclone_steps o
         WHERE s.run_id = v_id AND s.item_index IS NULL AND s.node NOT IN (SELECT a.node FROM again a)
           AND o.run_id = p_run_id AND o.item_index IS NULL AND o.node = s.node AND o.state = 'completed';
    END IF;
    INSERT INTO cyclone_audit (run_id, node, action, reason, detail)
    VALUES (v_id, p_from_node, 'rerun', p_reason, jsonb_build_object('rerun_of', p_run_id));
    PERFORM cyclone._advance_runs(ARRAY[v_id]);
    PERFORM cyclone._wake();
    RETURN v_id;
END
$$;
COMMENT ON FUNCTION cyclone.rerun(uuid,text,text) IS 'A new run of a finished run''s workflow and input (rerun_of names it); with p_from_node, the nodes upstream of it that completed keep their outputs (SPEC 17). Audited.';
REVOKE ALL ON FUNCTION cyclone.rerun(uuid,text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.rerun(uuid,text,text) TO cyclone_admin;

COMMIT;
