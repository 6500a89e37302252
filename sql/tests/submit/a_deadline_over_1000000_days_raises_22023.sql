-- Issue 30, finding 11: a deadline of 1,000,000 years failed with PostgreSQL's own 22008 (timestamp out
-- of range) naming nothing, and one of a few thousand years made a deadline_at that Python cannot load
-- (past the year 9999). A deadline is at most 1,000,000 days (about 2,700 years): a longer one raises
-- 22023 naming p_deadline and writes nothing, in submit and submit_many. Zero or negative still means
-- no deadline, however large (deadline_sets_deadline_at_only_when_positive.sql).
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('one');

SELECT throws_ok($$SELECT cyclone.submit('one', '{}', interval '1000000 years')$$, '22023',
                 'submit: p_deadline must be at most 1000000 days (got 1000000 years)',
                 '1,000,000 years raises 22023 naming p_deadline');
SELECT throws_ok($$SELECT cyclone.submit('one', '{}', interval '1000000 days 1 second')$$, '22023', NULL,
                 'just over 1,000,000 days raises 22023');
SELECT throws_ok($$SELECT cyclone.submit_many('one', ARRAY['{}']::jsonb[], interval '1000001 days')$$, '22023',
                 'submit_many: p_deadline must be at most 1000000 days (got 1000001 days)',
                 'submit_many: the same limit, naming p_deadline');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run was written');

SELECT cyclone.submit('one', '{}', interval '1000000 days') AS run \gset
SELECT is((SELECT deadline_at FROM cyclone.cyclone_runs WHERE id = :'run'), cyclone.now() + interval '1000000 days',
          '1,000,000 days is accepted');
SELECT cyclone.submit('one', '{}', interval '-1000000 years') AS neg \gset
SELECT is((SELECT deadline_at FROM cyclone.cyclone_runs WHERE id = :'neg'), NULL,
          'a hugely negative deadline is still no deadline');
SELECT is((SELECT count(*)::int FROM cyclone.submit_many('one', ARRAY['{}']::jsonb[], interval '1000000 days')), 1,
          'submit_many accepts 1,000,000 days');

SELECT * FROM finish();
ROLLBACK;
