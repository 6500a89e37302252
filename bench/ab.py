"""A/B of the engine's SQL: the schema at a git ref (A) vs the working tree or
a second ref (B), same cluster, same worker code, same run, measurements
interleaved A B B A.

    .venv/bin/python -m bench.ab --ref v0.2.0 [--b REF] [--worker REF | --worker-a REF] [--rounds 3] [--quick]

For a change that reworks hot-path functions: submit (one run per
transaction), submit_many (batches of 1,000) and the drain of single-step runs
by one worker (concurrency 10), with the worker's and the database's CPU a
drained step, and the database's CPU a step once the runs the drain left in
the live tables are archived too (``runs_live_after_drain`` says how many;
``drain_to_history_steps_s`` counts the archiving's time with the drain's).
``--drain N`` drains N runs, not 10,000: a release that archives in its tick
(before 0.23.0) pays for that inside a 10,000-step drain only when a tick
falls in its window, which a longer drain evens out.
Prints each round and the median B/A ratio. ``--worker-a REF`` runs side A's
worker with the Python at REF and side B's with this checkout's: with
``--ref HEAD`` (the same SQL on both sides) it compares worker code.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

import psycopg

from bench import harness
from bench.sections import _drain_with_worker, _submit_many
from cyclone_py import db

logger = logging.getLogger(__name__)


def _export(ref: str, into: Path, paths: tuple[str, ...] = ("sqitch.plan", "sqitch.conf", "sql")) -> Path:
    """``paths`` (by default the sqitch project) as they were at ``ref``."""
    archive = subprocess.run(["git", "archive", ref, *paths],
                             cwd=harness.ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _deploy(project: Path, dsn: str) -> None:
    subprocess.run(["sqitch", "--quiet", "deploy", f"db:pg:{db.dbname_of(dsn)}"],
                   cwd=project, env=db.pg_env(dsn), check=True, capture_output=True)


def _submit_one_by_one(dsn: str, n: int) -> float:
    """runs/s of ``n`` cyclone.submit calls, each its own transaction."""
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SELECT cyclone.submit('bench_noop', '{\"n\": 0}')")  # warm the plans
        t = time.perf_counter()
        for i in range(n):
            c.execute("SELECT cyclone.submit('bench_noop', %s::jsonb)", (json.dumps({"n": i}),))
        return n / (time.perf_counter() - t)


def _archive_rest(dsn: str, steps: int) -> tuple[int, float | None, float]:
    """Move what a drain left finished in the live tables into history, as
    ``tick`` would (``archive`` until it moves nothing): how many runs were
    left, the CPU that took the archiving backend, in ms a drained step, and
    the seconds it took.
    A release that archives in its tick leaves part of a step's work after
    the drain's window; this puts it back in the comparison. A release
    without history (before 0.16.0) has nothing to archive: 0 ms."""
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute("SELECT (SELECT count(*) FROM ONLY cyclone.cyclone_runs),"
                        " to_regprocedure('cyclone.archive(integer)') IS NOT NULL").fetchone()
        assert row is not None
        pid = c.info.backend_pid
        before = harness.backend_cpu_s(pid)
        began = time.perf_counter()
        while row[1] and (moved := c.execute("SELECT cyclone.archive(5000)").fetchone()) and moved[0]:
            pass
        wall = time.perf_counter() - began
        after = harness.backend_cpu_s(pid)
    cpu = None if before is None or after is None else round((after - before) * 1000 / steps, 4)
    return int(row[0]), cpu, wall


def _round(cluster: db.EmbeddedCluster, side: str, project: Path, sizes: dict[str, int],
           worker_root: Path | None) -> dict[str, float]:
    name = f"{harness.PREFIX}ab_{side}"
    cluster.drop_database(name)
    dsn = cluster.create_database(name)
    try:
        _deploy(project, dsn)
        harness.define_workflows(dsn)
        submit = _submit_one_by_one(dsn, sizes["submit"])
        with psycopg.connect(dsn, autocommit=True) as c:
            # Steps named too: since hot_path_keys no foreign key cascades from runs to steps.
            c.execute("TRUNCATE cyclone.cyclone_runs, cyclone.cyclone_steps CASCADE")
        many = _submit_many(dsn, "bench_noop", sizes["drain"])
        drain = _drain_with_worker(dsn, sizes["drain"], sizes["drain"], timeout=600, worker_root=worker_root)
        left, archive_cpu, archive_s = _archive_rest(dsn, sizes["drain"])
        server = drain["server_cpu_ms_per_step"]
        return {"submit_runs_s": round(submit, 1), "submit_many_runs_s": round(many, 1),
                "drain_steps_s": drain["steps_s"],
                # Until the drained runs are in history: the drain's window, then the archiving after it.
                "drain_to_history_steps_s": round(drain["steps"] / (drain["seconds"] + archive_s), 1),
                "worker_cpu_ms_per_step": drain["worker_cpu_ms_per_step"],
                "server_cpu_ms_per_step": server,
                "runs_live_after_drain": left,
                "server_cpu_ms_per_step_with_archive": (None if server is None or archive_cpu is None
                                                        else round(server + archive_cpu, 4))}
    finally:
        cluster.drop_database(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.splitlines()[0])
    parser.add_argument("--ref", required=True, help="git ref of side A")
    parser.add_argument("--b", default=None, metavar="REF", help="git ref of side B (default: the working tree)")
    parser.add_argument("--worker", default=None, metavar="REF",
                        help="run the drain's worker with the Python code at REF (default: this checkout); "
                             "a worker newer than side A's schema may call functions A does not have")
    parser.add_argument("--worker-a", default=None, metavar="REF",
                        help="run side A's worker with the Python code at REF, side B's with this checkout's")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks the machinery (tests/test_bench.py)")
    parser.add_argument("--drain", type=int, default=None, metavar="N",
                        help="how many runs the drain drains (default 10,000): a longer one holds the steady state, "
                             "the tick's work included")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    sizes = ({"submit": 20, "drain": 50} if args.smoke else
             {"submit": 1_000, "drain": 2_000} if args.quick else {"submit": 3_000, "drain": 10_000})
    if args.drain is not None:
        if args.drain < 1:
            parser.error("--drain must be positive")
        sizes["drain"] = args.drain
    cluster = db.embedded()
    cluster.start()
    results: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
    with tempfile.TemporaryDirectory() as tmp:
        projects = {"A": _export(args.ref, Path(tmp) / "a"),
                    "B": harness.ROOT if args.b is None else _export(args.b, Path(tmp) / "b")}
        if args.worker is not None and args.worker_a is not None:
            parser.error("--worker and --worker-a exclude each other")
        shared = None if args.worker is None else _export(args.worker, Path(tmp) / "worker", ("cyclone_py", "bench"))
        workers = {"A": shared if args.worker_a is None else _export(args.worker_a, Path(tmp) / "worker_a",
                                                                     ("cyclone_py", "bench")),
                   "B": shared}
        for i in range(args.rounds):
            for side in ("A", "B") if i % 2 == 0 else ("B", "A"):
                r = _round(cluster, side, projects[side], sizes, workers[side])
                results[side].append(r)
                print(f"round {i + 1} {side}: {r}", flush=True)
    summary: dict[str, Any] = {"A": args.ref, "B": args.b or "working tree",
                               "worker": args.worker or "working tree", "worker_a": args.worker_a or "as B",
                               "rounds": args.rounds, "sizes": sizes}
    for key in results["A"][0]:
        a = statistics.median(r[key] or 0 for r in results["A"])
        b = statistics.median(r[key] or 0 for r in results["B"])
        summary[key] = {"A_median": a, "B_median": b, "B_over_A": round(b / a, 3) if a else None}
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
