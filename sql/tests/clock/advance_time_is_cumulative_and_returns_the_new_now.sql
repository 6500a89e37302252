-- advance_time adds to the offset (it does not set it) and returns the new cyclone.now().
BEGIN;
SELECT plan(5);

SELECT cyclone.reset_time();
SELECT is(cyclone.advance_time('1 hour'), pg_catalog.now() + interval '1 hour', 'first advance returns now() + 1 hour');
SELECT is(cyclone.advance_time('30 seconds'), pg_catalog.now() + interval '1 hour 30 seconds',
          'second advance returns now() + 1 hour 30 seconds');
SELECT is(cyclone.advance_time('2 days'), pg_catalog.now() + interval '2 days 1 hour 30 seconds',
          'a third advance adds again');
SELECT is(cyclone.advance_time('0'), pg_catalog.now() + interval '2 days 1 hour 30 seconds',
          'advancing by zero changes nothing and returns the current engine time');
SELECT is(cyclone.now(), pg_catalog.now() + interval '2 days 1 hour 30 seconds', 'cyclone.now() agrees');

SELECT * FROM finish();
ROLLBACK;
