-- Revert cyclone:history
-- Every archived run goes back into the live tables, then the day tables, the
-- keys table and the functions go, and the foreign keys and the unique key
-- index come back.
BEGIN;

DO $$
DECLARE
    v_day cyclone.cyclone_history;
BEGIN
    FOR v_day IN SELECT * FROM cyclone.cyclone_history ORDER BY day LOOP
        EXECUTE format('INSERT INTO cyclone.cyclone_runs SELECT * FROM %s', v_day.runs);
        EXECUTE format('INSERT INTO cyclone.cyclone_steps OVERRIDING SYSTEM VALUE SELECT * FROM %s', v_day.steps);
        EXECUTE format('DROP TABLE %s, %s', v_day.runs, v_day.steps);
    END LOOP;
END
$$;

DROP FUNCTION cyclone._revive(uuid);
DROP FUNCTION cyclone.archive(int);
DROP FUNCTION cyclone._archive_day(date, uuid[]);
DROP FUNCTION cyclone._history_day(date);
DROP FUNCTION cyclone._history_table(text, date);
DROP FUNCTION cyclone._history_day_of(timestamptz);
DROP TABLE cyclone.cyclone_history;

ALTER TABLE cyclone.cyclone_schedule_runs ADD CONSTRAINT cyclone_schedule_runs_run_id_fkey
    FOREIGN KEY (run_id) REFERENCES cyclone.cyclone_runs (id) ON DELETE CASCADE;
ALTER TABLE cyclone.cyclone_step_errors
    ADD CONSTRAINT cyclone_step_errors_run_id_fkey FOREIGN KEY (run_id) REFERENCES cyclone.cyclone_runs (id) ON DELETE CASCADE,
    ADD CONSTRAINT cyclone_step_errors_step_id_fkey FOREIGN KEY (step_id) REFERENCES cyclone.cyclone_steps (id) ON DELETE CASCADE;
ALTER TABLE cyclone.cyclone_audit ADD CONSTRAINT cyclone_audit_run_id_fkey
    FOREIGN KEY (run_id) REFERENCES cyclone.cyclone_runs (id) ON DELETE CASCADE;
ALTER TABLE cyclone.cyclone_runs ADD CONSTRAINT cyclone_runs_parent_run_id_fkey
    FOREIGN KEY (parent_run_id) REFERENCES cyclone.cyclone_runs (id) ON DELETE SET NULL;

CREATE UNIQUE INDEX cyclone_runs_idempotency_key
    ON cyclone.cyclone_runs (workflow, idempotency_key) WHERE idempotency_key IS NOT NULL;
DROP TABLE cyclone.cyclone_run_keys;

COMMIT;
