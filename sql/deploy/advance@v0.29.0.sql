-- Deploy cyclone:advance
-- requires: advance@v0.27.0 runs clock wakeups history live_runs workflows dynamic_columns dynamic_nodes map_items coordination_tables coordination
-- A complete copy of sql/engine/22_advance.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/22_advance.sql: change `advance` — the DAG (SPEC 8): starting runs,
-- reaching steps whose dependencies completed, finishing runs, the discard policy
-- (contain a failure to its branch, or fail the run), and telling a parent run that
-- its child ended. These call each other (a child run's end advances its parent; an
-- advance can start a child run or end the run), so they live in one change, here
-- in the order of a run's life: _start_runs; _advance_runs, _timestamp_of,
-- _reach_map, _end_map, _advance; _finish_runs; _discard_step, _on_discard;
-- _end_run_and_notify, _notify_parent. Internal: granted
-- to no role. Event and await nodes (SPEC 17) are reached, and the runs awaiting a
-- run that ends are told, by 46_coordination.sql (_reach_event, _reach_await,
-- _notify_awaiters), which this file calls.
-- Requires: 21_runs.sql (_create_runs, _ancestors, _discard_steps, _cancel_steps,
-- _end_run), 20_workflows.sql (_child_cycle), 40_wakeups.sql (_wake), 10_runs_tables.sql (workflows, runs, steps,
-- signals, run keys), 13_history_tables.sql (cyclone_archive_queue), 02_clock.sql.
-- Called by submit, submit_many and a schedule's slot (_start_runs); complete and
-- complete_many (_advance_runs); fail, sweep and the deadlines (_discard_step,
-- _end_run_and_notify); the operator actions (_advance, _end_run_and_notify) and
-- signal (_advance).
-- Lock order: every caller holds the run locks first, in 21_runs.sql's order
-- (ancestors, the run, then its steps). Under them these lock the run's steps, the
-- rows of child runs they create (new: no other transaction sees them) or end
-- (descendants, after their ancestors), and write a parent run already held
-- (_lock_run locks ancestors first). They read and write the live tables only (ONLY).
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=advance NOTE="..."` (docs/architecture.md, Changing the engine).

-- Starts runs: creates them with their steps (_create_runs), reaches root wait
-- and child nodes (through _advance_runs, only when the definition has one), and
-- wakes idle workers when the runs are due now (_wake: only while a worker waits).
-- Returns the ids in input order; an idempotency key already used returns that
-- run's id, found in cyclone_run_keys whether the run is live or archived, and
-- creates nothing. Unknown workflow: P0002. The one path every run is made by:
-- submit, submit_many, a schedule's slot and child nodes. p_traceparent is kept on
-- each run (a child run takes its parent's instead: _create_runs), and so is
-- p_priority (SPEC 16), which each node's priority is added to on its steps, and
-- p_debounce_key; p_idempotency_window bounds the key's dedupe (SPEC 17, _create_runs).
DROP FUNCTION IF EXISTS cyclone._start_runs(text,jsonb[],interval,text,timestamp with time zone,uuid,bigint,text);
DROP FUNCTION IF EXISTS cyclone._start_runs(text,jsonb[],interval,text,timestamp with time zone,uuid,bigint,text,integer);
CREATE OR REPLACE FUNCTION cyclone._start_runs(
    p_workflow text,
    p_inputs jsonb[],
    p_deadline interval,
    p_idempotency_key text,
    p_run_at timestamp with time zone,
    p_parent_run_id uuid,
    p_parent_step_id bigint,
    p_traceparent text DEFAULT NULL::text,
    p_priority integer DEFAULT 0,
    p_debounce_key text DEFAULT NULL::text,
    p_idempotency_window interval DEFAULT NULL::interval)
RETURNS uuid[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_definition jsonb;
    v_ids uuid[];
BEGIN
    SELECT w.definition INTO v_definition FROM cyclone_workflows w WHERE w.name = p_workflow;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow "%" not found', p_workflow USING ERRCODE = 'P0002';
    END IF;
    v_ids := cyclone._create_runs(p_workflow, v_definition, p_inputs, p_deadline, p_idempotency_key,
                                  p_run_at, p_parent_run_id, p_parent_step_id, p_traceparent, p_priority,
                                  p_debounce_key, p_idempotency_window);
    IF cardinality(v_ids) = 0 THEN
        RETURN ARRAY(SELECT k.run_id FROM cyclone_run_keys k
                      WHERE k.workflow = p_workflow AND k.key = p_idempotency_key);
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(v_definition -> 'nodes') n
                WHERE (n ->> 'kind' <> 'task' OR n ? 'when' OR n ? 'unless')
                  AND jsonb_array_length(n -> 'deps') = 0) THEN
        PERFORM cyclone._advance_runs(v_ids);
    END IF;
    IF p_run_at IS NULL OR p_run_at <= cyclone.now() THEN
        PERFORM cyclone._wake();
    END IF;
    RETURN v_ids;
END
$$;
REVOKE ALL ON FUNCTION cyclone._start_runs(text,jsonb[],interval,text,timestamp with time zone,uuid,bigint,text,integer,text,interval) FROM PUBLIC;

-- The DAG advance for a batch of runs (complete, complete_many, and _start_runs
-- for root nodes that are not plain tasks): ready plain tasks of every run become
-- available in one statement; a run that also has another node to reach (a wait,
-- child or sleep node, a node with a condition, a node after a skipped dependency)
-- goes through _advance (in run-id order); then the finished runs end. The caller
-- holds the run locks. The clock is read once a call, not once a promoted step.
-- Only the runs with a pending step can advance: one read of the batch's steps
-- finds them first, so that a batch of single-step runs (the common completion)
-- goes straight to _finish_runs without the two statements that look for ready
-- steps in each run (each a read of every run's steps).
CREATE OR REPLACE FUNCTION cyclone._advance_runs(p_run_ids uuid[])
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();  -- once, not once per promoted row
    v_run_id uuid;
    v_pending uuid[];
    v_maps bigint[];
    v_map bigint;
BEGIN
    -- The runs' own steps only (item_index IS NULL: one range of step_node_unique, never the items): the
    -- runs with a pending step, and the waiting maps (SPEC 16), which end here when their last item has.
    SELECT array_agg(DISTINCT s.run_id) FILTER (WHERE s.state = 'pending'),
           array_agg(s.id ORDER BY s.id) FILTER (WHERE s.kind = 'map')
      INTO v_pending, v_maps
      FROM ONLY cyclone_steps s
     WHERE s.run_id = ANY (p_run_ids) AND s.item_index IS NULL
       AND (s.state = 'pending' OR (s.state = 'waiting' AND s.kind = 'map'));
    FOREACH v_map IN ARRAY coalesce(v_maps, '{}') LOOP
        PERFORM cyclone._end_map(v_map);
    END LOOP;
    IF v_pending IS NOT NULL THEN
        -- Ready = every dependency completed, counted per pending step through
        -- step_node_unique (deps hold no duplicates: define_workflow rejects them).
        -- Not NOT EXISTS: the planner turns that into an anti join, and its generic
        -- plan hashed the whole steps table on every call. A plain task (no spec)
        -- needs nothing more.
        UPDATE ONLY cyclone_steps s
           SET state = 'available', scheduled_at = greatest(s.scheduled_at, v_now)
         WHERE s.run_id = ANY (v_pending) AND s.item_index IS NULL AND s.state = 'pending' AND s.kind = 'task'
           AND s.spec IS NULL
           AND cardinality(s.deps) = (SELECT count(*) FROM ONLY cyclone_steps d
                                       WHERE d.run_id = s.run_id AND d.item_index IS NULL AND d.node = ANY (s.deps)
                                         AND d.state = 'completed');
        IF FOUND THEN
            PERFORM cyclone._wake();
        END IF;
        -- The rest is _advance's: a node whose dependencies are all completed or
        -- skipped, when it is not a plain task or one of them was skipped (SPEC 16).
        FOR v_run_id IN
            SELECT DISTINCT s.run_id FROM ONLY cyclone_steps s
             CROSS JOIN LATERAL (
                 SELECT count(*) FILTER (WHERE d.state = 'completed') AS completed,
                        count(*) FILTER (WHERE d.state = 'skipped') AS skipped
                   FROM ONLY cyclone_steps d
                  WHERE d.run_id = s.run_id AND d.item_index IS NULL AND d.node = ANY (s.deps)) c
             WHERE s.run_id = ANY (v_pending) AND s.item_index IS NULL AND s.state = 'pending'
               AND c.completed + c.skipped = cardinality(s.deps)
               AND (s.kind <> 'task' OR s.spec IS NOT NULL OR c.skipped > 0)
             ORDER BY s.run_id
        LOOP
            PERFORM cyclone._advance(v_run_id);
        END LOOP;
    END IF;
    PERFORM cyclone._finish_runs(p_run_ids);
END
$$;
REVOKE ALL ON FUNCTION cyclone._advance_runs(uuid[]) FROM PUBLIC;

-- A timestamp a node read from a run's values (a sleep's until, SPEC 16): a JSON
-- string in ISO 8601 (an offset, or UTC when it has none), finite and within 100
-- years of now (submit's bound on p_run_at), or NULL for anything else, which the
-- caller discards as bad_input. Its own function, so that the time zone a string
-- without an offset is read in is UTC whatever the session's.
CREATE OR REPLACE FUNCTION cyclone._timestamp_of(p_value jsonb)
RETURNS timestamp with time zone
LANGUAGE plpgsql
STABLE
SET timezone = 'UTC'
AS $$
DECLARE
    v_at timestamptz;
BEGIN
    IF jsonb_typeof(p_value) IS DISTINCT FROM 'string' THEN
        RETURN NULL;
    END IF;
    BEGIN
        v_at := (p_value #>> '{}')::timestamptz;
    EXCEPTION WHEN data_exception THEN
        RETURN NULL;
    END;
    IF NOT v_at BETWEEN cyclone.now() - interval '100 years' AND cyclone.now() + interval '100 years' THEN
        RETURN NULL;
    END IF;
    RETURN v_at;
END
$$;
REVOKE ALL ON FUNCTION cyclone._timestamp_of(jsonb) FROM PUBLIC;

-- Reaches map node p_map_id (SPEC 16; the caller, _advance, holds the run lock and has
-- checked its conditions) with p_list, the value at its "over" path: one step of kind
-- item per element, in one statement, each with the map's node name, its position
-- (item_index, from 0) and its element (item), available now, running the map's
-- handler with its max_attempts, timeout, priority, limit buckets and deps (a claim
-- gives an item the map's dependencies' outputs); the map waits. An item's own input
-- column is {}: claim gives it the run's input from the run row, where every other
-- step has its copy. A copy an item would cost the map n copies of the input, which
-- often holds the list itself: 100,000 items over a 400 KB input took 6.8 s to reach,
-- against 0.14 s for 10,000. An
-- empty list completes the map at once with output []; a value that is not a list, or
-- one longer than max_items, discards the map as bad_input (the failure policy
-- applies), saying which. Item ids encode the run's partition, as _insert_steps' do:
-- the map's own id carries it (its remainder by the partition count).
CREATE OR REPLACE FUNCTION cyclone._reach_map(p_map_id bigint, p_list jsonb)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_map cyclone.cyclone_steps;
    v_count int := coalesce((SELECT s.partition_count FROM cyclone_shard s), 1);
BEGIN
    SELECT m.* INTO v_map FROM ONLY cyclone_steps m WHERE m.id = p_map_id AND m.state = 'pending' FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF jsonb_typeof(p_list) IS DISTINCT FROM 'array' THEN
        PERFORM cyclone._discard_step(p_map_id,
            format('map over %s: expected a JSON array, found %s', v_map.spec ->> 'over',
                   coalesce(jsonb_typeof(p_list), 'nothing')), 'bad_input');
    ELSIF jsonb_array_length(p_list) > (v_map.spec ->> 'max_items')::int THEN
        PERFORM cyclone._discard_step(p_map_id,
            format('map over %s: %s elements, more than max_items %s', v_map.spec ->> 'over',
                   jsonb_array_length(p_list), v_map.spec ->> 'max_items'), 'bad_input');
    ELSIF jsonb_array_length(p_list) = 0 THEN
        UPDATE ONLY cyclone_steps SET state = 'completed', started_at = v_now, finished_at = v_now, output = '[]'
         WHERE id = p_map_id;
    ELSE
        UPDATE ONLY cyclone_steps SET state = 'waiting', started_at = v_now WHERE id = p_map_id;
        INSERT INTO cyclone_steps (id, run_id, workflow, node, handler, kind, state, deps, on_dep_failure, priority,
                                   max_attempts, timeout, input, scheduled_at, buckets, queue_bucket, fair_bucket,
                                   item_index, item)
        OVERRIDING SYSTEM VALUE
        SELECT nextval('cyclone.cyclone_steps_id_seq') * v_count + v_map.id % v_count, v_map.run_id, v_map.workflow,
               v_map.node, v_map.handler, 'item', 'available', v_map.deps, v_map.on_dep_failure, v_map.priority,
               v_map.max_attempts, v_map.timeout, '{}', v_now, v_map.buckets, v_map.queue_bucket,
               v_map.fair_bucket, e.ord - 1, e.value
          FROM jsonb_array_elements(p_list) WITH ORDINALITY AS e(value, ord);
        PERFORM cyclone._wake();
    END IF;
END
$$;
REVOKE ALL ON FUNCTION cyclone._reach_map(bigint,jsonb) FROM PUBLIC;

-- Ends waiting map node p_map_id if its last item has ended (SPEC 16), and says so;
-- false (and nothing changes) while an item is unfinished, or when the map is no
-- longer waiting. Whether any item is unfinished is one probe of
-- cyclone_steps_open_items, whatever the map's size; the output, the array of the
-- items' outputs in item_index order (a discarded item's element {"error": e,
-- "error_kind": k}, on_item_failure "collect"), is built once, here. The DAG advance
-- is the caller's (_advance_runs goes on to it; _on_discard calls _advance). The
-- caller holds the run lock, which every item's end takes too, so the last item is
-- seen as last once.
CREATE OR REPLACE FUNCTION cyclone._end_map(p_map_id bigint)
RETURNS boolean
LANGUAGE plpgsql
AS $$
DECLARE
    v_map cyclone.cyclone_steps;
BEGIN
    -- Read, then locked only once it is the end: most calls (an item that was not the last) lock nothing.
    SELECT m.* INTO v_map FROM ONLY cyclone_steps m WHERE m.id = p_map_id AND m.state = 'waiting';
    IF NOT FOUND OR EXISTS (SELECT 1 FROM ONLY cyclone_steps i
                             WHERE i.run_id = v_map.run_id AND i.node = v_map.node
                               AND i.item_index IS NOT NULL AND i.finished_at IS NULL) THEN
        RETURN false;
    END IF;
    PERFORM 1 FROM ONLY cyclone_steps m WHERE m.id = p_map_id AND m.state = 'waiting' FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE ONLY cyclone_steps
       SET state = 'completed', finished_at = cyclone.now(),
           output = (SELECT coalesce(jsonb_agg(CASE WHEN i.state = 'completed' THEN i.output
                                                   ELSE jsonb_build_object('error', i.error, 'error_kind', i.error_kind)
                                              END ORDER BY i.item_index), '[]')
                       FROM ONLY cyclone_steps i
                      WHERE i.run_id = v_map.run_id AND i.node = v_map.node AND i.item_index IS NOT NULL)
     WHERE id = p_map_id;
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION cyclone._end_map(bigint) FROM PUBLIC;

-- Reaches every pending step of the run whose dependencies are all completed or
-- skipped (SPEC 8, 16). First the skips: a node after a skipped dependency is
-- skipped, unless it declares on_dep_skipped "run" (the skipped dependency is then
-- absent from its deps); a node whose condition fails is skipped: the document
-- {"input": the run input, "deps": {dep: output}} must contain its "when" (@>) and
-- must not contain its "unless". A skipped step is terminal, with no error and
-- finished_at now. Then, by kind: a task becomes available now; a wait node waits
-- (and completes at once on a signal that came early: the oldest kept one of its
-- name, consumed); a child node starts its child run (with this run's input) and
-- waits; a sleep waits until its wake time, reached + duration or the timestamp at
-- its until path, kept as scheduled_at and wait_expires_at (tick's _expire_waits
-- wakes it; a pause moves it with the max_waits), and completes at once with
-- {"woke_at": now} when that time has passed; an until that is missing or not a
-- timestamp discards the sleep as bad_input with the failure policy. An event or
-- await node (SPEC 17) is 46_coordination.sql's to reach (_reach_event, _reach_await):
-- it completes at once with an event already emitted or a run already ended, or waits. A wait or
-- child node's max_wait counts from here (wait_expires_at). A child node is
-- discarded (child_failed) with the failure policy, and no child run is started,
-- when its workflow is not defined, when the stored definitions make that workflow
-- start itself (_child_cycle, 20_workflows.sql: a cycle define_workflow could not
-- see, closed by two definitions committed at once or stored by an older release),
-- or when it would nest child runs deeper than 32 levels. A max_wait stored before
-- define_workflow bounded it (366 days) counts as 366 days: a larger one made now +
-- max_wait a raw 22008, and the run could not advance.
-- A pass that completed, skipped or discarded a node is followed by another (more
-- may be ready), then the run finishes if every step is terminal. A task becomes
-- due when reached, or at its run's start when that is later: each step is made with
-- scheduled_at the run's p_run_at (or a debounce's start, SPEC 17), so a root task
-- with a condition, reached at submit, waits for the run's start as a plain root task
-- does. The caller holds
-- the run lock (_advance_runs, _notify_parent, signal, tick, the operator actions).
CREATE OR REPLACE FUNCTION cyclone._advance(p_run_id uuid)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_step record;
    v_signal cyclone.cyclone_signals;
    v_input jsonb;
    v_child uuid;
    v_cycle text;
    v_doc jsonb;
    v_wake timestamptz;
    v_again boolean := true;
BEGIN
    WHILE v_again LOOP
        v_again := false;

        UPDATE ONLY cyclone_steps s
           SET state = 'available', scheduled_at = greatest(s.scheduled_at, v_now)
         WHERE s.run_id = p_run_id AND s.item_index IS NULL AND s.state = 'pending' AND s.kind = 'task'
           AND s.spec IS NULL
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps d
                            WHERE d.run_id = p_run_id AND d.item_index IS NULL AND d.node = ANY (s.deps)
                              AND d.state <> 'completed');
        IF FOUND THEN
            PERFORM cyclone._wake();
        END IF;

        FOR v_step IN
            SELECT s.id, s.kind, s.signal, s.child_workflow, s.max_wait, s.spec, s.deps, s.input, c.skipped
              FROM ONLY cyclone_steps s
             CROSS JOIN LATERAL (
                 SELECT count(*) FILTER (WHERE d.state = 'completed') AS completed,
                        count(*) FILTER (WHERE d.state = 'skipped') AS skipped
                   FROM ONLY cyclone_steps d
                  WHERE d.run_id = p_run_id AND d.item_index IS NULL AND d.node = ANY (s.deps)) c
             WHERE s.run_id = p_run_id AND s.item_index IS NULL AND s.state = 'pending'
               AND c.completed + c.skipped = cardinality(s.deps)
               AND (s.kind <> 'task' OR s.spec IS NOT NULL OR c.skipped > 0)
             ORDER BY s.id
        LOOP
            -- The values a condition or a path reads: the run input and each completed dependency's output.
            v_doc := NULL;
            IF v_step.spec IS NOT NULL THEN
                v_doc := jsonb_build_object('input', v_step.input, 'deps',
                    (SELECT coalesce(jsonb_object_agg(d.node, d.output), '{}') FROM ONLY cyclone_steps d
                      WHERE d.run_id = p_run_id AND d.item_index IS NULL AND d.node = ANY (v_step.deps)
                        AND d.state = 'completed'));
            END IF;
            IF (v_step.skipped > 0 AND (v_step.spec ->> 'on_dep_skipped') IS DISTINCT FROM 'run')
               OR NOT coalesce(v_doc @> (v_step.spec -> 'when'), true)
               OR coalesce(v_doc @> (v_step.spec -> 'unless'), false) THEN
                UPDATE ONLY cyclone_steps SET state = 'skipped', finished_at = v_now
                 WHERE id = v_step.id AND state = 'pending';
                v_again := true;
                CONTINUE;
            END IF;
            IF v_step.kind = 'task' THEN
                UPDATE ONLY cyclone_steps SET state = 'available', scheduled_at = greatest(scheduled_at, v_now)
                 WHERE id = v_step.id AND state = 'pending';
                IF FOUND THEN
                    PERFORM cyclone._wake();
                END IF;
                CONTINUE;
            END IF;
            IF v_step.kind = 'map' THEN
                PERFORM cyclone._reach_map(v_step.id, v_doc #> string_to_array(v_step.spec ->> 'over', '.'));
                -- An empty list completes the map, a bad one discards it: either may make more ready.
                v_again := v_again OR (SELECT s.state <> 'waiting' FROM ONLY cyclone_steps s WHERE s.id = v_step.id);
                CONTINUE;
            END IF;
            IF v_step.kind = 'sleep' THEN
                v_wake := CASE WHEN v_step.spec ? 'duration' THEN v_now + (v_step.spec ->> 'duration')::interval
                               ELSE cyclone._timestamp_of(v_doc #> string_to_array(v_step.spec ->> 'until', '.')) END;
                IF v_wake IS NULL THEN
                    PERFORM cyclone._discard_step(v_step.id,
                        format('sleep until %s: %s is not an ISO 8601 timestamp within 100 years of now',
                               v_step.spec ->> 'until',
                               coalesce(left((v_doc #> string_to_array(v_step.spec ->> 'until', '.'))::text, 100),
                                        'nothing')),
                        'bad_input');
                ELSIF v_wake <= v_now THEN
                    UPDATE ONLY cyclone_steps
                       SET state = 'completed', started_at = v_now, finished_at = v_now,
                           output = jsonb_build_object('woke_at', v_now)
                     WHERE id = v_step.id AND state = 'pending';
                ELSE
                    UPDATE ONLY cyclone_steps
                       SET state = 'waiting', started_at = v_now, scheduled_at = v_wake, wait_expires_at = v_wake
                     WHERE id = v_step.id AND state = 'pending';
                    CONTINUE;
                END IF;
                v_again := true;
                CONTINUE;
            END IF;
            -- An event or await node (SPEC 17): 46_coordination.sql reaches it, and says whether it ended.
            IF v_step.kind = 'event' THEN
                v_again := cyclone._reach_event(v_step.id, v_doc) OR v_again;
                CONTINUE;
            END IF;
            IF v_step.kind = 'await' THEN
                v_again := cyclone._reach_await(v_step.id, v_doc) OR v_again;
                CONTINUE;
            END IF;
            UPDATE ONLY cyclone_steps
               SET state = 'waiting', started_at = v_now,
                   wait_expires_at = v_now + least(v_step.max_wait, interval '366 days')
             WHERE id = v_step.id AND state = 'pending';
            -- A discard earlier in this loop (undefined child workflow) may have
            -- cancelled it since the loop's query ran.
            CONTINUE WHEN NOT FOUND;
            v_cycle := CASE WHEN v_step.kind = 'child' THEN cyclone._child_cycle(v_step.child_workflow, NULL) END;
            IF v_step.kind = 'wait' THEN
                DELETE FROM cyclone_signals g
                 WHERE g.id = (SELECT g2.id FROM cyclone_signals g2
                                WHERE g2.run_id = p_run_id AND g2.name = v_step.signal
                                ORDER BY g2.id LIMIT 1)
                RETURNING * INTO v_signal;
                IF FOUND THEN
                    UPDATE ONLY cyclone_steps
                       SET state = 'completed', output = v_signal.payload, finished_at = v_now
                     WHERE id = v_step.id;
                    v_again := true;
                END IF;
            ELSIF NOT EXISTS (SELECT 1 FROM cyclone_workflows w WHERE w.name = v_step.child_workflow) THEN
                PERFORM cyclone._discard_step(v_step.id,
                    format('child workflow "%s" is not defined', v_step.child_workflow), 'child_failed');
                v_again := true;
            ELSIF v_cycle IS NOT NULL THEN
                -- A child workflow that (indirectly) starts itself: refused before
                -- its first run, which would only be the first of 32 failed ones.
                PERFORM cyclone._discard_step(v_step.id,
                    format('child workflow "%s" would start itself without end: %s', v_step.child_workflow, v_cycle),
                    'child_failed');
                v_again := true;
            ELSIF (SELECT count(*) FROM cyclone._ancestors(p_run_id)) >= 32 THEN
                -- Distinct workflows nested this deep: stop as a failed child
                -- rather than nest further (each level is a run and a stack frame).
                PERFORM cyclone._discard_step(v_step.id,
                    format('child runs nest deeper than 32 levels (workflow "%s")', v_step.child_workflow),
                    'child_failed');
                v_again := true;
            ELSE
                SELECT r.input INTO v_input FROM ONLY cyclone_runs r WHERE r.id = p_run_id;
                v_child := (cyclone._start_runs(v_step.child_workflow, ARRAY[v_input], NULL, NULL, NULL,
                                                p_run_id, v_step.id))[1];
                UPDATE ONLY cyclone_steps SET child_run_id = v_child WHERE id = v_step.id;
                -- A child that ended while being created (its own child workflow
                -- is undefined) told no one, as child_run_id was not set yet.
                IF (SELECT r.state FROM ONLY cyclone_runs r WHERE r.id = v_child) IN ('completed', 'failed', 'cancelled') THEN
                    PERFORM cyclone._notify_parent(v_child);
                    v_again := true;
                END IF;
            END IF;
        END LOOP;
    END LOOP;

    PERFORM cyclone._finish_runs(ARRAY[p_run_id]);
END
$$;
REVOKE ALL ON FUNCTION cyclone._advance(uuid) FROM PUBLIC;

-- Ends the live runs among p_run_ids whose steps are all terminal: completed,
-- with an output that maps each leaf node (no dependents) that completed to
-- that node's output; or failed when an uncontained dead letter remains (left
-- behind by a partial operator retry). Set-based, for batches of completions.
-- The statement that completes runs queues them for archive()
-- (cyclone_archive_queue); a failed run is queued by _end_run. Each completed
-- child run then tells its parent (_notify_parent), in run-id order, and the await
-- nodes of other runs waiting on any of them end (_notify_awaiters, SPEC 17).
-- One read of the runs' steps says, for each run, whether it is finished, whether
-- it failed, and, for a run of one step, its output ({node: output}, the one leaf),
-- so that ending a batch of single-step runs reads each run's steps once; a run of
-- several steps computes its leaves in the UPDATE. (It read them five times:
-- twice for the failed runs, three times in the UPDATE.)
CREATE OR REPLACE FUNCTION cyclone._finish_runs(p_run_ids uuid[])
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_run_id uuid;
    v_failed uuid[];
    v_done uuid[];
    v_outputs jsonb[];
    v_children uuid[];
BEGIN
    -- The caller holds the run locks: no step of these runs changes meanwhile.
    SELECT array_agg(f.run_id ORDER BY f.run_id) FILTER (WHERE f.failed),
           array_agg(f.run_id ORDER BY f.run_id) FILTER (WHERE NOT f.failed),
           array_agg(f.output ORDER BY f.run_id) FILTER (WHERE NOT f.failed)
      INTO v_failed, v_done, v_outputs
      FROM (SELECT s.run_id,
                   bool_or(s.state = 'discarded' AND NOT s.contained) AS failed,
                   CASE WHEN count(*) = 1
                        THEN coalesce(jsonb_object_agg(s.node, s.output) FILTER (WHERE s.state = 'completed'), '{}')
                   END AS output
              FROM ONLY cyclone_steps s
             WHERE s.run_id = ANY (p_run_ids) AND s.item_index IS NULL
             GROUP BY s.run_id
            HAVING NOT bool_or(s.state IN ('pending', 'available', 'running', 'waiting'))) f;

    FOREACH v_run_id IN ARRAY coalesce(v_failed, '{}') LOOP
        PERFORM cyclone._end_run_and_notify(v_run_id, 'failed', 'run failed');
    END LOOP;
    IF v_done IS NULL THEN
        RETURN;
    END IF;

    WITH done AS (
        UPDATE ONLY cyclone_runs r
           SET state = 'completed', finished_at = v_now, paused_at = NULL,
               -- Leaves: nodes no step of the run depends on (the array of all
               -- deps is computed once per run, not once per step).
               output = coalesce(d.output,
                                 (SELECT coalesce(jsonb_object_agg(s.node, s.output), '{}')
                                    FROM ONLY cyclone_steps s
                                   WHERE s.run_id = r.id AND s.item_index IS NULL AND s.state = 'completed'
                                     AND s.node <> ALL (ARRAY(SELECT unnest(t.deps) FROM ONLY cyclone_steps t
                                                               WHERE t.run_id = r.id AND t.item_index IS NULL))))
          FROM unnest(v_done, v_outputs) AS d(run_id, output)
         WHERE r.id = d.run_id AND r.state IN ('running', 'paused')
        RETURNING r.id, r.parent_step_id
    ), queued AS (
        INSERT INTO cyclone_archive_queue (run_id, finished_at)
        SELECT d.id, v_now FROM done d
    )
    SELECT array_agg(d.id ORDER BY d.id) FILTER (WHERE d.parent_step_id IS NOT NULL) INTO v_children FROM done d;

    FOREACH v_run_id IN ARRAY coalesce(v_children, '{}') LOOP
        PERFORM cyclone._notify_parent(v_run_id);
    END LOOP;
    -- The await nodes of other runs waiting on these (SPEC 17; one index probe when there are none).
    PERFORM cyclone._notify_awaiters(v_done);
END
$$;
REVOKE ALL ON FUNCTION cyclone._finish_runs(uuid[]) FROM PUBLIC;

-- Completes the steps among p_step_ids that are a whole run (a run of one step, without a parent: the common
-- job) for complete_many, and ends their runs, moving both rows straight to the day's history tables with
-- their final values: the step completed as complete() would leave it, the run completed with {node: output}
-- (no signal is kept for it: its one node is a task, and signal() names a wait node). The usual way updates
-- the step, then the run, queues the run, and archive() later deletes both and inserts them into the day's
-- tables: two row versions of each and an archive queue row more, and archive's transaction. Each element is
-- complete()'s compare-and-set (running, p_worker, its generation, within its timeout), as in complete_many's
-- UPDATE, which completes the rest. Returns the ids of the steps completed; the runs awaiting their runs are
-- told (_notify_awaiters, SPEC 17). The caller holds the runs' locks.
-- Left to the usual way: a step holding limit slots (the release trigger fires on UPDATE), a child run (its
-- parent is told, and a tree is archived together), and every run when today's tables do not exist yet (tick
-- makes today's and tomorrow's ahead; making them here would take locks on the live tables in the hot path)
-- or a prune dropped them meanwhile (undefined_table: the block is undone, deletes included, and the usual
-- way runs).
-- The deletes are static statements, planned once a session; they hand the deleted rows on as arrays of the
-- tables' row types. Only the two inserts name the day's tables, so only they are dynamic, planned on every
-- call: an INSERT from unnest() of an array, 0.05-0.26 ms each to plan. (One dynamic statement that deleted
-- and inserted in CTEs cost 0.6-1.1 ms of planning a call, a quarter of the whole; split, _complete_solo_runs
-- took 4.76 ms a batch of 100 against 5.6: docs/performance.md.) The steps' delete also gathers each run's
-- output ({node: output}, in run id order, beside the run ids), so that the runs' insert joins the deleted
-- runs with two small arrays, not with the deleted steps' whole rows, and looks no output up by position:
-- 0.94x the database CPU a step of claim + complete_many (one connection, batches of 300, eight interleaved
-- rounds). The inserted rows are written column by column from the catalog,
-- each the deleted row's value but for the columns the completion sets, so that a column added to the tables
-- later moves with its value without this function naming it (jsonb_populate_record over the deleted row does
-- the same at ten times the cost: 230 µs a step).
CREATE OR REPLACE FUNCTION cyclone._complete_solo_runs(
    p_worker text, p_step_ids bigint[], p_lease_generations bigint[], p_outputs jsonb[], p_now timestamptz)
RETURNS bigint[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_day cyclone.cyclone_history;
    v_step_values text;
    v_run_values text;
    v_steps cyclone.cyclone_steps[];
    v_runs cyclone.cyclone_runs[];
    v_ids bigint[];
    v_run_ids uuid[];
    v_run_outputs jsonb[];
BEGIN
    SELECT h.* INTO v_day FROM cyclone_history h WHERE h.day = cyclone._history_day_of(p_now);
    IF NOT FOUND THEN
        RETURN '{}'::bigint[];
    END IF;
    -- $1 the deleted rows, $2 the outputs, $3 the step ids (an output is found by its step's position), $4 now.
    SELECT string_agg(coalesce(c.value, format('g.%I', a.attname)), ', ' ORDER BY a.attnum) INTO v_step_values
      FROM pg_attribute a
      LEFT JOIN (VALUES ('state', '''completed'''), ('output', '$2[array_position($3, g.id)]'), ('finished_at', '$4'),
                        ('lease_owner', 'NULL'), ('lease_expiry', 'NULL'), ('error', 'NULL'), ('error_kind', 'NULL'))
                AS c(name, value) ON c.name = a.attname
     WHERE a.attrelid = 'cyclone.cyclone_steps'::regclass AND a.attnum > 0 AND NOT a.attisdropped;
    -- The run's row e joined with its run id and output o ($5 and $6).
    SELECT string_agg(coalesce(c.value, format('e.%I', a.attname)), ', ' ORDER BY a.attnum) INTO v_run_values
      FROM pg_attribute a
      LEFT JOIN (VALUES ('state', '''completed'''), ('finished_at', '$4'), ('paused_at', 'NULL'),
                        ('output', 'o.output'))
                AS c(name, value) ON c.name = a.attname
     WHERE a.attrelid = 'cyclone.cyclone_runs'::regclass AND a.attnum > 0 AND NOT a.attisdropped;
    BEGIN
        WITH gone AS (
            DELETE FROM ONLY cyclone_steps s
             WHERE s.id = ANY (p_step_ids)
               AND s.state = 'running'
               AND s.lease_owner = p_worker
               AND s.lease_generation = p_lease_generations[array_position(p_step_ids, s.id)]
               AND (s.timeout IS NULL OR s.started_at + least(s.timeout, interval '366 days') > p_now)
               AND s.buckets = '{}'
               AND EXISTS (SELECT 1 FROM ONLY cyclone_runs r
                            WHERE r.id = s.run_id AND r.parent_run_id IS NULL AND r.state IN ('running', 'paused'))
               AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps o WHERE o.run_id = s.run_id AND o.id <> s.id)
            RETURNING s
        )
        SELECT array_agg(g.s), array_agg((g.s).id), array_agg((g.s).run_id ORDER BY (g.s).run_id),
               array_agg(jsonb_build_object((g.s).node, p_outputs[array_position(p_step_ids, (g.s).id)])
                         ORDER BY (g.s).run_id)
          INTO v_steps, v_ids, v_run_ids, v_run_outputs
          FROM gone g;
        IF v_ids IS NULL THEN
            RETURN '{}'::bigint[];
        END IF;
        WITH gone AS (DELETE FROM ONLY cyclone_runs r WHERE r.id = ANY (v_run_ids) RETURNING r)
        SELECT array_agg(g.r) INTO v_runs FROM gone g;
        EXECUTE format('INSERT INTO %s SELECT %s FROM unnest($1) g', v_day.steps, v_step_values)
          USING v_steps, p_outputs, p_step_ids, p_now;
        EXECUTE format('INSERT INTO %s SELECT %s FROM unnest($1) e '
                       || 'JOIN unnest($5, $6) o(run_id, output) ON o.run_id = e.id', v_day.runs, v_run_values)
          USING v_runs, p_outputs, p_step_ids, p_now, v_run_ids, v_run_outputs;
    EXCEPTION WHEN undefined_table THEN
        RETURN '{}'::bigint[];
    END;
    PERFORM cyclone._notify_awaiters(v_run_ids);
    RETURN v_ids;
END
$$;
REVOKE ALL ON FUNCTION cyclone._complete_solo_runs(text,bigint[],bigint[],jsonb[],timestamp with time zone) FROM PUBLIC;

-- Discards one step that the caller has locked and checked, then applies the
-- failure policy (_on_discard). The discard itself is _discard_steps' (21_runs.sql).
CREATE OR REPLACE FUNCTION cyclone._discard_step(p_step_id bigint, p_error text, p_error_kind text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_step cyclone.cyclone_steps;
BEGIN
    SELECT d.* INTO v_step FROM cyclone._discard_steps(ARRAY[p_step_id], p_error, p_error_kind) d;
    PERFORM cyclone._on_discard(v_step);
END
$$;
REVOKE ALL ON FUNCTION cyclone._discard_step(bigint,text,text) FROM PUBLIC;

-- The failure policy of SPEC section 8 for a step just discarded (a map's item: the
-- map's on_item_failure, SPEC 16, below): contained by
-- cancel_branch when it has dependents and all of them declare it, else the run
-- fails (a leaf's discard fails the run). A contained step is marked contained
-- (get_run and _finish_runs do not count it as the run's failure), every step
-- downstream of it is cancelled ('dependency discarded'), and the run may still
-- complete. A failed run ends through _end_run_and_notify.
CREATE OR REPLACE FUNCTION cyclone._on_discard(p_step cyclone.cyclone_steps)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_branch bigint[];
    v_map cyclone.cyclone_steps;
BEGIN
    IF p_step.item_index IS NOT NULL THEN
        -- A map's item (SPEC 16): items never fail a run by themselves (contained), the map decides. "fail":
        -- the first discarded item cancels the map's unfinished items and discards the map as item_failed,
        -- whose own policy then applies; "collect": the item's error is kept for the map's output, which
        -- ends when its last item has.
        UPDATE ONLY cyclone_steps SET contained = true WHERE id = p_step.id;
        SELECT m.* INTO v_map FROM ONLY cyclone_steps m
         WHERE m.run_id = p_step.run_id AND m.item_index IS NULL AND m.node = p_step.node AND m.state = 'waiting'
           FOR UPDATE;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        IF v_map.spec ->> 'on_item_failure' = 'collect' THEN
            IF cyclone._end_map(v_map.id) THEN
                PERFORM cyclone._advance(p_step.run_id);
            END IF;
            RETURN;
        END IF;
        PERFORM cyclone._cancel_steps(p_step.run_id,
            ARRAY(SELECT i.id FROM ONLY cyclone_steps i
                   WHERE i.run_id = p_step.run_id AND i.node = p_step.node AND i.item_index IS NOT NULL
                     AND i.finished_at IS NULL),
            format('item %s of map "%s" failed', p_step.item_index, p_step.node));
        PERFORM cyclone._discard_step(v_map.id,
            format('item %s failed (%s): %s', p_step.item_index, p_step.error_kind, p_step.error), 'item_failed');
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM ONLY cyclone_steps d
                WHERE d.run_id = p_step.run_id AND d.item_index IS NULL AND p_step.node = ANY (d.deps))
       AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps d
                        WHERE d.run_id = p_step.run_id AND d.item_index IS NULL AND p_step.node = ANY (d.deps)
                          AND d.on_dep_failure = 'fail_run') THEN
        UPDATE ONLY cyclone_steps SET contained = true WHERE id = p_step.id;
        WITH RECURSIVE branch(id, node) AS (
            SELECT d.id, d.node FROM ONLY cyclone_steps d
             WHERE d.run_id = p_step.run_id AND d.item_index IS NULL AND p_step.node = ANY (d.deps)
            UNION
            SELECT d.id, d.node FROM ONLY cyclone_steps d JOIN branch b ON b.node = ANY (d.deps)
             WHERE d.run_id = p_step.run_id AND d.item_index IS NULL
        )
        SELECT array_agg(b.id) INTO v_branch FROM branch b;
        PERFORM cyclone._cancel_steps(p_step.run_id, v_branch, 'dependency discarded');
        PERFORM cyclone._finish_runs(ARRAY[p_step.run_id]);
    ELSE
        PERFORM cyclone._end_run_and_notify(p_step.run_id, 'failed', 'run failed');
    END IF;
END
$$;
REVOKE ALL ON FUNCTION cyclone._on_discard(cyclone.cyclone_steps) FROM PUBLIC;

-- _end_run (21_runs.sql), then tell the parent run, whose child node may be
-- waiting on this run: the end of every run that is not ended from above.
CREATE OR REPLACE FUNCTION cyclone._end_run_and_notify(p_run_id uuid, p_state text, p_error text)
RETURNS boolean
LANGUAGE plpgsql
AS $$
BEGIN
    IF NOT cyclone._end_run(p_run_id, p_state, p_error) THEN
        RETURN false;
    END IF;
    PERFORM cyclone._notify_parent(p_run_id);
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION cyclone._end_run_and_notify(uuid,text,text) FROM PUBLIC;

-- A child run just ended: complete its parent's child node with the child's
-- output, or discard it (child_failed). A no-op unless that node is still
-- waiting on this very child (the parent may have moved on: deadline, max_wait,
-- cancel). The parent run is already locked: _lock_run locks ancestors first.
CREATE OR REPLACE FUNCTION cyclone._notify_parent(p_child_id uuid)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_child cyclone.cyclone_runs;
    v_step_id bigint;
BEGIN
    SELECT r.* INTO v_child FROM ONLY cyclone_runs r WHERE r.id = p_child_id;
    IF v_child.parent_step_id IS NULL THEN
        RETURN;
    END IF;
    SELECT s.id INTO v_step_id FROM ONLY cyclone_steps s
     WHERE s.id = v_child.parent_step_id AND s.state = 'waiting' AND s.child_run_id = p_child_id
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF v_child.state = 'completed' THEN
        UPDATE ONLY cyclone_steps SET state = 'completed', output = v_child.output, finished_at = cyclone.now()
         WHERE id = v_step_id;
        PERFORM cyclone._advance(v_child.parent_run_id);
    ELSE
        PERFORM cyclone._discard_step(v_step_id,
            format('child run %s %s', p_child_id, v_child.state), 'child_failed');
    END IF;
END
$$;
REVOKE ALL ON FUNCTION cyclone._notify_parent(uuid) FROM PUBLIC;

COMMIT;
