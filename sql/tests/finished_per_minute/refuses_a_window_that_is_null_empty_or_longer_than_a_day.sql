-- The window is bounded: NULL ends are 22004; an empty, inverted, infinite or longer than a day one 22023.
BEGIN;
SELECT plan(5);

SELECT throws_ok($$SELECT * FROM cyclone.finished_per_minute(NULL, now())$$, '22004', NULL, 'a NULL start');
SELECT throws_ok($$SELECT * FROM cyclone.finished_per_minute(now(), NULL)$$, '22004', NULL, 'a NULL end');
SELECT throws_ok($$SELECT * FROM cyclone.finished_per_minute(now(), now())$$, '22023', NULL, 'an empty window');
SELECT throws_ok($$SELECT * FROM cyclone.finished_per_minute('-infinity', now())$$, '22023', NULL, 'an infinite one');
SELECT throws_ok($$SELECT * FROM cyclone.finished_per_minute(now() - interval '25 hours', now())$$, '22023', NULL,
                 'one longer than a day');

SELECT * FROM finish();
ROLLBACK;
