-- @@ tables, raw from pg_dump
-- TYPE _claim_candidate
CREATE TYPE cyclone._claim_candidate AS (
	id bigint,
	buckets bigint[],
	fair_bucket bigint,
	priority integer,
	scheduled_at timestamp with time zone
);

-- TYPE cron_spec
CREATE TYPE cyclone.cron_spec AS (
	minutes integer[],
	hours integer[],
	days integer[],
	months integer[],
	weekdays integer[],
	any_day boolean,
	any_weekday boolean
);

-- TABLE cyclone_steps
CREATE TABLE cyclone.cyclone_steps (
    id bigint NOT NULL,
    run_id uuid NOT NULL,
    node text NOT NULL,
    handler text NOT NULL,
    kind text DEFAULT 'task'::text NOT NULL,
    state text DEFAULT 'pending'::text NOT NULL,
    deps text[] DEFAULT '{}'::text[] NOT NULL,
    on_dep_failure text DEFAULT 'fail_run'::text NOT NULL,
    priority integer DEFAULT 0 NOT NULL,
    attempt integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 25 NOT NULL,
    reclaims integer DEFAULT 0 NOT NULL,
    rerun_attempt boolean DEFAULT false NOT NULL,
    scheduled_at timestamp with time zone DEFAULT cyclone.now() NOT NULL,
    started_at timestamp with time zone,
    timeout interval,
    lease_owner text,
    lease_expiry timestamp with time zone,
    lease_generation bigint DEFAULT 0 NOT NULL,
    heartbeat_at timestamp with time zone,
    signal text,
    child_workflow text,
    max_wait interval,
    wait_expires_at timestamp with time zone,
    child_run_id uuid,
    input jsonb DEFAULT '{}'::jsonb NOT NULL,
    output jsonb,
    error text,
    error_kind text,
    contained boolean DEFAULT false NOT NULL,
    finished_at timestamp with time zone,
    buckets bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    queue_bucket bigint DEFAULT 0 NOT NULL,
    fair_bucket bigint DEFAULT 0 NOT NULL,
    failed_span text,
    workflow text NOT NULL,
    CONSTRAINT step_attempts_valid CHECK (((max_attempts > 0) AND (attempt >= 0) AND (reclaims >= 0))),
    CONSTRAINT step_cancelled_has_kind CHECK (((state <> 'cancelled'::text) OR ((error_kind = 'cancelled'::text) AND (error IS NOT NULL)))),
    CONSTRAINT step_discarded_has_kind CHECK (((state <> 'discarded'::text) OR ((error_kind IS NOT NULL) AND (error_kind <> 'cancelled'::text)))),
    CONSTRAINT step_error_kind_valid CHECK ((error_kind = ANY (ARRAY['error'::text, 'panic'::text, 'timeout'::text, 'permanent'::text, 'reclaim_limit'::text, 'deadline'::text, 'max_wait'::text, 'child_failed'::text, 'cancelled'::text]))),
    CONSTRAINT step_finished_iff_terminal CHECK (((finished_at IS NOT NULL) = (state = ANY (ARRAY['completed'::text, 'discarded'::text, 'cancelled'::text])))),
    CONSTRAINT step_kind_valid CHECK ((kind = ANY (ARRAY['task'::text, 'wait'::text, 'child'::text]))),
    CONSTRAINT step_lease_iff_running CHECK (((state = 'running'::text) = ((lease_owner IS NOT NULL) AND (lease_expiry IS NOT NULL)))),
    CONSTRAINT step_only_tasks_run CHECK (((state <> ALL (ARRAY['available'::text, 'running'::text])) OR (kind = 'task'::text))),
    CONSTRAINT step_only_waits_wait CHECK (((state <> 'waiting'::text) OR (kind = ANY (ARRAY['wait'::text, 'child'::text])))),
    CONSTRAINT step_policy_valid CHECK ((on_dep_failure = ANY (ARRAY['fail_run'::text, 'cancel_branch'::text]))),
    CONSTRAINT step_state_valid CHECK ((state = ANY (ARRAY['pending'::text, 'available'::text, 'running'::text, 'waiting'::text, 'completed'::text, 'discarded'::text, 'cancelled'::text])))
)
WITH (fillfactor='80');

-- COMMENT TABLE cyclone_steps
COMMENT ON TABLE cyclone.cyclone_steps IS 'One row per DAG node of a run; the state machine of SPEC sections 6-9.';

