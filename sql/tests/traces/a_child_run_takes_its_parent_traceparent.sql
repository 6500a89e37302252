-- A child run is created with its parent's traceparent, so that the whole tree
-- of runs is one trace; a parent without one gives its children none.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('kid') \gset
SELECT cyclone_test.define('mid', '[{"name": "c", "kind": "child", "workflow": "kid"}]') \gset
SELECT cyclone_test.define('mom', '[{"name": "a"},
                                    {"name": "c", "kind": "child", "workflow": "mid", "deps": ["a"]}]') \gset
SELECT cyclone.submit('mom', '{}', NULL, NULL, NULL,
                      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01') AS run \gset
SELECT cyclone_test.run_node(:'run', 'a') \gset

SELECT (SELECT id FROM cyclone.cyclone_runs WHERE parent_run_id = :'run') AS child \gset
SELECT is((SELECT traceparent FROM cyclone.cyclone_runs WHERE id = :'child'),
          '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'the child run has the parent''s traceparent');
SELECT is((SELECT traceparent FROM cyclone.cyclone_runs WHERE parent_run_id = :'child'),
          '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'and so does its own child (a root child node)');

SELECT cyclone.submit('mom') AS plain \gset
SELECT cyclone_test.run_node(:'plain', 'a') \gset
SELECT is((SELECT traceparent FROM cyclone.cyclone_runs WHERE parent_run_id = :'plain'), NULL,
          'a parent without one gives its child none');

SELECT * FROM finish();
ROLLBACK;
