-- cyclone_v_audit shows the trail (what, when, why, who) to cyclone_client and
-- cyclone_admin; the table itself stays the admin's, and workers read neither.
BEGIN;
-- A session that names no application: the actor alone (where an action came from:
-- names_where_the_action_came_from_by_application_name.sql).
SET LOCAL application_name = '';
SELECT plan(6);

SELECT ok(has_table_privilege('cyclone_client', 'cyclone.cyclone_v_audit', 'SELECT'), 'a client reads the view');
SELECT ok(has_table_privilege('cyclone_admin', 'cyclone.cyclone_v_audit', 'SELECT'), 'an admin reads the view');
SELECT ok(NOT has_table_privilege('cyclone_worker', 'cyclone.cyclone_v_audit', 'SELECT'), 'a worker does not');
SELECT ok(NOT has_table_privilege('cyclone_client', 'cyclone.cyclone_audit', 'SELECT'), 'a client does not read the table');

SELECT cyclone_test.one_step('seen', 1) AS wf \gset
SELECT cyclone.submit('seen') AS run \gset
SELECT set_config('cyclone.actor', 'carol', true);
SELECT cyclone.cancel(:'run', 'seen by all');
SELECT results_eq(format('SELECT run_id, node, action, reason, actor FROM cyclone.cyclone_v_audit WHERE run_id = %L', :'run'),
                  format($$VALUES (%L::uuid, NULL::text, 'cancel'::text, 'seen by all'::text, %L::text)$$,
                         :'run', 'carol via ' || session_user),
                  'the view has the row with its actor');
SELECT columns_are('cyclone', 'cyclone_v_audit', ARRAY['id', 'at', 'run_id', 'node', 'action', 'reason', 'actor', 'detail'],
                   'the view''s columns');

SELECT * FROM finish();
ROLLBACK;
