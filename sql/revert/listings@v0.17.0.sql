-- Revert cyclone:listings
BEGIN;

DROP FUNCTION cyclone.list_dead_letters(text, text, int);
DROP FUNCTION cyclone.list_steps(uuid);
DROP FUNCTION cyclone.list_runs(text, text, int, timestamptz);
DROP FUNCTION cyclone._check_list_limit(text, int);

COMMIT;
