"""An upgrade under load (issue 37, docs/reliability.md#an-upgrade-under-load).

A database is deployed to the previous release by that release's own
``cyclone migrate`` (its code taken from git, ``git archive`` of the last commit
whose plan ends with its tag: :func:`release_commit`). Workers and a submitter of that release run a steady load
(tests/apps/upgrade.py, every execution in a ledger). This checkout's
``cyclone worker`` refuses that database in one line naming both releases.
Then this checkout's ``cyclone migrate`` deploys the rest of the plan while
claims go on, twice: first while a reader holds a transaction open on
``cyclone_steps`` for longer than the deploy's ``lock_timeout`` (a table change
must give up, not queue every claim behind it), then once the reader is gone.
A probe claims in a loop all along and records how long each claim took. The
workers of the previous release keep working after the deploy; then a worker of
this release takes over, as an operator would roll workers after the schema.

It asserts: no claim waited longer than the ``lock_timeout`` (plus a margin)
during the deploy that met the reader, nor longer than ``CLEAN_BOUND`` during
the clean one; every acknowledged submit made one run, every run completed
with the output its DAG implies, every step executed exactly once (no reclaim,
no failed attempt), no submit failed, ``check_invariants()`` is empty, and
every worker exits 0 on SIGTERM without a traceback.

"Previous release": the newest tag of sqitch.plan with a change after it (the
tag before the last when the plan ends with one); ``CYCLONE_UPGRADE_FROM=0.21.0`` starts from an older one.
Scale:
``CYCLONE_CHAOS_SCALE=N`` runs the load N times as long at N times the rate,
on top of N x 5,000 finished runs made at the previous release.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import psycopg
import pytest
from apps.upgrade import LEDGER_TABLE, expected_sum
from helpers import TESTS, assert_consistent, wait_for

from cyclone_py import __version__, db

pytestmark = pytest.mark.slow  # whole sqitch deploys and worker processes of two releases: about 40 s

ROOT = TESTS.parent
SCALE = float(os.environ.get("CYCLONE_CHAOS_SCALE", "1"))
RATE = 20.0 * SCALE  # runs a second (4 steps each)
STEADY = 3.0 * SCALE  # seconds of load before the deploy, and again after it
HISTORY = int(5000 * (SCALE if SCALE > 1 else 0))  # finished runs made at the previous release
LOCK_TIMEOUT = 5.0  # what a table change's transaction waits for its locks at most (since 0.22.0)
MARGIN = 1.5  # a claim's own time, and the shared machine's pauses
CLEAN_BOUND = 1.0  # the longest a claim may wait while a deploy meets no long transaction
HOLD = LOCK_TIMEOUT + 3.0  # how long the reader keeps its transaction open


def previous_release(plan: Path) -> str:
    """The newest tag with a change after it: ``0.21.0`` for a plan ending ``... @v0.21.0 changes @v0.22.0``."""
    lines = [ln for ln in plan.read_text().splitlines() if ln.strip() and not ln.startswith(("%", "#"))]
    last_change = max(i for i, ln in enumerate(lines) if not ln.startswith("@"))
    tags = [m[1] for ln in lines[:last_change] if (m := re.match(r"@v(\d+\.\d+\.\d+)\s", ln))]
    return tags[-1]


def test_the_previous_release_is_the_newest_tag_with_a_change_after_it(tmp_path: Path) -> None:
    plan = tmp_path / "sqitch.plan"
    head = "%project=t\n\na 2026-01-01T00:00:00Z A <a@b> # x\n@v0.1.0 2026-01-01T00:00:00Z A <a@b> # x\n"
    plan.write_text(head + "b 2026-01-02T00:00:00Z A <a@b> # x\n@v0.2.0 2026-01-02T00:00:00Z A <a@b> # x\n")
    assert previous_release(plan) == "0.1.0"
    plan.write_text(head + "b 2026-01-02T00:00:00Z A <a@b> # x\n")
    assert previous_release(plan) == "0.1.0"
    plan.write_text(head + "b 2026-01-02T00:00:00Z A <a@b> # x\n@v0.2.0 2026-01-02T00:00:00Z A <a@b> # x\n"
                    "c 2026-01-03T00:00:00Z A <a@b> # x\n")
    assert previous_release(plan) == "0.2.0"


def release_commit(version: str) -> str:
    """The commit that holds release ``version`` as it was published: the last one whose sqitch.plan ends with
    the tag ``@v<version>``, i.e. the parent of the first commit that planned a change after it (HEAD while
    the plan still ends with it). Not the commit ``Release <version>``: a note or a fix of that release made
    after its release commit, before the next change, is part of the release a database was deployed with
    (a plan line's note is part of its change's id)."""
    plan_commits = subprocess.run(["git", "-C", str(ROOT), "log", "--format=%H", "--", "sqitch.plan"],
                                  capture_output=True, text=True, check=True).stdout.split()
    newer = None  # the next commit (in history order) that changed the plan
    for commit in plan_commits:
        plan = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:sqitch.plan"],
                              capture_output=True, text=True, check=True).stdout
        last = [ln for ln in plan.splitlines() if ln.strip()][-1]
        if last.startswith(f"@v{version} "):
            return "HEAD" if newer is None else f"{newer}^"
        newer = commit
    raise AssertionError(f"no commit whose sqitch.plan ends with @v{version}")


def release_tree(version: str, into: Path) -> Path:
    """The package and sqitch project of release ``version``, from git (:func:`release_commit`)."""
    if not (ROOT / ".git").exists():
        pytest.skip("no git history in this checkout: the previous release's code is taken from it")
    commit = release_commit(version)
    into.mkdir()
    with subprocess.Popen(["git", "-C", str(ROOT), "archive", commit, "cyclone_py", "pyproject.toml",
                           "sqitch.plan", "sqitch.conf", "sql"], stdout=subprocess.PIPE) as archive:
        subprocess.run(["tar", "-x", "-C", str(into)], stdin=archive.stdout, check=True)
    assert archive.returncode == 0
    return into


def python_env(tree: Path, dsn: str) -> dict[str, str]:
    """The environment of a process that runs ``tree``'s cyclone_py and tests/apps (started in ``tree``)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(TESTS)]), "CYCLONE_UPGRADE_DSN": dsn,
            "CYCLONE_DSN": dsn}


