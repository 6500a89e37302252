-- SPEC 14: a retry's span links to the previous attempt's. fail's p_span (the
-- failed execution's span, a W3C traceparent) is kept on the step and the
-- next claim returns it as previous_span: after a retry, after an operator
-- retry of the discard, and again after a reclaim (the crashed execution
-- reported nothing). A failure without a span, or a timeout the sweep
-- retries, leaves none. A malformed span is 22023 and changes nothing.
BEGIN;
SELECT plan(12);

SELECT cyclone_test.one_step('spans', 5, '1 minute') \gset
SELECT cyclone.submit('spans') AS run \gset
\set s1 '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01'
\set s2 '00-4bf92f3577b34da6a3ce929d0e0e4736-53995c3f42cd8ad8-01'

SELECT c.step_id, c.lease_generation, coalesce(c.previous_span, 'none') AS prev FROM cyclone_test.claim_node(:'run') c \gset
SELECT is(:'prev'::text, 'none', 'a first attempt has no previous span');
SELECT throws_ok(format($$SELECT cyclone.fail(%s, 'w1', %s, 'boom', 'error', interval '0', '00-abc')$$,
                        :step_id, :lease_generation),
                 '22023', 'fail: p_span "00-abc" is not version-traceid-parentid-flags of 2, 32, 16 and 2 lower-case hex digits',
                 'a malformed span is 22023, naming what is wrong');
SELECT results_eq(format('SELECT state, attempt, failed_span FROM cyclone.cyclone_steps WHERE id = %s', :step_id),
                  $$VALUES ('running'::text, 1, NULL::text)$$, 'and nothing was written');
SELECT is(cyclone.fail(:step_id, 'w1', :lease_generation, 'boom', 'error', interval '0', :'s1'), 'available',
          'fail with a span schedules the retry');
SELECT results_eq(format($$SELECT attempt, previous_span FROM cyclone_test.claim_node(%L)$$, :'run'),
                  format($$VALUES (2, %L::text)$$, :'s1'), 'the retry is claimed with the failed attempt''s span');

-- A reclaim: the crashed attempt 2 reported nothing; its re-run still links to attempt 1.
SELECT cyclone.advance_time('45 seconds');
SELECT is((SELECT action FROM cyclone.sweep()), 'reclaimed', 'attempt 2''s lease expired: reclaimed');
SELECT c.step_id, c.lease_generation, c.attempt, coalesce(c.previous_span, 'none') AS prev FROM cyclone_test.claim_node(:'run') c \gset
SELECT results_eq(format($$VALUES (%s, %L::text)$$, :attempt, :'prev'), format($$VALUES (2, %L::text)$$, :'s1'),
                  'the re-run of attempt 2 links to attempt 1''s span');

-- A failure without a span leaves none.
SELECT cyclone.fail(:step_id, 'w1', :lease_generation, 'boom', 'error', interval '0');
SELECT c.step_id, c.lease_generation, coalesce(c.previous_span, 'none') AS prev FROM cyclone_test.claim_node(:'run') c \gset
SELECT is(:'prev'::text, 'none', 'after a failure reported without a span: no previous span');

-- A timeout the sweep retries leaves none either, even after a span was kept.
SELECT cyclone.fail(:step_id, 'w1', :lease_generation, 'boom', 'error', interval '0', :'s2');
SELECT c.step_id, c.lease_generation FROM cyclone_test.claim_node(:'run', 'work', 'w1', '1 hour') c \gset
SELECT cyclone.advance_time('2 minutes');
SELECT is((SELECT action FROM cyclone.sweep()), 'retried', 'attempt 4 timed out: the sweep retries it (one attempt left)');
SELECT is((SELECT failed_span FROM cyclone.cyclone_steps WHERE id = :step_id), NULL, 'and keeps no span');

-- A discard keeps its span for an operator's retry.
SELECT cyclone.define_workflow('spans', '{"max_attempts": 1, "nodes": [{"name": "work"}]}');
SELECT cyclone.submit('spans') AS run2 \gset
SELECT c.step_id, c.lease_generation FROM cyclone_test.claim_node(:'run2') c \gset
SELECT is(cyclone.fail(:step_id, 'w1', :lease_generation, 'boom', 'error', NULL, :'s2'), 'discarded', 'discarded');
SELECT cyclone.retry(:'run2', 'work');
SELECT results_eq(format($$SELECT c.previous_span FROM cyclone_test.claim_node(%L) c WHERE c.run_id = %L$$,
                         :'run2', :'run2'),
                  format($$VALUES (%L::text)$$, :'s2'), 'the operator''s retry links to the discarded attempt''s span');

SELECT * FROM finish();
ROLLBACK;
