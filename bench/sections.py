"""The measurements. Each takes a fresh database and returns a dict of numbers.

1. drain   Cyclone (one worker process, concurrency 10) vs the raw SKIP LOCKED
           queue (one process, 10 threads), same database, same payloads;
           then the same drain with an async def handler; CPU per step.
2. dag     1 -> 8 -> 1 fan-out/fan-in runs, drained the same way.
3. latency an idle worker; submits spaced 20 ms; submit -> handler start.
4. sql     pgbench: claim 1 + complete it (no Python) vs pgbench -N.
5. scale   claim latency at a small vs a big backlog; table + index size
           before a load of completed runs vs after prune + VACUUM.
6. profile (informational) the SQL hot path alone, per batch size, and the
           cost of each of its statements (bench/profile.py).
7. schedules tick with 1,000 schedules none due vs none; firing 100 slots;
           skipping 1,000 (bench/schedules.py).
8. metrics one scrape of cyclone.metrics() at 1,000,000 finished and
           100,000 live steps vs live steps only (bench/metrics.py).
9. submit  single submit and submit_many against the same rows inserted raw
           (bench/submit.py).
10. xmin   the drain of bench/xmin.py (two SQL connections, claim 100 +
           complete_many) with a REPEATABLE READ transaction held from before
           its submit, against the same drain clean (bench/xmin.py).

Rates are taken from the database's own timestamps (first claim -> last
completion) on both sides of every ratio, so process start-up is excluded the
same way for both.
"""

from __future__ import annotations

import json
import logging
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bench import harness
from bench.harness import Databases
from bench.metrics import metrics
from bench.profile import profile
from bench.schedules import schedules
from bench.submit import submit
from bench.xmin import held_horizon
from cyclone_py import Client, db

logger = logging.getLogger(__name__)

CONCURRENCY = 10
# complete_many finishes a run in the transaction that completes its last step,
# so "every step completed" is "every run finished".
STEPS_DONE = "SELECT count(*) FROM cyclone.cyclone_steps WHERE state = 'completed'"
PGBENCH_SCRIPT = harness.BENCH_DIR / "sql" / "claim_complete.pgbench"


@dataclass(frozen=True)
class Config:
    quick: bool
    drain_runs: int
    dag_runs: int
    latency_submits: int
    latency_spacing: float
    sql_seconds: int
    sql_prefill_per_second: int  # prefill = seconds x this (more than the engine can take)
    pgbench_scale: int
    scale_small: int
    scale_big: int
    claim_samples: int
    prune_baseline: int
    prune_load: int
    dead_letters: int
    drain_timeout: float
    filter_workflows: int  # workflows of the filtered claims (scale), each with its own handler
    filter_runs_each: int  # runs of each, submitted in turns so that they interleave in claim order

    @classmethod
    def make(cls, quick: bool, smoke: bool = False) -> Config:
        if smoke:  # tiny: exercises every section (tests/test_bench.py); the numbers mean nothing
            return cls(quick=True, drain_runs=200, dag_runs=20, latency_submits=20, latency_spacing=0.01,
                       sql_seconds=1, sql_prefill_per_second=5_000, pgbench_scale=1,
                       scale_small=1_000, scale_big=3_000, claim_samples=50,
                       prune_baseline=100, prune_load=500, dead_letters=200, drain_timeout=60,
                       filter_workflows=20, filter_runs_each=10)
        if quick:
            return cls(quick=True, drain_runs=2_000, dag_runs=200, latency_submits=200, latency_spacing=0.02,
                       sql_seconds=5, sql_prefill_per_second=5_000, pgbench_scale=1,
                       scale_small=10_000, scale_big=100_000, claim_samples=300,
                       prune_baseline=1_000, prune_load=10_000, dead_letters=4_000, drain_timeout=120,
                       filter_workflows=1_000, filter_runs_each=10)
        return cls(quick=False, drain_runs=10_000, dag_runs=1_000, latency_submits=200, latency_spacing=0.02,
                   sql_seconds=30, sql_prefill_per_second=5_000, pgbench_scale=10,
                   scale_small=10_000, scale_big=1_000_000, claim_samples=1_000,
                   prune_baseline=10_000, prune_load=100_000, dead_letters=40_000, drain_timeout=600,
                   filter_workflows=1_000, filter_runs_each=100)


