-- Revert cyclone:claim (back to its v0.7.0 deploy script, below)
-- claim() and renew(): the lease half of the worker protocol (SPEC section 6).
-- claim takes steps with FOR UPDATE SKIP LOCKED, so concurrent workers never get
-- the same step; each claim bumps lease_generation, which fences every later
-- renew/complete/fail of an older lease. Reworked after v0.2.0: claim takes
-- p_workflows, and the four-argument form is dropped so that calls with one to
-- four arguments (a worker of the previous release) still resolve to one function.
-- Reworked after v0.4.0: claim enforces limits (SPEC 12). Steps with no limit
-- are read as before (queue 0 of the claim index); each bucket's queue is read
-- only while the bucket has room, so steps held back by a full bucket are never
-- read; the bucket rows of the candidates are locked last, by id, and each
-- candidate is admitted in claim order (priority, the round-robin of keyed
-- buckets, scheduled_at, id) while every bucket it takes has room.
-- Reworked after v0.6.0: claim returns the run's traceparent (SPEC 14), a
-- trailing column read from the run row claim already joins for workflow; a
-- new return type needs the function dropped and created again.
BEGIN;

DROP FUNCTION cyclone._limited_queues(timestamptz);
DROP TYPE cyclone._claim_candidate;

DROP FUNCTION IF EXISTS cyclone.claim(text, text[], int, interval);
DROP FUNCTION IF EXISTS cyclone.claim(text, text[], int, interval, text[]);

-- The candidates from the queues of limited buckets that have room now (an
-- estimate without their locks; _admit decides under them): for each such
-- bucket, its first due steps in claim order, up to its room and p_limit,
-- locked with SKIP LOCKED. A step that also takes another bucket that is full
-- is passed over, not waited on (SPEC 12: no head-of-line blocking). The
-- buckets with available steps are found by a skip scan of the claim index
-- (one descent per bucket), so a full bucket costs one descent, whatever its
-- backlog.
CREATE OR REPLACE FUNCTION cyclone._limited_candidates(p_now timestamptz, p_handlers text[], p_workflows text[],
                                                       p_limit int)
