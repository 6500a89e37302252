-- Verify cyclone_router:routing
BEGIN;
SELECT 'cyclone.submit(text, jsonb, interval, text, timestamptz, text, int)'::regprocedure,
       'cyclone.submit_many(text, jsonb[], interval, int)'::regprocedure,
       'cyclone.get_run(uuid)'::regprocedure,
       'cyclone.signal(uuid, text, jsonb)'::regprocedure,
       'cyclone.explain_step(bigint)'::regprocedure,
       'cyclone.retry(uuid, text, int, text)'::regprocedure,
       'cyclone.retry_all(uuid, text)'::regprocedure,
       'cyclone.cancel(uuid, text)'::regprocedure,
       'cyclone.pause(uuid)'::regprocedure,
       'cyclone.resume(uuid)'::regprocedure,
       'cyclone.list_steps(uuid)'::regprocedure,
       'cyclone.schedule(text, text, text, jsonb, text, text, interval, interval)'::regprocedure,
       'cyclone.unschedule(text)'::regprocedure,
       'cyclone.pause_schedule(text)'::regprocedure,
       'cyclone.resume_schedule(text)'::regprocedure,
       'cyclone.backfill(text, timestamptz, timestamptz)'::regprocedure,
       'cyclone.define_workflow(text, jsonb)'::regprocedure,
       'cyclone.define_limit(text, int, int, interval)'::regprocedure,
       'cyclone.drop_limit(text)'::regprocedure,
       'cyclone.next_fire(text, timestamptz, text)'::regprocedure;
ROLLBACK;
