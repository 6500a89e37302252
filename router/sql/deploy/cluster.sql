-- Deploy cyclone_router:cluster
-- requires: cluster@v0.15.0
-- A complete copy of sql/engine/10_cluster.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- router/sql/engine/10_cluster.sql: change `cluster`, the functions of the cluster's configuration.
-- The router of a sharded deployment (SPEC 15, docs/scaling.md): a database
-- that holds no runs, only PL/Proxy functions that send each call to the
-- shard holding its partition. This file is the cluster's configuration:
-- its shards (name, libpq DSN), its partitions (a power of two, each on one
-- shard) and the functions PL/Proxy reads them through (plproxy.*), plus the
-- hashes that pick a call's partition. Its schema is called cyclone, like a
-- shard's, so a client calls cyclone.submit(...) on either alike.
-- The tables it reads, and the plproxy extension, are in 00_cluster_tables.sql.
-- This file is the change's complete current source: edit it here and ship it with
-- `make rework ROUTER=1 CHANGE=cluster NOTE="..."` (docs/architecture.md, Changing the engine).

-- What PL/Proxy asks about cluster 'cyclone' (its cluster configuration API).
CREATE OR REPLACE FUNCTION plproxy.get_cluster_version(p_cluster text)
RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
BEGIN
    IF p_cluster = 'cyclone' THEN
        RETURN (SELECT last_value FROM cyclone.cyclone_cluster_version);
    END IF;
    RAISE EXCEPTION 'unknown PL/Proxy cluster %', p_cluster USING ERRCODE = '42704';
END
$$;

CREATE OR REPLACE FUNCTION plproxy.get_cluster_partitions(p_cluster text)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
BEGIN
    IF p_cluster <> 'cyclone' THEN
        RAISE EXCEPTION 'unknown PL/Proxy cluster %', p_cluster USING ERRCODE = '42704';
    END IF;
    RETURN QUERY SELECT s.dsn FROM cyclone.cyclone_partitions p JOIN cyclone.cyclone_shards s ON s.name = p.shard
                  ORDER BY p.partition;
END
$$;

-- Connections to the shards are recycled hourly. (How long a connection
-- attempt may take is the DSN's connect_timeout: cyclone shards init adds
-- connect_timeout=5 to a DSN without one.)
CREATE OR REPLACE FUNCTION plproxy.get_cluster_config(IN p_cluster text, OUT key text, OUT val text)
RETURNS SETOF record
LANGUAGE sql SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
    SELECT 'connection_lifetime'::text, '3600'::text
$$;

GRANT EXECUTE ON FUNCTION plproxy.get_cluster_version(text), plproxy.get_cluster_partitions(text),
                          plproxy.get_cluster_config(text) TO cyclone_worker, cyclone_client, cyclone_admin;

-- Replaces the configuration: shard names and DSNs (two arrays in step) and
-- the shard of each partition, whose count must be a power of two (1 to
-- 1024). cyclone shards init calls it; moving a partition later is
-- move_partition.
CREATE OR REPLACE FUNCTION cyclone.configure_router(p_names text[], p_dsns text[], p_partition_shards text[])
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_count int := cardinality(p_partition_shards);
    v_unknown text;
BEGIN
    IF p_names IS NULL OR p_dsns IS NULL OR p_partition_shards IS NULL THEN
        RAISE EXCEPTION 'configure_router: p_names, p_dsns and p_partition_shards must not be NULL'
            USING ERRCODE = '22004';
    ELSIF cardinality(p_names) = 0 OR cardinality(p_names) <> cardinality(p_dsns) THEN
        RAISE EXCEPTION 'configure_router: give one DSN for each of one or more shard names' USING ERRCODE = '22023';
    ELSIF v_count NOT BETWEEN 1 AND 1024 OR v_count & (v_count - 1) <> 0 THEN
        RAISE EXCEPTION 'configure_router: the partition count must be a power of two from 1 to 1024, not %', v_count
            USING ERRCODE = '22023';
    END IF;
    SELECT s INTO v_unknown FROM unnest(p_partition_shards) s WHERE s IS NULL OR NOT s = ANY (p_names) LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'configure_router: partition of unknown shard %', coalesce(v_unknown, 'NULL')
            USING ERRCODE = '22023';
    END IF;
    DELETE FROM cyclone_partitions;
    DELETE FROM cyclone_shards;
    INSERT INTO cyclone_shards (name, dsn) SELECT * FROM unnest(p_names, p_dsns);
    INSERT INTO cyclone_partitions (partition, shard)
    SELECT o - 1, s FROM unnest(p_partition_shards) WITH ORDINALITY AS a(s, o);
    PERFORM nextval('cyclone.cyclone_cluster_version');
