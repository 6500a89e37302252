-- sql/engine/10_runs_tables.sql: the tables of workflows, runs and steps, in their current shape.
-- Owns: cyclone_workflows, cyclone_runs, cyclone_steps (the state machine), cyclone_signals (signals kept for a
-- wait node to come), cyclone_step_errors (every error a step was given), cyclone_audit (operator actions),
-- cyclone_run_keys (idempotency keys), cyclone_claim_floor (where claim's scan of queue 0 may start), with
-- their indexes, comments and grants.
-- Requires: 02_clock.sql (defaults call cyclone.now()) and 04_audit.sql (cyclone_audit.actor's default calls
-- _actor()). Every function file reads or writes these tables.
-- sqitch reaches this shape through the changes tables, client_reads, step_errors, limits (the steps' bucket
-- columns and their indexes), traces, audit, list_pages, fail (failed_span), step_workflow, metrics, history,
-- live_runs, dynamic_columns, dynamic_nodes, map_items, coordination_tables, hot_path_keys, claim_floor
-- (cyclone_claim_floor) and claim_scale (cyclone_steps_limited_priority); the engine guard
-- checks that both end in the same tables. A table changes by a new change with a hand-written ALTER, and
-- this file is edited to match (tables are not reworked).
--
-- States are text with named CHECKs, and cross-column invariants make illegal rows unstorable: a step's lease
-- columns are set iff it is running, finished_at is set iff a run or step is terminal.
-- Finished runs leave cyclone_runs and cyclone_steps for the day tables of history (13_history_tables.sql,
-- 43_history.sql): inheritance children, so a query of these tables (or of a view over them) reads every kept
-- run, while the state machine's statements read the live rows alone (FROM ONLY).
-- Lock order (21_runs.sql has it in full): a run's ancestors first (root down), then the run row (FOR NO KEY
-- UPDATE, which the foreign key checks of rows inserted under it, FOR KEY SHARE, never wait for), then its
-- steps, then free slots and rate tokens, then limit bucket rows by id.
-- No role but the owner writes these tables: every write goes through a SECURITY DEFINER function.

-- Registered workflow definitions (SPEC 3, 4). define_workflow (20_workflows.sql) validates and normalises a
-- definition before it is stored; submit copies what a run needs of it onto the run's steps.
CREATE TABLE cyclone.cyclone_workflows (
    name       text PRIMARY KEY CONSTRAINT workflow_name_not_empty CHECK (name <> ''),
    definition jsonb NOT NULL,           -- the normalised definition: nodes, deps, policies, limits
    updated_at timestamptz NOT NULL DEFAULT cyclone.now()
);
COMMENT ON TABLE cyclone.cyclone_workflows IS 'Registered workflow definitions, normalised by define_workflow().';
GRANT SELECT ON cyclone.cyclone_workflows TO cyclone_admin;

