-- Revert cyclone:schema to its previous version: the deploy script it had before
-- (sql/deploy/schema@v0.17.0.sql), and a drop of each function the new version added.
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
