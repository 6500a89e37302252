-- Revert cyclone_router:routing to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._backfill(p_partition integer, p_name text, p_from timestamp with time zone, p_to timestamp with time zone)
 RETURNS integer
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.backfill(p_name, p_from, p_to);
$$;
COMMENT ON FUNCTION cyclone._backfill(integer,text,timestamp with time zone,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._cancel(p_partition integer, p_run_id uuid, p_reason text)
 RETURNS boolean
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.cancel(p_run_id, p_reason);
$$;
COMMENT ON FUNCTION cyclone._cancel(integer,uuid,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._define_limit(p_partition integer, p_name text, p_concurrency integer, p_rate integer, p_period interval)
 RETURNS SETOF void
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.define_limit(p_name, p_concurrency, p_rate, p_period);
$$;
COMMENT ON FUNCTION cyclone._define_limit(integer,text,integer,integer,interval) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._define_workflow(p_partition integer, p_name text, p_definition jsonb)
 RETURNS SETOF void
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.define_workflow(p_name, p_definition);
$$;
COMMENT ON FUNCTION cyclone._define_workflow(integer,text,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._drop_limit(p_partition integer, p_name text)
 RETURNS SETOF boolean
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.drop_limit(p_name);
$$;
COMMENT ON FUNCTION cyclone._drop_limit(integer,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._explain_step(p_partition integer, p_step_id bigint)
 RETURNS jsonb
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.explain_step(p_step_id);
$$;
COMMENT ON FUNCTION cyclone._explain_step(integer,bigint) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._get_run(p_partition integer, p_run_id uuid)
 RETURNS TABLE(id uuid, workflow text, state text, error_kind text, error text, input jsonb, output jsonb, created_at timestamp with time zone, finished_at timestamp with time zone, deadline_at timestamp with time zone)
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.get_run(p_run_id);
$$;
COMMENT ON FUNCTION cyclone._get_run(integer,uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._list_steps(p_partition integer, p_run_id uuid)
 RETURNS SETOF cyclone.step_row
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.list_steps(p_run_id);
$$;
COMMENT ON FUNCTION cyclone._list_steps(integer,uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._pause(p_partition integer, p_run_id uuid)
 RETURNS boolean
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.pause(p_run_id);
$$;
COMMENT ON FUNCTION cyclone._pause(integer,uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._pause_schedule(p_partition integer, p_name text)
 RETURNS boolean
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.pause_schedule(p_name);
$$;
COMMENT ON FUNCTION cyclone._pause_schedule(integer,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._resume(p_partition integer, p_run_id uuid)
 RETURNS boolean
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.resume(p_run_id);
$$;
COMMENT ON FUNCTION cyclone._resume(integer,uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._resume_schedule(p_partition integer, p_name text)
 RETURNS boolean
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.resume_schedule(p_name);
$$;
COMMENT ON FUNCTION cyclone._resume_schedule(integer,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._retry(p_partition integer, p_run_id uuid, p_node text, p_additional_attempts integer, p_reason text)
 RETURNS void
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.retry(p_run_id, p_node, p_additional_attempts, p_reason);
$$;
COMMENT ON FUNCTION cyclone._retry(integer,uuid,text,integer,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._retry_all(p_partition integer, p_run_id uuid, p_reason text)
 RETURNS integer
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.retry_all(p_run_id, p_reason);
$$;
COMMENT ON FUNCTION cyclone._retry_all(integer,uuid,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._schedule(p_partition integer, p_name text, p_cron text, p_workflow text, p_input jsonb, p_timezone text, p_overlap text, p_catchup interval, p_deadline interval)
 RETURNS void
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.schedule(p_name, p_cron, p_workflow, p_input, p_timezone, p_overlap, p_catchup, p_deadline);
$$;
COMMENT ON FUNCTION cyclone._schedule(integer,text,text,text,jsonb,text,text,interval,interval) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._signal(p_partition integer, p_run_id uuid, p_name text, p_payload jsonb)
 RETURNS boolean
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.signal(p_run_id, p_name, p_payload);
$$;
COMMENT ON FUNCTION cyclone._signal(integer,uuid,text,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._submit(p_partition integer, p_workflow text, p_input jsonb, p_deadline interval, p_idempotency_key text, p_run_at timestamp with time zone, p_traceparent text)
 RETURNS uuid
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.submit(p_workflow, p_input, p_deadline, p_idempotency_key, p_run_at, p_traceparent);
$$;
COMMENT ON FUNCTION cyclone._submit(integer,text,jsonb,interval,text,timestamp with time zone,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._submit_many(p_partition integer, p_workflow text, p_inputs jsonb[], p_deadline interval)
 RETURNS SETOF uuid
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.submit_many(p_workflow, p_inputs, p_deadline);
$$;
COMMENT ON FUNCTION cyclone._submit_many(integer,text,jsonb[],interval) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._unschedule(p_partition integer, p_name text)
 RETURNS boolean
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.unschedule(p_name);
$$;
COMMENT ON FUNCTION cyclone._unschedule(integer,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.backfill(p_name text, p_from timestamp with time zone, p_to timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.backfill(text,timestamp with time zone,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.cancel(p_run_id uuid, p_reason text DEFAULT NULL::text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.cancel(uuid,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.define_limit(p_name text, p_concurrency integer DEFAULT NULL::integer, p_rate integer DEFAULT NULL::integer, p_period interval DEFAULT NULL::interval)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.define_limit(text,integer,integer,interval) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.define_workflow(p_name text, p_definition jsonb)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.define_workflow(text,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.drop_limit(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.drop_limit(text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.explain_step(p_step_id bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.explain_step(bigint) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.get_run(p_run_id uuid)
 RETURNS TABLE(id uuid, workflow text, state text, error_kind text, error text, input jsonb, output jsonb, created_at timestamp with time zone, finished_at timestamp with time zone, deadline_at timestamp with time zone)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.get_run(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.list_steps(p_run_id uuid)
 RETURNS SETOF cyclone.step_row
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.list_steps(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.next_fire(p_cron text, p_after timestamp with time zone, p_timezone text DEFAULT 'UTC'::text)
 RETURNS timestamp with time zone
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON ANY;
    SELECT cyclone.next_fire(p_cron, p_after, p_timezone);
$$;
COMMENT ON FUNCTION cyclone.next_fire(text,timestamp with time zone,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.now()
 RETURNS timestamp with time zone
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON ANY;
    SELECT cyclone.now();
$$;
COMMENT ON FUNCTION cyclone.now() IS NULL;

CREATE OR REPLACE FUNCTION cyclone.pause(p_run_id uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.pause(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.pause_schedule(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.pause_schedule(text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.resume(p_run_id uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.resume(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.resume_schedule(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.resume_schedule(text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.retry(p_run_id uuid, p_node text, p_additional_attempts integer DEFAULT 0, p_reason text DEFAULT NULL::text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.retry(uuid,text,integer,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.retry_all(p_run_id uuid, p_reason text DEFAULT NULL::text)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.retry_all(uuid,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.schedule(p_name text, p_cron text, p_workflow text, p_input jsonb DEFAULT '{}'::jsonb, p_timezone text DEFAULT 'UTC'::text, p_overlap text DEFAULT 'skip'::text, p_catchup interval DEFAULT '01:00:00'::interval, p_deadline interval DEFAULT NULL::interval)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.schedule(text,text,text,jsonb,text,text,interval,interval) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.signal(p_run_id uuid, p_name text, p_payload jsonb DEFAULT NULL::jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.signal(uuid,text,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.submit(p_workflow text, p_input jsonb DEFAULT '{}'::jsonb, p_deadline interval DEFAULT NULL::interval, p_idempotency_key text DEFAULT NULL::text, p_run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_traceparent text DEFAULT NULL::text)
 RETURNS uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.submit(text,jsonb,interval,text,timestamp with time zone,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.submit_many(p_workflow text, p_inputs jsonb[], p_deadline interval DEFAULT NULL::interval)
 RETURNS SETOF uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.submit_many(text,jsonb[],interval) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.unschedule(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
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
COMMENT ON FUNCTION cyclone.unschedule(text) IS NULL;

COMMIT;
