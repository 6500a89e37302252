-- Named CHECKs on cyclone_steps: only SPEC's step states and error kinds are storable.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one');
CREATE TEMP TABLE t AS SELECT cyclone.submit('one') AS run_id;
CREATE TEMP TABLE s AS SELECT id FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM t);

SELECT throws_ok(
    format($$UPDATE cyclone.cyclone_steps SET state = 'failed' WHERE id = %s$$, (SELECT id FROM s)),
    '23514', NULL, 'a step cannot be in state "failed"');
SELECT throws_ok(
    format($$UPDATE cyclone.cyclone_steps SET error_kind = 'oops', error = 'x' WHERE id = %s$$, (SELECT id FROM s)),
    '23514', NULL, 'error_kind "oops" is rejected');
SELECT lives_ok(
    format($$UPDATE cyclone.cyclone_steps SET error_kind = 'panic', error = 'x' WHERE id = %s$$, (SELECT id FROM s)),
    'error_kind "panic" is accepted');
SELECT throws_ok(
    format($$UPDATE cyclone.cyclone_steps SET kind = 'cron' WHERE id = %s$$, (SELECT id FROM s)),
    '23514', NULL, 'a step cannot be of kind "cron"');
SELECT throws_ok(
    format($$UPDATE cyclone.cyclone_steps SET state = 'discarded', finished_at = cyclone.now(),
             error_kind = 'cancelled', error = 'x' WHERE id = %s$$, (SELECT id FROM s)),
    '23514', NULL, 'a discarded step cannot carry error kind "cancelled"');

SELECT * FROM finish();
ROLLBACK;
