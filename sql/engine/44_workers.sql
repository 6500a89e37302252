-- sql/engine/44_workers.sql: change `workers` — the worker registry (SPEC 18): a worker says it is there,
-- idle or busy, so that an operator sees it (cyclone_v_workers, `cyclone workers`), metrics() counts the live
-- ones (cyclone_workers_alive) and explain_step can tell a claimable step that no live worker would claim.
-- Owns: register_worker, deregister_worker, _forget_workers. The table (cyclone_workers) is in
-- 14_workers_tables.sql, the view (cyclone_v_workers) in 15_views.sql.
-- Requires: 14_workers_tables.sql, 02_clock.sql (now), 03_checks.sql (_require_given, _require,
-- _name_problem, _payload_problem, _shown).
-- Called by: workers (cyclone_worker) at start, on every poll and at a clean exit; cyclone_admin; tick
-- (31_tick.sql) calls _forget_workers.
-- Registering is bookkeeping, never a condition: claim does not look at the registry, so a worker that does
-- not register (an older release, a hand-written script) still works, it is only not listed.
-- Locks: one registry row at a time; nothing else. A refresh is one HOT update (the table has no index but
-- its key, and room on its pages).
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=workers NOTE="..."` (docs/architecture.md, Changing the engine).

-- register_worker: insert or refresh the row of worker p_worker: info replaced by p_info, last_seen_at = now;
-- started_at is kept from the first registration (a worker that deregistered and registers again starts
-- anew). A worker calls it at start and on every poll, so last_seen_at says it is alive (cyclone_v_workers:
-- seen within the last 60 seconds).
-- p_info is what the worker says about itself, a JSON object: by convention handlers and workflows (the
-- p_handlers and p_workflows it claims with; absent or null: any, as in claim), host, pid, version,
-- language, concurrency. explain_step reads handlers and workflows; the rest is for people. It is
-- untrusted like any stored value: at most 64 KiB (a row every reader of the registry reads whole) and the
-- nesting limit of every stored value (_payload_problem).
-- Guards: p_worker and p_info given (22004); p_worker a name (1 to 200 characters, no control characters)
-- and p_info an object within its limits (22023). Nothing is written on an error. Committed with
-- synchronous_commit off, as renew: every worker calls it every poll, and a lost refresh costs nothing.
CREATE OR REPLACE FUNCTION cyclone.register_worker(p_worker text, p_info jsonb DEFAULT '{}'::jsonb)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_problem text := cyclone._name_problem(p_worker);
BEGIN
    PERFORM cyclone._require_given('register_worker', p_worker IS NOT NULL AND p_info IS NOT NULL,
                                   'p_worker and p_info are required');
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION 'register_worker: p_worker % %', cyclone._shown(p_worker), v_problem
            USING ERRCODE = '22023';
    END IF;
    IF jsonb_typeof(p_info) <> 'object' THEN
        RAISE EXCEPTION 'register_worker: p_info must be a JSON object (got %)', jsonb_typeof(p_info)
            USING ERRCODE = '22023';
    ELSIF pg_column_size(p_info) > 65536 THEN
        RAISE EXCEPTION 'register_worker: p_info is % bytes; the limit is 64 KiB', pg_column_size(p_info)
            USING ERRCODE = '22023';
    END IF;
    PERFORM cyclone._check_payload('register_worker: p_info', p_info);
    -- A refresh lost in a crash only makes the worker look a poll older: no WAL flush to wait for (renew).
    PERFORM set_config('synchronous_commit', 'off', true);
    INSERT INTO cyclone_workers AS w (name, info, started_at, last_seen_at)
    VALUES (p_worker, p_info, v_now, v_now)
    ON CONFLICT (name) DO UPDATE SET info = EXCLUDED.info, last_seen_at = EXCLUDED.last_seen_at;
END
$$;
COMMENT ON FUNCTION cyclone.register_worker(text,jsonb) IS 'Insert or refresh a worker''s registry row (SPEC 18): info replaced, last_seen_at = now. Called at start and on every poll.';
REVOKE ALL ON FUNCTION cyclone.register_worker(text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.register_worker(text,jsonb) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.register_worker(text,jsonb) TO cyclone_admin;

-- deregister_worker: a worker's clean exit removes its row; false when there is none (it never registered,
-- or a tick removed it after a day unseen). The steps it still holds are untouched: a worker releases them
-- first (release), or their leases expire. 22004 when p_worker is NULL.
CREATE OR REPLACE FUNCTION cyclone.deregister_worker(p_worker text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    PERFORM cyclone._require_given('deregister_worker', p_worker IS NOT NULL, 'p_worker is required');
    DELETE FROM cyclone_workers WHERE name = p_worker;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION cyclone.deregister_worker(text) IS 'Remove a worker''s registry row at its clean exit (SPEC 18); false when there is none.';
REVOKE ALL ON FUNCTION cyclone.deregister_worker(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.deregister_worker(text) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.deregister_worker(text) TO cyclone_admin;

-- _forget_workers: tick's cleanup: rows unseen for a day go (a worker killed without its clean exit). Rows a
-- refresh holds are skipped (SKIP LOCKED: a tick never waits on a worker's registration; a refreshed row is
-- no longer a day old anyway). The registry is small (one row per worker), so this reads the whole table:
-- no index on last_seen_at, which would make every refresh write an index entry. Returns how many went.
CREATE OR REPLACE FUNCTION cyclone._forget_workers(p_now timestamptz)
RETURNS integer
LANGUAGE sql
AS $$
    WITH gone AS (
        DELETE FROM cyclone.cyclone_workers w
         WHERE w.name IN (SELECT o.name FROM cyclone.cyclone_workers o
                           WHERE o.last_seen_at < p_now - interval '1 day'
                             FOR UPDATE SKIP LOCKED)
        RETURNING 1)
    SELECT count(*)::int FROM gone
$$;
REVOKE ALL ON FUNCTION cyclone._forget_workers(timestamptz) FROM PUBLIC;
