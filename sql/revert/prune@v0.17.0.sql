-- Revert cyclone:prune (back to its v0.16.0 body of the function below)
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.prune(p_older_than interval, p_limit integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $function$
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
    -- whole; the range keeps this from reading through it).
    v_ids := ARRAY(
        SELECT r.id FROM ONLY cyclone_runs r
         WHERE r.state IN ('completed', 'failed', 'cancelled')
           AND r.finished_at < v_cutoff
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_runs p
                            WHERE p.id = r.parent_run_id AND p.state IN ('running', 'paused'))
         ORDER BY r.finished_at
         LIMIT p_limit
           FOR UPDATE OF r SKIP LOCKED);
    v_ids := v_ids || ARRAY(
        SELECT r.id FROM cyclone_runs r
         WHERE r.finished_at >= date_trunc('day', v_cutoff AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
           AND r.finished_at < v_cutoff
           AND r.tableoid <> 'cyclone.cyclone_runs'::regclass
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_runs p
                            WHERE p.id = r.parent_run_id AND p.state IN ('running', 'paused'))
         ORDER BY r.finished_at
         LIMIT p_limit - cardinality(v_ids)
           FOR UPDATE OF r SKIP LOCKED);
    IF cardinality(v_ids) > 0 THEN
        PERFORM cyclone._forget_runs('cyclone.cyclone_runs', v_ids);
        DELETE FROM cyclone_steps s WHERE s.run_id = ANY (v_ids);
        DELETE FROM cyclone_runs r WHERE r.id = ANY (v_ids);
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_count := v_count + v_n;
    END IF;
    RETURN v_count;
END
$function$;

COMMIT;
