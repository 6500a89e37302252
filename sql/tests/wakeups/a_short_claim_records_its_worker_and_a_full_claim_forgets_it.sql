-- wakeups.sql: a claim that comes back with fewer steps than asked records its
-- worker as waiting until its lease TTL ends, written again only once half of
-- it has passed; a full claim forgets the worker; rows expired for an hour go.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.travel_to('2030-01-07 10:00+00');
SELECT cyclone_test.one_step('work');

SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 5, '30 seconds')), 0, 'an empty queue: nothing claimed');
SELECT is((SELECT until FROM cyclone.cyclone_waiting_workers WHERE worker = 'w1'),
          cyclone.now() + interval '30 seconds', 'w1 waits until its lease TTL ends');

SELECT cyclone.advance_time('10 seconds');
SELECT cyclone.claim('w1', NULL, 5, '30 seconds');
SELECT is((SELECT until FROM cyclone.cyclone_waiting_workers WHERE worker = 'w1'),
          timestamptz '2030-01-07 10:00:30+00', 'a third of the TTL later: not written again');
SELECT cyclone.advance_time('6 seconds');
SELECT cyclone.claim('w1', NULL, 5, '30 seconds');
SELECT is((SELECT until FROM cyclone.cyclone_waiting_workers WHERE worker = 'w1'),
          cyclone.now() + interval '30 seconds', 'past half of it: renewed');

SELECT cyclone.submit('work') FROM generate_series(1, 3);
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 2, '30 seconds')), 2, 'a full claim');
SELECT ok(NOT EXISTS (SELECT 1 FROM cyclone.cyclone_waiting_workers WHERE worker = 'w1'), 'forgets w1');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 2, '30 seconds')), 1, 'a short claim, one of two');
SELECT cyclone.advance_time('50 minutes');
SELECT cyclone.claim('gone', ARRAY['nothing'], 1, '1 second');
SELECT cyclone.advance_time('20 minutes');
SELECT cyclone.claim('w2', ARRAY['nothing'], 1, '30 seconds');
SELECT is(ARRAY(SELECT worker FROM cyclone.cyclone_waiting_workers ORDER BY worker), ARRAY['gone', 'w2'],
          'the next registration removes w1, expired for over an hour, and keeps gone, expired 20 minutes ago');

SELECT * FROM finish();
ROLLBACK;
