-- Revert cyclone_router:listings
BEGIN;

DROP FUNCTION cyclone.metrics();
DROP FUNCTION cyclone.list_dead_letters(text, text, int);
DROP FUNCTION cyclone.list_runs(text, text, int, timestamptz);
DROP FUNCTION cyclone._metrics(int);
DROP FUNCTION cyclone._list_dead_letters(int, text, text, int);
DROP FUNCTION cyclone._list_runs(int, text, text, int, timestamptz);

COMMIT;
