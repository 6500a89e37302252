-- Deploy cyclone:advance
-- The DAG (SPEC section 8) and the run-level transitions the public functions
-- share. Nothing here is granted to any role.
--
-- Lock order, everywhere: a run's ancestors first (root down), then the run row,
-- then its steps. _lock_run() takes the run locks; every transition that touches
-- a run calls it before it updates a step, and the DAG advance runs under it.
BEGIN;

-- Locks the run row (after its ancestors, root first) and returns it; NULL when
-- there is no such run.
CREATE OR REPLACE FUNCTION cyclone._lock_run(p_run_id uuid)
RETURNS cyclone.cyclone_runs
LANGUAGE plpgsql
AS $$
DECLARE
    v_parent uuid;
    v_run cyclone.cyclone_runs;
BEGIN
    SELECT r.parent_run_id INTO v_parent FROM cyclone_runs r WHERE r.id = p_run_id;
    IF v_parent IS NOT NULL THEN
        PERFORM cyclone._lock_run(v_parent);
    END IF;
    SELECT r.* INTO v_run FROM cyclone_runs r WHERE r.id = p_run_id FOR NO KEY UPDATE;
    RETURN v_run;
END
$$;

-- The top ancestor of a run (the run itself when it has no parent). A function
-- that locks several runs in one transaction locks them in order of this root:
-- _lock_run takes a run's root first, so run-id order alone would let two
-- batches that cross parent and child runs wait for each other (40P01).
CREATE OR REPLACE FUNCTION cyclone._root_run(p_run_id uuid)
RETURNS uuid
LANGUAGE sql STABLE
AS $$
    WITH RECURSIVE chain(id, parent) AS (
        SELECT r.id, r.parent_run_id FROM cyclone.cyclone_runs r WHERE r.id = p_run_id
        UNION ALL
        SELECT r.id, r.parent_run_id FROM cyclone.cyclone_runs r JOIN chain c ON r.id = c.parent)
    SELECT c.id FROM chain c WHERE c.parent IS NULL
$$;

