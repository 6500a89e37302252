-- Deploy cyclone:claim
-- requires: claim@v0.12.0 tables checks clock limits traces fail wakeups
-- claim() and renew(): the lease half of the worker protocol (SPEC section 6);
-- the history of its reworks is in claim@v0.11.0.sql, whose helpers (the limits'
-- enforcement: _limited_queues, _limited_candidates, _admit) and renew() are
-- unchanged. Reworked after v0.11.0: claim returns previous_span, the span the
-- step's last failed execution reported to fail() (fail.sql: failed_span), as
-- a trailing column read from the row it updates (SPEC 14: a retry's span
-- links to the previous attempt's). A new return type needs the function
-- dropped and created again.
-- Reworked after v0.12.0: a claim that comes back with fewer steps than asked
-- records its worker as waiting for work, one that comes back full forgets it
-- (wakeups.sql: wake-ups are sent only while a worker waits).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.claim(
    p_worker text,
    p_handlers text[] DEFAULT NULL,
    p_limit int DEFAULT 1,
    p_lease_ttl interval DEFAULT '30 seconds',
    p_workflows text[] DEFAULT NULL)
RETURNS TABLE (step_id bigint, run_id uuid, workflow text, node text, handler text, kind text,
               attempt int, max_attempts int, lease_generation bigint, timeout interval,
               input jsonb, deps jsonb, traceparent text, previous_span text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
SET plan_cache_mode = force_generic_plan
-- Always walk the claimable index in claim order and stop at p_limit: with the
-- statistics of a table that has just grown (before autovacuum analyses it)
-- the planner would otherwise read and sort the whole backlog. No JIT: these
-- are short OLTP statements, and the costs above would make it compile them.
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := cyclone.now();
    v_ids bigint[];
    v_limited bigint[];
BEGIN
    -- One plain expression on the hot path; the checks that name the culprit
    -- run only when it is false or NULL.
    IF (p_worker <> '' AND p_limit > 0 AND p_lease_ttl > interval '0') IS NOT TRUE THEN
        PERFORM cyclone._require('claim', p_worker <> '', 'p_worker must be a non-empty worker name');
        PERFORM cyclone._require('claim', p_limit > 0, 'p_limit must be positive');
        PERFORM cyclone._require('claim', p_lease_ttl > interval '0', 'p_lease_ttl must be positive');
    END IF;
    -- Queue 0, the steps that take no limit: the claim of before limits. Two
    -- spellings of one query: the filters cost nothing when there are none to
    -- apply (an SQL caller's claim), and both have good generic plans (the
    -- claim path runs with plan_cache_mode = force_generic_plan and never
    -- re-plans). A worker passes its handlers and its workflows, so that it
    -- never takes a step of a workflow its code does not declare.
    IF p_handlers IS NULL AND p_workflows IS NULL THEN
        v_ids := ARRAY(
            SELECT s.id
              FROM cyclone_steps s
             WHERE s.queue_bucket = 0 AND s.state = 'available' AND s.scheduled_at <= v_now
               AND EXISTS (SELECT 1 FROM cyclone_runs r WHERE r.id = s.run_id AND r.state = 'running')
             ORDER BY s.priority, s.scheduled_at, s.id
             LIMIT p_limit
               FOR UPDATE OF s SKIP LOCKED);
    ELSE
        v_ids := ARRAY(
            SELECT s.id
              FROM cyclone_steps s
             WHERE s.queue_bucket = 0 AND s.state = 'available' AND s.scheduled_at <= v_now
               AND (p_handlers IS NULL OR s.handler = ANY (p_handlers))
               AND EXISTS (SELECT 1 FROM cyclone_runs r
                            WHERE r.id = s.run_id AND r.state = 'running'
                              AND (p_workflows IS NULL OR r.workflow = ANY (p_workflows)))
             ORDER BY s.priority, s.scheduled_at, s.id
             LIMIT p_limit
               FOR UPDATE OF s SKIP LOCKED);
    END IF;
    -- Limited steps, when any is available (one index descent to know).
    PERFORM 1 FROM cyclone_steps s WHERE s.state = 'available' AND s.queue_bucket > 0 LIMIT 1;
    IF FOUND THEN
        v_limited := cyclone._limited_candidates(v_now, p_handlers, p_workflows, p_limit);
        IF cardinality(v_limited) > 0 THEN
            v_ids := cyclone._admit(v_ids || v_limited, p_limit, v_now);
        END IF;
    END IF;
    PERFORM cyclone._claimed(p_worker, p_limit, cardinality(v_ids), p_lease_ttl, v_now);
    IF cardinality(v_ids) = 0 THEN
        RETURN;
    END IF;

    RETURN QUERY
    WITH claimed AS (
        UPDATE cyclone_steps s
           SET state = 'running',
               attempt = CASE WHEN s.rerun_attempt THEN greatest(s.attempt, 1) ELSE s.attempt + 1 END,
               rerun_attempt = false,
               lease_owner = p_worker,
               lease_expiry = v_now + p_lease_ttl,
               lease_generation = s.lease_generation + 1,
               heartbeat_at = v_now,
               started_at = v_now
         WHERE s.id = ANY (v_ids)
        RETURNING s.id, s.run_id, s.node, s.handler, s.kind, s.attempt, s.max_attempts,
                  s.lease_generation, s.timeout, s.input, s.deps, s.failed_span
    )
    SELECT c.id, c.run_id, r.workflow, c.node, c.handler, c.kind, c.attempt, c.max_attempts,
           c.lease_generation, c.timeout, c.input,
           CASE WHEN cardinality(c.deps) = 0 THEN '{}'::jsonb
                ELSE (SELECT coalesce(jsonb_object_agg(d.node, d.output), '{}')
                        FROM cyclone_steps d WHERE d.run_id = c.run_id AND d.node = ANY (c.deps)) END,
           r.traceparent, c.failed_span
      FROM claimed c
      JOIN cyclone_runs r ON r.id = c.run_id
     ORDER BY array_position(v_ids, c.id);
END
$$;
COMMENT ON FUNCTION cyclone.claim(text, text[], int, interval, text[]) IS
    'Lease up to p_limit due steps of running runs (SPEC section 6), of the given handlers and workflows '
    '(NULL = any), within their limits (SPEC 12). Returns input, deps outputs, the run''s traceparent and '
    'the span of the step''s last failed execution, in claim order.';

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.claim(text, text[], int, interval, text[]) TO cyclone_worker, cyclone_admin;

COMMIT;