class Process:
    """A ``python -m ...`` of one release, its output in ``log``."""

    def __init__(self, tree: Path, args: list[str], dsn: str, log: Path) -> None:
        self.log = log
        self._fh: IO[str] = open(log, "w")
        self.p = subprocess.Popen([sys.executable, "-m", *args], cwd=tree, env=python_env(tree, dsn),
                                  stdout=self._fh, stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.log.read_text()

    def stop(self, timeout: float = 20) -> int:
        if self.p.poll() is None:
            self.p.terminate()
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.log.name} did not exit; log:\n{self.text()}") from None

    def close(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(10)
        self._fh.close()


@dataclass
class Probe:
    """Claims nothing in a loop (a handler no step has) and records each claim's start and duration: a claim
    waits for the locks of cyclone_steps like any other, so the longest duration in a window is the longest a
    worker's claim was blocked then."""

    dsn: str
    samples: list[tuple[float, float]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True, application_name="upgrade-probe") as c:
            while not self._stop.is_set():
                began = time.time()
                try:
                    c.execute("SELECT count(*) FROM cyclone.claim('upgrade-probe', ARRAY['upgrade-probe'], 1,"
                              " interval '30 seconds')").fetchone()
                except psycopg.Error as exc:
                    self.errors.append(str(exc))
                self.samples.append((began, time.time() - began))
                self._stop.wait(0.01)

    def stop(self) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(30)

    def longest(self, start: float, end: float) -> float:
        """The longest claim that was waiting at some moment of [start, end]."""
        return max((d for s, d in list(self.samples) if s <= end and s + d >= start), default=0.0)


@dataclass
class Deploy:
    """One ``cyclone migrate`` of this checkout (times in epoch seconds): its exit code, its one-line error, and
    sqitch's events of it (each change's deploy, fail or revert, when it was recorded: as its script ended)."""

    returncode: int
    error: str
    started: float
    ended: float
    events: list[tuple[float, str]]

    def change_at(self, t: float) -> str:
        """The change being deployed (or reverted) at time ``t``: the first one recorded after it."""
        return next((what for at, what in self.events if at >= t), "(after the last change)")


def migrate(dsn: str) -> Deploy:
    started = time.time()
    # --retries 0: the test deploys again itself, as an operator would, so that each attempt's claim waits
    # are measured apart (migrate's own retries are tests/test_migrate.py's).
    proc = subprocess.run([sys.executable, "-m", "cyclone_py.cli", "migrate", "--dsn", dsn, "--retries", "0"],
                          cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300)
    ended = time.time()
    events = query(dsn, "SELECT extract(epoch FROM committed_at)::float8, event || ' ' || change FROM sqitch.events"
                        " WHERE committed_at >= to_timestamp(%s) ORDER BY committed_at", (started,))
    return Deploy(proc.returncode, proc.stderr.strip(), started, ended, [(float(t), str(w)) for t, w in events])


def hold_a_reader(dsn: str, seconds: float) -> threading.Thread:
    """A transaction that has read cyclone_steps and stays open for ``seconds`` (a report, a console page, a
    pg_dump): it holds the table's ACCESS SHARE lock until it ends."""
    ready = threading.Event()

    def run() -> None:
        with psycopg.connect(dsn, application_name="upgrade-reader") as c:
            c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            c.execute("SELECT count(*) FROM cyclone.cyclone_steps").fetchone()
            ready.set()
            time.sleep(seconds)
            c.rollback()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    return thread


def query(dsn: str, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn, autocommit=True) as c:
        cur = c.execute(sql, params)
        return cur.fetchall() if cur.description is not None else []


def make_history(dsn: str, runs: int) -> None:
    """``runs`` finished single-step runs, through the previous release's SQL functions (a database that has
    been in use: the deploy's index builds and validations read them)."""
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SELECT cyclone.define_workflow('upgrade_history', "
                  "'{\"nodes\": [{\"name\": \"only\", \"handler\": \"upgrade_history\"}]}')")
        for start in range(0, runs, 1000):
            n = min(1000, runs - start)
            c.execute("SELECT cyclone.submit_many('upgrade_history', "
                      "(SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, %s) g))", (n,))
            c.execute("SELECT count(*) FROM (SELECT cyclone.complete_many('upgrade-history', array_agg(step_id),"
                      " array_agg(lease_generation), array_agg('{}'::jsonb)) FROM cyclone.claim("
                      "'upgrade-history', ARRAY['upgrade_history'], %s, interval '1 hour')) done", (n,))
        c.execute("SELECT cyclone.tick()")


def release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def refuses(dsn: str, previous: str) -> None:
    """This checkout's ``cyclone worker`` exits 1 with one line naming the engine's release and its own."""
    refused = subprocess.run([sys.executable, "-m", "cyclone_py.cli", "worker", "--dsn", dsn,
                              "--app", "apps.upgrade:app"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT)])})
    assert refused.returncode == 1, refused.stderr
    lines = [ln for ln in refused.stderr.splitlines() if ln.startswith("cyclone: ")]
    assert len(lines) == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert f"and this worker is {__version__}" in lines[0], lines[0]
    assert re.search(rf"engine (?:{re.escape(previous)}|older than \d+\.\d+\.\d+) ", lines[0]), lines[0]


