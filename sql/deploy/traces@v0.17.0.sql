-- Deploy cyclone:traces
-- requires: tables checks
-- Traces (SPEC 5 and 14): cyclone_runs.traceparent, the W3C trace context a
-- run was submitted in (its "traceparent" header value), kept so that every
-- execution of its steps joins the caller's trace; a child run takes its
-- parent's (runs.sql: _create_runs). The named CHECK makes a malformed value
-- unstorable; _traceparent_problem says what is wrong with one, for submit's
-- 22023 message. Internal: granted to no role.
BEGIN;

-- NULL when p_traceparent is a W3C traceparent (or NULL), else what is wrong
-- with it: four dash-separated fields of lower-case hex (version 2, trace id
-- 32, parent id 16, flags 2), version ff invalid, neither id all zeros.
CREATE OR REPLACE FUNCTION cyclone._traceparent_problem(p_traceparent text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE
        WHEN p_traceparent !~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'
            THEN 'is not version-traceid-parentid-flags of 2, 32, 16 and 2 lower-case hex digits'
        WHEN left(p_traceparent, 2) = 'ff' THEN 'has the invalid version ff'
        WHEN substr(p_traceparent, 4, 32) = repeat('0', 32) THEN 'has an all-zero trace id'
        WHEN substr(p_traceparent, 37, 16) = repeat('0', 16) THEN 'has an all-zero parent id'
    END
$$;

ALTER TABLE cyclone.cyclone_runs ADD COLUMN traceparent text
    CONSTRAINT run_traceparent_valid CHECK (
        traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'
        AND left(traceparent, 2) <> 'ff'
        AND substr(traceparent, 4, 32) <> repeat('0', 32)
        AND substr(traceparent, 37, 16) <> repeat('0', 16));
COMMENT ON COLUMN cyclone.cyclone_runs.traceparent IS
    'The W3C trace context (traceparent) the run was submitted in, or its parent run''s; NULL = none.';

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;

COMMIT;
