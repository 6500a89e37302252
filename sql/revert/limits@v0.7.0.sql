-- Revert cyclone:limits (back to its v0.6.0 deploy: the trigger function uses
-- its caller's search_path again)
BEGIN;

ALTER FUNCTION cyclone._release_slots() RESET search_path;

COMMIT;
