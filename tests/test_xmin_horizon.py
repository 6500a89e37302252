"""A held xmin horizon (issue 37, item 2): a transaction that holds a snapshot
keeps every row version deleted or updated after it began from ``VACUUM``,
and every claim reads past the claim index's entries of the steps claimed
since (docs/performance.md, A held xmin horizon).

1. A drain of single-step runs, ``claim(100)`` + ``complete_many`` on two
   connections, with a ``REPEATABLE READ`` transaction opened before the
   submit and held throughout ends every run once. 5,000 runs here;
   ``CYCLONE_CHAOS_SCALE=10`` drains issue 37's 50,000. Its pace against the
   same drain clean (>= 0.7x) is measured by ``python -m bench`` (section
   xmin; this machine: 0.90x, 16,753 against 18,706 steps/s) and by ``make
   bench-xmin`` (with a steady 100 runs/s), not asserted here.
2. Once the transaction ends, the live tables come back without a manual
   step: autovacuum removes every dead row version of the live runs and steps.
   On a cluster of its own with ``autovacuum_naptime = 1s``: when autovacuum
   comes is the server's naptime (60 s by default, and with many databases
   longer), not something a table can set; what the tables set
   (``autovacuum_vacuum_cost_delay = 0``, change live_tables_vacuum) is that
   the vacuum runs unthrottled, which is checked too.
3. Throughput held at a queue depth of 2,000: ``python -m bench.xmin --only
   depth`` (a producer keeps 2,000 runs waiting, four connections loop
   ``claim(10)`` + ``complete_many`` as fast as they can, autovacuum as the
   server has it). Issue 37 asks that the last of five minutes run at >= 0.8x
   the first: ``CYCLONE_CHAOS_SCALE=10`` asserts that (this machine, one run:
   0.94x; minute-to-minute swings of 0.6 to 1.2x on a shared machine;
   docs/performance.md, Throughput at a held queue depth). In ``make test``
   it runs 30 s in windows of 10 s and
   checks the outcome (every window completes runs, every run completed has
   ended, the invariants hold), not a ratio: over 30 s on a shared machine
   the rate of a window moves more than the engine does. What keeps claims
   from reading every claimed step's index entry (the claim floor) has its
   own tests (sql/tests/claim_floor/).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cyclone_py import db

pytestmark = pytest.mark.slow

SCALE = float(os.environ.get("CYCLONE_CHAOS_SCALE", "1"))
RUNS = int(5_000 * SCALE)
WORKFLOW = "xmin_one"


def _setup(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("""SELECT cyclone.define_workflow(%s, '{"nodes": [{"name": "work"}]}')""", (WORKFLOW,))
        c.execute("SELECT cyclone.tick()")  # today's history tables, which a run of one step ends into


@contextmanager
def _held(dsn: str) -> Iterator[None]:
    """A REPEATABLE READ transaction that has read a table (its snapshot held) while the block runs."""
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        c.execute("SELECT count(*) FROM cyclone.cyclone_workflows")
        try:
            yield
        finally:
            c.execute("ROLLBACK")


def _drain(dsn: str, runs: int, consumers: int = 2) -> None:
    """Submits ``runs`` single-step runs and drains them with ``consumers`` connections."""
    with psycopg.connect(dsn, autocommit=True) as c:
        for i in range(0, runs, 5000):
            c.execute("SELECT count(*) FROM cyclone.submit_many(%s, %s::jsonb[])",
                      (WORKFLOW, ["{}"] * min(5000, runs - i)))
        c.execute("ANALYZE cyclone.cyclone_steps, cyclone.cyclone_runs")
    done = [0] * consumers

    def consume(i: int) -> None:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("SET synchronous_commit = off")
            while True:
                rows = c.execute("SELECT step_id, lease_generation FROM cyclone.claim(%s, NULL, 100)",
                                 (f"xmin-{i}",)).fetchall()
                if not rows:
                    return
                c.execute("SELECT count(*) FROM cyclone.complete_many(%s, %s, %s, %s)",
                          (f"xmin-{i}", [r[0] for r in rows], [r[1] for r in rows],
                           [json.dumps({"ok": True})] * len(rows)))
                done[i] += len(rows)

    threads = [threading.Thread(target=consume, args=(i,)) for i in range(consumers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(done) == runs


def _dead(c: psycopg.Connection[Any]) -> dict[str, int]:
    rows = c.execute("SELECT relname, n_dead_tup FROM pg_stat_user_tables WHERE schemaname = 'cyclone' "
                     "AND relname IN ('cyclone_steps', 'cyclone_runs')").fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def test_a_drain_with_a_held_snapshot_ends_every_run_once(embedded_db: db.EmbeddedCluster, template_db: str) -> None:
    """Issue 37: with a REPEATABLE READ transaction open from before the submit to the end of the drain, the
    claims still find every step (they read past the entries of the steps claimed since) and every run ends
    once, while every drained step's and run's old version stays (the snapshot is held). How fast, against
    the same drain clean, is the bench's to say (``python -m bench``, section xmin: at least 0.7x)."""
    name = f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    dsn = embedded_db.create_database(name, template=template_db)
    try:
        _setup(dsn)
        with _held(dsn):
            _drain(dsn, RUNS)
            with psycopg.connect(dsn, autocommit=True) as c:
                # The counts as soon as the drain's backends, closing, have reported them.
                deadline = time.monotonic() + 10
                while True:
                    dead = _dead(c)
                    if dead["cyclone_steps"] >= RUNS and dead["cyclone_runs"] >= RUNS:
                        break
                    assert time.monotonic() < deadline, dead
                    time.sleep(0.2)
                ended = c.execute("SELECT count(*) FILTER (WHERE state = 'completed' AND attempt = 1), count(*) "
                                  "FROM cyclone.cyclone_steps").fetchone()
                assert ended == (RUNS, RUNS)
                assert c.execute("SELECT count(*) FROM cyclone.cyclone_runs WHERE state <> 'completed'"
                                 ).fetchone() == (0,)
                assert c.execute("SELECT count(*) FROM cyclone.check_invariants()").fetchone() == (0,)
    finally:
        embedded_db.drop_database(name)


