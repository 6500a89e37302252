-- Deploy cyclone:schema
-- requires: (none)
-- The schema every engine object lives in, and the three roles of SPEC section 10.
-- Roles are cluster-wide: create each only when it is missing.
BEGIN;

CREATE SCHEMA IF NOT EXISTS cyclone;
COMMENT ON SCHEMA cyclone IS 'Cyclone: a durable workflow engine whose state machine lives in PostgreSQL.';

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
