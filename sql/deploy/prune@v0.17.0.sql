-- Deploy cyclone:prune
-- requires: prune@v0.16.0 tables checks clock history live_runs
-- Reworked after v0.16.0 (the function below): the finished runs not archived
-- yet are found through cyclone_archive_queue (the live table has no index on
-- finished_at any more: live_runs.sql) and leave it; the day the cutoff falls
-- in is read in its own table. prune@v0.16.0.sql has the rest of the change.
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.prune(p_older_than interval, p_limit int DEFAULT 1000)
RETURNS int
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
    RETURN v_count;
END
$$;

COMMIT;
