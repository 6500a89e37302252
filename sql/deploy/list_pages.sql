-- Deploy cyclone:list_pages
-- requires: list_pages@v0.12.0 tables step_workflow
-- Reworked after v0.12.0 (the indexes of v0.12.0 stay; list_pages@v0.12.0.sql
-- says what they are for): the dead letters of one workflow, newest first,
-- read from each step's own workflow (step_workflow.sql), so that a keyset
-- page of one workflow's dead letters is one index range read of its length,
-- however many dead letters other workflows have.
BEGIN;

CREATE INDEX cyclone_steps_dlq_workflow_page
    ON cyclone.cyclone_steps (workflow, finished_at, id) WHERE state = 'discarded';

COMMIT;
