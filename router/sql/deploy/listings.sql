-- Deploy cyclone_router:listings
-- requires: listings@v0.15.0 cluster routing
-- A complete copy of sql/engine/30_listings.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- router/sql/engine/30_listings.sql: change `listings`.
-- Listings and gauges across the shards (SPEC 15): each shard is asked with
-- the filters and the limit (its own listing functions), one after the
-- other, and the router merges what they return; metrics() labels each row
-- with its shard. A shard that cannot be reached fails the call with one
-- error naming it (cluster.sql: _reraise).
-- This file is the change's complete current source: edit it here and ship it with
-- `make rework ROUTER=1 CHANGE=listings NOTE="..."` (docs/architecture.md, Changing the engine).

CREATE OR REPLACE FUNCTION cyclone._list_runs(p_partition int, p_workflow text, p_state text, p_limit int,
                                   p_before timestamptz)
RETURNS SETOF cyclone.run_row
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.list_runs(p_workflow, p_state, p_limit, p_before);
$$;

CREATE OR REPLACE FUNCTION cyclone._list_dead_letters(p_partition int, p_workflow text, p_error_kind text, p_limit int)
RETURNS SETOF cyclone.step_row
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.list_dead_letters(p_workflow, p_error_kind, p_limit);
$$;

CREATE OR REPLACE FUNCTION cyclone._metrics(p_partition int)
RETURNS TABLE (name text, labels jsonb, value double precision)
LANGUAGE plproxy
AS $$
    CLUSTER 'cyclone';
    RUN ON p_partition;
    SELECT * FROM cyclone.metrics();
$$;

-- Runs, newest first, of every shard: each gives its newest p_limit, the
-- router keeps the newest p_limit of them all.
CREATE OR REPLACE FUNCTION cyclone.list_runs(
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
CREATE OR REPLACE FUNCTION cyclone.list_dead_letters(
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
CREATE OR REPLACE FUNCTION cyclone.metrics()
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

-- What \df+ shows for each function a role may call.
COMMENT ON FUNCTION cyclone.list_runs(text, text, int, timestamptz) IS 'Runs across the shards: each shard''s list_runs with the filters and limit, merged newest first and cut to the limit.';
COMMENT ON FUNCTION cyclone.list_dead_letters(text, text, int) IS 'Dead letters across the shards: each shard''s list_dead_letters with the filters and limit, merged and cut to the limit.';
COMMENT ON FUNCTION cyclone.metrics() IS 'The gauges of every shard, each row labelled with its shard.';

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.list_runs(text, text, int, timestamptz), cyclone.list_dead_letters(text, text, int),
                          cyclone.metrics()
    TO cyclone_client, cyclone_admin;

COMMIT;
