-- Deploy cyclone:submit
-- requires: submit@v0.15.0 advance checks traces history
-- Reworked after v0.15.0 (only get_run changes): it reads the live tables first
-- (ONLY) and the parents, history included, only for a run that is not there,
-- so that polling a live run never plans, locks or probes the day tables
-- (history.sql). An archived run is found by the second read; a run archived
-- between the two is found by the second too (a statement's own snapshot).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.get_run(p_run_id uuid)
RETURNS TABLE (id uuid, workflow text, state text, error_kind text, error text, input jsonb,
               output jsonb, created_at timestamptz, finished_at timestamptz, deadline_at timestamptz)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    IF p_run_id IS NULL THEN
        RAISE EXCEPTION 'get_run: p_run_id must not be NULL' USING ERRCODE = '22004';
    END IF;
    RETURN QUERY
    SELECT r.id, r.workflow, r.state, f.error_kind, f.error, r.input, r.output, r.created_at,
           r.finished_at, r.deadline_at
      FROM ONLY cyclone_runs r
      LEFT JOIN LATERAL (
          SELECT s.error_kind, s.error FROM ONLY cyclone_steps s
           WHERE s.run_id = r.id AND s.state = 'discarded' AND NOT s.contained
           ORDER BY s.finished_at, s.id
           LIMIT 1) f ON true
     WHERE r.id = p_run_id;
    IF FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT r.id, r.workflow, r.state, f.error_kind, f.error, r.input, r.output, r.created_at,
           r.finished_at, r.deadline_at
      FROM cyclone_runs r
      LEFT JOIN LATERAL (
          SELECT s.error_kind, s.error FROM cyclone_steps s
           WHERE s.run_id = r.id AND s.state = 'discarded' AND NOT s.contained
           ORDER BY s.finished_at, s.id
           LIMIT 1) f ON true
     WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'run % not found', p_run_id USING ERRCODE = 'P0002';
    END IF;
END
$$;

COMMIT;
