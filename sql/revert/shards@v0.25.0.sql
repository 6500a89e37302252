-- Revert cyclone:shards to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._id_partition(p_run_id uuid, p_partition_count integer)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT ((get_byte(uuid_send(p_run_id), 14) << 8) | get_byte(uuid_send(p_run_id), 15)) & (p_partition_count - 1)
$$;
COMMENT ON FUNCTION cyclone._id_partition(uuid,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._key_hash(p_workflow text, p_idempotency_key text)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT hashtext(p_workflow || chr(31) || p_idempotency_key)
$$;
COMMENT ON FUNCTION cyclone._key_hash(text,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._new_run_partition(p_shard cyclone.cyclone_shard, p_workflow text, p_idempotency_key text, p_parent_run_id uuid)
 RETURNS integer
 LANGUAGE plpgsql
AS $$
DECLARE
    v_partition int;
BEGIN
    IF p_parent_run_id IS NOT NULL THEN
        RETURN cyclone._id_partition(p_parent_run_id, p_shard.partition_count);
    ELSIF p_idempotency_key IS NULL THEN
        RETURN p_shard.partitions[1 + floor(random() * cardinality(p_shard.partitions))::int];
    END IF;
    v_partition := cyclone._key_hash(p_workflow, p_idempotency_key) & (p_shard.partition_count - 1);
    IF NOT v_partition = ANY (p_shard.partitions) THEN
        RAISE EXCEPTION 'idempotency key % of workflow % belongs to partition %, which shard % does not hold',
            cyclone._shown(p_idempotency_key), cyclone._shown(p_workflow), v_partition, p_shard.name
            USING ERRCODE = '55000', HINT = 'Submit it through the router, which sends it to its partition.';
    END IF;
    RETURN v_partition;
END
$$;
COMMENT ON FUNCTION cyclone._new_run_partition(cyclone.cyclone_shard,text,text,uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._run_id_on(p_partition integer)
 RETURNS uuid
 LANGUAGE sql
AS $$
    SELECT encode(overlay(uuid_send(gen_random_uuid()) PLACING substring(int4send(p_partition) FROM 3 FOR 2)
                          FROM 15 FOR 2), 'hex')::uuid
$$;
COMMENT ON FUNCTION cyclone._run_id_on(integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._schedule_on_its_partition()
 RETURNS trigger
 LANGUAGE plpgsql
AS $$
DECLARE
    v_shard cyclone.cyclone_shard;
    v_partition int;
BEGIN
    SELECT s.* INTO v_shard FROM cyclone.cyclone_shard s;
    IF FOUND THEN
        v_partition := hashtext(NEW.name) & (v_shard.partition_count - 1);
        IF NOT v_partition = ANY (v_shard.partitions) THEN
            RAISE EXCEPTION 'schedule % belongs to partition %, which shard % does not hold',
                cyclone._shown(NEW.name), v_partition, v_shard.name
                USING ERRCODE = '55000', HINT = 'Define it through the router, which sends it to its partition.';
        END IF;
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION cyclone._schedule_on_its_partition() IS NULL;

CREATE OR REPLACE FUNCTION cyclone.configure_shard(p_name text, p_partition_count integer, p_partitions integer[])
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
DECLARE
    v_old cyclone.cyclone_shard;
    v_stray int;
BEGIN
    IF p_name IS NULL OR p_partition_count IS NULL OR p_partitions IS NULL THEN
        RAISE EXCEPTION 'configure_shard: p_name, p_partition_count and p_partitions must not be NULL'
            USING ERRCODE = '22004';
    ELSIF p_name !~ '^[a-z0-9_-]{1,63}$' THEN
        RAISE EXCEPTION 'configure_shard: shard name % must be 1 to 63 of a-z, 0-9, _ and -', cyclone._shown(p_name)
            USING ERRCODE = '22023';
    ELSIF p_partition_count NOT BETWEEN 1 AND 1024 OR p_partition_count & (p_partition_count - 1) <> 0 THEN
        RAISE EXCEPTION 'configure_shard: p_partition_count must be a power of two from 1 to 1024, not %',
            p_partition_count USING ERRCODE = '22023';
    ELSIF cardinality(p_partitions) = 0 OR array_position(p_partitions, NULL) IS NOT NULL
          OR EXISTS (SELECT FROM unnest(p_partitions) p WHERE p NOT BETWEEN 0 AND p_partition_count - 1)
          OR (SELECT count(DISTINCT p) FROM unnest(p_partitions) p) <> cardinality(p_partitions) THEN
        RAISE EXCEPTION 'configure_shard: p_partitions must be distinct partitions from 0 to %, not %',
            p_partition_count - 1, left(p_partitions::text, 100) USING ERRCODE = '22023';
    END IF;
    LOCK TABLE cyclone.cyclone_runs IN SHARE MODE;  -- no run is created meanwhile
    SELECT s.* INTO v_old FROM cyclone.cyclone_shard s;
    IF EXISTS (SELECT FROM cyclone.cyclone_runs) THEN
        IF coalesce(v_old.partition_count, 1) <> p_partition_count THEN
            RAISE EXCEPTION 'configure_shard: this database holds runs made for % partition(s); it cannot become a '
                            'shard of %', coalesce(v_old.partition_count, 1), p_partition_count
                USING ERRCODE = '55000';
        END IF;
        SELECT cyclone._id_partition(r.id, p_partition_count) INTO v_stray
          FROM cyclone.cyclone_runs r
         WHERE NOT cyclone._id_partition(r.id, p_partition_count) = ANY (p_partitions)
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'configure_shard: this database holds runs of partition %, which is not in %',
                v_stray, p_partitions USING ERRCODE = '55000';
        END IF;
    END IF;
    INSERT INTO cyclone.cyclone_shard (name, partition_count, partitions)
    VALUES (p_name, p_partition_count, ARRAY(SELECT p FROM unnest(p_partitions) p ORDER BY p))
    ON CONFLICT (one) DO UPDATE
       SET name = EXCLUDED.name, partition_count = EXCLUDED.partition_count, partitions = EXCLUDED.partitions,
           configured_at = EXCLUDED.configured_at;
END
$$;
COMMENT ON FUNCTION cyclone.configure_shard(text,integer,integer[]) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.key_partition(p_workflow text, p_idempotency_key text)
 RETURNS integer
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
    SELECT cyclone._key_hash(p_workflow, p_idempotency_key)
           & (coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1) - 1)
$$;
COMMENT ON FUNCTION cyclone.key_partition(text,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.run_partition(p_run_id uuid)
 RETURNS integer
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
    SELECT cyclone._id_partition(p_run_id, coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1))
$$;
COMMENT ON FUNCTION cyclone.run_partition(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.schedule_partition(p_name text)
 RETURNS integer
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
    SELECT hashtext(p_name) & (coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1) - 1)
$$;
COMMENT ON FUNCTION cyclone.schedule_partition(text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.step_partition(p_step_id bigint)
 RETURNS integer
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
    SELECT (p_step_id % coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1))::int
$$;
COMMENT ON FUNCTION cyclone.step_partition(bigint) IS NULL;

CREATE OR REPLACE TRIGGER cyclone_schedules_on_their_partition BEFORE INSERT ON cyclone.cyclone_schedules FOR EACH ROW EXECUTE FUNCTION cyclone._schedule_on_its_partition();

COMMIT;
