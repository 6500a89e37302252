-- Revert cyclone:advance to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

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

        UPDATE ONLY cyclone_steps s
           SET state = 'available', scheduled_at = v_now
         WHERE s.run_id = p_run_id AND s.state = 'pending' AND s.kind = 'task'
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps d
                            WHERE d.run_id = p_run_id AND d.node = ANY (s.deps) AND d.state <> 'completed');
        IF FOUND THEN
            PERFORM cyclone._wake();
        END IF;

        FOR v_step IN
            SELECT s.id, s.kind, s.signal, s.child_workflow, s.max_wait
              FROM ONLY cyclone_steps s
             WHERE s.run_id = p_run_id AND s.state = 'pending' AND s.kind <> 'task'
               AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps d
                                WHERE d.run_id = p_run_id AND d.node = ANY (s.deps) AND d.state <> 'completed')
             ORDER BY s.id
        LOOP
            UPDATE ONLY cyclone_steps
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
                    UPDATE ONLY cyclone_steps
                       SET state = 'completed', output = v_signal.payload, finished_at = v_now
                     WHERE id = v_step.id;
                    v_again := true;
                END IF;
            ELSIF NOT EXISTS (SELECT 1 FROM cyclone_workflows w WHERE w.name = v_step.child_workflow) THEN
                PERFORM cyclone._discard_step(v_step.id,
                    format('child workflow "%s" is not defined', v_step.child_workflow), 'child_failed');
                v_again := true;
            ELSIF (SELECT count(*) FROM cyclone._ancestors(p_run_id)) >= 32 THEN
                -- A workflow that (indirectly) starts itself would recurse until
                -- the stack ran out; stop it as a failed child instead.
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
COMMENT ON FUNCTION cyclone._advance(uuid) IS NULL;

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
    UPDATE ONLY cyclone_steps s
       SET state = 'available', scheduled_at = v_now
     WHERE s.run_id = ANY (p_run_ids) AND s.state = 'pending' AND s.kind = 'task'
       AND cardinality(s.deps) = (SELECT count(*) FROM ONLY cyclone_steps d
                                   WHERE d.run_id = s.run_id AND d.node = ANY (s.deps) AND d.state = 'completed');
    IF FOUND THEN
        PERFORM cyclone._wake();
    END IF;
    FOR v_run_id IN
        SELECT DISTINCT s.run_id FROM ONLY cyclone_steps s
         WHERE s.run_id = ANY (p_run_ids) AND s.state = 'pending' AND s.kind <> 'task'
           AND cardinality(s.deps) = (SELECT count(*) FROM ONLY cyclone_steps d
                                       WHERE d.run_id = s.run_id AND d.node = ANY (s.deps) AND d.state = 'completed')
         ORDER BY s.run_id
    LOOP
        PERFORM cyclone._advance(v_run_id);
    END LOOP;
    PERFORM cyclone._finish_runs(p_run_ids);
