-- sql/engine/24_claim.sql: change `claim` — taking work: claim() leases due steps to a worker within their
-- limits (SPEC 6, 12), renew() is the heartbeat that keeps a lease, renew_many() several heartbeats in one call.
-- Owns: claim, renew, renew_many, release; the limits' enforcement at claim time (_limited_candidates, _admit);
-- _claimable_exists, tick's question "would a claim take a step now?"; _refresh_claim_floor, tick's keeping of
-- where claim's walk of queue 0 may start (cyclone_claim_floor), and _lower_claim_floor, release's and sweep's.
-- Requires: 10_runs_tables.sql (cyclone_steps and its claim indexes cyclone_steps_claimable and
-- cyclone_steps_claimable_workflow, cyclone_runs),
-- 11_limits_tables.sql (the limit tables, cyclone_serve_seq, the row type _claim_candidate), 02_clock.sql
-- (now), 03_checks.sql (_require, _require_given), 35_limits.sql (_bucket_room; the trigger that gives slots
-- back), 40_wakeups.sql (_claimed, _wake), 21_runs.sql (_lock_run, for release). Reads and writes the live tables only (ONLY): finished runs move to
-- 43_history.sql's day tables.
-- Called by: the worker (claim in its loop, renew from its heartbeat) as cyclone_worker, or cyclone_admin;
-- 31_tick.sql calls _claimable_exists.
-- Lock order: the engine's (21_runs.sql: a run's ancestors, the run, its steps, then free slots and rate
-- tokens, then bucket rows by id). claim locks no run: it reads each step's run state without a lock. It
-- locks steps, then free slots and tokens, then bucket rows (the row of a bucket it marks held back may come
-- before the slots), every one FOR UPDATE SKIP LOCKED: it never waits for a claim or a release, so the order
-- cannot deadlock. Last it writes its worker's row of cyclone_waiting_workers. renew locks the one step it
-- updates.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=claim NOTE="..."` (docs/architecture.md, Changing the engine).

-- claim: lease up to p_limit steps to p_worker (SPEC 6). A step is claimable when it is available and due
-- (scheduled_at <= now), its run is running (not paused or finished), its handler is in p_handlers and its
-- run's workflow in p_workflows (NULL = any; a worker passes what its code declares), and every limit
-- bucket it takes has room (SPEC 12: a held-back step is skipped, never waited on). Claim order: priority,
-- then the round-robin of keyed buckets (_admit), then scheduled_at, then id.
--
-- The claim index, cyclone_steps_claimable (queue_bucket, priority, scheduled_at, id) WHERE state =
-- 'available', holds one entry per available step, in one queue per bucket: queue 0 for the steps that take
-- no limit, and for a limited step the queue of its first keyed limit's bucket (else its first limit's).
--  1. Queue 0 is read in claim order up to p_limit, FOR UPDATE SKIP LOCKED: concurrent claims never wait for
--     each other and never get the same step. It has two spellings of one query: without filters (an SQL
--     caller's claim) and with them (a worker's); an "p_handlers IS NULL OR ..." filter in one query would
--     have no good generic plan.
--  2. When a limited step is available (one index descent to know), _limited_candidates locks candidates
--     from the queues of buckets with room, and _admit chooses among queue 0's steps and those, in claim
--     order, the ones within their limits, taking their slots and rate tokens. Steps read and not admitted
--     stay available (their row locks go at commit). While the claim is short and _admit held candidates
--     back, another round reads the queues past them (a candidate can be held back by a bucket an earlier
--     one filled in this batch, and the steps behind it may fit).
--  3. _claimed (40_wakeups.sql) records the worker as waiting when it got fewer than p_limit steps, so that
--     wake-ups are sent to it, and forgets it when it got all it asked for.
--  4. One UPDATE leases them: state running, lease_owner, lease_expiry = now + p_lease_ttl, heartbeat_at and
--     started_at now, lease_generation + 1, and attempt + 1, or the same attempt (at least 1) when sweep
--     reclaimed the step (rerun_attempt). The new lease_generation fences the lease: renew, complete and
--     fail must name it, so a worker whose lease was reclaimed changes nothing.
--
-- Returns one row per step, in claim order: step_id, run_id, workflow (the run's), node, handler, kind,
-- attempt, max_attempts, lease_generation (the new one, to pass back), timeout, input (the run's: a step's
-- copy, or for a map's item, whose copy is {}, the run row's; 22_advance.sql's _reach_map says why), deps (each
-- completed dependency's node name mapped to its output; a skipped one is left out, SPEC 16; {} when none),
-- traceparent (the run's W3C trace context, SPEC 14) and previous_span (the span of the step's last failed execution, fail()'s failed_span, which the
-- retry's span links to), and lease_expiry (when the lease runs out unless renewed: now + p_lease_ttl, so
-- that a worker in any language need not remember what it asked for; SPEC 18), item and item_index (a map
-- item's element and its position from 0, SPEC 16; NULL for any other step). Those came later as trailing
-- columns; a new column goes last too, and a new return type needs the function dropped and created again
-- (CREATE OR REPLACE cannot change it: hence the DROP below, which takes its grants with it).
-- #variable_conflict use_column: the output columns share their names with table columns.
-- Guards: p_worker non-empty, p_limit positive, p_lease_ttl positive and at most 1 day (22023; 22004 for a
-- NULL), tested as one expression on the hot path; the checks that name the culprit run only when it is
-- false or NULL. Why 1 day: the lease only has to outlive a few missed heartbeats (the worker renews every
-- TTL/3; a long handler keeps its lease by renewing, not by a long TTL), while a crashed worker's steps wait
-- a whole TTL to be reclaimed; the default is 30 seconds. A TTL of 1,000 years was accepted (issue 30,
-- finding 8): a step leased so was never reclaimed, and one near PostgreSQL's range made now + TTL a raw
-- 22008. The same bound holds for renew.
-- The SET options below hold for the helpers claim calls too (_limited_candidates, _admit, _bucket_room,
-- _claimed).
DROP FUNCTION IF EXISTS cyclone.claim(text,text[],integer,interval,text[]);
CREATE OR REPLACE FUNCTION cyclone.claim(
    p_worker text,
    p_handlers text[] DEFAULT NULL::text[],
    p_limit integer DEFAULT 1,
    p_lease_ttl interval DEFAULT '00:00:30'::interval,
    p_workflows text[] DEFAULT NULL::text[])
RETURNS TABLE(
    step_id bigint,
    run_id uuid,
    workflow text,
    node text,
    handler text,
    kind text,
    attempt integer,
    max_attempts integer,
    lease_generation bigint,
    timeout interval,
    input jsonb,
    deps jsonb,
    traceparent text,
    previous_span text,
    lease_expiry timestamp with time zone,
    item jsonb,
    item_index integer)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
-- The claim path's statements have good generic plans, and planning them again on every call cost more
-- than executing them: it never re-plans, and each query is written to have a good generic plan (the two
-- spellings of queue 0, the scalar subquery in _limited_candidates).
SET plan_cache_mode = force_generic_plan
-- Always walk the claim index in claim order and stop at p_limit: with the statistics of a table that has
-- just grown (before autovacuum analyses it) the planner would otherwise read and sort the whole backlog
-- (after a bulk load of 10,000 runs: 38-75 ms a claim, against 1.76 ms; docs/performance.md, "Claim on a
-- fresh backlog").
SET enable_seqscan = off
SET enable_bitmapscan = off
-- No JIT: these are short OLTP statements. A plan type turned off is not forbidden but given a huge cost,
-- and a plan that carries it would cross jit_above_cost and be compiled.
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := cyclone.now();
    v_ids bigint[] := '{}';
    v_limited bigint[];
    v_floor_p int;  -- the floor (cyclone_claim_floor), NULL when there is no fresh one
    v_floor_t timestamptz;
    v_floor_id bigint;
    v_range int;
    v_lo_p int;  -- the range read: the keys from (v_lo_p, v_lo_t, v_lo_id) up to (v_hi_p, v_hi_t, v_hi_id)
    v_lo_t timestamptz;
    v_lo_id bigint;
    v_hi_p int;
    v_hi_t timestamptz;
    v_hi_id bigint;
    v_in_floor boolean;  -- the range lies in the floor's priority: read with priority = v_floor_p
    v_found bigint[];
    v_after bigint[] := '{}';  -- the second and fourth ranges' steps
    v_read bigint[];  -- every candidate read, admitted or not
    v_held boolean := false;  -- the last round held candidates back
    -- The one workflow the worker serves, when it serves one: its claims walk that workflow's part of queue 0.
    v_workflow text := CASE WHEN cardinality(p_workflows) = 1 THEN p_workflows[1] END;
BEGIN
    -- One plain expression on the hot path; the checks that name the culprit
    -- run only when it is false or NULL.
    IF (p_worker <> '' AND p_limit > 0 AND p_lease_ttl > interval '0' AND p_lease_ttl <= interval '1 day') IS NOT TRUE THEN
        PERFORM cyclone._require('claim', p_worker <> '', 'p_worker must be a non-empty worker name');
        PERFORM cyclone._require('claim', p_limit > 0, 'p_limit must be positive');
        PERFORM cyclone._require('claim', p_lease_ttl > interval '0', 'p_lease_ttl must be positive');
        PERFORM cyclone._require('claim', p_lease_ttl <= interval '1 day',
                                 format('p_lease_ttl must be at most 1 day (got %s)', p_lease_ttl));
    END IF;
    -- Queue 0, the steps that take no limit: the claim of before limits. Two
    -- spellings of one query: the filters cost nothing when there are none to
    -- apply (an SQL caller's claim), and both have good generic plans (the
    -- claim path runs with plan_cache_mode = force_generic_plan and never
    -- re-plans). A worker passes its handlers and its workflows, so that it
    -- never takes a step of a workflow its code does not declare.
    -- The run is read by a scalar subquery (one probe of its primary key per
    -- candidate), not EXISTS: a semi-join's generic plan, made when the live
    -- runs table looked empty, scanned the whole of cyclone_runs_pkey for each
    -- candidate, which under a held xmin horizon keeps every deleted run: 12,600
    -- to 15,400 buffers and 30-57 ms a claim, against 143-354 and 0.4-1.2 ms
    -- (issue 37; _limited_candidates reads it the same way).
    -- Each spelling reads one range of the claim order, the keys (priority,
    -- scheduled_at, id) from v_lo up to, not including, v_hi. Without a fresh
    -- floor (cyclone_claim_floor, kept by tick: 10_runs_tables.sql says why)
    -- one range, the whole queue. With one, in this order: the priorities
    -- above the floor's (steps of a higher priority that came since the tick);
    -- the floor's priority from the floor on, so the entries of the steps
    -- claimed before the floor, dead or not yet removable, are not read; and,
    -- only while the claim is still short, the floor's priority below the
    -- floor (a step that became available there, a p_run_at in the past, is
    -- never left while a worker asks for work, and waits for the next tick
    -- only behind steps that are due already), then the priorities after the
    -- floor's. The ranges' steps are put together in claim order.
    -- A worker that serves one workflow reads the same ranges of that
    -- workflow's part of queue 0 (cyclone_steps_claimable_workflow: the same
    -- order, and the floor, at or below every step of queue 0, is at or below
    -- every step of the workflow), so another workflow's backlog ahead of its
    -- steps is never read; its own claimed steps' entries wait for VACUUM
    -- below the floor as in queue 0. Two more spellings, with the workflow
    -- an equality the index can start from: "v_workflow IS NULL OR ..."
    -- would leave the generic plan only the walk of the whole queue.
    -- Where an index scan ends: at a row comparison only where its first
    -- member decides it, and at scheduled_at <= v_now only when the priority
    -- before it is one value. So each range says its last priority
    -- (s.priority <= v_hi_p: without it the first range, most often empty,
    -- read the whole queue to find nothing, 0.32 ms a claim with 10,000 steps
    -- waiting), and the floor's priority is read with priority = v_floor_p,
    -- where the scan ends at the first step not yet due: a claim that found
    -- nothing due read every step scheduled for later (70.8 ms with 1,000,000
    -- waiting for tomorrow). The ranges of other priorities, and the queue
    -- without a floor, still read the later steps of each priority they pass.
    SELECT f.priority, f.scheduled_at, f.id INTO v_floor_p, v_floor_t, v_floor_id
      FROM cyclone_claim_floor f
     WHERE f.queue_bucket = 0 AND f.set_at > v_now - interval '10 seconds' AND f.set_at <= v_now;
    FOR v_range IN 1 .. 4 LOOP
        v_in_floor := false;
        IF v_floor_p IS NULL THEN
            EXIT WHEN v_range > 1;
            v_lo_p := -2147483648; v_lo_t := '-infinity'; v_lo_id := -9223372036854775808;
            v_hi_p := 2147483647; v_hi_t := 'infinity'; v_hi_id := 9223372036854775807;
        ELSIF v_range = 1 THEN  -- the priorities above the floor's (none above the first)
            CONTINUE WHEN v_floor_p = -2147483648;
            v_lo_p := -2147483648; v_lo_t := '-infinity'; v_lo_id := -9223372036854775808;
            v_hi_p := v_floor_p - 1; v_hi_t := 'infinity'; v_hi_id := 9223372036854775807;
        ELSIF v_range = 2 THEN  -- the floor's priority, from the floor on
            v_in_floor := true;
            v_lo_t := v_floor_t; v_lo_id := v_floor_id;
            v_hi_t := 'infinity'; v_hi_id := 9223372036854775807;
        ELSIF v_range = 3 THEN  -- the floor's priority, below the floor: only when short
            EXIT WHEN cardinality(v_ids) + cardinality(v_after) >= p_limit;
            v_in_floor := true;
            v_lo_t := '-infinity'; v_lo_id := -9223372036854775808;
            v_hi_t := v_floor_t; v_hi_id := v_floor_id;
        ELSE                    -- the priorities after the floor's: only when short
            EXIT WHEN cardinality(v_ids) + cardinality(v_after) >= p_limit OR v_floor_p = 2147483647;
            v_lo_p := v_floor_p + 1; v_lo_t := '-infinity'; v_lo_id := -9223372036854775808;
            v_hi_p := 2147483647; v_hi_t := 'infinity'; v_hi_id := 9223372036854775807;
        END IF;
        IF v_in_floor AND p_handlers IS NULL AND p_workflows IS NULL THEN
            v_found := ARRAY(
                SELECT s.id
                  FROM ONLY cyclone_steps s
                 WHERE s.queue_bucket = 0 AND s.priority = v_floor_p AND s.state = 'available'
                   AND s.scheduled_at <= v_now
                   AND (s.scheduled_at, s.id) >= (v_lo_t, v_lo_id) AND (s.scheduled_at, s.id) < (v_hi_t, v_hi_id)
                   AND (SELECT r.state = 'running' FROM ONLY cyclone_runs r WHERE r.id = s.run_id)
                 ORDER BY s.priority, s.scheduled_at, s.id
                 LIMIT p_limit - cardinality(v_ids) - cardinality(v_after)
                   FOR UPDATE OF s SKIP LOCKED);
        ELSIF v_in_floor AND v_workflow IS NOT NULL THEN
            v_found := ARRAY(
                SELECT s.id
                  FROM ONLY cyclone_steps s
                 WHERE s.workflow = v_workflow AND s.queue_bucket = 0 AND s.priority = v_floor_p
                   AND s.state = 'available' AND s.scheduled_at <= v_now
                   AND (s.scheduled_at, s.id) >= (v_lo_t, v_lo_id) AND (s.scheduled_at, s.id) < (v_hi_t, v_hi_id)
                   AND (p_handlers IS NULL OR s.handler = ANY (p_handlers))
                   AND (SELECT r.state = 'running' FROM ONLY cyclone_runs r WHERE r.id = s.run_id)
                 ORDER BY s.priority, s.scheduled_at, s.id
                 LIMIT p_limit - cardinality(v_ids) - cardinality(v_after)
                   FOR UPDATE OF s SKIP LOCKED);
        ELSIF v_in_floor THEN
            v_found := ARRAY(
                SELECT s.id
                  FROM ONLY cyclone_steps s
                 WHERE s.queue_bucket = 0 AND s.priority = v_floor_p AND s.state = 'available'
                   AND s.scheduled_at <= v_now
                   AND (s.scheduled_at, s.id) >= (v_lo_t, v_lo_id) AND (s.scheduled_at, s.id) < (v_hi_t, v_hi_id)
                   AND (p_handlers IS NULL OR s.handler = ANY (p_handlers))
                   AND (SELECT r.state = 'running' AND (p_workflows IS NULL OR r.workflow = ANY (p_workflows))
                          FROM ONLY cyclone_runs r WHERE r.id = s.run_id)
                 ORDER BY s.priority, s.scheduled_at, s.id
                 LIMIT p_limit - cardinality(v_ids) - cardinality(v_after)
                   FOR UPDATE OF s SKIP LOCKED);
        ELSIF p_handlers IS NULL AND p_workflows IS NULL THEN
            v_found := ARRAY(
                SELECT s.id
                  FROM ONLY cyclone_steps s
                 WHERE s.queue_bucket = 0 AND s.state = 'available' AND s.scheduled_at <= v_now
                   AND (s.priority, s.scheduled_at, s.id) >= (v_lo_p, v_lo_t, v_lo_id)
                   AND (s.priority, s.scheduled_at, s.id) < (v_hi_p, v_hi_t, v_hi_id) AND s.priority <= v_hi_p
                   AND (SELECT r.state = 'running' FROM ONLY cyclone_runs r WHERE r.id = s.run_id)
                 ORDER BY s.priority, s.scheduled_at, s.id
                 LIMIT p_limit - cardinality(v_ids) - cardinality(v_after)
                   FOR UPDATE OF s SKIP LOCKED);
        ELSIF v_workflow IS NOT NULL THEN
            v_found := ARRAY(
                SELECT s.id
                  FROM ONLY cyclone_steps s
                 WHERE s.workflow = v_workflow AND s.queue_bucket = 0 AND s.state = 'available'
                   AND s.scheduled_at <= v_now
                   AND (s.priority, s.scheduled_at, s.id) >= (v_lo_p, v_lo_t, v_lo_id)
                   AND (s.priority, s.scheduled_at, s.id) < (v_hi_p, v_hi_t, v_hi_id) AND s.priority <= v_hi_p
                   AND (p_handlers IS NULL OR s.handler = ANY (p_handlers))
                   AND (SELECT r.state = 'running' FROM ONLY cyclone_runs r WHERE r.id = s.run_id)
                 ORDER BY s.priority, s.scheduled_at, s.id
                 LIMIT p_limit - cardinality(v_ids) - cardinality(v_after)
                   FOR UPDATE OF s SKIP LOCKED);
        ELSE
            v_found := ARRAY(
                SELECT s.id
                  FROM ONLY cyclone_steps s
                 WHERE s.queue_bucket = 0 AND s.state = 'available' AND s.scheduled_at <= v_now
                   AND (s.priority, s.scheduled_at, s.id) >= (v_lo_p, v_lo_t, v_lo_id)
                   AND (s.priority, s.scheduled_at, s.id) < (v_hi_p, v_hi_t, v_hi_id) AND s.priority <= v_hi_p
                   AND (p_handlers IS NULL OR s.handler = ANY (p_handlers))
                   AND (SELECT r.state = 'running' AND (p_workflows IS NULL OR r.workflow = ANY (p_workflows))
                          FROM ONLY cyclone_runs r WHERE r.id = s.run_id)
                 ORDER BY s.priority, s.scheduled_at, s.id
                 LIMIT p_limit - cardinality(v_ids) - cardinality(v_after)
                   FOR UPDATE OF s SKIP LOCKED);
        END IF;
        IF v_range IN (2, 4) THEN
            v_after := v_after || v_found;  -- after the third range's, in claim order
        ELSE
            v_ids := v_ids || v_found;
        END IF;
    END LOOP;
    v_ids := v_ids || v_after;
    -- Limited steps, when any is available (one index descent to know).
    PERFORM 1 FROM ONLY cyclone_steps s WHERE s.state = 'available' AND s.queue_bucket > 0 LIMIT 1;
    IF FOUND THEN
        v_limited := cyclone._limited_candidates(v_now, p_handlers, p_workflows, p_limit, '{}');
        IF cardinality(v_limited) > 0 THEN
            v_read := v_ids || v_limited;
            v_ids := cyclone._admit(v_read, p_limit, v_now);
            v_held := cardinality(v_ids) < cardinality(v_read);
        END IF;
        -- Another round while the claim is short and the last one held
        -- candidates back: a candidate can be held back by a bucket that an
        -- earlier one in this very batch filled, which only _admit knows, and
        -- the steps behind it in its queue were not read. The next round reads
        -- past the candidates already read, with the room this claim took
        -- counted (_bucket_room sees this transaction's slots and tokens), so
        -- it skips the steps of buckets just filled. A short claim with steps
        -- left to take was found by the state machine test
        -- (tests/test_state_machine.py; sql/tests/limits/
        -- a_claim_reads_past_steps_its_own_batch_held_back.sql). Each round
        -- admits a step or ends the loop, so there are at most p_limit.
        WHILE v_held AND cardinality(v_ids) < p_limit LOOP
            v_limited := cyclone._limited_candidates(v_now, p_handlers, p_workflows, p_limit - cardinality(v_ids),
                                                     v_read);
            EXIT WHEN cardinality(v_limited) = 0;
            v_read := v_read || v_limited;
            v_found := cyclone._admit(v_limited, p_limit - cardinality(v_ids), v_now);
            EXIT WHEN cardinality(v_found) = 0;
            v_held := cardinality(v_found) < cardinality(v_limited);
            v_ids := v_ids || v_found;
        END LOOP;
    END IF;
    PERFORM cyclone._claimed(p_worker, p_limit, cardinality(v_ids), p_lease_ttl, v_now);
    IF cardinality(v_ids) = 0 THEN
        RETURN;
    END IF;

    RETURN QUERY
    WITH claimed AS (
        UPDATE ONLY cyclone_steps s
           SET state = 'running',
               attempt = CASE WHEN s.rerun_attempt THEN greatest(s.attempt, 1) ELSE s.attempt + 1 END,
               rerun_attempt = false,
               lease_owner = p_worker,
               lease_expiry = v_now + p_lease_ttl,
               lease_generation = s.lease_generation + 1,
               heartbeat_at = v_now,
               started_at = v_now
          -- Driven by the ids in claim order (a probe of the primary key each), so that each step carries
          -- its position to the ORDER BY below: array_position(v_ids, id) there scanned the ids for each
          -- step, 1.3 µs a step in a claim of 300.
          FROM unnest(v_ids) WITH ORDINALITY AS o(id, ord)
         WHERE s.id = o.id
        RETURNING s.id, s.run_id, s.node, s.handler, s.kind, s.attempt, s.max_attempts,
                  s.lease_generation, s.timeout, s.input, s.deps, s.failed_span, s.lease_expiry, s.item,
                  s.item_index, o.ord
    )
    SELECT c.id, c.run_id, r.workflow, c.node, c.handler, c.kind, c.attempt, c.max_attempts,
           c.lease_generation, c.timeout, CASE WHEN c.item_index IS NULL THEN c.input ELSE r.input END,
           CASE WHEN cardinality(c.deps) = 0 THEN '{}'::jsonb
                ELSE (SELECT coalesce(jsonb_object_agg(d.node, d.output), '{}')
                        FROM ONLY cyclone_steps d
                       WHERE d.run_id = c.run_id AND d.item_index IS NULL AND d.node = ANY (c.deps)
                         AND d.state = 'completed') END,
           r.traceparent, c.failed_span, c.lease_expiry, c.item, c.item_index
      FROM claimed c
      -- Each claimed step's run by its primary key (LIMIT 1 keeps the subquery a
      -- parameterised probe): a join's generic plan could read the whole index.
      CROSS JOIN LATERAL (SELECT r.workflow, r.input, r.traceparent FROM ONLY cyclone_runs r
                           WHERE r.id = c.run_id LIMIT 1) r
     ORDER BY c.ord;
END
$$;
COMMENT ON FUNCTION cyclone.claim(text,text[],integer,interval,text[]) IS 'Lease up to p_limit due steps of running runs (SPEC section 6), of the given handlers and workflows (NULL = any), within their limits (SPEC 12), for p_lease_ttl (positive, at most 1 day). Returns input, deps outputs, the run''s traceparent, the span of the step''s last failed execution, the lease''s expiry and a map item''s item and item_index, in claim order.';
REVOKE ALL ON FUNCTION cyclone.claim(text,text[],integer,interval,text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.claim(text,text[],integer,interval,text[]) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.claim(text,text[],integer,interval,text[]) TO cyclone_admin;

-- _limited_queues, which listed every queue with a step waiting and reckoned each one's room, went in 0.32.0:
-- _limited_candidates reads the queues in the order it serves them, and _claimable_exists one at a time.
DROP FUNCTION IF EXISTS cyclone._limited_queues(timestamp with time zone);

-- _limited_candidates: claim's candidates from the limited queues. For each queue it reads: a bucket with no
-- room is skipped whole (its steps are never read) and marked held back; from the others, the first due
-- steps in claim order that pass claim's filters (handler, workflow, run running) are locked FOR UPDATE SKIP
-- LOCKED, up to the least of the bucket's room and p_limit. A step that also takes another bucket with no
-- room is passed over, not waited on (SPEC 12: no head-of-line blocking). Such a step can also be held back
-- in this very claim by its other bucket, which an earlier candidate fills (only _admit knows), so a queue is
-- read past its room by as many steps as took more than one bucket, while it has more, up to p_limit (found
-- by the state machine test over the SQL API, tests/test_state_machine.py). Past p_limit, claim takes
-- another round when _admit held candidates back and the claim is short: p_read, the candidates of its
-- earlier rounds, are not read again. So a held-back step never keeps a claimable step behind it out of the
-- batch.
-- Which queues it reads (0.32.0, issue 32: claims at scale). Until then every queue with a step waiting, in
-- bucket order: with 1,000 keyed buckets waiting a claim(1) took 290 ms, with 10,000 14 s, and with 100,000
-- it did not end (each queue's room taken in _admit, and the ids read so far scanned for each row read and
-- copied for each queue). Now in the order _admit serves them (claim order: priority, then turns of one step
-- a fairness group, groups least recently served first), so that it can stop once no unread queue can come
-- first:
--  1. The queues of the buckets '' (a limit without a key, or a missing key value), all of them: their steps
--     may be in the group of steps with no keyed limit, whose turns interleave with queue 0's. One a limit.
--  2. The keyed buckets, each a queue and a fairness group of its own, one priority at a time, best first,
--     among the priorities with a limited step due (cyclone_steps_limited_priority: a descent a priority,
--     and one more to pass a priority whose steps all wait for later): in the round-robin's order
--     (cyclone_buckets_served), the queues with a step of that priority due, until p_limit queues have given
--     candidates. Every step of a queue past them comes later in claim order: its priority is no better
--     (a better one would have had its own walk first, and that walk read every queue with a step of it due,
--     or stopped the claim), and at this one its group was served later. A queue is read once a claim.
-- A bucket with no step due at the priority walked costs one descent of the claim index, so a claim's cost
-- follows the buckets it reads up to its p_limit-th, not the buckets waiting. The worst cases: a priority
-- whose few steps lie in buckets served last, and keyed buckets nearly all full (a per-key rate spent across
-- every key): every keyed bucket is visited, a descent each and, where a step is due, its room, once a
-- priority due (docs/performance.md, "Built in 0.32.0").
-- A bucket this claim may fill with steps left in its queue is marked held back too: held_back makes the
-- next slot given back wake idle workers (_release_slots, 35_limits.sql). The mark is written with SKIP
-- LOCKED: where another claim or a release holds the bucket row, it is left to them. A walk that stopped
-- early marks only the buckets it read: it stopped because it had read as many steps as the claim asks for,
-- so its worker claims again at once.
-- Returns the locked ids, queue by queue; _admit decides which are claimed.
-- p_read came in 0.26.0: the function with four arguments is dropped.
DROP FUNCTION IF EXISTS cyclone._limited_candidates(timestamp with time zone,text[],text[],integer);
CREATE OR REPLACE FUNCTION cyclone._limited_candidates(
    p_now timestamp with time zone,
    p_handlers text[],
    p_workflows text[],
    p_limit integer,
    p_read bigint[])
RETURNS bigint[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_walk refcursor;
    v_keyed boolean;     -- the walk of the keyed buckets (2), not the buckets '' (1)
    v_priority int;      -- the priority walked
    v_earliest timestamptz;
    v_bucket bigint;
    v_room int;
    v_queues int := 0;   -- keyed queues that gave candidates
    v_done bigint[] := '{}'::bigint[];  -- the keyed queues read
    v_ids bigint[] := '{}'::bigint[];
    v_here bigint[];     -- this queue's candidates so far (a step is in one queue only)
    v_full bigint[] := '{}'::bigint[];
    v_before int;
    v_take int;
    v_new bigint[];
    v_id bigint;
    v_multi int;
    v_got int;
BEGIN
    v_keyed := false;
    -- A probe of bucket_unique for each limit (LIMIT 1 keeps it one): as a join, the plan read the whole
    -- index for bucket = '' (842 pages with 100,000 buckets).
    OPEN v_walk FOR SELECT b.id FROM cyclone_limits l
                     CROSS JOIN LATERAL (SELECT b.id FROM cyclone_buckets b
                                          WHERE b.limit_name = l.name AND b.bucket = '' LIMIT 1) b;
    LOOP
        FETCH v_walk INTO v_bucket;
        IF NOT FOUND THEN
            CLOSE v_walk;
            EXIT WHEN v_queues >= p_limit;
            -- The next priority with a limited step due, after the one walked.
            LOOP
                SELECT s.priority, s.scheduled_at INTO v_priority, v_earliest
                  FROM ONLY cyclone_steps s
                 WHERE s.state = 'available' AND s.queue_bucket > 0
                   AND s.priority > coalesce(v_priority, -2147483648)
                 ORDER BY s.priority, s.scheduled_at
                 LIMIT 1;
                EXIT WHEN NOT FOUND OR v_earliest <= p_now;
            END LOOP;
            EXIT WHEN NOT FOUND;
            v_keyed := true;
            OPEN v_walk FOR SELECT b.id FROM cyclone_buckets b WHERE b.bucket <> ''
                             ORDER BY b.served NULLS FIRST, b.id;
            CONTINUE;
        END IF;
        IF v_keyed THEN
            CONTINUE WHEN v_bucket = ANY (v_done);
            PERFORM 1 FROM ONLY cyclone_steps s
             WHERE s.queue_bucket = v_bucket AND s.state = 'available' AND s.priority = v_priority
               AND s.scheduled_at <= p_now
             LIMIT 1;
        ELSE
            PERFORM 1 FROM ONLY cyclone_steps s WHERE s.queue_bucket = v_bucket AND s.state = 'available' LIMIT 1;
        END IF;
        CONTINUE WHEN NOT FOUND;
        v_room := cyclone._bucket_room(v_bucket, p_now);
        IF v_room = 0 THEN
            v_full := v_full || v_bucket;
            CONTINUE;
        END IF;
        v_before := cardinality(v_ids);
        v_here := '{}';
        v_take := least(p_limit, v_room);
        LOOP
            SELECT coalesce(array_agg(c.id ORDER BY c.ord), '{}'::bigint[]), count(*) FILTER (WHERE c.multi)::int,
                   count(*)::int
              INTO v_new, v_multi, v_got
              FROM (SELECT s.id, cardinality(s.buckets) > 1 AS multi,
                           row_number() OVER () AS ord
                      FROM (SELECT s.id, s.buckets
                              FROM ONLY cyclone_steps s
                             WHERE s.queue_bucket = v_bucket AND s.state = 'available' AND s.scheduled_at <= p_now
                               AND NOT (s.id = ANY (v_here)) AND NOT (s.id = ANY (p_read))
                               AND (p_handlers IS NULL OR s.handler = ANY (p_handlers))
                               -- A scalar subquery, not EXISTS: a semi-join's generic plan drove
                               -- from cyclone_runs and sorted the whole queue (13 ms for 10,000).
                               AND (SELECT r.state = 'running' AND (p_workflows IS NULL OR r.workflow = ANY (p_workflows))
                                      FROM ONLY cyclone_runs r WHERE r.id = s.run_id)
                               AND (cardinality(s.buckets) = 1
                                    OR NOT EXISTS (SELECT 1 FROM unnest(s.buckets) b(id)
                                                    WHERE b.id <> v_bucket AND cyclone._bucket_room(b.id, p_now) = 0))
                             ORDER BY s.priority, s.scheduled_at, s.id
                             LIMIT v_take
                               FOR UPDATE OF s SKIP LOCKED) s) c;
            -- One element at a time: PL/pgSQL appends a scalar in place, where
            -- array || array copies the whole array.
            FOREACH v_id IN ARRAY v_new LOOP
                v_ids := v_ids || v_id;
                v_here := v_here || v_id;
            END LOOP;
            -- A step taking another bucket may yet be held back by it in this
            -- claim: read as many more, while the queue has them.
            EXIT WHEN v_multi = 0 OR v_got < v_take OR cardinality(v_ids) - v_before >= p_limit;
            v_take := least(v_multi, p_limit - (cardinality(v_ids) - v_before));
        END LOOP;
        -- As many as the bucket had room for: the steps after them are held
        -- back once these are claimed.
        IF v_room < p_limit AND cardinality(v_ids) - v_before >= v_room THEN
            v_full := v_full || v_bucket;
        END IF;
        IF v_keyed THEN
            v_done := v_done || v_bucket;
            IF cardinality(v_ids) > v_before THEN
                v_queues := v_queues + 1;
                IF v_queues >= p_limit THEN
                    CLOSE v_walk;
                    EXIT;
                END IF;
            END IF;
        END IF;
    END LOOP;
    -- A full bucket with steps queued: the next slot given back wakes idle
    -- workers (limits.sql). Where another claim or a release holds the row,
    -- it is left to them.
    IF cardinality(v_full) > 0 THEN
        UPDATE cyclone_buckets k SET held_back = true
         WHERE k.id = ANY (ARRAY(SELECT b.id FROM cyclone_buckets b WHERE b.id = ANY (v_full) AND NOT b.held_back
                                  FOR UPDATE SKIP LOCKED));
    END IF;
    RETURN v_ids;
END
$$;
REVOKE ALL ON FUNCTION cyclone._limited_candidates(timestamp with time zone,text[],text[],integer,bigint[]) FROM PUBLIC;

-- _admit: chooses which of claim's locked candidates (queue 0's steps and _limited_candidates') are
-- claimed, and takes the room they use. The candidates' columns are read once, into rows of the type
-- _claim_candidate (id, buckets, fair_bucket, priority, scheduled_at).
--  1. Room, for each bucket the candidates take, by id, as much as the candidates take it (at most p_limit):
--     - concurrency: takes free slots (cyclone_free_slots rows) with SKIP LOCKED; when too few are free and
--       no other transaction holds the bucket row (SKIP LOCKED), locks it and adds slots up to the
--       concurrency, counting the held and free ones under its lock (whoever added slots before has
--       committed them). A bucket that cannot give as many is full with steps queued: marked held_back.
--     - rate: locks tokens (cyclone_bucket_claims rows) whose claim time has left the window, with SKIP
--       LOCKED. While the bucket owes a rate debt (define_limit lowered its rate while claims were in the
--       window, 35_limits.sql), those tokens pay it first: deleted, under the bucket row's lock, before any
--       is used (without the lock, no room this time). When too few are left and it gets the bucket row,
--       adds tokens up to the rate.
--     A claim never waits for a bucket row: where another transaction holds it, this claim uses what is free
--     and leaves adding to that one. Waiting here deadlocked: a claim holding the row of a bucket it had
--     marked full waited for another claim's growing bucket, which waited for the marked one.
--  2. Admission in claim order: priority, then one step per fairness group per turn, groups least recently
--     served first (never served first), then scheduled_at, id; a candidate is admitted while every bucket
--     it takes has a slot and a token left, up to p_limit. One statement when no candidate takes two
--     buckets (each bucket's candidates ranked against its room), else a loop that counts rooms down.
--  3. Each admitted step holds a slot in each of its concurrency buckets (cyclone_slots); the slots taken
--     and not used are free again. The n-th admitted step of a rate bucket sets the n-th token locked in it
--     to now; the tokens not used stay free.
--  4. Fairness: each group's latest serve is written to its bucket row (row 0: the steps with no keyed
--     limit), only when a keyed group took part, and unless another transaction is writing that row (SKIP
--     LOCKED): the round-robin is exact for claims in sequence and close to it for concurrent ones.
-- Returns the admitted ids in claim order.
CREATE OR REPLACE FUNCTION cyclone._admit(
    p_candidates bigint[],
    p_limit integer,
    p_now timestamp with time zone)
RETURNS bigint[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_c cyclone._claim_candidate[];
    v_fair boolean;
    v_bucket record;
    v_got bigint[];
    v_room int;
    v_locked boolean;
    v_bids bigint[] := '{}'::bigint[];
    v_rooms int[] := '{}'::int[];
    v_slots int;
    v_add int;
    v_used int;
    v_slot_bucket bigint[] := '{}'::bigint[];
    v_slot_count int[] := '{}'::int[];
    v_token_bucket bigint[] := '{}'::bigint[];
    v_token_id bigint[] := '{}'::bigint[];
    v_paid int;
    v_step record;
    v_i int;
    v_ids bigint[] := '{}'::bigint[];
    v_groups bigint[] := '{}'::bigint[];
    v_base bigint;
BEGIN
    -- The candidates' columns this needs, read once.
    v_c := ARRAY(SELECT ROW(s.id, s.buckets, s.fair_bucket, s.priority, s.scheduled_at)::cyclone._claim_candidate
                   FROM ONLY cyclone_steps s WHERE s.id = ANY (p_candidates));
    v_fair := EXISTS (SELECT 1 FROM unnest(v_c) s WHERE s.fair_bucket <> 0);
    FOR v_bucket IN
        -- A period stored before define_limit bounded it (366 days) counts as
        -- 366 days: a larger one made now - period a raw 22008 in every claim.
        SELECT n.id, n.need, l.concurrency, l.rate, least(l.period, interval '366 days') AS period, k.rate_debt
          FROM (SELECT b.id, least(count(*), p_limit)::int AS need
                  FROM unnest(v_c) s CROSS JOIN unnest(s.buckets) AS b(id)
                 GROUP BY b.id) n
          JOIN cyclone_buckets k ON k.id = n.id
          JOIN cyclone_limits l ON l.name = k.limit_name
         ORDER BY n.id
    LOOP
        v_room := v_bucket.need;
        v_locked := false;
        IF v_bucket.concurrency IS NOT NULL THEN
            -- Free slots no other claim is taking; then, when too few and no
            -- other claim holds the bucket row, new ones up to the concurrency,
            -- counted under its lock: whoever added slots before has committed
            -- them, a slot another claim is taking or giving back is counted
            -- once, and the ones taken here are in neither table for now. A
            -- bucket with no slot to give is full with steps queued: the next
            -- slot given back wakes idle workers (held_back).
            WITH taken AS (
                DELETE FROM cyclone_free_slots f
                 WHERE f.id = ANY (ARRAY(SELECT x.id FROM cyclone_free_slots x WHERE x.bucket_id = v_bucket.id
                                          ORDER BY x.id LIMIT v_bucket.need FOR UPDATE SKIP LOCKED))
                RETURNING 1)
            SELECT count(*)::int INTO v_slots FROM taken;
            IF v_slots < v_bucket.need THEN
                PERFORM 1 FROM cyclone_buckets k WHERE k.id = v_bucket.id FOR UPDATE SKIP LOCKED;
                v_locked := FOUND;
            END IF;
            IF v_slots < v_bucket.need AND v_locked THEN
                v_add := least(v_bucket.need - v_slots, v_bucket.concurrency - v_slots
                    - (SELECT count(*) FROM (SELECT 1 FROM cyclone_slots x WHERE x.bucket_id = v_bucket.id
                                              LIMIT v_bucket.concurrency) y)::int
                    - (SELECT count(*) FROM (SELECT 1 FROM cyclone_free_slots f WHERE f.bucket_id = v_bucket.id
                                              LIMIT v_bucket.concurrency) y)::int);
                v_slots := v_slots + greatest(v_add, 0);
                IF v_slots < v_bucket.need THEN
                    UPDATE cyclone_buckets k SET held_back = true WHERE k.id = v_bucket.id AND NOT k.held_back;
                END IF;
            END IF;
            v_room := least(v_room, v_slots);
            v_slot_bucket := v_slot_bucket || v_bucket.id;
            v_slot_count := v_slot_count || v_slots;
        END IF;
        IF v_bucket.rate IS NOT NULL THEN
            -- Tokens that left the window; as many more as the bucket owes
            -- (a lowered rate, limits.sql): those pay the debt first, under
            -- the bucket row's lock, and go. The debt is read again once the
            -- tokens are locked (define_limit lowering a rate waits for them),
            -- and under the bucket's lock before it is paid.
            v_got := ARRAY(SELECT c.id FROM cyclone_bucket_claims c
                            WHERE c.bucket_id = v_bucket.id AND c.at <= p_now - v_bucket.period
                            ORDER BY c.at LIMIT v_bucket.need + v_bucket.rate_debt FOR UPDATE SKIP LOCKED);
            IF cardinality(v_got) > 0
               AND (SELECT k.rate_debt FROM cyclone_buckets k WHERE k.id = v_bucket.id) > 0 THEN
                IF NOT v_locked THEN
                    PERFORM 1 FROM cyclone_buckets k WHERE k.id = v_bucket.id FOR UPDATE SKIP LOCKED;
                    v_locked := FOUND;
                END IF;
                IF v_locked THEN
                    SELECT least(k.rate_debt, cardinality(v_got)) INTO v_paid FROM cyclone_buckets k
                     WHERE k.id = v_bucket.id;
                    DELETE FROM cyclone_bucket_claims c WHERE c.id = ANY (v_got[1:v_paid]);
                    UPDATE cyclone_buckets k SET rate_debt = k.rate_debt - v_paid WHERE k.id = v_bucket.id;
                    v_got := v_got[v_paid + 1:];
                ELSE
                    v_got := '{}';  -- another claim holds the bucket: no room this time
                END IF;
            END IF;
            v_got := v_got[1:v_bucket.need];
            IF cardinality(v_got) < v_bucket.need AND NOT v_locked THEN
                PERFORM 1 FROM cyclone_buckets k WHERE k.id = v_bucket.id FOR UPDATE SKIP LOCKED;
                v_locked := FOUND;
            END IF;
            IF cardinality(v_got) < v_bucket.need AND v_locked THEN
                WITH added AS (
                    INSERT INTO cyclone_bucket_claims (bucket_id, at)
                    SELECT v_bucket.id, '-infinity'
                      FROM generate_series(1, least(v_bucket.need - cardinality(v_got), v_bucket.rate
                               - (SELECT count(*) FROM (SELECT 1 FROM cyclone_bucket_claims c WHERE c.bucket_id = v_bucket.id
                                                         LIMIT v_bucket.rate) y)::int))
                    RETURNING id)
                SELECT v_got || coalesce(array_agg(a.id), '{}'::bigint[]) INTO v_got FROM added a;
            END IF;
            v_room := least(v_room, cardinality(v_got));
            v_token_bucket := v_token_bucket || array_fill(v_bucket.id, ARRAY[cardinality(v_got)]);
            v_token_id := v_token_id || v_got;
        END IF;
        v_bids := v_bids || v_bucket.id;
        v_rooms := v_rooms || v_room;
    END LOOP;

    IF NOT EXISTS (SELECT 1 FROM unnest(v_c) s WHERE cardinality(s.buckets) > 1) THEN
        -- Each candidate takes one bucket at most: the loop below would admit
        -- exactly those within their bucket's room by rank in claim order, up
        -- to p_limit; one statement says so.
        WITH groups AS MATERIALIZED (
            SELECT g.id, g.served FROM cyclone_buckets g
             WHERE g.id = ANY (ARRAY(SELECT DISTINCT c.fair_bucket FROM unnest(v_c) c))
        ), turns AS (
            SELECT s.id, s.priority, s.fair_bucket, s.scheduled_at, s.buckets[1] AS bucket, g.served,
                   row_number() OVER (PARTITION BY s.priority, s.fair_bucket ORDER BY s.scheduled_at, s.id) AS turn
              FROM unnest(v_c) s
              JOIN groups g ON g.id = s.fair_bucket
        ), ordered AS (
            SELECT t.id, t.fair_bucket, t.bucket,
                   row_number() OVER (ORDER BY t.priority, t.turn, t.served NULLS FIRST, t.fair_bucket,
                                               t.scheduled_at, t.id) AS ord
              FROM turns t
        ), ranked AS (
            SELECT o.id, o.fair_bucket, o.bucket, o.ord, row_number() OVER (PARTITION BY o.bucket ORDER BY o.ord) AS rank
              FROM ordered o
        )
        SELECT coalesce(array_agg(a.id ORDER BY a.ord), '{}'::bigint[]),
               coalesce(array_agg(a.fair_bucket ORDER BY a.ord), '{}'::bigint[])
          INTO v_ids, v_groups
          FROM (SELECT r.id, r.fair_bucket, r.ord FROM ranked r
                 WHERE r.bucket IS NULL OR r.rank <= v_rooms[array_position(v_bids, r.bucket)]
                 ORDER BY r.ord LIMIT p_limit) a;
    ELSE
        FOR v_step IN
            SELECT s.id, s.buckets, s.fair_bucket
              FROM unnest(v_c) s
              JOIN cyclone_buckets g ON g.id = s.fair_bucket
             ORDER BY s.priority,
                      row_number() OVER (PARTITION BY s.priority, s.fair_bucket ORDER BY s.scheduled_at, s.id),
                      g.served NULLS FIRST, s.fair_bucket, s.scheduled_at, s.id
        LOOP
            CONTINUE WHEN EXISTS (SELECT 1 FROM unnest(v_step.buckets) b WHERE v_rooms[array_position(v_bids, b)] <= 0);
            FOREACH v_i IN ARRAY ARRAY(SELECT array_position(v_bids, b) FROM unnest(v_step.buckets) b) LOOP
                v_rooms[v_i] := v_rooms[v_i] - 1;
            END LOOP;
            v_ids := v_ids || v_step.id;
            v_groups := v_groups || v_step.fair_bucket;
            EXIT WHEN cardinality(v_ids) >= p_limit;
        END LOOP;
    END IF;

    -- Each admitted step holds a slot in each of its concurrency buckets; the
    -- slots taken and not held are free again.
    IF cardinality(v_slot_bucket) > 0 THEN
        INSERT INTO cyclone_slots (bucket_id, step_id)
        SELECT b.id, s.id
          FROM unnest(v_c) s CROSS JOIN unnest(s.buckets) AS b(id)
         WHERE s.id = ANY (v_ids) AND b.id = ANY (v_slot_bucket);
        GET DIAGNOSTICS v_used = ROW_COUNT;
        IF v_used < (SELECT sum(n) FROM unnest(v_slot_count) n) THEN
            INSERT INTO cyclone_free_slots (bucket_id)
            SELECT u.bucket
              FROM unnest(v_slot_bucket, v_slot_count) AS u(bucket, n)
             CROSS JOIN LATERAL generate_series(1, u.n - (SELECT count(*) FROM unnest(v_c) s
                                                            WHERE s.id = ANY (v_ids) AND u.bucket = ANY (s.buckets))::int);
        END IF;
    END IF;
    -- The n-th admitted step of a rate bucket takes the n-th token locked in it.
    IF cardinality(v_token_id) > 0 THEN
        WITH taken AS (
            SELECT b.id AS bucket_id, row_number() OVER (PARTITION BY b.id ORDER BY s.id) AS n
              FROM unnest(v_c) s CROSS JOIN unnest(s.buckets) AS b(id)
             WHERE s.id = ANY (v_ids) AND b.id = ANY (v_token_bucket)
        ), tokens AS (
            SELECT k.bucket_id, k.id, row_number() OVER (PARTITION BY k.bucket_id ORDER BY k.ord) AS n
              FROM unnest(v_token_bucket, v_token_id) WITH ORDINALITY AS k(bucket_id, id, ord)
        )
        UPDATE cyclone_bucket_claims c SET at = p_now
          FROM taken t JOIN tokens k ON k.bucket_id = t.bucket_id AND k.n = t.n
         WHERE c.id = k.id;
    END IF;
    IF v_fair THEN
        -- The n-th row of this claim is serve (serial * 2^20 + n): later than
        -- every serve of an earlier claim, in order within this one.
        v_base := nextval('cyclone.cyclone_serve_seq') * 1048576;
        UPDATE cyclone_buckets k SET served = x.served
          FROM (SELECT u.g, v_base + max(least(u.n, 1048575)) AS served
                  FROM unnest(v_groups) WITH ORDINALITY AS u(g, n) GROUP BY u.g) x
         WHERE k.id = x.g
           AND k.id = ANY (ARRAY(SELECT b.id FROM cyclone_buckets b WHERE b.id = ANY (v_groups) FOR UPDATE SKIP LOCKED));
    END IF;
    RETURN v_ids;
END
$$;
REVOKE ALL ON FUNCTION cyclone._admit(bigint[],integer,timestamp with time zone) FROM PUBLIC;

-- _claimable_exists: whether a claim with no handler or workflow filter would take a step now. tick() asks
-- it and notifies cyclone_wakeup when it does (31_tick.sql). Queue 0 in claim order first (the claim index
-- answers with one entry), then the queues of buckets with room, one at a time; a step held back by a full
-- bucket is not work for a worker, so it wakes nobody. Reads only; locks nothing.
CREATE OR REPLACE FUNCTION cyclone._claimable_exists(p_now timestamp with time zone)
RETURNS boolean
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
    v_queue bigint;
BEGIN
    PERFORM 1 FROM ONLY cyclone_steps s
     WHERE s.queue_bucket = 0 AND s.state = 'available' AND s.scheduled_at <= p_now
       AND (SELECT r.state = 'running' FROM ONLY cyclone_runs r WHERE r.id = s.run_id)
     ORDER BY s.priority, s.scheduled_at, s.id
     LIMIT 1;
    IF FOUND THEN
        RETURN true;
    END IF;
    -- The queues one at a time, each bucket's room only when its turn comes: the first queue with room and a
    -- due step ends it (until 0.32.0 every queue's room was reckoned first: 2.5 s a tick with 100,000).
    FOR v_queue IN
        WITH RECURSIVE q(id) AS (
            (SELECT s.queue_bucket FROM ONLY cyclone_steps s
              WHERE s.state = 'available' AND s.queue_bucket > 0
              ORDER BY s.queue_bucket LIMIT 1)
            UNION ALL
            SELECT (SELECT s.queue_bucket FROM ONLY cyclone_steps s
                     WHERE s.state = 'available' AND s.queue_bucket > q.id
                     ORDER BY s.queue_bucket LIMIT 1)
              FROM q WHERE q.id IS NOT NULL)
        SELECT q.id FROM q WHERE q.id IS NOT NULL
    LOOP
        CONTINUE WHEN cyclone._bucket_room(v_queue, p_now) = 0;
        PERFORM 1 FROM ONLY cyclone_steps s
         WHERE s.queue_bucket = v_queue AND s.state = 'available' AND s.scheduled_at <= p_now
           AND (SELECT r.state = 'running' FROM ONLY cyclone_runs r WHERE r.id = s.run_id)
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
REVOKE ALL ON FUNCTION cyclone._claimable_exists(timestamp with time zone) FROM PUBLIC;

-- _refresh_claim_floor: tick's keeping of cyclone_claim_floor, where claim's walk of queue 0 may start
-- (10_runs_tables.sql says why). The new key is queue 0's first available step in claim order (a paused
-- run's included), or, when that step is less than a second old or there is none, (its priority or the last
-- floor's, now - 1 second, the lowest id): a step submitted by a transaction that began before this one and
-- commits after it is due from its transaction's start, and the second keeps it above the key (a longer
-- transaction's step waits for the next tick; every second of margin is a second of claimed steps' entries
-- that each claim reads again: 5,000 at a drain of 5,000 steps a second). Finding the
-- first step reads the claim index from its front, the walk over the claimed steps' entries that claims no
-- longer make: once a tick. The row is taken FOR UPDATE SKIP LOCKED: a tick that finds another refreshing
-- it leaves it, and none waits; a missing row (a new database, or after a crash: the table is unlogged) is
-- made again.
CREATE OR REPLACE FUNCTION cyclone._refresh_claim_floor(p_now timestamp with time zone)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_last int;
    v_priority int;
    v_scheduled_at timestamptz;
    v_id bigint;
BEGIN
    SELECT f.priority INTO v_last FROM cyclone_claim_floor f WHERE f.queue_bucket = 0 FOR UPDATE SKIP LOCKED;
    IF NOT FOUND AND EXISTS (SELECT 1 FROM cyclone_claim_floor f WHERE f.queue_bucket = 0) THEN
        RETURN;  -- another tick holds it
    END IF;
    SELECT s.priority, s.scheduled_at, s.id INTO v_priority, v_scheduled_at, v_id
      FROM ONLY cyclone_steps s
     WHERE s.queue_bucket = 0 AND s.state = 'available'
     ORDER BY s.priority, s.scheduled_at, s.id
     LIMIT 1;
    IF v_priority IS NULL OR v_scheduled_at > p_now - interval '1 second' THEN
        v_priority := coalesce(v_priority, v_last, 0);
        v_scheduled_at := p_now - interval '1 second';
        v_id := -9223372036854775808;
    END IF;
    INSERT INTO cyclone_claim_floor AS f (queue_bucket, priority, scheduled_at, id, set_at)
    VALUES (0, v_priority, v_scheduled_at, v_id, p_now)
    ON CONFLICT (queue_bucket) DO UPDATE
       SET priority = excluded.priority, scheduled_at = excluded.scheduled_at, id = excluded.id,
           set_at = excluded.set_at;
END
$$;
REVOKE ALL ON FUNCTION cyclone._refresh_claim_floor(timestamp with time zone) FROM PUBLIC;

-- _lower_claim_floor: a step of queue 0 is available again with its old key (p_priority, p_scheduled_at,
-- p_id), which may lie below the floor: release and sweep's reclaim call it, so that the step is claimed in
-- its place at once, not after the next tick. It writes only when the key is below the floor (no row lock
-- otherwise), and waits for a tick that is refreshing the row (that tick's last statement; it waits for
-- nothing after it).
CREATE OR REPLACE FUNCTION cyclone._lower_claim_floor(p_priority integer, p_scheduled_at timestamp with time zone,
                                                      p_id bigint)
RETURNS void
LANGUAGE sql
AS $$
    UPDATE cyclone.cyclone_claim_floor f
       SET priority = p_priority, scheduled_at = p_scheduled_at, id = p_id
     WHERE f.queue_bucket = 0 AND (f.priority, f.scheduled_at, f.id) > (p_priority, p_scheduled_at, p_id);
$$;
REVOKE ALL ON FUNCTION cyclone._lower_claim_floor(integer, timestamp with time zone, bigint) FROM PUBLIC;

-- renew: the heartbeat (SPEC 6). Extends the lease to now + p_lease_ttl and sets heartbeat_at, by one
-- compare-and-set UPDATE that matches only while the step is running, leased to p_worker, at
-- p_lease_generation (claim's: a step reclaimed and claimed again has a newer one), and within its timeout
-- (started_at + timeout > now). False when nothing matched (reclaimed, timed out, cancelled, finished): the
-- worker must cancel the handler. Locks only the step's row, never its run: it changes nothing a run lock
-- guards. Its transaction commits without waiting for the WAL flush: a renewal lost in a crash only ends the
-- lease sooner. Guards: p_step_id, p_worker and p_lease_generation given (22004), p_lease_ttl positive and
-- at most 1 day, as claim's (22023; 22004 when NULL), one expression on the hot path. A timeout stored
-- before define_workflow bounded it (366 days) counts as 366 days: a larger one made started_at + timeout
-- a raw 22008. force_generic_plan: as for claim, planning cost more than running.
-- Called by the worker's heartbeat for each step it runs.
CREATE OR REPLACE FUNCTION cyclone.renew(
    p_step_id bigint,
    p_worker text,
    p_lease_generation bigint,
    p_lease_ttl interval DEFAULT '00:00:30'::interval)
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
        AND p_lease_ttl > interval '0' AND p_lease_ttl <= interval '1 day') IS NOT TRUE THEN
        PERFORM cyclone._require_given('renew', p_step_id IS NOT NULL AND p_worker IS NOT NULL
                                 AND p_lease_generation IS NOT NULL, 'p_step_id, p_worker and p_lease_generation are required');
        PERFORM cyclone._require('renew', p_lease_ttl > interval '0', 'p_lease_ttl must be positive');
        PERFORM cyclone._require('renew', p_lease_ttl <= interval '1 day',
                                 format('p_lease_ttl must be at most 1 day (got %s)', p_lease_ttl));
    END IF;
    -- Losing a renewal in a crash is harmless (the lease just ends sooner), so
    -- this transaction does not wait for the WAL flush.
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE ONLY cyclone_steps
       SET lease_expiry = v_now + p_lease_ttl, heartbeat_at = v_now
     WHERE id = p_step_id
       AND state = 'running'
       AND lease_owner = p_worker
       AND lease_generation = p_lease_generation
       AND (timeout IS NULL OR started_at + least(timeout, interval '366 days') > v_now);
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION cyclone.renew(bigint,text,bigint,interval) IS 'Heartbeat: extend the lease (p_lease_ttl: positive, at most 1 day) while the step is running under this owner and generation and its timeout has not passed. False means the worker must cancel the handler.';
REVOKE ALL ON FUNCTION cyclone.renew(bigint,text,bigint,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.renew(bigint,text,bigint,interval) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.renew(bigint,text,bigint,interval) TO cyclone_admin;

-- renew_many: the heartbeats of several steps in one statement and one commit. The worker sends it for the
-- steps of one database whose heartbeats fall due within 100 ms of each other (each step keeps its own
-- lease_ttl/3 schedule and jitter, SPEC 6; only the call is shared), and its listener to ask which of its
-- steps a cyclone_cancel touched. Each element is renew's compare-and-set (running, p_worker, its lease
-- generation, within its timeout) with renew's answer: true, the lease now runs to now + p_lease_ttl; false,
-- the step is no longer the caller's to run (or is unknown). NULL: another transaction held the step's row
-- at that moment (its completion by the same worker's reporter, an operator's cancel), and renew_many did not
-- wait for it; the caller asks again later. Never waiting is what keeps a batch free of deadlocks: renew
-- locks one step a transaction, but a batch that waited for its second step while holding its first could
-- close a cycle with complete_many, which locks runs, then their steps. Rows in input order.
-- Guards, as complete_many's and renew's: 22004 for a NULL worker, array or TTL; 22023 when the arrays differ
-- in length or lower bound, hold a NULL or list a step twice, for more than 10,000 elements, and for
-- p_lease_ttl not positive or over 1 day; nothing is written then. Commits without waiting for the WAL
-- flush, as renew. force_generic_plan: the hot path (see claim).
CREATE OR REPLACE FUNCTION cyclone.renew_many(
    p_worker text,
    p_step_ids bigint[],
    p_lease_generations bigint[],
    p_lease_ttl interval DEFAULT '00:00:30'::interval)
RETURNS TABLE(step_id bigint, renewed boolean)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := cyclone.now();
    v_locked bigint[];
    v_renewed bigint[];
BEGIN
    PERFORM cyclone._require_given('renew_many', p_worker IS NOT NULL AND p_step_ids IS NOT NULL
                             AND p_lease_generations IS NOT NULL AND p_lease_ttl IS NOT NULL,
                             'p_worker, p_step_ids, p_lease_generations and p_lease_ttl are required');
    PERFORM cyclone._require('renew_many',
        cardinality(p_step_ids) = cardinality(p_lease_generations)
        AND array_lower(p_step_ids, 1) IS NOT DISTINCT FROM array_lower(p_lease_generations, 1),
        'p_step_ids and p_lease_generations must have the same length and bounds');
    PERFORM cyclone._require('renew_many', cardinality(p_step_ids) <= 10000,
                             format('at most 10,000 steps a call (got %s)', cardinality(p_step_ids)));
    PERFORM cyclone._require('renew_many',
        array_position(p_step_ids, NULL) IS NULL AND array_position(p_lease_generations, NULL) IS NULL,
        'step ids and lease generations must not contain NULL');
    PERFORM cyclone._require('renew_many',
        (SELECT count(DISTINCT u) = count(*) FROM unnest(p_step_ids) u), 'a step id is listed twice');
    PERFORM cyclone._require('renew_many', p_lease_ttl > interval '0', 'p_lease_ttl must be positive');
    PERFORM cyclone._require('renew_many', p_lease_ttl <= interval '1 day',
                             format('p_lease_ttl must be at most 1 day (got %s)', p_lease_ttl));
    PERFORM set_config('synchronous_commit', 'off', true);
    -- The rows no other transaction holds, locked as renew's UPDATE would lock them; the others are skipped.
    v_locked := ARRAY(SELECT s.id FROM ONLY cyclone_steps s WHERE s.id = ANY (p_step_ids)
                       ORDER BY s.id FOR NO KEY UPDATE SKIP LOCKED);
    WITH renewed AS (
        UPDATE ONLY cyclone_steps s
           SET lease_expiry = v_now + p_lease_ttl, heartbeat_at = v_now
         WHERE s.id = ANY (v_locked)
           AND s.state = 'running'
           AND s.lease_owner = p_worker
           AND s.lease_generation = p_lease_generations[array_position(p_step_ids, s.id)]
           AND (s.timeout IS NULL OR s.started_at + least(s.timeout, interval '366 days') > v_now)
        RETURNING s.id)
    SELECT coalesce(array_agg(r.id), '{}'::bigint[]) INTO v_renewed FROM renewed r;
    RETURN QUERY
    SELECT u.id,
           CASE WHEN r.id IS NOT NULL THEN true
                WHEN l.id IS NOT NULL THEN false
                -- Skipped: NULL while the row exists (held by another transaction), false when it does not.
                WHEN EXISTS (SELECT 1 FROM ONLY cyclone_steps s WHERE s.id = u.id) THEN NULL
                ELSE false END
      FROM unnest(p_step_ids) WITH ORDINALITY AS u(id, ord)
      LEFT JOIN unnest(v_locked) AS l(id) ON l.id = u.id
      LEFT JOIN unnest(v_renewed) AS r(id) ON r.id = u.id
     ORDER BY u.ord;
END
$$;
COMMENT ON FUNCTION cyclone.renew_many(text,bigint[],bigint[],interval) IS 'Heartbeat of several steps in one statement: each element is renew''s compare-and-set and answer; NULL for a step whose row another transaction held (never waited on).';
REVOKE ALL ON FUNCTION cyclone.renew_many(text,bigint[],bigint[],interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.renew_many(text,bigint[],bigint[],interval) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.renew_many(text,bigint[],bigint[],interval) TO cyclone_admin;

-- release: hands a lease back (SPEC 18), for a worker that shuts down with a step it will not finish. On a
-- match of (running, p_worker, p_lease_generation) the step is available again at once, its scheduled_at
-- unchanged; no attempt is charged (rerun_attempt: the next claim runs the same attempt number, as after a
-- reclaim) and reclaims is unchanged (nothing expired). The lease_generation the next claim gives fences a
-- late report of the released execution, as after a reclaim. False when the lease is no longer the
-- caller's, or the step is unknown or its run archived. Its limit slots go back through the release trigger
-- (35_limits.sql), waiting workers are woken (_wake), and claim's floor is lowered to it when it lies below
-- (_lower_claim_floor). 22004 for a missing argument.
-- Lock order: the run (_lock_run, ancestors first), then the step, as complete and fail.
CREATE OR REPLACE FUNCTION cyclone.release(p_step_id bigint, p_worker text, p_lease_generation bigint)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_run_id uuid;
    v_priority int;
    v_scheduled_at timestamptz;
    v_queue bigint;
BEGIN
    PERFORM cyclone._require_given('release', p_step_id IS NOT NULL AND p_worker IS NOT NULL
                             AND p_lease_generation IS NOT NULL,
                             'p_step_id, p_worker and p_lease_generation are required');
    SELECT s.run_id INTO v_run_id FROM ONLY cyclone_steps s WHERE s.id = p_step_id;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM cyclone._lock_run(v_run_id);
    UPDATE ONLY cyclone_steps
       SET state = 'available', lease_owner = NULL, lease_expiry = NULL, rerun_attempt = true
     WHERE id = p_step_id AND state = 'running' AND lease_owner = p_worker
       AND lease_generation = p_lease_generation
    RETURNING priority, scheduled_at, queue_bucket INTO v_priority, v_scheduled_at, v_queue;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF v_queue = 0 THEN
        PERFORM cyclone._lower_claim_floor(v_priority, v_scheduled_at, p_step_id);
    END IF;
    PERFORM cyclone._wake();
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone.release(bigint,text,bigint) IS 'Hand a lease back (a worker shutting down): the step is available again at once, scheduled_at unchanged, no attempt charged, reclaims unchanged. False when the lease is no longer the caller''s.';
REVOKE ALL ON FUNCTION cyclone.release(bigint,text,bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.release(bigint,text,bigint) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.release(bigint,text,bigint) TO cyclone_admin;
