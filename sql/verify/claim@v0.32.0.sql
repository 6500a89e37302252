-- Verify cyclone:claim
BEGIN;
SELECT 'cyclone.claim(text, text[], int, interval, text[])'::regprocedure,
       'cyclone.renew(bigint, text, bigint, interval)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.claim(text, text[], int, interval, text[])', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.renew(bigint, text, bigint, interval)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.claim(text, text[], int, interval, text[])', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_client', 'cyclone.claim(text, text[], int, interval, text[])', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.renew(bigint, text, bigint, interval)', 'execute'))::int;
SELECT 1 / (SELECT count(*) = 1 FROM pg_proc WHERE proname = 'claim' AND pronamespace = 'cyclone'::regnamespace)::int;
SELECT 'cyclone._admit(bigint[], int, timestamptz)'::regprocedure, 'cyclone._limited_candidates(timestamptz, text[], text[], int, bigint[])'::regprocedure;
-- 0.32.0: _limited_queues went (the queues are read in the order claim serves them).
SELECT 1 / (to_regprocedure('cyclone._limited_queues(timestamptz)') IS NULL)::int;
SELECT 1 / (SELECT count(*) FROM pg_proc WHERE oid = 'cyclone._admit(bigint[], int, timestamptz)'::regprocedure
                AND prosrc LIKE '%cyclone_free_slots%')::int;
SELECT 1 / (SELECT count(*) FROM pg_proc WHERE proname = 'claim' AND pronamespace = 'cyclone'::regnamespace
                    AND 'lease_expiry' = ANY (proargnames))::int;
-- SPEC 16: a map item's element and position are claim's last columns.
SELECT 1 / (SELECT count(*) FROM pg_proc WHERE proname = 'claim' AND pronamespace = 'cyclone'::regnamespace
                    AND proargnames[array_upper(proargnames, 1)] = 'item_index')::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone.renew(bigint, text, bigint, interval)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
-- Issue 30: a lease TTL is at most 1 day.
SELECT 1 / (pg_get_functiondef('cyclone.claim(text, text[], int, interval, text[])'::regprocedure)
            ~ 'p_lease_ttl must be at most 1 day')::int;
SELECT 1 / (pg_get_functiondef('cyclone.renew(bigint, text, bigint, interval)'::regprocedure)
            ~ 'p_lease_ttl must be at most 1 day')::int;
-- Issue 32: several heartbeats in one call, a held row skipped.
SELECT 'cyclone.renew_many(text, bigint[], bigint[], interval)'::regprocedure;
SELECT 1 / (pg_get_functiondef('cyclone.renew_many(text, bigint[], bigint[], interval)'::regprocedure)
            ~ 'SKIP LOCKED')::int;
-- Issue 35 (SPEC 18): claim's rows say when the lease runs out; release() hands a lease back.
SELECT 1 / (SELECT count(*)::int FROM pg_proc p, unnest(p.proargnames, p.proargmodes) AS a(name, mode)
             WHERE p.oid = 'cyclone.claim(text, text[], integer, interval, text[])'::regprocedure
               AND a.name = 'lease_expiry' AND a.mode = 't');
SELECT 'cyclone.release(bigint, text, bigint)'::regprocedure;
-- Issue 37: a candidate's run is read by a scalar subquery, not a semi-join.
SELECT 1 / (pg_get_functiondef('cyclone.claim(text,text[],integer,interval,text[])'::regprocedure) !~ 'AND EXISTS \(SELECT 1 FROM ONLY cyclone_runs')::int;
-- Issue 37: claim walks queue 0 from the floor tick keeps.
SELECT 'cyclone._refresh_claim_floor(timestamptz)'::regprocedure;
SELECT 1 / (pg_get_functiondef('cyclone.claim(text, text[], int, interval, text[])'::regprocedure)
            ~ 'cyclone_claim_floor')::int;
SELECT 'cyclone._lower_claim_floor(int, timestamptz, bigint)'::regprocedure;
-- Issue 32: each range of queue 0 bounds its last priority, where the index scan stops.
SELECT 1 / (pg_get_functiondef('cyclone.claim(text, text[], int, interval, text[])'::regprocedure)
            ~ 's.priority <= v_hi_p')::int;
-- Issue 32: the floor's priority is read as one value, so the scan ends at the first step not yet due.
SELECT 1 / (pg_get_functiondef('cyclone.claim(text, text[], int, interval, text[])'::regprocedure)
            ~ 's.priority = v_floor_p')::int;
-- 0.26.0: a short claim whose batch held candidates back takes another round past them.
SELECT 1 / (pg_get_functiondef('cyclone.claim(text, text[], int, interval, text[])'::regprocedure)
            ~ 'WHILE v_held AND cardinality\(v_ids\) < p_limit LOOP')::int;
SELECT 1 / (SELECT count(*) = 1 FROM pg_proc WHERE proname = '_limited_candidates'
                AND pronamespace = 'cyclone'::regnamespace)::int;
-- 0.29.0: claim's rows are put in claim order by the position each carries, not by array_position.
SELECT 1 / (pg_get_functiondef('cyclone.claim(text, text[], int, interval, text[])'::regprocedure)
            ~ 'ORDER BY c.ord')::int;
-- 0.32.0: the keyed queues are read a priority at a time in the round-robin's order, up to p_limit.
SELECT 1 / (pg_get_functiondef('cyclone._limited_candidates(timestamptz, text[], text[], int, bigint[])'::regprocedure)
            ~ 'ORDER BY b.served NULLS FIRST, b.id')::int;
ROLLBACK;
