-- An action in a transaction that set cyclone.actor records that name and the
-- role the session logged in as ('alice via <role>'), for every operator
-- function: retry, cancel, pause and resume take the column default.
BEGIN;
-- A session that names no application: the actor alone (where an action came from:
-- names_where_the_action_came_from_by_application_name.sql).
SET LOCAL application_name = '';
SELECT plan(4);

SELECT cyclone_test.one_step('named', 1) AS wf \gset
SELECT cyclone.submit('named') AS run \gset
SELECT cyclone.submit('named') AS other \gset
SELECT is(cyclone_test.fail_node(:'run', 'work'), 'discarded', 'work is discarded');
SELECT set_config('cyclone.actor', 'alice', true);
SELECT cyclone.retry(:'run', 'work', 1, 'fixed');
SELECT cyclone.pause(:'other');
SELECT cyclone.resume(:'other');
SELECT set_config('cyclone.actor', 'bob', true);
SELECT cyclone.cancel(:'other', 'duplicate');

SELECT results_eq(format('SELECT action, actor FROM cyclone.cyclone_audit WHERE run_id = %L', :'run'),
                  format($$VALUES ('retry'::text, %L::text)$$, 'alice via ' || session_user),
                  'the retry names alice via the session role');
SELECT results_eq(format('SELECT action, actor FROM cyclone.cyclone_audit WHERE run_id = %L ORDER BY id', :'other'),
                  format($$VALUES ('pause'::text, %1$L::text), ('resume', %1$L), ('cancel', %2$L)$$,
                         'alice via ' || session_user, 'bob via ' || session_user),
                  'pause, resume and cancel name the actor set when each ran');
SELECT is((SELECT count(*) FROM cyclone.cyclone_audit WHERE actor NOT LIKE '% via ' || session_user), 0::bigint,
          'no row lost the session role');

SELECT * FROM finish();
ROLLBACK;