def _submit_many(dsn: str, workflow: str, n: int, batch: int = 1_000) -> float:
    """Submit ``n`` runs with inputs {"n": i} via cyclone.submit_many; returns runs/s."""
    t = time.perf_counter()
    with Client(dsn, min_size=1, max_size=1) as client:
        for start in range(0, n, batch):
            client.submit_many(workflow, [{"n": i} for i in range(start, min(n, start + batch))])
    return n / (time.perf_counter() - t)


def _per_step(value: float | None, steps: int, scale: float = 1000.0) -> float | None:
    return None if value is None or steps <= 0 else round(value * scale / steps, 3)


def _drain_with_worker(dsn: str, runs: int, steps: int, timeout: float,
                       worker_root: Path | None = None, worker_args: Sequence[str] = (),
                       before_stop: Callable[[], None] | None = None) -> dict[str, Any]:
    """Start one worker process (with ``worker_args``), wait until all ``steps``
    are completed (so all ``runs`` finished), call ``before_stop``, stop it; the
    rate comes from the steps' own timestamps.

    Commits per step count every transaction of the database during the drain,
    the bench's own read-only polls included (about 20 a second, on both sides)."""
    with harness.connect(dsn) as c:
        harness.analyze(c, "cyclone.cyclone_runs", "cyclone.cyclone_steps")
        harness.reset_stats(c)
        commits_before = harness.commits(c)
        lsn = harness.wal_lsn(c)
    sampler = harness.CpuSampler(dsn)
    worker = harness.start_worker(dsn, concurrency=CONCURRENCY, root=worker_root, args=worker_args)
    sampler.client_pid = worker.proc.pid
    try:
        done = harness.wait_runs_done(dsn, steps, timeout=timeout, proc=worker.proc, poll=0.1, sampler=sampler,
                                      count_sql=STEPS_DONE)
        sampler.sample()
        if before_stop is not None:
            before_stop()
    finally:
        worker.stop()
        sampler.close()
    time.sleep(0.6)  # let the exited backends' statistics land
    with harness.connect(dsn) as c:
        wal = harness.wal_bytes_since(c, lsn)
        row = c.execute(
            "SELECT count(*) FILTER (WHERE state = 'completed'), count(*), "
            "extract(epoch FROM max(finished_at) - min(started_at)), "
            "count(*) FILTER (WHERE attempt > 1 OR reclaims > 0) FROM cyclone.cyclone_steps").fetchone()
        assert row is not None
        failed_runs = c.execute("SELECT count(*) FROM cyclone.cyclone_runs WHERE state <> 'completed'").fetchone()
        commits = harness.commits(c) - commits_before
        functions = harness.function_profile(c)
    completed, total, seconds, retried = int(row[0]), int(row[1]), float(row[2]), int(row[3])
    if completed != steps or total != steps or (failed_runs and failed_runs[0]):
        raise RuntimeError(f"drain incomplete: {completed}/{steps} steps completed, "
                           f"{failed_runs[0] if failed_runs else '?'} runs not completed")
    calls = {p["function"]: p["calls"] for p in functions}
    client_steps = steps - done.first_seen
    worker_cpu = _per_step(sampler.client_s(), client_steps)
    with_startup = worker_cpu is None
    if with_startup:  # the drain ended before the first sample (smoke sizes): the whole process
        worker_cpu = _per_step(sampler.client_total_s(), steps)
    return {
        "steps": completed,
        "seconds": round(seconds, 3),
        "steps_s": round(completed / seconds, 1),
        "wall_s_from_worker_start": round(done.at - worker.started, 3),
        "steps_retried_or_reclaimed": retried,
        "commits_per_step": round(commits / completed, 3),
        "steps_per_claim": round(completed / calls["claim"], 2) if calls.get("claim") else None,
        "steps_per_complete_many": round(completed / calls["complete_many"], 2) if calls.get("complete_many") else None,
        "worker_cpu_ms_per_step": worker_cpu,
        "worker_cpu_includes_startup": with_startup,
        "server_cpu_ms_per_step": _per_step(sampler.server_s(), completed),
        "wal_bytes_per_step_clusterwide": _per_step(wal, completed, 1.0),
        "function_profile": functions[:12],
    }


