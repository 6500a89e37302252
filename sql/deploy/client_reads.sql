-- Deploy cyclone:client_reads
-- requires: tables
-- SPEC 10: cyclone_client reads cyclone_runs and cyclone_steps, so that the
-- documented queries (the run-deadline note joins the two) run as written for
-- a client after SET search_path = cyclone, public. Reads only: every write
-- still goes through a function.
BEGIN;

GRANT SELECT ON cyclone.cyclone_runs, cyclone.cyclone_steps TO cyclone_client;

COMMIT;