-- One row per run (SPEC 3, 5). This is the live table: the runs not finished yet, and those finished since the
-- last archive(); the day tables of history inherit it (13_history_tables.sql).
--
-- Ending a run is a HOT update: it changes state, finished_at and output, and no index of this table covers a
-- column that changes after submit, so the new row version needs no index entry. It also needs room on its
-- page: runs are inserted and ended in the same order, so a batch of completions ends every run of a page in
-- one transaction, and the page must hold all of their new versions at once. fillfactor 40 keeps 60% of each
-- page free: in the bench's loop every end of a one-step run was HOT, where with 50% free 77% were
-- (docs/performance.md, "Ending a run"). A run whose output is large may still spill. Before, each ended run
-- wrote an entry into five indexes, a third of the database's work per single-step run.
-- autovacuum_vacuum_cost_delay = 0 (change live_tables_vacuum), here and on cyclone_steps: a queue's tables,
-- whose dead row versions pile up while a snapshot is held and are read past by every claim until vacuumed,
-- are vacuumed unthrottled once they can be (after a held drain of 20,000 runs, 0.07 s against 0.29 s under
-- the default 2 ms; docs/operations.md, Vacuum of the live tables). The day tables are made with LIKE, which
-- copies no storage options: written once, they keep the server's defaults.
CREATE TABLE cyclone.cyclone_runs (
    -- A version 4 UUID; on a shard (14_shard_tables.sql) _create_runs makes its last 16 bits the run's
    -- partition (_run_id_on), so that a call naming the run is routed without a lookup.
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- The workflow it runs: submit finds it (P0002 when there is none) and nothing deletes a workflow. No
    -- foreign key (hot_path_keys.sql): its check locked the workflow's row FOR KEY SHARE for each new run, a
    -- multixact per submit under concurrent submits of one workflow; check_invariants() reports a run of an
    -- unknown workflow (run_of_unknown_workflow).
    workflow        text NOT NULL,
    state           text NOT NULL DEFAULT 'running',
    input           jsonb NOT NULL DEFAULT '{}',
    output          jsonb,               -- set when the run completes: each completed leaf node's output
    created_at      timestamptz NOT NULL DEFAULT cyclone.now(),
    started_at      timestamptz NOT NULL DEFAULT cyclone.now(),
    finished_at     timestamptz,         -- set iff the run is terminal
    deadline_at     timestamptz,         -- NULL: no deadline
    paused_at       timestamptz,         -- set iff the run is paused
    -- A child run's parent: the run and its child node. No foreign key: a finished run moves to history
    -- (a cascade or a SET NULL would fire at archive), and check_invariants() checks the pair instead.
    parent_run_id   uuid,
    parent_step_id  bigint,
    -- As submitted. Unique per workflow through cyclone_run_keys, which holds it for live and archived runs.
    idempotency_key text,
    -- The W3C trace context (the "traceparent" header) the run was submitted in, or its parent run's, so that
    -- every execution of its steps joins the caller's trace (SPEC 5, 14). The CHECK makes a malformed value
    -- unstorable; _traceparent_problem (39_traces.sql) says what is wrong with one, for submit's 22023.
    traceparent     text,
    -- Submit's p_priority (SPEC 16), -1000..1000 (submit checks it): each step of the run is made with its
    -- node's priority plus this one, and a child run takes its parent's. Set at submit, never changed.
    priority        int NOT NULL DEFAULT 0,
    -- SPEC 17. rerun_of: the run rerun() made this one from (live or archived; no foreign key, as for
    -- parent_run_id). debounce_key: submit's p_debounce_key; a later submit of the same workflow and key
    -- folds into this run while none of its steps has been claimed (23_submit.sql). Both set at its creation.
    rerun_of        uuid,
    debounce_key    text,
    CONSTRAINT run_state_valid
        CHECK (state IN ('running', 'paused', 'completed', 'failed', 'cancelled')),
    CONSTRAINT run_finished_iff_terminal
        CHECK ((finished_at IS NOT NULL) = (state IN ('completed', 'failed', 'cancelled'))),
    CONSTRAINT run_paused_at_iff_paused
        CHECK ((paused_at IS NOT NULL) = (state = 'paused')),
    -- Four dash-separated fields of lower-case hex (version 2, trace id 32, parent id 16, flags 2); version ff
    -- is invalid, and neither id may be all zeros.
    CONSTRAINT run_traceparent_valid CHECK (
        traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'
        AND left(traceparent, 2) <> 'ff'
        AND substr(traceparent, 4, 32) <> repeat('0', 32)
        AND substr(traceparent, 37, 16) <> repeat('0', 16))
) WITH (fillfactor = 40, autovacuum_vacuum_cost_delay = 0);
COMMENT ON TABLE cyclone.cyclone_runs IS 'One row per run of a workflow.';
COMMENT ON COLUMN cyclone.cyclone_runs.traceparent IS
    'The W3C trace context (traceparent) the run was submitted in, or its parent run''s; NULL = none.';
COMMENT ON COLUMN cyclone.cyclone_runs.priority IS
    'The run''s priority (-1000..1000, submit''s p_priority): added to each node''s priority on its steps.';
COMMENT ON COLUMN cyclone.cyclone_runs.rerun_of IS 'The run rerun() made this one from (SPEC 17); NULL = none.';
COMMENT ON COLUMN cyclone.cyclone_runs.debounce_key IS
    'submit''s p_debounce_key (SPEC 17): later submits of the key fold into this run until a step is claimed.';