RETURNS bigint[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_queue record;
    v_ids bigint[] := '{}'::bigint[];
BEGIN
    FOR v_queue IN
        WITH RECURSIVE q(id) AS (
            (SELECT s.queue_bucket FROM cyclone_steps s
              WHERE s.state = 'available' AND s.queue_bucket > 0
              ORDER BY s.queue_bucket LIMIT 1)
            UNION ALL
            SELECT (SELECT s.queue_bucket FROM cyclone_steps s
                     WHERE s.state = 'available' AND s.queue_bucket > q.id
                     ORDER BY s.queue_bucket LIMIT 1)
              FROM q WHERE q.id IS NOT NULL)
        SELECT q.id, cyclone._bucket_room(q.id, p_now) AS room FROM q WHERE q.id IS NOT NULL
    LOOP
        CONTINUE WHEN v_queue.room = 0;
        v_ids := v_ids || ARRAY(
            SELECT s.id
              FROM cyclone_steps s
             WHERE s.queue_bucket = v_queue.id AND s.state = 'available' AND s.scheduled_at <= p_now
               AND (p_handlers IS NULL OR s.handler = ANY (p_handlers))
               -- A scalar subquery, not EXISTS: a semi-join's generic plan drove
               -- from cyclone_runs and sorted the whole queue (13 ms for 10,000).
               AND (SELECT r.state = 'running' AND (p_workflows IS NULL OR r.workflow = ANY (p_workflows))
                      FROM cyclone_runs r WHERE r.id = s.run_id)
               AND (cardinality(s.buckets) = 1
                    OR NOT EXISTS (SELECT 1 FROM unnest(s.buckets) b(id)
                                    WHERE b.id <> v_queue.id AND cyclone._bucket_room(b.id, p_now) = 0))
             ORDER BY s.priority, s.scheduled_at, s.id
             LIMIT least(p_limit, v_queue.room)
               FOR UPDATE OF s SKIP LOCKED);
    END LOOP;
    RETURN v_ids;
END
$$;

-- Chooses which of the locked candidates are claimed: locks their buckets
-- (and row 0, the group of steps without a keyed limit, when keyed buckets
-- compete), last and by id, then admits candidates in claim order — priority,
-- then one per fairness group per turn, groups least recently served first
-- (never served first), then scheduled_at, id — while every bucket a candidate
-- takes has room, up to p_limit. Takes the slots, records rate claim times and
-- each group's last serve (each row one serve). Returns the ids in claim order.
CREATE OR REPLACE FUNCTION cyclone._admit(p_candidates bigint[], p_limit int, p_now timestamptz)
RETURNS bigint[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_fair boolean;
    v_bids bigint[];
    v_rooms int[];
    v_step record;
    v_i int;
    v_ids bigint[] := '{}'::bigint[];
    v_groups bigint[] := '{}'::bigint[];
    v_serves bigint[] := '{}'::bigint[];
BEGIN
    v_fair := EXISTS (SELECT 1 FROM cyclone_steps s WHERE s.id = ANY (p_candidates) AND s.fair_bucket <> 0);
    v_bids := ARRAY(SELECT DISTINCT b.id
                      FROM (SELECT unnest(s.buckets) FROM cyclone_steps s WHERE s.id = ANY (p_candidates)
                            UNION ALL
                            SELECT 0 WHERE v_fair) b(id)
                     ORDER BY b.id);
    PERFORM 1 FROM cyclone_buckets k WHERE k.id = ANY (v_bids) ORDER BY k.id FOR UPDATE;
    -- Exact now: whoever held these rows before us has committed its slots
    -- and claim times, and this statement sees them.
    v_rooms := ARRAY(SELECT coalesce(cyclone._bucket_room(b.id, p_now), 2147483647)
                       FROM unnest(v_bids) WITH ORDINALITY AS b(id, ord) ORDER BY b.ord);

    FOR v_step IN
        SELECT s.id, s.buckets, s.fair_bucket
          FROM cyclone_steps s
          JOIN cyclone_buckets g ON g.id = s.fair_bucket
         WHERE s.id = ANY (p_candidates)
         ORDER BY s.priority,
                  row_number() OVER (PARTITION BY s.priority, s.fair_bucket ORDER BY s.scheduled_at, s.id),
                  g.served NULLS FIRST, s.fair_bucket, s.scheduled_at, s.id
    LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM unnest(v_step.buckets) b WHERE v_rooms[array_position(v_bids, b)] <= 0);
        FOREACH v_i IN ARRAY ARRAY(SELECT array_position(v_bids, b) FROM unnest(v_step.buckets) b) LOOP
            v_rooms[v_i] := v_rooms[v_i] - 1;
        END LOOP;
        v_ids := v_ids || v_step.id;
        IF v_fair THEN
            v_groups := v_groups || v_step.fair_bucket;
            v_serves := v_serves || nextval('cyclone.cyclone_serve_seq');
        END IF;
        EXIT WHEN cardinality(v_ids) >= p_limit;
    END LOOP;

    INSERT INTO cyclone_slots (bucket_id, step_id)
    SELECT b.id, s.id
      FROM cyclone_steps s
     CROSS JOIN unnest(s.buckets) AS b(id)
      JOIN cyclone_buckets k ON k.id = b.id
      JOIN cyclone_limits l ON l.name = k.limit_name AND l.concurrency IS NOT NULL
     WHERE s.id = ANY (v_ids);
    DELETE FROM cyclone_bucket_claims c
     USING cyclone_buckets k, cyclone_limits l
     WHERE c.bucket_id = k.id AND k.id = ANY (v_bids) AND l.name = k.limit_name AND l.rate IS NOT NULL
       AND c.at <= p_now - l.period;
    INSERT INTO cyclone_bucket_claims (bucket_id, at)
    SELECT b.id, p_now
      FROM cyclone_steps s
     CROSS JOIN unnest(s.buckets) AS b(id)
      JOIN cyclone_buckets k ON k.id = b.id
      JOIN cyclone_limits l ON l.name = k.limit_name AND l.rate IS NOT NULL
     WHERE s.id = ANY (v_ids);
    IF v_fair THEN
        UPDATE cyclone_buckets k SET served = x.served
          FROM (SELECT u.g, max(u.serve) AS served FROM unnest(v_groups, v_serves) AS u(g, serve) GROUP BY u.g) x
         WHERE k.id = x.g;
    END IF;
    RETURN v_ids;
END
$$;

-- Whether a claim with no handler or workflow filter would take a step now:
-- tick() asks it to wake idle workers. Queue 0 in claim order first (the
-- claim index answers with one entry), then the queues of buckets with room;
-- a step held back by a full bucket is not work for a worker.
CREATE OR REPLACE FUNCTION cyclone._claimable_exists(p_now timestamptz)
RETURNS boolean
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_queue bigint;
BEGIN
    PERFORM 1 FROM cyclone_steps s
     WHERE s.queue_bucket = 0 AND s.state = 'available' AND s.scheduled_at <= p_now
       AND (SELECT r.state = 'running' FROM cyclone_runs r WHERE r.id = s.run_id)
     ORDER BY s.priority, s.scheduled_at, s.id
     LIMIT 1;
    IF FOUND THEN
        RETURN true;
    END IF;
    FOR v_queue IN
        WITH RECURSIVE q(id) AS (
            (SELECT s.queue_bucket FROM cyclone_steps s
              WHERE s.state = 'available' AND s.queue_bucket > 0
              ORDER BY s.queue_bucket LIMIT 1)
            UNION ALL
            SELECT (SELECT s.queue_bucket FROM cyclone_steps s
                     WHERE s.state = 'available' AND s.queue_bucket > q.id
                     ORDER BY s.queue_bucket LIMIT 1)
              FROM q WHERE q.id IS NOT NULL)
        SELECT q.id FROM q WHERE q.id IS NOT NULL
    LOOP
        CONTINUE WHEN cyclone._bucket_room(v_queue, p_now) = 0;
        PERFORM 1 FROM cyclone_steps s
         WHERE s.queue_bucket = v_queue AND s.state = 'available' AND s.scheduled_at <= p_now
           AND (SELECT r.state = 'running' FROM cyclone_runs r WHERE r.id = s.run_id)
           AND (cardinality(s.buckets) = 1
                OR NOT EXISTS (SELECT 1 FROM unnest(s.buckets) b(id)
                                WHERE b.id <> v_queue AND cyclone._bucket_room(b.id, p_now) = 0))
         ORDER BY s.priority, s.scheduled_at, s.id
         LIMIT 1;
        IF FOUND THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

CREATE OR REPLACE FUNCTION cyclone.claim(
    p_worker text,
    p_handlers text[] DEFAULT NULL,
    p_limit int DEFAULT 1,
    p_lease_ttl interval DEFAULT '30 seconds',
    p_workflows text[] DEFAULT NULL)
RETURNS TABLE (step_id bigint, run_id uuid, workflow text, node text, handler text, kind text,
               attempt int, max_attempts int, lease_generation bigint, timeout interval,
               input jsonb, deps jsonb, traceparent text)
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
                  s.lease_generation, s.timeout, s.input, s.deps
    )
    SELECT c.id, c.run_id, r.workflow, c.node, c.handler, c.kind, c.attempt, c.max_attempts,
           c.lease_generation, c.timeout, c.input,
           CASE WHEN cardinality(c.deps) = 0 THEN '{}'::jsonb
                ELSE (SELECT coalesce(jsonb_object_agg(d.node, d.output), '{}')
                        FROM cyclone_steps d WHERE d.run_id = c.run_id AND d.node = ANY (c.deps)) END,
           r.traceparent
      FROM claimed c
      JOIN cyclone_runs r ON r.id = c.run_id
     ORDER BY array_position(v_ids, c.id);
