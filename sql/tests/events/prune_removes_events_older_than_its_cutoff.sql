-- SPEC 17: an event is kept until prune removes events older than its cutoff.
BEGIN;
SELECT plan(2);

DELETE FROM cyclone.cyclone_events;
SELECT cyclone.emit_event('old', '1');
SELECT cyclone.advance_time('2 days');
SELECT cyclone.emit_event('new', '2');
SELECT cyclone.prune('1 day');
SELECT is(ARRAY(SELECT key FROM cyclone.cyclone_v_events ORDER BY key), ARRAY['new'],
          'prune removed the event emitted before its cutoff, kept the newer one');
SELECT cyclone.prune('0 seconds');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_events), 1, 'an event emitted at the cutoff itself stays');

SELECT * FROM finish();
ROLLBACK;
