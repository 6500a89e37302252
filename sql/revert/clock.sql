-- Revert cyclone:clock to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.advance_time(p_by interval)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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

CREATE OR REPLACE FUNCTION cyclone.now()
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
BEGIN
    -- PL/pgSQL rather than SQL: its plan is cached for the session, where a
    -- SQL body would be planned again in every statement that calls it.
    RETURN pg_catalog.now() + coalesce((SELECT c.time_offset FROM cyclone.clock c), interval '0');
END
$$;
COMMENT ON FUNCTION cyclone.now() IS 'Engine time: transaction time plus the test offset set by advance_time().';

CREATE OR REPLACE FUNCTION cyclone.reset_time()
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
    UPDATE cyclone.clock SET time_offset = interval '0'
$$;
COMMENT ON FUNCTION cyclone.reset_time() IS 'Tests only: put the engine clock back on real time.';

COMMIT;
