-- Deploy cyclone:wakeups
-- requires: wakeups@v0.17.0 clock
-- A complete copy of sql/engine/40_wakeups.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/40_wakeups.sql: change `wakeups` — who is waiting for work, so that a wake-up (NOTIFY
-- cyclone_wakeup) is sent only when someone will take it (SPEC 5, "Wake-ups"; docs/architecture.md).
-- A NOTIFY is not free: PostgreSQL takes one lock for the whole database from a notifying transaction's
-- pre-commit until its commit is flushed, so every transaction that notifies commits after the previous one,
-- one WAL flush at a time (measured: ten clients submitting, each submit notifying, ran no faster than one).
-- A busy worker needs no wake-up: its own loop claims again as handlers finish. A waiting worker said so
-- with its last claim, which came back with fewer steps than it asked for: claim records it (_claimed) for
-- the claim's lease TTL (a waiting worker claims again at least every poll interval, and each short claim
-- renews it), and forgets it when a claim comes back full. _wake() notifies while any worker is recorded. A
-- worker that registers between a producer's check and the producer's commit can miss that one wake-up and
-- finds the work at its next poll: latency, never loss.
-- Owns: _claimed, _wake. Their table, cyclone_waiting_workers (worker, until), is in 11_limits_tables.sql:
-- unlogged, so after a crash or a failover it starts empty, and waiting workers are back with their next
-- poll. Requires: 02_clock.sql (now). Called by: claim (_claimed, 24_claim.sql); _wake by every transaction
-- that makes a step claimable now: a submit or a child run (_start_runs), the DAG advance (_advance,
-- _advance_runs; 22_advance.sql), a retry due at once (_fail_step, 26_fail.sql) and a slot given back to a
-- bucket that held steps back (35_limits.sql). tick notifies on its own when a claim would take a step
-- (31_tick.sql). Internal: granted to no role.
-- Lock order: _claimed writes its worker's row last in claim's transaction (only claims of the same worker
-- contend for it); _wake reads only.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=wakeups NOTE="..."` (docs/architecture.md, Changing the engine).

-- _claimed: after a claim by p_worker that asked for p_asked steps and got p_got. A short claim records the
-- worker as waiting until p_now + p_lease_ttl, written again only once half of that has passed (so a worker
-- polling an empty queue writes seldom), and deletes the rows of workers expired for over an hour (a worker
-- that stopped leaves its row). A full claim forgets the worker. Runs inside claim, under its settings.
CREATE OR REPLACE FUNCTION cyclone._claimed(
    p_worker text,
    p_asked integer,
    p_got integer,
    p_lease_ttl interval,
    p_now timestamp with time zone)
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
REVOKE ALL ON FUNCTION cyclone._claimed(text,integer,integer,interval,timestamp with time zone) FROM PUBLIC;

-- _wake: NOTIFY cyclone_wakeup, with a constant payload (PostgreSQL sends one per transaction), when a
-- worker is waiting; nothing otherwise.
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
REVOKE ALL ON FUNCTION cyclone._wake() FROM PUBLIC;

COMMIT;
