"""Small helpers shared by the runtime, process and CLI tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from click.testing import Result

from cyclone_py import App, Worker, Workflow
from cyclone_py.client import Client, StepRow

#: Worker options that keep in-process worker tests quick.
FAST: dict[str, Any] = {"poll_interval": 0.1, "shutdown_grace": 5.0}


def wait_for(pred: Callable[..., Any], timeout: float = 20.0, what: str = "condition") -> Any:
    """Poll ``pred()`` until it returns something truthy (and return that), or fail
    the test after ``timeout`` seconds. (``Callable[...]``: a lambda that binds a
    loop variable by a default argument, ``lambda r=run_id: ...``, is one too.)"""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def start(workers: list[Worker], app: App | Workflow, dsn: str, *, cls: type[Worker] = Worker, **kw: Any) -> Worker:
    """A worker in a thread (FAST options unless overridden), stopped by the ``workers`` fixture."""
    w = cls(app, dsn, **{**FAST, **kw})
    workers.append(w)
    w.run_in_thread()
    return w


def terminal(client: Client, run_id: Any) -> Any:
    """The run once it is terminal, else None (for ``wait_for``)."""
    run = client.get_run(run_id)
    return run if run.terminal else None


def step_of(client: Client, run_id: Any, node: str) -> StepRow:
    return next(s for s in client.steps(run_id) if s.node == node)


def assert_consistent(dsn: str) -> None:
    """Fail the test if ``cyclone.check_invariants()`` reports anything: the end
    of every race, crash and soak test."""
    with Client(dsn, min_size=1, max_size=1) as c:
        violations = c.check_invariants()
    assert violations == [], violations


def ok(result: Result) -> str:
    """The command succeeded; its stdout."""
    assert result.exit_code == 0, f"exit {result.exit_code}: {result.output}"
    return result.stdout


def one_line_error(result: Result, exit_code: int = 1) -> str:
    """The command failed with exactly one ``cyclone: ...`` line on stderr."""
    assert result.exit_code == exit_code, f"exit {result.exit_code}: {result.output}"
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("cyclone: "), lines[0]
    assert "Traceback" not in result.output
    return lines[0]


TESTS = Path(__file__).resolve().parent


class WorkerProcess:
    """``python -m cyclone_py.cli <args>`` (a ``cyclone worker``, usually) in a
    process of its own, with tests/ and the checkout on its ``sys.path`` (for
    ``--app apps.x:app``) and its output in the file ``log``."""

    def __init__(self, args: Sequence[str], log: Path, env: Mapping[str, str] | None = None) -> None:
        full = {**os.environ, **(env or {})}
        full["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS.parent), full.get("PYTHONPATH", "")])
        self.log = log
        self._fh = open(log, "w")
        self.p = subprocess.Popen([sys.executable, "-m", "cyclone_py.cli", *args], env=full, cwd=str(TESTS.parent),
                                  stdout=self._fh, stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.log.read_text()

    def stop(self, timeout: float = 15) -> int:
        """SIGTERM (unless it exited); the exit code. Fails the test, with the
        log, when it does not exit within ``timeout``."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"worker did not exit; log:\n{self.text()}") from None

    def close(self) -> None:
        """Kill it if it still runs."""
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(10)
        self._fh.close()


def expire_and_reclaim(conn: Any) -> int:
    """Move the engine clock a minute on and tick in one transaction: a heartbeat cannot renew the lease
    between the two (it sees the old clock until the commit, then a reclaimed step), so this tick is the
    one that reclaims it. Returns how many steps it reclaimed."""
    with conn.transaction():
        conn.execute("SELECT cyclone.advance_time('1 minute')")
        row = conn.execute("SELECT (cyclone.tick() ->> 'reclaimed')::int").fetchone()
    return int(row[0])