END
$$;

-- Points partition p_partition at shard p_shard (after its rows were copied
-- there: docs/scaling.md, "Moving a partition"). Returns the shard it left.
CREATE OR REPLACE FUNCTION cyclone.move_partition(p_partition int, p_shard text)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_old text;
BEGIN
    SELECT p.shard INTO v_old FROM cyclone_partitions p WHERE p.partition = p_partition FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'move_partition: there is no partition %', p_partition USING ERRCODE = 'P0002';
    ELSIF NOT EXISTS (SELECT FROM cyclone_shards s WHERE s.name = p_shard) THEN
        RAISE EXCEPTION 'move_partition: there is no shard %', coalesce(p_shard, 'NULL') USING ERRCODE = 'P0002';
    END IF;
    UPDATE cyclone_partitions SET shard = p_shard WHERE partition = p_partition;
    PERFORM nextval('cyclone.cyclone_cluster_version');
    RETURN v_old;
END
$$;

-- The partition count; before configure_router, 55000 for every routed call.
CREATE OR REPLACE FUNCTION cyclone._partition_count()
RETURNS int
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_count int := (SELECT count(*) FROM cyclone.cyclone_partitions);
BEGIN
    IF v_count = 0 THEN
        RAISE EXCEPTION 'this router has no shards yet' USING ERRCODE = '55000',
            HINT = 'Run cyclone shards init --router ... --shard ... (docs/scaling.md).';
    END IF;
    RETURN v_count;
END
$$;

-- The hashes a shard computes too (cyclone:shards, _key_hash and
-- schedule_partition): keep them equal.
CREATE OR REPLACE FUNCTION cyclone._key_hash(p_workflow text, p_idempotency_key text)
RETURNS int
LANGUAGE sql IMMUTABLE
AS $$
    SELECT hashtext(p_workflow || chr(31) || p_idempotency_key)
$$;

-- The partition of a run id (its last 16 bits), a step id (its remainder),
-- a new run (its idempotency key's; else one at random), a schedule (its name's).
CREATE OR REPLACE FUNCTION cyclone._run_partition(p_run_id uuid)
RETURNS int
LANGUAGE sql STABLE
AS $$
    SELECT ((get_byte(uuid_send(p_run_id), 14) << 8) | get_byte(uuid_send(p_run_id), 15))
           & (cyclone._partition_count() - 1)
$$;

CREATE OR REPLACE FUNCTION cyclone._step_partition(p_step_id bigint)
RETURNS int
LANGUAGE sql STABLE
AS $$
    SELECT (p_step_id % cyclone._partition_count())::int
$$;

CREATE OR REPLACE FUNCTION cyclone._submit_partition(p_workflow text, p_idempotency_key text)
RETURNS int
LANGUAGE sql VOLATILE
AS $$
    SELECT CASE WHEN p_idempotency_key IS NULL THEN floor(random() * cyclone._partition_count())::int
                ELSE cyclone._key_hash(p_workflow, p_idempotency_key) & (cyclone._partition_count() - 1) END
$$;

CREATE OR REPLACE FUNCTION cyclone._schedule_partition(p_name text)
RETURNS int
LANGUAGE sql STABLE
AS $$
    SELECT hashtext(p_name) & (cyclone._partition_count() - 1)
$$;

