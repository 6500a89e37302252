-- Deploy cyclone:advance
-- requires: advance@v0.16.0 runs clock wakeups history live_runs
-- Reworked after v0.16.0 (the function below): the runs that end are queued
-- for archive() in cyclone_archive_queue (live_runs.sql) by the statement that
-- ends them. The previous files of this change have the rest of it.
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._finish_runs(p_run_ids uuid[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_now timestamptz := cyclone.now();
    v_run_id uuid;
    v_children uuid[];
BEGIN
    FOR v_run_id IN
        SELECT r.id FROM ONLY cyclone_runs r
         WHERE r.id = ANY (p_run_ids) AND r.state IN ('running', 'paused')
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps s
                            WHERE s.run_id = r.id AND s.state IN ('pending', 'available', 'running', 'waiting'))
           AND EXISTS (SELECT 1 FROM ONLY cyclone_steps s
                        WHERE s.run_id = r.id AND s.state = 'discarded' AND NOT s.contained)
         ORDER BY r.id
    LOOP
        PERFORM cyclone._end_run_and_notify(v_run_id, 'failed', 'run failed');
    END LOOP;

    WITH done AS (
        UPDATE ONLY cyclone_runs r
           SET state = 'completed', finished_at = v_now, paused_at = NULL,
               -- Leaves: nodes no step of the run depends on (the array of all
               -- deps is computed once per run, not once per step).
               output = (SELECT coalesce(jsonb_object_agg(s.node, s.output), '{}')
                           FROM ONLY cyclone_steps s
                          WHERE s.run_id = r.id AND s.state = 'completed'
                            AND s.node <> ALL (ARRAY(SELECT unnest(t.deps) FROM ONLY cyclone_steps t
                                                      WHERE t.run_id = r.id)))
         WHERE r.id = ANY (p_run_ids) AND r.state IN ('running', 'paused')
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps s
                            WHERE s.run_id = r.id
                              AND (s.state IN ('pending', 'available', 'running', 'waiting')
                                   OR (s.state = 'discarded' AND NOT s.contained)))
        RETURNING r.id, r.parent_step_id
    ), queued AS (
        INSERT INTO cyclone_archive_queue (run_id, finished_at)
        SELECT d.id, v_now FROM done d
    )
    SELECT array_agg(d.id ORDER BY d.id) FILTER (WHERE d.parent_step_id IS NOT NULL) INTO v_children FROM done d;

    FOREACH v_run_id IN ARRAY coalesce(v_children, '{}') LOOP
        PERFORM cyclone._notify_parent(v_run_id);
    END LOOP;
END
$function$;

COMMIT;
