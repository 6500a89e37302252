-- sql/engine/13_history_tables.sql: the tables that say where finished runs are (docs/history.md).
-- Owns: cyclone_history (the day tables of archived runs) and cyclone_archive_queue (the finished runs still in
-- the live table).
-- Requires: 00_schema.sql. The day tables themselves are made at run time by _history_day (43_history.sql).
-- Used by: archive, _archive_day, _history_day and _revive (43_history.sql), the run's end (_end_run,
-- 21_runs.sql; _finish_runs, 22_advance.sql), a retry's reopening (29_operator.sql), prune (32_prune.sql),
-- tick, check_invariants.
-- sqitch reaches this shape through the changes history and live_runs.
--
-- Finished runs leave the tables the hot path touches. cyclone_runs and cyclone_steps keep the live rows (and
-- the runs finished since the last archive()); each UTC day of finished runs has a table of its own for its
-- runs and one for their steps, inheritance children of cyclone_runs and cyclone_steps, so a query of those
-- (or of a view over them) reads every kept run, and prune() drops a whole day by dropping its two tables.
-- Inheritance, not PARTITION BY: a partitioned table's primary key must include its partition key, and
-- cyclone_runs keeps id as its primary key (SPEC 3), with the live rows in a table of their own.
-- Locks: _history_day makes a day's tables one creator at a time (an advisory lock); archive skips runs
-- locked by others (SKIP LOCKED). Only the owner writes these tables.

-- One row per UTC day that has tables, made by _history_day when a run of that day is first archived (tick
-- makes today's and tomorrow's ahead), deleted by prune when it drops the day's two tables. A day is
-- [midnight, midnight) UTC of finished_at; the tables' CHECKs say so (history_run_day), and a day's runs
-- table has the (state, created_at, id) and (finished_at) indexes the live table no longer has.
CREATE TABLE cyclone.cyclone_history (
    day   date PRIMARY KEY,
    runs  regclass NOT NULL UNIQUE,
    steps regclass NOT NULL UNIQUE
);
COMMENT ON TABLE cyclone.cyclone_history IS
    'One row per UTC day of archived runs: the tables (children of cyclone_runs and cyclone_steps) that hold them.';
GRANT SELECT ON cyclone.cyclone_history TO cyclone_admin;

-- The finished runs of the live table, for archive() and prune(): one row per run, written by the statement
-- that ends the run (_end_run, _finish_runs) and deleted when the run leaves the live table (_archive_day,
-- prune) or is reopened by a retry; _revive puts back a finished run it brings back from a day table. It
-- replaces an index of the live runs on finished_at, which ending a run would have to update (the live table's
-- indexes cover only columns set at submit, so that ending a run is a HOT update: 10_runs_tables.sql).
-- No index: it is read whole, and holds only what finished since the last archive(). check_invariants()
-- reports a finished live run not in it once, and an entry that is not a finished live run.
CREATE TABLE cyclone.cyclone_archive_queue (
    run_id      uuid NOT NULL,
    -- The run's finish time: archive and prune take the oldest first, and prune only those before its cutoff.
    finished_at timestamptz NOT NULL
);
COMMENT ON TABLE cyclone.cyclone_archive_queue IS
    'The finished runs still in the live table cyclone_runs, with when they finished: what archive() moves next.';
