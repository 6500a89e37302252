-- Revert cyclone:history to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._archive_day(p_day date, p_ids uuid[])
 RETURNS integer
 LANGUAGE plpgsql
AS $$
DECLARE
    v_day cyclone.cyclone_history := cyclone._history_day(p_day);
    v_n int;
BEGIN
    EXECUTE format('WITH s AS (DELETE FROM ONLY cyclone.cyclone_steps s WHERE s.run_id = ANY ($1) RETURNING s.*) '
                   'INSERT INTO %s SELECT * FROM s', v_day.steps) USING p_ids;
    EXECUTE format('WITH r AS (DELETE FROM ONLY cyclone.cyclone_runs r WHERE r.id = ANY ($1) RETURNING r.*) '
                   'INSERT INTO %s SELECT * FROM r', v_day.runs) USING p_ids;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    DELETE FROM cyclone.cyclone_archive_queue q WHERE q.run_id = ANY (p_ids);
    RETURN v_n;
END
$$;
COMMENT ON FUNCTION cyclone._archive_day(date,uuid[]) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._history_day(p_day date)
 RETURNS cyclone.cyclone_history
 LANGUAGE plpgsql
AS $$
DECLARE
    v_day cyclone.cyclone_history;
    v_runs text := cyclone._history_table('runs', p_day);
    v_steps text := cyclone._history_table('steps', p_day);
    v_from timestamptz := p_day::timestamp AT TIME ZONE 'UTC';
    v_to timestamptz := (p_day + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
    SELECT h.* INTO v_day FROM cyclone.cyclone_history h WHERE h.day = p_day;
    IF FOUND THEN
        RETURN v_day;
    END IF;
    -- One creator at a time; the loser finds the winner's row.
    PERFORM pg_advisory_xact_lock(hashtext('cyclone._history_day'));
    SELECT h.* INTO v_day FROM cyclone.cyclone_history h WHERE h.day = p_day;
    IF FOUND THEN
        RETURN v_day;
    END IF;
    EXECUTE format(
        'CREATE TABLE %s (LIKE cyclone.cyclone_runs INCLUDING CONSTRAINTS INCLUDING INDEXES, '
        'CONSTRAINT history_run_finished CHECK (state IN (''completed'', ''failed'', ''cancelled'')), '
        'CONSTRAINT history_run_day CHECK (finished_at >= %L AND finished_at < %L))', v_runs, v_from, v_to);
    EXECUTE format('ALTER TABLE %s INHERIT cyclone.cyclone_runs', v_runs);
    -- What the live table has no index for (live_runs.sql): runs by state for
    -- the list pages, and by finish time for prune's day the cutoff falls in.
    EXECUTE format('CREATE INDEX ON %s (state, created_at, id)', v_runs);
    EXECUTE format('CREATE INDEX ON %s (finished_at)', v_runs);
    EXECUTE format(
        'CREATE TABLE %s (LIKE cyclone.cyclone_steps INCLUDING CONSTRAINTS INCLUDING INDEXES, '
        'CONSTRAINT history_step_finished CHECK (state IN (''completed'', ''discarded'', ''cancelled'')))', v_steps);
    EXECUTE format('ALTER TABLE %s INHERIT cyclone.cyclone_steps', v_steps);
    INSERT INTO cyclone.cyclone_history (day, runs, steps) VALUES (p_day, v_runs::regclass, v_steps::regclass)
    RETURNING * INTO v_day;
    RETURN v_day;
END
$$;
COMMENT ON FUNCTION cyclone._history_day(date) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._history_day_of(p_finished_at timestamp with time zone)
 RETURNS date
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT (p_finished_at AT TIME ZONE 'UTC')::date
$$;
COMMENT ON FUNCTION cyclone._history_day_of(timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._history_table(p_kind text, p_day date)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT format('cyclone.%I', 'cyclone_' || p_kind || '_' || to_char(p_day, 'YYYY_MM_DD'))
$$;
COMMENT ON FUNCTION cyclone._history_table(text,date) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._revive(p_run_id uuid)
 RETURNS boolean
 LANGUAGE plpgsql
AS $$
DECLARE
    v_table regclass;
    v_day cyclone.cyclone_history;
    v_n int;
BEGIN
    SELECT r.tableoid::regclass INTO v_table FROM cyclone.cyclone_runs r WHERE r.id = p_run_id;
    IF v_table IS NULL OR v_table = 'cyclone.cyclone_runs'::regclass THEN
        RETURN false;
    END IF;
    SELECT h.* INTO v_day FROM cyclone.cyclone_history h WHERE h.runs = v_table;
    EXECUTE format('WITH r AS (DELETE FROM %s r WHERE r.id = $1 RETURNING r.*) '
                   'INSERT INTO cyclone.cyclone_runs SELECT * FROM r', v_day.runs) USING p_run_id;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    IF v_n = 0 THEN
        RETURN false;
    END IF;
    -- Finished, in the live table: archive() takes it again unless reopened.
    INSERT INTO cyclone.cyclone_archive_queue (run_id, finished_at)
    SELECT r.id, r.finished_at FROM ONLY cyclone.cyclone_runs r WHERE r.id = p_run_id;
    EXECUTE format('WITH s AS (DELETE FROM %s s WHERE s.run_id = $1 RETURNING s.*) '
                   'INSERT INTO cyclone.cyclone_steps OVERRIDING SYSTEM VALUE SELECT * FROM s', v_day.steps)
        USING p_run_id;
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone._revive(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.archive(p_limit integer DEFAULT 10000)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
DECLARE
    v_batch record;
    v_moved int := 0;
    v_n int;
BEGIN
    PERFORM cyclone._require_given('archive', p_limit IS NOT NULL, 'p_limit must not be NULL');
    PERFORM cyclone._require('archive', p_limit > 0, 'p_limit must be positive');
    FOR v_batch IN
        WITH batch AS (
            SELECT r.id, r.finished_at FROM cyclone_archive_queue q JOIN ONLY cyclone_runs r ON r.id = q.run_id
             WHERE r.finished_at IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_runs p
                                WHERE p.id = r.parent_run_id AND p.state IN ('running', 'paused'))
               AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_runs c
                                WHERE c.parent_run_id = r.id AND c.state IN ('running', 'paused'))
             ORDER BY q.finished_at
             LIMIT p_limit
               FOR UPDATE OF r SKIP LOCKED)
        SELECT cyclone._history_day_of(b.finished_at) AS day, array_agg(b.id) AS ids
          FROM batch b GROUP BY 1 ORDER BY 1
    LOOP
        BEGIN
            v_n := cyclone._archive_day(v_batch.day, v_batch.ids);
        EXCEPTION WHEN undefined_table THEN
            -- A prune dropped the day's tables (its day is past the cutoff)
            -- after this read them: make them again; a later prune drops them.
            v_n := cyclone._archive_day(v_batch.day, v_batch.ids);
        END;
        v_moved := v_moved + v_n;
    END LOOP;
    RETURN v_moved;
END
$$;
COMMENT ON FUNCTION cyclone.archive(integer) IS 'Move up to p_limit finished runs (oldest first) and their steps out of the live tables into their day''s history tables; a run with a live parent or a live child stays. Returns how many. tick() calls it.';

COMMIT;
