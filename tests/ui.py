"""A real ``cyclone ui`` process for the console's tests (HTTP and browser)."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"


class UI:
    """``cyclone ui --listen HOST:0 ARGS`` on ``dsn``: ``url`` is the address it
    printed, ``lines`` what it printed before serving, ``output`` all it printed
    so far (its log too); ``stop()`` ends it."""

    def __init__(self, dsn: str, *args: str, listen: str = "127.0.0.1:0",
                 env: Mapping[str, str] | None = None) -> None:
        inherited = {k: v for k, v in os.environ.items() if k != "CYCLONE_UI_TOKEN"}
        full = {**inherited, "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT)]), **(env or {})}
        self.p = subprocess.Popen(
            [sys.executable, "-m", "cyclone_py.cli", "--dsn", dsn, "ui", "--listen", listen, *args],
            env=full, cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self.output: list[str] = []
        assert self.p.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, args=(lines,), daemon=True)
        self._reader.start()
        end = time.monotonic() + 20
        while time.monotonic() < end:
            try:
                line = lines.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
            if "serving" in line and " http://" in line:
                break
        m = re.search(r"serving (http://\S+)", "\n".join(self.lines))
        if m is None:
            self.stop()
            raise AssertionError(f"cyclone ui did not start: {self.lines}")
        port = m[1].rsplit(":", 1)[1].rstrip("/")
        # Reached on loopback whatever it listens on (a test sends traffic nowhere else).
        self.url = f"http://127.0.0.1:{port}"
        self._wait_until_accepting()

    def _read(self, lines: queue.Queue[str | None]) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.output.append(line.rstrip("\n"))
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def _wait_until_accepting(self) -> None:
        import socket

        host, port = "127.0.0.1", int(self.url.rsplit(":", 1)[1])
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                socket.create_connection((host, port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("cyclone ui does not accept connections")

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(10)
        self._reader.join(10)
        if self.p.stdout is not None:
            self.p.stdout.close()


@pytest.fixture
def start_ui() -> Iterator[type[UI]]:
    """``start_ui(dsn, "--allow-actions")``: a UI process stopped at the test's end."""
    started: list[UI] = []

    class Started(UI):
        def __init__(self, *args: object, **kw: object) -> None:
            super().__init__(*args, **kw)  # type: ignore[arg-type]
            started.append(self)

    yield Started
    for ui in started:
        ui.stop()
