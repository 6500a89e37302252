-- Deploy cyclone:cron
-- requires: cron@v0.13.0 checks
-- Reworked after v0.13.0 (cron@v0.13.0.sql has the rest of the change, which
-- stays): next_fire shows a bad time zone, and a cron that never fires, cut
-- to 40 characters, as every refusal shows a value. Only next_fire changes.
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.next_fire(p_cron text, p_after timestamptz, p_timezone text DEFAULT 'UTC')
RETURNS timestamptz
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_at timestamptz;
BEGIN
    PERFORM cyclone._require_given('next_fire', p_cron IS NOT NULL AND p_after IS NOT NULL AND p_timezone IS NOT NULL,
                                   'p_cron, p_after and p_timezone must not be NULL');
    IF NOT isfinite(p_after) THEN
        RAISE EXCEPTION 'next_fire: p_after must be finite (got %)', p_after USING ERRCODE = '22023';
    END IF;
    IF NOT cyclone._cron_timezone_known(p_timezone) THEN
        RAISE EXCEPTION 'next_fire: time zone % is not in pg_timezone_names', cyclone._shown(p_timezone)
            USING ERRCODE = '22023';
    END IF;
    v_at := cyclone._cron_after(cyclone._cron_spec(p_cron), p_after, p_timezone);
    IF v_at IS NULL THEN
        RAISE EXCEPTION 'next_fire: cron % never fires', cyclone._shown(p_cron) USING ERRCODE = '22023';
    END IF;
    RETURN v_at;
END
$$;

COMMIT;
