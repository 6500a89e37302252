-- @@ engine file of change clock; header of clock.sql:
-- Deploy cyclone:clock
-- requires: schema
-- The one engine clock. Every engine function reads cyclone.now(); tests move it
-- with advance_time(), and the offset lives in a one-row table so that it holds
-- across connections.
-- @@ plan notes of every version of this change:
-- @@ [clock.sql] One engine clock, cyclone.now(), that tests can move with advance_time.

-- @@ last defined in clock.sql
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

-- @@ last defined in clock.sql
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
COMMENT ON FUNCTION cyclone.advance_time(interval) IS 'Tests only: move the engine clock forward by p_by (cumulative, across connections).';
REVOKE ALL ON FUNCTION cyclone.advance_time(interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.advance_time(interval) TO cyclone_admin;

-- @@ last defined in clock.sql
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
