-- Deploy cyclone:traces
-- requires: traces@v0.17.0 tables checks
-- A complete copy of sql/engine/39_traces.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/39_traces.sql: change `traces` — the trace context of a run (SPEC 5 and 14).
-- cyclone_runs.traceparent is the W3C trace context a run was submitted in (its "traceparent" header
-- value), kept so that every execution of its steps joins the caller's trace; a child run takes its
-- parent's (21_runs.sql, _create_runs), and claim returns it with each step (24_claim.sql).
-- Owns: _traceparent_problem. The column and its named CHECK run_traceparent_valid, which makes a malformed
-- value unstorable, are in 10_runs_tables.sql. Requires nothing else.
-- Called by: submit (23_submit.sql) for its 22023 message, and fail (26_fail.sql) to check p_span.
-- Internal: granted to no role. Takes no lock.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=traces NOTE="..."` (docs/architecture.md, Changing the engine).

-- _traceparent_problem: NULL when p_traceparent is a W3C traceparent (or NULL), else what is wrong with it,
-- as the end of a sentence for the caller's message: four dash-separated fields of lower-case hex (version
-- 2, trace id 32, parent id 16, flags 2), version ff invalid, neither id all zeros. The same rules as the
-- CHECK run_traceparent_valid: change both together.
CREATE OR REPLACE FUNCTION cyclone._traceparent_problem(p_traceparent text)
RETURNS text
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT CASE
        WHEN p_traceparent !~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'
            THEN 'is not version-traceid-parentid-flags of 2, 32, 16 and 2 lower-case hex digits'
        WHEN left(p_traceparent, 2) = 'ff' THEN 'has the invalid version ff'
        WHEN substr(p_traceparent, 4, 32) = repeat('0', 32) THEN 'has an all-zero trace id'
        WHEN substr(p_traceparent, 37, 16) = repeat('0', 16) THEN 'has an all-zero parent id'
    END
$$;
REVOKE ALL ON FUNCTION cyclone._traceparent_problem(text) FROM PUBLIC;

COMMIT;
