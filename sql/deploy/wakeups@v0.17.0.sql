-- Deploy cyclone:wakeups
-- requires: clock
-- Who is waiting for work, so that a wake-up is sent only when someone will
-- take it (SPEC 5, "Wake-ups"; docs/architecture.md, "Wake-ups").
--
-- A NOTIFY is not free: PostgreSQL takes one lock for the whole database from
-- a notifying transaction's pre-commit until its commit is flushed, so every
-- transaction that notifies commits after the previous one, one WAL flush at a
-- time (measured: ten clients submitting, each submit notifying, ran no faster
-- than one). A worker that is busy needs no wake-up: its own loop claims again
-- as handlers finish. A worker that is waiting said so with its last claim,
-- which came back with fewer steps than it asked for.
--
-- So claim records its worker here when it comes back short, for the claim's
-- lease TTL (a waiting worker claims again at least every poll interval, and
-- each short claim renews it), and forgets it when it comes back full. _wake()
-- notifies while any worker is recorded. A worker that registers between a
-- producer's check and the producer's commit can miss that one wake-up and
-- finds the work at its next poll: latency, never loss. Unlogged: after a
-- crash or a failover the table starts empty, and waiting workers are back
-- with their next poll.
BEGIN;

CREATE UNLOGGED TABLE cyclone.cyclone_waiting_workers (
    worker text PRIMARY KEY,
    until  timestamptz NOT NULL
);
CREATE INDEX cyclone_waiting_workers_until ON cyclone.cyclone_waiting_workers (until);
COMMENT ON TABLE cyclone.cyclone_waiting_workers IS
    'Workers whose last claim came back short, until its lease TTL ends: a wake-up is sent only while one is here.';

-- After a claim by p_worker that asked for p_asked steps and got p_got: a
-- short claim records the worker until p_now + p_lease_ttl (written again only
-- once half of that has passed, so a worker polling an empty queue writes
-- seldom), a full one forgets it. Called by claim.
CREATE OR REPLACE FUNCTION cyclone._claimed(p_worker text, p_asked int, p_got int, p_lease_ttl interval,
                                            p_now timestamptz)
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

-- NOTIFY cyclone_wakeup (constant payload: one a transaction) when a worker is
-- waiting. Every transaction that makes a step claimable now calls it.
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

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT SELECT ON cyclone.cyclone_waiting_workers TO cyclone_admin;

COMMIT;
