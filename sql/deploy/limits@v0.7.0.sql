-- Deploy cyclone:limits
-- requires: limits@v0.6.0 tables checks clock
-- Reworked after v0.6.0: the slot release trigger function pins its
-- search_path. A trigger runs with the search_path of whatever statement fired
-- it; every engine function sets one, but a direct UPDATE of cyclone_steps (an
-- admin's repair, a test planting a state) fired it without `cyclone` on the
-- path and failed on `cyclone_slots`. The tables and the other functions are
-- the v0.6.0 deploy's (limits@v0.6.0.sql).
BEGIN;

ALTER FUNCTION cyclone._release_slots() SET search_path = cyclone, pg_temp;

COMMIT;