@pytest.fixture
def database(embedded_db: db.EmbeddedCluster) -> Iterator[str]:
    """An empty database of its own (the previous release deploys into it)."""
    name = f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    url = embedded_db.create_database(name)
    try:
        yield url
    finally:
        embedded_db.drop_database(name)


def test_an_upgrade_under_load_loses_nothing_does_nothing_twice_and_blocks_claims_briefly(
        database: str, tmp_path: Path) -> None:
    dsn = database
    previous = os.environ.get("CYCLONE_UPGRADE_FROM") or previous_release(ROOT / "sqitch.plan")
    old = release_tree(previous, tmp_path / f"cyclone-{previous}")

    # The previous release, deployed by its own migrate, its code answering as that release.
    deployed = subprocess.run([sys.executable, "-m", "cyclone_py.cli", "migrate", "--dsn", dsn], cwd=old,
                              env=python_env(old, dsn), capture_output=True, text=True, timeout=300)
    assert deployed.returncode == 0, deployed.stderr
    which = subprocess.run([sys.executable, "-c", "import cyclone_py; print(cyclone_py.__version__)"], cwd=old,
                           env=python_env(old, dsn), capture_output=True, text=True, check=True)
    assert which.stdout.strip() == previous
    query(dsn, LEDGER_TABLE)
    if HISTORY:
        make_history(dsn, HISTORY)

    # A worker of this release refuses the older engine in one line naming both releases (once the package
    # names the release being made: test_version.py holds it to that).
    if release(__version__) > release(previous):
        refuses(dsn, previous)

    acks, stop_file = tmp_path / "acks", tmp_path / "stop"
    olds = [Process(old, ["cyclone_py.cli", "worker", "--app", "apps.upgrade:app", "--concurrency", "4",
                          "--lease-ttl", "5", "--poll-interval", "0.2", "--shutdown-grace", "10"],
                    dsn, tmp_path / f"old-worker-{i}.log") for i in range(2)]
    procs = [*olds]
    probe = Probe(dsn)
    try:
        for w in olds:
            wait_for(lambda w=w: "worker started" in w.text(), 30, f"{w.log.name} up")
        procs.append(Process(old, ["apps.upgrade", dsn, str(acks), str(stop_file), str(RATE)], dsn,
                             tmp_path / "submitter.log"))
        probe.start()
        time.sleep(STEADY)
        baseline = probe.longest(0, time.time())

        # The deploy meets a long transaction: its table change gives up after lock_timeout, or there is none.
        reader = hold_a_reader(dsn, HOLD)
        deploys = [migrate(dsn)]
        reader.join(HOLD + 10)
        # A deploy that gives up (lock_timeout, or a deadlock PostgreSQL broke) changed nothing, and says so in
        # one line: the operator runs it again, as the test does.
        while deploys[-1].returncode != 0:
            error = deploys[-1].error
            assert len(error.splitlines()) == 1 and re.search("lock timeout|deadlock detected", error), error
            assert len(deploys) < 5, f"five deploys failed: {[d.error for d in deploys]}"
            deploys.append(migrate(dsn))
        assert query(dsn, "SELECT cyclone.version()") == [(__version__,)]

        # The workers of the previous release keep working against this one.
        deployed_at = time.time()
        time.sleep(STEADY)
        after = query(dsn, "SELECT count(*) FROM public.upgrade_ledger WHERE at > to_timestamp(%s)",
                      (deployed_at,))[0][0]
        assert after > 0, "no step executed after the deploy"
        assert all(w.p.poll() is None for w in olds), "a worker of the previous release exited"

        # Then the workers are rolled: one of this release starts, the old ones stop.
        new = Process(ROOT, ["cyclone_py.cli", "worker", "--app", "apps.upgrade:app", "--concurrency", "4",
                             "--lease-ttl", "5", "--poll-interval", "0.2", "--shutdown-grace", "10"],
                      dsn, tmp_path / "new-worker.log")
        procs.append(new)
        wait_for(lambda: "worker started" in new.text(), 30, "the new worker up")
        stop_file.touch()
        assert procs[2].p.wait(20) == 0, procs[2].text()
        for w in olds:
            assert w.stop() == 0, w.text()
        wait_for(lambda: query(dsn, "SELECT count(*) FROM cyclone.cyclone_runs WHERE workflow = 'upgrade_fan'"
                                    " AND state <> 'completed'")[0][0] == 0, 60, "every run to complete")
        assert new.stop() == 0, new.text()
    finally:
        probe.stop()
        for p in procs:
            p.close()

    waits = [probe.longest(d.started, d.ended) for d in deploys]
    print(f"\nupgrade {previous} -> {__version__} under {RATE:g} runs/s: the longest claim before the deploy took "
          f"{baseline * 1000:.0f} ms")
    for d, wait in zip(deploys, waits, strict=True):
        print(f"  cyclone migrate: exit {d.returncode} after {d.ended - d.started:.1f} s "
              f"({d.error or 'deployed'}); the longest claim {wait * 1000:.0f} ms, "
              f"during {d.change_at(_argmax(probe, d))}")
    # A claim a deadlock broke (40P01: a table change that locks the runs' table, then the steps', meets claims
    # that lock them the other way round) failed and is retried; anything else is a failure.
    incidents = [*probe.errors, *(ln for p in procs for ln in p.text().splitlines()
                                       if " WARNING " in ln or " ERROR " in ln)]
    for line in incidents:
        print(f"  {line.splitlines()[0][:200]}")
    assert all("deadlock detected" in ln for ln in incidents), incidents
    # With the reader: a table change waits lock_timeout at most for its locks, and claims queue behind it.
    assert max(waits) < LOCK_TIMEOUT + MARGIN, f"a claim waited {max(waits):.1f} s behind the deploy"
    # Without it: claims wait for catalog changes only. Not asserted from an older release (CYCLONE_UPGRADE_FROM,
    # docs/reliability.md): the deploy that meets the reader may reach its first table change after several
    # releases' functions, as the reader ends, and succeed after waiting for it; and 0.22.0's table change
    # deadlocks with the workers, which costs a claim deadlock_timeout (1 s).
    if not os.environ.get("CYCLONE_UPGRADE_FROM"):
        assert waits[-1] < CLEAN_BOUND, f"a claim waited {waits[-1]:.2f} s during the deploy that succeeded"

    # Nothing lost, nothing done twice.
    lines = acks.read_text().splitlines()
    failures = [ln for ln in lines if ln.startswith("! ")]
    assert failures == [], failures[:5]
    acked = dict(ln.split()[:2] for ln in lines)
    runs = query(dsn, "SELECT idempotency_key, id::text, state, output FROM cyclone.cyclone_runs"
                      " WHERE workflow = 'upgrade_fan'")
    assert len(runs) == len(acked) and {r[0]: r[1] for r in runs} == acked
    wrong = [r for r in runs if r[2] != "completed" or r[3] != {"join": {"sum": expected_sum(int(r[0][3:]))}}]
    assert wrong == []
    steps = query(dsn, "SELECT s.state, s.attempt, s.reclaims, count(l.id) FROM cyclone.cyclone_steps s"
                       " LEFT JOIN public.upgrade_ledger l ON l.step_id = s.id WHERE s.workflow = 'upgrade_fan'"
                       " GROUP BY s.id")
    assert len(steps) == 4 * len(acked)
    assert {row for row in steps} == {("completed", 1, 0, 1)}
    assert query(dsn, "SELECT count(*) FROM cyclone.cyclone_step_errors")[0][0] == 0
    assert_consistent(dsn)
    for p in procs:
        assert "Traceback" not in p.text(), p.text()


def _argmax(probe: Probe, deploy: Deploy) -> float:
    """When the longest claim during ``deploy`` began."""
    window = [(d, s) for s, d in list(probe.samples) if s <= deploy.ended and s + d >= deploy.started]
    return max(window, default=(0.0, deploy.started))[1]