-- Where a run or a step lives: its partition and the shard that holds it.
CREATE OR REPLACE FUNCTION cyclone.locate_run(p_run_id uuid)
RETURNS TABLE (partition int, shard text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
    SELECT p.partition, p.shard FROM cyclone.cyclone_partitions p WHERE p.partition = cyclone._run_partition(p_run_id)
$$;

CREATE OR REPLACE FUNCTION cyclone.locate_step(p_step_id bigint)
RETURNS TABLE (partition int, shard text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
    SELECT p.partition, p.shard FROM cyclone.cyclone_partitions p WHERE p.partition = cyclone._step_partition(p_step_id)
$$;

-- One partition of each shard, to run a call once on every shard.
CREATE OR REPLACE FUNCTION cyclone._shard_partitions()
RETURNS TABLE (shard text, partition int)
LANGUAGE sql STABLE
AS $$
    SELECT p.shard, min(p.partition) FROM cyclone.cyclone_partitions p
     WHERE cyclone._partition_count() > 0  -- 55000 before configure_router
     GROUP BY p.shard ORDER BY p.shard
$$;

-- Raises again what a call on partition p_partition raised, as the shard
-- raised it: PL/Proxy's "f(n): [db] REMOTE ERROR: " prefix comes off and the
-- SQLSTATE and hint stay (no engine error has a detail, so none is kept). A shard PL/Proxy
-- could not reach or lost becomes one error naming it: 08006 "shard s
-- (partition p) is unreachable: ...". Anything else is raised unchanged.
CREATE OR REPLACE FUNCTION cyclone._reraise(p_partition int, p_sqlstate text, p_message text, p_hint text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_remote constant text := '^[^ ]+\(\d+\): \[[^]]*\] REMOTE ERROR: ';
    v_lost constant text := '^PL/Proxy function [^ ]+\(\d+\): \[[^]]*\] ';
    v_message text := p_message;
    v_hint text := nullif(p_hint, '');
BEGIN
    IF p_message ~ v_remote THEN
        v_message := regexp_replace(p_message, v_remote, '');
        v_hint := nullif(regexp_replace(v_hint, '^Remote hint: ', ''), '');
    ELSIF p_sqlstate = 'XX000' AND p_message ~ v_lost THEN
        RAISE EXCEPTION 'shard % (partition %) is unreachable: %',
            (SELECT p.shard FROM cyclone.cyclone_partitions p WHERE p.partition = p_partition), p_partition,
            split_part(regexp_replace(p_message, v_lost, ''), E'\n', 1) USING ERRCODE = '08006';
    END IF;
    IF v_hint IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = p_sqlstate, MESSAGE = v_message;
    END IF;
    RAISE EXCEPTION USING ERRCODE = p_sqlstate, MESSAGE = v_message, HINT = v_hint;
END
$$;

-- What \df+ shows for each function a role may call.
COMMENT ON FUNCTION plproxy.get_cluster_version(text) IS 'PL/Proxy''s cluster API: the version of cluster cyclone''s configuration; PL/Proxy reloads the partitions when it grows.';
COMMENT ON FUNCTION plproxy.get_cluster_partitions(text) IS 'PL/Proxy''s cluster API: the connection string of each partition of cluster cyclone, in partition order.';
COMMENT ON FUNCTION plproxy.get_cluster_config(text) IS 'PL/Proxy''s cluster API: the cluster''s settings (a connection to a shard is renewed after an hour).';
COMMENT ON FUNCTION cyclone.configure_router(text[], text[], text[]) IS 'Admin: set the shards (names and DSNs) and which shard holds each partition, in one transaction.';
COMMENT ON FUNCTION cyclone.move_partition(int, text) IS 'Admin: record that a partition is now held by another shard (after its rows were moved there).';
COMMENT ON FUNCTION cyclone.locate_run(uuid) IS 'The shard that holds a run, from the partition its id encodes.';
COMMENT ON FUNCTION cyclone.locate_step(bigint) IS 'The shard that holds a step, from the partition its id encodes.';

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.configure_router(text[], text[], text[]), cyclone.move_partition(int, text)
    TO cyclone_admin;
GRANT EXECUTE ON FUNCTION cyclone.locate_run(uuid), cyclone.locate_step(bigint)
    TO cyclone_worker, cyclone_client, cyclone_admin;

COMMIT;
