-- Deploy cyclone:clock
-- requires: clock@v0.17.0 schema
-- A complete copy of sql/engine/02_clock.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/02_clock.sql: change `clock` — the one engine clock.
-- Owns: cyclone.now(), advance_time(), reset_time().
-- Requires: 00_schema.sql, and the table cyclone.clock (01_clock_tables.sql), whose offset now() adds.
-- Called by: every engine function and column default that needs the time (no now(), clock_timestamp() or
-- current_timestamp anywhere else in the engine: STYLE.md), so that tests can move all of it at once; every
-- role may read it. advance_time and reset_time are for tests, granted to cyclone_admin only (SPEC 2).
-- Locks: advance_time and reset_time update the clock's one row, so two of them at once wait for each other;
-- now() only reads it.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=clock NOTE="..."` (docs/architecture.md, Changing the engine).

-- Engine time: the transaction's time (pg_catalog.now(), so it stays fixed within a transaction) plus the
-- test offset. A missing clock row counts as no offset. STABLE: it changes only between transactions or when
-- advance_time runs. SECURITY DEFINER: every role calls it (and column defaults call it for whoever inserts),
-- while only cyclone_admin may read cyclone.clock.
CREATE OR REPLACE FUNCTION cyclone.now()
RETURNS timestamp with time zone
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    -- PL/pgSQL rather than SQL: its plan is cached for the session, where a
    -- SQL body would be planned again in every statement that calls it.
    RETURN pg_catalog.now() + coalesce((SELECT c.time_offset FROM cyclone.clock c), interval '0');
END
$$;
COMMENT ON FUNCTION cyclone.now() IS 'Engine time: transaction time plus the test offset set by advance_time().';
REVOKE ALL ON FUNCTION cyclone.now() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.now() TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.now() TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.now() TO cyclone_admin;

-- Tests only: moves the engine clock forward by p_by and returns the new engine time. The offset accumulates
-- and lives in the clock row, so every connection sees it once this transaction commits. The clock only moves
-- forward: a negative p_by is 22023, a NULL one 22004; reset_time() is the way back.
CREATE OR REPLACE FUNCTION cyclone.advance_time(p_by interval)
RETURNS timestamp with time zone
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    IF p_by IS NULL THEN
        RAISE EXCEPTION 'p_by must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF p_by < interval '0' THEN
        RAISE EXCEPTION 'the engine clock only moves forward (p_by = %)', p_by USING ERRCODE = '22023';
    END IF;
    UPDATE cyclone.clock SET time_offset = time_offset + p_by;
    RETURN cyclone.now();
END
$$;
COMMENT ON FUNCTION cyclone.advance_time(interval) IS
    'Tests only: move the engine clock forward by p_by (cumulative, across connections).';
REVOKE ALL ON FUNCTION cyclone.advance_time(interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.advance_time(interval) TO cyclone_admin;

-- Tests only: sets the offset back to zero, so the engine runs on real time again.
CREATE OR REPLACE FUNCTION cyclone.reset_time()
RETURNS void
LANGUAGE sql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
    UPDATE cyclone.clock SET time_offset = interval '0'
$$;
COMMENT ON FUNCTION cyclone.reset_time() IS 'Tests only: put the engine clock back on real time.';
REVOKE ALL ON FUNCTION cyclone.reset_time() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.reset_time() TO cyclone_admin;

COMMIT;
