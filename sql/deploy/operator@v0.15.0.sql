-- Deploy cyclone:operator
-- requires: operator@v0.13.0 advance runs checks clock
-- Reworked after v0.13.0 (operator@v0.13.0.sql has the rest of the change,
-- which stays): retry refuses p_additional_attempts over 1,000,000 by name
-- (22023; a value near 2^31 overflowed max_attempts, 22003 naming nothing),
-- and shows a missing node cut to 40 characters, as every refusal shows a
-- value. Only retry changes.
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.retry(
    p_run_id uuid,
    p_node text,
    p_additional_attempts int DEFAULT 0,
    p_reason text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_run cyclone.cyclone_runs;
    v_step cyclone.cyclone_steps;
BEGIN
    PERFORM cyclone._require_given('retry', p_node IS NOT NULL AND p_additional_attempts IS NOT NULL,
                             'p_node and p_additional_attempts are required');
    PERFORM cyclone._require('retry', p_additional_attempts >= 0, 'p_additional_attempts must not be negative');
    PERFORM cyclone._require('retry', p_additional_attempts <= 1000000,
                             format('p_additional_attempts must be at most 1000000, got %s', p_additional_attempts));
    v_run := cyclone._lock_existing_run('retry', p_run_id);
    SELECT s.* INTO v_step FROM cyclone_steps s WHERE s.run_id = p_run_id AND s.node = p_node FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'node % of run % not found', cyclone._shown(p_node), p_run_id USING ERRCODE = 'P0002';
    END IF;
    IF v_step.state <> 'discarded' THEN
        RAISE EXCEPTION 'step % ("%") of run % is not discarded (state=%)', v_step.id, p_node, p_run_id, v_step.state
            USING ERRCODE = '55000';
    END IF;
    PERFORM cyclone._reopen(v_run, ARRAY[v_step.id], p_additional_attempts, p_reason);
END
$$;

COMMIT;
