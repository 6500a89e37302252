-- Deploy cyclone:clock
-- requires: schema
-- The one engine clock. Every engine function reads cyclone.now(); tests move it
-- with advance_time(), and the offset lives in a one-row table so that it holds
-- across connections.
BEGIN;

CREATE TABLE cyclone.clock (
    singleton boolean PRIMARY KEY DEFAULT true CONSTRAINT clock_singleton CHECK (singleton),
    time_offset interval NOT NULL DEFAULT interval '0'
);
INSERT INTO cyclone.clock DEFAULT VALUES;
COMMENT ON TABLE cyclone.clock IS 'Offset added to now() by cyclone.now(); zero in production.';

CREATE OR REPLACE FUNCTION cyclone.now()
RETURNS timestamptz
LANGUAGE plpgsql STABLE
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

CREATE OR REPLACE FUNCTION cyclone.advance_time(p_by interval)
RETURNS timestamptz
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

CREATE OR REPLACE FUNCTION cyclone.reset_time()
RETURNS void
LANGUAGE sql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
    UPDATE cyclone.clock SET time_offset = interval '0'
$$;
COMMENT ON FUNCTION cyclone.reset_time() IS 'Tests only: put the engine clock back on real time.';

-- Access (SPEC section 10): every role reads the clock; only cyclone_admin moves it.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.now() TO cyclone_worker, cyclone_client, cyclone_admin;
GRANT EXECUTE ON FUNCTION cyclone.advance_time(interval), cyclone.reset_time() TO cyclone_admin;
GRANT SELECT ON cyclone.clock TO cyclone_admin;

COMMIT;
