-- Deploy cyclone:invariants
-- requires: invariants@v0.21.0 tables limits schedules step_workflow live_runs dynamic_nodes map_items coordination_tables
-- A complete copy of sql/engine/38_invariants.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/38_invariants.sql: change `invariants` — check_invariants(): the engine's consistency rules, as
-- the rows that break them (none when the state is consistent).
-- Owns: check_invariants. Requires: the tables: 10_runs_tables.sql (steps, runs), 11_limits_tables.sql,
-- 12_schedules_tables.sql (schedule runs), 13_history_tables.sql (cyclone_archive_queue), 14_events_tables.sql
-- (events). Called by: admins
-- (cyclone_admin), the CLI (`cyclone check`) and the tests, on demand, not on every scrape: it reads the live
-- and the archived tables (most rules through partial indexes of live rows; the schedule rule every run with
-- a key). Reads only: it takes no lock.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=invariants NOTE="..."` (docs/architecture.md, Changing the engine).

-- check_invariants: one row (invariant, detail) per violation. One SQL statement, so one snapshot: it
-- reports no false violation while workers run. The rules:
-- - running_step_without_lease: a running step holds a lease (owner, expiry, generation 1 or more);
-- - lease_outside_running: only a running step holds a lease;
-- - finished_run_with_live_step: a finished run has only terminal steps;
-- - pending_step_without_unfinished_dep: a pending step waits for a dependency that has not finished;
-- - skipped_step_with_unfinished_dep: a skipped step's dependencies each completed or were skipped (SPEC 16);
-- - item_without_map, live_item_of_finished_map, waiting_map_without_live_item: an item belongs to a map
--   node of its run; only a waiting map has unfinished items, and a waiting map has one (SPEC 16);
-- - sleeping_step_without_wake_time: a waiting sleep node has its wake time as scheduled_at and
--   wait_expires_at (SPEC 16);
-- - await_waiting_on_ended_run: a waiting await node waits on a live run that has not ended (SPEC 17);
-- - event_waiting_on_emitted_key: a waiting event node has its key, and no event of that key was emitted
--   at or after its run's created_at (SPEC 17);
-- - step_of_another_workflow: a live step carries its run's workflow (cyclone_steps.workflow, which claims,
--   metrics() and the views read);
-- - bucket_over_its_limit: a bucket's slots, held and free, are at most its concurrency plus its debt, and
--   its rate tokens at most its rate plus its rate debt (35_limits.sql): what keeps every window within
--   the limit;
-- - schedule_run_closed_while_live: a schedule's running or paused run has its row open, so the overlap
--   rules see it;
-- - live_run_with_only_terminal_steps: a running or paused run has a live step;
-- - running_step_without_slot and slot_without_running_step: a running step holds a slot in each of its
--   concurrency buckets, and every slot is held by a running step that takes its bucket;
-- - waiting_child_without_child_run: a waiting child node has its child run, whose parent is that node;
-- - child_run_without_parent: a child run's parent node exists in its parent run;
-- - schedule_slot_fired_twice: a schedule slot's idempotency key is on one run only;
-- - finished_run_not_queued_for_archive and archive_queue_without_finished_run: each finished run of the
--   live table is in cyclone_archive_queue once, with its finish time, and the queue holds nothing else.
CREATE OR REPLACE FUNCTION cyclone.check_invariants()
RETURNS TABLE(invariant text, detail jsonb)
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
-- No JIT: with a large history its cost estimate crosses jit_above_cost, and compiling its fifteen branches
-- would be paid on every call.
SET jit = off
AS $$
    -- A running step holds a lease of generation 1 or more.
    SELECT 'running_step_without_lease', jsonb_build_object('step_id', s.id, 'run_id', s.run_id,
               'lease_owner', s.lease_owner, 'lease_expiry', s.lease_expiry, 'lease_generation', s.lease_generation)
      FROM cyclone_steps s
     WHERE s.state = 'running'
       AND (s.lease_owner IS NULL OR s.lease_expiry IS NULL OR s.lease_generation < 1)
    UNION ALL
    -- Only a running step holds a lease.
    SELECT 'lease_outside_running', jsonb_build_object('step_id', s.id, 'run_id', s.run_id, 'state', s.state,
               'lease_owner', s.lease_owner)
      FROM cyclone_steps s
     WHERE s.state <> 'running' AND (s.lease_owner IS NOT NULL OR s.lease_expiry IS NOT NULL)
    UNION ALL
    -- A finished run has only terminal steps.
    SELECT 'finished_run_with_live_step', jsonb_build_object('run_id', r.id, 'run_state', r.state,
               'step_id', s.id, 'node', s.node, 'step_state', s.state)
      FROM cyclone_steps s JOIN cyclone_runs r ON r.id = s.run_id
     WHERE s.state IN ('pending', 'available', 'running', 'waiting')
       AND r.state IN ('completed', 'failed', 'cancelled')
    UNION ALL
    -- A pending step waits for a dependency that has not finished (once all
    -- have, the advance makes it available or cancels it).
    SELECT 'pending_step_without_unfinished_dep', jsonb_build_object('step_id', s.id, 'run_id', s.run_id,
               'node', s.node, 'deps', to_jsonb(s.deps))
      FROM cyclone_steps s
     WHERE s.state = 'pending'
       AND NOT EXISTS (SELECT 1 FROM cyclone_steps d
                        WHERE d.run_id = s.run_id AND d.item_index IS NULL AND d.node = ANY (s.deps)
                          AND d.state IN ('pending', 'available', 'running', 'waiting'))
    UNION ALL
    -- A skipped step was reached: each of its dependencies completed or was
    -- skipped (SPEC 16; a step is skipped only when all of them have).
    SELECT 'skipped_step_with_unfinished_dep', jsonb_build_object('step_id', s.id, 'run_id', s.run_id,
               'node', s.node, 'dep', d.node, 'dep_state', d.state)
      FROM cyclone_steps s
      JOIN cyclone_steps d ON d.run_id = s.run_id AND d.item_index IS NULL AND d.node = ANY (s.deps)
     WHERE s.state = 'skipped' AND d.state NOT IN ('completed', 'skipped')
    UNION ALL
    -- A map's items (SPEC 16): an item belongs to a map node of its run; the items of a map that is no longer
    -- waiting are terminal; a waiting map has an unfinished item (its last item's end ends it).
    SELECT 'item_without_map', jsonb_build_object('step_id', i.id, 'run_id', i.run_id, 'node', i.node)
      FROM cyclone_steps i
     WHERE i.item_index IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM cyclone_steps m
                        WHERE m.run_id = i.run_id AND m.item_index IS NULL AND m.node = i.node AND m.kind = 'map')
    UNION ALL
    SELECT 'live_item_of_finished_map', jsonb_build_object('step_id', i.id, 'run_id', i.run_id, 'node', i.node,
               'item_state', i.state, 'map_state', m.state)
      FROM cyclone_steps i
      JOIN cyclone_steps m ON m.run_id = i.run_id AND m.item_index IS NULL AND m.node = i.node AND m.kind = 'map'
     WHERE i.item_index IS NOT NULL AND i.finished_at IS NULL AND m.state <> 'waiting'
    UNION ALL
    SELECT 'waiting_map_without_live_item', jsonb_build_object('step_id', m.id, 'run_id', m.run_id, 'node', m.node)
      FROM cyclone_steps m
     WHERE m.kind = 'map' AND m.state = 'waiting'
       AND NOT EXISTS (SELECT 1 FROM cyclone_steps i
                        WHERE i.run_id = m.run_id AND i.node = m.node AND i.item_index IS NOT NULL
                          AND i.finished_at IS NULL)
    UNION ALL
    -- SPEC 17: a waiting await node waits on a live run that has not ended (the transaction that ends a run
    -- ends its awaiters), and a waiting event node on a key with no event emitted since its run began (the
    -- reach would have taken it, and emit_event completes the nodes waiting on its key).
    SELECT 'await_waiting_on_ended_run', jsonb_build_object('step_id', s.id, 'run_id', s.run_id,
               'node', s.node, 'awaited_run_id', s.awaited_run_id)
      FROM ONLY cyclone_steps s
     WHERE s.state = 'waiting' AND s.kind = 'await'
       AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_runs r
                        WHERE r.id = s.awaited_run_id AND r.state IN ('running', 'paused'))
    UNION ALL
    SELECT 'event_waiting_on_emitted_key', jsonb_build_object('step_id', s.id, 'run_id', s.run_id,
               'node', s.node, 'key', s.event_key)
      FROM ONLY cyclone_steps s
      JOIN ONLY cyclone_runs r ON r.id = s.run_id
     WHERE s.state = 'waiting' AND s.kind = 'event'
       AND (s.event_key IS NULL
            OR EXISTS (SELECT 1 FROM cyclone_events e WHERE e.key = s.event_key AND e.emitted_at >= r.created_at))
    UNION ALL
    -- A sleeping step has its wake time, as both scheduled_at and
    -- wait_expires_at (SPEC 16: tick wakes it through the waiting index).
    SELECT 'sleeping_step_without_wake_time', jsonb_build_object('step_id', s.id, 'run_id', s.run_id,
               'node', s.node, 'scheduled_at', s.scheduled_at, 'wait_expires_at', s.wait_expires_at)
      FROM cyclone_steps s
     WHERE s.state = 'waiting' AND s.kind = 'sleep'
       AND (s.wait_expires_at IS NULL OR s.wait_expires_at <> s.scheduled_at)
    UNION ALL
    -- A live step carries its run's workflow (written with the step).
    SELECT 'step_of_another_workflow', jsonb_build_object('step_id', s.id, 'run_id', s.run_id,
               'step_workflow', s.workflow, 'run_workflow', r.workflow)
      FROM cyclone_steps s JOIN cyclone_runs r ON r.id = s.run_id
     WHERE s.state IN ('pending', 'available', 'running', 'waiting') AND s.workflow <> r.workflow
    UNION ALL
    -- A bucket's slots, held and free, are at most its concurrency plus what
    -- it owes after a lowering; its rate tokens at most its rate plus theirs.
    SELECT 'bucket_over_its_limit', jsonb_build_object('bucket_id', k.id, 'limit', k.limit_name, 'bucket', k.bucket,
               'slots', x.slots, 'concurrency', l.concurrency, 'debt', k.debt,
               'tokens', x.tokens, 'rate', l.rate, 'rate_debt', k.rate_debt)
      FROM cyclone_buckets k
      JOIN cyclone_limits l ON l.name = k.limit_name
     CROSS JOIN LATERAL (
           SELECT (SELECT count(*) FROM cyclone_slots s WHERE s.bucket_id = k.id)
                  + (SELECT count(*) FROM cyclone_free_slots f WHERE f.bucket_id = k.id) AS slots,
                  (SELECT count(*) FROM cyclone_bucket_claims c WHERE c.bucket_id = k.id) AS tokens) x
     WHERE (l.concurrency IS NOT NULL AND x.slots > l.concurrency + k.debt)
        OR (l.rate IS NOT NULL AND x.tokens > l.rate + k.rate_debt)
    UNION ALL
    -- A schedule's run that is running or paused has its row open, so the
    -- overlap rules see it (schedules.sql: a retry opens it again).
    SELECT 'schedule_run_closed_while_live', jsonb_build_object('schedule', sr.schedule, 'slot', sr.slot,
               'run_id', r.id, 'run_state', r.state)
      FROM cyclone_runs r JOIN cyclone_schedule_runs sr ON sr.run_id = r.id
     WHERE r.state IN ('running', 'paused') AND NOT sr.open
    UNION ALL
    -- A live run has a live step (a run whose steps all finished is ended in
    -- the same transaction).
    SELECT 'live_run_with_only_terminal_steps', jsonb_build_object('run_id', r.id, 'workflow', r.workflow,
               'run_state', r.state)
      FROM cyclone_runs r
     WHERE r.state IN ('running', 'paused')
       AND NOT EXISTS (SELECT 1 FROM cyclone_steps s
                        WHERE s.run_id = r.id AND s.state IN ('pending', 'available', 'running', 'waiting'))
    UNION ALL
    -- A running step holds a slot in each of its concurrency buckets, and a
    -- slot is held by a running step of that bucket: a bucket's running count
    -- is its running steps.
    SELECT 'running_step_without_slot', jsonb_build_object('step_id', s.id, 'run_id', s.run_id,
               'bucket_id', b.id, 'limit', k.limit_name, 'bucket', k.bucket)
      FROM cyclone_steps s
     CROSS JOIN unnest(s.buckets) AS b(id)
      JOIN cyclone_buckets k ON k.id = b.id
      JOIN cyclone_limits l ON l.name = k.limit_name AND l.concurrency IS NOT NULL
     WHERE s.state = 'running'
       AND NOT EXISTS (SELECT 1 FROM cyclone_slots x WHERE x.bucket_id = b.id AND x.step_id = s.id)
    UNION ALL
    SELECT 'slot_without_running_step', jsonb_build_object('bucket_id', x.bucket_id, 'step_id', x.step_id,
               'step_state', s.state)
      FROM cyclone_slots x
      LEFT JOIN cyclone_steps s ON s.id = x.step_id
     WHERE s.id IS NULL OR s.state <> 'running' OR NOT (x.bucket_id = ANY (s.buckets))
    UNION ALL
    -- A waiting child node has its child run, whose parent is that node.
    SELECT 'waiting_child_without_child_run', jsonb_build_object('step_id', s.id, 'run_id', s.run_id,
               'node', s.node, 'child_run_id', s.child_run_id)
      FROM cyclone_steps s
     WHERE s.state = 'waiting' AND s.kind = 'child'
       AND NOT EXISTS (SELECT 1 FROM cyclone_runs c
                        WHERE c.id = s.child_run_id AND c.parent_run_id = s.run_id AND c.parent_step_id = s.id)
    UNION ALL
    -- A child run's parent node exists in its parent run (a pruned parent
    -- leaves parent_run_id NULL; a retried child node names its newer run).
    SELECT 'child_run_without_parent', jsonb_build_object('run_id', c.id, 'parent_run_id', c.parent_run_id,
               'parent_step_id', c.parent_step_id)
      FROM cyclone_runs c
     WHERE c.parent_run_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM cyclone_steps p
                        WHERE p.id = c.parent_step_id AND p.run_id = c.parent_run_id AND p.kind = 'child')
    UNION ALL
    -- A schedule slot has one run: its key is on one run only (the key is
    -- unique per workflow; a schedule that changed workflow could repeat it).
    SELECT 'schedule_slot_fired_twice', jsonb_build_object('idempotency_key', r.idempotency_key,
               'runs', jsonb_agg(r.id ORDER BY r.id))
      FROM cyclone_runs r
     WHERE r.idempotency_key LIKE 'schedule:%'
     GROUP BY r.idempotency_key
    HAVING count(*) > 1
    UNION ALL
    -- A finished run in the live table is queued for archive() once
    -- (live_runs.sql), and the queue holds nothing else.
    -- (Joined, not a subquery a run: the queue has no index to probe.)
    SELECT 'finished_run_not_queued_for_archive', jsonb_build_object('run_id', r.id, 'run_state', r.state,
               'finished_at', r.finished_at, 'queued', coalesce(q.n, 0))
      FROM ONLY cyclone_runs r
      LEFT JOIN (SELECT q.run_id, q.finished_at, count(*) AS n FROM cyclone_archive_queue q
                  GROUP BY q.run_id, q.finished_at) q ON q.run_id = r.id AND q.finished_at = r.finished_at
     WHERE r.finished_at IS NOT NULL AND coalesce(q.n, 0) <> 1
    UNION ALL
    SELECT 'archive_queue_without_finished_run', jsonb_build_object('run_id', q.run_id, 'finished_at', q.finished_at)
      FROM cyclone_archive_queue q
     WHERE NOT EXISTS (SELECT 1 FROM ONLY cyclone_runs r WHERE r.id = q.run_id AND r.finished_at = q.finished_at)
$$;
COMMENT ON FUNCTION cyclone.check_invariants() IS 'The engine''s consistency rules, as the rows that break them: none when the state is consistent. One statement, one snapshot.';
REVOKE ALL ON FUNCTION cyclone.check_invariants() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.check_invariants() TO cyclone_admin;

COMMIT;
