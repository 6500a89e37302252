"""Plumbing shared by the sections: databases, the worker process, waiting.

Databases: one sqitch-deployed template per bench run
(``cyclone_bench_<pid>_tpl``) and, per section, a fresh copy of it
(``cyclone_bench_<pid>_<section>``). Everything is dropped at the end; copies
left behind by a bench that was killed are dropped by the next run.

Bench-only SQL (schema ``bench``, bench/sql/helpers.sql) is loaded into the
section databases only, never into the engine's deployment.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from cyclone_py import db

logger = logging.getLogger(__name__)

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
PREFIX = "cyclone_bench_"
_NAME_RE = re.compile(r"^cyclone_bench_([0-9]+)_")


class Databases:
    """The template and the per-section databases of one bench run."""

    def __init__(self, cluster: db.EmbeddedCluster) -> None:
        self.cluster = cluster
        self.tag = f"{PREFIX}{os.getpid()}"
        self.template = f"{self.tag}_tpl"
        self.created: list[str] = []

    def drop_stale(self) -> None:
        """Drop bench databases of bench processes that no longer exist."""
        self.cluster.drop_stale_databases(_NAME_RE.pattern)

    def deploy_template(self) -> None:
        self.created.append(self.template)  # dropped by drop_all, even half-made
        self.cluster.deploy_template(self.template)

    def fresh(self, section: str, *, profile: bool = False) -> str:
        """A new database copied from the template, with the bench helpers; its DSN.

        ``profile`` turns on ``track_functions = 'pl'`` for that database only
        (no restart needed), so that pg_stat_user_functions says where the
        time in PL/pgSQL goes."""
        name = f"{self.tag}_{section}"
        self._drop(name)
        dsn = self.cluster.create_database(name, template=self.template)
        self.created.append(name)
        if profile:
            with self.cluster.admin() as c:
                c.execute(sql.SQL("ALTER DATABASE {} SET track_functions = 'pl'").format(sql.Identifier(name)))
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute((BENCH_DIR / "sql" / "helpers.sql").read_text())
        return dsn

    def plain(self, section: str) -> str:
        """A new empty database (for pgbench's own tables); its DSN."""
        name = f"{self.tag}_{section}"
        self._drop(name)
        self.created.append(name)
        return self.cluster.create_database(name)

    def drop(self, dsn: str) -> None:
        name = db.dbname_of(dsn)
        self._drop(name)
        if name in self.created:
            self.created.remove(name)

    def drop_all(self) -> None:
        for name in reversed(self.created):
            with contextlib.suppress(psycopg.Error):
                self._drop(name)
        self.created.clear()

    def _drop(self, name: str) -> None:
        self.cluster.drop_database(name)


# -- the worker process ----------------------------------------------------------


@dataclass
class WorkerProcess:
    proc: subprocess.Popen[bytes]
    started: float  # time.time() just before Popen

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM (warm stop), then SIGKILL if it does not exit in time."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


def start_worker(dsn: str, *, concurrency: int = 10, poll_interval: float = 1.0,
                 root: Path | None = None, args: Sequence[str] = ()) -> WorkerProcess:
    """One ``cyclone worker`` process serving bench.apps:app, with the code of
    ``root`` (default: this checkout; bench.ab runs another release's worker)
    and the options ``args`` besides (bench.metrics_cost: ``--metrics-listen``)."""
    root = ROOT if root is None else root
    cmd = [
        sys.executable, "-m", "cyclone_py.cli", "--dsn", dsn, "worker",
        "--app", "bench.apps:app",
        "--concurrency", str(concurrency),
        "--poll-interval", str(poll_interval),
        "--shutdown-grace", "5",
        "--log-level", os.environ.get("CYCLONE_BENCH_WORKER_LOG", "WARNING"),
        *args,
    ]
    t = time.time()
    proc = subprocess.Popen(cmd, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    return WorkerProcess(proc=proc, started=t)


def wait_listener(dsn: str, worker: WorkerProcess, timeout: float = 30.0) -> None:
    """Wait until the worker has registered its workflows and LISTENs."""
    name = db.dbname_of(dsn)
    deadline = time.monotonic() + timeout
    with psycopg.connect(dsn, autocommit=True) as c:
        while time.monotonic() < deadline:
            if worker.proc.poll() is not None:
                raise RuntimeError(f"worker exited with {worker.proc.returncode}")
            row = c.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s "
                "AND application_name = 'cyclone-listener' AND state = 'idle'", (name,)).fetchone()
            if row and row[0]:
                return
            time.sleep(0.05)
    raise TimeoutError("worker did not start listening in time")


@dataclass
class Done:
    at: float  # time.time() when all runs were seen finished
    first_seen: int  # runs already finished when the client's CPU clock was started


RUNS_FINISHED = "SELECT count(*) FROM cyclone.cyclone_runs WHERE finished_at IS NOT NULL"


def wait_runs_done(dsn: str, expected: int, *, timeout: float, proc: subprocess.Popen[bytes] | None = None,
                   poll: float = 0.1, sampler: CpuSampler | None = None, count_sql: str = RUNS_FINISHED) -> Done:
    """Poll (cheaply: one count a ``poll`` seconds) until ``count_sql`` reaches
    ``expected``. With a sampler, sample CPU at each poll and start the client's
    CPU clock at the first poll that sees some work done."""
    deadline = time.monotonic() + timeout
    first_seen: int | None = None
    with psycopg.connect(dsn, autocommit=True) as c:
        if sampler is not None:
            sampler.exclude(c.info.backend_pid)
        while True:
            row = c.execute(count_sql).fetchone()
            if sampler is not None:
                if first_seen is None and row and row[0] > 0:
                    first_seen = int(row[0])
                    sampler.start_client()
                sampler.sample()
            if row and row[0] >= expected:
                return Done(at=time.time(), first_seen=first_seen or 0)
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"{proc.args!r} exited with {proc.returncode} before the drain finished")
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {row[0] if row else 0} of {expected} runs finished in {timeout:.0f}s")
            time.sleep(poll)


