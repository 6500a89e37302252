-- Revert cyclone:submit to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.get_run(p_run_id uuid)
 RETURNS TABLE(id uuid, workflow text, state text, error_kind text, error text, input jsonb, output jsonb, created_at timestamp with time zone, finished_at timestamp with time zone, deadline_at timestamp with time zone)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
COMMENT ON FUNCTION cyclone.get_run(uuid) IS 'One run with the error of the discard that failed it (NULL when none). Unknown id: P0002.';

CREATE OR REPLACE FUNCTION cyclone.submit(p_workflow text, p_input jsonb DEFAULT '{}'::jsonb, p_deadline interval DEFAULT NULL::interval, p_idempotency_key text DEFAULT NULL::text, p_run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_traceparent text DEFAULT NULL::text)
 RETURNS uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    IF p_workflow IS NULL THEN
        RAISE EXCEPTION 'submit: p_workflow must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF p_input IS NULL THEN
        RAISE EXCEPTION 'submit: p_input must not be NULL (use ''{}'')' USING ERRCODE = '22004';
    END IF;
    IF p_idempotency_key = '' THEN
        RAISE EXCEPTION 'submit: p_idempotency_key must not be empty' USING ERRCODE = '22023';
    END IF;
    IF p_traceparent IS NOT NULL AND cyclone._traceparent_problem(p_traceparent) IS NOT NULL THEN
        RAISE EXCEPTION 'submit: p_traceparent % %', cyclone._shown(p_traceparent),
            cyclone._traceparent_problem(p_traceparent) USING ERRCODE = '22023';
    END IF;
    PERFORM cyclone._check_payload('submit: p_input', p_input);
    RETURN (cyclone._start_runs(p_workflow, ARRAY[p_input], p_deadline, p_idempotency_key, p_run_at, NULL, NULL,
                                p_traceparent))[1];
END
$$;
COMMENT ON FUNCTION cyclone.submit(text,jsonb,interval,text,timestamp with time zone,text) IS 'Start a run of a workflow (SPEC section 5), in the caller''s trace when p_traceparent is given. Unknown workflow: P0002. Returns the run id.';

CREATE OR REPLACE FUNCTION cyclone.submit_many(p_workflow text, p_inputs jsonb[], p_deadline interval DEFAULT NULL::interval)
 RETURNS SETOF uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
BEGIN
    IF p_workflow IS NULL OR p_inputs IS NULL THEN
        RAISE EXCEPTION 'submit_many: p_workflow and p_inputs must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF array_position(p_inputs, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'submit_many: input % is NULL', array_position(p_inputs, NULL) USING ERRCODE = '22004';
    END IF;
    PERFORM cyclone._check_payload(format('submit_many: input %s', i.ord), i.input)
       FROM unnest(p_inputs) WITH ORDINALITY AS i(input, ord);
    -- No inputs start nothing, but an unknown workflow is still P0002.
    RETURN QUERY SELECT unnest(cyclone._start_runs(p_workflow, p_inputs, p_deadline, NULL, NULL, NULL, NULL));
END
$$;
COMMENT ON FUNCTION cyclone.submit_many(text,jsonb[],interval) IS 'Start one run per input, in order, all or nothing.';

COMMIT;
