-- Revert cyclone_router:cluster to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._key_hash(p_workflow text, p_idempotency_key text)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT hashtext(p_workflow || chr(31) || p_idempotency_key)
$$;
COMMENT ON FUNCTION cyclone._key_hash(text,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._partition_count()
 RETURNS integer
 LANGUAGE plpgsql
 STABLE
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
COMMENT ON FUNCTION cyclone._partition_count() IS NULL;

CREATE OR REPLACE FUNCTION cyclone._reraise(p_partition integer, p_sqlstate text, p_message text, p_hint text)
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
COMMENT ON FUNCTION cyclone._reraise(integer,text,text,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._run_partition(p_run_id uuid)
 RETURNS integer
 LANGUAGE sql
 STABLE
AS $$
    SELECT ((get_byte(uuid_send(p_run_id), 14) << 8) | get_byte(uuid_send(p_run_id), 15))
           & (cyclone._partition_count() - 1)
$$;
COMMENT ON FUNCTION cyclone._run_partition(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._schedule_partition(p_name text)
 RETURNS integer
 LANGUAGE sql
 STABLE
AS $$
    SELECT hashtext(p_name) & (cyclone._partition_count() - 1)
$$;
COMMENT ON FUNCTION cyclone._schedule_partition(text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._shard_partitions()
 RETURNS TABLE(shard text, partition integer)
 LANGUAGE sql
 STABLE
AS $$
    SELECT p.shard, min(p.partition) FROM cyclone.cyclone_partitions p
     WHERE cyclone._partition_count() > 0  -- 55000 before configure_router
     GROUP BY p.shard ORDER BY p.shard
$$;
COMMENT ON FUNCTION cyclone._shard_partitions() IS NULL;

CREATE OR REPLACE FUNCTION cyclone._step_partition(p_step_id bigint)
 RETURNS integer
 LANGUAGE sql
 STABLE
AS $$
    SELECT (p_step_id % cyclone._partition_count())::int
$$;
COMMENT ON FUNCTION cyclone._step_partition(bigint) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._submit_partition(p_workflow text, p_idempotency_key text)
 RETURNS integer
 LANGUAGE sql
AS $$
    SELECT CASE WHEN p_idempotency_key IS NULL THEN floor(random() * cyclone._partition_count())::int
                ELSE cyclone._key_hash(p_workflow, p_idempotency_key) & (cyclone._partition_count() - 1) END
$$;
COMMENT ON FUNCTION cyclone._submit_partition(text,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.configure_router(p_names text[], p_dsns text[], p_partition_shards text[])
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
COMMENT ON FUNCTION cyclone.configure_router(text[],text[],text[]) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.locate_run(p_run_id uuid)
 RETURNS TABLE(partition integer, shard text)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
    SELECT p.partition, p.shard FROM cyclone.cyclone_partitions p WHERE p.partition = cyclone._run_partition(p_run_id)
$$;
COMMENT ON FUNCTION cyclone.locate_run(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.locate_step(p_step_id bigint)
 RETURNS TABLE(partition integer, shard text)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
    SELECT p.partition, p.shard FROM cyclone.cyclone_partitions p WHERE p.partition = cyclone._step_partition(p_step_id)
$$;
COMMENT ON FUNCTION cyclone.locate_step(bigint) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.move_partition(p_partition integer, p_shard text)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
COMMENT ON FUNCTION cyclone.move_partition(integer,text) IS NULL;

CREATE OR REPLACE FUNCTION plproxy.get_cluster_config(p_cluster text, OUT key text, OUT val text)
 RETURNS SETOF record
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
    SELECT 'connection_lifetime'::text, '3600'::text
$$;
COMMENT ON FUNCTION plproxy.get_cluster_config(text) IS NULL;

CREATE OR REPLACE FUNCTION plproxy.get_cluster_partitions(p_cluster text)
 RETURNS SETOF text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
BEGIN
    IF p_cluster <> 'cyclone' THEN
        RAISE EXCEPTION 'unknown PL/Proxy cluster %', p_cluster USING ERRCODE = '42704';
    END IF;
    RETURN QUERY SELECT s.dsn FROM cyclone.cyclone_partitions p JOIN cyclone.cyclone_shards s ON s.name = p.shard
                  ORDER BY p.partition;
END
$$;
COMMENT ON FUNCTION plproxy.get_cluster_partitions(text) IS NULL;

CREATE OR REPLACE FUNCTION plproxy.get_cluster_version(p_cluster text)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
BEGIN
    IF p_cluster = 'cyclone' THEN
        RETURN (SELECT last_value FROM cyclone.cyclone_cluster_version);
    END IF;
    RAISE EXCEPTION 'unknown PL/Proxy cluster %', p_cluster USING ERRCODE = '42704';
END
$$;
COMMENT ON FUNCTION plproxy.get_cluster_version(text) IS NULL;

COMMIT;
