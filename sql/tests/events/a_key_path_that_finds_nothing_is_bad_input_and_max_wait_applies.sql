-- SPEC 17: a key template whose path finds nothing (or JSON null) discards the event node as bad_input (its
-- failure policy applies); max_wait applies to a waiting event node as to a wait node.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('ev_bad', '[{"name": "paid", "kind": "event", "key": "pay:{input.order.id}"}]');
SELECT cyclone.submit('ev_bad', '{"order": {"id": null}}') AS r1 \gset
SELECT is(cyclone_test.state(:'r1', 'paid'), 'discarded', 'a path that finds JSON null: discarded');
SELECT is((cyclone_test.step(:'r1', 'paid')).error_kind, 'bad_input', 'as bad_input');
SELECT is(cyclone_test.run_state(:'r1'), 'failed', 'the failure policy applies (fail_run)');

SELECT cyclone_test.define('ev_wait', '[{"name": "paid", "kind": "event", "key": "k", "max_wait": "1 hour"}]');
SELECT cyclone.submit('ev_wait') AS r2 \gset
SELECT cyclone.advance_time('61 minutes');
SELECT is((cyclone.tick() ->> 'max_wait')::int, 1, 'tick expires it past max_wait');
SELECT is((cyclone_test.step(:'r2', 'paid')).error_kind, 'max_wait', 'discarded as max_wait');
SELECT is(cyclone.emit_event('k'), 0, 'a later event completes nothing');

SELECT * FROM finish();
ROLLBACK;
