-- sql/engine/14_shard_tables.sql: this database as one shard of a sharded deployment (SPEC 15,
-- docs/scaling.md).
-- Owns: cyclone_shard.
-- Requires: 02_clock.sql (configured_at's default calls cyclone.now()).
-- Used by: configure_shard and the partition functions (run_partition, step_partition, key_partition,
-- schedule_partition; 41_shards.sql), _create_runs and _insert_steps, which give new runs and steps ids on a
-- partition of this shard (21_runs.sql), and the trigger that keeps only this shard's schedules.
-- sqitch reaches this shape through the change shards.
--
-- The router (a PL/Proxy database, router/) hashes every call to one of its partitions, a power of two of
-- them; each shard holds one or more. Ids encode their partition, so a call that names a run or a step is
-- routed without a lookup: a run id's last 16 bits are its partition, a step id is nextval * partition_count +
-- partition. A run's steps and child runs live on its partition. Without a row here the database is the
-- one-shard case: one partition, 0, and ids as they always were.

-- At most one row: the primary key is a boolean that its CHECK pins to true. configure_shard writes it.
CREATE TABLE cyclone.cyclone_shard (
    one             boolean PRIMARY KEY DEFAULT true CONSTRAINT shard_one_row CHECK (one),
    name            text NOT NULL CONSTRAINT shard_name_valid CHECK (name ~ '^[a-z0-9_-]{1,63}$'),
    -- The router's partition count: a power of two up to 1024, so that a hash masked by count - 1 is a
    -- partition.
    partition_count int NOT NULL CONSTRAINT shard_partition_count_valid
        CHECK (partition_count BETWEEN 1 AND 1024 AND partition_count & (partition_count - 1) = 0),
    -- The partitions this database holds: at least one, each below partition_count.
    partitions      int[] NOT NULL CONSTRAINT shard_partitions_valid
        CHECK (cardinality(partitions) > 0 AND 0 <= ALL (partitions) AND partition_count > ALL (partitions)),
    configured_at   timestamptz NOT NULL DEFAULT cyclone.now()
);
COMMENT ON TABLE cyclone.cyclone_shard IS
    'This database as a shard (SPEC 15): its name, the router''s partition count and the partitions it holds. '
    'No row: a database of its own (one partition).';
GRANT SELECT ON cyclone.cyclone_shard TO cyclone_admin;
