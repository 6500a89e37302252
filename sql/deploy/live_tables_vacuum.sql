-- Deploy cyclone:live_tables_vacuum
-- requires: hot_path_keys
-- Issue 37: autovacuum runs unthrottled on the live tables of steps and runs (autovacuum_vacuum_cost_delay =
-- 0), as a queue's tables need. Their rows are few and short-lived (a step is inserted, claimed and deleted
-- within seconds), so their dead row versions pile up quickly while a snapshot is held, and every claim and
-- completion reads past them until a vacuum removes them; once the snapshot ends, the vacuum that removes them
-- should take as little time as it can. After a REPEATABLE READ transaction held through a drain of 20,000
-- runs, the vacuum of the two tables took 0.29 s under autovacuum's default cost delay (2 ms every 200 cost
-- units) and 0.07 s without (60,000 dead row versions; bench/xmin.py, docs/performance.md, A held xmin
-- horizon); at that rate the 1.24 million of issue 37's run would keep a throttled vacuum 6 s, 1.5 s without.
-- The thresholds stay the server's: a live table's few live rows make 20% of them a few hundred dead rows,
-- and when autovacuum comes is the server's autovacuum_naptime (docs/operations.md, Vacuum of the live
-- tables). The day tables of history are made by _history_day with LIKE, which copies no storage options:
-- they are written once and read, and keep the server's defaults.
-- Under load: each table in a transaction of its own that waits at most 5 seconds for its lock (SHARE UPDATE
-- EXCLUSIVE, which claims and completions do not conflict with; a running VACUUM does): a deploy that cannot
-- have it fails with 55P03 and nothing changed; `cyclone migrate` can be run again.
BEGIN;
SET LOCAL lock_timeout = '5s';
ALTER TABLE ONLY cyclone.cyclone_steps SET (autovacuum_vacuum_cost_delay = 0);
COMMIT;

BEGIN;
SET LOCAL lock_timeout = '5s';
ALTER TABLE ONLY cyclone.cyclone_runs SET (autovacuum_vacuum_cost_delay = 0);
COMMIT;
