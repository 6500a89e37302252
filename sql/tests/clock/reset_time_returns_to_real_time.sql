-- reset_time drops the whole accumulated offset.
BEGIN;
SELECT plan(4);

SELECT cyclone.advance_time('3 hours');
SELECT cyclone.advance_time('10 minutes');
SELECT isnt(cyclone.now(), pg_catalog.now(), 'the clock was moved');
SELECT lives_ok('SELECT cyclone.reset_time()', 'reset_time runs');
SELECT is(cyclone.now(), pg_catalog.now(), 'cyclone.now() is back on now()');
SELECT is(cyclone.advance_time('1 minute'), pg_catalog.now() + interval '1 minute',
          'advancing after a reset starts again from zero');

SELECT * FROM finish();
ROLLBACK;
