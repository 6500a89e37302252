-- SPEC 18: cyclone_workers_alive {} counts registered workers seen within the last 60 seconds, idle ones
-- included; cyclone_workers still counts the lease holders.
BEGIN;
SELECT plan(3);

SELECT cyclone.register_worker('old');
SELECT cyclone.advance_time('61 seconds');
SELECT cyclone.register_worker('idle');
SELECT cyclone.register_worker('busy');
SELECT cyclone_test.one_step('m') \gset
SELECT cyclone.submit('m');
SELECT count(*) FROM cyclone.claim('busy');

SELECT is((SELECT value FROM cyclone.metrics() WHERE name = 'cyclone_workers_alive'), 2::float8,
          'two seen within 60 seconds, the idle one included');
SELECT is((SELECT labels FROM cyclone.metrics() WHERE name = 'cyclone_workers_alive'), '{}'::jsonb, 'no labels');
SELECT is((SELECT value FROM cyclone.metrics() WHERE name = 'cyclone_workers'), 1::float8,
          'cyclone_workers: the lease holders');

SELECT * FROM finish();
ROLLBACK;
