-- Deploy cyclone:schema
-- requires: schema@v0.17.0
-- A complete copy of sql/engine/00_schema.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/00_schema.sql: change `schema` — the schema every engine object lives in, and the three roles of
-- SPEC section 10.
-- Owns: schema `cyclone` (its comment), the roles cyclone_worker, cyclone_client and cyclone_admin, and their
-- USAGE on the schema. Requires nothing; every other engine file requires it.
-- The roles are what callers are granted: cyclone_worker runs the worker protocol (claim, renew, complete,
-- fail, tick, define_workflow), cyclone_client submits and reads, cyclone_admin does everything. Each file grants
-- its own functions and tables to them; no role but the owner writes a table directly.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=schema NOTE="..."` (docs/architecture.md, Changing the engine).

CREATE SCHEMA IF NOT EXISTS cyclone;
COMMENT ON SCHEMA cyclone IS 'Cyclone: a durable workflow engine whose state machine lives in PostgreSQL.';

-- Roles are cluster-wide: another database of the cluster may have made them already, so each is created only
-- when it is missing (and a revert drops one only when nothing else uses it). NOLOGIN: they are granted to the
-- login roles that applications, workers and operators connect as.
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

GRANT USAGE ON SCHEMA cyclone TO cyclone_worker, cyclone_client, cyclone_admin;

COMMIT;