# -- where the CPU goes -----------------------------------------------------------

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_cpu_s(pid: int) -> float | None:
    """utime + stime of a process (all its threads), in seconds; None if gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def backend_cpu_s(pid: int) -> float | None:
    """The CPU time of a process on this machine, in seconds, from the
    scheduler's nanosecond clock (``/proc/<pid>/schedstat``; the 10 ms ticks of
    ``/proc/<pid>/stat`` where it is missing); None if gone."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, IndexError, ValueError):
        return proc_cpu_s(pid)


class CpuSampler:
    """CPU seconds used by one client process and by the server backends of one
    database, sampled from /proc while they run.

    Backends: the last value seen counts (what a backend spends between the last
    sample and its exit is missed, at most one poll interval of it). Client: the
    CPU between :meth:`start_client` (called once the work has begun, so that
    interpreter start-up is excluded) and the last sample."""

    def __init__(self, dsn: str) -> None:
        self.dbname = db.dbname_of(dsn)
        self._conn = psycopg.connect(dsn, autocommit=True)
        self._exclude = {self._conn.info.backend_pid}
        self._backends: dict[int, float] = {}
        self.client_pid: int | None = None
        self._client_first: float | None = None
        self._client_last: float | None = None

    def exclude(self, pid: int) -> None:
        self._exclude.add(pid)

    def start_client(self) -> None:
        if self.client_pid is not None and self._client_first is None:
            self._client_first = proc_cpu_s(self.client_pid)

    def sample(self) -> None:
        pids = [int(r[0]) for r in self._conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.dbname,))]
        for pid in pids:
            if pid not in self._exclude:
                cpu = proc_cpu_s(pid)
                if cpu is not None:
                    self._backends[pid] = cpu
        if self.client_pid is not None:
            cpu = proc_cpu_s(self.client_pid)
            if cpu is not None:
                self._client_last = cpu

    def server_s(self) -> float:
        return sum(self._backends.values())

    def client_s(self) -> float | None:
        if self._client_first is None or self._client_last is None:
            return None
        return self._client_last - self._client_first

    def client_total_s(self) -> float | None:
        """The client's CPU since it started, interpreter start-up included."""
        return self._client_last

    def close(self) -> None:
        self._conn.close()


# -- reading the database -------------------------------------------------------


def connect(dsn: str) -> psycopg.Connection[Any]:
    """An autocommit connection to a bench database."""
    return psycopg.connect(dsn, autocommit=True)


def mb(n: int) -> float:
    """Bytes in MB (2 decimals), as the reports print sizes."""
    return round(n / 1048576, 2)


def define_workflows(dsn: str) -> None:
    from bench.apps import app
    from cyclone_py import Client

    with Client(dsn, min_size=1, max_size=1) as client:
        for name, definition in app.definitions():
            client.define_workflow(name, definition)


def noop_runs(conn: psycopg.Connection[Any], n: int, *, tomorrow: bool = False) -> str:
    """``n`` runs of ``bench_noop``: one made by cyclone.submit (scheduled a day
    from now when ``tomorrow``), and ``n - 1`` copies of it; the first one's id."""
    row = conn.execute("SELECT cyclone.submit('bench_noop', '{\"n\": 0}', NULL, NULL, "
                       "CASE WHEN %s THEN cyclone.now() + interval '1 day' END)", (tomorrow,)).fetchone()
    assert row is not None
    template = str(row[0])
    clone_runs(conn, template, n - 1)
    return template


def clone_runs(conn: psycopg.Connection[Any], template: str, n: int, batch: int = 100_000) -> None:
    """``n`` copies of a run made by cyclone.submit (bench.clone_runs), in batches."""
    left = n
    while left > 0:
        k = min(batch, left)
        conn.execute("SELECT bench.clone_runs(%s, %s)", (template, k))
        left -= k