@pytest.fixture
def quick_autovacuum_cluster() -> Iterator[db.EmbeddedCluster]:
    """A cluster of its own (unix socket only) whose autovacuum visits each database every second."""
    home = Path("/var/tmp") / f"cyclone-xmin-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    cluster = db.EmbeddedCluster(home=home, port=5440, settings=(("autovacuum_naptime", "1s"),))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.cluster
def test_the_live_tables_come_back_once_the_snapshot_ends(quick_autovacuum_cluster: db.EmbeddedCluster) -> None:
    """Issue 37: once the held transaction ends, autovacuum removes the dead row versions of the live tables
    (no manual VACUUM), unthrottled (autovacuum_vacuum_cost_delay = 0 on both)."""
    cluster = quick_autovacuum_cluster
    cluster.deploy_template("xmin_tpl")
    dsn = cluster.create_database("xmin", template="xmin_tpl")
    _setup(dsn)
    with psycopg.connect(dsn, autocommit=True) as c:
        options: dict[str, list[str] | None] = dict(c.execute(
            "SELECT c.relname, c.reloptions FROM pg_class c WHERE c.oid IN "
            "('cyclone.cyclone_steps'::regclass, 'cyclone.cyclone_runs'::regclass)").fetchall())
        for table in ("cyclone_steps", "cyclone_runs"):
            assert "autovacuum_vacuum_cost_delay=0" in (options[table] or []), options
        with _held(dsn):
            _drain(dsn, 5000)
            time.sleep(3)  # autovacuum passes by meanwhile, and can remove nothing
            held = _dead(c)
            assert held["cyclone_steps"] >= 5000 and held["cyclone_runs"] >= 5000, held
        ended = time.monotonic()
        while True:
            dead = _dead(c)
            if dead["cyclone_steps"] == 0 and dead["cyclone_runs"] == 0:
                break
            assert time.monotonic() - ended < 30, f"still dead after 30 s: {dead}"
            time.sleep(0.5)
        live = c.execute("SELECT count(*) FROM ONLY cyclone.cyclone_steps").fetchone()
        assert live is not None and live[0] == 0


ROOT = Path(__file__).resolve().parent.parent


def test_throughput_at_a_held_queue_depth_does_not_fall(tmp_path: Path) -> None:
    """Issue 37: with 2,000 runs kept waiting for five minutes (CYCLONE_CHAOS_SCALE >= 10), the last minute
    runs at >= 0.8x the first; at CI scale (30 s), the drain goes on and ends its runs consistently."""
    seconds, window = (300, 60) if SCALE >= 10 else (30, 10)
    out = tmp_path / "xmin.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.xmin", "--only", "depth", "--depth", "2000", "--depth-seconds",
         str(seconds), "--window", str(window), "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=seconds + 300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    depth = json.loads(out.read_text())["depth"]
    windows = depth["windows"]
    summary = [(w["jobs_per_s"], w["db_cpu_ms_a_run"]) for w in windows]
    assert len(windows) == seconds // window and all(w["jobs_per_s"] > 0 for w in windows), summary
    assert depth["runs_completed"] >= depth["done"] > 0, depth
    assert depth["invariants_broken"] == 0, depth
    if SCALE >= 10:
        assert depth["ratio"] >= 0.8, summary
