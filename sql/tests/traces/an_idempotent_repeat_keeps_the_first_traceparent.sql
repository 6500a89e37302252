-- A repeat of submit with an idempotency key already used returns the first
-- run, whose traceparent (or lack of one) stays as it was.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('one') \gset
SELECT cyclone.submit('one', '{}', NULL, 'k1', NULL,
                      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01') AS first \gset
SELECT is(cyclone.submit('one', '{}', NULL, 'k1', NULL, '00-11111111111111111111111111111111-2222222222222222-01'),
          :'first'::uuid, 'the repeat returns the first run');
SELECT is((SELECT traceparent FROM cyclone.cyclone_runs WHERE id = :'first'),
          '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'which keeps its own traceparent');

SELECT cyclone.submit('one', '{}', NULL, 'k2') AS untraced \gset
SELECT cyclone.submit('one', '{}', NULL, 'k2', NULL, '00-11111111111111111111111111111111-2222222222222222-01') \gset
SELECT is((SELECT traceparent FROM cyclone.cyclone_runs WHERE id = :'untraced'), NULL,
          'a first run without one is not given one by a repeat');

SELECT * FROM finish();
ROLLBACK;