-- Cancels the given non-terminal steps of a run (all of them when p_step_ids is
-- NULL), cancels the child runs of waiting child nodes, and tells the workers
-- running any of them (NOTIFY cyclone_cancel, payload the run id).
CREATE OR REPLACE FUNCTION cyclone._cancel_steps(p_run_id uuid, p_step_ids bigint[], p_error text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_was_running boolean;
    v_children uuid[];
    v_child uuid;
BEGIN
    WITH victims AS (
        SELECT s.id, s.state AS old_state, s.child_run_id
          FROM cyclone_steps s
         WHERE s.run_id = p_run_id
           AND s.state IN ('pending', 'available', 'running', 'waiting')
           AND (p_step_ids IS NULL OR s.id = ANY (p_step_ids))
           FOR UPDATE
    ), cancelled AS (
        UPDATE cyclone_steps s
           SET state = 'cancelled', error_kind = 'cancelled', error = p_error, finished_at = v_now,
               lease_owner = NULL, lease_expiry = NULL
          FROM victims v
         WHERE s.id = v.id
        RETURNING v.old_state, v.child_run_id
    )
    SELECT coalesce(bool_or(c.old_state = 'running'), false),
           array_agg(c.child_run_id ORDER BY c.child_run_id)
               FILTER (WHERE c.old_state = 'waiting' AND c.child_run_id IS NOT NULL)
      INTO v_was_running, v_children
      FROM cancelled c;
    IF v_was_running THEN
        PERFORM pg_notify('cyclone_cancel', p_run_id::text);
    END IF;
    FOREACH v_child IN ARRAY coalesce(v_children, '{}') LOOP
        PERFORM cyclone._cancel_run(v_child, 'run cancelled');
    END LOOP;
END
$$;

-- Ends a live run as cancelled or failed (the caller holds its lock, or an
-- ancestor's): every non-terminal step is cancelled with p_error, child runs are
-- cancelled, the parent's child node is told. False (a no-op) on a terminal run.
CREATE OR REPLACE FUNCTION cyclone._end_run(p_run_id uuid, p_state text, p_error text)
RETURNS boolean
LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE cyclone_runs
       SET state = p_state, finished_at = cyclone.now(), paused_at = NULL
     WHERE id = p_run_id AND state IN ('running', 'paused');
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM cyclone._cancel_steps(p_run_id, NULL, p_error);
    PERFORM cyclone._notify_parent(p_run_id);
    RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION cyclone._cancel_run(p_run_id uuid, p_error text)
RETURNS boolean
LANGUAGE sql
AS $$
    SELECT cyclone._end_run(p_run_id, 'cancelled', p_error)
$$;

-- Fail fast: the run fails and everything still live in it is cancelled.
CREATE OR REPLACE FUNCTION cyclone._fail_run(p_run_id uuid, p_error text)
RETURNS void
LANGUAGE sql
AS $$
    SELECT cyclone._end_run(p_run_id, 'failed', p_error)
$$;

-- Discards one step that the caller has locked and checked, then applies the
-- failure policy. Announces the discard on channel cyclone_discard.
CREATE OR REPLACE FUNCTION cyclone._discard_step(p_step_id bigint, p_error text, p_error_kind text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_step cyclone.cyclone_steps;
BEGIN
    UPDATE cyclone_steps
       SET state = 'discarded', error = p_error, error_kind = p_error_kind, finished_at = cyclone.now(),
           lease_owner = NULL, lease_expiry = NULL
     WHERE id = p_step_id
    RETURNING * INTO v_step;
    PERFORM pg_notify('cyclone_discard', json_build_object(
        'run_id', v_step.run_id, 'step_id', v_step.id, 'node', v_step.node,
        'error_kind', p_error_kind)::text);
    IF v_step.kind = 'child' AND v_step.child_run_id IS NOT NULL THEN
        PERFORM cyclone._cancel_run(v_step.child_run_id, 'run cancelled');
    END IF;
    PERFORM cyclone._on_discard(v_step);
END
$$;

-- The failure policy of SPEC section 8 for a step just discarded: contained by
-- cancel_branch when it has dependents and all of them declare it, else the run
-- fails.
CREATE OR REPLACE FUNCTION cyclone._on_discard(p_step cyclone.cyclone_steps)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_branch bigint[];
BEGIN
    IF EXISTS (SELECT 1 FROM cyclone_steps d WHERE d.run_id = p_step.run_id AND p_step.node = ANY (d.deps))
       AND NOT EXISTS (SELECT 1 FROM cyclone_steps d
                        WHERE d.run_id = p_step.run_id AND p_step.node = ANY (d.deps)
                          AND d.on_dep_failure = 'fail_run') THEN
        UPDATE cyclone_steps SET contained = true WHERE id = p_step.id;
        WITH RECURSIVE branch(id, node) AS (
            SELECT d.id, d.node FROM cyclone_steps d
             WHERE d.run_id = p_step.run_id AND p_step.node = ANY (d.deps)
            UNION
            SELECT d.id, d.node FROM cyclone_steps d JOIN branch b ON b.node = ANY (d.deps)
             WHERE d.run_id = p_step.run_id
        )
        SELECT array_agg(b.id) INTO v_branch FROM branch b;
        PERFORM cyclone._cancel_steps(p_step.run_id, v_branch, 'dependency discarded');
        PERFORM cyclone._finish_if_done(p_step.run_id);
    ELSE
        PERFORM cyclone._fail_run(p_step.run_id, 'run failed');
    END IF;
END
$$;

-- Reaches every pending step of the run whose dependencies are all completed:
-- a task becomes available now; a wait node waits (and completes at once on a
-- signal that came early); a child node submits its child run and waits. Then
-- finishes the run if every step is terminal. The caller holds the run lock.
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
    v_again boolean := true;
BEGIN
    WHILE v_again LOOP
        v_again := false;

        UPDATE cyclone_steps s
           SET state = 'available', scheduled_at = v_now
         WHERE s.run_id = p_run_id AND s.state = 'pending' AND s.kind = 'task'
           AND NOT EXISTS (SELECT 1 FROM cyclone_steps d
                            WHERE d.run_id = p_run_id AND d.node = ANY (s.deps) AND d.state <> 'completed');
        IF FOUND THEN
            PERFORM pg_notify('cyclone_wakeup', '');
        END IF;

        FOR v_step IN
            SELECT s.id, s.kind, s.signal, s.child_workflow, s.max_wait
              FROM cyclone_steps s
             WHERE s.run_id = p_run_id AND s.state = 'pending' AND s.kind <> 'task'
               AND NOT EXISTS (SELECT 1 FROM cyclone_steps d
                                WHERE d.run_id = p_run_id AND d.node = ANY (s.deps) AND d.state <> 'completed')
             ORDER BY s.id
        LOOP
            UPDATE cyclone_steps
               SET state = 'waiting', started_at = v_now, wait_expires_at = v_now + v_step.max_wait
             WHERE id = v_step.id AND state = 'pending';
            -- A discard earlier in this loop (undefined child workflow) may have
            -- cancelled it since the loop's query ran.
            CONTINUE WHEN NOT FOUND;
            IF v_step.kind = 'wait' THEN
                DELETE FROM cyclone_signals g
                 WHERE g.id = (SELECT g2.id FROM cyclone_signals g2
                                WHERE g2.run_id = p_run_id AND g2.name = v_step.signal
                                ORDER BY g2.id LIMIT 1)
                RETURNING * INTO v_signal;
                IF FOUND THEN
                    UPDATE cyclone_steps
                       SET state = 'completed', output = v_signal.payload, finished_at = v_now
                     WHERE id = v_step.id;
                    v_again := true;
                END IF;
            ELSIF NOT EXISTS (SELECT 1 FROM cyclone_workflows w WHERE w.name = v_step.child_workflow) THEN
                PERFORM cyclone._discard_step(v_step.id,
                    format('child workflow "%s" is not defined', v_step.child_workflow), 'child_failed');
                v_again := true;
            ELSIF (WITH RECURSIVE chain(id, parent) AS (
                       SELECT r.id, r.parent_run_id FROM cyclone_runs r WHERE r.id = p_run_id
                       UNION ALL
                       SELECT r.id, r.parent_run_id FROM cyclone_runs r JOIN chain c ON r.id = c.parent)
                   SELECT count(*) FROM chain) >= 32 THEN
                -- A workflow that (indirectly) starts itself would recurse until
                -- the stack ran out; stop it as a failed child instead.
                PERFORM cyclone._discard_step(v_step.id,
                    format('child runs nest deeper than 32 levels (workflow "%s")', v_step.child_workflow),
                    'child_failed');
                v_again := true;
            ELSE
                SELECT r.input INTO v_input FROM cyclone_runs r WHERE r.id = p_run_id;
                v_child := cyclone._create_run(v_step.child_workflow, v_input, NULL, NULL, NULL,
                                               p_run_id, v_step.id);
                UPDATE cyclone_steps SET child_run_id = v_child WHERE id = v_step.id;
                -- A child that ended while being created (its own child workflow
                -- is undefined) told no one, as child_run_id was not set yet.
                IF (SELECT r.state FROM cyclone_runs r WHERE r.id = v_child) IN ('completed', 'failed', 'cancelled') THEN
                    PERFORM cyclone._notify_parent(v_child);
                    v_again := true;
                END IF;
            END IF;
        END LOOP;
    END LOOP;

    PERFORM cyclone._finish_if_done(p_run_id);
END
$$;

-- Ends the live runs among p_run_ids whose steps are all terminal: completed,
-- with an output that maps each leaf node (no dependents) that completed to
-- that node's output; or failed when an uncontained dead letter remains (left
-- behind by a partial operator retry). Set-based, for batches of completions.
CREATE OR REPLACE FUNCTION cyclone._finish_runs(p_run_ids uuid[])
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_run_id uuid;
    v_children uuid[];
BEGIN
    FOR v_run_id IN
        SELECT r.id FROM cyclone_runs r
         WHERE r.id = ANY (p_run_ids) AND r.state IN ('running', 'paused')
           AND NOT EXISTS (SELECT 1 FROM cyclone_steps s
                            WHERE s.run_id = r.id AND s.state IN ('pending', 'available', 'running', 'waiting'))
           AND EXISTS (SELECT 1 FROM cyclone_steps s
                        WHERE s.run_id = r.id AND s.state = 'discarded' AND NOT s.contained)
         ORDER BY r.id
    LOOP
        PERFORM cyclone._fail_run(v_run_id, 'run failed');
    END LOOP;

    WITH done AS (
        UPDATE cyclone_runs r
           SET state = 'completed', finished_at = v_now, paused_at = NULL,
               -- Leaves: nodes no step of the run depends on (the array of all
               -- deps is computed once per run, not once per step).
               output = (SELECT coalesce(jsonb_object_agg(s.node, s.output), '{}')
                           FROM cyclone_steps s
                          WHERE s.run_id = r.id AND s.state = 'completed'
                            AND s.node <> ALL (ARRAY(SELECT unnest(t.deps) FROM cyclone_steps t
                                                      WHERE t.run_id = r.id)))
         WHERE r.id = ANY (p_run_ids) AND r.state IN ('running', 'paused')
           AND NOT EXISTS (SELECT 1 FROM cyclone_steps s
                            WHERE s.run_id = r.id
                              AND (s.state IN ('pending', 'available', 'running', 'waiting')
                                   OR (s.state = 'discarded' AND NOT s.contained)))
        RETURNING r.id, r.parent_step_id
    )
    SELECT array_agg(d.id ORDER BY d.id) FILTER (WHERE d.parent_step_id IS NOT NULL) INTO v_children FROM done d;

    FOREACH v_run_id IN ARRAY coalesce(v_children, '{}') LOOP
        PERFORM cyclone._notify_parent(v_run_id);
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION cyclone._finish_if_done(p_run_id uuid)
RETURNS void
LANGUAGE sql
AS $$
    SELECT cyclone._finish_runs(ARRAY[p_run_id])
$$;

-- The DAG advance for a batch of runs (complete_many, submit_many): ready tasks
-- of every run become available in one statement; a run that also has a ready
-- wait or child node goes through _advance; then the finished runs end. The
-- caller holds the run locks.
CREATE OR REPLACE FUNCTION cyclone._advance_runs(p_run_ids uuid[])
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();  -- once, not once per promoted row
    v_run_id uuid;
BEGIN
    -- Ready = every dependency completed, counted per pending step through
    -- step_node_unique (deps hold no duplicates: define_workflow rejects them).
    -- Not NOT EXISTS: the planner turns that into an anti join, and its generic
    -- plan hashed the whole steps table on every call.
    UPDATE cyclone_steps s
       SET state = 'available', scheduled_at = v_now
     WHERE s.run_id = ANY (p_run_ids) AND s.state = 'pending' AND s.kind = 'task'
       AND cardinality(s.deps) = (SELECT count(*) FROM cyclone_steps d
                                   WHERE d.run_id = s.run_id AND d.node = ANY (s.deps) AND d.state = 'completed');
    IF FOUND THEN
        PERFORM pg_notify('cyclone_wakeup', '');
    END IF;
    FOR v_run_id IN
        SELECT DISTINCT s.run_id FROM cyclone_steps s
         WHERE s.run_id = ANY (p_run_ids) AND s.state = 'pending' AND s.kind <> 'task'
           AND cardinality(s.deps) = (SELECT count(*) FROM cyclone_steps d
                                       WHERE d.run_id = s.run_id AND d.node = ANY (s.deps) AND d.state = 'completed')
         ORDER BY s.run_id
    LOOP
        PERFORM cyclone._advance(v_run_id);
    END LOOP;
    PERFORM cyclone._finish_runs(p_run_ids);
END
$$;

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
    SELECT r.* INTO v_child FROM cyclone_runs r WHERE r.id = p_child_id;
    IF v_child.parent_step_id IS NULL THEN
        RETURN;
    END IF;
    SELECT s.id INTO v_step_id FROM cyclone_steps s
     WHERE s.id = v_child.parent_step_id AND s.state = 'waiting' AND s.child_run_id = p_child_id
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF v_child.state = 'completed' THEN
        UPDATE cyclone_steps SET state = 'completed', output = v_child.output, finished_at = cyclone.now()
         WHERE id = v_step_id;
        PERFORM cyclone._advance(v_child.parent_run_id);
    ELSE
        PERFORM cyclone._discard_step(v_step_id,
            format('child run %s %s', p_child_id, v_child.state), 'child_failed');
    END IF;
END
$$;

-- Inserts the steps of new runs (one input per run): root tasks available at
-- p_scheduled_at, everything else pending. The caller reaches root wait and
-- child nodes.
CREATE OR REPLACE FUNCTION cyclone._insert_steps(p_run_ids uuid[], p_inputs jsonb[], p_definition jsonb,
                                                 p_scheduled_at timestamptz)
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    -- PL/pgSQL, not SQL, so that the plan is cached: submit is a hot path too.
    INSERT INTO cyclone_steps (run_id, node, handler, kind, state, deps, on_dep_failure, priority,
                               max_attempts, timeout, signal, child_workflow, max_wait, input, scheduled_at)
    SELECT r.id, n.name, n.handler, n.kind,
           CASE WHEN n.kind = 'task' AND cardinality(n.deps) = 0 THEN 'available' ELSE 'pending' END,
           n.deps, n.on_dep_failure, n.priority, n.max_attempts, n.timeout, n.signal, n.workflow,
           n.max_wait, r.input, p_scheduled_at
      FROM unnest(p_run_ids, p_inputs) AS r(id, input)
     CROSS JOIN jsonb_to_recordset(p_definition -> 'nodes') AS n(
               name text, handler text, kind text, deps text[], on_dep_failure text, priority int,
               max_attempts int, timeout interval, signal text, workflow text, max_wait interval);
END
$$;

-- Creates a run and its steps (root tasks available at p_run_at or now, the
-- rest pending) and reaches root wait and child nodes. An idempotency key
-- already used for the workflow returns that run and creates nothing.
CREATE OR REPLACE FUNCTION cyclone._create_run(
    p_workflow text, p_input jsonb, p_deadline interval, p_idempotency_key text,
    p_run_at timestamptz, p_parent_run_id uuid, p_parent_step_id bigint)
RETURNS uuid
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_definition jsonb;
    v_id uuid;
BEGIN
    SELECT w.definition INTO v_definition FROM cyclone_workflows w WHERE w.name = p_workflow;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow "%" is not defined', p_workflow USING ERRCODE = 'P0002';
    END IF;

    INSERT INTO cyclone_runs (workflow, input, created_at, started_at, deadline_at, idempotency_key,
                              parent_run_id, parent_step_id)
    VALUES (p_workflow, p_input, v_now, v_now,
            CASE WHEN p_deadline > interval '0' THEN v_now + p_deadline END,
            p_idempotency_key, p_parent_run_id, p_parent_step_id)
    ON CONFLICT (workflow, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        SELECT r.id INTO v_id FROM cyclone_runs r
         WHERE r.workflow = p_workflow AND r.idempotency_key = p_idempotency_key;
        RETURN v_id;
    END IF;

    PERFORM cyclone._insert_steps(ARRAY[v_id], ARRAY[p_input], v_definition, coalesce(p_run_at, v_now));

    IF EXISTS (SELECT 1 FROM jsonb_array_elements(v_definition -> 'nodes') n
                WHERE n ->> 'kind' <> 'task' AND jsonb_array_length(n -> 'deps') = 0) THEN
        PERFORM cyclone._advance(v_id);
    END IF;
    IF p_run_at IS NULL OR p_run_at <= v_now THEN
        PERFORM pg_notify('cyclone_wakeup', '');
    END IF;
    RETURN v_id;
END
$$;

COMMIT;
