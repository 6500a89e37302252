"""The operator's rough edges of issue 36 in the ``cyclone`` command: ``dlq retry``, ``top`` fitting the
terminal and streaming without one, ``ui`` on a busy port, read-only commands that never start the embedded
database, ``--version`` with the database's release.

In process with click's CliRunner against the test's own database, as tests/test_cli.py does; a subprocess
where a terminal (or its absence) or the environment matters.
"""

from __future__ import annotations

import io
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

import pytest
from click.testing import Result
from helpers import ok, one_line_error, wait_for
from rich.console import Console

from cyclone_py.client import Client
from cyclone_py.top import frame
from cyclone_py.vocabulary import LIVE_RUN_STATES, LIVE_STEP_STATES

# -- cyclone ui -----------------------------------------------------------------------


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port something else listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        yield int(taken.getsockname()[1])


# console/server.py's bind() leaves its socket to the garbage collector when bind fails (a ResourceWarning,
# silent outside tests); the console's owner closes it there.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_ui_on_a_busy_port_names_the_address_and_what_to_do(invoke: Callable[..., Result], busy_port: int) -> None:
    line = one_line_error(invoke("ui", "--listen", f"127.0.0.1:{busy_port}"))
    assert line.startswith(f"cyclone: cannot serve the console on 127.0.0.1:{busy_port}: the address is in use")
    assert "--listen with another port" in line and "Errno" not in line


# -- cyclone top ----------------------------------------------------------------------

#: A workflow name longer than an 80-column table leaves room for.
LONG = "nightly_reconciliation_of_every_ledger_against_the_bank_statements_v2"


@pytest.fixture
def busy_engine(client: Client) -> Client:
    """Live runs of two workflows, one with a long name."""
    for name in (LONG, "gate"):
        client.define_workflow(name, {"nodes": [{"name": "approval", "kind": "wait", "signal": "go"},
                                                {"name": "ship", "deps": ["approval"]}]})
        client.submit(name)
    return client


def _on_console(renderable: object, width: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text().splitlines()


def test_top_fits_its_headers_to_the_terminal_wider_or_narrower(busy_engine: Client) -> None:
    rows, now = busy_engine.metrics(), busy_engine.now()
    wide = _on_console(frame(rows, now, width=200), 200)
    assert not any("…" in line for line in wide), wide
    assert any(line.split()[:1] == [LONG] for line in wide), "the long name whole, on one line"
    header = next(line for line in wide if line.startswith("workflow "))
    assert header.split() == ["workflow", *LIVE_RUN_STATES, *LIVE_STEP_STATES, "lag", "letters"]

    narrow = _on_console(frame(rows, now, width=60), 60)
    assert all(len(line) <= 60 for line in narrow), narrow
    headers = [line for line in narrow if line.startswith("workflow ")]
    assert [h.split() for h in headers] == [["workflow", *LIVE_RUN_STATES, "lag", "letters"],
                                            ["workflow", *LIVE_STEP_STATES]], narrow
    assert "gate" in "\n".join(narrow)


def test_top_once_without_a_terminal_cuts_nothing(invoke: Callable[..., Result], busy_engine: Client) -> None:
    out = ok(invoke("top", "--once"))
    assert "\x1b[" not in out and "…" not in out
    assert any(line.split()[:1] == [LONG] for line in out.splitlines()), out
    assert all(line == line.rstrip() for line in out.splitlines())


def test_top_without_a_terminal_streams_a_frame_every_interval(dsn: str, busy_engine: Client) -> None:
    """Issue 36: piped, ``cyclone top`` printed nothing until it ended; now each frame comes as it is read."""
    lines: list[str] = []
    with subprocess.Popen([sys.executable, "-m", "cyclone_py.cli", "top", "--interval", "0.2", "--dsn", dsn],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        out = proc.stdout
        assert out is not None
        reader = threading.Thread(target=lambda: lines.extend(iter(out.readline, "")), daemon=True)
        reader.start()
        try:
            wait_for(lambda: sum(line.startswith("cyclone top  ") for line in lines) >= 2, timeout=30,
                     what="two frames on the pipe")
        finally:
            proc.terminate()
            reader.join(timeout=10)
    text = "".join(lines)
    assert "\x1b[" not in text
    assert text.count(f"\n{LONG} ") >= 2, text
    second = [i for i, line in enumerate(lines) if line.startswith("cyclone top  ")][1]
    assert lines[second - 1] == "\n" and lines[second - 2].strip(), "frames are separated by one blank line"