END
$$;
COMMENT ON FUNCTION cyclone._advance_runs(uuid[]) IS NULL;

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
COMMENT ON FUNCTION cyclone._discard_step(bigint,text,text) IS NULL;

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
COMMENT ON FUNCTION cyclone._end_run_and_notify(uuid,text,text) IS NULL;

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
        SELECT r.id FROM ONLY cyclone_runs r
         WHERE r.id = ANY (p_run_ids) AND r.state IN ('running', 'paused')
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps s
                            WHERE s.run_id = r.id AND s.state IN ('pending', 'available', 'running', 'waiting'))
           AND EXISTS (SELECT 1 FROM ONLY cyclone_steps s
                        WHERE s.run_id = r.id AND s.state = 'discarded' AND NOT s.contained)
         ORDER BY r.id
    LOOP
        PERFORM cyclone._end_run_and_notify(v_run_id, 'failed', 'run failed');
    END LOOP;

    WITH done AS (
        UPDATE ONLY cyclone_runs r
           SET state = 'completed', finished_at = v_now, paused_at = NULL,
               -- Leaves: nodes no step of the run depends on (the array of all
               -- deps is computed once per run, not once per step).
               output = (SELECT coalesce(jsonb_object_agg(s.node, s.output), '{}')
                           FROM ONLY cyclone_steps s
                          WHERE s.run_id = r.id AND s.state = 'completed'
                            AND s.node <> ALL (ARRAY(SELECT unnest(t.deps) FROM ONLY cyclone_steps t
                                                      WHERE t.run_id = r.id)))
         WHERE r.id = ANY (p_run_ids) AND r.state IN ('running', 'paused')
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps s
                            WHERE s.run_id = r.id
                              AND (s.state IN ('pending', 'available', 'running', 'waiting')
                                   OR (s.state = 'discarded' AND NOT s.contained)))
        RETURNING r.id, r.parent_step_id
    ), queued AS (
        INSERT INTO cyclone_archive_queue (run_id, finished_at)
        SELECT d.id, v_now FROM done d
    )
    SELECT array_agg(d.id ORDER BY d.id) FILTER (WHERE d.parent_step_id IS NOT NULL) INTO v_children FROM done d;

    FOREACH v_run_id IN ARRAY coalesce(v_children, '{}') LOOP
        PERFORM cyclone._notify_parent(v_run_id);
    END LOOP;
END
$$;
COMMENT ON FUNCTION cyclone._finish_runs(uuid[]) IS NULL;

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
COMMENT ON FUNCTION cyclone._notify_parent(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._on_discard(p_step cyclone.cyclone_steps)
 RETURNS void
 LANGUAGE plpgsql
AS $$
DECLARE
    v_branch bigint[];
BEGIN
    IF EXISTS (SELECT 1 FROM ONLY cyclone_steps d WHERE d.run_id = p_step.run_id AND p_step.node = ANY (d.deps))
       AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps d
                        WHERE d.run_id = p_step.run_id AND p_step.node = ANY (d.deps)
                          AND d.on_dep_failure = 'fail_run') THEN
        UPDATE ONLY cyclone_steps SET contained = true WHERE id = p_step.id;
        WITH RECURSIVE branch(id, node) AS (
            SELECT d.id, d.node FROM ONLY cyclone_steps d
             WHERE d.run_id = p_step.run_id AND p_step.node = ANY (d.deps)
            UNION
            SELECT d.id, d.node FROM ONLY cyclone_steps d JOIN branch b ON b.node = ANY (d.deps)
             WHERE d.run_id = p_step.run_id
        )
        SELECT array_agg(b.id) INTO v_branch FROM branch b;
        PERFORM cyclone._cancel_steps(p_step.run_id, v_branch, 'dependency discarded');
        PERFORM cyclone._finish_runs(ARRAY[p_step.run_id]);
    ELSE
        PERFORM cyclone._end_run_and_notify(p_step.run_id, 'failed', 'run failed');
    END IF;
END
$$;
COMMENT ON FUNCTION cyclone._on_discard(cyclone.cyclone_steps) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._start_runs(p_workflow text, p_inputs jsonb[], p_deadline interval, p_idempotency_key text, p_run_at timestamp with time zone, p_parent_run_id uuid, p_parent_step_id bigint, p_traceparent text DEFAULT NULL::text)
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
                                  p_run_at, p_parent_run_id, p_parent_step_id, p_traceparent);
    IF cardinality(v_ids) = 0 THEN
        RETURN ARRAY(SELECT k.run_id FROM cyclone_run_keys k
                      WHERE k.workflow = p_workflow AND k.key = p_idempotency_key);
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(v_definition -> 'nodes') n
                WHERE n ->> 'kind' <> 'task' AND jsonb_array_length(n -> 'deps') = 0) THEN
        PERFORM cyclone._advance_runs(v_ids);
    END IF;
    IF p_run_at IS NULL OR p_run_at <= cyclone.now() THEN
        PERFORM cyclone._wake();
    END IF;
    RETURN v_ids;
END
$$;
COMMENT ON FUNCTION cyclone._start_runs(text,jsonb[],interval,text,timestamp with time zone,uuid,bigint,text) IS NULL;

COMMIT;
