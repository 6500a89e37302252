-- Ending a run is a HOT update of its row (live_runs.sql): no index of the
-- live table reads a column it changes, and its page has room for the new
-- version. Counted in this transaction's statistics.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('solo', 1) \gset
CREATE FUNCTION pg_temp.updates() RETURNS int[] LANGUAGE sql AS $$
    SELECT ARRAY[n_tup_upd, n_tup_hot_upd]::int[] FROM pg_stat_xact_user_tables
     WHERE relid = 'cyclone.cyclone_runs'::regclass
$$;

-- One at a time: the test's claim takes every available step of the handler.
SELECT cyclone.submit('solo') AS done \gset
SELECT step_id AS c1 FROM cyclone_test.claim_node(:'done', 'work') \gset
SELECT pg_temp.updates() AS before \gset
SELECT cyclone.complete(:c1, 'w1', 1, '{}') \gset
SELECT cyclone.submit('solo') AS failed \gset
SELECT cyclone_test.fail_node(:'failed', 'work') \gset
SELECT cyclone.submit('solo') AS cancelled \gset
SELECT cyclone.cancel(:'cancelled') \gset
SELECT is(ARRAY[cyclone_test.run_state(:'done'), cyclone_test.run_state(:'failed'), cyclone_test.run_state(:'cancelled')],
          ARRAY['completed', 'failed', 'cancelled'], 'three runs ended, one of each end');
SELECT is(pg_temp.updates(), ARRAY[(:'before'::int[])[1] + 3, (:'before'::int[])[2] + 3],
          'three updates of run rows, all three HOT');

SELECT ok((SELECT 'fillfactor=40' = ANY (reloptions) FROM pg_class WHERE oid = 'cyclone.cyclone_runs'::regclass),
          'the live table leaves 60% of each page for new versions');
SELECT is_empty($$SELECT i.indexrelid::regclass FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid
                  WHERE i.indrelid = 'cyclone.cyclone_runs'::regclass
                    AND a.attname IN ('state', 'finished_at', 'output', 'paused_at')
                    AND (a.attnum = ANY (i.indkey)
                         OR coalesce(pg_get_expr(i.indpred, i.indrelid) ~ ('\m' || a.attname || '\M'), false))$$,
                'no index of the live table reads a column that ending a run changes');

SELECT * FROM finish();
ROLLBACK;
