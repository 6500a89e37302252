"""What the chaos soak reads back from its database to judge a soak.

The observer (``OBSERVER``, installed in the soak's private database only)
records every state change of every step, with the clock time of the change
(``at``, ``clock_timestamp()``) and the engine time of its transaction
(``engine_at``, ``now()``: what ``claim`` stamps a rate token with; the soak
never moves the engine clock). Every handler writes a ledger row first
(``apps.chaos._record``). From those two tables and the engine's own:

- :func:`step_audit`: one row per step, with its completions, claims,
  reclaims, failed attempts and executions;
- :func:`concurrency_peaks`: the most steps that ever held each bucket of a
  concurrency limit at once;
- :func:`rate_peaks`: the most claims of each bucket of a rate limit in any
  window of the limit's period;
- :func:`relation_sizes`: the engine's tables and their indexes, on disk.

Why the peaks are sound (no false violation from clock skew between
transactions): a step leaves ``running`` and gives its slot back in one
transaction, whose trigger row is stamped before it commits; a claim can take
that slot only after that commit, and stamps its own row later still. So a
step's ``[entered running, left running]`` interval, by ``at``, covers the
time it held the slot, and two intervals overlap only if the slots were held
at once. A claim stamps its rate token with its transaction's ``now()``, the
same value as its row's ``engine_at``; the engine lets a token be used again
once it is ``period`` old, so ``rate + 1`` claims within less than ``period``
of ``engine_at`` would mean a token was used twice in one window.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg
from apps.chaos import LEDGER_TABLE
from psycopg.rows import dict_row

OBSERVER = LEDGER_TABLE + """
CREATE TABLE public.chaos_transitions (
    id bigserial PRIMARY KEY, step_id bigint NOT NULL, old_state text, new_state text,
    old_generation bigint, new_generation bigint, old_reclaims int, new_reclaims int,
    attempt int, error text, at timestamptz NOT NULL DEFAULT clock_timestamp(),
    engine_at timestamptz NOT NULL DEFAULT now());
CREATE FUNCTION public.chaos_observe() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.chaos_transitions (step_id, old_state, new_state, old_generation, new_generation,
                                          old_reclaims, new_reclaims, attempt, error)
    VALUES (NEW.id, OLD.state, NEW.state, OLD.lease_generation, NEW.lease_generation,
            OLD.reclaims, NEW.reclaims, NEW.attempt, NEW.error);
    RETURN NULL;
END $$;
CREATE TRIGGER chaos_observe AFTER UPDATE ON cyclone.cyclone_steps
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION public.chaos_observe();
-- A step that leaves the live table (archive, or a run of one step that
-- complete_many ends straight into history, docs/history.md) is recorded as a
-- move: new_state 'moved', its row then read from the day tables. A move from
-- running is that step's completion (the day table's row holds the final
-- values, written by the move itself, with no UPDATE to observe); archive moves
-- only steps that are done.
CREATE FUNCTION public.chaos_observe_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.chaos_transitions (step_id, old_state, new_state, old_generation, new_generation,
                                          old_reclaims, new_reclaims, attempt, error)
    VALUES (OLD.id, OLD.state, 'moved', OLD.lease_generation, OLD.lease_generation,
            OLD.reclaims, OLD.reclaims, OLD.attempt, OLD.error);
    RETURN NULL;
END $$;
CREATE TRIGGER chaos_observe_move AFTER DELETE ON cyclone.cyclone_steps
    FOR EACH ROW EXECUTE FUNCTION public.chaos_observe_move();
