-- Each invariant, broken by hand (the API cannot break them), is reported
-- with the rows that break it.
BEGIN;
SELECT plan(11);

SELECT cyclone.define_limit('one', 1);
SELECT cyclone_test.limited('lim', '[{"name": "one"}]');
SELECT cyclone_test.one_step('leaf') \gset
SELECT cyclone.define_workflow('dag', '{"nodes": [{"name": "a"}, {"name": "b", "deps": ["a"]},
    {"name": "c", "kind": "child", "workflow": "leaf", "deps": ["a"]}]}');
SELECT cyclone.submit('dag') AS run \gset
SELECT cyclone.submit('lim') AS lrun \gset
SELECT count(*) FROM cyclone.claim('w1', NULL, 10);
SELECT (cyclone_test.step(:'run', 'a')).id AS a \gset
SELECT (cyclone_test.step(:'run', 'b')).id AS b \gset
SELECT (cyclone_test.step(:'lrun', 'work')).id AS l \gset
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'consistent to begin with');

CREATE FUNCTION pg_temp.found(p text) RETURNS SETOF text LANGUAGE sql AS
    $$ SELECT invariant FROM cyclone.check_invariants() WHERE invariant = p $$;

SAVEPOINT s;
UPDATE cyclone.cyclone_steps SET lease_generation = 0 WHERE id = :a;
SELECT results_eq($$SELECT detail ->> 'step_id' FROM cyclone.check_invariants()
                     WHERE invariant = 'running_step_without_lease'$$, ARRAY[:'a'], 'a running step of generation 0');
ROLLBACK TO SAVEPOINT s;

ALTER TABLE cyclone.cyclone_steps DROP CONSTRAINT step_lease_iff_running;
UPDATE cyclone.cyclone_steps SET lease_owner = 'ghost', lease_expiry = cyclone.now() WHERE id = :b;
SELECT isnt_empty($$SELECT pg_temp.found('lease_outside_running')$$, 'a pending step with a lease');
ROLLBACK TO SAVEPOINT s;

UPDATE cyclone.cyclone_runs SET state = 'cancelled', finished_at = cyclone.now() WHERE id = :'run';
SELECT isnt_empty($$SELECT pg_temp.found('finished_run_with_live_step')$$, 'a cancelled run with live steps');
ROLLBACK TO SAVEPOINT s;

UPDATE cyclone.cyclone_steps SET state = 'completed', finished_at = cyclone.now(), lease_owner = NULL,
       lease_expiry = NULL WHERE id = :a;
SELECT results_eq($$SELECT detail ->> 'node' FROM cyclone.check_invariants()
                     WHERE invariant = 'pending_step_without_unfinished_dep' ORDER BY 1$$, ARRAY['b', 'c'],
                  'its dependency completed behind the advance''s back: b and c stay pending');
ROLLBACK TO SAVEPOINT s;

UPDATE cyclone.cyclone_steps SET state = 'cancelled', error_kind = 'cancelled', error = 'x', finished_at = cyclone.now(),
       lease_owner = NULL, lease_expiry = NULL WHERE run_id = :'lrun';
SELECT isnt_empty($$SELECT pg_temp.found('live_run_with_only_terminal_steps')$$, 'a running run with no live step');
ROLLBACK TO SAVEPOINT s;

DELETE FROM cyclone.cyclone_slots WHERE step_id = :l;
SELECT isnt_empty($$SELECT pg_temp.found('running_step_without_slot')$$, 'a running limited step without its slot');
ROLLBACK TO SAVEPOINT s;

INSERT INTO cyclone.cyclone_slots (bucket_id, step_id) SELECT x.bucket_id, :b FROM cyclone.cyclone_slots x WHERE x.step_id = :l;
SELECT isnt_empty($$SELECT pg_temp.found('slot_without_running_step')$$, 'a slot held by a pending step');
ROLLBACK TO SAVEPOINT s;

INSERT INTO cyclone.cyclone_runs (workflow, idempotency_key) VALUES
    ('leaf', 'schedule:s@2030-01-07T10:00:00Z'), ('lim', 'schedule:s@2030-01-07T10:00:00Z');
SELECT results_eq($$SELECT detail ->> 'idempotency_key' FROM cyclone.check_invariants()
                     WHERE invariant = 'schedule_slot_fired_twice'$$, ARRAY['schedule:s@2030-01-07T10:00:00Z'],
                  'one slot''s key on two runs (of two workflows)');
ROLLBACK TO SAVEPOINT s;

-- The child node reached: complete a, then drop the child run's link.
SELECT cyclone.complete(:a, 'w1', (cyclone_test.step(:'run', 'a')).lease_generation, '{}');
SELECT (cyclone_test.step(:'run', 'c')).child_run_id AS child \gset
SAVEPOINT t;
UPDATE cyclone.cyclone_runs SET parent_step_id = NULL WHERE id = :'child';
SELECT is((SELECT array_agg(invariant ORDER BY invariant) FROM cyclone.check_invariants()),
          ARRAY['child_run_without_parent', 'waiting_child_without_child_run'],
          'a child run that lost its parent node: both sides say so');
ROLLBACK TO SAVEPOINT t;

UPDATE cyclone.cyclone_runs SET parent_step_id = :b WHERE id = :'child';
SELECT isnt_empty($$SELECT pg_temp.found('child_run_without_parent')$$, 'a child run whose parent node is not a child node');
ROLLBACK TO SAVEPOINT t;

-- No finish(): each ROLLBACK TO SAVEPOINT above also rolls back pgTAP's record of the tests run
-- in it, so finish() would count only those before the first savepoint; pg_prove checks the plan
-- against the ok lines printed.
ROLLBACK;
