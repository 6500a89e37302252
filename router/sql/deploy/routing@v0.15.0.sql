-- Deploy cyclone_router:routing
-- requires: cluster
-- The routed functions (SPEC 15), with the signatures a shard's have. Each is
-- a PL/Proxy function cyclone._f(p_partition, ...) that runs cyclone.f(...) on
-- the shard holding p_partition, under a PL/pgSQL cyclone.f(...) that picks
-- the partition from what the call names (a run or step id, an idempotency
-- key, a schedule's name) and raises the shard's error as the shard raised it
-- (cluster.sql: _reraise). define_workflow, define_limit and drop_limit run on
-- every shard, one after the other: not atomically (a shard that fails stops
-- the call, and the shards before it keep what they did).
-- Every call commits on its shard at once: PL/Proxy runs it in autocommit.
BEGIN;

-- The row type of cyclone_v_steps on a shard (list_steps, list_dead_letters).
CREATE TYPE cyclone.step_row AS (
    id bigint, run_id uuid, workflow text, node text, handler text, kind text, state text, attempt int,
    max_attempts int, reclaims int, error text, error_kind text, scheduled_at timestamptz, started_at timestamptz,
    completed_at timestamptz, deps text[], on_dep_failure text, priority int, timeout interval, lease_owner text,
    lease_expiry timestamptz, lease_generation bigint, heartbeat_at timestamptz, signal text, max_wait interval,
    wait_expires_at timestamptz, child_run_id uuid, input jsonb, output jsonb);
-- And of cyclone_v_runs (list_runs).
CREATE TYPE cyclone.run_row AS (
    id uuid, workflow text, state text, input jsonb, output jsonb, created_at timestamptz, started_at timestamptz,
    finished_at timestamptz, deadline_at timestamptz, paused_at timestamptz, parent_run_id uuid,
    parent_step_id bigint, idempotency_key text);

CREATE FUNCTION cyclone._submit(p_partition int, p_workflow text, p_input jsonb, p_deadline interval, p_idempotency_key text, p_run_at timestamptz, p_traceparent text)
RETURNS uuid
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.submit(p_workflow, p_input, p_deadline, p_idempotency_key, p_run_at, p_traceparent);
$$;

-- A run with an idempotency key goes to the key's partition, so the key deduplicates; any other to a partition at random.
CREATE FUNCTION cyclone.submit(p_workflow text, p_input jsonb DEFAULT '{}', p_deadline interval DEFAULT NULL, p_idempotency_key text DEFAULT NULL, p_run_at timestamptz DEFAULT NULL, p_traceparent text DEFAULT NULL)
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._submit_partition(p_workflow, p_idempotency_key);
    v_hint text;
BEGIN
    RETURN cyclone._submit(v_partition, p_workflow, p_input, p_deadline, p_idempotency_key, p_run_at, p_traceparent);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._submit_many(p_partition int, p_workflow text, p_inputs jsonb[], p_deadline interval)
RETURNS SETOF uuid
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.submit_many(p_workflow, p_inputs, p_deadline);
$$;

-- The whole batch goes to one partition, so it is all or nothing.
CREATE FUNCTION cyclone.submit_many(p_workflow text, p_inputs jsonb[], p_deadline interval DEFAULT NULL)
RETURNS SETOF uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._submit_partition(p_workflow, NULL);
    v_hint text;
BEGIN
    RETURN QUERY SELECT * FROM cyclone._submit_many(v_partition, p_workflow, p_inputs, p_deadline);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
END
$$;

CREATE FUNCTION cyclone._get_run(p_partition int, p_run_id uuid)
RETURNS TABLE (id uuid, workflow text, state text, error_kind text, error text, input jsonb, output jsonb, created_at timestamptz, finished_at timestamptz, deadline_at timestamptz)
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.get_run(p_run_id);
$$;

CREATE FUNCTION cyclone.get_run(p_run_id uuid)
RETURNS TABLE (id uuid, workflow text, state text, error_kind text, error text, input jsonb, output jsonb, created_at timestamptz, finished_at timestamptz, deadline_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._run_partition(p_run_id);
    v_hint text;
BEGIN
    RETURN QUERY SELECT * FROM cyclone._get_run(v_partition, p_run_id);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
END
$$;

CREATE FUNCTION cyclone._signal(p_partition int, p_run_id uuid, p_name text, p_payload jsonb)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.signal(p_run_id, p_name, p_payload);
$$;

CREATE FUNCTION cyclone.signal(p_run_id uuid, p_name text, p_payload jsonb DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._run_partition(p_run_id);
    v_hint text;
BEGIN
    RETURN cyclone._signal(v_partition, p_run_id, p_name, p_payload);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._explain_step(p_partition int, p_step_id bigint)
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.explain_step(p_step_id);
$$;

CREATE FUNCTION cyclone.explain_step(p_step_id bigint)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._step_partition(p_step_id);
    v_hint text;
BEGIN
    RETURN cyclone._explain_step(v_partition, p_step_id);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._retry(p_partition int, p_run_id uuid, p_node text, p_additional_attempts int, p_reason text)
RETURNS void
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.retry(p_run_id, p_node, p_additional_attempts, p_reason);
$$;

CREATE FUNCTION cyclone.retry(p_run_id uuid, p_node text, p_additional_attempts int DEFAULT 0, p_reason text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._run_partition(p_run_id);
    v_hint text;
BEGIN
    PERFORM cyclone._retry(v_partition, p_run_id, p_node, p_additional_attempts, p_reason);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
END
$$;

CREATE FUNCTION cyclone._retry_all(p_partition int, p_run_id uuid, p_reason text)
RETURNS int
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.retry_all(p_run_id, p_reason);
$$;

CREATE FUNCTION cyclone.retry_all(p_run_id uuid, p_reason text DEFAULT NULL)
RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._run_partition(p_run_id);
    v_hint text;
BEGIN
    RETURN cyclone._retry_all(v_partition, p_run_id, p_reason);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._cancel(p_partition int, p_run_id uuid, p_reason text)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.cancel(p_run_id, p_reason);
$$;

CREATE FUNCTION cyclone.cancel(p_run_id uuid, p_reason text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._run_partition(p_run_id);
    v_hint text;
BEGIN
    RETURN cyclone._cancel(v_partition, p_run_id, p_reason);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._pause(p_partition int, p_run_id uuid)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.pause(p_run_id);
$$;

CREATE FUNCTION cyclone.pause(p_run_id uuid)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._run_partition(p_run_id);
    v_hint text;
BEGIN
    RETURN cyclone._pause(v_partition, p_run_id);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._resume(p_partition int, p_run_id uuid)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.resume(p_run_id);
$$;

CREATE FUNCTION cyclone.resume(p_run_id uuid)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._run_partition(p_run_id);
    v_hint text;
BEGIN
    RETURN cyclone._resume(v_partition, p_run_id);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._list_steps(p_partition int, p_run_id uuid)
RETURNS SETOF cyclone.step_row
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.list_steps(p_run_id);
$$;

CREATE FUNCTION cyclone.list_steps(p_run_id uuid)
RETURNS SETOF cyclone.step_row
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._run_partition(p_run_id);
    v_hint text;
BEGIN
    RETURN QUERY SELECT * FROM cyclone._list_steps(v_partition, p_run_id);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
END
$$;

CREATE FUNCTION cyclone._schedule(p_partition int, p_name text, p_cron text, p_workflow text, p_input jsonb, p_timezone text, p_overlap text, p_catchup interval, p_deadline interval)
RETURNS void
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.schedule(p_name, p_cron, p_workflow, p_input, p_timezone, p_overlap, p_catchup, p_deadline);
$$;

-- A schedule lives on the partition of its name, so each slot fires once in the whole deployment.
CREATE FUNCTION cyclone.schedule(p_name text, p_cron text, p_workflow text, p_input jsonb DEFAULT '{}', p_timezone text DEFAULT 'UTC', p_overlap text DEFAULT 'skip', p_catchup interval DEFAULT '1 hour', p_deadline interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._schedule_partition(p_name);
    v_hint text;
BEGIN
    PERFORM cyclone._schedule(v_partition, p_name, p_cron, p_workflow, p_input, p_timezone, p_overlap, p_catchup, p_deadline);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
END
$$;

CREATE FUNCTION cyclone._unschedule(p_partition int, p_name text)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.unschedule(p_name);
$$;

CREATE FUNCTION cyclone.unschedule(p_name text)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._schedule_partition(p_name);
    v_hint text;
BEGIN
    RETURN cyclone._unschedule(v_partition, p_name);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._pause_schedule(p_partition int, p_name text)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.pause_schedule(p_name);
$$;

CREATE FUNCTION cyclone.pause_schedule(p_name text)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._schedule_partition(p_name);
    v_hint text;
BEGIN
    RETURN cyclone._pause_schedule(v_partition, p_name);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._resume_schedule(p_partition int, p_name text)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.resume_schedule(p_name);
$$;

CREATE FUNCTION cyclone.resume_schedule(p_name text)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._schedule_partition(p_name);
    v_hint text;
BEGIN
    RETURN cyclone._resume_schedule(v_partition, p_name);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._backfill(p_partition int, p_name text, p_from timestamptz, p_to timestamptz)
RETURNS int
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.backfill(p_name, p_from, p_to);
$$;

CREATE FUNCTION cyclone.backfill(p_name text, p_from timestamptz, p_to timestamptz)
RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._schedule_partition(p_name);
    v_hint text;
BEGIN
    RETURN cyclone._backfill(v_partition, p_name, p_from, p_to);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE FUNCTION cyclone._define_workflow(p_partition int, p_name text, p_definition jsonb)
RETURNS SETOF void
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.define_workflow(p_name, p_definition);
$$;

CREATE FUNCTION cyclone.define_workflow(p_name text, p_definition jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int;
    v_hint text;
BEGIN
    FOR v_partition IN SELECT s.partition FROM cyclone._shard_partitions() s LOOP
        BEGIN
            PERFORM cyclone._define_workflow(v_partition, p_name, p_definition);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
            PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
        END;
    END LOOP;
END
$$;

CREATE FUNCTION cyclone._define_limit(p_partition int, p_name text, p_concurrency int, p_rate int, p_period interval)
RETURNS SETOF void
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.define_limit(p_name, p_concurrency, p_rate, p_period);
$$;

CREATE FUNCTION cyclone.define_limit(p_name text, p_concurrency int DEFAULT NULL, p_rate int DEFAULT NULL, p_period interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int;
    v_hint text;
BEGIN
    FOR v_partition IN SELECT s.partition FROM cyclone._shard_partitions() s LOOP
        BEGIN
            PERFORM cyclone._define_limit(v_partition, p_name, p_concurrency, p_rate, p_period);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
            PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
        END;
    END LOOP;
END
$$;

CREATE FUNCTION cyclone._drop_limit(p_partition int, p_name text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.drop_limit(p_name);
$$;

CREATE FUNCTION cyclone.drop_limit(p_name text)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int;
    v_hint text;
    v_any boolean := false;
BEGIN
    FOR v_partition IN SELECT s.partition FROM cyclone._shard_partitions() s LOOP
        BEGIN
            v_any := (SELECT bool_or(d) FROM cyclone._drop_limit(v_partition, p_name) d) OR v_any;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
            PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
        END;
    END LOOP;
    RETURN v_any;
END
$$;

-- The clock of a shard picked at random (every shard's is the database's
-- clock, which is the same everywhere unless a test moved one).
CREATE FUNCTION cyclone.now()
RETURNS timestamptz
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON ANY;
    SELECT cyclone.now();
$$;

-- next_fire computes only (SPEC 13): any shard answers.
CREATE FUNCTION cyclone.next_fire(p_cron text, p_after timestamptz, p_timezone text DEFAULT 'UTC')
RETURNS timestamptz
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON ANY;
    SELECT cyclone.next_fire(p_cron, p_after, p_timezone);
$$;

-- (listings.sql: the listings and metrics, pushed down to every shard)

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.now(), cyclone.next_fire(text, timestamptz, text)
    TO cyclone_worker, cyclone_client, cyclone_admin;
GRANT EXECUTE ON FUNCTION cyclone.submit(text, jsonb, interval, text, timestamptz, text),
                          cyclone.submit_many(text, jsonb[], interval), cyclone.get_run(uuid),
                          cyclone.signal(uuid, text, jsonb), cyclone.explain_step(bigint), cyclone.list_steps(uuid)
    TO cyclone_client, cyclone_admin;
GRANT EXECUTE ON FUNCTION cyclone.define_workflow(text, jsonb), cyclone.define_limit(text, int, int, interval),
                          cyclone.drop_limit(text),
                          cyclone.schedule(text, text, text, jsonb, text, text, interval, interval),
                          cyclone.unschedule(text), cyclone.pause_schedule(text), cyclone.resume_schedule(text),
                          cyclone.backfill(text, timestamptz, timestamptz)
    TO cyclone_worker, cyclone_admin;
GRANT EXECUTE ON FUNCTION cyclone.retry(uuid, text, int, text), cyclone.retry_all(uuid, text),
                          cyclone.cancel(uuid, text), cyclone.pause(uuid), cyclone.resume(uuid)
    TO cyclone_admin;

COMMIT;
