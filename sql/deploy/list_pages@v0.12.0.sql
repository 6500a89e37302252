-- Deploy cyclone:list_pages
-- requires: tables
-- The indexes of the list pages (the web console's runs and dead letters, the
-- client's runs_page and dead_letters): each filter a page takes, then the
-- page's order (newest first, id breaking ties), so that a keyset page, the
-- rows after a cursor (created_at, id), is one index range read of its length
-- wherever it starts. bench/ measures it at a million runs. Every index of
-- cyclone_runs costs each submit and each run's finish an entry, so a page of
-- one workflow and one state reads one of the two single-filter indexes and
-- filters the other.
BEGIN;

CREATE INDEX cyclone_runs_created ON cyclone.cyclone_runs (created_at, id);
CREATE INDEX cyclone_runs_workflow_created ON cyclone.cyclone_runs (workflow, created_at, id);
CREATE INDEX cyclone_runs_state_created ON cyclone.cyclone_runs (state, created_at, id);
CREATE INDEX cyclone_runs_key ON cyclone.cyclone_runs (idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Dead letters newest first, all of them or of one error kind.
CREATE INDEX cyclone_steps_dlq_page ON cyclone.cyclone_steps (finished_at, id) WHERE state = 'discarded';
CREATE INDEX cyclone_steps_dlq_kind_page
    ON cyclone.cyclone_steps (error_kind, finished_at, id) WHERE state = 'discarded';

COMMIT;
