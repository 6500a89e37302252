-- Only error, panic, timeout and permanent may be reported by a worker; the
-- engine's own kinds (reclaim_limit, deadline, ...) and unknown ones raise 22023.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.one_step('one', 5) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset

SELECT throws_ok(format('SELECT cyclone.fail(%s, %L, %s, %L, %L)', :step_id, 'w1', :gen, 'boom', 'oops'),
                 '22023', NULL, 'an unknown error kind raises 22023');
SELECT throws_ok(format('SELECT cyclone.fail(%s, %L, %s, %L, %L)', :step_id, 'w1', :gen, 'boom', 'reclaim_limit'),
                 '22023', NULL, 'reclaim_limit is not for workers: 22023');
SELECT throws_ok(format('SELECT cyclone.fail(%s, %L, %s, %L, %L)', :step_id, 'w1', :gen, 'boom', 'deadline'),
                 '22023', NULL, 'deadline is not for workers: 22023');
SELECT throws_ok(format('SELECT cyclone.fail(%s, %L, %s, %L, %L)', :step_id, 'w1', :gen, 'boom', 'cancelled'),
                 '22023', NULL, 'cancelled is not for workers: 22023');
SELECT throws_ok(format('SELECT cyclone.fail(%s, %L, %s, %L, %L)', :step_id, 'w1', :gen, 'boom', 'ERROR'),
                 '22023', NULL, 'kinds are case-sensitive: 22023');
SELECT throws_ok(format('SELECT cyclone.fail(%s, %L, %s, %L, %L, %L)', :step_id, 'w1', :gen, 'boom', 'error', '-1 second'),
                 '22023', NULL, 'a negative p_retry_in raises 22023');
SELECT throws_ok(format('SELECT cyclone.fail(%s, %L, %s, NULL)', :step_id, 'w1', :gen),
                 '22004', NULL, 'a NULL error text raises 22004');
SELECT throws_ok(format('SELECT cyclone.fail(%s, NULL, %s, %L)', :step_id, :gen, 'boom'),
                 '22004', NULL, 'a NULL worker raises 22004');
SELECT ok(cyclone_test.state(:'run') = 'running' AND (cyclone_test.step(:'run')).error IS NULL,
          'the step is still running, with no error recorded');

SELECT * FROM finish();
ROLLBACK;
