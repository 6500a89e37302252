-- Revert cyclone:submit to its previous version: the deploy script it had before
-- (sql/deploy/submit@v0.18.0.sql), and a drop of each function the new version added.
BEGIN;

-- sql/engine/23_submit.sql: change `submit` — how any SQL client starts and reads a run
-- (SPEC 5): submit, submit_many and get_run, granted to cyclone_client and cyclone_admin.
-- They check their arguments and leave the rest to 22_advance.sql's _start_runs, the
-- one path every run is made by.
-- Requires: 22_advance.sql (_start_runs), 03_checks.sql (_check_payload, _shown),
-- 39_traces.sql (_traceparent_problem), 10_runs_tables.sql (cyclone_runs, cyclone_steps).
-- Locks: none on a run that exists. A submit writes new rows, which no other
-- transaction sees before it commits; two submits of one idempotency key, or two
-- creating one limit bucket, wait for each other's insert of that row (21_runs.sql).
-- get_run takes no lock.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=submit NOTE="..."` (docs/architecture.md, Changing the engine).

-- Starts one run of p_workflow (SPEC 5) and returns its id. 22004 for a NULL
-- workflow or input; 22023 for an empty idempotency key, a malformed p_traceparent
-- (the message says what is wrong) or an input over 1 MiB; P0002 for an unknown
-- workflow. A key already used for the workflow returns that run's id, with its own
-- traceparent, and writes nothing. p_traceparent, a W3C trace context, is kept on the
-- run so that each execution of its steps joins the caller's trace (SPEC 14). It is
-- the last parameter and there is no five-argument form, so calls with one to five
-- arguments resolve to this one function.
-- plan_cache_mode = force_generic_plan, as on the whole hot path (submit, claim,
-- renew, complete, complete_many, fail): its statements have good generic plans, and
-- planning them again on every call cost more than executing them.
CREATE OR REPLACE FUNCTION cyclone.submit(
    p_workflow text,
    p_input jsonb DEFAULT '{}'::jsonb,
    p_deadline interval DEFAULT NULL::interval,
    p_idempotency_key text DEFAULT NULL::text,
    p_run_at timestamp with time zone DEFAULT NULL::timestamp with time zone,
    p_traceparent text DEFAULT NULL::text)
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
REVOKE ALL ON FUNCTION cyclone.submit(text,jsonb,interval,text,timestamp with time zone,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.submit(text,jsonb,interval,text,timestamp with time zone,text) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.submit(text,jsonb,interval,text,timestamp with time zone,text) TO cyclone_admin;

-- The batch form of submit: one run per input, in order, all or nothing. 22004 for
-- a NULL argument or input, 22023 for an input over 1 MiB (either naming the input's
-- position); P0002 for an unknown workflow, even with no inputs. No idempotency key,
-- no start time, no traceparent (SPEC 5 gives it none: its runs are in no trace).
CREATE OR REPLACE FUNCTION cyclone.submit_many(
    p_workflow text,
    p_inputs jsonb[],
    p_deadline interval DEFAULT NULL::interval)
RETURNS SETOF uuid
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
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
REVOKE ALL ON FUNCTION cyclone.submit_many(text,jsonb[],interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.submit_many(text,jsonb[],interval) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.submit_many(text,jsonb[],interval) TO cyclone_admin;

-- One run with the error of the discard that failed it: the earliest (by
-- finished_at, then id) discarded step not contained by cancel_branch, NULL when
-- there is none (SPEC 5). NULL id: 22004; unknown id: P0002. It reads the live tables
-- first (ONLY) and the parents, history included, only for a run that is not there,
-- so that polling a live run never plans, locks or probes the day tables
-- (43_history.sql). STABLE, so both reads see the calling query's snapshot: a run
-- archived meanwhile is found by one or the other. #variable_conflict use_column:
-- the result columns share their names with the tables'.
CREATE OR REPLACE FUNCTION cyclone.get_run(p_run_id uuid)
RETURNS TABLE(id uuid, workflow text, state text, error_kind text, error text, input jsonb, output jsonb, created_at timestamp with time zone, finished_at timestamp with time zone, deadline_at timestamp with time zone)
LANGUAGE plpgsql
STABLE
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
COMMENT ON FUNCTION cyclone.get_run(uuid) IS 'One run with the error of the discard that failed it (NULL when none). Unknown id: P0002.';
REVOKE ALL ON FUNCTION cyclone.get_run(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.get_run(uuid) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.get_run(uuid) TO cyclone_admin;

COMMIT;
