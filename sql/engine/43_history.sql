-- sql/engine/43_history.sql: change `history` — finished runs leave the tables the hot path touches
-- (docs/history.md).
-- cyclone_runs and cyclone_steps keep the live rows, and the runs that finished since the last archive();
-- each UTC day of finished runs has a table of its own for its runs and one for their steps, inheritance
-- children of cyclone_runs and cyclone_steps, listed in cyclone_history. A query on cyclone_runs,
-- cyclone_steps or a view over them reads the children too, so every run is where users look until it is
-- pruned; the engine's own statements read the live tables with ONLY, so a claim or a completion never
-- plans, locks or scans a day table. prune() (32_prune.sql) drops a whole day by dropping its two tables.
-- Inheritance, not PARTITION BY: a partitioned table's primary key must include its partition key, and
-- cyclone_runs keeps id as its primary key (SPEC 3), with the live rows in a table of their own. A day's
-- tables are made here when first needed, or ahead by tick() (today's and tomorrow's).
-- What leaves the live tables with a run: its steps. What stays where it was: its audit rows, step errors,
-- schedule row and idempotency key (cyclone_run_keys, unique over every kept run), which prune() deletes
-- with the run; their foreign keys to the live tables are gone (a cascade would delete them at archive).
-- A run's unconsumed signals are deleted when it is archived (nothing can consume them; no foreign key
-- cascades since hot_path_keys).
-- cyclone_archive_queue lists the finished runs of the live table (the transaction that ends a run adds it,
-- 21_runs.sql and 22_advance.sql): archive() reads it instead of an index on finished_at, which the live
-- table does without so that ending a run is a HOT update.
-- Owns: archive, _archive_day, _revive, _history_day, _history_day_of, _history_table. The tables
-- (cyclone_history, cyclone_archive_queue) are in 13_history_tables.sql.
-- Requires: 13_history_tables.sql, 10_runs_tables.sql (cyclone_runs, cyclone_steps, cyclone_run_keys),
-- 03_checks.sql (_require, _require_given).
-- Called by: tick (31_tick.sql: _history_day, archive), cyclone_admin (archive), retry and retry_all
-- (29_operator.sql: _revive), prune (32_prune.sql: _history_table, _history_day_of, _revive).
-- Locks: archive takes the runs it moves with FOR UPDATE SKIP LOCKED, so it never waits for an operator
-- action, a tick or another archive; creating a day's tables is serialised by an advisory lock, and
-- attaching them takes SHARE UPDATE EXCLUSIVE on the parents (it waits for a VACUUM of the live tables,
-- never for the engine's work).
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=history NOTE="..."` (docs/architecture.md, Changing the engine).

-- _history_day_of: the UTC day a run that finished at p_finished_at is archived under.
CREATE OR REPLACE FUNCTION cyclone._history_day_of(p_finished_at timestamp with time zone)
RETURNS date
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT (p_finished_at AT TIME ZONE 'UTC')::date
$$;
REVOKE ALL ON FUNCTION cyclone._history_day_of(timestamp with time zone) FROM PUBLIC;

-- _history_table: the name of a day's table of runs or steps (p_kind 'runs' or 'steps'), qualified and
-- quoted: cyclone.cyclone_runs_YYYY_MM_DD, cyclone.cyclone_steps_YYYY_MM_DD.
CREATE OR REPLACE FUNCTION cyclone._history_table(p_kind text, p_day date)
RETURNS text
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT format('cyclone.%I', 'cyclone_' || p_kind || '_' || to_char(p_day, 'YYYY_MM_DD'))
$$;
REVOKE ALL ON FUNCTION cyclone._history_table(text,date) FROM PUBLIC;

-- _history_day: the tables of one day, made when missing, and the day's cyclone_history row. Both tables
-- take the live table's columns, CHECKs and indexes (the partial ones on live states stay empty), so that
-- reads through the parent find a day's rows by the same keys, plus a CHECK that every row is finished and,
-- for runs, that it finished that day; then they inherit from the live table. A day's runs table also gets
-- the two indexes the live one does without (10_runs_tables.sql): (state, created_at, id) for the list
-- pages and (finished_at) for prune's day the cutoff falls in. One creator at a time (an advisory lock; the
-- loser finds the winner's row). Names are qualified: the tables' owner may call it directly, as the
-- history bench does.
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
        'CONSTRAINT history_step_finished CHECK (state IN (''completed'', ''discarded'', ''cancelled'', ''skipped'')))',
        v_steps);
    EXECUTE format('ALTER TABLE %s INHERIT cyclone.cyclone_steps', v_steps);
    INSERT INTO cyclone.cyclone_history (day, runs, steps) VALUES (p_day, v_runs::regclass, v_steps::regclass)
    RETURNING * INTO v_day;
    RETURN v_day;
END
$$;
REVOKE ALL ON FUNCTION cyclone._history_day(date) FROM PUBLIC;

-- _archive_day: moves the given runs, all finished on p_day, with their steps, from the live tables into the
-- day's tables (made when missing), steps first, each in one DELETE ... RETURNING into an INSERT; their
-- unconsumed signals are deleted; the runs leave cyclone_archive_queue. Returns how many runs moved. The
-- caller (archive) holds their locks.
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
    DELETE FROM cyclone.cyclone_signals g WHERE g.run_id = ANY (p_ids);
    EXECUTE format('WITH r AS (DELETE FROM ONLY cyclone.cyclone_runs r WHERE r.id = ANY ($1) RETURNING r.*) '
                   'INSERT INTO %s SELECT * FROM r', v_day.runs) USING p_ids;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    DELETE FROM cyclone.cyclone_archive_queue q WHERE q.run_id = ANY (p_ids);
    RETURN v_n;
END
$$;
REVOKE ALL ON FUNCTION cyclone._archive_day(date,uuid[]) FROM PUBLIC;

-- archive: moves up to p_limit finished runs, oldest first (by cyclone_archive_queue), with their steps, into
-- the tables of the day they finished, one _archive_day a day; returns how many. A run whose parent is live,
-- or that has a live child (a child run retried by an operator), stays: a tree leaves together once all of
-- it is done, and prune keeps a finished child while its parent is live. Runs locked by someone else are
-- skipped, so two archives never wait for each other. When a prune drops a day's tables after this read
-- them (the day is past the cutoff), the day is made again and the runs moved there; a later prune drops
-- them. Guards: p_limit positive (22023; NULL: 22004).
CREATE OR REPLACE FUNCTION cyclone.archive(p_limit integer DEFAULT 10000)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
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
REVOKE ALL ON FUNCTION cyclone.archive(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.archive(integer) TO cyclone_admin;

-- _revive: brings an archived run and its steps back into the live tables, for a retry to reopen it (or for
-- prune, before it drops a day, when the run's parent is live again). The caller holds the run's lock
-- (retry: _lock_run, which finds an archived run too) or its day's (prune). The run comes back finished, so
-- it goes on cyclone_archive_queue again: archive() takes it again unless it is reopened. Steps keep their
-- ids (OVERRIDING SYSTEM VALUE: the live table's id is an identity). False when the run is not archived.
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
REVOKE ALL ON FUNCTION cyclone._revive(uuid) FROM PUBLIC;
