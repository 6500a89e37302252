-- Revert cyclone:runs to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._ancestors(p_run_id uuid)
 RETURNS TABLE(id uuid, parent uuid, depth integer)
 LANGUAGE sql
 STABLE
AS $$
    WITH RECURSIVE chain(id, parent, depth) AS (
        SELECT r.id, r.parent_run_id, 1 FROM ONLY cyclone.cyclone_runs r WHERE r.id = p_run_id
        UNION ALL
        SELECT r.id, r.parent_run_id, c.depth + 1 FROM ONLY cyclone.cyclone_runs r JOIN chain c ON r.id = c.parent)
    SELECT c.id, c.parent, c.depth FROM chain c
$$;
COMMENT ON FUNCTION cyclone._ancestors(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._bucket_of(p_input jsonb, p_key text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT CASE WHEN p_key IS NULL THEN '' ELSE coalesce(p_input #>> string_to_array(p_key, '.'), '') END
$$;
COMMENT ON FUNCTION cyclone._bucket_of(jsonb,text) IS NULL;

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
          FROM ONLY cyclone_steps s
         WHERE s.run_id = p_run_id
           AND s.state IN ('pending', 'available', 'running', 'waiting')
           AND (p_step_ids IS NULL OR s.id = ANY (p_step_ids))
           FOR UPDATE
    ), cancelled AS (
        UPDATE ONLY cyclone_steps s
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
$$;
COMMENT ON FUNCTION cyclone._cancel_steps(uuid,bigint[],text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._create_runs(p_workflow text, p_definition jsonb, p_inputs jsonb[], p_deadline interval, p_idempotency_key text, p_run_at timestamp with time zone, p_parent_run_id uuid, p_parent_step_id bigint, p_traceparent text DEFAULT NULL::text)
 RETURNS uuid[]
 LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_deadline timestamptz := CASE WHEN p_deadline > interval '0' THEN v_now + p_deadline END;
    v_ids uuid[];
    v_traceparent text := p_traceparent;
    v_shard cyclone.cyclone_shard;
    v_partition int := 0;
BEGIN
    IF p_parent_run_id IS NOT NULL THEN
        SELECT r.traceparent INTO v_traceparent FROM ONLY cyclone_runs r WHERE r.id = p_parent_run_id;
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
        -- The key's row stays while the run is kept, archived or not (history.sql).
        INSERT INTO cyclone_run_keys (workflow, key, run_id) VALUES (p_workflow, p_idempotency_key, v_ids[1])
        ON CONFLICT (workflow, key) DO NOTHING;
        IF NOT FOUND THEN
            RETURN '{}'::uuid[];
        END IF;
        INSERT INTO cyclone_runs (id, workflow, input, created_at, started_at, deadline_at, idempotency_key,
                                  traceparent)
        VALUES (v_ids[1], p_workflow, p_inputs[1], v_now, v_now, v_deadline, p_idempotency_key, v_traceparent);
    END IF;
    PERFORM cyclone._insert_steps(p_workflow, v_ids, p_inputs, p_definition, coalesce(p_run_at, v_now),
                                  v_shard.partition_count, v_partition);
    RETURN v_ids;
END
$$;
COMMENT ON FUNCTION cyclone._create_runs(text,jsonb,jsonb[],interval,text,timestamp with time zone,uuid,bigint,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._discard_steps(p_step_ids bigint[], p_error text, p_error_kind text)
 RETURNS SETOF cyclone.cyclone_steps
 LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_step record;
BEGIN
    FOR v_step IN
        WITH old AS (
            SELECT s.id, s.lease_owner FROM ONLY cyclone_steps s WHERE s.id = ANY (p_step_ids) FOR UPDATE
        )
        UPDATE ONLY cyclone_steps s
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
        RETURN QUERY SELECT s.* FROM ONLY cyclone_steps s WHERE s.id = v_step.id;
    END LOOP;
END
$$;
COMMENT ON FUNCTION cyclone._discard_steps(bigint[],text,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._end_run(p_run_id uuid, p_state text, p_error text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $$
DECLARE
    v_finished_at timestamptz;
BEGIN
    UPDATE ONLY cyclone_runs
       SET state = p_state, finished_at = cyclone.now(), paused_at = NULL
     WHERE id = p_run_id AND state IN ('running', 'paused')
    RETURNING finished_at INTO v_finished_at;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO cyclone_archive_queue (run_id, finished_at) VALUES (p_run_id, v_finished_at);
    PERFORM cyclone._cancel_steps(p_run_id, NULL, p_error);
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone._end_run(uuid,text,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._insert_steps(p_workflow text, p_run_ids uuid[], p_inputs jsonb[], p_definition jsonb, p_scheduled_at timestamp with time zone, p_partition_count integer, p_partition integer)
 RETURNS void
 LANGUAGE plpgsql
AS $$
BEGIN
    -- PL/pgSQL, not SQL, so that the plan is cached: submit is a hot path too.
    IF NOT jsonb_path_exists(p_definition, '$.nodes[*].limits') THEN
        INSERT INTO cyclone_steps (id, run_id, workflow, node, handler, kind, state, deps, on_dep_failure, priority,
                                   max_attempts, timeout, signal, child_workflow, max_wait, input, scheduled_at)
        OVERRIDING SYSTEM VALUE
        SELECT nextval('cyclone.cyclone_steps_id_seq') * p_partition_count + p_partition, r.id, p_workflow, n.name, n.handler, n.kind,
               CASE WHEN n.kind = 'task' AND cardinality(n.deps) = 0 THEN 'available' ELSE 'pending' END,
               n.deps, n.on_dep_failure, n.priority, n.max_attempts, n.timeout, n.signal, n.workflow,
               n.max_wait, r.input, p_scheduled_at
          FROM unnest(p_run_ids, p_inputs) AS r(id, input)
         CROSS JOIN jsonb_to_recordset(p_definition -> 'nodes') AS n(
                   name text, handler text, kind text, deps text[], on_dep_failure text, priority int,
                   max_attempts int, timeout interval, signal text, workflow text, max_wait interval);
        RETURN;
    END IF;

    -- Bucket rows first, in a fixed order (two submits creating the same ones
    -- wait for each other, never in a circle). No lock on an existing row.
    INSERT INTO cyclone_buckets (limit_name, bucket)
    SELECT DISTINCT l.name, cyclone._bucket_of(r.input, l.key)
      FROM unnest(p_inputs) AS r(input)
     CROSS JOIN jsonb_array_elements(p_definition -> 'nodes') AS n(node)
     CROSS JOIN jsonb_to_recordset(n.node -> 'limits') AS l(name text, key text)
     ORDER BY 1, 2
    ON CONFLICT (limit_name, bucket) DO NOTHING;

    INSERT INTO cyclone_steps (id, run_id, workflow, node, handler, kind, state, deps, on_dep_failure, priority,
                               max_attempts, timeout, signal, child_workflow, max_wait, input, scheduled_at,
                               buckets, queue_bucket, fair_bucket)
    OVERRIDING SYSTEM VALUE
    SELECT nextval('cyclone.cyclone_steps_id_seq') * p_partition_count + p_partition, r.id, p_workflow, n.name, n.handler, n.kind,
           CASE WHEN n.kind = 'task' AND cardinality(n.deps) = 0 THEN 'available' ELSE 'pending' END,
           n.deps, n.on_dep_failure, n.priority, n.max_attempts, n.timeout, n.signal, n.workflow,
           n.max_wait, r.input, p_scheduled_at,
           coalesce(b.ids, '{}'), coalesce(b.keyed[1], b.ids[1], 0), coalesce(b.keyed[1], 0)
      FROM unnest(p_run_ids, p_inputs) AS r(id, input)
     CROSS JOIN jsonb_to_recordset(p_definition -> 'nodes') AS n(
               name text, handler text, kind text, deps text[], on_dep_failure text, priority int,
               max_attempts int, timeout interval, signal text, workflow text, max_wait interval, limits jsonb)
      LEFT JOIN LATERAL (
          SELECT array_agg(k.id ORDER BY l.ord) AS ids,
                 array_agg(k.id ORDER BY l.ord) FILTER (WHERE l.key IS NOT NULL) AS keyed
            FROM ROWS FROM (jsonb_to_recordset(n.limits) AS (name text, key text)) WITH ORDINALITY AS l(name, key, ord)
            JOIN cyclone_buckets k ON k.limit_name = l.name AND k.bucket = cyclone._bucket_of(r.input, l.key)
      ) b ON n.limits IS NOT NULL;
END
$$;
COMMENT ON FUNCTION cyclone._insert_steps(text,uuid[],jsonb[],jsonb,timestamp with time zone,integer,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._lock_existing_run(p_function text, p_run_id uuid)
 RETURNS cyclone.cyclone_runs
 LANGUAGE plpgsql
AS $$
DECLARE
    v_run cyclone.cyclone_runs;
BEGIN
    IF p_run_id IS NULL THEN
        RAISE EXCEPTION '%: p_run_id must not be NULL', p_function USING ERRCODE = '22004';
    END IF;
    v_run := cyclone._lock_run(p_run_id);
    IF v_run.id IS NULL THEN
        RAISE EXCEPTION 'run % not found', p_run_id USING ERRCODE = 'P0002';
    END IF;
    RETURN v_run;
END
$$;
COMMENT ON FUNCTION cyclone._lock_existing_run(text,uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._lock_run(p_run_id uuid)
 RETURNS cyclone.cyclone_runs
 LANGUAGE plpgsql
AS $$
DECLARE
    v_parent uuid;
    v_run cyclone.cyclone_runs;
BEGIN
    SELECT r.parent_run_id INTO v_parent FROM ONLY cyclone_runs r WHERE r.id = p_run_id;
    IF v_parent IS NOT NULL THEN
        PERFORM cyclone._lock_run(v_parent);
    END IF;
    SELECT r.* INTO v_run FROM ONLY cyclone_runs r WHERE r.id = p_run_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        -- Archived (finished), or archived while this waited for the live row:
        -- a new statement sees it in its day's table.
        SELECT r.* INTO v_run FROM cyclone_runs r WHERE r.id = p_run_id FOR NO KEY UPDATE;
    END IF;
    RETURN v_run;
END
$$;
COMMENT ON FUNCTION cyclone._lock_run(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._root_run(p_run_id uuid)
 RETURNS uuid
 LANGUAGE sql
 STABLE
AS $$
    SELECT a.id FROM cyclone._ancestors(p_run_id) a WHERE a.parent IS NULL
$$;
COMMENT ON FUNCTION cyclone._root_run(uuid) IS NULL;

COMMIT;