"""


def query(dsn: str, sql: str, params: Any = None, *, attempts: int = 100) -> list[dict[str, Any]]:
    """Run one statement on a fresh connection, riding out a database restart."""
    for n in range(attempts):
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=5, row_factory=dict_row) as c:
                cur = c.execute(sql, params)
                return cur.fetchall() if cur.description is not None else []
        except psycopg.OperationalError:
            if n == attempts - 1:
                raise
            time.sleep(0.2)
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class StepAudit:
    """One step, and what the observer and the ledger saw of it."""

    id: int
    run_id: Any
    node: str
    kind: str
    state: str
    attempt: int
    reclaims: int
    lease_generation: int
    leased: bool
    has_output: bool
    child_run_id: Any
    completions: int
    completed_from: str | None
    completed_generation: int | None
    left_completed: int
    claims: int
    reclaimed: int
    failed: int
    executions: int
    executed_generations: int
    accepted_executed: bool


_STEP_AUDIT = """
WITH t AS (
    -- a move from running completes the step (see OBSERVER)
    SELECT step_id,
           count(*) FILTER (WHERE new_state = 'completed'
                              OR new_state = 'moved' AND old_state = 'running') AS completions,
           min(old_state) FILTER (WHERE new_state = 'completed'
                                    OR new_state = 'moved' AND old_state = 'running') AS completed_from,
           max(new_generation) FILTER (WHERE new_state = 'completed'
                                         OR new_state = 'moved' AND old_state = 'running')
               AS completed_generation,
           count(*) FILTER (WHERE old_state = 'completed' AND new_state <> 'moved') AS left_completed,
           count(*) FILTER (WHERE new_state = 'running') AS claims,
           count(*) FILTER (WHERE old_state = 'running' AND new_state = 'available'
                              AND new_reclaims = old_reclaims + 1) AS reclaimed,
           count(*) FILTER (WHERE old_state = 'running' AND new_state = 'available'
                              AND new_reclaims = old_reclaims) AS failed
      FROM public.chaos_transitions GROUP BY step_id
), e AS (
    SELECT step_id, count(*) AS executions, count(DISTINCT lease_generation) AS executed_generations,
           array_agg(lease_generation) AS generations
      FROM public.chaos_ledger GROUP BY step_id
)
SELECT s.id, s.run_id, s.node, s.kind, s.state, s.attempt, s.reclaims, s.lease_generation,
       (s.lease_owner IS NOT NULL OR s.lease_expiry IS NOT NULL) AS leased,
       s.output IS NOT NULL AS has_output, s.child_run_id,
       coalesce(t.completions, 0) AS completions, t.completed_from, t.completed_generation,
       coalesce(t.left_completed, 0) AS left_completed, coalesce(t.claims, 0) AS claims,
       coalesce(t.reclaimed, 0) AS reclaimed, coalesce(t.failed, 0) AS failed,
       coalesce(e.executions, 0) AS executions, coalesce(e.executed_generations, 0) AS executed_generations,
       coalesce(s.lease_generation = ANY (e.generations), false) AS accepted_executed
  FROM cyclone.cyclone_steps s LEFT JOIN t ON t.step_id = s.id LEFT JOIN e ON e.step_id = s.id
 ORDER BY s.id
"""


def step_audit(dsn: str) -> list[StepAudit]:
    return [StepAudit(**r) for r in query(dsn, _STEP_AUDIT)]


#: Step kinds that wait for something and are never claimed (SPEC 16-17).
WAITING_KINDS = ("child", "map", "sleep", "event", "await", "wait")


def step_problems(a: StepAudit, *, kept: bool = False) -> list[str]:
    """What is wrong with one step of a finished soak (empty: nothing).
    ``kept``: a step of a rerun that starts completed with its original's
    output (SPEC 17): never claimed, never executed."""
    out = []
    if a.state == "skipped":  # a condition said no (SPEC 16): never claimed, run, completed or given an output
        if a.claims or a.executions or a.completions or a.has_output or a.leased:
            out.append(f"skipped, yet claimed {a.claims}, executed {a.executions}, completed {a.completions}"
                       f" times, output {a.has_output}, leased {a.leased}")
        return out
    if a.state != "completed":
        out.append(f"is {a.state}")
    if a.leased:
        out.append("still holds a lease")
    if not a.has_output:
        out.append("has no output")
    if a.left_completed:
        out.append(f"left completed {a.left_completed} times")
    if kept:
        if a.claims or a.executions or a.completions > 1:
            out.append(f"a kept step was claimed {a.claims}, executed {a.executions}, completed {a.completions}"
                       " times")
        return out
    if a.completions != 1:
        out.append(f"completed {a.completions} times")
    if a.kind in WAITING_KINDS:
        if a.completed_from != "waiting":
            out.append(f"completed from {a.completed_from}, not waiting")
        if a.claims or a.executions:
            out.append(f"a {a.kind} node was claimed {a.claims} times and executed {a.executions} times")
        if a.kind == "child" and a.child_run_id is None:
            out.append("a child node without its child run")
        return out
    if a.completed_from != "running":
        out.append(f"completed from {a.completed_from}, not running")
    if a.completed_generation != a.lease_generation:
        out.append(f"completed under generation {a.completed_generation}, not its last, {a.lease_generation}")
    if a.reclaimed != a.reclaims:
        out.append(f"{a.reclaimed} reclaims observed, {a.reclaims} counted")
    if a.failed != a.attempt - 1:
        out.append(f"{a.failed} failed attempts observed, attempt is {a.attempt}")
    if not a.claims == a.lease_generation == 1 + a.reclaimed + a.failed:
        out.append(f"claims {a.claims}, generation {a.lease_generation}, 1 + {a.reclaimed} + {a.failed}")
    if a.executions == 0:
        out.append("completed without ever executing")
    if a.executions != a.executed_generations:
        out.append(f"a lease generation executed twice ({a.executions} executions, "
                   f"{a.executed_generations} generations)")
    if not a.accepted_executed:
        out.append("the accepted execution is not in the ledger")
    if a.executions - 1 > a.reclaimed + a.failed:
        out.append(f"{a.executions} executions, only {a.reclaimed} reclaims + {a.failed} failed attempts")
    return out


_CONCURRENCY_PEAKS = """
WITH tr AS (
    SELECT step_id, new_state, at, lead(at) OVER (PARTITION BY step_id ORDER BY id) AS left_at
      FROM public.chaos_transitions
), held AS (
    SELECT b.bucket_id, tr.at AS since, coalesce(tr.left_at, 'infinity') AS until
      FROM tr JOIN cyclone.cyclone_steps s ON s.id = tr.step_id
      CROSS JOIN LATERAL unnest(s.buckets) AS b(bucket_id)
     WHERE tr.new_state = 'running'
), ev AS (
    SELECT bucket_id, since AS at, 1 AS d FROM held
    UNION ALL
    SELECT bucket_id, until, -1 FROM held
), counted AS (
    -- a release and a claim at the same instant: the release first
    SELECT bucket_id, sum(d) OVER (PARTITION BY bucket_id ORDER BY at, d ROWS UNBOUNDED PRECEDING) AS running
      FROM ev
)
SELECT k.limit_name AS "limit", k.bucket, l.concurrency, max(c.running)::int AS peak, count(*) / 2 AS holds
  FROM counted c JOIN cyclone.cyclone_buckets k ON k.id = c.bucket_id
  JOIN cyclone.cyclone_limits l ON l.name = k.limit_name
 WHERE l.concurrency IS NOT NULL
 GROUP BY 1, 2, 3 ORDER BY 1, 2