-- The indexes of the live runs cover only columns set at submit (see fillfactor above). What the dropped ones
-- served went elsewhere: runs by state, newest first, read the day tables' own (state, created_at, id) index
-- and, here, one of the two list-page indexes with the state checked on the row; finished runs, oldest first
-- (archive, prune), are cyclone_archive_queue (13_history_tables.sql); the live runs by workflow and state
-- (metrics) are this table itself.
--
-- The list pages (the web console's runs, the client's runs_page, list_runs): newest first, id breaking ties,
-- so that a keyset page (the rows after a cursor (created_at, id)) is one index range read of its length
-- wherever it starts. Every index here costs each submit an entry, so a page of one workflow and one state
-- reads the workflow's index and filters the state.
CREATE INDEX cyclone_runs_created ON cyclone.cyclone_runs (created_at, id);
CREATE INDEX cyclone_runs_workflow_created ON cyclone.cyclone_runs (workflow, created_at, id);
-- The list pages' filter by idempotency key (of any workflow: cyclone_run_keys is keyed by workflow first).
CREATE INDEX cyclone_runs_key ON cyclone.cyclone_runs (idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Runs past their deadline (enforce_deadlines, in tick): every run with a deadline, not only the running
-- ones, so that ending a run changes no entry; enforce_deadlines checks the state on the row.
CREATE INDEX cyclone_runs_deadline ON cyclone.cyclone_runs (deadline_at) WHERE deadline_at IS NOT NULL;
-- A run's children: archive keeps a finished run while a child of it is live.
CREATE INDEX cyclone_runs_parent ON cyclone.cyclone_runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
-- A debounced submit's run to fold into (SPEC 17): the newest live run of the workflow and key.
CREATE INDEX cyclone_runs_debounce ON cyclone.cyclone_runs (workflow, debounce_key, created_at)
    WHERE debounce_key IS NOT NULL;

-- cyclone_client reads runs and steps as well as the views (SPEC 10), so that the documented queries (the
-- run-deadline note joins the two) run as written after SET search_path = cyclone, public. Reads only.
GRANT SELECT ON cyclone.cyclone_runs TO cyclone_admin, cyclone_client;

-- One row per DAG node of a run: the state machine of SPEC 6-9. The node's definition is copied onto its step
-- (kind, handler, deps, policy, limits), so that redefining a workflow never changes a run already submitted.
--
-- fillfactor 80: a step is updated several times in its life (claimed, renewed, completed), and the free
-- fifth of each page is room for the new versions on the same page, as HOT updates where they change no
-- indexed column (the running index is keyed on id so that a heartbeat changes nothing it covers).
CREATE TABLE cyclone.cyclone_steps (
    -- Given by _insert_steps (21_runs.sql) as nextval * partition count + partition (OVERRIDING SYSTEM VALUE):
    -- a step id encodes its run's partition; without a shard, the sequence's value as it is.
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- Its run, made in the same statement (_insert_steps) and moved or deleted with it, steps first (archive,
    -- prune, _complete_solo_runs). No foreign key (hot_path_keys.sql): its check was a query and a row lock on
    -- the run for each step inserted, its cascade a query for each run moved; check_invariants() reports a
    -- live step without its live run (step_without_run).
    run_id           uuid NOT NULL,
    node             text NOT NULL,
    handler          text NOT NULL,
    kind             text NOT NULL DEFAULT 'task',       -- what completes it: see step_kind_valid
    state            text NOT NULL DEFAULT 'pending',
    deps             text[] NOT NULL DEFAULT '{}',       -- the nodes it waits for
    on_dep_failure   text NOT NULL DEFAULT 'fail_run',   -- what a discarded dependency does to it
    priority         int NOT NULL DEFAULT 0,             -- lower is claimed first
    attempt          int NOT NULL DEFAULT 0,             -- the current (or last) execution, from 1
    max_attempts     int NOT NULL DEFAULT 25,
    reclaims         int NOT NULL DEFAULT 0,             -- expired leases taken back by the sweep
    rerun_attempt    boolean NOT NULL DEFAULT false,
    scheduled_at     timestamptz NOT NULL DEFAULT cyclone.now(),  -- due from then (p_run_at, a backoff)
    started_at       timestamptz,
    timeout          interval,                           -- per execution; NULL: none
    -- The lease of a running step (SPEC 6): who holds it, until when, and the fencing token that complete,
    -- fail and renew must present; a new claim increments it, so a late report of an old lease is a no-op.
    lease_owner      text,
    lease_expiry     timestamptz,
    lease_generation bigint NOT NULL DEFAULT 0,
    heartbeat_at     timestamptz,
    signal           text,                               -- a wait node's signal name
    child_workflow   text,                               -- a child node's workflow
    max_wait         interval,                           -- a wait or child node's patience; NULL: forever
    wait_expires_at  timestamptz,                        -- when a waiting node runs out of it
    child_run_id     uuid,                               -- a child node's run, once started
    input            jsonb NOT NULL DEFAULT '{}',        -- a copy of the run's input
    output           jsonb,
    error            text,                               -- the latest error; every one is in cyclone_step_errors
    error_kind       text,
    contained        boolean NOT NULL DEFAULT false,
    finished_at      timestamptz,                        -- set iff the step is terminal
    -- Limits (SPEC 12; 11_limits_tables.sql): the step's buckets, fixed when its run is submitted.
    -- queue_bucket is where claim finds it while available, so a saturated bucket is skipped whole;
    -- fair_bucket is its round-robin group.
    buckets          bigint[] NOT NULL DEFAULT '{}',
    queue_bucket     bigint NOT NULL DEFAULT 0,
    fair_bucket      bigint NOT NULL DEFAULT 0,
    -- Written by fail() only, which checks it: no CHECK, since every update of this wide row would evaluate
    -- it. claim hands it to the next attempt, whose span links to it (SPEC 14). A retry the engine schedules
    -- itself (a timeout found by the sweep) clears it; a reclaim leaves it.
    failed_span      text,
    -- The run's workflow, written with the step (a run's workflow never changes), so that what is counted or
    -- paged by workflow (metrics(), cyclone_v_steps, the dead letters of one workflow) reads steps and their
    -- indexes alone, never a run row per step.
    workflow         text NOT NULL,
    -- Dynamic workflows (SPEC 16). snoozes: how often a handler handed the step back for later (snooze(),
    -- 45_snooze_progress.sql) without being charged an attempt. progress: the latest value a handler
    -- reported while it ran (progress()), and when; kept after the step ends, cleared by nothing.
    snoozes          int NOT NULL DEFAULT 0,
    progress         jsonb,
    progress_at      timestamptz,
    -- What a node decides when it is reached (SPEC 16; 22_advance.sql's _reach): "when" and "unless" (JSON
    -- objects the document {"input", "deps"} must contain, or not), "on_dep_skipped" ("run": a skipped
    -- dependency does not skip it), a sleep's "duration" (an interval's text) or "until" (a path to a
    -- timestamp). Copied from the definition at submit; NULL for a node with none of them.
    spec             jsonb,
    -- A map's items (SPEC 16): each a step of kind item with the map's node name, its position in the list
    -- from 0 and its element. NULL for every other step (step_item_iff_item).
    item_index       int,
    item             jsonb,
    -- What an event or await node waits on (SPEC 17), set when it is reached and kept after: the event key
    -- its template made, the run id its path named. NULL for every other step.
    event_key        text,
    awaited_run_id   uuid,
    -- A node's own step is one per run (item_index NULL: NULLS NOT DISTINCT), an item one per position.
    -- item_index second: a run's own steps (item_index IS NULL) are one range of this index however many
    -- items its maps have, so the advance and the dependency lookups never read the items.
    CONSTRAINT step_node_unique UNIQUE NULLS NOT DISTINCT (run_id, item_index, node),
    -- task: a handler runs it; wait: a signal; child: a run; sleep: the engine clock (SPEC 16); map: its items,
    -- each an item step a handler runs (SPEC 16); event: an emitted event of its key; await: the end of
    -- another run (SPEC 17). skipped is terminal: a condition that did not hold, or a skipped dependency.
    CONSTRAINT step_kind_valid CHECK (kind IN ('task', 'wait', 'child', 'sleep', 'map', 'item', 'event', 'await')),
    CONSTRAINT step_state_valid CHECK (state IN
        ('pending', 'available', 'running', 'waiting', 'completed', 'discarded', 'cancelled', 'skipped')),
    CONSTRAINT step_policy_valid CHECK (on_dep_failure IN ('fail_run', 'cancel_branch')),
    CONSTRAINT step_error_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout', 'permanent',
        'reclaim_limit', 'deadline', 'max_wait', 'child_failed', 'cancelled', 'bad_input', 'item_failed',
        'awaited_run_failed')),
    CONSTRAINT step_attempts_valid CHECK (max_attempts > 0 AND attempt >= 0 AND reclaims >= 0),
    CONSTRAINT step_lease_iff_running CHECK (
        (state = 'running') = (lease_owner IS NOT NULL AND lease_expiry IS NOT NULL)),
    CONSTRAINT step_finished_iff_terminal CHECK (
        (finished_at IS NOT NULL) = (state IN ('completed', 'discarded', 'cancelled', 'skipped'))),
    -- SPEC 3: every cancelled step says why; error_kind 'deadline' selects exactly the dead-lettered steps.
    CONSTRAINT step_cancelled_has_kind CHECK (
        state <> 'cancelled' OR (error_kind = 'cancelled' AND error IS NOT NULL)),
    CONSTRAINT step_discarded_has_kind CHECK (
        state <> 'discarded' OR (error_kind IS NOT NULL AND error_kind <> 'cancelled')),
    CONSTRAINT step_only_tasks_run CHECK (state NOT IN ('available', 'running') OR kind IN ('task', 'item')),
    CONSTRAINT step_only_waits_wait CHECK (
        state <> 'waiting' OR kind IN ('wait', 'child', 'sleep', 'map', 'event', 'await')),
    CONSTRAINT step_item_iff_item CHECK ((item_index IS NOT NULL) = (kind = 'item'))
) WITH (fillfactor = 80, autovacuum_vacuum_cost_delay = 0);
COMMENT ON TABLE cyclone.cyclone_steps IS 'One row per DAG node of a run; the state machine of SPEC sections 6-9.';
COMMENT ON COLUMN cyclone.cyclone_steps.rerun_attempt IS
    'Set by a reclaim: the next claim runs the same attempt number again instead of attempt + 1.';
