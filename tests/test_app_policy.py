"""The app carries its own policy: backoff, error hook, reclaim limit.

``App(..., backoff=, on_error=, max_reclaims=)`` is used by ``Worker`` and
``Env`` and by ``cyclone worker --app``; an explicit argument or CLI flag wins.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import wait_for

from cyclone_py import App, Permanent, Worker, Workflow, errors
from cyclone_py.client import Client, StepRow
from cyclone_py.context import StepContext
from cyclone_py.testing import Env

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


@pytest.fixture
def client(dsn: str) -> Iterator[Client]:
    with Client(dsn) as c:
        yield c


def only_step(client: Client, run_id: Any) -> StepRow:
    [s] = client.steps(run_id)
    return s


def retry_delay(client: Client, run_id: Any) -> timedelta:
    """How far after its start the first failure of ``run_id``'s step is rescheduled."""
    s: StepRow = wait_for(lambda: (r := only_step(client, run_id)).error and r, what="the first failure")
    assert s.state == "available" and s.scheduled_at is not None and s.started_at is not None
    return s.scheduled_at - s.started_at


def failing(name: str) -> Workflow:
    wf = Workflow(name, max_attempts=3)

    @wf.step()
    def job(ctx: StepContext) -> Any:
        raise ValueError("not yet")

    return wf


def refusing(name: str) -> Workflow:
    wf = Workflow(name)

    @wf.step()
    def job(ctx: StepContext) -> Any:
        raise Permanent("never")

    return wf


def minutes(n: int) -> Any:
    return lambda attempt: timedelta(minutes=n * attempt)


