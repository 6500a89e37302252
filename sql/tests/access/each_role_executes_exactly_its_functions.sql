-- SPEC section 10: cyclone_worker runs the worker protocol (claim, renew, renew_many, release, snooze, progress, complete,
-- complete_many, fail, tick, register_worker, deregister_worker, define_workflow, and the limits: define_limit,
-- drop_limit); cyclone_client submits and reads (submit, submit_many, get_run,
-- signal, explain_step) and coordinates (emit_event, signal_with_start: SPEC 17); operator actions
-- (rerun among them) and the clock are cyclone_admin's
-- only. next_fire (SPEC 13) and version() are for every role; the schedule functions for
-- cyclone_worker (an app registers its schedules) and cyclone_admin; metrics
-- (SPEC 14), the listings (SPEC 15) and the console overview's reads for cyclone_client and cyclone_admin;
-- configuring a shard and the partition helpers for cyclone_admin.
BEGIN;
SELECT plan(162);

CREATE TEMP TABLE expected (fn text, worker boolean, client boolean, admin boolean);
INSERT INTO expected VALUES
    ('cyclone.claim(text, text[], int, interval, text[])',         true,  false, true),
    ('cyclone.renew(bigint, text, bigint, interval)',              true,  false, true),
    ('cyclone.renew_many(text, bigint[], bigint[], interval)',     true,  false, true),
    ('cyclone.release(bigint, text, bigint)',                      true,  false, true),
    ('cyclone.snooze(bigint, text, bigint, interval)',             true,  false, true),
    ('cyclone.progress(bigint, text, bigint, jsonb)',              true,  false, true),
    ('cyclone.complete(bigint, text, bigint, jsonb)',              true,  false, true),
    ('cyclone.complete_many(text, bigint[], bigint[], jsonb[])',   true,  false, true),
    ('cyclone.fail(bigint, text, bigint, text, text, interval, text)', true, false, true),
    ('cyclone.tick(int)',                                          true,  false, true),
    ('cyclone.register_worker(text, jsonb)',                       true,  false, true),
    ('cyclone.deregister_worker(text)',                            true,  false, true),
    ('cyclone.define_workflow(text, jsonb)',                       true,  false, true),
    ('cyclone.submit(text, jsonb, interval, text, timestamptz, text, int, text, interval, interval, interval)', false, true, true),
    ('cyclone.submit_many(text, jsonb[], interval, int)',          false, true,  true),
    ('cyclone.get_run(uuid)',                                      false, true,  true),
    ('cyclone.signal(uuid, text, jsonb)',                          false, true,  true),
    ('cyclone.emit_event(text, jsonb)',                            false, true,  true),
    ('cyclone.signal_with_start(text, text, text, jsonb, jsonb)',  false, true,  true),
    ('cyclone.rerun(uuid, text, text)',                            false, false, true),
    ('cyclone.retry(uuid, text, int, text)',                       false, false, true),
    ('cyclone.retry_all(uuid, text)',                              false, false, true),
    ('cyclone.cancel(uuid, text)',                                 false, false, true),
    ('cyclone.pause(uuid)',                                        false, false, true),
    ('cyclone.resume(uuid)',                                       false, false, true),
    ('cyclone.sweep(int, int)',                                    false, false, true),
    ('cyclone.enforce_deadlines(int)',                             false, false, true),
    ('cyclone.advance_time(interval)',                             false, false, true),
    ('cyclone.reset_time()',                                       false, false, true),
    ('cyclone.prune(interval, int)',                               false, false, true),
    ('cyclone.schedule_tick(text, int)',                           false, false, true),
    ('cyclone.next_fire(text, timestamptz, text)',                 true,  true,  true),
    ('cyclone.version()',                                          true,  true,  true),
    ('cyclone.schedule(text, text, text, jsonb, text, text, interval, interval)', true, false, true),
    ('cyclone.unschedule(text)',                                   true,  false, true),
    ('cyclone.pause_schedule(text)',                               true,  false, true),
    ('cyclone.resume_schedule(text)',                              true,  false, true),
    ('cyclone.backfill(text, timestamptz, timestamptz)',           true,  false, true),
    ('cyclone.metrics()',                                          false, true,  true),
    ('cyclone.define_limit(text, int, int, interval)',             true,  false, true),
    ('cyclone.drop_limit(text)',                                   true,  false, true),
    ('cyclone.explain_step(bigint)',                               false, true,  true),
    ('cyclone.check_invariants()',                                 false, false, true),
    ('cyclone.list_runs(text, text, int, timestamptz)',            false, true,  true),
    ('cyclone.list_steps(uuid)',                                   false, true,  true),
    ('cyclone.list_dead_letters(text, text, int)',                 false, true,  true),
    ('cyclone.overview_gauges(int)',                               false, true,  true),
    ('cyclone.finished_per_minute(timestamptz, timestamptz)',      false, true,  true),
    ('cyclone.finished_runs(timestamptz, timestamptz, text, text, int, timestamptz, uuid)', false, true, true),
    ('cyclone.configure_shard(text, int, int[])',                  false, false, true),
    ('cyclone.run_partition(uuid)',                                false, false, true),
    ('cyclone.step_partition(bigint)',                             false, false, true),
    ('cyclone.key_partition(text, text)',                          false, false, true),
    ('cyclone.schedule_partition(text)',                           false, false, true);

SELECT is(has_function_privilege('cyclone_worker', fn, 'EXECUTE'), worker,
          format('cyclone_worker %s execute %s', CASE WHEN worker THEN 'can' ELSE 'cannot' END, fn))
  FROM expected ORDER BY fn;
SELECT is(has_function_privilege('cyclone_client', fn, 'EXECUTE'), client,
          format('cyclone_client %s execute %s', CASE WHEN client THEN 'can' ELSE 'cannot' END, fn))
  FROM expected ORDER BY fn;
SELECT is(has_function_privilege('cyclone_admin', fn, 'EXECUTE'), admin,
          format('cyclone_admin %s execute %s', CASE WHEN admin THEN 'can' ELSE 'cannot' END, fn))
  FROM expected ORDER BY fn;

SELECT * FROM finish();
ROLLBACK;