COMMENT ON COLUMN cyclone.cyclone_steps.contained IS
    'A discard contained by cancel_branch dependents; it did not fail the run.';
COMMENT ON COLUMN cyclone.cyclone_steps.buckets IS 'The limit buckets the step takes a slot in (fixed at submit).';
COMMENT ON COLUMN cyclone.cyclone_steps.queue_bucket IS
    'The bucket whose queue holds the step while available (0: no limit); first keyed limit, else first limit.';
COMMENT ON COLUMN cyclone.cyclone_steps.fair_bucket IS
    'The round-robin group: the bucket of the first keyed limit, else 0.';
COMMENT ON COLUMN cyclone.cyclone_steps.failed_span IS
    'The span of the step''s last failed execution (a W3C traceparent), as fail() reported it; NULL = none.';
COMMENT ON COLUMN cyclone.cyclone_steps.workflow IS 'The workflow of the step''s run, written with the step.';
COMMENT ON COLUMN cyclone.cyclone_steps.snoozes IS 'How many times a handler snoozed the step (snooze()).';
COMMENT ON COLUMN cyclone.cyclone_steps.progress IS 'The latest progress a handler reported (progress()); NULL = none.';
COMMENT ON COLUMN cyclone.cyclone_steps.progress_at IS 'When progress was last reported.';
COMMENT ON COLUMN cyclone.cyclone_steps.item_index IS 'A map item''s position in its list, from 0 (SPEC 16); NULL for every other step.';
COMMENT ON COLUMN cyclone.cyclone_steps.item IS 'A map item''s element of its list (SPEC 16); NULL for every other step.';
COMMENT ON COLUMN cyclone.cyclone_steps.spec IS
    'What the node decides when reached (SPEC 16): when, unless, on_dep_skipped, a sleep''s duration or until; NULL = nothing.';