# -- 1. drain --------------------------------------------------------------------


def _raw_drain(dsn: str, n: int, timeout: float) -> dict[str, Any]:
    from bench import raw_queue

    with harness.connect(dsn) as c:
        raw_queue.seed(c, n)
        harness.analyze(c, "bench_raw_jobs")
        commits_before = harness.commits(c)
        lsn = harness.wal_lsn(c)
    sampler = harness.CpuSampler(dsn)
    t = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "bench.raw_queue", "--dsn", dsn, "--threads", str(CONCURRENCY)],
                            cwd=harness.ROOT)
    sampler.client_pid = proc.pid
    try:
        done = harness.wait_runs_done(dsn, n, timeout=timeout, proc=proc, poll=0.1, sampler=sampler,
                                      count_sql="SELECT count(*) FROM bench_raw_jobs WHERE state = 'done'")
        sampler.sample()
        if proc.wait(30) != 0:
            raise RuntimeError(f"raw queue exited with {proc.returncode}")
    finally:
        if proc.poll() is None:
            proc.kill()
        sampler.close()
    wall = time.time() - t
    time.sleep(0.6)
    with harness.connect(dsn) as c:
        wal = harness.wal_bytes_since(c, lsn)
        commits = harness.commits(c) - commits_before
        row = c.execute("SELECT count(*), extract(epoch FROM max(done_at) - min(claimed_at)) "
                        "FROM bench_raw_jobs WHERE state = 'done'").fetchone()
    assert row is not None
    if int(row[0]) != n:
        raise RuntimeError(f"raw queue drained {row[0]} of {n} jobs")
    return {
        "jobs": n,
        "seconds": round(float(row[1]), 3),
        "jobs_s": round(n / float(row[1]), 1),
        "wall_s_from_process_start": round(wall, 3),
        "commits_per_job": round(commits / n, 3),
        "client_cpu_ms_per_job": _per_step(sampler.client_s(), n - done.first_seen),
        "server_cpu_ms_per_job": _per_step(sampler.server_s(), n),
        "wal_bytes_per_job_clusterwide": _per_step(wal, n, 1.0),
    }


def drain(dbs: Databases, cfg: Config) -> dict[str, Any]:
    n = cfg.drain_runs
    dsn = dbs.fresh("drain", profile=True)
    try:
        harness.define_workflows(dsn)
        raw = _raw_drain(dsn, n, cfg.drain_timeout)
        logger.info("raw queue: %.0f jobs/s", raw["jobs_s"])
        submit_rate = _submit_many(dsn, "bench_noop", n)
        cyc = _drain_with_worker(dsn, n, n, cfg.drain_timeout)
        cyc["submit_many_runs_s"] = round(submit_rate, 1)
        logger.info("cyclone drain: %.0f steps/s (raw %.0f jobs/s)", cyc["steps_s"], raw["jobs_s"])
    finally:
        dbs.drop(dsn)
    # The same drain with an async def handler, in a database of its own.
    adsn = dbs.fresh("drain_async", profile=True)
    try:
        harness.define_workflows(adsn)
        _submit_many(adsn, "bench_anoop", n)
        acyc = _drain_with_worker(adsn, n, n, cfg.drain_timeout)
        logger.info("cyclone drain, async handlers: %.0f steps/s", acyc["steps_s"])
    finally:
        dbs.drop(adsn)
    return {
        "drain_steps_s": cyc["steps_s"],
        "raw_jobs_s": raw["jobs_s"],
        "drain_ratio_vs_raw": round(cyc["steps_s"] / raw["jobs_s"], 3),
        "drain_async_steps_s": acyc["steps_s"],
        "drain_async_ratio_vs_raw": round(acyc["steps_s"] / raw["jobs_s"], 3),
        "cpu_ms_per_step": _cpu_per_step(cyc),
        "details": {"cyclone": cyc, "cyclone_async": acyc, "raw": raw},
    }


def _cpu_per_step(drain: dict[str, Any]) -> float | None:
    """Worker plus database CPU of a drained step (ms), from /proc."""
    worker, server = drain.get("worker_cpu_ms_per_step"), drain.get("server_cpu_ms_per_step")
    return None if worker is None or server is None else round(worker + server, 3)


# -- 2. dag ------------------------------------------------------------------------


