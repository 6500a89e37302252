-- Issue 36: every signal delivered (or kept for a node to come) is in the audit trail: action signal, node the
-- signal's name, who sent it (actor), and detail {"payload_bytes": n}, never the payload itself. A signal
-- answered false changed nothing and is not audited.
BEGIN;
-- A session that names no application: the actor alone (where an action came from:
-- names_where_the_action_came_from_by_application_name.sql).
SET LOCAL application_name = '';
SELECT plan(5);

SELECT cyclone_test.define('gate', '[{"name": "approve", "kind": "wait"}, {"name": "later", "kind": "wait", "deps": ["approve"]}]');
SELECT cyclone.submit('gate') AS run \gset
SELECT set_config('cyclone.actor', 'ann', true);
SELECT cyclone.signal(:'run', 'approve', '{"secret": "s3cr3t"}');
SELECT cyclone.signal(:'run', 'later');
SELECT cyclone.signal(:'run', 'nobody');

SELECT is((SELECT array_agg(node ORDER BY id) FROM cyclone.cyclone_v_audit WHERE run_id = :'run' AND action = 'signal'),
          ARRAY['approve', 'later'], 'a delivered signal and a kept one are audited, by name; a refused one is not');
SELECT is((SELECT actor FROM cyclone.cyclone_v_audit WHERE run_id = :'run' AND node = 'approve'),
          'ann via ' || session_user, 'with who sent it');
SELECT is((SELECT (detail ->> 'payload_bytes')::int FROM cyclone.cyclone_v_audit WHERE run_id = :'run' AND node = 'approve'),
          pg_column_size('{"secret": "s3cr3t"}'::jsonb), 'and the payload''s size');
SELECT is((SELECT detail FROM cyclone.cyclone_v_audit WHERE run_id = :'run' AND node = 'later'),
          '{"payload_bytes": 0}'::jsonb, 'no payload: 0 bytes');
SELECT ok((SELECT string_agg(v::text, ' ') FROM cyclone.cyclone_v_audit v WHERE run_id = :'run') NOT LIKE '%s3cr3t%',
          'never the payload''s content');

SELECT * FROM finish();
ROLLBACK;
