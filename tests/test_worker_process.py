"""Worker processes: SIGKILL mid-step, the reclaim limit, SIGTERM drain."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import wait_for

from cyclone_py import Worker, Workflow, errors
from cyclone_py.client import Client, StepRow

# Workers as processes of their own, killed and drained.
pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


class Proc:
    """A ``cyclone worker`` process."""

    def __init__(self, dsn: str, tmp: Path, *args: str, hang: bool = False) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
        env["CYCLONE_TEST_DIR"] = str(tmp)
        env["CYCLONE_TEST_HANG"] = "1" if hang else "0"
        self.log = tmp / f"worker-{time.monotonic_ns()}.log"
        self._fh = open(self.log, "w")
        self.p = subprocess.Popen(
            [sys.executable, "-m", "cyclone_py.cli", "--dsn", dsn, "worker",
             "--app", "apps.crashy:app", "--log-level", "debug", *args],
            env=env, cwd=str(ROOT), stdout=self._fh, stderr=subprocess.STDOUT,
        )

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.p.poll() is None:
            self.p.send_signal(sig)

    def wait(self, timeout: float) -> int:
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"worker did not exit; log:\n{self.log.read_text()}") from None

    def close(self) -> None:
        self.kill()
        self.p.wait(10)
        self._fh.close()


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for p in started:
        p.close()


@pytest.fixture
def client(dsn: str) -> Iterator[Client]:
    with Client(dsn) as c:
        c.define_workflow("crashy", __import__("apps.crashy", fromlist=["crashy"]).crashy.definition())
        yield c


def markers(tmp: Path, step_id: int) -> list[tuple[int, int]]:
    """(attempt, pid) of every execution of ``step_id``."""
    out = []
    for f in tmp.iterdir():
        parts = f.name.split("-")
        if len(parts) == 3 and parts[0] == str(step_id):
            out.append((int(parts[1]), int(parts[2])))
    return sorted(out)


def only_step(client: Client, run_id: Any) -> StepRow:
    [s] = client.steps(run_id)
    return s


def test_sigkill_mid_step_is_reclaimed_and_rerun_with_the_same_attempt(
    dsn: str, tmp_path: Path, client: Client, procs: list[Proc], monkeypatch: pytest.MonkeyPatch
) -> None:
    from apps.crashy import app

    monkeypatch.setenv("CYCLONE_TEST_DIR", str(tmp_path))  # the in-process survivor's markers
    monkeypatch.setenv("CYCLONE_TEST_HANG", "0")

    run_id = client.submit("crashy", {"mode": "hang"})
    step_id = only_step(client, run_id).id
    a = Proc(dsn, tmp_path, "--lease-ttl", "1.0", "--poll-interval", "0.1", hang=True)
    procs.append(a)
    wait_for(lambda: markers(tmp_path, step_id), what="the step to start in process A")
    a.kill(signal.SIGKILL)
    a.wait(5)
    killed_at = time.monotonic()

    survivor = Worker(app, dsn, lease_ttl=1.0, poll_interval=0.1, name="survivor")
    survivor.run_in_thread()
    try:
        run = wait_for(lambda: (r := client.get_run(run_id)).terminal and r, what="the run to finish")
        recovered_in = time.monotonic() - killed_at
    finally:
        survivor.stop(timeout=10)
    assert run.state == "completed"
    assert recovered_in < 1.0 + 2.0  # TTL + a tick, with slack for a loaded machine
    s = only_step(client, run_id)
    assert (s.attempt, s.reclaims) == (1, 1)
    runs = markers(tmp_path, step_id)
    assert [attempt for attempt, _ in runs] == [1, 1]  # the same attempt number, twice
    assert run.output == {"work": {"attempt": 1, "pid": os.getpid()}}


def test_a_step_that_kills_every_worker_ends_at_the_reclaim_limit(
    dsn: str, tmp_path: Path, client: Client, procs: list[Proc]
) -> None:
    # The surviving worker serves another workflow only, so it never runs the
    # suicidal step; its tick (max_reclaims=2) is what discards it.
    other = Workflow("other")
    other.step(name="noop")(lambda ctx: None)
    seen: list[errors.StepFailed] = []
    survivor = Worker(other, dsn, lease_ttl=0.5, poll_interval=0.1, max_reclaims=2, on_error=seen.append)
    survivor.run_in_thread()
    try:
        run_id = client.submit("crashy", {"mode": "suicide"})
        step_id = only_step(client, run_id).id
        for n in range(1, 4):
            wait_for(lambda: only_step(client, run_id).state == "available", what=f"step available ({n})")
            p = Proc(dsn, tmp_path, "--lease-ttl", "0.5", "--poll-interval", "0.1", "--max-reclaims", "2")
            procs.append(p)
            assert p.wait(15) == -signal.SIGKILL
            assert len(markers(tmp_path, step_id)) == n
        run = wait_for(lambda: (r := client.get_run(run_id)).terminal and r, what="the run to fail")
        wait_for(lambda: seen, what="the error hook")
    finally:
        survivor.stop(timeout=10)
    assert (run.state, run.error_kind) == ("failed", "reclaim_limit")
    s = only_step(client, run_id)
    assert (s.state, s.reclaims, s.attempt) == ("discarded", 2, 1)
    assert [type(e) for e in seen] == [errors.ReclaimLimitExceeded]
    assert (seen[0].step_id, seen[0].run_id, seen[0].workflow) == (step_id, run_id, "crashy")


def test_sigterm_drains_in_flight_steps_then_exits(
    dsn: str, tmp_path: Path, client: Client, procs: list[Proc]
) -> None:
    first = client.submit("crashy", {"mode": "sleep", "seconds": 1.0})
    first_id = only_step(client, first).id
    p = Proc(dsn, tmp_path, "--concurrency", "1", "--lease-ttl", "0.6", "--poll-interval", "0.1")
    procs.append(p)
    wait_for(lambda: markers(tmp_path, first_id), what="the step to start")
    p.kill(signal.SIGTERM)
    wait_for(lambda: "signal received" in p.log.read_text(), what="the worker to see the signal")
    second = client.submit("crashy", {"mode": "sleep", "seconds": 0})
    assert p.wait(10) == 0
    assert client.get_run(first).state == "completed"
    assert only_step(client, second).state == "available"  # not claimed after SIGTERM
    assert "signal received" in p.log.read_text()


def test_the_worker_process_leaves_what_it_started_with_out_of_garbage_collections(
    dsn: str, tmp_path: Path, client: Client, procs: list[Proc]
) -> None:
    """`cyclone worker` freezes what exists when it starts serving (gc.freeze): the modules, the app and the
    worker itself are never walked by a collection again (docs/performance.md, "The garbage collector")."""
    run_id = client.submit("crashy", {"mode": "gc"})
    procs.append(Proc(dsn, tmp_path, "--poll-interval", "0.1"))
    wait_for(lambda: client.get_run(run_id).state == "completed", what="the run to complete")
    # Thousands: every module imported (psycopg, click, the app), not a handful of objects.
    assert client.get_run(run_id).output["work"]["frozen"] > 5_000


def test_a_second_sigterm_exits_at_once(dsn: str, tmp_path: Path, client: Client, procs: list[Proc]) -> None:
    run_id = client.submit("crashy", {"mode": "hang"})
    step_id = only_step(client, run_id).id
    p = Proc(dsn, tmp_path, "--lease-ttl", "5", "--poll-interval", "0.1", hang=True)
    procs.append(p)
    wait_for(lambda: markers(tmp_path, step_id), what="the step to start")
    p.kill(signal.SIGTERM)
    time.sleep(0.2)
    assert p.p.poll() is None  # still draining
    p.kill(signal.SIGTERM)
    assert p.wait(3) == 1
    s = only_step(client, run_id)
    assert s.state == "running"  # left to its lease
    client.advance_time(timedelta(seconds=10))
    assert client.tick().reclaimed == 1
