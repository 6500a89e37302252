-- submit keeps p_traceparent on the run (SPEC 5); NULL, or a call without it,
-- is no trace; a call of the previous release (one to five arguments) still
-- resolves. Any version but ff is taken, flags of any value.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one') \gset
SELECT cyclone.submit('one', '{}', NULL, NULL, NULL,
                      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01') AS run \gset
SELECT is((SELECT traceparent FROM cyclone.cyclone_runs WHERE id = :'run'),
          '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'the run keeps the traceparent');

SELECT cyclone.submit('one', '{}', NULL, NULL, NULL, NULL) AS none \gset
SELECT is((SELECT traceparent FROM cyclone.cyclone_runs WHERE id = :'none'), NULL, 'NULL: no traceparent');
SELECT cyclone.submit('one') AS bare \gset
SELECT is((SELECT traceparent FROM cyclone.cyclone_runs WHERE id = :'bare'), NULL, 'without it: none');
SELECT cyclone.submit('one', '{}', NULL, 'k', NULL) AS five \gset
SELECT is((SELECT traceparent FROM cyclone.cyclone_runs WHERE id = :'five'), NULL, 'five arguments: none');

SELECT cyclone.submit('one', '{}', NULL, NULL, NULL,
                      'cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00') AS later \gset
SELECT is((SELECT traceparent FROM cyclone.cyclone_runs WHERE id = :'later'),
          'cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00', 'a later version and flags 00 are kept');

SELECT * FROM finish();
ROLLBACK;
