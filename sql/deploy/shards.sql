-- Deploy cyclone:shards
-- requires: shards@v0.25.0 tables checks schedules clock
-- A complete copy of sql/engine/41_shards.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/41_shards.sql: change `shards` — this database as one shard of a sharded deployment (SPEC 15,
-- docs/scaling.md).
-- The router (a PL/Proxy database, router/) hashes every call to one of its partitions, a power of two of
-- them; each shard holds one or more. Ids encode their partition, so a call that names a run or a step is
-- routed without a lookup: a run id's last 16 bits are its partition, a step id is
-- nextval * partition_count + partition (_insert_steps, 21_runs.sql). A run's steps and child runs live on
-- its partition. Without a row in cyclone_shard the database is the one-shard case: one partition, 0, and
-- run ids without a partition in them.
-- Owns: configure_shard; the ids (_new_run_id, in the order of time, sharded or not; _id_partition,
-- _run_id_on), the key hash (_key_hash), the partition of a new run (_new_run_partition), the partition of
-- a run, step, key or schedule as the router computes it (run_partition, step_partition, key_partition,
-- schedule_partition), and the trigger that keeps only this shard's own schedules
-- (_schedule_on_its_partition). The table cyclone_shard is in 14_shard_tables.sql.
-- Requires: 14_shard_tables.sql (cyclone_shard), 10_runs_tables.sql (cyclone_runs), 12_schedules_tables.sql
-- (cyclone_schedules), 03_checks.sql (_shown).
-- Called by: _create_runs (21_runs.sql: _new_run_id, _new_run_partition, _run_id_on); cyclone_admin
-- (configure_shard, through `cyclone shards init`; the partition functions, to see where a run, key or
-- schedule belongs).
-- The router's own copies of the two hashes (_key_hash, and hashtext(name) for a schedule; router/, change
-- cluster) must stay equal to these: tests/test_shards.py fails when they differ.
-- Locks: configure_shard takes cyclone_runs in SHARE mode (no run is created meanwhile); nothing else here
-- locks.
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=shards NOTE="..."` (docs/architecture.md, Changing the engine).

-- _id_partition: the partition a run id encodes: its last 16 bits, masked by the partition count.
CREATE OR REPLACE FUNCTION cyclone._id_partition(p_run_id uuid, p_partition_count integer)
RETURNS integer
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT ((get_byte(uuid_send(p_run_id), 14) << 8) | get_byte(uuid_send(p_run_id), 15)) & (p_partition_count - 1)
$$;
REVOKE ALL ON FUNCTION cyclone._id_partition(uuid,integer) FROM PUBLIC;

-- _new_run_id: a new run id, in the order of time: a UUID laid out as version 7 (RFC 9562). Its first 48
-- bits are p_now (the engine clock) in milliseconds since 1970, the next 4 its version, 7, the 4 after
-- them 0, and the last 72 gen_random_uuid()'s: its variant and 70 random bits. Why not a random (version
-- 4) uuid, as ids were until 0.26.0: every index that starts with a run id (the runs' primary key, the
-- steps' step_node_unique, and their copies in the day's tables, 43_history.sql) took each new run at a
-- random leaf page, descending the tree and comparing all the way. In the order of time they go to the
-- right-hand edge, the page the last insert left in memory (PostgreSQL's fast path for an increasing
-- key). Measured (docs/performance.md, "Run ids in the order of time"): the database's CPU a step of
-- claim(200) + complete_many(200) 0.89x (four interleaved rounds), for 1.6 us more a new id. Ids made in
-- one transaction share their first 56 bits and are random after them. One expression, so the planner
-- inlines it.
CREATE OR REPLACE FUNCTION cyclone._new_run_id(p_now timestamp with time zone)
RETURNS uuid
LANGUAGE sql
VOLATILE
AS $$
    SELECT encode(overlay(uuid_send(gen_random_uuid())
                          PLACING substring(int8send((date_part('epoch', p_now) * 1000)::bigint * 65536 + 28672)
                                            FROM 1 FOR 7)
                          FROM 1 FOR 7), 'hex')::uuid
$$;
REVOKE ALL ON FUNCTION cyclone._new_run_id(timestamp with time zone) FROM PUBLIC;

-- _run_id_on: a new run id on partition p_partition: _new_run_id's, whose last 16 bits are the partition
-- (54 random bits left). p_now came in 0.26.0 with the order of time: the function of one argument is
-- dropped.
DROP FUNCTION IF EXISTS cyclone._run_id_on(integer);
CREATE OR REPLACE FUNCTION cyclone._run_id_on(p_partition integer, p_now timestamp with time zone)
RETURNS uuid
LANGUAGE sql
VOLATILE
AS $$
    SELECT encode(overlay(uuid_send(cyclone._new_run_id(p_now)) PLACING substring(int4send(p_partition) FROM 3 FOR 2)
                          FROM 15 FOR 2), 'hex')::uuid
$$;
REVOKE ALL ON FUNCTION cyclone._run_id_on(integer,timestamp with time zone) FROM PUBLIC;

-- _key_hash: the hash the router runs a keyed submit on (PL/Proxy masks it by the partition count): of a
-- workflow and an idempotency key, joined by chr(31). A schedule's is hashtext(name), written where it is
-- used.
CREATE OR REPLACE FUNCTION cyclone._key_hash(p_workflow text, p_idempotency_key text)
RETURNS integer
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT hashtext(p_workflow || chr(31) || p_idempotency_key)
$$;
REVOKE ALL ON FUNCTION cyclone._key_hash(text,text) FROM PUBLIC;

-- The partition of a run, a step, an idempotency key, a schedule: what the router computes for this
-- database's configuration (count 1, so partition 0, without a cyclone_shard row; NULL for a NULL
-- argument). For operators and tests: where something belongs, asked of any shard.
-- run_partition: the partition a run id encodes.
CREATE OR REPLACE FUNCTION cyclone.run_partition(p_run_id uuid)
RETURNS integer
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
    SELECT cyclone._id_partition(p_run_id, coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1))
$$;
COMMENT ON FUNCTION cyclone.run_partition(uuid) IS 'The partition a run id encodes (its last 16 bits, masked by this shard''s partition count; 0 without a cyclone_shard row).';
REVOKE ALL ON FUNCTION cyclone.run_partition(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.run_partition(uuid) TO cyclone_admin;

-- step_partition: the partition a step id encodes (the id modulo the partition count).
CREATE OR REPLACE FUNCTION cyclone.step_partition(p_step_id bigint)
RETURNS integer
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
    SELECT (p_step_id % coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1))::int
$$;
COMMENT ON FUNCTION cyclone.step_partition(bigint) IS 'The partition a step id encodes (the id modulo this shard''s partition count; 0 without a cyclone_shard row).';
REVOKE ALL ON FUNCTION cyclone.step_partition(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.step_partition(bigint) TO cyclone_admin;

-- key_partition: the partition a submit with this idempotency key goes to, and the only one on which such
-- a run can be made (_new_run_partition).
CREATE OR REPLACE FUNCTION cyclone.key_partition(p_workflow text, p_idempotency_key text)
RETURNS integer
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
    SELECT cyclone._key_hash(p_workflow, p_idempotency_key)
           & (coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1) - 1)
$$;
COMMENT ON FUNCTION cyclone.key_partition(text,text) IS 'The partition the router sends a submit of p_workflow with idempotency key p_idempotency_key to (0 without a cyclone_shard row).';
REVOKE ALL ON FUNCTION cyclone.key_partition(text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.key_partition(text,text) TO cyclone_admin;

-- schedule_partition: the partition a schedule of this name lives on (_schedule_on_its_partition).
CREATE OR REPLACE FUNCTION cyclone.schedule_partition(p_name text)
RETURNS integer
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
    SELECT hashtext(p_name) & (coalesce((SELECT s.partition_count FROM cyclone.cyclone_shard s), 1) - 1)
$$;
COMMENT ON FUNCTION cyclone.schedule_partition(text) IS 'The partition a schedule named p_name lives on (0 without a cyclone_shard row).';
REVOKE ALL ON FUNCTION cyclone.schedule_partition(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.schedule_partition(text) TO cyclone_admin;

-- _new_run_partition: the partition of a new run of p_workflow on this shard: its parent's (a child run
-- lives with its parent); else its idempotency key's, which this shard must hold (55000, with a hint to
-- submit it through the router: deduplication holds only on the key's partition); else one of the shard's
-- partitions at random. _create_runs (21_runs.sql) calls it once per call, when a cyclone_shard row exists,
-- so the runs of one call share a partition.
CREATE OR REPLACE FUNCTION cyclone._new_run_partition(
    p_shard cyclone.cyclone_shard,
    p_workflow text,
    p_idempotency_key text,
    p_parent_run_id uuid)
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
REVOKE ALL ON FUNCTION cyclone._new_run_partition(cyclone.cyclone_shard,text,text,uuid) FROM PUBLIC;

-- _schedule_on_its_partition, trigger cyclone_schedules_on_their_partition: a schedule lives on the
-- partition of its name, so that each slot fires once in the whole deployment; a shard refuses to keep one
-- of a partition it does not hold (55000, with a hint to define it through the router). Only a new row is
-- checked (BEFORE INSERT, which schedule()'s upsert fires too); a database with no cyclone_shard row keeps
-- every schedule.
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
REVOKE ALL ON FUNCTION cyclone._schedule_on_its_partition() FROM PUBLIC;
CREATE OR REPLACE TRIGGER cyclone_schedules_on_their_partition BEFORE INSERT ON cyclone.cyclone_schedules FOR EACH ROW EXECUTE FUNCTION cyclone._schedule_on_its_partition();

-- configure_shard: makes this database shard p_name of a router with p_partition_count partitions, holding
-- p_partitions (`cyclone shards init` calls it; a second call replaces the configuration). Guards:
-- 22004 for a NULL; 22023 for a name that is not 1 to 63 of a-z, 0-9, _ and -, a partition count that is
-- not a power of two from 1 to 1024, partitions that are empty, NULL, out of range or repeated. A database
-- that already holds runs (live or archived) keeps only a configuration those runs fit: the same partition
-- count, and every run's partition still held (55000 otherwise). cyclone_runs is locked in SHARE mode first,
-- so no run is created while it checks.
CREATE OR REPLACE FUNCTION cyclone.configure_shard(p_name text, p_partition_count integer, p_partitions integer[])
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
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
COMMENT ON FUNCTION cyclone.configure_shard(text,integer,integer[]) IS 'Make this database shard p_name of a router with p_partition_count partitions (a power of two), holding p_partitions; a database with runs keeps only a configuration its runs fit (55000).';
REVOKE ALL ON FUNCTION cyclone.configure_shard(text,integer,integer[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.configure_shard(text,integer,integer[]) TO cyclone_admin;

COMMIT;
