-- Verify cyclone:live_tables_vacuum: the live tables of steps and runs are vacuumed without a cost delay.
BEGIN;
SELECT 1 / (count(*) = 2)::int
  FROM pg_class c
 WHERE c.oid IN ('cyclone.cyclone_steps'::regclass, 'cyclone.cyclone_runs'::regclass)
   AND c.reloptions @> ARRAY['autovacuum_vacuum_cost_delay=0'];
ROLLBACK;
