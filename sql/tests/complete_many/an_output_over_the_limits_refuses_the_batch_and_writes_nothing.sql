-- complete_many holds each output to complete's limits (_payload_problem: at most 1 MiB, nested at most
-- 100 levels): the first output beyond them raises 22023 naming its position and step, and the whole
-- batch is refused: no step of it is completed. Without it, the others complete.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one');
SELECT cyclone.submit('one') AS r1 \gset
SELECT cyclone.submit('one') AS r2 \gset
CREATE TEMP TABLE c AS SELECT * FROM cyclone.claim('w1', ARRAY['work'], 2);
SELECT step_id AS s1, lease_generation AS g1 FROM c WHERE run_id = :'r1' \gset
SELECT step_id AS s2, lease_generation AS g2 FROM c WHERE run_id = :'r2' \gset

SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many('w1', ARRAY[%s, %s], ARRAY[%s, %s], ARRAY['{"ok": 1}', %L]::jsonb[])$$,
                        :s1, :s2, :g1, :g2, repeat('[', 5000) || repeat(']', 5000)),
                 '22023', format('complete_many: output 2 (step %s) is nested deeper than 100 levels; the limit is 100 levels', :s2),
                 'an output nested 5,000 levels deep raises 22023 naming its position and step');
SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many('w1', ARRAY[%s, %s], ARRAY[%s, %s], ARRAY[%L, '{}']::jsonb[])$$,
                        :s1, :s2, :g1, :g2, jsonb_build_object('blob', repeat('x', 1100000))),
                 '22023', NULL, 'an output over 1 MiB raises 22023');
SELECT ok(cyclone_test.state(:'r1') = 'running' AND cyclone_test.state(:'r2') = 'running',
          'neither step was completed');
SELECT ok((cyclone_test.step(:'r1')).output IS NULL AND (cyclone_test.step(:'r2')).output IS NULL, 'no output stored');

SELECT results_eq(format($$SELECT * FROM cyclone.complete_many('w1', ARRAY[%s, %s], ARRAY[%s, %s], ARRAY['{"ok": 1}', '{"ok": 2}']::jsonb[])$$,
                         :s1, :s2, :g1, :g2),
                  format('VALUES (%s::bigint, true), (%s::bigint, true)', :s1, :s2), 'within the limits, both complete');
SELECT is((cyclone_test.step(:'r2')).output, '{"ok": 2}'::jsonb, 'with their outputs');

SELECT * FROM finish();
ROLLBACK;