END
$$;
COMMENT ON FUNCTION cyclone.claim(text, text[], int, interval, text[]) IS
    'Lease up to p_limit due steps of running runs (SPEC section 6), of the given handlers and workflows '
    '(NULL = any), within their limits (SPEC 12). Returns input, deps outputs and the run''s traceparent, '
    'in claim order.';

CREATE OR REPLACE FUNCTION cyclone.renew(
    p_step_id bigint,
    p_worker text,
    p_lease_generation bigint,
    p_lease_ttl interval DEFAULT '30 seconds')
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
BEGIN
    IF (p_step_id IS NOT NULL AND p_worker IS NOT NULL AND p_lease_generation IS NOT NULL
        AND p_lease_ttl > interval '0') IS NOT TRUE THEN
        PERFORM cyclone._require_given('renew', p_step_id IS NOT NULL AND p_worker IS NOT NULL
                                 AND p_lease_generation IS NOT NULL, 'p_step_id, p_worker and p_lease_generation are required');
        PERFORM cyclone._require('renew', p_lease_ttl > interval '0', 'p_lease_ttl must be positive');
    END IF;
    -- Losing a renewal in a crash is harmless (the lease just ends sooner), so
    -- this transaction does not wait for the WAL flush.
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE cyclone_steps
       SET lease_expiry = v_now + p_lease_ttl, heartbeat_at = v_now
     WHERE id = p_step_id
       AND state = 'running'
       AND lease_owner = p_worker
       AND lease_generation = p_lease_generation
       AND (timeout IS NULL OR started_at + timeout > v_now);
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION cyclone.renew(bigint, text, bigint, interval) IS
    'Heartbeat: extend the lease while the step is running under this owner and generation and '
    'its timeout has not passed. False means the worker must cancel the handler.';

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.claim(text, text[], int, interval, text[]), cyclone.renew(bigint, text, bigint, interval)
    TO cyclone_worker, cyclone_admin;

COMMIT;
