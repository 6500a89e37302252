-- Deploy cyclone:submit
-- submit(), submit_many() and get_run(): how any SQL client starts and reads a
-- run (SPEC section 5).
BEGIN;

-- Inputs (and signal payloads) are capped so one bad caller cannot bloat the
-- steps table: every step of a run carries a copy of the run input.
CREATE OR REPLACE FUNCTION cyclone._check_payload(p_what text, p_value jsonb)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF pg_column_size(p_value) > 1048576 THEN
        RAISE EXCEPTION '% is % bytes; the limit is 1 MiB', p_what, pg_column_size(p_value)
            USING ERRCODE = '22023';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION cyclone.submit(
    p_workflow text,
    p_input jsonb DEFAULT '{}',
    p_deadline interval DEFAULT NULL,
    p_idempotency_key text DEFAULT NULL,
    p_run_at timestamptz DEFAULT NULL)
RETURNS uuid
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
SET plan_cache_mode = force_generic_plan
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
    PERFORM cyclone._check_payload('submit: p_input', p_input);
    RETURN cyclone._create_run(p_workflow, p_input, p_deadline, p_idempotency_key, p_run_at, NULL, NULL);
END
$$;
COMMENT ON FUNCTION cyclone.submit(text, jsonb, interval, text, timestamptz) IS
    'Start a run of a workflow (SPEC section 5). Unknown workflow: P0002. Returns the run id.';

CREATE OR REPLACE FUNCTION cyclone.submit_many(
    p_workflow text,
    p_inputs jsonb[],
    p_deadline interval DEFAULT NULL)
RETURNS SETOF uuid
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_definition jsonb;
    v_ids uuid[];
BEGIN
    IF p_workflow IS NULL OR p_inputs IS NULL THEN
        RAISE EXCEPTION 'submit_many: p_workflow and p_inputs must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF array_position(p_inputs, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'submit_many: input % is NULL', array_position(p_inputs, NULL) USING ERRCODE = '22004';
    END IF;
    PERFORM cyclone._check_payload(format('submit_many: input %s', i.ord), i.input)
       FROM unnest(p_inputs) WITH ORDINALITY AS i(input, ord);
    SELECT w.definition INTO v_definition FROM cyclone_workflows w WHERE w.name = p_workflow;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow "%" is not defined', p_workflow USING ERRCODE = 'P0002';
    END IF;
    IF cardinality(p_inputs) = 0 THEN
        RETURN;
    END IF;

    -- Set-based: ids are made first so that they come back in input order.
    v_ids := ARRAY(SELECT gen_random_uuid() FROM generate_series(1, cardinality(p_inputs)));
    INSERT INTO cyclone_runs (id, workflow, input, created_at, started_at, deadline_at)
    SELECT r.id, p_workflow, r.input, v_now, v_now, CASE WHEN p_deadline > interval '0' THEN v_now + p_deadline END
      FROM unnest(v_ids, p_inputs) AS r(id, input);
    PERFORM cyclone._insert_steps(v_ids, p_inputs, v_definition, v_now);
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(v_definition -> 'nodes') n
                WHERE n ->> 'kind' <> 'task' AND jsonb_array_length(n -> 'deps') = 0) THEN
        PERFORM cyclone._advance_runs(v_ids);
    END IF;
    PERFORM pg_notify('cyclone_wakeup', '');
    RETURN QUERY SELECT unnest(v_ids);
END
$$;
COMMENT ON FUNCTION cyclone.submit_many(text, jsonb[], interval) IS
    'Start one run per input, in order, all or nothing.';

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
      FROM cyclone_runs r
      LEFT JOIN LATERAL (
          SELECT s.error_kind, s.error FROM cyclone_steps s
           WHERE s.run_id = r.id AND s.state = 'discarded' AND NOT s.contained
           ORDER BY s.finished_at, s.id
           LIMIT 1) f ON true
     WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'run % does not exist', p_run_id USING ERRCODE = 'P0002';
    END IF;
END
$$;
COMMENT ON FUNCTION cyclone.get_run(uuid) IS
    'One run with the error of the discard that failed it (NULL when none). Unknown id: P0002.';

COMMIT;