def dag(dbs: Databases, cfg: Config) -> dict[str, Any]:
    from bench.apps import FANOUT

    dsn = dbs.fresh("dag", profile=True)
    try:
        harness.define_workflows(dsn)
        runs = cfg.dag_runs
        steps = runs * (FANOUT + 2)
        submit_rate = _submit_many(dsn, "bench_dag", runs, batch=200)
        res = _drain_with_worker(dsn, runs, steps, cfg.drain_timeout)
        res["runs"] = runs
        res["submit_many_runs_s"] = round(submit_rate, 1)
        logger.info("dag drain: %.0f steps/s", res["steps_s"])
        return {"dag_steps_s": res["steps_s"], "details": res}
    finally:
        dbs.drop(dsn)


# -- 3. latency --------------------------------------------------------------------


def latency(dbs: Databases, cfg: Config) -> dict[str, Any]:
    dsn = dbs.fresh("latency")
    try:
        harness.define_workflows(dsn)
        worker = harness.start_worker(dsn, concurrency=CONCURRENCY)
        try:
            harness.wait_listener(dsn, worker)
            time.sleep(1.0)  # idle: past its first claim and tick
            sent: dict[str, float] = {}
            returned: dict[str, float] = {}
            submit_ms: list[float] = []
            with harness.connect(dsn) as c:
                base = time.perf_counter() + 0.05
                for i in range(cfg.latency_submits):
                    target = base + i * cfg.latency_spacing
                    delay = target - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                    t0 = time.time()
                    p0 = time.perf_counter()
                    row = c.execute("SELECT cyclone.submit('bench_latency', %s::jsonb)",
                                    (json.dumps({"i": i}),)).fetchone()
                    submit_ms.append((time.perf_counter() - p0) * 1000)
                    assert row is not None
                    sent[str(row[0])] = t0
                    returned[str(row[0])] = time.time()
            harness.wait_runs_done(dsn, cfg.latency_submits, timeout=60, proc=worker.proc)
        finally:
            worker.stop()
        with harness.connect(dsn) as c:
            rows = c.execute(
                "SELECT s.run_id::text, (s.output->>'t')::float8, extract(epoch FROM r.created_at)::float8, "
                "extract(epoch FROM s.started_at)::float8 FROM cyclone.cyclone_steps s "
                "JOIN cyclone.cyclone_runs r ON r.id = s.run_id WHERE s.state = 'completed'").fetchall()
        lat = [(float(t) - sent[rid]) * 1000 for rid, t, _, _ in rows if rid in sent]
        pickup = [(float(t) - returned[rid]) * 1000 for rid, t, _, _ in rows if rid in returned]
        # Server timestamps are transaction start times: created_at of the submit's
        # transaction, started_at of the claim's.
        to_claim = [(float(st) - float(cr)) * 1000 for _, _, cr, st in rows]
        claim_to_handler = [(float(t) - float(st)) * 1000 for _, t, _, st in rows]
        if len(lat) != cfg.latency_submits:
            raise RuntimeError(f"latency: {len(lat)} of {cfg.latency_submits} handlers reported")
        res = {
            "latency_p50_ms": round(harness.percentile(lat, 50), 2),
            "latency_p95_ms": round(harness.percentile(lat, 95), 2),
            "latency_p99_ms": round(harness.percentile(lat, 99), 2),
            "details": {
                "submits": len(lat),
                "spacing_ms": cfg.latency_spacing * 1000,
                "max_ms": round(max(lat), 2),
                "submit_call_p50_ms": round(harness.percentile(submit_ms, 50), 2),
                "submit_call_p95_ms": round(harness.percentile(submit_ms, 95), 2),
                "pickup_after_submit_returned_p50_ms": round(harness.percentile(pickup, 50), 2),
                "pickup_after_submit_returned_p95_ms": round(harness.percentile(pickup, 95), 2),
                "submit_xact_start_to_claim_xact_start_p50_ms": round(harness.percentile(to_claim, 50), 2),
                "claim_xact_start_to_handler_p50_ms": round(harness.percentile(claim_to_handler, 50), 2),
            },
        }
        logger.info("latency: p50 %.2f ms, p95 %.2f ms", res["latency_p50_ms"], res["latency_p95_ms"])
        return res
    finally:
        dbs.drop(dsn)


