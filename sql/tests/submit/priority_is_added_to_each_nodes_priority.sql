-- SPEC 16: submit's p_priority (after p_traceparent, default 0) is kept on the run, and every step of the
-- run is claimed with its node's priority plus the run's (smaller first); a child run takes its parent's.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('prio', '[{"name": "a", "priority": 5}, {"name": "b", "deps": ["a"]}]');
SELECT cyclone.submit('prio') AS plain \gset
SELECT cyclone.submit('prio', '{}', NULL, NULL, NULL, NULL, -20) AS urgent \gset
SELECT cyclone.submit('prio', p_priority => 7) AS lazy \gset

SELECT is((SELECT priority FROM cyclone.cyclone_v_runs WHERE id = :'urgent'), -20, 'the run keeps its priority');
SELECT is((SELECT priority FROM cyclone.cyclone_v_runs WHERE id = :'plain'), 0, 'the default is 0');
SELECT is((cyclone_test.step(:'urgent', 'a')).priority, -15, 'a step''s priority is its node''s plus its run''s');
SELECT is((cyclone_test.step(:'lazy', 'b')).priority, 7, 'for every node of the run');
SELECT results_eq(
    $$SELECT run_id FROM cyclone.claim('w1', NULL, 3)$$,
    ARRAY[:'urgent'::uuid, :'plain'::uuid, :'lazy'::uuid],
    'claim takes the smaller sum first');

-- A child run takes its parent's priority.
SELECT cyclone_test.define('kid', '[{"name": "work", "priority": 1}]');
SELECT cyclone_test.define('parent', '[{"name": "spawn", "kind": "child", "workflow": "kid"}]');
SELECT cyclone.submit('parent', p_priority => 100) AS p \gset
SELECT (cyclone_test.step(:'p', 'spawn')).child_run_id AS kid \gset
SELECT is((SELECT priority FROM cyclone.cyclone_runs WHERE id = :'kid'), 100, 'a child run takes its parent''s priority');
SELECT is((cyclone_test.step(:'kid', 'work')).priority, 101, 'and adds it to its own nodes''');

SELECT * FROM finish();
ROLLBACK;
