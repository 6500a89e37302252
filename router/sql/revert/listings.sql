-- Revert cyclone_router:listings to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._list_dead_letters(p_partition integer, p_workflow text, p_error_kind text, p_limit integer)
 RETURNS SETOF cyclone.step_row
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.list_dead_letters(p_workflow, p_error_kind, p_limit);
$$;
COMMENT ON FUNCTION cyclone._list_dead_letters(integer,text,text,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._list_runs(p_partition integer, p_workflow text, p_state text, p_limit integer, p_before timestamp with time zone)
 RETURNS SETOF cyclone.run_row
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.list_runs(p_workflow, p_state, p_limit, p_before);
$$;
COMMENT ON FUNCTION cyclone._list_runs(integer,text,text,integer,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._metrics(p_partition integer)
 RETURNS TABLE(name text, labels jsonb, value double precision)
 LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.metrics();
$$;
COMMENT ON FUNCTION cyclone._metrics(integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.list_dead_letters(p_workflow text DEFAULT NULL::text, p_error_kind text DEFAULT NULL::text, p_limit integer DEFAULT 100)
 RETURNS SETOF cyclone.step_row
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
AS $$
DECLARE
    v_partition int;
    v_rows cyclone.step_row[] := '{}'::cyclone.step_row[];
    v_hint text;
BEGIN
    FOR v_partition IN SELECT s.partition FROM cyclone._shard_partitions() s LOOP
        BEGIN
            v_rows := v_rows || ARRAY(SELECT d FROM cyclone._list_dead_letters(v_partition, p_workflow, p_error_kind,
                                                                                p_limit) d);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
            PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
        END;
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(v_rows) d ORDER BY d.completed_at DESC, d.id DESC LIMIT p_limit;
END
$$;
COMMENT ON FUNCTION cyclone.list_dead_letters(text,text,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.list_runs(p_workflow text DEFAULT NULL::text, p_state text DEFAULT NULL::text, p_limit integer DEFAULT 50, p_before timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS SETOF cyclone.run_row
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
AS $$
DECLARE
    v_partition int;
    v_rows cyclone.run_row[] := '{}'::cyclone.run_row[];
    v_hint text;
BEGIN
    FOR v_partition IN SELECT s.partition FROM cyclone._shard_partitions() s LOOP
        BEGIN
            v_rows := v_rows || ARRAY(SELECT r FROM cyclone._list_runs(v_partition, p_workflow, p_state, p_limit,
                                                                        p_before) r);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
            PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
        END;
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(v_rows) r ORDER BY r.created_at DESC, r.id LIMIT p_limit;
END
$$;
COMMENT ON FUNCTION cyclone.list_runs(text,text,integer,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.metrics()
 RETURNS TABLE(name text, labels jsonb, value double precision)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET client_min_messages TO 'warning'
AS $$
DECLARE
    v_shard text;
    v_partition int;
    v_hint text;
BEGIN
    FOR v_shard, v_partition IN SELECT s.shard, s.partition FROM cyclone._shard_partitions() s LOOP
        BEGIN
            RETURN QUERY SELECT m.name, m.labels || jsonb_build_object('shard', v_shard), m.value
                           FROM cyclone._metrics(v_partition) m;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
            PERFORM cyclone._reraise(v_partition, SQLSTATE, SQLERRM, v_hint);
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION cyclone.metrics() IS NULL;

COMMIT;
