-- Deploy cyclone:live_runs
-- requires: tables history list_pages metrics
-- The live table of runs keeps only indexes on columns that never change after
-- submit, and room on each page, so that the update that ends a run is a HOT
-- update: a new row version on the same page and no index entry at all
-- (docs/performance.md, "Ending a run"). Before, each ended run wrote an entry
-- into five indexes; that was a third of the database's work per single-step
-- run. What the dropped indexes served, and where it went:
--
-- - Runs by state, newest first (list pages): the day tables of history keep
--   an index on (state, created_at, id) (history.sql makes it); the live table,
--   which holds the runs not finished and those finished since the last
--   archive(), is read through (created_at, id) or (workflow, created_at, id).
-- - Finished runs, oldest first (archive, prune): cyclone_archive_queue below.
-- - Live runs by workflow and state (metrics): the live table itself; a
--   finished run leaves it at the next archive().
-- - Runs past their deadline: (deadline_at) of every run with a deadline; the
--   sweep checks the state on the row.
BEGIN;

DROP INDEX cyclone.cyclone_runs_state_created, cyclone.cyclone_runs_finished, cyclone.cyclone_runs_live,
           cyclone.cyclone_runs_deadline;
CREATE INDEX cyclone_runs_deadline ON cyclone.cyclone_runs (deadline_at) WHERE deadline_at IS NOT NULL;
-- A HOT update needs room for the new version on its page: runs are inserted
-- and ended in the same order, so a batch of completions ends every run of a
-- page in one transaction, and the pages must hold all of their new versions
-- at once. With 60% of a page free, every end of a one-step run was HOT in the
-- bench's loop; with 50%, 77% were (docs/performance.md). A run whose output
-- is large may still spill. New pages only; a VACUUM FULL of
-- cyclone.cyclone_runs (which leaves its children alone) rewrites the old ones.
ALTER TABLE cyclone.cyclone_runs SET (fillfactor = 40);

-- The finished runs of the live table, for archive() and prune(): one row per
-- run, written by the statement that ends the run (_end_run, _finish_runs) and
-- deleted when the run leaves the live table (_archive_day, prune) or is
-- reopened (_reopen). No index: it is read whole, and holds only what finished
-- since the last archive(); check_invariants() checks it against the runs.
CREATE TABLE cyclone.cyclone_archive_queue (
    run_id      uuid NOT NULL,
    finished_at timestamptz NOT NULL
);
COMMENT ON TABLE cyclone.cyclone_archive_queue IS
    'The finished runs still in the live table cyclone_runs, with when they finished: what archive() moves next.';
INSERT INTO cyclone.cyclone_archive_queue (run_id, finished_at)
SELECT r.id, r.finished_at FROM ONLY cyclone.cyclone_runs r WHERE r.finished_at IS NOT NULL;

COMMIT;
