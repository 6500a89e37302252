-- Revert cyclone:explain to its previous version: the deploy script it had before
-- (sql/deploy/explain@v0.21.0.sql), and a drop of each function the new version added.
BEGIN;

-- sql/engine/36_explain.sql: change `explain` — why a step is not running (SPEC 12).
-- Owns: explain_step. The change's view, cyclone_v_limits (each limit's buckets with their running count,
-- claims in the current period and due available steps), is defined with the other views in 15_views.sql.
-- Requires: 10_runs_tables.sql (steps, runs), 11_limits_tables.sql (the limit tables), 14_workers_tables.sql
-- (the registry), 02_clock.sql (now), 03_checks.sql (_require_given). Called by: clients and admins
-- (cyclone_client, cyclone_admin), the CLI (`cyclone explain`) and the console. Reads only: it takes no lock.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=explain NOTE="..."` (docs/architecture.md, Changing the engine).

-- explain_step: why step p_step_id is not running, as {"reason": ...} with details: the first reason that
-- applies, in this order:
-- - completed, discarded, cancelled, running, skipped: the step's state;
-- - waiting_items {done, total} for a map node (SPEC 16): its items in a terminal state, and all of them;
-- - sleeping {until} for a sleep node (SPEC 16; a pause moves until forward when the run resumes),
--   waiting_signal {signal} for a wait node, waiting_child {child_run_id} for a child node;
-- - pending_deps {deps}: its dependencies not completed (or skipped) yet, by name;
-- - for an available step: run_terminal {run_state}, run_paused, not_due {until} (null: never);
-- - concurrency_limit {limit, bucket, running, max}: every bucket's concurrency before any rate, each in the
--   step's limit order; rate_limit {limit, bucket, next_slot_at}: when enough of the window's claims have
--   left it to make room (the oldest, or more while a lowered rate leaves the window over);
-- - claimable {workers}: nothing holds it back (a claim for its handler and workflow takes it in its turn);
--   workers is how many live registered workers would claim it (cyclone_v_workers' alive: seen within 60
--   seconds; their info's handlers and workflows hold its handler and workflow, or are absent, null or not
--   an array: any). 0 is "no worker is claiming it" as a fact rather than a guess from how long the step
--   has waited; a worker that does not register (an older release) claims without being counted.
-- Guards: p_step_id given (22004); an unknown step is P0002. It reads steps and runs through the parent
-- tables, so it answers for an archived step too (43_history.sql). It answers whatever times are stored: a
-- step's scheduled_at of 'infinity' (a run_at an older release accepted) is not_due with until null (never:
-- the string "infinity" is no time a client can parse); a rate period stored before define_limit bounded
-- it counts as 366 days, as in claim (a larger one made now - period a raw 22008).
CREATE OR REPLACE FUNCTION cyclone.explain_step(p_step_id bigint)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_step cyclone.cyclone_steps;
    v_run_state text;
    v_bucket record;
BEGIN
    PERFORM cyclone._require_given('explain_step', p_step_id IS NOT NULL, 'p_step_id is required');
    SELECT s.* INTO v_step FROM cyclone_steps s WHERE s.id = p_step_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'step % not found', p_step_id USING ERRCODE = 'P0002';
    END IF;
    IF v_step.state IN ('completed', 'discarded', 'cancelled', 'running', 'skipped') THEN
        RETURN jsonb_build_object('reason', v_step.state);
    ELSIF v_step.state = 'waiting' AND v_step.kind = 'map' THEN
        RETURN (SELECT jsonb_build_object('reason', 'waiting_items', 'done', count(*) FILTER (WHERE i.finished_at IS NOT NULL),
                                          'total', count(*))
                  FROM cyclone_steps i
                 WHERE i.run_id = v_step.run_id AND i.node = v_step.node AND i.item_index IS NOT NULL);
    ELSIF v_step.state = 'waiting' AND v_step.kind = 'sleep' THEN
        RETURN jsonb_build_object('reason', 'sleeping', 'until', v_step.wait_expires_at);
    ELSIF v_step.state = 'waiting' AND v_step.kind = 'wait' THEN
        RETURN jsonb_build_object('reason', 'waiting_signal', 'signal', v_step.signal);
    ELSIF v_step.state = 'waiting' THEN
        RETURN jsonb_build_object('reason', 'waiting_child', 'child_run_id', v_step.child_run_id);
    ELSIF v_step.state = 'pending' THEN
        RETURN jsonb_build_object('reason', 'pending_deps', 'deps',
            (SELECT coalesce(jsonb_agg(d.node ORDER BY d.node), '[]') FROM cyclone_steps d
              WHERE d.run_id = v_step.run_id AND d.item_index IS NULL AND d.node = ANY (v_step.deps)
                AND d.state NOT IN ('completed', 'skipped')));
    END IF;
    -- available
    SELECT r.state INTO v_run_state FROM cyclone_runs r WHERE r.id = v_step.run_id;
    IF v_run_state IN ('completed', 'failed', 'cancelled') THEN
        RETURN jsonb_build_object('reason', 'run_terminal', 'run_state', v_run_state);
    ELSIF v_run_state = 'paused' THEN
        RETURN jsonb_build_object('reason', 'run_paused');
    ELSIF v_step.scheduled_at > v_now THEN
        RETURN jsonb_build_object('reason', 'not_due', 'until',
                                  CASE WHEN isfinite(v_step.scheduled_at) THEN v_step.scheduled_at END);
    END IF;
    -- Every bucket's concurrency before any rate, each in the step's limit order.
    FOR v_bucket IN
        SELECT k.limit_name, k.bucket, l.concurrency,
               (SELECT count(*) FROM cyclone_slots x WHERE x.bucket_id = k.id)::int AS running
          FROM unnest(v_step.buckets) WITH ORDINALITY AS b(id, ord)
          JOIN cyclone_buckets k ON k.id = b.id
          JOIN cyclone_limits l ON l.name = k.limit_name
         WHERE l.concurrency IS NOT NULL
         ORDER BY b.ord
    LOOP
        IF v_bucket.running >= v_bucket.concurrency THEN
            RETURN jsonb_build_object('reason', 'concurrency_limit', 'limit', v_bucket.limit_name,
                                      'bucket', v_bucket.bucket, 'running', v_bucket.running,
                                      'max', v_bucket.concurrency);
        END IF;
    END LOOP;
    FOR v_bucket IN
        SELECT k.id, k.limit_name, k.bucket, l.rate, least(l.period, interval '366 days') AS period,
               (SELECT count(*) FROM cyclone_bucket_claims c
                 WHERE c.bucket_id = k.id AND c.at > v_now - least(l.period, interval '366 days'))::int AS claims
          FROM unnest(v_step.buckets) WITH ORDINALITY AS b(id, ord)
          JOIN cyclone_buckets k ON k.id = b.id
          JOIN cyclone_limits l ON l.name = k.limit_name
         WHERE l.rate IS NOT NULL
         ORDER BY b.ord
    LOOP
        IF v_bucket.claims >= v_bucket.rate THEN
            -- A slot opens when enough of the window's claims have left it:
            -- the oldest, or more when the rate was lowered.
            RETURN jsonb_build_object('reason', 'rate_limit', 'limit', v_bucket.limit_name,
                                      'bucket', v_bucket.bucket, 'next_slot_at',
                (SELECT c.at + v_bucket.period FROM cyclone_bucket_claims c
                  WHERE c.bucket_id = v_bucket.id AND c.at > v_now - v_bucket.period
                  ORDER BY c.at OFFSET v_bucket.claims - v_bucket.rate LIMIT 1));
        END IF;
    END LOOP;
    RETURN jsonb_build_object('reason', 'claimable', 'workers',
        (SELECT count(*) FROM cyclone_workers w
          WHERE w.last_seen_at > v_now - interval '60 seconds'
            AND (jsonb_typeof(w.info -> 'handlers') IS DISTINCT FROM 'array'
                 OR w.info -> 'handlers' ? v_step.handler)
            AND (jsonb_typeof(w.info -> 'workflows') IS DISTINCT FROM 'array'
                 OR w.info -> 'workflows' ? v_step.workflow)));
END
$$;
COMMENT ON FUNCTION cyclone.explain_step(bigint) IS 'Why a step is not running (SPEC 12): {"reason": ...} with details; the first reason that applies; claimable says how many live registered workers would claim it. Unknown step: P0002.';
REVOKE ALL ON FUNCTION cyclone.explain_step(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.explain_step(bigint) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.explain_step(bigint) TO cyclone_admin;

COMMIT;
