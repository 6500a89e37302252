-- Revert cyclone:prune (back to its v0.15.0 body: row by row, cascades)
BEGIN;

DROP FUNCTION cyclone._drop_history_day(date);
DROP FUNCTION cyclone._forget_runs(regclass, uuid[]);

CREATE OR REPLACE FUNCTION cyclone.prune(p_older_than interval, p_limit int DEFAULT 1000)
RETURNS int
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_count int;
BEGIN
    PERFORM cyclone._require('prune', p_older_than >= interval '0', 'p_older_than must not be negative');
    PERFORM cyclone._require('prune', p_limit > 0, 'p_limit must be positive');
    WITH doomed AS (
        SELECT r.id FROM cyclone_runs r
         WHERE r.state IN ('completed', 'failed', 'cancelled')
           AND r.finished_at < cyclone.now() - p_older_than
           AND NOT EXISTS (SELECT 1 FROM cyclone_runs p
                            WHERE p.id = r.parent_run_id AND p.state IN ('running', 'paused'))
         ORDER BY r.finished_at
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED
    ), gone AS (
        DELETE FROM cyclone_runs r USING doomed d WHERE r.id = d.id RETURNING 1
    )
    SELECT count(*) INTO v_count FROM gone;
    RETURN v_count;
END
$$;
COMMENT ON FUNCTION cyclone.prune(interval, int) IS
    'Delete up to p_limit runs finished more than p_older_than ago, with their steps. Returns how many.';

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.prune(interval, int) TO cyclone_admin;

COMMIT;
