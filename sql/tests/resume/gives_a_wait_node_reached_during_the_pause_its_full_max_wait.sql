-- A wait node reached while the run is paused (an in-flight step completed) has
-- spent none of its max_wait when the run resumes: it gets exactly max_wait from
-- the resume, not more.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('rm', '[{"name": "a"},
                                   {"name": "w", "kind": "wait", "deps": ["a"], "max_wait": "1 hour"}]') \gset
SELECT cyclone.submit('rm') AS run \gset
SELECT step_id AS a_id, lease_generation AS a_gen FROM cyclone_test.claim_node(:'run', 'a', 'w1', '2 hours') \gset
SELECT cyclone.pause(:'run') \gset
SELECT cyclone.advance_time('30 minutes') \gset
SELECT is(cyclone.complete(:a_id, 'w1', :a_gen), true, 'a completes during the pause');
SELECT is(cyclone_test.state(:'run', 'w'), 'waiting', 'w is reached during the pause');

SELECT cyclone.advance_time('30 minutes') \gset
SELECT cyclone.resume(:'run') \gset
SELECT is((cyclone_test.step(:'run', 'w')).wait_expires_at, cyclone.now() + interval '1 hour',
          'w expires a full max_wait after the resume');

SELECT cyclone.advance_time('1 hour' - interval '1 second') \gset
SELECT is((cyclone.tick())->>'max_wait', '0', 'one second before: still waiting');
SELECT cyclone.advance_time('2 seconds') \gset
SELECT is((cyclone.tick())->>'max_wait', '1', 'one second after: expired');
SELECT is(cyclone_test.state(:'run', 'w'), 'discarded', 'w is discarded');

SELECT * FROM finish();
ROLLBACK;
