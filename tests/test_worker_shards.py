"""One worker process, two databases: ``cyclone worker --dsn A --dsn B`` (SPEC 15).

Each database is a scratch copy of the template, like ``dsn``; both number
their steps from 1, so the same step ids are live on both at once.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from helpers import WorkerProcess, one_line_error, wait_for

from cyclone_py import cli, db
from cyclone_py.client import Client

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
UNREACHABLE = "host=/nonexistent port=1 dbname=x"
FAST = ("--lease-ttl", "1", "--poll-interval", "0.1", "--shutdown-grace", "10")
# A workflow no worker here serves: only a tick touches its runs.
UNSERVED = {"nodes": [{"name": "never"}]}


class Worker(WorkerProcess):
    """A ``cyclone worker`` process serving ``dsns``, with a global --dsn and
    CYCLONE_DSN that it must ignore."""

    def __init__(self, tmp: Path, dsns: list[str], *args: str) -> None:
        dsn_args = [arg for dsn in dsns for arg in ("--dsn", dsn)]
        super().__init__(["--dsn", UNREACHABLE, "worker", "--app", "apps.crashy:app", *dsn_args, *FAST, *args],
                         tmp / f"worker-{time.monotonic_ns()}.log",
                         {"CYCLONE_DSN": UNREACHABLE, "CYCLONE_TEST_DIR": str(tmp), "CYCLONE_TEST_HANG": "0"})


@pytest.fixture
def procs() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for p in started:
        p.close()


@pytest.fixture
def dsn_b(embedded_db: db.EmbeddedCluster, template_db: str) -> Iterator[str]:
    """A second scratch database, like ``dsn``."""
    name = f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    url = embedded_db.create_database(name, template=template_db)
    try:
        yield url
    finally:
        with psycopg.connect(embedded_db.url("postgres"), autocommit=True) as c:
            c.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')
        embedded_db.drop_database(name)


@pytest.fixture
def clients(dsn: str, dsn_b: str) -> Iterator[tuple[Client, Client]]:
    """A client on each database, with the workflows defined."""
    from apps.crashy import crashy  # noqa: PLC0415  (tests/ is on sys.path)

    with Client(dsn) as a, Client(dsn_b) as b:
        for c in (a, b):
            c.define_workflow("crashy", crashy.definition())
            c.define_workflow("unserved", UNSERVED)
        yield a, b


def counts(dsn: str) -> dict[str, int]:
    """Steps by state."""
    with psycopg.connect(dsn, autocommit=True) as c:
        rows = c.execute("SELECT state, count(*) FROM cyclone.cyclone_steps GROUP BY state").fetchall()
    return {str(state): int(n) for state, n in rows}


def step_ids(dsn: str) -> set[int]:
    with psycopg.connect(dsn, autocommit=True) as c:
        return {int(i) for (i,) in c.execute("SELECT id FROM cyclone.cyclone_steps").fetchall()}


def backlog(client: Client, n: int, seconds: float) -> None:
    client.submit_many("crashy", [{"mode": "sleep", "seconds": seconds}] * n)


@pytest.mark.slow
def test_one_worker_drains_both_databases_and_its_dsns_win(
    dsn: str, dsn_b: str, clients: tuple[Client, Client], tmp_path: Path, procs: list[Worker]
) -> None:
    a, b = clients
    backlog(a, 30, 0)
    backlog(b, 30, 0)
    assert step_ids(dsn) == step_ids(dsn_b)  # the same ids on both: results must go back where they came from
    w = Worker(tmp_path, [dsn, dsn_b], "--concurrency", "4")  # global --dsn and CYCLONE_DSN are unreachable
    procs.append(w)
    for target in (dsn, dsn_b):
        wait_for(lambda: counts(target) == {"completed": 30}, what=f"the backlog of {db.dbname_of(target)}")
    assert w.stop() == 0
    text = w.log.read_text()
    assert "worker started" in text and db.dbname_of(dsn_b) in text and "worker stopped" in text
    assert "Traceback" not in text and "unavailable" not in text


@pytest.mark.slow
def test_both_databases_get_a_fair_share_of_the_handlers_and_sigterm_drains_both(
    dsn: str, dsn_b: str, clients: tuple[Client, Client], tmp_path: Path, procs: list[Worker]
) -> None:
    a, b = clients
    backlog(a, 40, 0.1)
    backlog(b, 40, 0.1)
    w = Worker(tmp_path, [dsn, dsn_b], "--concurrency", "2")
    procs.append(w)
    done = wait_for(lambda: (n := [counts(t).get("completed", 0) for t in (dsn, dsn_b)]) and sum(n) >= 16 and n,
                    what="16 steps done")
    assert min(done) >= sum(done) / 3, done
    assert w.stop() == 0  # the steps each database leased run before it exits
    for target in (dsn, dsn_b):
        left = counts(target)
        assert "running" not in left, left
        assert left.get("completed", 0) + left.get("available", 0) == 40, left


@pytest.mark.slow
def test_a_database_that_goes_away_does_not_stop_the_other(
    dsn: str, dsn_b: str, clients: tuple[Client, Client], tmp_path: Path, procs: list[Worker],
    embedded_db: db.EmbeddedCluster,
) -> None:
    a, b = clients
    backlog(a, 20, 0.05)
    backlog(b, 20, 0.05)
    w = Worker(tmp_path, [dsn, dsn_b], "--concurrency", "2", "--log-format", "json")
    procs.append(w)
    wait_for(lambda: counts(dsn_b).get("completed", 0) >= 2, what="B to make progress")
    name_b = db.dbname_of(dsn_b)
    with psycopg.connect(embedded_db.url("postgres"), autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{name_b}" WITH ALLOW_CONNECTIONS false')
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name_b,))
        a.submit_many("crashy", [{"mode": "sleep", "seconds": 0}] * 10)  # submitted while B is gone
        wait_for(lambda: counts(dsn) == {"completed": 30}, timeout=15, what="A to finish without B")
        admin.execute(f'ALTER DATABASE "{name_b}" WITH ALLOW_CONNECTIONS true')
    # B's stranded leases expire (1 s) and its loop reconnects: the rest of B runs.
    wait_for(lambda: counts(dsn_b) == {"completed": 20}, timeout=20, what="B to finish once back")
    assert w.stop() == 0
    events = [json.loads(line) for line in w.log.read_text().splitlines()]
    warnings = [e for e in events if e["message"].startswith("database unavailable")]
    assert [e["database"] for e in warnings] == [db.dsn_label(dsn_b)], warnings  # once, naming B


def test_tick_runs_on_every_database(
    dsn: str, dsn_b: str, clients: tuple[Client, Client], tmp_path: Path, procs: list[Worker]
) -> None:
    runs = [c.submit("unserved", {}, deadline=timedelta(minutes=1)) for c in clients]
    for c in clients:
        c.advance_time(timedelta(minutes=2))  # past the deadline on the engine's clock; only a tick sees it
    w = Worker(tmp_path, [dsn, dsn_b])
    procs.append(w)
    for c, run_id in zip(clients, runs, strict=True):
        run = wait_for(lambda: (r := c.get_run(run_id)).terminal and r, timeout=10, what="the deadline")
        assert (run.state, run.error_kind) == ("failed", "deadline")
    assert w.stop() == 0


def test_each_dsn_is_checked_at_start_and_the_one_that_fails_is_named(dsn: str) -> None:
    result = CliRunner().invoke(cli.main, ["worker", "--app", "apps.basic:app", "--dsn", dsn, "--dsn", UNREACHABLE])
    line = one_line_error(result)
    assert line.startswith("cyclone: x@/nonexistent:1: database unavailable"), line
    result = CliRunner().invoke(cli.main, ["worker", "--app", "apps.basic:app", "--dsn", dsn, "--dsn", dsn])
    assert "the same DSN is given twice" in one_line_error(result)
