-- Where an operator action or a signal came from (issue 36): the session's application_name, which each
-- face sets (cyclone-ui, cyclone-cli, a SQL client's own), follows who acted: 'ann via <role> from
-- cyclone-ui', '<role> from psql'. It is cleaned as the actor is (trimmed; PostgreSQL itself keeps 63 bytes
-- of it and writes a control character as '?') and left out when the session names none.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('plain', 1) AS wf \gset
CREATE TEMP TABLE runs AS SELECT i, cyclone.submit('plain') AS id FROM generate_series(1, 4) i;
SELECT cyclone.define_workflow('gate', '{"nodes": [{"name": "ask", "kind": "wait", "signal": "ok"}]}');
SELECT cyclone.submit('gate') AS gated \gset

SET LOCAL application_name = 'cyclone-ui';
SELECT set_config('cyclone.actor', 'ann', true);
SELECT cyclone.pause((SELECT id FROM runs WHERE i = 1));
SELECT cyclone.signal(:'gated', 'ok', '{"by": "ann"}');
SELECT set_config('cyclone.actor', '', true);
SET LOCAL application_name = 'psql';
SELECT cyclone.pause((SELECT id FROM runs WHERE i = 2));
SET LOCAL application_name = '  cyclone-cli  ';
SELECT cyclone.pause((SELECT id FROM runs WHERE i = 3));
SET LOCAL application_name = '';
SELECT cyclone.pause((SELECT id FROM runs WHERE i = 4));

SELECT is((SELECT actor FROM cyclone.cyclone_audit WHERE run_id = (SELECT id FROM runs WHERE i = 1)),
          'ann via ' || session_user || ' from cyclone-ui', 'the console: who, via the role, from where');
SELECT is((SELECT actor FROM cyclone.cyclone_audit WHERE run_id = :'gated' AND action = 'signal'),
          'ann via ' || session_user || ' from cyclone-ui', 'a signal too');
SELECT is((SELECT actor FROM cyclone.cyclone_audit WHERE run_id = (SELECT id FROM runs WHERE i = 2)),
          session_user || ' from psql', 'a SQL client: the role, from its application');
SELECT is((SELECT actor FROM cyclone.cyclone_audit WHERE run_id = (SELECT id FROM runs WHERE i = 3)),
          session_user || ' from cyclone-cli', 'trimmed');
SELECT is((SELECT actor FROM cyclone.cyclone_audit WHERE run_id = (SELECT id FROM runs WHERE i = 4)),
          session_user::text, 'no application named: the role alone');

SELECT * FROM finish();
ROLLBACK;