"""


def concurrency_peaks(dsn: str) -> list[dict[str, Any]]:
    """``{limit, bucket, concurrency, peak, holds}`` per bucket of a concurrency limit."""
    return query(dsn, _CONCURRENCY_PEAKS)


_RATE_CLAIMS = """
SELECT k.limit_name AS "limit", k.bucket, l.rate, l.period, t.engine_at
  FROM public.chaos_transitions t JOIN cyclone.cyclone_steps s ON s.id = t.step_id
  CROSS JOIN LATERAL unnest(s.buckets) AS b(bucket_id)
  JOIN cyclone.cyclone_buckets k ON k.id = b.bucket_id
  JOIN cyclone.cyclone_limits l ON l.name = k.limit_name
 WHERE t.new_state = 'running' AND l.rate IS NOT NULL
 ORDER BY 1, 2, t.engine_at
"""


def peak_in_window(times: list[datetime], period: timedelta) -> int:
    """The most of ``times`` (sorted) within less than ``period`` of each other."""
    peak, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] >= period:
            first += 1
        peak = max(peak, last - first + 1)
    return peak


def rate_peaks(dsn: str) -> list[dict[str, Any]]:
    """``{limit, bucket, rate, period, peak, claims}`` per bucket of a rate limit:
    ``peak`` is the most claims within less than one period."""
    by_bucket: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in query(dsn, _RATE_CLAIMS):
        by_bucket.setdefault((r["limit"], r["bucket"]), []).append(r)
    out = []
    for (limit, bucket), rows in sorted(by_bucket.items()):
        period = rows[0]["period"]
        out.append({"limit": limit, "bucket": bucket, "rate": rows[0]["rate"], "period": period.total_seconds(),
                    "peak": peak_in_window([r["engine_at"] for r in rows], period), "claims": len(rows)})
    return out


_RELATION_SIZES = """
SELECT c.relname AS name, pg_relation_size(c.oid) AS heap, pg_indexes_size(c.oid) AS indexes,
       pg_total_relation_size(c.oid) AS total
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'cyclone' AND c.relkind = 'r'
 ORDER BY c.relname
"""


def relation_sizes(dsn: str) -> dict[str, dict[str, int]]:
    """Every table of schema ``cyclone``: its heap, its indexes and the total
    (with TOAST), in bytes."""
    return {r["name"]: {"heap": r["heap"], "indexes": r["indexes"], "total": r["total"]}
            for r in query(dsn, _RELATION_SIZES)}
