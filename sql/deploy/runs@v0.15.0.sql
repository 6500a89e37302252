-- Deploy cyclone:runs
-- requires: runs@v0.14.0 tables clock limits traces step_workflow shards
-- Reworked after v0.14.0 (only the two functions below change): on a shard
-- (shards.sql), _create_runs puts the runs of one call on one partition (a
-- child run on its parent's, a run with an idempotency key on the key's, any
-- other on one of the shard's at random) and gives them ids that encode it;
-- _insert_steps numbers their steps nextval * partition count + partition.
-- Without a shard row both make the ids they always made. The header of
-- runs@v0.14.0.sql says what else lives in this change, and the lock order.
BEGIN;

DROP FUNCTION cyclone._insert_steps(text, uuid[], jsonb[], jsonb, timestamptz);
CREATE OR REPLACE FUNCTION cyclone._insert_steps(p_workflow text, p_run_ids uuid[], p_inputs jsonb[],
                                                 p_definition jsonb, p_scheduled_at timestamptz,
                                                 p_partition_count int, p_partition int)
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

CREATE OR REPLACE FUNCTION cyclone._create_runs(
    p_workflow text, p_definition jsonb, p_inputs jsonb[], p_deadline interval, p_idempotency_key text,
    p_run_at timestamptz, p_parent_run_id uuid, p_parent_step_id bigint, p_traceparent text DEFAULT NULL)
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
$$;

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;

COMMIT;
