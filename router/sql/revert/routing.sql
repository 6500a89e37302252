-- Revert cyclone_router:routing to its previous version: the deploy script it had before
-- (sql/deploy/routing@v0.21.0.sql), and a drop of each function the new version added.
BEGIN;

DROP FUNCTION IF EXISTS cyclone._emit_event(int, text, jsonb);
DROP FUNCTION IF EXISTS cyclone._rerun(int, uuid, text, text);
DROP FUNCTION IF EXISTS cyclone._signal_with_start(int, text, text, text, jsonb, jsonb);
DROP FUNCTION IF EXISTS cyclone.emit_event(text, jsonb);
DROP FUNCTION IF EXISTS cyclone.rerun(uuid, text, text);
DROP FUNCTION IF EXISTS cyclone.signal_with_start(text, text, text, jsonb, jsonb);
-- 0.22.0's submit took four more arguments (SPEC 17), and its _submit with them.
DROP FUNCTION IF EXISTS cyclone._submit(int, text, jsonb, interval, text, timestamptz, text, int, text, interval, interval, interval);
DROP FUNCTION IF EXISTS cyclone.submit(text, jsonb, interval, text, timestamptz, text, int, text, interval, interval, interval);

-- router/sql/engine/20_routing.sql: change `routing`.
-- The routed functions (SPEC 15), with the signatures a shard's have. Each is
-- a PL/Proxy function cyclone._f(p_partition, ...) that runs cyclone.f(...) on
-- the shard holding p_partition, under a PL/pgSQL cyclone.f(...) that picks
-- the partition from what the call names (a run or step id, an idempotency
-- key, a schedule's name) and raises the shard's error as the shard raised it
-- (cluster.sql: _reraise). define_workflow, define_limit and drop_limit run on
-- every shard, one after the other: not atomically (a shard that fails stops
-- the call, and the shards before it keep what they did).
-- Every call commits on its shard at once: PL/Proxy runs it in autocommit.
-- This file is the change's complete current source: edit it here and ship it with
-- `make rework ROUTER=1 CHANGE=routing NOTE="..."` (docs/architecture.md, Changing the engine).

-- 0.21.0 added p_priority to submit and submit_many (SPEC 16), as on a shard: the older signatures are
-- dropped, not left as overloads.
DROP FUNCTION IF EXISTS cyclone._submit(int, text, jsonb, interval, text, timestamptz, text);
DROP FUNCTION IF EXISTS cyclone.submit(text, jsonb, interval, text, timestamptz, text);
DROP FUNCTION IF EXISTS cyclone._submit_many(int, text, jsonb[], interval);
DROP FUNCTION IF EXISTS cyclone.submit_many(text, jsonb[], interval);

CREATE OR REPLACE FUNCTION cyclone._submit(p_partition int, p_workflow text, p_input jsonb, p_deadline interval, p_idempotency_key text, p_run_at timestamptz, p_traceparent text, p_priority int)
RETURNS uuid
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.submit(p_workflow, p_input, p_deadline, p_idempotency_key, p_run_at, p_traceparent, p_priority);
$$;

-- A run with an idempotency key goes to the key's partition, so the key deduplicates; any other to a partition at random.
CREATE OR REPLACE FUNCTION cyclone.submit(p_workflow text, p_input jsonb DEFAULT '{}', p_deadline interval DEFAULT NULL, p_idempotency_key text DEFAULT NULL, p_run_at timestamptz DEFAULT NULL, p_traceparent text DEFAULT NULL, p_priority int DEFAULT 0)
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._submit_partition(p_workflow, p_idempotency_key);
    v_hint text;
BEGIN
    RETURN cyclone._submit(v_partition, p_workflow, p_input, p_deadline, p_idempotency_key, p_run_at, p_traceparent,
                           p_priority);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
    RETURN NULL;  -- not reached: _reraise raises
END
$$;

CREATE OR REPLACE FUNCTION cyclone._submit_many(p_partition int, p_workflow text, p_inputs jsonb[], p_deadline interval, p_priority int)
RETURNS SETOF uuid
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.submit_many(p_workflow, p_inputs, p_deadline, p_priority);
$$;

-- The whole batch goes to one partition, so it is all or nothing.
CREATE OR REPLACE FUNCTION cyclone.submit_many(p_workflow text, p_inputs jsonb[], p_deadline interval DEFAULT NULL, p_priority int DEFAULT 0)
RETURNS SETOF uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
AS $$
DECLARE
    v_partition int := cyclone._submit_partition(p_workflow, NULL);
    v_hint text;
BEGIN
    RETURN QUERY SELECT * FROM cyclone._submit_many(v_partition, p_workflow, p_inputs, p_deadline, p_priority);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
    PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
END
$$;

CREATE OR REPLACE FUNCTION cyclone._get_run(p_partition int, p_run_id uuid)
RETURNS TABLE (id uuid, workflow text, state text, error_kind text, error text, input jsonb, output jsonb, created_at timestamptz, finished_at timestamptz, deadline_at timestamptz)
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.get_run(p_run_id);
$$;

CREATE OR REPLACE FUNCTION cyclone.get_run(p_run_id uuid)
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

CREATE OR REPLACE FUNCTION cyclone._signal(p_partition int, p_run_id uuid, p_name text, p_payload jsonb)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.signal(p_run_id, p_name, p_payload);
$$;

CREATE OR REPLACE FUNCTION cyclone.signal(p_run_id uuid, p_name text, p_payload jsonb DEFAULT NULL)
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

CREATE OR REPLACE FUNCTION cyclone._explain_step(p_partition int, p_step_id bigint)
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.explain_step(p_step_id);
$$;

CREATE OR REPLACE FUNCTION cyclone.explain_step(p_step_id bigint)
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

CREATE OR REPLACE FUNCTION cyclone._retry(p_partition int, p_run_id uuid, p_node text, p_additional_attempts int, p_reason text)
RETURNS void
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.retry(p_run_id, p_node, p_additional_attempts, p_reason);
$$;

CREATE OR REPLACE FUNCTION cyclone.retry(p_run_id uuid, p_node text, p_additional_attempts int DEFAULT 0, p_reason text DEFAULT NULL)
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

CREATE OR REPLACE FUNCTION cyclone._retry_all(p_partition int, p_run_id uuid, p_reason text)
RETURNS int
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.retry_all(p_run_id, p_reason);
$$;

CREATE OR REPLACE FUNCTION cyclone.retry_all(p_run_id uuid, p_reason text DEFAULT NULL)
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

CREATE OR REPLACE FUNCTION cyclone._cancel(p_partition int, p_run_id uuid, p_reason text)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.cancel(p_run_id, p_reason);
$$;

CREATE OR REPLACE FUNCTION cyclone.cancel(p_run_id uuid, p_reason text DEFAULT NULL)
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

CREATE OR REPLACE FUNCTION cyclone._pause(p_partition int, p_run_id uuid)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.pause(p_run_id);
$$;

CREATE OR REPLACE FUNCTION cyclone.pause(p_run_id uuid)
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

CREATE OR REPLACE FUNCTION cyclone._resume(p_partition int, p_run_id uuid)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.resume(p_run_id);
$$;

CREATE OR REPLACE FUNCTION cyclone.resume(p_run_id uuid)
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

CREATE OR REPLACE FUNCTION cyclone._list_steps(p_partition int, p_run_id uuid)
RETURNS SETOF cyclone.step_row
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.list_steps(p_run_id);
$$;

CREATE OR REPLACE FUNCTION cyclone.list_steps(p_run_id uuid)
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

CREATE OR REPLACE FUNCTION cyclone._schedule(p_partition int, p_name text, p_cron text, p_workflow text, p_input jsonb, p_timezone text, p_overlap text, p_catchup interval, p_deadline interval)
RETURNS void
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.schedule(p_name, p_cron, p_workflow, p_input, p_timezone, p_overlap, p_catchup, p_deadline);
$$;

-- A schedule lives on the partition of its name, so each slot fires once in the whole deployment.
CREATE OR REPLACE FUNCTION cyclone.schedule(p_name text, p_cron text, p_workflow text, p_input jsonb DEFAULT '{}', p_timezone text DEFAULT 'UTC', p_overlap text DEFAULT 'skip', p_catchup interval DEFAULT '1 hour', p_deadline interval DEFAULT NULL)
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

CREATE OR REPLACE FUNCTION cyclone._unschedule(p_partition int, p_name text)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.unschedule(p_name);
$$;

CREATE OR REPLACE FUNCTION cyclone.unschedule(p_name text)
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

CREATE OR REPLACE FUNCTION cyclone._pause_schedule(p_partition int, p_name text)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.pause_schedule(p_name);
$$;

CREATE OR REPLACE FUNCTION cyclone.pause_schedule(p_name text)
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

CREATE OR REPLACE FUNCTION cyclone._resume_schedule(p_partition int, p_name text)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.resume_schedule(p_name);
$$;

CREATE OR REPLACE FUNCTION cyclone.resume_schedule(p_name text)
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

CREATE OR REPLACE FUNCTION cyclone._backfill(p_partition int, p_name text, p_from timestamptz, p_to timestamptz)
RETURNS int
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.backfill(p_name, p_from, p_to);
$$;

CREATE OR REPLACE FUNCTION cyclone.backfill(p_name text, p_from timestamptz, p_to timestamptz)
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

CREATE OR REPLACE FUNCTION cyclone._define_workflow(p_partition int, p_name text, p_definition jsonb)
RETURNS SETOF void
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.define_workflow(p_name, p_definition);
$$;

CREATE OR REPLACE FUNCTION cyclone.define_workflow(p_name text, p_definition jsonb)
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

CREATE OR REPLACE FUNCTION cyclone._define_limit(p_partition int, p_name text, p_concurrency int, p_rate int, p_period interval)
RETURNS SETOF void
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.define_limit(p_name, p_concurrency, p_rate, p_period);
$$;

CREATE OR REPLACE FUNCTION cyclone.define_limit(p_name text, p_concurrency int DEFAULT NULL, p_rate int DEFAULT NULL, p_period interval DEFAULT NULL)
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

CREATE OR REPLACE FUNCTION cyclone._drop_limit(p_partition int, p_name text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT cyclone.drop_limit(p_name);
$$;

CREATE OR REPLACE FUNCTION cyclone.drop_limit(p_name text)
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
CREATE OR REPLACE FUNCTION cyclone.now()
RETURNS timestamptz
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON ANY;
    SELECT cyclone.now();
$$;

-- next_fire computes only (SPEC 13): any shard answers.
CREATE OR REPLACE FUNCTION cyclone.next_fire(p_cron text, p_after timestamptz, p_timezone text DEFAULT 'UTC')
RETURNS timestamptz
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON ANY;
    SELECT cyclone.next_fire(p_cron, p_after, p_timezone);
$$;

-- (listings.sql: the listings and metrics, pushed down to every shard)

-- What \df+ shows for each function a role may call.
COMMENT ON FUNCTION cyclone.now() IS 'The engine clock of one shard (every shard keeps the same offset).';
COMMENT ON FUNCTION cyclone.submit(text, jsonb, interval, text, timestamptz, text, int) IS 'Routed submit: on the idempotency key''s partition when there is a key, else on a partition at random.';
COMMENT ON FUNCTION cyclone.submit_many(text, jsonb[], interval, int) IS 'Routed submit_many: the whole batch on one partition chosen at random, so it is all or nothing.';
COMMENT ON FUNCTION cyclone.get_run(uuid) IS 'Routed get_run: asks the shard that holds the run.';
COMMENT ON FUNCTION cyclone.signal(uuid, text, jsonb) IS 'Routed signal: sent to the shard that holds the run.';
COMMENT ON FUNCTION cyclone.explain_step(bigint) IS 'Routed explain_step: asks the shard that holds the step.';
COMMENT ON FUNCTION cyclone.list_steps(uuid) IS 'Routed list_steps: the steps of one run, from the shard that holds it.';
COMMENT ON FUNCTION cyclone.define_workflow(text, jsonb) IS 'Routed define_workflow: defines the workflow on every shard, one after the other (not atomically).';
COMMENT ON FUNCTION cyclone.define_limit(text, int, int, interval) IS 'Routed define_limit: defines the limit on every shard, one after the other (not atomically).';
COMMENT ON FUNCTION cyclone.drop_limit(text) IS 'Routed drop_limit: drops the limit on every shard, one after the other (not atomically).';
COMMENT ON FUNCTION cyclone.schedule(text, text, text, jsonb, text, text, interval, interval) IS 'Routed schedule: on the partition of the schedule''s name.';
COMMENT ON FUNCTION cyclone.unschedule(text) IS 'Routed unschedule: on the partition of the schedule''s name.';
COMMENT ON FUNCTION cyclone.pause_schedule(text) IS 'Routed pause_schedule: on the partition of the schedule''s name.';
COMMENT ON FUNCTION cyclone.resume_schedule(text) IS 'Routed resume_schedule: on the partition of the schedule''s name.';
COMMENT ON FUNCTION cyclone.backfill(text, timestamptz, timestamptz) IS 'Routed backfill: on the partition of the schedule''s name.';
COMMENT ON FUNCTION cyclone.retry(uuid, text, int, text) IS 'Routed retry: on the shard that holds the run.';
COMMENT ON FUNCTION cyclone.retry_all(uuid, text) IS 'Routed retry_all: on the shard that holds the run.';
COMMENT ON FUNCTION cyclone.cancel(uuid, text) IS 'Routed cancel: on the shard that holds the run.';
COMMENT ON FUNCTION cyclone.pause(uuid) IS 'Routed pause: on the shard that holds the run.';
COMMENT ON FUNCTION cyclone.resume(uuid) IS 'Routed resume: on the shard that holds the run.';
COMMENT ON FUNCTION cyclone.next_fire(text, timestamptz, text) IS 'Routed next_fire: computes only, so any shard answers.';

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.now(), cyclone.next_fire(text, timestamptz, text)
    TO cyclone_worker, cyclone_client, cyclone_admin;
GRANT EXECUTE ON FUNCTION cyclone.submit(text, jsonb, interval, text, timestamptz, text, int),
                          cyclone.submit_many(text, jsonb[], interval, int), cyclone.get_run(uuid),
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
