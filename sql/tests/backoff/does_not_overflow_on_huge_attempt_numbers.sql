-- A step with a huge max_attempts must not make the backoff overflow: the
-- delay stays capped at [30 min, 1 hour].
BEGIN;
SELECT plan(6);

SELECT lives_ok($$SELECT cyclone.backoff(2147483647)$$, 'backoff(max int) does not raise');
SELECT lives_ok($$SELECT cyclone.backoff(1025)$$, 'backoff(1025) (2^1024 s would overflow a double) does not raise');
SELECT ok((SELECT bool_and(cyclone.backoff(2147483647) BETWEEN interval '30 minutes' AND interval '1 hour')
             FROM generate_series(1, 200)),
          'backoff(max int) lies in [30 min, 1 hour]');
SELECT ok((SELECT bool_and(cyclone.backoff(1025) BETWEEN interval '30 minutes' AND interval '1 hour')
             FROM generate_series(1, 200)),
          'backoff(1025) lies in [30 min, 1 hour]');
SELECT ok((SELECT bool_and(cyclone.backoff(64) BETWEEN interval '30 minutes' AND interval '1 hour')
             FROM generate_series(1, 200)),
          'backoff(64) (2^63 s) lies in [30 min, 1 hour]');
SELECT ok((SELECT count(DISTINCT cyclone.backoff(2147483647)) > 1 FROM generate_series(1, 200)),
          'backoff(max int) still jitters');

SELECT * FROM finish();
ROLLBACK;
