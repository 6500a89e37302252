-- prune(older_than, limit) deletes at most limit runs a call, those that
-- finished first, so that a backlog goes in short transactions; called again
-- it takes the next batch, and returns 0 when the backlog is gone.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one', 1) AS wf \gset
CREATE TEMP TABLE finished (n int, run_id uuid);
DO $$
BEGIN
    FOR i IN 1..5 LOOP
        INSERT INTO finished VALUES (i, cyclone.submit('one'));
        PERFORM cyclone.cancel((SELECT run_id FROM finished WHERE n = i));
        PERFORM cyclone.advance_time('1 minute');
    END LOOP;
END $$;
SELECT cyclone.advance_time('1 day') \gset

SELECT is(cyclone.prune('1 hour', 2), 2, 'limit 2: two runs deleted');
SELECT is((SELECT array_agg(n ORDER BY n) FROM finished f
            WHERE EXISTS (SELECT 1 FROM cyclone.cyclone_runs r WHERE r.id = f.run_id)),
          ARRAY[3, 4, 5], 'the two that finished first');
SELECT is(cyclone.prune('1 hour', 2), 2, 'the next call takes the next two');
SELECT is(cyclone.prune('1 hour', 2), 1, 'then the last one');
SELECT is(cyclone.prune('1 hour', 2), 0, 'then nothing');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps), 0, 'no step is left behind');

SELECT * FROM finish();
ROLLBACK;
