-- Deploy cyclone_router:listings
-- requires: cluster routing
-- Listings and gauges across the shards (SPEC 15): each shard is asked with
-- the filters and the limit (its own listing functions), one after the
-- other, and the router merges what they return; metrics() labels each row
-- with its shard. A shard that cannot be reached fails the call with one
-- error naming it (cluster.sql: _reraise).
BEGIN;

CREATE FUNCTION cyclone._list_runs(p_partition int, p_workflow text, p_state text, p_limit int,
                                   p_before timestamptz)
RETURNS SETOF cyclone.run_row
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.list_runs(p_workflow, p_state, p_limit, p_before);
$$;

CREATE FUNCTION cyclone._list_dead_letters(p_partition int, p_workflow text, p_error_kind text, p_limit int)
RETURNS SETOF cyclone.step_row
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.list_dead_letters(p_workflow, p_error_kind, p_limit);
$$;

CREATE FUNCTION cyclone._metrics(p_partition int)
RETURNS TABLE (name text, labels jsonb, value double precision)
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.metrics();
$$;

-- Runs, newest first, of every shard: each gives its newest p_limit, the
-- router keeps the newest p_limit of them all.
CREATE FUNCTION cyclone.list_runs(
    p_workflow text DEFAULT NULL, p_state text DEFAULT NULL, p_limit int DEFAULT 50,
    p_before timestamptz DEFAULT NULL)
RETURNS SETOF cyclone.run_row
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
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

-- Dead letters, newest first, of every shard, as list_runs merges runs.
CREATE FUNCTION cyclone.list_dead_letters(
    p_workflow text DEFAULT NULL, p_error_kind text DEFAULT NULL, p_limit int DEFAULT 100)
RETURNS SETOF cyclone.step_row
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
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

-- Every shard's gauges, each row labelled with its shard.
CREATE FUNCTION cyclone.metrics()
RETURNS TABLE (name text, labels jsonb, value double precision)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp SET client_min_messages = warning
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

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.list_runs(text, text, int, timestamptz), cyclone.list_dead_letters(text, text, int),
                          cyclone.metrics()
    TO cyclone_client, cyclone_admin;

COMMIT;
