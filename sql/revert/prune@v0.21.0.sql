-- Revert cyclone:prune to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

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
COMMENT ON FUNCTION cyclone._drop_history_day(date) IS NULL;

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
COMMENT ON FUNCTION cyclone._forget_runs(regclass,uuid[]) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.prune(p_older_than interval, p_limit integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
    RETURN v_count;
END
$$;
COMMENT ON FUNCTION cyclone.prune(interval,integer) IS 'Delete the runs finished more than p_older_than ago, with their steps: the history days that ended by then whole (up to 10 a call), and up to p_limit runs more row by row. A finished child of a live run is kept. Returns how many.';

COMMIT;
