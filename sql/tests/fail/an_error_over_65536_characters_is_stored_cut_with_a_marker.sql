-- Issue 30, finding 6: fail stored a 100 MB error whole (on the step, in its error history, as the run's
-- error). An error longer than 65,536 characters is now stored cut, not refused: its first and last
-- 32,000 characters around a marker line saying how many were cut, everywhere it is kept. One of 65,536
-- characters is kept whole.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('one', 5);
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset

-- 200,000 characters: a head, a body, and the traceback's last line.
CREATE TEMP TABLE e AS SELECT 'ValueError: bad order' || repeat('x', 199960) || 'File "h.py", line 9' AS error;
SELECT is(cyclone.fail(:step_id, 'w1', :gen, (SELECT error FROM e), 'error', interval '0'), 'available',
          'a 200,000-character error is accepted: the step is retried');
SELECT cmp_ok(char_length((cyclone_test.step(:'run')).error), '<=', 65536, 'the step keeps at most 65,536 characters');
SELECT ok((cyclone_test.step(:'run')).error LIKE 'ValueError: bad order%File "h.py", line 9',
          'its start and its end');
SELECT ok(strpos((cyclone_test.step(:'run')).error, '[... 136000 characters cut:') > 0,
          'and a marker saying how many characters were cut');
SELECT is((SELECT error FROM cyclone.cyclone_step_errors WHERE step_id = :step_id),
          (cyclone_test.step(:'run')).error, 'the error history keeps the same cut text');

-- The last attempt: a permanent failure discards the step and fails the run.
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT is(cyclone.fail(:step_id, 'w1', :gen, (SELECT error FROM e), 'permanent'), 'discarded', 'a permanent one discards');
SELECT is((SELECT error FROM cyclone.get_run(:'run')), (cyclone_test.step(:'run')).error,
          'the run''s error is the same cut text');

SELECT cyclone.submit('one') AS run2 \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run2') \gset
SELECT cyclone.fail(:step_id, 'w1', :gen, repeat('y', 65536), 'permanent');
SELECT is((cyclone_test.step(:'run2')).error, repeat('y', 65536), '65,536 characters are kept whole');

SELECT * FROM finish();
ROLLBACK;
