-- Revert cyclone:prune to its previous version: the deploy script it had before
-- (sql/deploy/prune@v0.22.0.sql), and a drop of each function the new version added.
BEGIN;

-- sql/engine/32_prune.sql: change `prune` — retention: deleting the runs that finished long enough ago.
-- Owns: prune, and its helpers _drop_history_day (a whole history day at once) and _forget_runs (a run's
-- rows outside the run and step tables). Finished runs live in the tables of the UTC day they finished
-- (43_history.sql, docs/history.md), so retention is a DROP TABLE per day, whose cost does not grow with
-- the runs in it and which leaves no index holding their space; what is not in a day that ended by the
-- cutoff (runs not archived yet, and the day the cutoff falls in) is deleted row by row. Events (SPEC 17)
-- older than the cutoff go too.
-- Requires: 14_events_tables.sql (cyclone_events), 13_history_tables.sql (cyclone_history, cyclone_archive_queue), 10_runs_tables.sql
-- (cyclone_runs, cyclone_steps, cyclone_audit, cyclone_step_errors, cyclone_run_keys),
-- 12_schedules_tables.sql (cyclone_schedule_runs), 43_history.sql (_history_table, _history_day_of,
-- _revive), 03_checks.sql (_require), 02_clock.sql (now).
-- Called by: cyclone_admin (`cyclone prune --older-than`, or a pg_cron job an operator makes); nothing
-- prunes on its own.
-- Locks: a day's two tables in ACCESS EXCLUSIVE mode, waiting at most one second for them; the runs pruned
-- row by row with FOR UPDATE SKIP LOCKED (a run someone holds is left to a later call), their steps after
-- them. A finished child of a live run is kept (its parent is read, not locked).
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=prune NOTE="..."` (docs/architecture.md, Changing the engine).

-- _forget_runs: deletes the runs' rows outside the run and step tables: audit rows, step errors, schedule
-- rows and idempotency keys. Their foreign keys to the runs are gone (a cascade would have deleted them when
-- archive() moves a run), so prune deletes them by hand. p_runs is the table of runs to read them from: a
-- day's table whole (p_ids NULL), or cyclone_runs, through its children, for the runs in p_ids.
CREATE OR REPLACE FUNCTION cyclone._forget_runs(p_runs regclass, p_ids uuid[])
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_runs text := format('(SELECT r.id, r.workflow, r.idempotency_key FROM %s r %s)', p_runs,
                          CASE WHEN p_ids IS NULL THEN '' ELSE 'WHERE r.id = ANY ($1)' END);
BEGIN
    EXECUTE format('DELETE FROM cyclone.cyclone_audit a WHERE a.run_id IN (SELECT r.id FROM %s r)', v_runs)
        USING p_ids;
    EXECUTE format('DELETE FROM cyclone.cyclone_step_errors e WHERE e.run_id IN (SELECT r.id FROM %s r)', v_runs)
        USING p_ids;
    EXECUTE format('DELETE FROM cyclone.cyclone_schedule_runs x WHERE x.run_id IN (SELECT r.id FROM %s r)', v_runs)
        USING p_ids;
    EXECUTE format('DELETE FROM cyclone.cyclone_run_keys k USING %s r '
                   'WHERE r.idempotency_key IS NOT NULL AND k.workflow = r.workflow AND k.key = r.idempotency_key',
                   v_runs) USING p_ids;
END
$$;
REVOKE ALL ON FUNCTION cyclone._forget_runs(regclass,uuid[]) FROM PUBLIC;

-- _drop_history_day: drops one history day: its two tables, the rows _forget_runs deletes for its runs, and
-- its cyclone_history row. The tables are locked first, ACCESS EXCLUSIVE, with lock_timeout at one second
-- (the caller's setting is put back after): a query reading them through cyclone_runs holds the lock off,
-- and new queries on cyclone_runs queue behind the wait. Returns how many runs went; NULL when the lock was
-- not granted in time (the next prune takes the day); 0 when a prune beside this one dropped it first. The
-- tables are named, not taken by the OID in cyclone_history, so that a day dropped meanwhile is a missing
-- table (undefined_table), not an OID with no name. A run of the day whose parent is live again (retried)
-- goes back to the live table first (_revive, under the day's lock), to be archived with its parent later.
CREATE OR REPLACE FUNCTION cyclone._drop_history_day(p_day date)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    -- By name, not by the OID in cyclone_history: a day another prune dropped
    -- meanwhile is then a missing table, not an OID with no name.
    v_runs text := cyclone._history_table('runs', p_day);
    v_steps text := cyclone._history_table('steps', p_day);
    v_timeout text := current_setting('lock_timeout');
    v_id uuid;
    v_count int;
BEGIN
    BEGIN
        PERFORM set_config('lock_timeout', '1s', true);
        EXECUTE format('LOCK TABLE %s, %s IN ACCESS EXCLUSIVE MODE', v_runs, v_steps);
        PERFORM set_config('lock_timeout', v_timeout, true);
    EXCEPTION
        WHEN lock_not_available THEN
            RETURN NULL;
        WHEN undefined_table THEN  -- a prune beside this one dropped it first
            RETURN 0;
    END;
    FOR v_id IN EXECUTE format(
        'SELECT c.id FROM %s c WHERE c.parent_run_id IS NOT NULL AND EXISTS ('
        'SELECT 1 FROM ONLY cyclone.cyclone_runs p WHERE p.id = c.parent_run_id AND p.state IN (''running'', ''paused''))',
        v_runs)
    LOOP
        PERFORM cyclone._revive(v_id);
    END LOOP;
    PERFORM cyclone._forget_runs(v_runs::regclass, NULL);
    EXECUTE format('SELECT count(*) FROM %s', v_runs) INTO v_count;
    EXECUTE format('DROP TABLE %s, %s', v_runs, v_steps);
    DELETE FROM cyclone.cyclone_history h WHERE h.day = p_day;
    RETURN v_count;
END
$$;
REVOKE ALL ON FUNCTION cyclone._drop_history_day(date) FROM PUBLIC;

-- prune: deletes the runs that finished more than p_older_than ago, with their steps and their rows
-- elsewhere, and returns how many. First up to 10 history days that ended by the cutoff, oldest first, are
-- dropped whole, whatever p_limit (each holds some 70 locks until the commit, and a backlog of years would
-- fill the lock table: call prune until it returns 0); a day that cannot be locked within a second stops
-- this step. Then up to p_limit runs row by row, oldest first: finished runs not archived yet, found through
-- cyclone_archive_queue (the live table has no index on finished_at), then the runs of the day the cutoff
-- falls in that finished before it, read in that day's own table (its finished_at index). A day that ended
-- by the cutoff but was not dropped (over the 10, or not locked) is left to a later call to drop whole. A
-- finished child of a running or paused run is kept. The row-by-row deletes name cyclone_runs and
-- cyclone_steps without ONLY: the runs may be in the live table or in the cutoff's day. Events emitted
-- before the cutoff go too (SPEC 17), not counted. Guards:
-- p_older_than not negative, p_limit positive (22023; NULL: 22004).
CREATE OR REPLACE FUNCTION cyclone.prune(p_older_than interval, p_limit integer DEFAULT 1000)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_cutoff timestamptz;
    v_day cyclone.cyclone_history;
    v_ids uuid[];
    v_count int := 0;
    v_n int;
BEGIN
    PERFORM cyclone._require('prune', p_older_than >= interval '0', 'p_older_than must not be negative');
    PERFORM cyclone._require('prune', p_limit > 0, 'p_limit must be positive');
    v_cutoff := cyclone.now() - p_older_than;

    -- At most 10 days a call: each holds some 70 locks until the commit.
    FOR v_day IN SELECT h.* FROM cyclone_history h
                  WHERE (h.day + 1)::timestamp AT TIME ZONE 'UTC' <= v_cutoff ORDER BY h.day LIMIT 10
    LOOP
        v_n := cyclone._drop_history_day(v_day.day);
        EXIT WHEN v_n IS NULL;
        v_count := v_count + v_n;
    END LOOP;

    -- Row by row: runs not archived yet, then those of the day the cutoff
    -- falls in (a day that ended by the cutoff is left to a later call to drop
    -- whole).
    v_ids := ARRAY(
        SELECT r.id FROM cyclone_archive_queue q JOIN ONLY cyclone_runs r ON r.id = q.run_id
         WHERE q.finished_at < v_cutoff AND r.finished_at IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_runs p
                            WHERE p.id = r.parent_run_id AND p.state IN ('running', 'paused'))
         ORDER BY q.finished_at
         LIMIT p_limit
           FOR UPDATE OF r SKIP LOCKED);
    SELECT h.* INTO v_day FROM cyclone_history h WHERE h.day = cyclone._history_day_of(v_cutoff);
    IF FOUND AND cardinality(v_ids) < p_limit THEN
        BEGIN
            EXECUTE format(
                'SELECT $1 || ARRAY(SELECT r.id FROM %s r WHERE r.finished_at < $2 '
                'AND NOT EXISTS (SELECT 1 FROM ONLY cyclone.cyclone_runs p '
                'WHERE p.id = r.parent_run_id AND p.state IN (''running'', ''paused'')) '
                'ORDER BY r.finished_at LIMIT $3 FOR UPDATE OF r SKIP LOCKED)',
                cyclone._history_table('runs', v_day.day))
               INTO v_ids USING v_ids, v_cutoff, p_limit - cardinality(v_ids);
        EXCEPTION WHEN undefined_table THEN
            NULL;  -- a prune beside this one dropped the day
        END;
    END IF;
    IF cardinality(v_ids) > 0 THEN
        PERFORM cyclone._forget_runs('cyclone.cyclone_runs', v_ids);
        DELETE FROM cyclone_archive_queue q WHERE q.run_id = ANY (v_ids);
        DELETE FROM cyclone_steps s WHERE s.run_id = ANY (v_ids);
        DELETE FROM cyclone_runs r WHERE r.id = ANY (v_ids);
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_count := v_count + v_n;
    END IF;
    -- Events emitted before the cutoff (SPEC 17), all of them: small rows, one range of their emitted_at index,
    -- not counted in the result (runs), so that "call until 0" never leaves events behind for want of runs.
    DELETE FROM cyclone_events e WHERE e.emitted_at < v_cutoff;
    RETURN v_count;
END
$$;
COMMENT ON FUNCTION cyclone.prune(interval,integer) IS 'Delete the runs finished more than p_older_than ago, with their steps: the history days that ended by then whole (up to 10 a call), and up to p_limit runs more row by row. A finished child of a live run is kept. Returns how many.';
REVOKE ALL ON FUNCTION cyclone.prune(interval,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.prune(interval,integer) TO cyclone_admin;

COMMIT;