def archive_finished(conn: psycopg.Connection[Any], batch: int = 100_000) -> int:
    """Move the finished runs a loader wrote straight into the live table into
    their days' history tables, as ``tick()`` does in a running deployment
    (docs/history.md): queue them for ``archive()`` as ending them would have,
    archive until none is left, and analyze each day. How many runs moved."""
    conn.execute("INSERT INTO cyclone.cyclone_archive_queue (run_id, finished_at) "
                 "SELECT r.id, r.finished_at FROM ONLY cyclone.cyclone_runs r WHERE r.finished_at IS NOT NULL "
                 "EXCEPT ALL SELECT q.run_id, q.finished_at FROM cyclone.cyclone_archive_queue q")
    moved = 0
    while True:
        row = conn.execute("SELECT cyclone.archive(%s)", (batch,)).fetchone()
        n = int(row[0]) if row else 0
        moved += n
        if n == 0:
            break
    # Statistics of each day, as autovacuum gathers them once a day's table
    # has grown (ANALYZE of a parent covers the tree as a whole, not each day).
    for runs, steps in conn.execute("SELECT runs::text, steps::text FROM cyclone.cyclone_history").fetchall():
        conn.execute(sql.SQL("ANALYZE {}, {}").format(sql.SQL(runs), sql.SQL(steps)))
    return moved


def analyze(conn: psycopg.Connection[Any], *tables: str) -> None:
    for t in tables:
        conn.execute(sql.SQL("ANALYZE {}").format(sql.SQL(t)))


def wal_lsn(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()
    return str(row[0]) if row else "0/0"


def wal_bytes_since(conn: psycopg.Connection[Any], lsn: str) -> int:
    """WAL written since ``lsn``, by the whole cluster (other databases included)."""
    row = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s::pg_lsn)", (lsn,)).fetchone()
    return int(row[0]) if row else 0


def commits(conn: psycopg.Connection[Any]) -> int:
    conn.execute("SELECT pg_stat_clear_snapshot()")
    row = conn.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").fetchone()
    return int(row[0]) if row else 0


def function_profile(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    """pg_stat_user_functions of schema cyclone (needs track_functions)."""
    conn.execute("SELECT pg_stat_clear_snapshot()")
    rows = conn.execute(
        "SELECT funcname, calls, round(total_time::numeric, 1), round(self_time::numeric, 1) "
        "FROM pg_stat_user_functions WHERE schemaname = 'cyclone' ORDER BY total_time DESC").fetchall()
    return [{"function": r[0], "calls": int(r[1]), "total_ms": float(r[2]), "self_ms": float(r[3])} for r in rows]


def reset_stats(conn: psycopg.Connection[Any]) -> None:
    conn.execute("SELECT pg_stat_reset()")


def median_ms(conn: psycopg.Connection[Any], query: str, samples: int, digits: int = 3) -> float:
    """The median wall time of ``query`` on ``conn`` over ``samples`` calls, in
    ms (client round trip included)."""
    times = []
    for _ in range(samples):
        t = time.perf_counter()
        conn.execute(query).fetchall()
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), digits)


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty sequence."""
    s = sorted(values)
    k = max(1, math.ceil(p / 100.0 * len(s)))
    return s[min(k, len(s)) - 1]


@contextlib.contextmanager
def timed(what: str) -> Iterator[None]:
    t = time.perf_counter()
    try:
        yield
    finally:
        logger.info("%s: %.1fs", what, time.perf_counter() - t)


_TPS_RE = re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)", re.M)
_XACTS_RE = re.compile(r"^number of transactions actually processed: ([0-9]+)", re.M)
_LAT_RE = re.compile(r"^latency average = ([0-9.]+) ms", re.M)


def pgbench(dsn: str, args: list[str]) -> dict[str, Any]:
    """Runs pgbench with ``args`` against ``dsn``: tps, transactions, average latency, WAL per transaction."""
    cmd = [str(db.PG_BIN / "pgbench"), *args]
    with psycopg.connect(dsn, autocommit=True) as c:
        lsn = wal_lsn(c)
    proc = subprocess.run(cmd, env=db.pg_env(dsn), capture_output=True, text=True, cwd=ROOT)
    with psycopg.connect(dsn, autocommit=True) as c:
        wal = wal_bytes_since(c, lsn)
    if proc.returncode != 0:
        raise RuntimeError(f"pgbench {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    out = proc.stdout
    tps, xacts, lat = _TPS_RE.search(out), _XACTS_RE.search(out), _LAT_RE.search(out)
    if not tps or not xacts:
        raise RuntimeError(f"cannot parse pgbench output: {out[-500:]}")
    n = int(xacts.group(1))
    return {"tps": round(float(tps.group(1)), 1), "transactions": n,
            "latency_avg_ms": float(lat.group(1)) if lat else None,
            "wal_bytes_per_xact_clusterwide": round(wal / n, 1) if n else None}
