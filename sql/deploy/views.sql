-- Deploy cyclone:views
-- requires: views@v0.21.0 tables step_workflow clock worker_registry dynamic_columns map_items coordination_tables
-- A complete copy of sql/engine/15_views.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/15_views.sql: change `views` — the read side users query with plain SQL (SPEC 3).
-- Owns every view: cyclone_v_workflows, cyclone_v_runs, cyclone_v_steps, cyclone_v_dlq (change views),
-- cyclone_v_limits (first made by the change explain), cyclone_v_audit (audit), cyclone_v_schedules
-- (schedules), cyclone_v_workers and cyclone_v_events.
-- Requires: the tables (10_runs_tables.sql, 11_limits_tables.sql, 12_schedules_tables.sql,
-- 14_events_tables.sql, 14_workers_tables.sql) and 02_clock.sql (cyclone_v_limits and cyclone_v_workers read cyclone.now()).
-- Called by: clients and operators with SELECT (the SPEC's documented queries, the CLI, the web console), and
-- the listings (list_runs, list_steps, list_dead_letters; 42_listings.sql), which page these rows for a router.
-- Every view reads through the parents cyclone_runs and cyclone_steps, so it shows archived runs and steps
-- (the day tables of history) as well as live ones. A view takes no locks but its reads.
-- Every view is granted to cyclone_client and cyclone_admin; cyclone_v_limits, cyclone_v_schedules and
-- cyclone_v_workers to cyclone_worker too.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=views NOTE="..."` (docs/architecture.md, Changing the engine).

-- Registered workflows: name, the definition as define_workflow() normalised it, when it was last defined.
CREATE OR REPLACE VIEW cyclone.cyclone_v_workflows AS
SELECT w.name, w.definition, w.updated_at
  FROM cyclone.cyclone_workflows w;
COMMENT ON VIEW cyclone.cyclone_v_workflows IS 'Registered workflows with their normalised definitions.';
GRANT SELECT ON cyclone.cyclone_v_workflows TO cyclone_client, cyclone_admin;

-- Runs (SPEC 3), the columns of cyclone_runs that the SPEC names: state is running, paused, completed, failed
-- or cancelled; finished_at is set iff the run is terminal, paused_at iff it is paused; deadline_at NULL is no
-- deadline; parent_run_id and parent_step_id name a child run's parent and its child node. No error_kind: a
-- failed run's error is on its steps (get_run returns the run with the error that failed it). The traceparent
-- is not shown. priority is submit's p_priority (SPEC 16), which each of the run's steps adds to its node's.
-- rerun_of is the run rerun() made this one from (SPEC 17).
-- A column a release adds goes last (CREATE OR REPLACE VIEW can only append).
CREATE OR REPLACE VIEW cyclone.cyclone_v_runs AS
SELECT r.id, r.workflow, r.state, r.input, r.output, r.created_at, r.started_at,
       r.finished_at, r.deadline_at, r.paused_at, r.parent_run_id, r.parent_step_id,
       r.idempotency_key, r.priority, r.rerun_of
  FROM cyclone.cyclone_runs r;
COMMENT ON VIEW cyclone.cyclone_v_runs IS 'Runs. The error of a failed run is on its steps (see get_run).';
GRANT SELECT ON cyclone.cyclone_v_runs TO cyclone_client, cyclone_admin;

-- Steps (SPEC 3) with their run's workflow, read from each step's own workflow column (no join to its run: a
-- query of steps reads steps alone; every step's workflow is its run's). completed_at is the step's
-- finished_at: the terminal timestamp of every terminal state, discarded and cancelled included (there is no
-- discarded_at). The columns are cyclone_steps' (10_runs_tables.sql says what each is); the bookkeeping ones
-- (limit buckets, failed_span, contained, rerun_attempt, child_workflow) are not shown. priority is the one
-- claim orders by: the node's plus the run's. snoozes, progress and progress_at are SPEC 16's (snooze(),
-- progress()), and so are item_index and item (a map item's position and element; NULL for other steps).
-- event_key and awaited_run_id are what an event or await node waits on (SPEC 17); spec is what a node decides
-- when reached (its condition, a sleep's time, a map's list, an event's key template, an await's run path;
-- NULL for a node with none). A column a release adds goes last (CREATE OR REPLACE VIEW can only append; cyclone_v_dlq below
-- follows).
CREATE OR REPLACE VIEW cyclone.cyclone_v_steps AS
SELECT s.id, s.run_id, s.workflow, s.node, s.handler, s.kind, s.state, s.attempt, s.max_attempts,
       s.reclaims, s.error, s.error_kind, s.scheduled_at, s.started_at, s.finished_at AS completed_at,
       s.deps, s.on_dep_failure, s.priority, s.timeout, s.lease_owner, s.lease_expiry,
       s.lease_generation, s.heartbeat_at, s.signal, s.max_wait, s.wait_expires_at,
       s.child_run_id, s.input, s.output, s.snoozes, s.progress, s.progress_at, s.item_index, s.item,
       s.event_key, s.awaited_run_id, s.spec
  FROM cyclone.cyclone_steps s;
COMMENT ON VIEW cyclone.cyclone_v_steps IS
    'Steps with their run''s workflow; completed_at is set for every terminal state.';
GRANT SELECT ON cyclone.cyclone_v_steps TO cyclone_client, cyclone_admin;

-- The dead-letter queue (SPEC 3): the rows of cyclone_v_steps whose state is discarded, with the same columns
-- (SELECT * is expanded when the view is made; this file makes it again after cyclone_v_steps).
CREATE OR REPLACE VIEW cyclone.cyclone_v_dlq AS
SELECT * FROM cyclone.cyclone_v_steps WHERE state = 'discarded';
COMMENT ON VIEW cyclone.cyclone_v_dlq IS 'The dead-letter queue: discarded steps, with their run''s workflow.';
GRANT SELECT ON cyclone.cyclone_v_dlq TO cyclone_client, cyclone_admin;

-- Limits and their buckets (SPEC 12): one row per limit and bucket that has an unfinished step or a claim in
-- the current period, plus the bucket '' of every limit, whether or not a step ever took it (the second
-- branch: a limit no submit has named yet has no bucket row). Columns: the limit's bounds (concurrency, rate,
-- period); running, the slots its steps hold now; claims_in_period, the claims in the window that ends now
-- (NULL without a rate); available, its available steps that are due. The unfinished limited steps are read
-- through cyclone_steps_limited_live, never the finished ones. A period stored before define_limit bounded it
-- (366 days, 35_limits.sql) counts as 366 days, as in claim: a larger one made now - period a raw 22008.
CREATE OR REPLACE VIEW cyclone.cyclone_v_limits AS
WITH live AS (
    SELECT b.id AS bucket_id,
           count(*) FILTER (WHERE s.state = 'available' AND s.scheduled_at <= cyclone.now()) AS available
      FROM cyclone.cyclone_steps s
     CROSS JOIN LATERAL unnest(s.buckets) AS b(id)
     WHERE s.buckets <> '{}' AND s.finished_at IS NULL
     GROUP BY b.id
)
SELECT l.name, k.bucket, l.concurrency,
       (SELECT count(*) FROM cyclone.cyclone_slots x WHERE x.bucket_id = k.id)::int AS running,
       l.rate, l.period,
       CASE WHEN l.rate IS NOT NULL THEN
           (SELECT count(*) FROM cyclone.cyclone_bucket_claims c
             WHERE c.bucket_id = k.id AND c.at > cyclone.now() - least(l.period, '366 days'::interval))::int END AS claims_in_period,
       coalesce(v.available, 0)::int AS available
  FROM cyclone.cyclone_limits l
  JOIN cyclone.cyclone_buckets k ON k.limit_name = l.name
  LEFT JOIN live v ON v.bucket_id = k.id
 WHERE k.bucket = '' OR v.bucket_id IS NOT NULL
    OR (l.rate IS NOT NULL AND EXISTS (SELECT 1 FROM cyclone.cyclone_bucket_claims c
                                        WHERE c.bucket_id = k.id AND c.at > cyclone.now() - least(l.period, '366 days'::interval)))
UNION ALL
SELECT l.name, '', l.concurrency, 0, l.rate, l.period, CASE WHEN l.rate IS NOT NULL THEN 0 END, 0
  FROM cyclone.cyclone_limits l
 WHERE NOT EXISTS (SELECT 1 FROM cyclone.cyclone_buckets k WHERE k.limit_name = l.name AND k.bucket = '');
COMMENT ON VIEW cyclone.cyclone_v_limits IS
    'One row per limit and bucket with an unfinished step or a claim in the current period, plus the bucket '''' '
    'of every limit: running, claims_in_period and due available steps.';
GRANT SELECT ON cyclone.cyclone_v_limits TO cyclone_worker, cyclone_client, cyclone_admin;

-- The operator audit trail (SPEC 9), for clients (the web console's run page): what was done to a run (action:
-- retry, cancel, pause, resume, rerun, signal; node for a retried step, the node a rerun started from or a
-- signal's name), when (at), why (reason), who (actor: the person a face named for the transaction via the
-- session's role, 04_audit.sql) and detail (a signal's payload size, a rerun's original run).
CREATE OR REPLACE VIEW cyclone.cyclone_v_audit AS
SELECT a.id, a.at, a.run_id, a.node, a.action, a.reason, a.actor, a.detail
  FROM cyclone.cyclone_audit a;
COMMENT ON VIEW cyclone.cyclone_v_audit IS 'Operator actions on runs: what, when, why and who (actor).';
GRANT SELECT ON cyclone.cyclone_v_audit TO cyclone_client, cyclone_admin;

-- Events (SPEC 17, 14_events_tables.sql): each kept event's key, payload and when it was emitted, until prune
-- removes it.
CREATE OR REPLACE VIEW cyclone.cyclone_v_events AS
SELECT e.key, e.payload, e.emitted_at
  FROM cyclone.cyclone_events e;
COMMENT ON VIEW cyclone.cyclone_v_events IS 'Emitted events kept until prune (SPEC 17): key, payload, emitted_at.';
GRANT SELECT ON cyclone.cyclone_v_events TO cyclone_client, cyclone_admin;

-- Schedules (SPEC 13): the schedule as given (cron, timezone, workflow, overlap, catchup), whether it is
-- paused, next_fire_at (the next slot not yet handled) and last_slot with last_run_id (the latest slot that
-- got a run, and that run). Written without a table alias, as first deployed: pg_get_viewdef shows the
-- table's name, and the engine guard compares it.
CREATE OR REPLACE VIEW cyclone.cyclone_v_schedules AS
SELECT name, cron, timezone, workflow, overlap, catchup, paused, next_fire_at, last_slot, last_run_id
  FROM cyclone.cyclone_schedules;
COMMENT ON VIEW cyclone.cyclone_v_schedules IS
    'Schedules with their next slot and the latest slot that got a run (SPEC 13).';
GRANT SELECT ON cyclone.cyclone_v_schedules TO cyclone_worker, cyclone_client, cyclone_admin;

-- The worker registry (SPEC 18, 14_workers_tables.sql): each registered worker with what it said about
-- itself (info), when it first registered (started_at) and last refreshed (last_seen_at); alive while seen
-- within the last 60 seconds on the engine clock (a worker refreshes on every poll); running, the steps it
-- holds now (read once from the running steps' partial index, grouped by owner: one pass whatever the number
-- of workers). A worker that does not register is not listed, though its steps run.
CREATE OR REPLACE VIEW cyclone.cyclone_v_workers AS
SELECT w.name, w.info, w.started_at, w.last_seen_at,
       w.last_seen_at > cyclone.now() - interval '60 seconds' AS alive,
       coalesce(r.running, 0) AS running
  FROM cyclone.cyclone_workers w
  LEFT JOIN (SELECT s.lease_owner, count(*)::int AS running
               FROM ONLY cyclone.cyclone_steps s
              WHERE s.state = 'running'
              GROUP BY s.lease_owner) r ON r.lease_owner = w.name;
COMMENT ON VIEW cyclone.cyclone_v_workers IS
    'Registered workers (SPEC 18): info, started_at, last_seen_at, alive (seen within 60 s), running (steps held).';
GRANT SELECT ON cyclone.cyclone_v_workers TO cyclone_worker, cyclone_client, cyclone_admin;

COMMIT;
