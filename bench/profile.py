"""Section 6 (informational, no target): where the time of the hot path goes.

On one connection, with no handler and no threads, so that only the SQL and
its round trips are measured:

- claim(b) + complete_many(b) in a loop for several batch sizes b, and
  claim(1) + complete() (the unbatched protocol), against the raw queue's
  claim + complete on the same database: ms per step, commits and WAL per step;
- one pass of claim(10) + complete_many(10) under auto_explain (loaded into
  this session only; no restart, no shared_preload_libraries), which gives the
  execution time of every statement, nested ones included, so the cost of each
  statement of the hot path can be read off per step. Instrumentation inflates
  these times a little; compare them with each other, not with the loop.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from typing import Any

import psycopg

from bench import harness, raw_queue
from bench.harness import Databases

logger = logging.getLogger(__name__)

_DURATION = re.compile(r"duration: ([0-9.]+) ms")


def _fill(c: psycopg.Connection[Any], template: str, n: int) -> None:
    harness.clone_runs(c, template, n)
    harness.analyze(c, "cyclone.cyclone_runs", "cyclone.cyclone_steps")


def _loop(c: psycopg.Connection[Any], batch: int, steps: int, single: bool = False) -> dict[str, Any]:
    """Claim ``batch`` and complete them until ``steps`` are done; per-step costs."""
    claim_s = complete_s = 0.0
    calls = done = 0
    lsn = harness.wal_lsn(c)
    commits = 0
    t0 = time.perf_counter()
    while done < steps:
        t = time.perf_counter()
        rows = c.execute("SELECT step_id, lease_generation FROM cyclone.claim('bench-profile', NULL, %s)",
                         (min(batch, steps - done),)).fetchall()
        t1 = time.perf_counter()
        claim_s += t1 - t
        if not rows:
            raise RuntimeError("profile: nothing left to claim")
        if single:
            for sid, gen in rows:
                c.execute("SELECT cyclone.complete(%s, 'bench-profile', %s, '{\"n\": 0}')", (sid, gen))
        else:
            c.execute("SELECT count(*) FROM cyclone.complete_many('bench-profile', %s::bigint[], %s::bigint[], "
                      "%s::jsonb[])", ([r[0] for r in rows], [r[1] for r in rows], ['{"n": 0}'] * len(rows)))
        complete_s += time.perf_counter() - t1
        calls += 1
        commits += 1 + (len(rows) if single else 1)  # autocommit: one per statement
        done += len(rows)
    elapsed = time.perf_counter() - t0
    wal = harness.wal_bytes_since(c, lsn)
    return {
        "batch": batch,
        "steps": done,
        "steps_s": round(done / elapsed, 1),
        "claim_ms_per_call": round(claim_s * 1000 / calls, 3),
        "claim_us_per_step": round(claim_s * 1e6 / done, 1),
        "complete_us_per_step": round(complete_s * 1e6 / done, 1),
        "commits_per_step": round(commits / done, 3),
        "wal_bytes_per_step_clusterwide": round(wal / done, 1),
    }


def _raw_loop(c: psycopg.Connection[Any], jobs: int) -> dict[str, Any]:
    import json

    from bench.apps import work

    c.execute("TRUNCATE bench_raw_jobs")
    raw_queue.seed(c, jobs)
    harness.analyze(c, "bench_raw_jobs")
    claim_s = complete_s = 0.0
    lsn = harness.wal_lsn(c)
    t0 = time.perf_counter()
    for _ in range(jobs):
        t = time.perf_counter()
        row = c.execute(raw_queue.CLAIM).fetchone()
        t1 = time.perf_counter()
        assert row is not None
        c.execute(raw_queue.COMPLETE, (json.dumps(work(row[1])), row[0]))
        claim_s += t1 - t
        complete_s += time.perf_counter() - t1
    elapsed = time.perf_counter() - t0
    wal = harness.wal_bytes_since(c, lsn)
    return {
        "jobs": jobs,
        "jobs_s": round(jobs / elapsed, 1),
        "claim_us_per_job": round(claim_s * 1e6 / jobs, 1),
        "complete_us_per_job": round(complete_s * 1e6 / jobs, 1),
        "wal_bytes_per_job_clusterwide": round(wal / jobs, 1),
    }


def _statements(c: psycopg.Connection[Any], batch: int, steps: int) -> list[dict[str, Any]]:
    """Execution time of every statement (nested included) of ``steps`` steps
    claimed and completed ``batch`` at a time, per step."""
    notes: list[str] = []
    c.add_notice_handler(lambda d: notes.append(d.message_primary or ""))
    c.execute("LOAD 'auto_explain'")
    for k, v in (("log_min_duration", "0"), ("log_analyze", "on"), ("log_timing", "off"),
                 ("log_buffers", "off"), ("log_nested_statements", "on"), ("log_level", "notice")):
        c.execute(f"SET auto_explain.{k} = '{v}'")
    try:
        _loop(c, batch, steps)
    finally:
        c.execute("SET auto_explain.log_min_duration = -1")
    total: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for note in notes:
        m = _DURATION.search(note)
        if not m or "Query Text:" not in note:
            continue
        text = " ".join(note.split("Query Text:", 1)[1].split())
        # The plan follows the query text; keep the statement only.
        key = re.split(r" (?:Result|Aggregate|Function Scan|Update on|Insert on|Delete on|Sort|Limit|LockRows|"
                       r"Index Scan|Index Only Scan|Seq Scan|Nested Loop|Hash|Unique|Bitmap|ProjectSet|"
                       r"CTE Scan|Subquery Scan|Append|Merge|HashAggregate|GroupAggregate|WindowAgg) ", text)[0]
        total[key[:160]] += float(m.group(1))
        count[key[:160]] += 1
    ranked = sorted(total.items(), key=lambda kv: -kv[1])[:20]
    return [{"statement": k, "calls": count[k], "total_ms": round(v, 2), "us_per_step": round(v * 1000 / steps, 1)}
            for k, v in ranked]


def profile(dbs: Databases, cfg: Any) -> dict[str, Any]:
    quick = bool(cfg.quick)
    dsn = dbs.fresh("profile")
    out: dict[str, Any] = {}
    try:
        harness.define_workflows(dsn)
        with psycopg.connect(dsn, autocommit=True) as c:
            template = harness.noop_runs(c, 1)
            n_small = 500 if quick else 2_000
            n_big = 2_000 if quick else 10_000
            # The raw queue before and after the engine's loops, so that a change
            # of load on the machine during the section shows.
            out["raw"] = _raw_loop(c, n_small)
            loops = []
            for batch, n, single in ((1, n_small, True), (1, n_small, False), (10, n_small, False),
                                     (100, n_big, False), (500, n_big, False)):
                _fill(c, template, n)
                res = _loop(c, batch, n, single)
                res["complete"] = "complete" if single else "complete_many"
                loops.append(res)
                logger.info("profile: batch %d (%s): %.0f steps/s", batch, res["complete"], res["steps_s"])
            out["loops"] = loops
            out["raw_after"] = _raw_loop(c, n_small)
            _fill(c, template, 500)
            out["statements_batch10"] = _statements(c, 10, 500)
    finally:
        dbs.drop(dsn)
    return {"details": out}
