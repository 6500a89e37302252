-- Deploy cyclone:shards
-- requires: tables checks schedules clock
-- A database as one shard of a sharded deployment (SPEC 15). The router (a
-- PL/Proxy database, router/) hashes every call to one of its partitions, a
-- power of two of them; each shard holds one or more. Ids encode their
-- partition, so a call that names a run or a step is routed without a lookup:
-- a run id's last 16 bits are its partition, a step id is
-- nextval * partition_count + partition (runs.sql). A run's steps and child
-- runs live on its partition. Without a row in cyclone_shard the database is
-- the one-shard case: one partition, 0, and ids as they always were.
BEGIN;

CREATE TABLE cyclone.cyclone_shard (
    one             boolean PRIMARY KEY DEFAULT true CONSTRAINT shard_one_row CHECK (one),
    name            text NOT NULL CONSTRAINT shard_name_valid CHECK (name ~ '^[a-z0-9_-]{1,63}$'),
    partition_count int NOT NULL CONSTRAINT shard_partition_count_valid
        CHECK (partition_count BETWEEN 1 AND 1024 AND partition_count & (partition_count - 1) = 0),
    partitions      int[] NOT NULL CONSTRAINT shard_partitions_valid
        CHECK (cardinality(partitions) > 0 AND 0 <= ALL (partitions) AND partition_count > ALL (partitions)),
    configured_at   timestamptz NOT NULL DEFAULT cyclone.now()
);
COMMENT ON TABLE cyclone.cyclone_shard IS
    'This database as a shard (SPEC 15): its name, the router''s partition count and the partitions it holds. '
    'No row: a database of its own (one partition).';
GRANT SELECT ON cyclone.cyclone_shard TO cyclone_admin;

-- The partition a run id encodes (its last 16 bits, masked by the count).
CREATE OR REPLACE FUNCTION cyclone._id_partition(p_run_id uuid, p_partition_count int)
RETURNS int
LANGUAGE sql IMMUTABLE
AS $$
    SELECT ((get_byte(uuid_send(p_run_id), 14) << 8) | get_byte(uuid_send(p_run_id), 15)) & (p_partition_count - 1)
$$;

-- A random run id on partition p_partition (a version 4 UUID whose last 16
-- bits are the partition).
CREATE OR REPLACE FUNCTION cyclone._run_id_on(p_partition int)
RETURNS uuid
LANGUAGE sql VOLATILE
AS $$
    SELECT encode(overlay(uuid_send(gen_random_uuid()) PLACING substring(int4send(p_partition) FROM 3 FOR 2)
                          FROM 15 FOR 2), 'hex')::uuid
$$;

-- The hash the router runs a call on (PL/Proxy masks it by the partition
-- count): of a workflow and idempotency key, and of a schedule's name. The
-- router's own copies (router/deploy/routing.sql) must stay equal to these.
CREATE OR REPLACE FUNCTION cyclone._key_hash(p_workflow text, p_idempotency_key text)
RETURNS int
LANGUAGE sql IMMUTABLE
AS $$
    SELECT hashtext(p_workflow || chr(31) || p_idempotency_key)
$$;

-- The partition of a run, a step, an idempotency key, a schedule: what the
-- router computes for this database's configuration (0 without one; NULL
-- for a NULL argument).
CREATE OR REPLACE FUNCTION cyclone.run_partition(p_run_id uuid)
RETURNS int
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
    SELECT cyclone._id_partition(p_run_id, coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1))
$$;

CREATE OR REPLACE FUNCTION cyclone.step_partition(p_step_id bigint)
RETURNS int
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
    SELECT (p_step_id % coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1))::int
$$;

CREATE OR REPLACE FUNCTION cyclone.key_partition(p_workflow text, p_idempotency_key text)
RETURNS int
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
    SELECT cyclone._key_hash(p_workflow, p_idempotency_key)
           & (coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1) - 1)
$$;

CREATE OR REPLACE FUNCTION cyclone.schedule_partition(p_name text)
RETURNS int
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
    SELECT hashtext(p_name) & (coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1) - 1)
$$;

-- The partition of a new run of p_workflow on this shard (v_count of them in
-- all): its parent's; else its idempotency key's, which this shard must hold
-- (55000: submit it through the router); else one of the shard's partitions
-- at random. runs.sql (_create_runs) calls it when a cyclone_shard row exists.
CREATE OR REPLACE FUNCTION cyclone._new_run_partition(
    p_shard cyclone.cyclone_shard, p_workflow text, p_idempotency_key text, p_parent_run_id uuid)
RETURNS int
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

-- A schedule lives on the partition of its name, so that each slot fires once
-- in the whole deployment: a shard refuses to keep one of another partition's.
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
CREATE TRIGGER cyclone_schedules_on_their_partition BEFORE INSERT ON cyclone.cyclone_schedules
    FOR EACH ROW EXECUTE FUNCTION cyclone._schedule_on_its_partition();

-- Makes this database a shard of a router with p_partition_count partitions,
-- holding p_partitions (cyclone shards init calls it).
-- A database that already holds runs keeps only a configuration those runs
-- fit: the same partition count, and every run's partition still held.
-- cyclone_admin may call it, as it may every public function.
CREATE OR REPLACE FUNCTION cyclone.configure_shard(p_name text, p_partition_count int, p_partitions int[])
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = cyclone, pg_temp
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

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.run_partition(uuid), cyclone.step_partition(bigint),
                          cyclone.key_partition(text, text), cyclone.schedule_partition(text),
                          cyclone.configure_shard(text, int, int[])
    TO cyclone_admin;

COMMIT;
