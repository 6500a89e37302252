-- Without cyclone.actor (never set, or set to an empty or blank name) the
-- audit row names the session role alone, as before the setting existed.
BEGIN;
-- A session that names no application: the actor alone (where an action came from:
-- names_where_the_action_came_from_by_application_name.sql).
SET LOCAL application_name = '';
SELECT plan(2);

SELECT cyclone_test.one_step('plain', 1) AS wf \gset
SELECT cyclone.submit('plain') AS run \gset
SELECT cyclone.submit('plain') AS other \gset
SELECT cyclone.cancel(:'run', 'no actor');
SELECT set_config('cyclone.actor', '  ', true);
SELECT cyclone.cancel(:'other', 'blank actor');

SELECT is((SELECT actor FROM cyclone.cyclone_audit WHERE run_id = :'run'), session_user::text, 'never set: the role');
SELECT is((SELECT actor FROM cyclone.cyclone_audit WHERE run_id = :'other'), session_user::text, 'blank: the role');

SELECT * FROM finish();
ROLLBACK;
