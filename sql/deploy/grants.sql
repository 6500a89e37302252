-- Deploy cyclone:grants
-- Access (SPEC section 10). PostgreSQL grants EXECUTE on new functions to PUBLIC;
-- take it back from every function in the schema, then give each role its part.
-- No role but the owner writes the tables: all writes go through the SECURITY
-- DEFINER functions. A later change that adds a function must rework this one.
BEGIN;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA cyclone FROM PUBLIC;

GRANT EXECUTE ON FUNCTION
    cyclone.claim(text, text[], int, interval),
    cyclone.renew(bigint, text, bigint, interval),
    cyclone.complete(bigint, text, bigint, jsonb),
    cyclone.complete_many(text, bigint[], bigint[], jsonb[]),
    cyclone.fail(bigint, text, bigint, text, text, interval),
    cyclone.tick(int),
    cyclone.define_workflow(text, jsonb),
    cyclone.backoff(int),
    cyclone.now()
TO cyclone_worker;

GRANT EXECUTE ON FUNCTION
    cyclone.submit(text, jsonb, interval, text, timestamptz),
    cyclone.submit_many(text, jsonb[], interval),
    cyclone.get_run(uuid),
    cyclone.signal(uuid, text, jsonb),
    cyclone.now()
TO cyclone_client;
GRANT SELECT ON cyclone.cyclone_v_runs, cyclone.cyclone_v_steps, cyclone.cyclone_v_dlq, cyclone.cyclone_v_workflows
    TO cyclone_client;

-- The admin role gets every public function (not the internal _helpers, which
-- only the SECURITY DEFINER functions call) and reads everything.
DO $$
DECLARE
    v_fn regprocedure;
BEGIN
    FOR v_fn IN
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = 'cyclone'::regnamespace AND p.proname NOT LIKE '\_%'
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO cyclone_admin', v_fn);
    END LOOP;
END
$$;
GRANT SELECT ON ALL TABLES IN SCHEMA cyclone TO cyclone_admin;

COMMIT;
