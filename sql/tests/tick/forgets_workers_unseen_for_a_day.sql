-- SPEC 18: tick() removes registry rows unseen for a day; a worker seen within the day stays.
BEGIN;
SELECT plan(2);

SELECT cyclone.register_worker('gone');
SELECT cyclone.advance_time('23 hours');
SELECT cyclone.register_worker('here');
SELECT cyclone.tick();
SELECT results_eq($$SELECT name FROM cyclone.cyclone_workers ORDER BY name$$, $$VALUES ('gone'), ('here')$$,
                  'unseen for 23 hours: kept');
SELECT cyclone.advance_time('1 hour 1 second');
SELECT cyclone.tick();
SELECT results_eq($$SELECT name FROM cyclone.cyclone_workers$$, $$VALUES ('here')$$,
                  'unseen for more than a day: removed by tick');

SELECT * FROM finish();
ROLLBACK;