COMMENT ON COLUMN cyclone.cyclone_steps.event_key IS 'The key an event node waits on, made from its template when reached (SPEC 17).';
COMMENT ON COLUMN cyclone.cyclone_steps.awaited_run_id IS 'The run an await node waits on, read from its path when reached (SPEC 17).';

-- The hot paths read partial indexes, so finished steps never slow them.
--
-- The claim path: one queue per bucket. claim walks queue 0 (steps with no limit) in claim order, and the
-- queues of buckets with room in the order it serves them (_limited_candidates), so steps held back by a full
-- bucket are never read. Exactly one entry per available step.
CREATE INDEX cyclone_steps_claimable
    ON cyclone.cyclone_steps (queue_bucket, priority, scheduled_at, id) WHERE state = 'available';
-- Queue 0 of one workflow, in claim order (issue 32, claims at scale): the claim of a worker that serves one
-- workflow walks it instead of the whole of queue 0, so the other workflows' steps ahead of its own cost it
-- nothing (behind 100,000 of them a claim took 21 ms, or 170 ms when they shared its handler's name: each
-- one's run was probed). About 2% of the database's CPU a drained step (an entry for each step made
-- available). A worker of several workflows walks queue 0, as before.
CREATE INDEX cyclone_steps_claimable_workflow
    ON cyclone.cyclone_steps (workflow, priority, scheduled_at, id) WHERE state = 'available' AND queue_bucket = 0;
-- The priorities with an available step that takes a limit, each with its earliest scheduled_at (issue 32,
-- claims at scale): a claim walks the keyed queues one priority at a time, best first, among those with a
-- step due (a descent each), in the order it serves them, and stops once it has read as many as it asks for
-- (_limited_candidates, 24_claim.sql). Steps with no limit have no entry.
CREATE INDEX cyclone_steps_limited_priority
    ON cyclone.cyclone_steps (priority, scheduled_at) WHERE state = 'available' AND queue_bucket > 0;
-- Where claim's walk of queue 0 may start (issue 37). A claimed step's entry stays in the claim index until
-- VACUUM removes it, at the front of the claim order, where every claim's walk begins: between two visits of
-- autovacuum (a minute by default) a busy queue gathers hundreds of thousands of them, a thousand and more
-- index pages that each claim read (3 ms a claim of 10 at a held depth of 2,000), and under a held xmin
-- horizon each one costs a heap page besides. tick (_refresh_claim_floor, 24_claim.sql) keeps here, once a
-- second, a key (priority, scheduled_at, id) at or below every available step of queue 0 and at least a
-- second old; claim walks the priorities above it, then queue 0 from the key, and reads what lies between
-- only when those hold fewer due steps than it asks for. A hint, not a rule: release and sweep lower it to
-- a step they give back; a step that becomes available below it otherwise (submitted with a p_run_at in the
-- past, or by a transaction older than a second) is taken at once when nothing due lies past the key, else
-- after the next tick at the latest, which lowers the key to it; a key older than 10 seconds (no tick) is
-- not used. One row, for queue 0; UNLOGGED: after a crash it is empty, and claim
-- walks from the front until the next tick.
CREATE UNLOGGED TABLE cyclone.cyclone_claim_floor (
    queue_bucket int PRIMARY KEY,
    priority     int NOT NULL,
    scheduled_at timestamptz NOT NULL,
    id           bigint NOT NULL,
    set_at       timestamptz NOT NULL
);
COMMENT ON TABLE cyclone.cyclone_claim_floor IS
    'Where claim''s walk of queue 0 may start: a key at or below every available step, kept by tick (a hint).';
GRANT SELECT ON cyclone.cyclone_claim_floor TO cyclone_admin;
-- The sweep path. Keyed on id, not lease_expiry, so that a heartbeat changes no indexed column and its
-- update can stay HOT.
CREATE INDEX cyclone_steps_running ON cyclone.cyclone_steps (id) WHERE state = 'running';
-- A map's unfinished items (SPEC 16): the one probe that says whether an item that just ended was the last.
CREATE INDEX cyclone_steps_open_items
    ON cyclone.cyclone_steps (run_id, node) WHERE item_index IS NOT NULL AND finished_at IS NULL;
-- max_wait expiry (tick).
CREATE INDEX cyclone_steps_waiting ON cyclone.cyclone_steps (wait_expires_at) WHERE state = 'waiting';
-- The event nodes waiting on a key (emit_event) and the await nodes waiting on a run (its end) (SPEC 17).
CREATE INDEX cyclone_steps_waiting_event ON cyclone.cyclone_steps (event_key)
    WHERE state = 'waiting' AND event_key IS NOT NULL;
CREATE INDEX cyclone_steps_awaiting ON cyclone.cyclone_steps (awaited_run_id)
    WHERE state = 'waiting' AND awaited_run_id IS NOT NULL;
-- The child node waiting on a given child run.
CREATE INDEX cyclone_steps_child_run ON cyclone.cyclone_steps (child_run_id) WHERE child_run_id IS NOT NULL;
-- The unfinished steps that take a limit, for cyclone_v_limits and drop_limit: steps without a limit have no
-- entry.
CREATE INDEX cyclone_steps_limited_live
    ON cyclone.cyclone_steps (queue_bucket) WHERE buckets <> '{}' AND finished_at IS NULL;
-- Dead letters in the order they were discarded.
CREATE INDEX cyclone_steps_dlq ON cyclone.cyclone_steps (finished_at) WHERE state = 'discarded';
-- The dead-letter pages (the console, the client's dead_letters): newest first, all of them, of one error
-- kind or of one workflow, so that a keyset page (after a cursor (finished_at, id)) is one index range read of
-- its length, however many dead letters the other kinds and workflows have.
CREATE INDEX cyclone_steps_dlq_page ON cyclone.cyclone_steps (finished_at, id) WHERE state = 'discarded';
CREATE INDEX cyclone_steps_dlq_kind_page
    ON cyclone.cyclone_steps (error_kind, finished_at, id) WHERE state = 'discarded';
CREATE INDEX cyclone_steps_dlq_workflow_page
    ON cyclone.cyclone_steps (workflow, finished_at, id) WHERE state = 'discarded';
-- metrics(): pending steps by workflow and dead letters by workflow and kind, counted from the index alone. A
-- step enters either once (when it is created pending, when it is discarded), so their pages stay
-- all-visible and the counts read no heap. (Available, running and waiting steps have their indexes above.)
CREATE INDEX cyclone_steps_pending_workflow ON cyclone.cyclone_steps (workflow) WHERE state = 'pending';
CREATE INDEX cyclone_steps_dead_letters_workflow
    ON cyclone.cyclone_steps (workflow, error_kind) WHERE state = 'discarded';

GRANT SELECT ON cyclone.cyclone_steps TO cyclone_admin, cyclone_client;

-- Signals that arrived before their wait node was reached (SPEC 9): kept until the node is reached, then
-- consumed oldest first by the DAG advance (a signal for a node already waiting completes it and is not
-- kept). A run's unconsumed signals are deleted when it leaves the live table (archive, prune,
-- _complete_solo_runs): a finished run has nothing left to consume them. signal() checks the run under its
-- lock; there is no foreign key (hot_path_keys.sql), and check_invariants() reports a signal without its live
-- run (signal_without_run).
CREATE TABLE cyclone.cyclone_signals (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      uuid NOT NULL,
    name        text NOT NULL,
    payload     jsonb,
    received_at timestamptz NOT NULL DEFAULT cyclone.now()
);
-- The oldest signal of a name for a run.
CREATE INDEX cyclone_signals_run ON cyclone.cyclone_signals (run_id, name, id);
COMMENT ON TABLE cyclone.cyclone_signals IS 'Signals kept until their wait node is reached; consumed oldest first.';
GRANT SELECT ON cyclone.cyclone_signals TO cyclone_admin;

-- Every error a step was given, one row each: a failed execution that is retried (_fail_step, 26_fail.sql)
-- and every discard (_discard_steps, 21_runs.sql). A step's own error column keeps only the latest, and an
-- operator retry clears it; this keeps them all, until the run is pruned. Cancellations are not errors.
-- No foreign keys: the rows stay where they are when their run moves to history (a cascade would delete them
-- at archive); prune deletes them with the run.
CREATE TABLE cyclone.cyclone_step_errors (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id     uuid NOT NULL,
    step_id    bigint NOT NULL,
    node       text NOT NULL,
    attempt    int NOT NULL,
    error_kind text NOT NULL CONSTRAINT step_errors_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout',
        'permanent', 'reclaim_limit', 'deadline', 'max_wait', 'child_failed', 'bad_input', 'item_failed',
        'awaited_run_failed')),
    error      text NOT NULL,
    worker     text,
    discarded  boolean NOT NULL,
    at         timestamptz NOT NULL
);
-- A run's errors by step, oldest first (the client's step_errors, the console's run page), and prune's delete.
CREATE INDEX cyclone_step_errors_run ON cyclone.cyclone_step_errors (run_id, step_id, id);
-- One step's errors (the index of the foreign key to steps that history dropped).
CREATE INDEX cyclone_step_errors_step ON cyclone.cyclone_step_errors (step_id);
COMMENT ON TABLE cyclone.cyclone_step_errors IS
    'Every error a step was given: each retried failure and each discard, with the attempt and the worker.';