-- COMMENT COLUMN cyclone_steps.rerun_attempt
COMMENT ON COLUMN cyclone.cyclone_steps.rerun_attempt IS 'Set by a reclaim: the next claim runs the same attempt number again instead of attempt + 1.';

-- COMMENT COLUMN cyclone_steps.contained
COMMENT ON COLUMN cyclone.cyclone_steps.contained IS 'A discard contained by cancel_branch dependents; it did not fail the run.';

-- COMMENT COLUMN cyclone_steps.buckets
COMMENT ON COLUMN cyclone.cyclone_steps.buckets IS 'The limit buckets the step takes a slot in (fixed at submit).';

-- COMMENT COLUMN cyclone_steps.queue_bucket
COMMENT ON COLUMN cyclone.cyclone_steps.queue_bucket IS 'The bucket whose queue holds the step while available (0: no limit); first keyed limit, else first limit.';

-- COMMENT COLUMN cyclone_steps.fair_bucket
COMMENT ON COLUMN cyclone.cyclone_steps.fair_bucket IS 'The round-robin group: the bucket of the first keyed limit, else 0.';

-- COMMENT COLUMN cyclone_steps.failed_span
COMMENT ON COLUMN cyclone.cyclone_steps.failed_span IS 'The span of the step''s last failed execution (a W3C traceparent), as fail() reported it; NULL = none.';

-- COMMENT COLUMN cyclone_steps.workflow
COMMENT ON COLUMN cyclone.cyclone_steps.workflow IS 'The workflow of the step''s run, written with the step.';

-- TABLE cyclone_schedules
CREATE TABLE cyclone.cyclone_schedules (
    name text NOT NULL,
    cron text NOT NULL,
    timezone text NOT NULL,
    spec cyclone.cron_spec NOT NULL,
    workflow text NOT NULL,
    input jsonb DEFAULT '{}'::jsonb NOT NULL,
    overlap text DEFAULT 'skip'::text NOT NULL,
    catchup interval DEFAULT '01:00:00'::interval NOT NULL,
    deadline interval,
    paused boolean DEFAULT false NOT NULL,
    next_fire_at timestamp with time zone NOT NULL,
    last_slot timestamp with time zone,
    last_run_id uuid,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT schedule_catchup_not_negative CHECK ((catchup >= '00:00:00'::interval)),
    CONSTRAINT schedule_deadline_positive CHECK ((deadline > '00:00:00'::interval)),
    CONSTRAINT schedule_input_object CHECK ((jsonb_typeof(input) = 'object'::text)),
    CONSTRAINT schedule_overlap_valid CHECK ((overlap = ANY (ARRAY['skip'::text, 'allow'::text, 'cancel_other'::text])))
);

-- COMMENT TABLE cyclone_schedules
COMMENT ON TABLE cyclone.cyclone_schedules IS 'Schedules: a workflow submitted at each fire time of a cron (SPEC 13).';

-- COMMENT COLUMN cyclone_schedules.spec
COMMENT ON COLUMN cyclone.cyclone_schedules.spec IS 'The cron parsed once, at schedule().';

-- COMMENT COLUMN cyclone_schedules.next_fire_at
COMMENT ON COLUMN cyclone.cyclone_schedules.next_fire_at IS 'The next slot not yet handled; tick fires it when it is due and the schedule is not paused.';

-- COMMENT COLUMN cyclone_schedules.last_slot
COMMENT ON COLUMN cyclone.cyclone_schedules.last_slot IS 'The latest slot that got a run (tick or backfill).';

-- TABLE cyclone_history
CREATE TABLE cyclone.cyclone_history (
    day date NOT NULL,
    runs regclass NOT NULL,
    steps regclass NOT NULL
);

-- COMMENT TABLE cyclone_history
COMMENT ON TABLE cyclone.cyclone_history IS 'One row per UTC day of archived runs: the tables (children of cyclone_runs and cyclone_steps) that hold them.';

