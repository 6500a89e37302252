-- The depth limit of every JSON the engine stores (_payload_problem, 03_checks.sql): a value may lie at
-- most 100 levels below the top (the value itself is level 0). Its test, jsonb_path_exists(v,
-- 'strict $.**{101}'), finds an item at level 101 exactly: pinned here at levels 99, 100 and 101, for
-- arrays and for objects, with a scalar or an empty container at the bottom, at the top or beside
-- shallow siblings, and for the 5,000-level attack of issue 30.
BEGIN;
SELECT plan(17);

-- A scalar at level n: n arrays around it, or n objects.
CREATE FUNCTION pg_temp.arrays(n int, bottom text DEFAULT '1') RETURNS jsonb LANGUAGE sql AS
$$ SELECT (repeat('[', n) || bottom || repeat(']', n))::jsonb $$;
CREATE FUNCTION pg_temp.objects(n int, bottom text DEFAULT '1') RETURNS jsonb LANGUAGE sql AS
$$ SELECT (repeat('{"k": ', n) || bottom || repeat('}', n))::jsonb $$;

SELECT is(cyclone._payload_problem(pg_temp.arrays(99)), NULL, 'arrays: a scalar at level 99 is fine');
SELECT is(cyclone._payload_problem(pg_temp.arrays(100)), NULL, 'arrays: a scalar at level 100 is fine');
SELECT is(cyclone._payload_problem(pg_temp.arrays(101)),
          'is nested deeper than 100 levels; the limit is 100 levels', 'arrays: a scalar at level 101 is refused');
SELECT is(cyclone._payload_problem(pg_temp.objects(99)), NULL, 'objects: a scalar at level 99 is fine');
SELECT is(cyclone._payload_problem(pg_temp.objects(100)), NULL, 'objects: a scalar at level 100 is fine');
SELECT isnt(cyclone._payload_problem(pg_temp.objects(101)), NULL, 'objects: a scalar at level 101 is refused');

-- An empty container is a value too: at level 100 it is fine, at level 101 refused.
SELECT is(cyclone._payload_problem(pg_temp.arrays(100, '[]')), NULL, 'an empty array at level 100 is fine');
SELECT isnt(cyclone._payload_problem(pg_temp.arrays(101, '[]')), NULL, 'an empty array at level 101 is refused');
SELECT is(cyclone._payload_problem(pg_temp.objects(100, '{}')), NULL, 'an empty object at level 100 is fine');
SELECT isnt(cyclone._payload_problem(pg_temp.objects(101, '{}')), NULL, 'an empty object at level 101 is refused');

-- Mixed, and the deep branch beside shallow ones: the deepest value decides.
SELECT isnt(cyclone._payload_problem(jsonb_build_object('a', 1, 'b', jsonb_build_array(pg_temp.objects(50, pg_temp.arrays(50)::text)))),
            NULL, 'objects and arrays mixed, a scalar at level 102 beside a shallow key: refused');
SELECT is(cyclone._payload_problem(jsonb_build_array(1, pg_temp.objects(49, pg_temp.arrays(50)::text), 'x')),
          NULL, 'objects and arrays mixed, a scalar at level 100: fine');

-- The attack: 5,000 levels (under 1 MiB); and values the limit must not touch.
SELECT isnt(cyclone._payload_problem(pg_temp.arrays(5000, '')), NULL, 'the 5,000-level input of issue 30 is refused');
SELECT is(cyclone._payload_problem('"a scalar"'), NULL, 'a scalar (level 0) is fine');
SELECT is(cyclone._payload_problem(NULL), NULL, 'NULL is no problem (the callers decide what NULL means)');
SELECT is(cyclone._payload_problem((SELECT jsonb_agg(jsonb_build_object('i', i)) FROM generate_series(1, 10000) i)),
          NULL, 'a wide, shallow document is fine');
-- Lax mode would unwrap arrays; strict is what the check uses, and both agree here on the boundary.
SELECT ok(NOT jsonb_path_exists(pg_temp.arrays(100), 'strict $.**{101}')
          AND jsonb_path_exists(pg_temp.arrays(101), 'strict $.**{101}'),
          'strict $.**{101} finds an item at level 101 and none at level 100');

SELECT * FROM finish();
ROLLBACK;