def test_app_rejects_a_bad_policy() -> None:
    with pytest.raises(TypeError):
        App(backoff=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        App(on_error="print")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        App(max_reclaims=-1)
    with pytest.raises(ValueError):
        App(max_reclaims=True)


def test_worker_and_harness_take_the_apps_policy_unless_given_their_own() -> None:
    hook, other_hook = (lambda exc: None), (lambda exc: None)
    backoff, other_backoff = minutes(1), minutes(2)
    app = App(failing("w"), backoff=backoff, on_error=hook, max_reclaims=3)
    w = Worker(app, "postgresql://unused")
    assert (w.backoff, w.on_error, w.max_reclaims) == (backoff, hook, 3)
    w = Worker(app, "postgresql://unused", backoff=other_backoff, on_error=other_hook, max_reclaims=0)
    assert (w.backoff, w.on_error, w.max_reclaims) == (other_backoff, other_hook, 0)  # 0 is given, not absent
    w = Worker(failing("bare"), "postgresql://unused")
    assert (w.backoff, w.on_error, w.max_reclaims) == (None, None, 0)


def test_a_worker_uses_the_apps_backoff_and_error_hook(dsn: str, client: Client) -> None:
    seen: list[errors.StepFailed] = []
    flaky, perm = failing("app_flaky"), refusing("app_perm")
    w = Worker(App(flaky, perm, backoff=minutes(10), on_error=seen.append), dsn, poll_interval=0.1)
    w.run_in_thread()
    try:
        r1, r2 = client.submit(flaky), client.submit(perm)
        delay = retry_delay(client, r1)
        wait_for(lambda: seen, what="the app's error hook")
    finally:
        w.stop(timeout=10)
    assert timedelta(minutes=10) <= delay < timedelta(minutes=10, seconds=5)
    assert [(e.run_id, e.error_kind) for e in seen] == [(r2, "permanent")]


def test_the_workers_own_backoff_wins_over_the_apps(dsn: str, client: Client) -> None:
    flaky = failing("own_backoff")
    w = Worker(App(flaky, backoff=minutes(10)), dsn, poll_interval=0.1, backoff=minutes(20))
    w.run_in_thread()
    try:
        delay = retry_delay(client, client.submit(flaky))
    finally:
        w.stop(timeout=10)
    assert timedelta(minutes=20) <= delay < timedelta(minutes=20, seconds=5)


def test_the_harness_uses_the_apps_policy(dsn: str) -> None:
    seen: list[errors.StepFailed] = []
    flaky, perm = failing("env_flaky"), refusing("env_perm")
    with Env(dsn, App(flaky, perm, backoff=minutes(10), on_error=seen.append, max_reclaims=2)) as env:
        assert env.max_reclaims == 2
        r1, r2 = env.submit(flaky), env.submit(perm)
        env.run_until_idle()
        s = only_step(env.client, r1)
        assert s.scheduled_at is not None and s.started_at is not None
        assert timedelta(minutes=10) <= s.scheduled_at - s.started_at < timedelta(minutes=10, seconds=5)
    assert [(e.run_id, e.error_kind) for e in seen] == [(r2, "permanent")]


# -- cyclone worker --app -----------------------------------------------------


class Proc:
    """``cyclone worker --app apps.policy:app`` with ``args``."""

    def __init__(self, dsn: str, tmp: Path, *args: str) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
        env["CYCLONE_TEST_DIR"] = str(tmp)
        env.pop("CYCLONE_MAX_RECLAIMS", None)
        self.log = tmp / "worker.log"
        self._fh = self.log.open("w")
        self.p = subprocess.Popen(
            [sys.executable, "-m", "cyclone_py.cli", "--dsn", dsn, "worker", "--app", "apps.policy:app",
             "--poll-interval", "0.1", *args],
            env=env, cwd=str(ROOT), stdout=self._fh, stderr=subprocess.STDOUT,
        )

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(15)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(5)
        self._fh.close()


def hook_lines(tmp: Path) -> list[str]:
    path = tmp / "hook.log"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.slow
def test_cyclone_worker_uses_the_apps_backoff_and_error_hook(dsn: str, client: Client, tmp_path: Path) -> None:
    from apps.policy import app, flaky, perm

    for name, definition in app.definitions():
        client.define_workflow(name, definition)
    proc = Proc(dsn, tmp_path)
    try:
        r1, r2 = client.submit(flaky), client.submit(perm)
        delay = retry_delay(client, r1)
        wait_for(lambda: hook_lines(tmp_path), what="the app's error hook, in the worker process")
    finally:
        proc.stop()
    assert timedelta(minutes=7) <= delay < timedelta(minutes=7, seconds=5), proc.log.read_text()
    assert hook_lines(tmp_path) == [f"{only_step(client, r2).id} permanent"]


def _reclaim_twice(client: Client, run_id: Any) -> StepRow:
    """Lease ``run_id``'s step to a worker that dies, twice; the running
    worker's ticks sweep it. Returns the step after the second sweep."""
    for n in (1, 2):
        [claimed] = client.claim("dead", ["job"], 1, timedelta(seconds=5))
        assert claimed.run_id == run_id
        client.advance_time(timedelta(minutes=1))
        s: StepRow = wait_for(lambda: (r := only_step(client, run_id)).state != "running" and r, what=f"sweep {n}")
        if s.state != "available":
            return s
    return s


@pytest.mark.slow
def test_cyclone_worker_uses_the_apps_reclaim_limit(dsn: str, client: Client, tmp_path: Path) -> None:
    victim = Workflow("victim")  # not the app's: only its sweeps touch it
    victim.step(name="job")(lambda ctx: None)
    client.define_workflow("victim", victim.definition())
    run_id = client.submit(victim)
    proc = Proc(dsn, tmp_path)
    try:
        s = _reclaim_twice(client, run_id)
        wait_for(lambda: hook_lines(tmp_path), what="the app's error hook")
    finally:
        proc.stop()
    assert (s.state, s.error_kind, s.reclaims) == ("discarded", "reclaim_limit", 1), proc.log.read_text()
    assert hook_lines(tmp_path) == [f"{s.id} reclaim_limit"]


@pytest.mark.slow
def test_cyclone_worker_max_reclaims_zero_wins_over_the_app(dsn: str, client: Client, tmp_path: Path) -> None:
    victim = Workflow("victim")
    victim.step(name="job")(lambda ctx: None)
    client.define_workflow("victim", victim.definition())
    run_id = client.submit(victim)
    proc = Proc(dsn, tmp_path, "--max-reclaims", "0")
    try:
        s = _reclaim_twice(client, run_id)
    finally:
        proc.stop()
    assert (s.state, s.reclaims) == ("available", 2), proc.log.read_text()  # unbounded: reclaimed again
