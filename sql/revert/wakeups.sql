-- Revert cyclone:wakeups to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._claimed(p_worker text, p_asked integer, p_got integer, p_lease_ttl interval, p_now timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
AS $$
BEGIN
    IF p_got >= p_asked THEN
        DELETE FROM cyclone_waiting_workers w WHERE w.worker = p_worker;
    ELSIF NOT EXISTS (SELECT 1 FROM cyclone_waiting_workers w
                       WHERE w.worker = p_worker AND w.until >= p_now + p_lease_ttl / 2) THEN
        INSERT INTO cyclone_waiting_workers AS w (worker, until) VALUES (p_worker, p_now + p_lease_ttl)
        ON CONFLICT (worker) DO UPDATE SET until = excluded.until;
        -- Workers that stopped leave their row; long expired ones go here.
        DELETE FROM cyclone_waiting_workers w WHERE w.until < p_now - interval '1 hour';
    END IF;
END
$$;
COMMENT ON FUNCTION cyclone._claimed(text,integer,integer,interval,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._wake()
 RETURNS void
 LANGUAGE plpgsql
AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM cyclone_waiting_workers w WHERE w.until > cyclone.now()) THEN
        PERFORM pg_notify('cyclone_wakeup', '');
    END IF;
END
$$;
COMMENT ON FUNCTION cyclone._wake() IS NULL;

COMMIT;
