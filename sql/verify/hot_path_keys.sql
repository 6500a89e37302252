-- Verify cyclone:hot_path_keys: no foreign key on the runs', steps' or signals' tables.
BEGIN;
SELECT 1 / (NOT EXISTS (SELECT 1 FROM pg_constraint c
                         WHERE c.contype = 'f'
                           AND c.conrelid IN ('cyclone.cyclone_runs'::regclass, 'cyclone.cyclone_steps'::regclass,
                                              'cyclone.cyclone_signals'::regclass)))::int;
ROLLBACK;
