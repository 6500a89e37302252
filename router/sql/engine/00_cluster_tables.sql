-- router/sql/engine/00_cluster_tables.sql: the router's schema, roles and cluster configuration tables.
-- The plproxy extension needs a superuser once: CREATE EXTENSION is a no-op when it is already installed.
-- sqitch reached this shape with change `cluster` (sql/deploy/cluster@v0.17.0.sql); a later change to a table
-- is an ALTER in a new change, and the engine guard proves it ends where this file says.

CREATE EXTENSION IF NOT EXISTS plproxy;
CREATE SCHEMA IF NOT EXISTS plproxy;
CREATE SCHEMA cyclone;
COMMENT ON SCHEMA cyclone IS 'Cyclone''s router: every call goes to the shard that holds its partition (SPEC 15).';

DO $$
DECLARE
    v_role text;
BEGIN
    FOREACH v_role IN ARRAY ARRAY['cyclone_worker', 'cyclone_client', 'cyclone_admin'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = v_role) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', v_role);
        END IF;
    END LOOP;
END
$$;
GRANT USAGE ON SCHEMA cyclone, plproxy TO cyclone_worker, cyclone_client, cyclone_admin;

CREATE TABLE cyclone.cyclone_shards (
    name text PRIMARY KEY CONSTRAINT shard_name_valid CHECK (name ~ '^[a-z0-9_-]{1,63}$'),
    dsn  text NOT NULL CONSTRAINT shard_dsn_not_empty CHECK (dsn <> '')
);
COMMENT ON TABLE cyclone.cyclone_shards IS 'The shards: each a Cyclone database, by name and libpq DSN.';

CREATE TABLE cyclone.cyclone_partitions (
    partition int PRIMARY KEY CONSTRAINT partition_valid CHECK (partition BETWEEN 0 AND 1023),
    shard     text NOT NULL REFERENCES cyclone.cyclone_shards (name)
);
COMMENT ON TABLE cyclone.cyclone_partitions IS 'Which shard holds each partition (0 to count - 1, all of them).';

-- The configuration's version: PL/Proxy reloads the partitions when it grows.
CREATE SEQUENCE cyclone.cyclone_cluster_version;

GRANT SELECT ON cyclone.cyclone_shards, cyclone.cyclone_partitions TO cyclone_admin;
