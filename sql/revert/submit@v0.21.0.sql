-- Revert cyclone:submit to its previous version: the deploy script it had before
-- (sql/deploy/submit@v0.20.0.sql), and a drop of each function the new version added.
BEGIN;

-- 0.21.0 gave these a p_priority parameter (SPEC 16): the previous signatures come back below.
DROP FUNCTION IF EXISTS cyclone.submit(text, jsonb, interval, text, timestamptz, text, integer);
DROP FUNCTION IF EXISTS cyclone.submit_many(text, jsonb[], interval, integer);

-- sql/engine/23_submit.sql: change `submit` — how any SQL client starts and reads a run
-- (SPEC 5): submit, submit_many and get_run, granted to cyclone_client and cyclone_admin.
-- They check their arguments and leave the rest to 22_advance.sql's _start_runs, the
-- one path every run is made by.
-- Requires: 22_advance.sql (_start_runs), 03_checks.sql (_input_problem, _check_input,
-- _deadline_problem, _shown), 02_clock.sql (now, for p_run_at's range),
-- 39_traces.sql (_traceparent_problem), 10_runs_tables.sql (cyclone_runs, cyclone_steps).
-- Locks: none on a run that exists. A submit writes new rows, which no other
-- transaction sees before it commits; two submits of one idempotency key, or two
-- creating one limit bucket, wait for each other's insert of that row (21_runs.sql).
-- get_run takes no lock.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=submit NOTE="..."` (docs/architecture.md, Changing the engine).

-- Starts one run of p_workflow (SPEC 5) and returns its id. 22004 for a NULL
-- workflow or input; P0002 for an unknown workflow; 22023, naming the argument, for
-- - p_input that is not a JSON object, is over 1 MiB or is nested deeper than 100
--   levels (_input_problem, 03_checks.sql: what every reader of a run could not hold);
-- - p_idempotency_key empty or over 1,000 bytes: the key is a btree key
--   (cyclone_run_keys, with the workflow's name, and cyclone_runs_key), and a btree
--   entry holds at most about 2,700 bytes: a longer key was a raw 54000 from the
--   index. Bytes, not characters: 1,000 characters of a four-byte script would not fit;
-- - p_run_at infinite or more than 100 years from cyclone.now(): '-infinity' made
--   every reader that subtracts times (metrics' ready lag) fail for everyone, and
--   'infinity' was a run that never came due. A time in the past is due at once;
-- - p_deadline over 1,000,000 days (_deadline_problem, 03_checks.sql; zero or
--   negative still means no deadline, SPEC 5): a 1,000,000-year one was a raw 22008,
--   and one of over about 8,000 years a deadline_at Python cannot load;
-- - a malformed p_traceparent (the message says what is wrong).
-- Nothing is written before these checks pass. A key already used for the workflow
-- returns that run's id, with its own traceparent, and writes nothing. p_traceparent,
-- a W3C trace context, is kept on the run so that each execution of its steps joins
-- the caller's trace (SPEC 14). It is the last parameter and there is no
-- five-argument form, so calls with one to five arguments resolve to this one function.
-- The input check is _input_problem inlined into an IF (about half a microsecond for
-- a small input); _check_input, which names the argument, runs only to raise.
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
    IF octet_length(p_idempotency_key) > 1000 THEN
        RAISE EXCEPTION 'submit: p_idempotency_key is % bytes long; the limit is 1000 bytes',
            octet_length(p_idempotency_key) USING ERRCODE = '22023';
    END IF;
    IF p_run_at IS NOT NULL
       AND NOT p_run_at BETWEEN cyclone.now() - interval '100 years' AND cyclone.now() + interval '100 years' THEN
        RAISE EXCEPTION 'submit: p_run_at must be within 100 years of now (got %)', p_run_at
            USING ERRCODE = '22023';
    END IF;
    IF cyclone._deadline_problem(p_deadline) IS NOT NULL THEN
        RAISE EXCEPTION 'submit: p_deadline %', cyclone._deadline_problem(p_deadline) USING ERRCODE = '22023';
    END IF;
    IF p_traceparent IS NOT NULL AND cyclone._traceparent_problem(p_traceparent) IS NOT NULL THEN
        RAISE EXCEPTION 'submit: p_traceparent % %', cyclone._shown(p_traceparent),
            cyclone._traceparent_problem(p_traceparent) USING ERRCODE = '22023';
    END IF;
    IF cyclone._input_problem(p_input) IS NOT NULL THEN
        PERFORM cyclone._check_input('submit: p_input', p_input);
    END IF;
    RETURN (cyclone._start_runs(p_workflow, ARRAY[p_input], p_deadline, p_idempotency_key, p_run_at, NULL, NULL,
                                p_traceparent))[1];
END
$$;
COMMENT ON FUNCTION cyclone.submit(text,jsonb,interval,text,timestamp with time zone,text) IS 'Start a run of a workflow (SPEC section 5), in the caller''s trace when p_traceparent is given. Unknown workflow: P0002. Returns the run id.';
REVOKE ALL ON FUNCTION cyclone.submit(text,jsonb,interval,text,timestamp with time zone,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.submit(text,jsonb,interval,text,timestamp with time zone,text) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.submit(text,jsonb,interval,text,timestamp with time zone,text) TO cyclone_admin;

-- The batch form of submit: one run per input, in order, all or nothing. 22004 for
-- a NULL argument or input; 22023 for more than 10,000 inputs, for an input that
-- submit would refuse (not a JSON object, over 1 MiB, nested deeper than 100 levels:
-- _input_problem, the message naming the first such input's position), or a deadline
-- over 1,000,000 days; P0002 for an unknown workflow, even with no inputs. No
-- idempotency key, no start time, no traceparent (SPEC 5 gives it none: its runs are
-- in no trace).
-- 10,000 a call: one call is one transaction that holds its new rows' locks and one
-- statement's memory for every input; a million inputs took 46 s in one call. A
-- client with more submits them in batches (10,000 one-step runs: about half a second).
-- The inputs are checked by one query that stops at the first bad one; _check_input
-- then raises for it.
CREATE OR REPLACE FUNCTION cyclone.submit_many(
    p_workflow text,
    p_inputs jsonb[],
    p_deadline interval DEFAULT NULL::interval)
RETURNS SETOF uuid
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_bad record;
BEGIN
    IF p_workflow IS NULL OR p_inputs IS NULL THEN
        RAISE EXCEPTION 'submit_many: p_workflow and p_inputs must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF cardinality(p_inputs) > 10000 THEN
        RAISE EXCEPTION 'submit_many: p_inputs has % inputs; the limit is 10000 a call', cardinality(p_inputs)
            USING ERRCODE = '22023';
    END IF;
    IF array_position(p_inputs, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'submit_many: input % is NULL', array_position(p_inputs, NULL) USING ERRCODE = '22004';
    END IF;
    IF cyclone._deadline_problem(p_deadline) IS NOT NULL THEN
        RAISE EXCEPTION 'submit_many: p_deadline %', cyclone._deadline_problem(p_deadline) USING ERRCODE = '22023';
    END IF;
    SELECT i.ord, i.input INTO v_bad
      FROM unnest(p_inputs) WITH ORDINALITY AS i(input, ord)
     WHERE cyclone._input_problem(i.input) IS NOT NULL
     ORDER BY i.ord
     LIMIT 1;
    IF FOUND THEN
        PERFORM cyclone._check_input(format('submit_many: input %s', v_bad.ord), v_bad.input);
    END IF;
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