# -- 4. sql ceiling ------------------------------------------------------------------

def sql_ceiling(dbs: Databases, cfg: Config) -> dict[str, Any]:
    common = ["-c", str(CONCURRENCY), "-j", "2", "-T", str(cfg.sql_seconds), "-M", "prepared"]
    dsn = dbs.fresh("sql")
    try:
        harness.define_workflows(dsn)
        prefill = cfg.sql_seconds * cfg.sql_prefill_per_second
        with harness.connect(dsn) as c:
            harness.noop_runs(c, prefill)
            harness.analyze(c, "cyclone.cyclone_runs", "cyclone.cyclone_steps")
        ours = harness.pgbench(dsn, ["-n", "-f", str(PGBENCH_SCRIPT), *common])
        with harness.connect(dsn) as c:
            left = c.execute("SELECT count(*) FROM cyclone.cyclone_steps WHERE state = 'available'").fetchone()
            done = c.execute("SELECT count(*) FROM cyclone.cyclone_steps WHERE state = 'completed'").fetchone()
        assert left is not None and done is not None
        if int(left[0]) == 0:
            raise RuntimeError("the pgbench prefill ran out: raise sql_prefill_per_second")
        ours.update(prefilled_runs=prefill, steps_completed=int(done[0]))
    finally:
        dbs.drop(dsn)

    pdsn = dbs.plain("pgbench")
    try:
        cmd = [str(db.PG_BIN / "pgbench"), "-i", "-q", "-s", str(cfg.pgbench_scale)]
        init = subprocess.run(cmd, env=db.pg_env(pdsn), capture_output=True, text=True)
        if init.returncode != 0:
            raise RuntimeError(f"pgbench -i failed: {init.stderr.strip()[-500:]}")
        theirs = harness.pgbench(pdsn, ["-N", *common])
        theirs["scale"] = cfg.pgbench_scale
    finally:
        dbs.drop(pdsn)
    logger.info("sql ceiling: %.0f claim+complete/s vs pgbench -N %.0f tps", ours["tps"], theirs["tps"])
    return {
        "sql_tps": ours["tps"],
        "pgbench_tps": theirs["tps"],
        "sql_ratio_vs_pgbench": round(ours["tps"] / theirs["tps"], 3),
        "details": {"clients": CONCURRENCY, "seconds": cfg.sql_seconds, "protocol": "prepared",
                    "cyclone": ours, "pgbench_N": theirs},
    }


# -- 5. scale ------------------------------------------------------------------------


def _claim_latencies(c: psycopg.Connection[Any], samples: int, limit: int = 1,
                     filters: Callable[[int], tuple[list[str] | None, list[str] | None]] | None = None,
                     ) -> tuple[list[float], list[float]]:
    """``samples`` x (claim ``limit``, then complete what it took): the claim's and the completes'
    client-side round-trip times in ms. ``filters(i)`` gives the i-th claim's handlers and workflows
    (a worker's filter; none by default)."""
    claim_ms: list[float] = []
    complete_ms: list[float] = []
    for i in range(samples):
        handlers, workflows = filters(i) if filters is not None else (None, None)
        t = time.perf_counter()
        rows = c.execute("SELECT step_id, lease_generation FROM cyclone.claim('bench-scale', %s, %s, "
                         "'30 seconds', %s)", (handlers, limit, workflows)).fetchall()
        claim_ms.append((time.perf_counter() - t) * 1000)
        if not rows:
            raise RuntimeError("scale: nothing left to claim")
        t = time.perf_counter()
        for step_id, generation in rows:
            c.execute("SELECT cyclone.complete(%s, 'bench-scale', %s, '{\"n\": 0}')", (step_id, generation))
        complete_ms.append((time.perf_counter() - t) * 1000)
    return claim_ms, complete_ms


def _sizes(c: psycopg.Connection[Any]) -> dict[str, int]:
    row = c.execute(
        "SELECT pg_total_relation_size('cyclone.cyclone_runs') + pg_total_relation_size('cyclone.cyclone_steps'), "
        "pg_table_size('cyclone.cyclone_runs') + pg_table_size('cyclone.cyclone_steps'), "
        "pg_indexes_size('cyclone.cyclone_runs') + pg_indexes_size('cyclone.cyclone_steps')").fetchone()
    assert row is not None
    return {"total": int(row[0]), "tables": int(row[1]), "indexes": int(row[2])}


