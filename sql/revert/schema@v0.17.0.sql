-- Revert cyclone:schema
-- Drops the schema, revokes this database's grants to the roles, and drops each
-- role only when no other database still uses it.
BEGIN;

DROP SCHEMA cyclone CASCADE;

DO $$
DECLARE
    v_role text;
BEGIN
    FOREACH v_role IN ARRAY ARRAY['cyclone_worker', 'cyclone_client', 'cyclone_admin'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = v_role) THEN
            EXECUTE format('REVOKE ALL ON DATABASE %I FROM %I', current_database(), v_role);
            BEGIN
                EXECUTE format('DROP ROLE %I', v_role);
            EXCEPTION WHEN dependent_objects_still_exist THEN
                RAISE NOTICE 'role % is still used elsewhere; kept', v_role;
            END;
        END IF;
    END LOOP;
END
$$;

COMMIT;
