-- Deploy cyclone:runs
-- requires: runs@v0.25.0 tables clock limits traces step_workflow shards history live_runs dynamic_columns dynamic_nodes map_items coordination_tables coordination
-- A complete copy of sql/engine/21_runs.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/21_runs.sql: change `runs` — a run's life below the DAG: the lock order,
-- creating runs with their steps, discarding steps, and ending a run with everything
-- still live in it. The DAG (22_advance.sql) decides when these happen; nothing here
-- reaches a step, applies a failure policy or tells a parent run. Internal: granted to
-- no role. Owns, helpers before their callers: _ancestors, _root_run, _lock_run,
-- _lock_existing_run (the locks); _bucket_of, _insert_steps, _create_runs (creating);
-- _cancel_steps, _end_run, _discard_steps (ending).
-- Requires: 10_runs_tables.sql (runs, steps, step errors, run keys), 11_limits_tables.sql
-- (cyclone_buckets), 13_history_tables.sql (cyclone_archive_queue), 14_shard_tables.sql
-- and 41_shards.sql (_new_run_id, _new_run_partition, _run_id_on), 02_clock.sql.
-- Calls up once: _end_run tells the runs awaiting the run it ends (_notify_awaiters,
-- 46_coordination.sql, SPEC 17).
-- Called by 22_advance.sql; _lock_run and _root_run by every function that locks runs
-- (complete, complete_many, fail, sweep, the deadlines, tick); _lock_existing_run by
-- the operator actions (29_operator.sql) and signal (30_signals.sql).
--
-- Lock order, everywhere: a run's ancestors first (root down), then the run row, then
-- its steps, then free slots and rate tokens, then limit bucket rows (cyclone_buckets),
-- by id. _lock_run takes the run locks; every transition that touches a run calls it
-- before it updates a step, and the DAG advance runs under it. A function that locks
-- several runs locks them in order of _root_run(), then run id. A child run ended with
-- its parent is locked after it (descendants after ancestors). Only claim locks free
-- slots, tokens and bucket rows on its way, all with SKIP LOCKED, so it never waits for
-- one (24_claim.sql); a step leaving running gives its slots back through a trigger
-- that locks a bucket row only to pay a lowered concurrency's debt (35_limits.sql), so
-- no release path waits for a claim.
-- These read and write the live tables only (ONLY): finished runs move to the history
-- day tables, inheritance children of cyclone_runs and cyclone_steps (43_history.sql),
-- where only _lock_run looks, for a run that is no longer live.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=runs NOTE="..."` (docs/architecture.md, Changing the engine).

-- The chain from a run up to its root: the run itself (depth 1), its parent
-- (depth 2), and so on. Live runs only: archive() keeps a run while its parent
-- or a child of it is live, so the chain of a live run is live.
CREATE OR REPLACE FUNCTION cyclone._ancestors(p_run_id uuid)
RETURNS TABLE(id uuid, parent uuid, depth integer)
LANGUAGE sql
STABLE
AS $$
    WITH RECURSIVE chain(id, parent, depth) AS (
        SELECT r.id, r.parent_run_id, 1 FROM ONLY cyclone.cyclone_runs r WHERE r.id = p_run_id
        UNION ALL
        SELECT r.id, r.parent_run_id, c.depth + 1 FROM ONLY cyclone.cyclone_runs r JOIN chain c ON r.id = c.parent)
    SELECT c.id, c.parent, c.depth FROM chain c
$$;
REVOKE ALL ON FUNCTION cyclone._ancestors(uuid) FROM PUBLIC;

-- The top ancestor of a run (the run itself when it has no parent). A function
-- that locks several runs in one transaction locks them in order of this root:
-- _lock_run takes a run's root first, so run-id order alone would let two
-- batches that cross parent and child runs wait for each other (40P01).
CREATE OR REPLACE FUNCTION cyclone._root_run(p_run_id uuid)
RETURNS uuid
LANGUAGE sql
STABLE
AS $$
    SELECT a.id FROM cyclone._ancestors(p_run_id) a WHERE a.parent IS NULL
$$;
REVOKE ALL ON FUNCTION cyclone._root_run(uuid) FROM PUBLIC;

-- Locks the run row (after its ancestors, root first) and returns it; NULL when
-- there is no such run. FOR NO KEY UPDATE is the lock an UPDATE of the run's
-- non-key columns takes, and does not block the KEY SHARE of a foreign-key check.
-- A run that is not in the live table is locked in its history day's table
-- (finished and archived, or archived while this waited for the live row), so
-- an action on it answers as on any finished run; no ancestor is locked for it
-- (the parent is looked up in the live table only). Calling it again for a run
-- the transaction has locked returns the row as it is now.
CREATE OR REPLACE FUNCTION cyclone._lock_run(p_run_id uuid)
RETURNS cyclone.cyclone_runs
LANGUAGE plpgsql
AS $$
DECLARE
    v_parent uuid;
    v_run cyclone.cyclone_runs;
BEGIN
    SELECT r.parent_run_id INTO v_parent FROM ONLY cyclone_runs r WHERE r.id = p_run_id;
    IF v_parent IS NOT NULL THEN
        PERFORM cyclone._lock_run(v_parent);
    END IF;
    SELECT r.* INTO v_run FROM ONLY cyclone_runs r WHERE r.id = p_run_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        -- Archived (finished), or archived while this waited for the live row:
        -- a new statement sees it in its day's table.
        SELECT r.* INTO v_run FROM cyclone_runs r WHERE r.id = p_run_id FOR NO KEY UPDATE;
    END IF;
    RETURN v_run;
END
$$;
REVOKE ALL ON FUNCTION cyclone._lock_run(uuid) FROM PUBLIC;

-- _lock_run for a function that names a run: 22004 for a NULL id, P0002 for a
-- run that does not exist (operator actions, signal).
CREATE OR REPLACE FUNCTION cyclone._lock_existing_run(p_function text, p_run_id uuid)
RETURNS cyclone.cyclone_runs
LANGUAGE plpgsql
AS $$
DECLARE
    v_run cyclone.cyclone_runs;
BEGIN
    IF p_run_id IS NULL THEN
        RAISE EXCEPTION '%: p_run_id must not be NULL', p_function USING ERRCODE = '22004';
    END IF;
    v_run := cyclone._lock_run(p_run_id);
    IF v_run.id IS NULL THEN
        RAISE EXCEPTION 'run % not found', p_run_id USING ERRCODE = 'P0002';
    END IF;
    RETURN v_run;
END
$$;
REVOKE ALL ON FUNCTION cyclone._lock_existing_run(text,uuid) FROM PUBLIC;

-- The bucket a run input names for a limit taken with p_key (a dot path into
-- the input): its text value; '' when missing, JSON null, or without a key.
CREATE OR REPLACE FUNCTION cyclone._bucket_of(p_input jsonb, p_key text)
RETURNS text
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT CASE WHEN p_key IS NULL THEN '' ELSE coalesce(p_input #>> string_to_array(p_key, '.'), '') END
$$;
REVOKE ALL ON FUNCTION cyclone._bucket_of(jsonb,text) FROM PUBLIC;

-- Inserts the steps of new runs of p_workflow (one input per run), each with the
-- workflow's name, so that counts and pages by workflow read steps alone: root
-- tasks available at p_scheduled_at, everything else pending (root wait, child and
-- sleep and map nodes, and root tasks with a condition, are _start_runs' to reach). A
-- node's SPEC 16 and 17 keys (when, unless, on_dep_skipped, duration, until, over,
-- max_items, on_item_failure; an event's key template, an await's run path) go into
-- its spec; a map node's limits give it buckets as a task's, which its items take
-- (_reach_map, 22_advance.sql). A task node's limits (SPEC 12) name its buckets
-- from the run input, fixed here: the bucket rows are created when new (no lock on
-- an existing one), and the step records their ids (buckets), its queue bucket (its
-- first keyed limit's, else its first limit's: the claim index's first column) and
-- its round-robin group (fair_bucket: its first keyed limit's, else 0). A definition
-- without limits takes the first, plainer INSERT.
-- Step ids are nextval * p_partition_count + p_partition: on a shard (41_shards.sql)
-- the id encodes its run's partition; elsewhere the count is 1 and the partition 0,
-- the ids the identity column would make from the same sequence. Each step's
-- priority is its node's plus the runs' p_priority (SPEC 16: the claim order sees
-- one number; -1,000,000..1,000,000 and -1000..1000 leave int far behind).
-- (0.21.0 added p_priority: the older signature is dropped, not left as an overload.)
DROP FUNCTION IF EXISTS cyclone._insert_steps(text,uuid[],jsonb[],jsonb,timestamp with time zone,integer,integer);
CREATE OR REPLACE FUNCTION cyclone._insert_steps(
    p_workflow text,
    p_run_ids uuid[],
    p_inputs jsonb[],
    p_definition jsonb,
    p_scheduled_at timestamp with time zone,
    p_partition_count integer,
    p_partition integer,
    p_priority integer)
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    -- PL/pgSQL, not SQL, so that the plan is cached: submit is a hot path too.
    IF NOT jsonb_path_exists(p_definition, '$.nodes[*].limits') THEN
        INSERT INTO cyclone_steps (id, run_id, workflow, node, handler, kind, state, deps, on_dep_failure, priority,
                                   max_attempts, timeout, signal, child_workflow, max_wait, input, scheduled_at, spec)
        OVERRIDING SYSTEM VALUE
        SELECT nextval('cyclone.cyclone_steps_id_seq') * p_partition_count + p_partition, r.id, p_workflow, n.name, n.handler, n.kind,
               CASE WHEN n.kind = 'task' AND cardinality(n.deps) = 0 AND n."when" IS NULL AND n.unless IS NULL
                    THEN 'available' ELSE 'pending' END,
               n.deps, n.on_dep_failure, n.priority + p_priority, n.max_attempts, n.timeout, n.signal, n.workflow,
               n.max_wait, r.input, p_scheduled_at,
               CASE WHEN n."when" IS NULL AND n.unless IS NULL AND n.on_dep_skipped IS NULL AND n.duration IS NULL
                     AND n.until IS NULL AND n.over IS NULL AND n.key IS NULL AND n.run IS NULL THEN NULL
                    ELSE jsonb_strip_nulls(jsonb_build_object('when', n."when", 'unless', n.unless,
                             'on_dep_skipped', n.on_dep_skipped, 'duration', n.duration, 'until', n.until,
                             'over', n.over, 'max_items', n.max_items, 'on_item_failure', n.on_item_failure,
                             'key', n.key, 'run', n.run)) END
          FROM unnest(p_run_ids, p_inputs) AS r(id, input)
         CROSS JOIN jsonb_to_recordset(p_definition -> 'nodes') AS n(
                   name text, handler text, kind text, deps text[], on_dep_failure text, priority int,
                   max_attempts int, timeout interval, signal text, workflow text, max_wait interval,
                   "when" jsonb, unless jsonb, on_dep_skipped text, duration text, until text,
                   over text, max_items int, on_item_failure text, key text, run text);
        RETURN;
    END IF;

    -- Bucket rows first, in a fixed order (two submits creating the same ones
    -- wait for each other, never in a circle). No lock on an existing row.
    INSERT INTO cyclone_buckets (limit_name, bucket)
    SELECT DISTINCT l.name, cyclone._bucket_of(r.input, l.key)
      FROM unnest(p_inputs) AS r(input)
     CROSS JOIN jsonb_array_elements(p_definition -> 'nodes') AS n(node)
     CROSS JOIN jsonb_to_recordset(n.node -> 'limits') AS l(name text, key text)
     ORDER BY 1, 2
    ON CONFLICT (limit_name, bucket) DO NOTHING;

    INSERT INTO cyclone_steps (id, run_id, workflow, node, handler, kind, state, deps, on_dep_failure, priority,
                               max_attempts, timeout, signal, child_workflow, max_wait, input, scheduled_at,
                               buckets, queue_bucket, fair_bucket, spec)
    OVERRIDING SYSTEM VALUE
    SELECT nextval('cyclone.cyclone_steps_id_seq') * p_partition_count + p_partition, r.id, p_workflow, n.name, n.handler, n.kind,
           CASE WHEN n.kind = 'task' AND cardinality(n.deps) = 0 AND n."when" IS NULL AND n.unless IS NULL
                THEN 'available' ELSE 'pending' END,
           n.deps, n.on_dep_failure, n.priority + p_priority, n.max_attempts, n.timeout, n.signal, n.workflow,
           n.max_wait, r.input, p_scheduled_at,
           coalesce(b.ids, '{}'), coalesce(b.keyed[1], b.ids[1], 0), coalesce(b.keyed[1], 0),
           CASE WHEN n."when" IS NULL AND n.unless IS NULL AND n.on_dep_skipped IS NULL AND n.duration IS NULL
                 AND n.until IS NULL AND n.over IS NULL AND n.key IS NULL AND n.run IS NULL THEN NULL
                ELSE jsonb_strip_nulls(jsonb_build_object('when', n."when", 'unless', n.unless,
                         'on_dep_skipped', n.on_dep_skipped, 'duration', n.duration, 'until', n.until,
                         'over', n.over, 'max_items', n.max_items, 'on_item_failure', n.on_item_failure,
                         'key', n.key, 'run', n.run)) END
      FROM unnest(p_run_ids, p_inputs) AS r(id, input)
     CROSS JOIN jsonb_to_recordset(p_definition -> 'nodes') AS n(
               name text, handler text, kind text, deps text[], on_dep_failure text, priority int,
               max_attempts int, timeout interval, signal text, workflow text, max_wait interval, limits jsonb,
               "when" jsonb, unless jsonb, on_dep_skipped text, duration text, until text,
                   over text, max_items int, on_item_failure text, key text, run text)
      LEFT JOIN LATERAL (
          SELECT array_agg(k.id ORDER BY l.ord) AS ids,
                 array_agg(k.id ORDER BY l.ord) FILTER (WHERE l.key IS NOT NULL) AS keyed
            FROM ROWS FROM (jsonb_to_recordset(n.limits) AS (name text, key text)) WITH ORDINALITY AS l(name, key, ord)
            JOIN cyclone_buckets k ON k.limit_name = l.name AND k.bucket = cyclone._bucket_of(r.input, l.key)
      ) b ON n.limits IS NOT NULL;
END
$$;
REVOKE ALL ON FUNCTION cyclone._insert_steps(text,uuid[],jsonb[],jsonb,timestamp with time zone,integer,integer,integer) FROM PUBLIC;

-- Creates one run per input (in input order) with its steps (_insert_steps): root
-- tasks available at p_run_at or now, the rest pending; a deadline only for a
-- positive p_deadline. Returns the new runs' ids; none when p_idempotency_key was
-- already used for the workflow. A key is given with one input and no parent
-- (submit, a schedule's slot). Root wait and child nodes are the caller's to reach.
-- Each run keeps p_traceparent (checked by the caller), except a child run, which
-- takes its parent's: the whole tree is one trace.
-- On a shard (a cyclone_shard row) the runs of one call go on one partition,
-- _new_run_partition's choice (a child run on its parent's, a run with a key on the
-- key's, any other on one of the shard's at random), with ids that encode it
-- (_run_id_on); without one, with ids in the order of time all the same
-- (_new_run_id, 41_shards.sql). A key is taken in cyclone_run_keys, which holds
-- the keys of live and archived runs, so a key stays used after its run moves to
-- history; a concurrent submit of the same key waits for this one's insert.
-- p_priority (SPEC 16, checked by the caller) is kept on each run and added to each
-- node's priority on its steps; a child run takes its parent's, as its traceparent.
-- p_debounce_key (SPEC 17) is kept on each run, for a later debounced submit to find
-- (_debounce, 46_coordination.sql). p_idempotency_window (SPEC 17): a used key dedupes
-- only against a run created within it; past it the key is taken over by the new run.
DROP FUNCTION IF EXISTS cyclone._create_runs(text,jsonb,jsonb[],interval,text,timestamp with time zone,uuid,bigint,text);
DROP FUNCTION IF EXISTS cyclone._create_runs(text,jsonb,jsonb[],interval,text,timestamp with time zone,uuid,bigint,text,integer);
CREATE OR REPLACE FUNCTION cyclone._create_runs(
    p_workflow text,
    p_definition jsonb,
    p_inputs jsonb[],
    p_deadline interval,
    p_idempotency_key text,
    p_run_at timestamp with time zone,
    p_parent_run_id uuid,
    p_parent_step_id bigint,
    p_traceparent text DEFAULT NULL::text,
    p_priority integer DEFAULT 0,
    p_debounce_key text DEFAULT NULL::text,
    p_idempotency_window interval DEFAULT NULL::interval)
RETURNS uuid[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_deadline timestamptz := CASE WHEN p_deadline > interval '0' THEN v_now + p_deadline END;
    v_ids uuid[];
    v_traceparent text := p_traceparent;
    v_priority int := p_priority;
    v_shard cyclone.cyclone_shard;
    v_partition int := 0;
BEGIN
    IF p_parent_run_id IS NOT NULL THEN
        SELECT r.traceparent, r.priority INTO v_traceparent, v_priority
          FROM ONLY cyclone_runs r WHERE r.id = p_parent_run_id;
    END IF;
    -- Ids are made first, so that they come back in input order. One input
    -- (submit, a child run) takes a plain expression: a query costs more.
    SELECT s.* INTO v_shard FROM cyclone_shard s;
    IF v_shard.one IS NULL THEN
        v_shard.partition_count := 1;
        IF cardinality(p_inputs) = 1 THEN
            v_ids := ARRAY[cyclone._new_run_id(v_now)];
        ELSE
            v_ids := ARRAY(SELECT cyclone._new_run_id(v_now) FROM generate_series(1, cardinality(p_inputs)));
        END IF;
    ELSE
        -- A shard: every run of the call on one partition (shards.sql).
        v_partition := cyclone._new_run_partition(v_shard, p_workflow, p_idempotency_key, p_parent_run_id);
        v_ids := ARRAY(SELECT cyclone._run_id_on(v_partition, v_now) FROM generate_series(1, cardinality(p_inputs)));
    END IF;
    IF p_idempotency_key IS NULL THEN
        -- No ON CONFLICT without a key: its speculative insertion costs every row.
        INSERT INTO cyclone_runs (id, workflow, input, created_at, started_at, deadline_at,
                                  parent_run_id, parent_step_id, traceparent, priority, debounce_key)
        SELECT r.id, p_workflow, r.input, v_now, v_now, v_deadline, p_parent_run_id, p_parent_step_id,
               v_traceparent, v_priority, p_debounce_key
          FROM unnest(v_ids, p_inputs) AS r(id, input);
    ELSE
        -- The key's row stays while the run is kept, archived or not (history.sql).
        INSERT INTO cyclone_run_keys (workflow, key, run_id) VALUES (p_workflow, p_idempotency_key, v_ids[1])
        ON CONFLICT (workflow, key) DO NOTHING;
        IF NOT FOUND THEN
            -- A dedupe window (SPEC 17): the key dedupes only against a run created within it; an older run's
            -- key names the new run from now on. Of two submits that find it expired at once, the second's
            -- UPDATE waits for the first and then finds the key naming a run inside the window: it dedupes.
            IF p_idempotency_window IS NULL THEN
                RETURN '{}'::uuid[];
            END IF;
            UPDATE cyclone_run_keys k SET run_id = v_ids[1]
             WHERE k.workflow = p_workflow AND k.key = p_idempotency_key
               AND (SELECT r.created_at FROM cyclone_runs r WHERE r.id = k.run_id) < v_now - p_idempotency_window;
            IF NOT FOUND THEN
                RETURN '{}'::uuid[];
            END IF;
        END IF;
        INSERT INTO cyclone_runs (id, workflow, input, created_at, started_at, deadline_at, idempotency_key,
                                  traceparent, priority, debounce_key)
        VALUES (v_ids[1], p_workflow, p_inputs[1], v_now, v_now, v_deadline, p_idempotency_key, v_traceparent,
                v_priority, p_debounce_key);
    END IF;
    PERFORM cyclone._insert_steps(p_workflow, v_ids, p_inputs, p_definition, coalesce(p_run_at, v_now),
                                  v_shard.partition_count, v_partition, v_priority);
    RETURN v_ids;
END
$$;
REVOKE ALL ON FUNCTION cyclone._create_runs(text,jsonb,jsonb[],interval,text,timestamp with time zone,uuid,bigint,text,integer,text,interval) FROM PUBLIC;

-- Cancels the given non-terminal steps of a run (all of them when p_step_ids is
-- NULL; a map's unfinished items with the map, SPEC 16), cancels the child runs of
-- waiting child nodes, and tells the workers
-- running any of them (NOTIFY cyclone_cancel, payload the run id). The caller
-- holds the run lock; the steps are locked here (FOR UPDATE), the child runs after
-- them, by _end_run.
CREATE OR REPLACE FUNCTION cyclone._cancel_steps(p_run_id uuid, p_step_ids bigint[], p_error text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_was_running boolean;
    v_children uuid[];
    v_child uuid;
BEGIN
    WITH victims AS (
        SELECT s.id, s.state AS old_state, s.child_run_id
          FROM ONLY cyclone_steps s
         WHERE s.run_id = p_run_id
           AND s.state IN ('pending', 'available', 'running', 'waiting')
           AND (p_step_ids IS NULL OR s.id = ANY (p_step_ids)
                -- A cancelled map's unfinished items go with it (SPEC 16).
                OR (s.item_index IS NOT NULL
                    AND EXISTS (SELECT 1 FROM ONLY cyclone_steps m
                                 WHERE m.id = ANY (p_step_ids) AND m.kind = 'map' AND m.node = s.node)))
           FOR UPDATE
    ), cancelled AS (
        UPDATE ONLY cyclone_steps s
           SET state = 'cancelled', error_kind = 'cancelled', error = p_error, finished_at = v_now,
               lease_owner = NULL, lease_expiry = NULL
          FROM victims v
         WHERE s.id = v.id
        RETURNING v.old_state, v.child_run_id
    )
    SELECT coalesce(bool_or(c.old_state = 'running'), false),
           array_agg(c.child_run_id ORDER BY c.child_run_id)
               FILTER (WHERE c.old_state = 'waiting' AND c.child_run_id IS NOT NULL)
      INTO v_was_running, v_children
      FROM cancelled c;
    IF v_was_running THEN
        PERFORM pg_notify('cyclone_cancel', p_run_id::text);
    END IF;
    FOREACH v_child IN ARRAY coalesce(v_children, '{}') LOOP
        PERFORM cyclone._end_run(v_child, 'cancelled', 'run cancelled');
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION cyclone._cancel_steps(uuid,bigint[],text) FROM PUBLIC;

-- Ends a live run as cancelled or failed (the caller holds its lock, or an
-- ancestor's): every non-terminal step is cancelled with p_error and the child
-- runs are cancelled. False (a no-op) on a terminal run. It does not tell the
-- parent run: a child run ended from below has a parent node still waiting on
-- it, and 22_advance.sql's _end_run_and_notify does that; a child run ended from
-- above (its node was just cancelled or discarded) has nobody left to tell.
-- Runs that await it (SPEC 17) are told here, whoever ended it (_notify_awaiters).
-- The transaction that ends a run queues it for archive() (cyclone_archive_queue):
-- the live table indexes no column that changes after submit, so that ending a run
-- is a HOT update, and archive() and prune() find finished runs in the queue.
CREATE OR REPLACE FUNCTION cyclone._end_run(p_run_id uuid, p_state text, p_error text)
RETURNS boolean
LANGUAGE plpgsql
AS $$
DECLARE
    v_finished_at timestamptz;
BEGIN
    UPDATE ONLY cyclone_runs
       SET state = p_state, finished_at = cyclone.now(), paused_at = NULL
     WHERE id = p_run_id AND state IN ('running', 'paused')
    RETURNING finished_at INTO v_finished_at;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO cyclone_archive_queue (run_id, finished_at) VALUES (p_run_id, v_finished_at);
    PERFORM cyclone._cancel_steps(p_run_id, NULL, p_error);
    -- The await nodes of other runs waiting on this one (SPEC 17): the one call from this file up into the
    -- DAG (46_coordination.sql), since every failed or cancelled run ends here.
    PERFORM cyclone._notify_awaiters(ARRAY[p_run_id]);
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION cyclone._end_run(uuid,text,text) FROM PUBLIC;

-- Discards the given steps, whatever their live state (the caller has locked
-- the run and chosen them): keeps the error in cyclone_step_errors (with the
-- worker that held the lease), announces each on channel cyclone_discard and
-- cancels the child run of a child node. Returns the discarded rows. The
-- failure policy is the caller's (22_advance.sql: _discard_step).
CREATE OR REPLACE FUNCTION cyclone._discard_steps(p_step_ids bigint[], p_error text, p_error_kind text)
RETURNS SETOF cyclone.cyclone_steps
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_step record;
BEGIN
    FOR v_step IN
        WITH old AS (
            SELECT s.id, s.lease_owner FROM ONLY cyclone_steps s WHERE s.id = ANY (p_step_ids) FOR UPDATE
        )
        UPDATE ONLY cyclone_steps s
           SET state = 'discarded', error = p_error, error_kind = p_error_kind, finished_at = v_now,
               lease_owner = NULL, lease_expiry = NULL
          FROM old
         WHERE s.id = old.id
        RETURNING s.*, old.lease_owner AS was_owner
    LOOP
        INSERT INTO cyclone_step_errors (run_id, step_id, node, attempt, error_kind, error, worker, discarded, at)
        VALUES (v_step.run_id, v_step.id, v_step.node, v_step.attempt, p_error_kind, p_error, v_step.was_owner,
                true, v_now);
        PERFORM pg_notify('cyclone_discard', json_build_object(
            'run_id', v_step.run_id, 'step_id', v_step.id, 'node', v_step.node,
            'error_kind', p_error_kind)::text);
        IF v_step.kind = 'child' AND v_step.child_run_id IS NOT NULL THEN
            PERFORM cyclone._end_run(v_step.child_run_id, 'cancelled', 'run cancelled');
        END IF;
        RETURN QUERY SELECT s.* FROM ONLY cyclone_steps s WHERE s.id = v_step.id;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION cyclone._discard_steps(bigint[],text,text) FROM PUBLIC;

COMMIT;
