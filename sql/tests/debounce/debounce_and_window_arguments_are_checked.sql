-- SPEC 17: p_debounce_key and a positive p_debounce go together (22023 otherwise); p_debounce_max only with
-- them; a debounced submit takes no idempotency key or start time; p_idempotency_window needs a key and is
-- positive. Nothing is written on a refusal.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.one_step('deb');
SELECT (SELECT count(*) FROM cyclone.cyclone_runs) AS before \gset
SELECT throws_ok($$SELECT cyclone.submit('deb', p_debounce_key => 'k')$$, '22023', NULL, 'a key without an interval');
SELECT throws_ok($$SELECT cyclone.submit('deb', p_debounce => '1 second')$$, '22023', NULL, 'an interval without a key');
SELECT throws_ok($$SELECT cyclone.submit('deb', p_debounce_key => 'k', p_debounce => '0 seconds')$$, '22023', NULL,
                 'a debounce that is not positive');
SELECT throws_ok($$SELECT cyclone.submit('deb', p_debounce_key => 'k', p_debounce => '1 second', p_debounce_max => '-1 second')$$,
                 '22023', NULL, 'a negative p_debounce_max');
SELECT throws_ok($$SELECT cyclone.submit('deb', p_debounce_max => '1 second')$$, '22023', NULL,
                 'p_debounce_max alone');
SELECT throws_ok($$SELECT cyclone.submit('deb', p_idempotency_key => 'i', p_debounce_key => 'k', p_debounce => '1 second')$$,
                 '22023', NULL, 'a debounced submit with an idempotency key');
SELECT throws_ok($$SELECT cyclone.submit('deb', p_idempotency_window => '1 hour')$$, '22023', NULL,
                 'a window without a key');
SELECT throws_ok($$SELECT cyclone.submit('deb', p_idempotency_key => 'i', p_idempotency_window => '0 seconds')$$,
                 '22023', NULL, 'a window that is not positive');
SELECT is((SELECT count(*) FROM cyclone.cyclone_runs), :'before'::bigint, 'nothing was written');

SELECT * FROM finish();
ROLLBACK;