COMMENT ON COLUMN cyclone.cyclone_step_errors.worker IS
    'The lease owner when the error came (NULL: no lease, e.g. a waiting node).';
COMMENT ON COLUMN cyclone.cyclone_step_errors.discarded IS 'The error discarded the step (else it was retried).';
GRANT SELECT ON cyclone.cyclone_step_errors TO cyclone_client, cyclone_admin;

-- What operators did and why (SPEC 9): retry (retry_all writes one per step), cancel, pause, resume, rerun
-- (SPEC 17: on the new run, with the node it reran from and detail {"rerun_of": the original}), and every
-- signal delivered (node: the signal's name; detail {"payload_bytes": n}, the payload's size, never its
-- content), with the reason given. actor defaults to _actor() (04_audit.sql): the person a face names for the
-- transaction, via the session's role. No foreign key to the run: the rows stay when the run moves to history; prune deletes
-- them with the run. cyclone_v_audit (15_views.sql) is how clients read it.
CREATE TABLE cyclone.cyclone_audit (
    id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at     timestamptz NOT NULL DEFAULT cyclone.now(),
    run_id uuid NOT NULL,
    node   text,                         -- the step's node, for an action on one step (retry)
    action text NOT NULL
        CONSTRAINT audit_action_valid CHECK (action IN ('retry', 'cancel', 'pause', 'resume', 'rerun', 'signal')),
    reason text,
    actor  text NOT NULL DEFAULT cyclone._actor(),
    detail jsonb                         -- what else the action names (a signal's payload size, a rerun's original)
);
-- A run's trail in order (cyclone_v_audit on the console's run page), and prune's delete.
CREATE INDEX cyclone_audit_run ON cyclone.cyclone_audit (run_id, id);
COMMENT ON TABLE cyclone.cyclone_audit IS 'Operator actions on runs, with the reason given.';
GRANT SELECT ON cyclone.cyclone_audit TO cyclone_admin;

-- Idempotency keys (SPEC 5), unique per workflow over every kept run, live or archived: a table of their own
-- that rows never leave until prune (the live table's unique index would forget a key when its run moved to
-- history). _create_runs inserts the key with the run; _start_runs finds a used key's run here. A key used
-- again after its run was pruned makes a new run.
CREATE TABLE cyclone.cyclone_run_keys (
    workflow text NOT NULL,
    key      text NOT NULL,
    run_id   uuid NOT NULL,
    PRIMARY KEY (workflow, key)
);
COMMENT ON TABLE cyclone.cyclone_run_keys IS
    'Idempotency keys of every kept run, live or archived (SPEC 5): the key stays unique until prune.';
