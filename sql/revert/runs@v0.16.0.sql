-- Revert cyclone:runs (back to its v0.15.0 bodies of the functions below)
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._lock_run(p_run_id uuid)
 RETURNS cyclone.cyclone_runs
 LANGUAGE plpgsql
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION cyclone._ancestors(p_run_id uuid)
 RETURNS TABLE(id uuid, parent uuid, depth integer)
 LANGUAGE sql
 STABLE
AS $function$
    WITH RECURSIVE chain(id, parent, depth) AS (
        SELECT r.id, r.parent_run_id, 1 FROM cyclone.cyclone_runs r WHERE r.id = p_run_id
        UNION ALL
        SELECT r.id, r.parent_run_id, c.depth + 1 FROM cyclone.cyclone_runs r JOIN chain c ON r.id = c.parent)
    SELECT c.id, c.parent, c.depth FROM chain c
$function$;

CREATE OR REPLACE FUNCTION cyclone._create_runs(p_workflow text, p_definition jsonb, p_inputs jsonb[], p_deadline interval, p_idempotency_key text, p_run_at timestamp with time zone, p_parent_run_id uuid, p_parent_step_id bigint, p_traceparent text DEFAULT NULL::text)
 RETURNS uuid[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_now timestamptz := cyclone.now();
    v_deadline timestamptz := CASE WHEN p_deadline > interval '0' THEN v_now + p_deadline END;
    v_ids uuid[];
    v_traceparent text := p_traceparent;
    v_shard cyclone.cyclone_shard;
    v_partition int := 0;
BEGIN
    IF p_parent_run_id IS NOT NULL THEN
        SELECT r.traceparent INTO v_traceparent FROM cyclone_runs r WHERE r.id = p_parent_run_id;
    END IF;
    -- Ids are made first, so that they come back in input order. One input
    -- (submit, a child run) takes a plain expression: a query costs more.
    SELECT s.* INTO v_shard FROM cyclone_shard s;
    IF v_shard.one IS NULL THEN
        v_shard.partition_count := 1;
        IF cardinality(p_inputs) = 1 THEN
            v_ids := ARRAY[gen_random_uuid()];
        ELSE
            v_ids := ARRAY(SELECT gen_random_uuid() FROM generate_series(1, cardinality(p_inputs)));
        END IF;
    ELSE
        -- A shard: every run of the call on one partition (shards.sql).
        v_partition := cyclone._new_run_partition(v_shard, p_workflow, p_idempotency_key, p_parent_run_id);
        v_ids := ARRAY(SELECT cyclone._run_id_on(v_partition) FROM generate_series(1, cardinality(p_inputs)));
    END IF;
    IF p_idempotency_key IS NULL THEN
        -- No ON CONFLICT without a key: its speculative insertion costs every row.
        INSERT INTO cyclone_runs (id, workflow, input, created_at, started_at, deadline_at,
                                  parent_run_id, parent_step_id, traceparent)
        SELECT r.id, p_workflow, r.input, v_now, v_now, v_deadline, p_parent_run_id, p_parent_step_id,
               v_traceparent
          FROM unnest(v_ids, p_inputs) AS r(id, input);
    ELSE
        INSERT INTO cyclone_runs (id, workflow, input, created_at, started_at, deadline_at, idempotency_key,
                                  traceparent)
        VALUES (v_ids[1], p_workflow, p_inputs[1], v_now, v_now, v_deadline, p_idempotency_key, v_traceparent)
        ON CONFLICT (workflow, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING;
        IF NOT FOUND THEN
            RETURN '{}'::uuid[];
        END IF;
    END IF;
    PERFORM cyclone._insert_steps(p_workflow, v_ids, p_inputs, p_definition, coalesce(p_run_at, v_now),
                                  v_shard.partition_count, v_partition);
    RETURN v_ids;
END
$function$;

CREATE OR REPLACE FUNCTION cyclone._discard_steps(p_step_ids bigint[], p_error text, p_error_kind text)
 RETURNS SETOF cyclone.cyclone_steps
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_now timestamptz := cyclone.now();
    v_step record;
BEGIN
    FOR v_step IN
        WITH old AS (
            SELECT s.id, s.lease_owner FROM cyclone_steps s WHERE s.id = ANY (p_step_ids) FOR UPDATE
        )
        UPDATE cyclone_steps s
           SET state = 'discarded', error = p_error, error_kind = p_error_kind, finished_at = v_now,
               lease_owner = NULL, lease_expiry = NULL
          FROM old
         WHERE s.id = old.id
        RETURNING s.*, old.lease_owner AS was_owner
    LOOP
        INSERT INTO cyclone_step_errors (run_id, step_id, node, attempt, error_kind, error, worker, discarded, at)
        VALUES (v_step.run_id, v_step.id, v_step.node, v_step.attempt, p_error_kind, p_error, v_step.was_owner,
                true, v_now);
        PERFORM pg_notify('cyclone_discard', json_build_object(
            'run_id', v_step.run_id, 'step_id', v_step.id, 'node', v_step.node,
            'error_kind', p_error_kind)::text);
        IF v_step.kind = 'child' AND v_step.child_run_id IS NOT NULL THEN
            PERFORM cyclone._end_run(v_step.child_run_id, 'cancelled', 'run cancelled');
        END IF;
        RETURN QUERY SELECT s.* FROM cyclone_steps s WHERE s.id = v_step.id;
    END LOOP;
END
$function$;

CREATE OR REPLACE FUNCTION cyclone._cancel_steps(p_run_id uuid, p_step_ids bigint[], p_error text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
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
        PERFORM cyclone._end_run(v_child, 'cancelled', 'run cancelled');
    END LOOP;
END
$function$;

CREATE OR REPLACE FUNCTION cyclone._end_run(p_run_id uuid, p_state text, p_error text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    UPDATE cyclone_runs
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