-- TABLE cyclone_runs
CREATE TABLE cyclone.cyclone_runs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    workflow text NOT NULL,
    state text DEFAULT 'running'::text NOT NULL,
    input jsonb DEFAULT '{}'::jsonb NOT NULL,
    output jsonb,
    created_at timestamp with time zone DEFAULT cyclone.now() NOT NULL,
    started_at timestamp with time zone DEFAULT cyclone.now() NOT NULL,
    finished_at timestamp with time zone,
    deadline_at timestamp with time zone,
    paused_at timestamp with time zone,
    parent_run_id uuid,
    parent_step_id bigint,
    idempotency_key text,
    traceparent text,
    CONSTRAINT run_finished_iff_terminal CHECK (((finished_at IS NOT NULL) = (state = ANY (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text])))),
    CONSTRAINT run_paused_at_iff_paused CHECK (((paused_at IS NOT NULL) = (state = 'paused'::text))),
    CONSTRAINT run_state_valid CHECK ((state = ANY (ARRAY['running'::text, 'paused'::text, 'completed'::text, 'failed'::text, 'cancelled'::text]))),
    CONSTRAINT run_traceparent_valid CHECK (((traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'::text) AND ("left"(traceparent, 2) <> 'ff'::text) AND (substr(traceparent, 4, 32) <> repeat('0'::text, 32)) AND (substr(traceparent, 37, 16) <> repeat('0'::text, 16))))
)
WITH (fillfactor='40');

-- COMMENT TABLE cyclone_runs
COMMENT ON TABLE cyclone.cyclone_runs IS 'One row per run of a workflow.';

-- COMMENT COLUMN cyclone_runs.traceparent
COMMENT ON COLUMN cyclone.cyclone_runs.traceparent IS 'The W3C trace context (traceparent) the run was submitted in, or its parent run''s; NULL = none.';

-- TABLE cyclone_shard
CREATE TABLE cyclone.cyclone_shard (
    one boolean DEFAULT true NOT NULL,
    name text NOT NULL,
    partition_count integer NOT NULL,
    partitions integer[] NOT NULL,
    configured_at timestamp with time zone DEFAULT cyclone.now() NOT NULL,
    CONSTRAINT shard_name_valid CHECK ((name ~ '^[a-z0-9_-]{1,63}$'::text)),
    CONSTRAINT shard_one_row CHECK (one),
    CONSTRAINT shard_partition_count_valid CHECK (partition_count BETWEEN 1 AND 1024 AND partition_count & (partition_count - 1) = 0),
    CONSTRAINT shard_partitions_valid CHECK (((cardinality(partitions) > 0) AND (0 <= ALL (partitions)) AND (partition_count > ALL (partitions))))
);

-- COMMENT TABLE cyclone_shard
COMMENT ON TABLE cyclone.cyclone_shard IS 'This database as a shard (SPEC 15): its name, the router''s partition count and the partitions it holds. No row: a database of its own (one partition).';

-- TABLE cyclone_archive_queue
CREATE TABLE cyclone.cyclone_archive_queue (
    run_id uuid NOT NULL,
    finished_at timestamp with time zone NOT NULL
);

-- COMMENT TABLE cyclone_archive_queue
COMMENT ON TABLE cyclone.cyclone_archive_queue IS 'The finished runs still in the live table cyclone_runs, with when they finished: what archive() moves next.';

-- TABLE cyclone_audit
CREATE TABLE cyclone.cyclone_audit (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT cyclone.now() NOT NULL,
    run_id uuid NOT NULL,
    node text,
    action text NOT NULL,
    reason text,
    actor text DEFAULT cyclone._actor() NOT NULL,
    CONSTRAINT audit_action_valid CHECK ((action = ANY (ARRAY['retry'::text, 'cancel'::text, 'pause'::text, 'resume'::text])))
);

-- COMMENT TABLE cyclone_audit
COMMENT ON TABLE cyclone.cyclone_audit IS 'Operator actions on runs, with the reason given.';

-- SEQUENCE cyclone_audit_id_seq
ALTER TABLE cyclone.cyclone_audit ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cyclone.cyclone_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- TABLE cyclone_bucket_claims
CREATE TABLE cyclone.cyclone_bucket_claims (
    bucket_id bigint NOT NULL,
    at timestamp with time zone NOT NULL,
    id bigint NOT NULL
);

-- COMMENT TABLE cyclone_bucket_claims
COMMENT ON TABLE cyclone.cyclone_bucket_claims IS 'Rate tokens: at most rate rows per bucket, each the time of its latest claim; one whose time has left the period is free.';

-- SEQUENCE cyclone_bucket_claims_id_seq
ALTER TABLE cyclone.cyclone_bucket_claims ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cyclone.cyclone_bucket_claims_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- TABLE cyclone_buckets
CREATE TABLE cyclone.cyclone_buckets (
    id bigint NOT NULL,
    limit_name text,
    bucket text NOT NULL,
    served bigint,
    debt integer DEFAULT 0 NOT NULL,
    held_back boolean DEFAULT false NOT NULL,
    rate_debt integer DEFAULT 0 NOT NULL,
    CONSTRAINT bucket_debt_not_negative CHECK ((debt >= 0)),
    CONSTRAINT bucket_rate_debt_not_negative CHECK ((rate_debt >= 0)),
    CONSTRAINT bucket_zero_is_the_unlimited_group CHECK (((id = 0) = (limit_name IS NULL)))
);

-- COMMENT TABLE cyclone_buckets
COMMENT ON TABLE cyclone.cyclone_buckets IS 'The buckets of limits (one per key value; '''' without a key). Row 0: the group of steps with no keyed limit.';

-- COMMENT COLUMN cyclone_buckets.debt
COMMENT ON COLUMN cyclone.cyclone_buckets.debt IS 'Held slots to drop, not free, when released: the running count above a lowered concurrency.';

-- COMMENT COLUMN cyclone_buckets.held_back
COMMENT ON COLUMN cyclone.cyclone_buckets.held_back IS 'A claim found the bucket full with steps queued: the next slot given back wakes idle workers.';

-- COMMENT COLUMN cyclone_buckets.rate_debt
COMMENT ON COLUMN cyclone.cyclone_buckets.rate_debt IS 'Rate tokens above a lowered rate, kept while their claims are in the window: a claim deletes this many as they leave it instead of using them.';

-- SEQUENCE cyclone_buckets_id_seq
ALTER TABLE cyclone.cyclone_buckets ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME cyclone.cyclone_buckets_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- TABLE cyclone_free_slots
CREATE TABLE cyclone.cyclone_free_slots (
    id bigint NOT NULL,
    bucket_id bigint NOT NULL
);

-- COMMENT TABLE cyclone_free_slots
COMMENT ON TABLE cyclone.cyclone_free_slots IS 'The concurrency slots of a bucket no step holds: one row each; a claim takes one into cyclone_slots.';

-- SEQUENCE cyclone_free_slots_id_seq
ALTER TABLE cyclone.cyclone_free_slots ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cyclone.cyclone_free_slots_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- TABLE cyclone_limits
CREATE TABLE cyclone.cyclone_limits (
    name text NOT NULL,
    concurrency integer,
    rate integer,
    period interval,
    updated_at timestamp with time zone DEFAULT cyclone.now() NOT NULL,
    CONSTRAINT limit_bounds_something CHECK (((concurrency IS NOT NULL) OR (rate IS NOT NULL))),
    CONSTRAINT limit_concurrency_positive CHECK ((concurrency > 0)),
    CONSTRAINT limit_rate_has_period CHECK (((rate IS NULL) = (period IS NULL))),
    CONSTRAINT limit_rate_positive CHECK (((rate > 0) AND (period > '00:00:00'::interval)))
);

-- COMMENT TABLE cyclone_limits
COMMENT ON TABLE cyclone.cyclone_limits IS 'Limits (SPEC 12): at most concurrency running steps per bucket, at most rate claims per bucket in any period.';

-- TABLE cyclone_run_keys
CREATE TABLE cyclone.cyclone_run_keys (
    workflow text NOT NULL,
    key text NOT NULL,
    run_id uuid NOT NULL
);

-- COMMENT TABLE cyclone_run_keys
COMMENT ON TABLE cyclone.cyclone_run_keys IS 'Idempotency keys of every kept run, live or archived (SPEC 5): the key stays unique until prune.';

-- TABLE cyclone_schedule_runs
CREATE TABLE cyclone.cyclone_schedule_runs (
    schedule text NOT NULL,
    slot timestamp with time zone NOT NULL,
    run_id uuid NOT NULL,
    open boolean DEFAULT true NOT NULL
);

-- COMMENT TABLE cyclone_schedule_runs
COMMENT ON TABLE cyclone.cyclone_schedule_runs IS 'The runs of each schedule, one per fired slot.';

-- SEQUENCE cyclone_serve_seq
CREATE SEQUENCE cyclone.cyclone_serve_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- TABLE cyclone_signals
CREATE TABLE cyclone.cyclone_signals (
    id bigint NOT NULL,
    run_id uuid NOT NULL,
    name text NOT NULL,
    payload jsonb,
    received_at timestamp with time zone DEFAULT cyclone.now() NOT NULL
);

-- COMMENT TABLE cyclone_signals
COMMENT ON TABLE cyclone.cyclone_signals IS 'Signals kept until their wait node is reached; consumed oldest first.';

-- SEQUENCE cyclone_signals_id_seq
ALTER TABLE cyclone.cyclone_signals ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cyclone.cyclone_signals_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- TABLE cyclone_slots
CREATE TABLE cyclone.cyclone_slots (
    bucket_id bigint NOT NULL,
    step_id bigint NOT NULL
);

-- COMMENT TABLE cyclone_slots
COMMENT ON TABLE cyclone.cyclone_slots IS 'The slots running steps hold: one row per running step and bucket.';

-- TABLE cyclone_step_errors
CREATE TABLE cyclone.cyclone_step_errors (
    id bigint NOT NULL,
    run_id uuid NOT NULL,
    step_id bigint NOT NULL,
    node text NOT NULL,
    attempt integer NOT NULL,
    error_kind text NOT NULL,
    error text NOT NULL,
    worker text,
    discarded boolean NOT NULL,
    at timestamp with time zone NOT NULL,
    CONSTRAINT step_errors_kind_valid CHECK ((error_kind = ANY (ARRAY['error'::text, 'panic'::text, 'timeout'::text, 'permanent'::text, 'reclaim_limit'::text, 'deadline'::text, 'max_wait'::text, 'child_failed'::text])))
);

-- COMMENT TABLE cyclone_step_errors
COMMENT ON TABLE cyclone.cyclone_step_errors IS 'Every error a step was given: each retried failure and each discard, with the attempt and the worker.';

-- COMMENT COLUMN cyclone_step_errors.worker
COMMENT ON COLUMN cyclone.cyclone_step_errors.worker IS 'The lease owner when the error came (NULL: no lease, e.g. a waiting node).';

-- COMMENT COLUMN cyclone_step_errors.discarded
COMMENT ON COLUMN cyclone.cyclone_step_errors.discarded IS 'The error discarded the step (else it was retried).';

-- SEQUENCE cyclone_step_errors_id_seq
ALTER TABLE cyclone.cyclone_step_errors ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cyclone.cyclone_step_errors_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- SEQUENCE cyclone_steps_id_seq
ALTER TABLE cyclone.cyclone_steps ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cyclone.cyclone_steps_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- TABLE cyclone_workflows
CREATE TABLE cyclone.cyclone_workflows (
    name text NOT NULL,
    definition jsonb NOT NULL,
    updated_at timestamp with time zone DEFAULT cyclone.now() NOT NULL,
    CONSTRAINT workflow_name_not_empty CHECK ((name <> ''::text))
);

-- COMMENT TABLE cyclone_workflows
COMMENT ON TABLE cyclone.cyclone_workflows IS 'Registered workflow definitions, normalised by define_workflow().';

-- TABLE cyclone_waiting_workers
CREATE UNLOGGED TABLE cyclone.cyclone_waiting_workers (
    worker text NOT NULL,
    until timestamp with time zone NOT NULL
);

-- COMMENT TABLE cyclone_waiting_workers
COMMENT ON TABLE cyclone.cyclone_waiting_workers IS 'Workers whose last claim came back short, until its lease TTL ends: a wake-up is sent only while one is here.';

-- CONSTRAINT cyclone_buckets bucket_unique
ALTER TABLE ONLY cyclone.cyclone_buckets
    ADD CONSTRAINT bucket_unique UNIQUE (limit_name, bucket);

-- CONSTRAINT cyclone_audit cyclone_audit_pkey
ALTER TABLE ONLY cyclone.cyclone_audit
    ADD CONSTRAINT cyclone_audit_pkey PRIMARY KEY (id);

-- CONSTRAINT cyclone_bucket_claims cyclone_bucket_claims_pkey
ALTER TABLE ONLY cyclone.cyclone_bucket_claims
    ADD CONSTRAINT cyclone_bucket_claims_pkey PRIMARY KEY (id);

-- CONSTRAINT cyclone_buckets cyclone_buckets_pkey
ALTER TABLE ONLY cyclone.cyclone_buckets
    ADD CONSTRAINT cyclone_buckets_pkey PRIMARY KEY (id);

-- CONSTRAINT cyclone_free_slots cyclone_free_slots_pkey
ALTER TABLE ONLY cyclone.cyclone_free_slots
    ADD CONSTRAINT cyclone_free_slots_pkey PRIMARY KEY (id);

-- CONSTRAINT cyclone_history cyclone_history_pkey
ALTER TABLE ONLY cyclone.cyclone_history
    ADD CONSTRAINT cyclone_history_pkey PRIMARY KEY (day);

-- CONSTRAINT cyclone_history cyclone_history_runs_key
ALTER TABLE ONLY cyclone.cyclone_history
    ADD CONSTRAINT cyclone_history_runs_key UNIQUE (runs);

-- CONSTRAINT cyclone_history cyclone_history_steps_key
ALTER TABLE ONLY cyclone.cyclone_history
    ADD CONSTRAINT cyclone_history_steps_key UNIQUE (steps);

-- CONSTRAINT cyclone_limits cyclone_limits_pkey
ALTER TABLE ONLY cyclone.cyclone_limits
    ADD CONSTRAINT cyclone_limits_pkey PRIMARY KEY (name);

-- CONSTRAINT cyclone_run_keys cyclone_run_keys_pkey
ALTER TABLE ONLY cyclone.cyclone_run_keys
    ADD CONSTRAINT cyclone_run_keys_pkey PRIMARY KEY (workflow, key);

-- CONSTRAINT cyclone_runs cyclone_runs_pkey
ALTER TABLE ONLY cyclone.cyclone_runs
    ADD CONSTRAINT cyclone_runs_pkey PRIMARY KEY (id);

-- CONSTRAINT cyclone_schedule_runs cyclone_schedule_runs_pkey
ALTER TABLE ONLY cyclone.cyclone_schedule_runs
    ADD CONSTRAINT cyclone_schedule_runs_pkey PRIMARY KEY (schedule, slot);

-- CONSTRAINT cyclone_schedules cyclone_schedules_pkey
ALTER TABLE ONLY cyclone.cyclone_schedules
    ADD CONSTRAINT cyclone_schedules_pkey PRIMARY KEY (name);

-- CONSTRAINT cyclone_shard cyclone_shard_pkey
ALTER TABLE ONLY cyclone.cyclone_shard
    ADD CONSTRAINT cyclone_shard_pkey PRIMARY KEY (one);

-- CONSTRAINT cyclone_signals cyclone_signals_pkey
ALTER TABLE ONLY cyclone.cyclone_signals
    ADD CONSTRAINT cyclone_signals_pkey PRIMARY KEY (id);

-- CONSTRAINT cyclone_slots cyclone_slots_pkey
ALTER TABLE ONLY cyclone.cyclone_slots
    ADD CONSTRAINT cyclone_slots_pkey PRIMARY KEY (bucket_id, step_id);

-- CONSTRAINT cyclone_step_errors cyclone_step_errors_pkey
ALTER TABLE ONLY cyclone.cyclone_step_errors
    ADD CONSTRAINT cyclone_step_errors_pkey PRIMARY KEY (id);

-- CONSTRAINT cyclone_steps cyclone_steps_pkey
ALTER TABLE ONLY cyclone.cyclone_steps
    ADD CONSTRAINT cyclone_steps_pkey PRIMARY KEY (id);

-- CONSTRAINT cyclone_waiting_workers cyclone_waiting_workers_pkey
ALTER TABLE ONLY cyclone.cyclone_waiting_workers
    ADD CONSTRAINT cyclone_waiting_workers_pkey PRIMARY KEY (worker);

-- CONSTRAINT cyclone_workflows cyclone_workflows_pkey
ALTER TABLE ONLY cyclone.cyclone_workflows
    ADD CONSTRAINT cyclone_workflows_pkey PRIMARY KEY (name);

-- CONSTRAINT cyclone_steps step_node_unique
ALTER TABLE ONLY cyclone.cyclone_steps
    ADD CONSTRAINT step_node_unique UNIQUE (run_id, node);

-- INDEX cyclone_audit_run
CREATE INDEX cyclone_audit_run ON cyclone.cyclone_audit USING btree (run_id, id);

-- INDEX cyclone_bucket_claims_window
CREATE INDEX cyclone_bucket_claims_window ON cyclone.cyclone_bucket_claims USING btree (bucket_id, at);

-- INDEX cyclone_free_slots_bucket
CREATE INDEX cyclone_free_slots_bucket ON cyclone.cyclone_free_slots USING btree (bucket_id, id);

-- INDEX cyclone_runs_created
CREATE INDEX cyclone_runs_created ON cyclone.cyclone_runs USING btree (created_at, id);

-- INDEX cyclone_runs_deadline
CREATE INDEX cyclone_runs_deadline ON cyclone.cyclone_runs USING btree (deadline_at) WHERE (deadline_at IS NOT NULL);

-- INDEX cyclone_runs_key
CREATE INDEX cyclone_runs_key ON cyclone.cyclone_runs USING btree (idempotency_key) WHERE (idempotency_key IS NOT NULL);

-- INDEX cyclone_runs_parent
CREATE INDEX cyclone_runs_parent ON cyclone.cyclone_runs USING btree (parent_run_id) WHERE (parent_run_id IS NOT NULL);

-- INDEX cyclone_runs_workflow_created
CREATE INDEX cyclone_runs_workflow_created ON cyclone.cyclone_runs USING btree (workflow, created_at, id);

-- INDEX cyclone_schedule_runs_open
CREATE INDEX cyclone_schedule_runs_open ON cyclone.cyclone_schedule_runs USING btree (schedule) WHERE open;

-- INDEX cyclone_schedule_runs_run
CREATE INDEX cyclone_schedule_runs_run ON cyclone.cyclone_schedule_runs USING btree (run_id);

-- INDEX cyclone_schedules_due
CREATE INDEX cyclone_schedules_due ON cyclone.cyclone_schedules USING btree (next_fire_at) WHERE (NOT paused);

-- INDEX cyclone_signals_run
CREATE INDEX cyclone_signals_run ON cyclone.cyclone_signals USING btree (run_id, name, id);

-- INDEX cyclone_slots_step
CREATE INDEX cyclone_slots_step ON cyclone.cyclone_slots USING btree (step_id);

-- INDEX cyclone_step_errors_run
CREATE INDEX cyclone_step_errors_run ON cyclone.cyclone_step_errors USING btree (run_id, step_id, id);

-- INDEX cyclone_step_errors_step
CREATE INDEX cyclone_step_errors_step ON cyclone.cyclone_step_errors USING btree (step_id);

-- INDEX cyclone_steps_child_run
CREATE INDEX cyclone_steps_child_run ON cyclone.cyclone_steps USING btree (child_run_id) WHERE (child_run_id IS NOT NULL);

-- INDEX cyclone_steps_claimable
CREATE INDEX cyclone_steps_claimable ON cyclone.cyclone_steps USING btree (queue_bucket, priority, scheduled_at, id) WHERE (state = 'available'::text);

-- INDEX cyclone_steps_dead_letters_workflow
CREATE INDEX cyclone_steps_dead_letters_workflow ON cyclone.cyclone_steps USING btree (workflow, error_kind) WHERE (state = 'discarded'::text);

-- INDEX cyclone_steps_dlq
CREATE INDEX cyclone_steps_dlq ON cyclone.cyclone_steps USING btree (finished_at) WHERE (state = 'discarded'::text);

-- INDEX cyclone_steps_dlq_kind_page
CREATE INDEX cyclone_steps_dlq_kind_page ON cyclone.cyclone_steps USING btree (error_kind, finished_at, id) WHERE (state = 'discarded'::text);

-- INDEX cyclone_steps_dlq_page
CREATE INDEX cyclone_steps_dlq_page ON cyclone.cyclone_steps USING btree (finished_at, id) WHERE (state = 'discarded'::text);

-- INDEX cyclone_steps_dlq_workflow_page
CREATE INDEX cyclone_steps_dlq_workflow_page ON cyclone.cyclone_steps USING btree (workflow, finished_at, id) WHERE (state = 'discarded'::text);

-- INDEX cyclone_steps_limited_live
CREATE INDEX cyclone_steps_limited_live ON cyclone.cyclone_steps USING btree (queue_bucket) WHERE ((buckets <> '{}'::bigint[]) AND (finished_at IS NULL));

-- INDEX cyclone_steps_pending_workflow
CREATE INDEX cyclone_steps_pending_workflow ON cyclone.cyclone_steps USING btree (workflow) WHERE (state = 'pending'::text);

-- INDEX cyclone_steps_running
CREATE INDEX cyclone_steps_running ON cyclone.cyclone_steps USING btree (id) WHERE (state = 'running'::text);

-- INDEX cyclone_steps_waiting
CREATE INDEX cyclone_steps_waiting ON cyclone.cyclone_steps USING btree (wait_expires_at) WHERE (state = 'waiting'::text);

-- INDEX cyclone_waiting_workers_until
CREATE INDEX cyclone_waiting_workers_until ON cyclone.cyclone_waiting_workers USING btree (until);

-- FK CONSTRAINT cyclone_bucket_claims cyclone_bucket_claims_bucket_id_fkey
ALTER TABLE ONLY cyclone.cyclone_bucket_claims
    ADD CONSTRAINT cyclone_bucket_claims_bucket_id_fkey FOREIGN KEY (bucket_id) REFERENCES cyclone.cyclone_buckets(id) ON DELETE CASCADE;

-- FK CONSTRAINT cyclone_buckets cyclone_buckets_limit_name_fkey
ALTER TABLE ONLY cyclone.cyclone_buckets
    ADD CONSTRAINT cyclone_buckets_limit_name_fkey FOREIGN KEY (limit_name) REFERENCES cyclone.cyclone_limits(name) ON DELETE CASCADE;

-- FK CONSTRAINT cyclone_runs cyclone_runs_workflow_fkey
ALTER TABLE ONLY cyclone.cyclone_runs
    ADD CONSTRAINT cyclone_runs_workflow_fkey FOREIGN KEY (workflow) REFERENCES cyclone.cyclone_workflows(name);

-- FK CONSTRAINT cyclone_schedule_runs cyclone_schedule_runs_schedule_fkey
ALTER TABLE ONLY cyclone.cyclone_schedule_runs
    ADD CONSTRAINT cyclone_schedule_runs_schedule_fkey FOREIGN KEY (schedule) REFERENCES cyclone.cyclone_schedules(name) ON DELETE CASCADE;

-- FK CONSTRAINT cyclone_schedules cyclone_schedules_workflow_fkey
ALTER TABLE ONLY cyclone.cyclone_schedules
    ADD CONSTRAINT cyclone_schedules_workflow_fkey FOREIGN KEY (workflow) REFERENCES cyclone.cyclone_workflows(name);

-- FK CONSTRAINT cyclone_signals cyclone_signals_run_id_fkey
ALTER TABLE ONLY cyclone.cyclone_signals
    ADD CONSTRAINT cyclone_signals_run_id_fkey FOREIGN KEY (run_id) REFERENCES cyclone.cyclone_runs(id) ON DELETE CASCADE;

-- FK CONSTRAINT cyclone_steps cyclone_steps_run_id_fkey
ALTER TABLE ONLY cyclone.cyclone_steps
    ADD CONSTRAINT cyclone_steps_run_id_fkey FOREIGN KEY (run_id) REFERENCES cyclone.cyclone_runs(id) ON DELETE CASCADE;

-- ACL TABLE cyclone_steps
GRANT SELECT ON TABLE cyclone.cyclone_steps TO cyclone_admin;
GRANT SELECT ON TABLE cyclone.cyclone_steps TO cyclone_client;

-- ACL TABLE cyclone_schedules
GRANT SELECT ON TABLE cyclone.cyclone_schedules TO cyclone_admin;

-- ACL TABLE cyclone_history
GRANT SELECT ON TABLE cyclone.cyclone_history TO cyclone_admin;

-- ACL TABLE cyclone_runs
GRANT SELECT ON TABLE cyclone.cyclone_runs TO cyclone_admin;
GRANT SELECT ON TABLE cyclone.cyclone_runs TO cyclone_client;

-- ACL TABLE cyclone_shard
GRANT SELECT ON TABLE cyclone.cyclone_shard TO cyclone_admin;

-- ACL TABLE cyclone_audit
GRANT SELECT ON TABLE cyclone.cyclone_audit TO cyclone_admin;

-- ACL TABLE cyclone_bucket_claims
GRANT SELECT ON TABLE cyclone.cyclone_bucket_claims TO cyclone_admin;

-- ACL TABLE cyclone_buckets
GRANT SELECT ON TABLE cyclone.cyclone_buckets TO cyclone_admin;

-- ACL TABLE cyclone_free_slots
GRANT SELECT ON TABLE cyclone.cyclone_free_slots TO cyclone_admin;

-- ACL TABLE cyclone_limits
GRANT SELECT ON TABLE cyclone.cyclone_limits TO cyclone_admin;

-- ACL TABLE cyclone_schedule_runs
GRANT SELECT ON TABLE cyclone.cyclone_schedule_runs TO cyclone_admin;

-- ACL TABLE cyclone_signals
GRANT SELECT ON TABLE cyclone.cyclone_signals TO cyclone_admin;

-- ACL TABLE cyclone_slots
GRANT SELECT ON TABLE cyclone.cyclone_slots TO cyclone_admin;

-- ACL TABLE cyclone_step_errors
GRANT SELECT ON TABLE cyclone.cyclone_step_errors TO cyclone_client;
GRANT SELECT ON TABLE cyclone.cyclone_step_errors TO cyclone_admin;

-- ACL TABLE cyclone_workflows
GRANT SELECT ON TABLE cyclone.cyclone_workflows TO cyclone_admin;

-- ACL TABLE cyclone_waiting_workers
GRANT SELECT ON TABLE cyclone.cyclone_waiting_workers TO cyclone_admin;


--
--

