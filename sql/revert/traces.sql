-- Revert cyclone:traces to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

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
COMMENT ON FUNCTION cyclone._traceparent_problem(text) IS NULL;

COMMIT;
