-- p_deadline > 0 sets deadline_at = cyclone.now() + p_deadline; NULL, zero or
-- negative means no deadline.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one');
SELECT cyclone.advance_time('3 hours');
CREATE TEMP TABLE t AS
SELECT label, cyclone.submit('one', '{}', deadline) AS run_id
  FROM (VALUES ('15m', interval '15 minutes'), ('1d2h', interval '1 day 2 hours'), ('null', NULL),
               ('zero', interval '0'), ('negative', interval '-5 minutes')) v(label, deadline);

SELECT is((SELECT r.deadline_at FROM cyclone.cyclone_runs r JOIN t ON t.run_id = r.id WHERE label = '15m'),
          cyclone.now() + interval '15 minutes', '15 minutes: deadline_at = cyclone.now() + 15 minutes');
SELECT is((SELECT g.deadline_at FROM t, cyclone.get_run(t.run_id) g WHERE label = '1d2h'),
          cyclone.now() + interval '1 day 2 hours', '1 day 2 hours, as get_run reports it');
SELECT is((SELECT r.deadline_at FROM cyclone.cyclone_runs r JOIN t ON t.run_id = r.id WHERE label = 'null'), NULL,
          'NULL: no deadline');
SELECT is((SELECT r.deadline_at FROM cyclone.cyclone_runs r JOIN t ON t.run_id = r.id WHERE label = 'zero'), NULL,
          'zero: no deadline');
SELECT is((SELECT r.deadline_at FROM cyclone.cyclone_runs r JOIN t ON t.run_id = r.id WHERE label = 'negative'), NULL,
          'negative: no deadline');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE state = 'running'), 5, 'all five runs were created, running');

SELECT * FROM finish();
ROLLBACK;
