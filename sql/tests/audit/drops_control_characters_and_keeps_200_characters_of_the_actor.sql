-- The actor a face names is text from outside: control characters are
-- dropped (a name cannot forge a second line in a log of the trail) and at
-- most 200 characters are kept.
BEGIN;
-- A session that names no application: the actor alone (where an action came from:
-- names_where_the_action_came_from_by_application_name.sql).
SET LOCAL application_name = '';
SELECT plan(2);

SELECT cyclone_test.one_step('odd', 1) AS wf \gset
SELECT cyclone.submit('odd') AS run \gset
SELECT cyclone.submit('odd') AS other \gset
SELECT set_config('cyclone.actor', E'eve\n2030-01-01 admin\tdid it', true);
SELECT cyclone.cancel(:'run', NULL);
SELECT set_config('cyclone.actor', repeat('x', 300), true);
SELECT cyclone.cancel(:'other', NULL);

SELECT is((SELECT actor FROM cyclone.cyclone_audit WHERE run_id = :'run'),
          'eve2030-01-01 admindid it via ' || session_user, 'control characters dropped');
SELECT is((SELECT actor FROM cyclone.cyclone_audit WHERE run_id = :'other'),
          repeat('x', 200) || ' via ' || session_user, '200 characters kept');

SELECT * FROM finish();
ROLLBACK;
