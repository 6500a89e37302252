-- SPEC 17: emit_event's guards: a NULL key is 22004, an empty key or one over 1,000 bytes 22023, a payload
-- any stored JSON could not be (over 1 MiB, nested deeper than 100 levels) 22023; nothing is written.
BEGIN;
SELECT plan(6);

SELECT (SELECT count(*) FROM cyclone.cyclone_events) AS before \gset
SELECT throws_ok($$SELECT cyclone.emit_event(NULL)$$, '22004', NULL, 'a NULL key: 22004');
SELECT throws_ok($$SELECT cyclone.emit_event('')$$, '22023', NULL, 'an empty key: 22023');
SELECT throws_ok($$SELECT cyclone.emit_event(repeat('k', 1001))$$, '22023',
                 'emit_event: p_key is 1001 bytes long; the limit is 1000 bytes', 'a key over 1,000 bytes: 22023');
SELECT throws_ok($$SELECT cyclone.emit_event('k', (repeat('[', 101) || '1' || repeat(']', 101))::jsonb)$$, '22023', NULL,
                 'a payload nested deeper than 100 levels: 22023');
SELECT throws_ok($$SELECT cyclone.emit_event('k', jsonb_build_object('x', repeat('y', 1100000)))$$, '22023', NULL,
                 'a payload over 1 MiB: 22023');
SELECT is((SELECT count(*) FROM cyclone.cyclone_events), :'before'::bigint, 'nothing was written');

SELECT * FROM finish();
ROLLBACK;