def _index_mb(c: psycopg.Connection[Any]) -> dict[str, float]:
    rows = c.execute(
        "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index "
        "WHERE indrelid IN ('cyclone.cyclone_runs'::regclass, 'cyclone.cyclone_steps'::regclass) "
        "ORDER BY 2 DESC").fetchall()
    return {str(n): harness.mb(int(b)) for n, b in rows}


def _tick_ms(c: psycopg.Connection[Any], samples: int = 30) -> float:
    """Median time of one ``cyclone.tick()`` call, in ms (each worker calls it
    every poll interval)."""
    return harness.median_ms(c, "SELECT cyclone.tick(3)", samples)


def _load_and_prune(c: psycopg.Connection[Any], template: str, n: int) -> dict[str, Any]:
    """``n`` runs (copies of ``template``) completed through claim(500) +
    complete_many, then prune(interval '0') until 0 and a VACUUM; the sizes."""
    harness.clone_runs(c, template, n)
    harness.analyze(c, "cyclone.cyclone_runs", "cyclone.cyclone_steps")
    done = 0
    while True:
        rows = c.execute("SELECT step_id, lease_generation FROM cyclone.claim('bench-prune', NULL, 500)").fetchall()
        if not rows:
            break
        c.execute("SELECT count(*) FROM cyclone.complete_many('bench-prune', %s::bigint[], %s::bigint[], "
                  "%s::jsonb[])", ([r[0] for r in rows], [r[1] for r in rows], ['{"n": 0}'] * len(rows)))
        done += len(rows)
    if done < n:
        raise RuntimeError(f"prune: completed {done} of {n} runs")
    # Statistics still count the drained backlog as available here.
    tick_ms = _tick_ms(c)
    peak = _sizes(c)
    pruned = 0
    t = time.perf_counter()
    while True:
        row = c.execute("SELECT cyclone.prune(interval '0', 1000)").fetchone()
        assert row is not None
        if not row[0]:
            break
        pruned += int(row[0])
    prune_s = time.perf_counter() - t
    c.execute("VACUUM cyclone.cyclone_runs, cyclone.cyclone_steps")
    return {"peak": peak, "after": _sizes(c), "indexes_after": _index_mb(c), "pruned": pruned,
            "prune_runs_s": round(pruned / prune_s, 1) if prune_s else None, "tick_ms_after_drain": tick_ms}


