-- Deploy cyclone:version
-- requires: version@v0.32.0 schema
-- A complete copy of sql/engine/47_version.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/47_version.sql: change `version` — which release of the engine a database holds.
-- Owns: version(). Requires: 00_schema.sql.
-- Called by: every role (cyclone_worker, cyclone_client, cyclone_admin): a worker or client compares it with
-- its own release (cyclone_py.__version__) before it starts, and `cyclone --version` prints both.
-- Each release reworks this change with its number, just before its tag (docs/architecture.md, Releasing), so
-- that the function deployed is the release deployed: a database migrated to a tag answers that tag's
-- number, whichever release it came from. tests/test_version.py holds the function, the package and the plan
-- to the same number.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=version NOTE="..."` (docs/architecture.md, Changing the engine).

-- version: the engine's release, as the package names it ("0.33.0"). SECURITY DEFINER with a pinned
-- search_path as every public function (it reads nothing, but the access tests hold every one to it).
CREATE OR REPLACE FUNCTION cyclone.version()
RETURNS text
LANGUAGE sql
IMMUTABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
    SELECT '0.33.0'::text
$$;
COMMENT ON FUNCTION cyclone.version() IS 'The release of the engine deployed in this database, e.g. ''0.33.0''.';
REVOKE ALL ON FUNCTION cyclone.version() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.version() TO cyclone_worker, cyclone_client, cyclone_admin;

COMMIT;
