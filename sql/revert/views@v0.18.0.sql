-- Revert cyclone:views to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE VIEW cyclone.cyclone_v_workflows AS
 SELECT w.name,
    w.definition,
    w.updated_at
   FROM cyclone.cyclone_workflows w;
COMMENT ON VIEW cyclone.cyclone_v_workflows IS 'Registered workflows with their normalised definitions.';

CREATE OR REPLACE VIEW cyclone.cyclone_v_runs AS
 SELECT r.id,
    r.workflow,
    r.state,
    r.input,
    r.output,
    r.created_at,
    r.started_at,
    r.finished_at,
    r.deadline_at,
    r.paused_at,
    r.parent_run_id,
    r.parent_step_id,
    r.idempotency_key
   FROM cyclone.cyclone_runs r;
COMMENT ON VIEW cyclone.cyclone_v_runs IS 'Runs. The error of a failed run is on its steps (see get_run).';

CREATE OR REPLACE VIEW cyclone.cyclone_v_steps AS
 SELECT s.id,
    s.run_id,
    s.workflow,
    s.node,
    s.handler,
    s.kind,
    s.state,
    s.attempt,
    s.max_attempts,
    s.reclaims,
    s.error,
    s.error_kind,
    s.scheduled_at,
    s.started_at,
    s.finished_at AS completed_at,
    s.deps,
    s.on_dep_failure,
    s.priority,
    s.timeout,
    s.lease_owner,
    s.lease_expiry,
    s.lease_generation,
    s.heartbeat_at,
    s.signal,
    s.max_wait,
    s.wait_expires_at,
    s.child_run_id,
    s.input,
    s.output
   FROM cyclone.cyclone_steps s;
COMMENT ON VIEW cyclone.cyclone_v_steps IS 'Steps with their run''s workflow; completed_at is set for every terminal state.';

CREATE OR REPLACE VIEW cyclone.cyclone_v_dlq AS
 SELECT cyclone_v_steps.id,
    cyclone_v_steps.run_id,
    cyclone_v_steps.workflow,
    cyclone_v_steps.node,
    cyclone_v_steps.handler,
    cyclone_v_steps.kind,
    cyclone_v_steps.state,
    cyclone_v_steps.attempt,
    cyclone_v_steps.max_attempts,
    cyclone_v_steps.reclaims,
    cyclone_v_steps.error,
    cyclone_v_steps.error_kind,
    cyclone_v_steps.scheduled_at,
    cyclone_v_steps.started_at,
    cyclone_v_steps.completed_at,
    cyclone_v_steps.deps,
    cyclone_v_steps.on_dep_failure,
    cyclone_v_steps.priority,
    cyclone_v_steps.timeout,
    cyclone_v_steps.lease_owner,
    cyclone_v_steps.lease_expiry,
    cyclone_v_steps.lease_generation,
    cyclone_v_steps.heartbeat_at,
    cyclone_v_steps.signal,
    cyclone_v_steps.max_wait,
    cyclone_v_steps.wait_expires_at,
    cyclone_v_steps.child_run_id,
    cyclone_v_steps.input,
    cyclone_v_steps.output
   FROM cyclone.cyclone_v_steps
  WHERE (cyclone_v_steps.state = 'discarded'::text);
COMMENT ON VIEW cyclone.cyclone_v_dlq IS 'The dead-letter queue: discarded steps, with their run''s workflow.';

CREATE OR REPLACE VIEW cyclone.cyclone_v_limits AS
 WITH live AS (
         SELECT b.id AS bucket_id,
            count(*) FILTER (WHERE ((s.state = 'available'::text) AND (s.scheduled_at <= cyclone.now()))) AS available
           FROM (cyclone.cyclone_steps s
             CROSS JOIN LATERAL unnest(s.buckets) b(id))
          WHERE ((s.buckets <> '{}'::bigint[]) AND (s.finished_at IS NULL))
          GROUP BY b.id
        )
 SELECT l.name,
    k.bucket,
    l.concurrency,
    (( SELECT count(*) AS count
           FROM cyclone.cyclone_slots x
          WHERE (x.bucket_id = k.id)))::integer AS running,
    l.rate,
    l.period,
        CASE
            WHEN (l.rate IS NOT NULL) THEN (( SELECT count(*) AS count
               FROM cyclone.cyclone_bucket_claims c
              WHERE ((c.bucket_id = k.id) AND (c.at > (cyclone.now() - l.period)))))::integer
            ELSE NULL::integer
        END AS claims_in_period,
    (COALESCE(v.available, (0)::bigint))::integer AS available
   FROM ((cyclone.cyclone_limits l
     JOIN cyclone.cyclone_buckets k ON ((k.limit_name = l.name)))
     LEFT JOIN live v ON ((v.bucket_id = k.id)))
  WHERE ((k.bucket = ''::text) OR (v.bucket_id IS NOT NULL) OR ((l.rate IS NOT NULL) AND (EXISTS ( SELECT 1
           FROM cyclone.cyclone_bucket_claims c
          WHERE ((c.bucket_id = k.id) AND (c.at > (cyclone.now() - l.period)))))))
UNION ALL
 SELECT l.name,
    ''::text AS bucket,
    l.concurrency,
    0 AS running,
    l.rate,
    l.period,
        CASE
            WHEN (l.rate IS NOT NULL) THEN 0
            ELSE NULL::integer
        END AS claims_in_period,
    0 AS available
   FROM cyclone.cyclone_limits l
  WHERE (NOT (EXISTS ( SELECT 1
           FROM cyclone.cyclone_buckets k
          WHERE ((k.limit_name = l.name) AND (k.bucket = ''::text)))));
COMMENT ON VIEW cyclone.cyclone_v_limits IS 'One row per limit and bucket with an unfinished step or a claim in the current period, plus the bucket '''' of every limit: running, claims_in_period and due available steps.';

CREATE OR REPLACE VIEW cyclone.cyclone_v_audit AS
 SELECT a.id,
    a.at,
    a.run_id,
    a.node,
    a.action,
    a.reason,
    a.actor
   FROM cyclone.cyclone_audit a;
COMMENT ON VIEW cyclone.cyclone_v_audit IS 'Operator actions on runs: what, when, why and who (actor).';

CREATE OR REPLACE VIEW cyclone.cyclone_v_schedules AS
 SELECT cyclone_schedules.name,
    cyclone_schedules.cron,
    cyclone_schedules.timezone,
    cyclone_schedules.workflow,
    cyclone_schedules.overlap,
    cyclone_schedules.catchup,
    cyclone_schedules.paused,
    cyclone_schedules.next_fire_at,
    cyclone_schedules.last_slot,
    cyclone_schedules.last_run_id
   FROM cyclone.cyclone_schedules;
COMMENT ON VIEW cyclone.cyclone_v_schedules IS 'Schedules with their next slot and the latest slot that got a run (SPEC 13).';

COMMIT;