def scale(dbs: Databases, cfg: Config) -> dict[str, Any]:
    res: dict[str, Any] = {}
    details: dict[str, Any] = {}
    dsn = dbs.fresh("scale")
    try:
        harness.define_workflows(dsn)
        with harness.connect(dsn) as c:
            template = harness.noop_runs(c, cfg.scale_small)
            # Right after a bulk load, before any ANALYZE (autovacuum has not run yet).
            cold, _ = _claim_latencies(c, 10)
            harness.analyze(c, "cyclone.cyclone_runs", "cyclone.cyclone_steps")
            small, small_complete = _claim_latencies(c, cfg.claim_samples)
            t = time.perf_counter()
            harness.clone_runs(c, template, cfg.scale_big - cfg.scale_small)
            fill_s = time.perf_counter() - t
            harness.analyze(c, "cyclone.cyclone_runs", "cyclone.cyclone_steps")
            big, big_complete = _claim_latencies(c, cfg.claim_samples)
            # The same backlog as a worker sees it: tick sets claim's floor (cyclone_claim_floor), and claim
            # reads queue 0 in ranges from it (each range's scan must end where the range does).
            c.execute("SELECT cyclone.tick()")
            big_floor, _ = _claim_latencies(c, cfg.claim_samples)
        ms_small, ms_big = statistics.median(small), statistics.median(big)
        res["claim_ms_10k"] = round(ms_small, 3)
        res["claim_ms_1m"] = round(ms_big, 3)
        res["claim_1m_vs_10k"] = round(ms_big / ms_small, 3)
        details["claim"] = {
            "backlog_small": cfg.scale_small,
            "backlog_big": cfg.scale_big,
            "samples": cfg.claim_samples,
            "claim_p95_ms_small": round(harness.percentile(small, 95), 3),
            "claim_p95_ms_big": round(harness.percentile(big, 95), 3),
            "complete_ms_small": round(statistics.median(small_complete), 3),
            "complete_ms_big": round(statistics.median(big_complete), 3),
            "claim_ms_small_before_analyze": round(statistics.median(cold), 3),
            "claim_ms_big_with_floor": round(statistics.median(big_floor), 3),
            "fill_runs_s": round((cfg.scale_big - cfg.scale_small) / fill_s, 1),
        }
        logger.info("scale: claim %.3f ms at %d, %.3f ms at %d", ms_small, cfg.scale_small, ms_big, cfg.scale_big)
    finally:
        dbs.drop(dsn)

    # A claim that finds nothing due while the big backlog waits for tomorrow: what an idle worker's poll
    # costs. scheduled_at <= now ends only a scan of one priority; claim reads the floor's priority as one
    # (docs/performance.md, Built in 0.25.0: 70.8 ms at 1,000,000 before).
    dsn = dbs.fresh("scale_future")
    try:
        harness.define_workflows(dsn)
        with harness.connect(dsn) as c:
            harness.noop_runs(c, cfg.scale_big, tomorrow=True)
            harness.analyze(c, "cyclone.cyclone_runs", "cyclone.cyclone_steps")
            c.execute("SELECT cyclone.tick()")
            details["claim"]["claim_ms_nothing_due_big_future_backlog"] = harness.median_ms(
                c, "SELECT count(*) FROM cyclone.claim('bench-scale', NULL, 10)", 20)
    finally:
        dbs.drop(dsn)

    # Claims of workers that each serve one workflow of many (issue 32), from one backlog in which the
    # workflows' steps interleave: the claim walks queue 0 in claim order and passes over the other
    # workflows' steps. Rotating: each claim is another worker's, as when every worker keeps pace; one: a
    # single worker drains its own workflow, each claim farther down the backlog than the last (a worker
    # ahead of the others, or the others stopped). Against unfiltered claims of the same backlog.
    dsn = dbs.fresh("scale_filters")
    try:
        n, each = cfg.filter_workflows, cfg.filter_runs_each
        with harness.connect(dsn) as c:
            c.execute("SELECT count(cyclone.define_workflow('bench_f' || i, jsonb_build_object('nodes', "
                      "jsonb_build_array(jsonb_build_object('name', 'a', 'handler', 'bench_h' || i))))) "
                      "FROM generate_series(1, %s) i", (n,))
            for _ in range(each):
                c.execute("SELECT count(cyclone.submit('bench_f' || i, '{}')) FROM generate_series(1, %s) i", (n,))
            harness.analyze(c, "cyclone.cyclone_runs", "cyclone.cyclone_steps")
            samples = min(cfg.claim_samples, n * each // 4)

            def rotating(i: int) -> tuple[list[str] | None, list[str] | None]:
                k = 1 + i * 7919 % (n - 1)  # another workflow each time, all but the last in turn
                return [f"bench_h{k}"], [f"bench_f{k}"]

            def one(i: int) -> tuple[list[str] | None, list[str] | None]:
                return [f"bench_h{n}"], [f"bench_f{n}"]

            plain, _ = _claim_latencies(c, samples)
            turns, _ = _claim_latencies(c, samples, filters=rotating)
            alone, _ = _claim_latencies(c, min(samples, each // 2), filters=one)
        filters = {"workflows": n, "runs_each": each,
                   "claim_ms_unfiltered": round(statistics.median(plain), 3),
                   "claim_ms_filter_rotating": round(statistics.median(turns), 3),
                   "claim_ms_filter_one_workflow": round(statistics.median(alone), 3)}
        filters["rotating_vs_unfiltered"] = round(
            filters["claim_ms_filter_rotating"] / filters["claim_ms_unfiltered"], 3)
        filters["one_workflow_vs_unfiltered"] = round(
            filters["claim_ms_filter_one_workflow"] / filters["claim_ms_unfiltered"], 3)
        details["claim"]["workflow_filters"] = filters
        res["claim_filter_vs_unfiltered"] = filters["rotating_vs_unfiltered"]
        logger.info("scale: claims filtered to one of %d workflows %.3f ms (one worker alone %.3f), unfiltered %.3f",
                    n, filters["claim_ms_filter_rotating"], filters["claim_ms_filter_one_workflow"],
                    filters["claim_ms_unfiltered"])
    finally:
        dbs.drop(dsn)

    # tick() with a dead-letter queue: each worker calls it every poll interval.
    dsn = dbs.fresh("dlq")
    try:
        harness.define_workflows(dsn)
        with harness.connect(dsn) as c:
            idle = _tick_ms(c)
            harness.noop_runs(c, cfg.dead_letters)
            harness.analyze(c, "cyclone.cyclone_runs", "cyclone.cyclone_steps")
            while c.execute("SELECT count(cyclone.fail(step_id, 'bench-dlq', lease_generation, 'boom', 'permanent')) "
                            "FROM cyclone.claim('bench-dlq', NULL, 1000)").fetchone() != (0,):
                pass
            harness.analyze(c, "cyclone.cyclone_runs", "cyclone.cyclone_steps")
            res["tick_ms_dead_letters"] = _tick_ms(c)
            details["tick"] = {"tick_ms_idle": idle, "dead_letters": cfg.dead_letters}
    finally:
        dbs.drop(dsn)

    dsn = dbs.fresh("prune")
    try:
        harness.define_workflows(dsn)
        with harness.connect(dsn) as c:
            # The baseline: runs scheduled for tomorrow, which the load never claims.
            harness.noop_runs(c, cfg.prune_baseline, tomorrow=True)
            c.execute("VACUUM (ANALYZE) cyclone.cyclone_runs, cyclone.cyclone_steps")
            before = _sizes(c)
            indexes_before = _index_mb(c)
            # The load: runs due now, completed through claim + complete_many, then
            # pruned and vacuumed; twice, to see whether the second cycle reuses
            # the space the first one left.
            load_template = harness.noop_runs(c, 1)
            cycles = []
            for cycle in (1, 2):
                cycles.append(_load_and_prune(c, load_template, cfg.prune_load - (1 if cycle == 1 else 0)))
            left = c.execute("SELECT count(*) FROM cyclone.cyclone_runs").fetchone()
            # What an operator's REINDEX CONCURRENTLY would give back (not part of the target).
            c.execute("REINDEX TABLE CONCURRENTLY cyclone.cyclone_steps")
            c.execute("REINDEX TABLE CONCURRENTLY cyclone.cyclone_runs")
            reindexed = _sizes(c)
        after = cycles[0]["after"]
        res["size_ratio_after_prune"] = round(after["total"] / before["total"], 3)
        details["prune"] = {
            "baseline_runs": cfg.prune_baseline,
            "load_runs": cfg.prune_load,
            "runs_left": int(left[0]) if left else None,
            "mb_before": {k: harness.mb(v) for k, v in before.items()},
            "index_mb_before": indexes_before,
            "cycles": [{
                "pruned_runs": cy["pruned"],
                "prune_runs_s": cy["prune_runs_s"],
                "mb_peak": {k: harness.mb(v) for k, v in cy["peak"].items()},
                "mb_after_prune_vacuum": {k: harness.mb(v) for k, v in cy["after"].items()},
                "index_mb_after_prune_vacuum": cy["indexes_after"],
                "tick_ms_after_drain": cy["tick_ms_after_drain"],
            } for cy in cycles],
            "size_ratio_after_second_cycle": round(cycles[1]["after"]["total"] / before["total"], 3),
            "mb_after_reindex_concurrently": {k: harness.mb(v) for k, v in reindexed.items()},
            "size_ratio_after_reindex": round(reindexed["total"] / before["total"], 3),
        }
        logger.info("prune: %.2f MB before, %.2f MB peak, %.2f MB after (second cycle: %.2f MB)",
                    harness.mb(before["total"]), harness.mb(cycles[0]["peak"]["total"]), harness.mb(after["total"]),
                    harness.mb(cycles[1]["after"]["total"]))
    finally:
        dbs.drop(dsn)
    res["details"] = details
    return res


SECTIONS = {"drain": drain, "dag": dag, "latency": latency, "sql": sql_ceiling, "scale": scale,
            "profile": profile, "schedules": schedules, "metrics": metrics,
            "submit": submit, "xmin": held_horizon}
