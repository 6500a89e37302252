-- SPEC 12: a step held back never delays a claimable step behind it, within
-- one claim too. `both` (lim and per:a) is held back by lim once `first` takes
-- it in the same batch; `other` (per:a only) fits: one claim of two takes two.
BEGIN;
SELECT plan(2);

SELECT cyclone.define_limit('lim', 1);
SELECT cyclone.define_limit('per', 1);
SELECT cyclone.define_workflow('first', '{"nodes": [{"name": "a"}], "limits": [{"name": "lim"}]}');
SELECT cyclone.define_workflow('both', '{"nodes": [{"name": "a"}], "limits": [{"name": "lim"}, {"name": "per", "key": "t"}]}');
SELECT cyclone.define_workflow('other', '{"nodes": [{"name": "a"}], "limits": [{"name": "per", "key": "t"}]}');
SELECT cyclone.submit(w, '{"t": "a"}') FROM unnest(ARRAY['first', 'both', 'other']) AS w;

SELECT is((SELECT array_agg(c.workflow ORDER BY c.workflow) FROM cyclone.claim('w1', NULL, 2) c),
          ARRAY['first', 'other'], 'one claim of two takes first and other');
SELECT is((SELECT s.state FROM cyclone.cyclone_steps s JOIN cyclone.cyclone_runs r ON r.id = s.run_id
            WHERE r.workflow = 'both'), 'available', 'both stays available, held back by lim');

SELECT * FROM finish();
ROLLBACK;
