-- Revert cyclone:cron to its previous version: the deploy script it had before
-- (sql/deploy/cron@v0.18.0.sql), and a drop of each function the new version added.
BEGIN;

-- sql/engine/33_cron.sql: change `cron` — cron evaluation in any time zone (SPEC 13).
-- Owns: next_fire(cron, after, timezone), the first fire time strictly after a moment, and the pieces under
-- it: the parser (_cron_parse, one field at a time with _cron_field and _cron_value; _cron_spec casts its
-- result to the type cron_spec, which schedules keep so that tick never parses), the evaluator over a
-- parsed cron (_cron_after), the wall-clock search (_cron_next_wall: month -> day -> hour -> minute over
-- the parsed arrays), wall clock to instant across daylight-saving changes (_cron_instant: in a gap, the
-- jump; in a repeated hour, the first occurrence), and the time zone check (_cron_timezone_known).
-- Requires: 12_schedules_tables.sql (the type cron_spec), 03_checks.sql (_require_given, _shown). Reads no
-- clock: every function here is given its moment.
-- Called by: every role (next_fire; the CLI's cron-next); 34_schedules.sql (schedule, backfill and tick's
-- _fire_schedules call _cron_spec and _cron_after). Takes no locks.
-- The messages say "cron: ..." and name no caller, since schedule() shows them as well as next_fire.
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=cron NOTE="..."` (docs/architecture.md, Changing the engine).

-- _cron_value: one value of a field: a number in [p_lo, p_hi] (at most four digits are read; more is out
-- of range) or a three-letter name from p_names (case-insensitive; the first name is p_name_base). 22023
-- naming the field otherwise.
CREATE OR REPLACE FUNCTION cyclone._cron_value(
    p_text text,
    p_what text,
    p_field text,
    p_lo integer,
    p_hi integer,
    p_names text[],
    p_name_base integer)
RETURNS integer
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_value int;
BEGIN
    IF p_text ~ '^[0-9]+$' THEN
        v_value := CASE WHEN length(p_text) > 4 THEN -1 ELSE p_text::int END;
        IF v_value BETWEEN p_lo AND p_hi THEN
            RETURN v_value;
        END IF;
        RAISE EXCEPTION 'cron: % % is out of range (% to %)', p_what, p_text, p_lo, p_hi
            USING ERRCODE = '22023';
    END IF;
    IF p_text !~ '^[A-Za-z]{3}$' THEN
        RAISE EXCEPTION 'cron: bad % field "%"', p_what, p_field USING ERRCODE = '22023';
    END IF;
    v_value := array_position(p_names, upper(p_text));
    IF v_value IS NULL THEN
        RAISE EXCEPTION 'cron: unknown % name "%"', p_what, p_text USING ERRCODE = '22023';
    END IF;
    RETURN v_value - 1 + p_name_base;
END
$$;
REVOKE ALL ON FUNCTION cyclone._cron_value(text,text,text,integer,integer,text[],integer) FROM PUBLIC;

-- _cron_field: one field: '*', lists, ranges and steps (a-b/n, */n, and a/n meaning a to the top), values
-- as numbers or names. Returns the field's values, sorted and distinct; 22023 naming the field for a bad
-- one (a backwards range, a step of 0 or larger than the field's span). Split with split_part and LIKE,
-- not regular expression captures, which were slow. In the day-of-week field 7 is Sunday, as 0 is.
CREATE OR REPLACE FUNCTION cyclone._cron_field(
    p_field text,
    p_what text,
    p_lo integer,
    p_hi integer,
    p_names text[],
    p_name_base integer)
RETURNS integer[]
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_part text;
    v_range text;
    v_step_text text;
    v_from int;
    v_to int;
    v_step int;
    v_set boolean[];
    v_values int[] := '{}'::int[];
BEGIN
    FOREACH v_part IN ARRAY string_to_array(p_field, ',') LOOP
        -- range[/step], range = * | value | value-value (no regex captures: slow).
        v_range := split_part(v_part, '/', 1);
        v_step_text := CASE WHEN strpos(v_part, '/') > 0 THEN split_part(v_part, '/', 2) END;
        IF v_part LIKE '%/%/%' OR v_range LIKE '%-%-%' OR v_step_text !~ '^[0-9]{1,4}$'
           OR (v_range LIKE '*%' AND v_range <> '*') THEN
            RAISE EXCEPTION 'cron: bad % field "%"', p_what, p_field USING ERRCODE = '22023';
        END IF;
        IF v_range = '*' THEN
            v_from := p_lo;
            v_to := p_hi;
        ELSE
            v_from := cyclone._cron_value(split_part(v_range, '-', 1), p_what, p_field, p_lo, p_hi, p_names, p_name_base);
            v_to := CASE WHEN strpos(v_range, '-') > 0
                         THEN cyclone._cron_value(split_part(v_range, '-', 2), p_what, p_field, p_lo, p_hi, p_names, p_name_base)
                         WHEN v_step_text IS NOT NULL THEN p_hi
                         ELSE v_from END;
        END IF;
        IF v_from > v_to THEN
            RAISE EXCEPTION 'cron: bad % field "%": range % is backwards', p_what, p_field, v_part
                USING ERRCODE = '22023';
        END IF;
        v_step := coalesce(v_step_text::int, 1);
        IF v_step NOT BETWEEN 1 AND p_hi - p_lo + 1 THEN
            RAISE EXCEPTION 'cron: bad % field "%": step must be 1 to %', p_what, p_field, p_hi - p_lo + 1
                USING ERRCODE = '22023';
        END IF;
        FOR v_value IN v_from .. v_to BY v_step LOOP
            -- Day of week: 7 is Sunday, as 0 is.
            v_set[CASE WHEN p_what = 'day of week' AND v_value = 7 THEN 0 ELSE v_value END] := true;
        END LOOP;
    END LOOP;
    FOR v_value IN p_lo .. p_hi LOOP
        IF v_set[v_value] THEN
            v_values := v_values || v_value;
        END IF;
    END LOOP;
    RETURN v_values;
END
$$;
REVOKE ALL ON FUNCTION cyclone._cron_field(text,text,integer,integer,text[],integer) FROM PUBLIC;

-- _cron_parse: a cron expression, five fields or an @ shorthand (@yearly, @annually, @monthly, @weekly,
-- @daily, @midnight, @hourly), as arrays: minutes, hours, days of month, months, days of week (0 = Sunday),
-- and whether each day field is unrestricted (begins with *), which decides how _cron_next_wall combines
-- them. Case and surrounding blanks do not matter. 22023 for anything else.
CREATE OR REPLACE FUNCTION cyclone._cron_parse(
    p_cron text, OUT minutes integer[], OUT hours integer[], OUT days integer[], OUT months integer[], OUT weekdays integer[], OUT any_day boolean, OUT any_weekday boolean)
RETURNS record
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_cron text := lower(btrim(p_cron));
    v_fields text[];
BEGIN
    v_cron := CASE v_cron
        WHEN '@yearly' THEN '0 0 1 1 *' WHEN '@annually' THEN '0 0 1 1 *'
        WHEN '@monthly' THEN '0 0 1 * *' WHEN '@weekly' THEN '0 0 * * 0'
        WHEN '@daily' THEN '0 0 * * *' WHEN '@midnight' THEN '0 0 * * *'
        WHEN '@hourly' THEN '0 * * * *' ELSE v_cron END;
    v_fields := regexp_split_to_array(v_cron, '\s+');
    IF v_cron = '' OR cardinality(v_fields) <> 5 THEN
        RAISE EXCEPTION 'cron: "%" must have five fields (minute hour day-of-month month day-of-week) or be an @ shorthand',
            p_cron USING ERRCODE = '22023';
    END IF;
    minutes := cyclone._cron_field(v_fields[1], 'minute', 0, 59, '{}', 0);
    hours := cyclone._cron_field(v_fields[2], 'hour', 0, 23, '{}', 0);
    days := cyclone._cron_field(v_fields[3], 'day of month', 1, 31, '{}', 1);
    months := cyclone._cron_field(v_fields[4], 'month', 1, 12,
        '{JAN,FEB,MAR,APR,MAY,JUN,JUL,AUG,SEP,OCT,NOV,DEC}', 1);
    weekdays := cyclone._cron_field(v_fields[5], 'day of week', 0, 7, '{SUN,MON,TUE,WED,THU,FRI,SAT}', 0);
    any_day := v_fields[3] LIKE '*%';
    any_weekday := v_fields[5] LIKE '*%';
END
$$;
REVOKE ALL ON FUNCTION cyclone._cron_parse(text) FROM PUBLIC;

-- _cron_spec: _cron_parse's result as a cron_spec, the form cyclone_schedules.spec keeps.
CREATE OR REPLACE FUNCTION cyclone._cron_spec(p_cron text)
RETURNS cyclone.cron_spec
LANGUAGE sql
IMMUTABLE
AS $$ SELECT ROW(p.*)::cyclone.cron_spec FROM cyclone._cron_parse(p_cron) p $$;
REVOKE ALL ON FUNCTION cyclone._cron_spec(text) FROM PUBLIC;

-- _cron_next_wall: the first wall-clock time at or after p_from (whole minutes) that the parsed cron
-- matches, searching 8 years (every February 29 pattern fires in that span); NULL when none does (a cron
-- such as '0 0 30 2 *' never fires). Days match as in cron (SPEC 13): when both day fields are restricted,
-- a day that matches either is a match; when one is unrestricted, the other decides.
CREATE OR REPLACE FUNCTION cyclone._cron_next_wall(
    p_minutes integer[],
    p_hours integer[],
    p_days integer[],
    p_months integer[],
    p_weekdays integer[],
    p_any_day boolean,
    p_any_weekday boolean,
    p_from timestamp without time zone)
RETURNS timestamp without time zone
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_from date := p_from::date;
    v_hour int := extract(hour FROM p_from);
    v_minute int := extract(minute FROM p_from);
    v_first date;
    v_last int;
    v_dow1 int;
    v_dom_ok boolean;
    v_dow_ok boolean;
    v_h int;
    v_m int;
    v_month int;
    v_month_from date := date_trunc('month', p_from)::date;
BEGIN
    FOR v_year IN extract(year FROM p_from)::int .. extract(year FROM p_from)::int + 8 LOOP
        FOREACH v_month IN ARRAY p_months LOOP
            v_first := make_date(v_year, v_month, 1);
            CONTINUE WHEN v_first < v_month_from;
            v_last := extract(day FROM v_first + interval '1 month' - interval '1 day');
            v_dow1 := extract(dow FROM v_first);
            FOR v_day IN CASE WHEN v_first = v_month_from THEN extract(day FROM v_from)::int ELSE 1 END
                         .. v_last LOOP
                v_dom_ok := v_day = ANY (p_days);
                v_dow_ok := (v_dow1 + v_day - 1) % 7 = ANY (p_weekdays);
                CONTINUE WHEN NOT CASE WHEN p_any_day AND p_any_weekday THEN true
                                       WHEN p_any_day THEN v_dow_ok
                                       WHEN p_any_weekday THEN v_dom_ok
                                       ELSE v_dom_ok OR v_dow_ok END;
                IF v_first + v_day - 1 > v_from THEN
                    RETURN make_timestamp(v_year, v_month, v_day, p_hours[1], p_minutes[1], 0);
                END IF;
                -- The day of p_from: the first hour and minute at or after it.
                FOREACH v_h IN ARRAY p_hours LOOP
                    CONTINUE WHEN v_h < v_hour;
                    FOREACH v_m IN ARRAY p_minutes LOOP
                        IF v_h > v_hour OR v_m >= v_minute THEN
                            RETURN make_timestamp(v_year, v_month, v_day, v_h, v_m, 0);
                        END IF;
                    END LOOP;
                END LOOP;
            END LOOP;
        END LOOP;
    END LOOP;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION cyclone._cron_next_wall(integer[],integer[],integer[],integer[],integer[],boolean,boolean,timestamp without time zone) FROM PUBLIC;

-- _cron_instant: the instant of wall-clock time p_wall in p_timezone. When the hour repeats, its first
-- occurrence; when a daylight-saving jump skips it, the first instant after the jump (the first instant
-- whose wall-clock time is later). The offsets in force a day either side of a first guess give every
-- instant p_wall can be; a skipped time is found by a binary search to the second. STABLE: the answer
-- depends on the server's time zone data.
CREATE OR REPLACE FUNCTION cyclone._cron_instant(p_wall timestamp without time zone, p_timezone text)
RETURNS timestamp with time zone
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    v_guess timestamptz := p_wall AT TIME ZONE p_timezone;
    v_candidate timestamptz;
    v_best timestamptz;
    v_lo timestamptz;
    v_hi timestamptz;
    v_mid timestamptz;
BEGIN
    -- The offsets in force around the guess (a day either side) give every
    -- instant whose wall-clock time p_wall can be.
    FOREACH v_candidate IN ARRAY ARRAY[
        (p_wall - ((v_guess - interval '1 day') AT TIME ZONE p_timezone - (v_guess - interval '1 day') AT TIME ZONE 'UTC')) AT TIME ZONE 'UTC',
        v_guess,
        (p_wall - ((v_guess + interval '1 day') AT TIME ZONE p_timezone - (v_guess + interval '1 day') AT TIME ZONE 'UTC')) AT TIME ZONE 'UTC']
    LOOP
        IF v_candidate AT TIME ZONE p_timezone = p_wall THEN
            v_best := least(v_best, v_candidate);
        END IF;
        v_lo := least(v_lo, v_candidate);
        v_hi := greatest(v_hi, v_candidate);
    END LOOP;
    IF v_best IS NOT NULL THEN
        RETURN v_best;
    END IF;
    -- Skipped: binary search (to the second) for the first instant whose wall
    -- clock is at or past p_wall.
    IF NOT (v_lo AT TIME ZONE p_timezone < p_wall AND v_hi AT TIME ZONE p_timezone >= p_wall) THEN
        v_lo := (p_wall - interval '2 days') AT TIME ZONE 'UTC';
        v_hi := (p_wall + interval '2 days') AT TIME ZONE 'UTC';
    END IF;
    WHILE v_hi - v_lo > interval '1 second' LOOP
        v_mid := v_lo + (v_hi - v_lo) / 2;
        v_mid := to_timestamp(floor(extract(epoch FROM v_mid)));
        IF v_mid AT TIME ZONE p_timezone >= p_wall THEN
            v_hi := v_mid;
        ELSE
            v_lo := v_mid;
        END IF;
    END LOOP;
    RETURN v_hi;
END
$$;
REVOKE ALL ON FUNCTION cyclone._cron_instant(timestamp without time zone,text) FROM PUBLIC;

-- _cron_after: the evaluator over a parsed cron: the first fire time strictly after p_after in p_timezone
-- (a zone already checked), NULL when it never fires. It walks wall-clock minutes from p_after's own minute
-- on and takes the first whose instant is strictly after p_after (the second pass of a repeated hour maps
-- to an earlier instant, and is passed over). next_fire, schedule, backfill and tick's _fire_schedules
-- call it.
CREATE OR REPLACE FUNCTION cyclone._cron_after(
    p_spec cyclone.cron_spec,
    p_after timestamp with time zone,
    p_timezone text)
RETURNS timestamp with time zone
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    v_wall timestamp := date_trunc('minute', p_after AT TIME ZONE p_timezone);
    v_at timestamptz;
BEGIN
    LOOP
        v_wall := cyclone._cron_next_wall(p_spec.minutes, p_spec.hours, p_spec.days, p_spec.months, p_spec.weekdays,
                                          p_spec.any_day, p_spec.any_weekday, v_wall);
        IF v_wall IS NULL THEN
            RETURN NULL;
        END IF;
        v_at := cyclone._cron_instant(v_wall, p_timezone);
        EXIT WHEN v_at > p_after;
        v_wall := v_wall + interval '1 minute';
    END LOOP;
    RETURN v_at;
END
$$;
REVOKE ALL ON FUNCTION cyclone._cron_after(cyclone.cron_spec,timestamp with time zone,text) FROM PUBLIC;

-- _cron_timezone_known: whether p_timezone is in pg_timezone_names. That view reads every zone file (about
-- 50 ms), so a name found there is remembered for the session in the setting cyclone.known_timezones (a
-- comma-separated list; a name with a comma is always looked up). 'UTC' needs no lookup. Declared STABLE
-- although it writes that setting: the cache never changes an answer.
CREATE OR REPLACE FUNCTION cyclone._cron_timezone_known(p_timezone text)
RETURNS boolean
LANGUAGE plpgsql
STABLE
AS $$
BEGIN
    IF p_timezone = 'UTC' OR (strpos(p_timezone, ',') = 0
         AND strpos(coalesce(current_setting('cyclone.known_timezones', true), ''), ',' || p_timezone || ',') > 0) THEN
        RETURN true;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = p_timezone) THEN
        RETURN false;
    END IF;
    PERFORM set_config('cyclone.known_timezones',
                       coalesce(nullif(current_setting('cyclone.known_timezones', true), ''), ',') || p_timezone || ',',
                       false);
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION cyclone._cron_timezone_known(text) FROM PUBLIC;

-- next_fire: the public face of the evaluator (SPEC 13): parses p_cron and returns its first fire time
-- strictly after p_after in p_timezone's wall clock. 22004 for a NULL argument; 22023 for an infinite
-- p_after, an unknown time zone, a bad cron, or a cron that never fires (the zone and the cron shown cut to
-- 40 characters, as every refusal shows a value).
CREATE OR REPLACE FUNCTION cyclone.next_fire(
    p_cron text,
    p_after timestamp with time zone,
    p_timezone text DEFAULT 'UTC'::text)
RETURNS timestamp with time zone
LANGUAGE plpgsql
STABLE
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
COMMENT ON FUNCTION cyclone.next_fire(text,timestamp with time zone,text) IS 'The first fire time of a five-field cron (or @yearly ... @hourly) strictly after p_after, in p_timezone''s wall clock (SPEC 13): a time skipped by a DST jump fires at the jump, a repeated time fires once, at its first occurrence. 22023 for a bad cron, a cron that never fires, an unknown time zone.';
REVOKE ALL ON FUNCTION cyclone.next_fire(text,timestamp with time zone,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.next_fire(text,timestamp with time zone,text) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.next_fire(text,timestamp with time zone,text) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.next_fire(text,timestamp with time zone,text) TO cyclone_admin;

COMMIT;
