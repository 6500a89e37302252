"""The operator's rough edges of issue 36 in the ``cyclone`` command: ``dlq retry``, ``top`` fitting the
terminal and streaming without one, ``ui`` on a busy port, read-only commands that never start the embedded
database, ``--version`` with the database's release.

In process with click's CliRunner against the test's own database, as tests/test_cli.py does; a subprocess
where a terminal (or its absence) or the environment matters.
"""

from __future__ import annotations

import gc
import io
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest
from click.testing import CliRunner, Result
from helpers import ok, one_line_error, step_of, wait_for
from rich.console import Console

from cyclone_py import App, Permanent, Workflow, __version__, cli, db
from cyclone_py.client import Client
from cyclone_py.context import StepContext
from cyclone_py.formatting import fmt_attempts
from cyclone_py.testing import Env
from cyclone_py.top import frame
from cyclone_py.vocabulary import LIVE_RUN_STATES, LIVE_STEP_STATES

# -- cyclone dlq retry ------------------------------------------------------------------


def dead_letter(client: Client, workflow: str, error_kind: str = "permanent") -> UUID:
    """A run of ``workflow`` (one task, one attempt) whose step is discarded with ``error_kind``."""
    client.define_workflow(workflow, {"max_attempts": 1, "nodes": [{"name": "charge"}]})
    run_id = client.submit(workflow)
    (step,) = client.claim("w", workflows=[workflow])
    assert client.fail(step.step_id, "w", step.lease_generation, "card declined", error_kind) == "discarded"
    return run_id


def discarded(client: Client, *runs: UUID) -> list[bool]:
    return [step_of(client, run, "charge").state == "discarded" for run in runs]


def test_dlq_retry_retries_what_its_filters_pick_and_dry_run_only_counts(
        invoke: Callable[..., Result], client: Client) -> None:
    old = [dead_letter(client, "billing") for _ in range(2)]
    shipping = dead_letter(client, "shipping")
    client.advance_time(timedelta(hours=2))
    new, other_kind = dead_letter(client, "billing"), dead_letter(client, "billing", "error")
    everything = [*old, shipping, new, other_kind]

    refused = invoke("dlq", "retry", "--reason", "permanent")  # dlq list's --reason is --error-kind here
    assert refused.exit_code == 2 and "--error-kind" in refused.output
    picked = ("--workflow", "billing", "--error-kind", "permanent")
    assert ok(invoke("dlq", "retry", *picked, "--dry-run")) == "would retry 3 steps of 3 runs\n"
    assert ok(invoke("dlq", "retry", *picked, "--older-than", "1h", "--dry-run")) == "would retry 2 steps of 2 runs\n"
    assert all(discarded(client, *everything)), "a dry run retries nothing"

    out = ok(invoke("dlq", "retry", *picked, "--older-than", "1h", "--reason", "processor back"))
    assert out == "retried 2 steps of 2 runs\n"
    assert discarded(client, *everything) == [False, False, True, True, True]
    assert all(client.get_run(run).state == "running" for run in old)
    (audit,) = client.audit(old[0])
    assert (audit.action, audit.node, audit.reason) == ("retry", "charge", "processor back")

    assert ok(invoke("dlq", "retry", "--all", "--dry-run")) == "would retry 3 steps of 3 runs\n"
    none = invoke("dlq", "retry", "--workflow", "billing", "--older-than", "1d")
    assert none.exit_code == 0 and none.stdout == "" and none.stderr == "no dead letters match\n"


def test_attempts_past_the_maximum_read_as_a_reopened_step() -> None:
    assert [fmt_attempts(2, 5), fmt_attempts(5, 5), fmt_attempts(6, 5)] == ["2/5", "5/5", "6 of 5 (reopened)"]


def test_a_step_retried_without_more_attempts_shows_attempt_n_of_max_reopened(
        invoke: Callable[..., Result], client: Client) -> None:
    """Issue 36: a retry with no additional attempts gives a step one more execution and keeps its
    max_attempts; `cyclone steps` and `dlq list` said 2/1, which read like a bug."""
    run_id = dead_letter(client, "billing")  # attempt 1 of 1, discarded
    assert ok(invoke("retry", str(run_id))).startswith("1 discarded step")
    (step,) = client.claim("w", workflows=["billing"])
    assert (step.attempt, step.max_attempts) == (2, 1)
    assert client.fail(step.step_id, "w", step.lease_generation, "declined again", "permanent") == "discarded"

    lines = ok(invoke("steps", str(run_id))).splitlines()
    row = next(line for line in lines if line.split()[1:2] == ["charge"])
    assert "  2 of 1 (reopened)  " in row and "2/1" not in row
    assert "charge: discarded, permanent, attempt 2 of 1 (reopened)" in lines
    assert "2 of 1 (reopened)" in ok(invoke("dlq", "list"))


def maps(on_item_failure: str) -> Workflow:
    """A map over the input's images; broken.png fails for good."""
    wf = Workflow(f"thumbs_{on_item_failure}")

    @wf.map(over="input.images", on_item_failure=on_item_failure, max_attempts=1)
    def resize(ctx: StepContext) -> Any:
        if ctx.item == "broken.png":
            raise Permanent("cannot decode broken.png")
        return "small-" + ctx.item

    return wf


def test_dlq_retry_brings_a_maps_items_back_with_it_and_names_each_refusal(
        dsn: str, invoke: Callable[..., Result], client: Client) -> None:
    """A map's discarded items choose their map, retried once; a map that completed with discarded
    items (collect) cannot be retried: the engine's refusal is one line, the others go on, exit 1."""
    failing, collecting = maps("fail"), maps("collect")
    with Env(dsn, App(failing, collecting)) as env:
        runs = {wf.name: env.submit(wf.name, {"images": ["a.png", "broken.png"]}) for wf in (failing, collecting)}
        for run in runs.values():
            env.run_until_complete(run)
    assert ok(invoke("dlq", "retry", "--all", "--dry-run")) == (
        "would retry 2 steps of 2 runs, 2 map items with their map\n")

    result = invoke("dlq", "retry", "--all")
    assert result.exit_code == 1
    assert result.stdout == "retried 1 of 2 steps of 2 runs; 1 refused\n"
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"cyclone: run {runs['thumbs_collect']}, node resize: wrong state: ")
    assert "is not discarded (state=completed)" in line
    assert step_of(client, runs["thumbs_fail"], "resize").state == "waiting", "the failed map is back, with its items"


# -- cyclone audit ----------------------------------------------------------------------


def test_audit_lists_who_did_what_to_a_run_and_from_where(invoke: Callable[..., Result], client: Client) -> None:
    """Issue 36: every operator action and signal records who and from where (the session's application_name:
    cyclone-cli for the CLI), and the payload's size; ``cyclone audit RUN`` lists them."""
    client.define_workflow("gate", {"nodes": [{"name": "approval", "kind": "wait", "signal": "go"}]})
    run = client.submit("gate")
    ok(invoke("pause", str(run)))
    ok(invoke("resume", str(run)))
    ok(invoke("signal", str(run), "go", "--payload", '{"ok": true}'))
    client.acting_as("ann").cancel(client.submit("gate"), "dup")  # another run: not listed
    role = client._value("SELECT session_user")
    lines = ok(invoke("audit", str(run))).splitlines()
    assert lines[0].split() == ["AT", "WHAT", "REASON", "BY,", "FROM", "WHERE"]
    rows = json.loads(ok(invoke("audit", str(run), "--json")))
    actor = f"{role} from cyclone-cli"
    assert [(r["action"], r["node"], r["actor"]) for r in rows] == [
        ("pause", None, actor), ("resume", None, actor), ("signal", "go", actor)]
    size = rows[-1]["detail"]["payload_bytes"]
    assert list(rows[-1]["detail"]) == ["payload_bytes"] and size > 0
    for line, what in zip(lines[1:], ["pause", "resume", f"signal go ({size} bytes)"], strict=True):
        assert f"  {what}  " in line and line.split()[-4:] == ["-", *actor.split()], line
    none = invoke("audit", str(client.submit("gate")))
    assert none.exit_code == 0 and none.stderr == "no audit rows for this run\n"


# -- cyclone ui -----------------------------------------------------------------------


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port something else listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        yield int(taken.getsockname()[1])


def test_ui_on_a_busy_port_names_the_address_and_what_to_do(invoke: Callable[..., Result], busy_port: int) -> None:
    line = one_line_error(invoke("ui", "--listen", f"127.0.0.1:{busy_port}"))
    assert line.startswith(f"cyclone: cannot serve the console on 127.0.0.1:{busy_port}: the address is in use")
    assert "--listen with another port" in line and "Errno" not in line


def test_a_bind_that_fails_closes_its_socket(busy_port: int) -> None:
    """console/server.py's bind() left the socket it made to the garbage collector when the bind failed (a
    ResourceWarning, and a file descriptor until a collection): it closes it before raising."""
    from cyclone_py.console import server

    fds = Path("/proc/self/fd")
    before = len(list(fds.iterdir()))
    gc.disable()  # only an explicit close frees the descriptors here
    try:
        for _ in range(20):
            with pytest.raises(OSError):
                server.bind("127.0.0.1", busy_port)
        assert len(list(fds.iterdir())) == before
    finally:
        gc.enable()


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


# -- cyclone --version ----------------------------------------------------------------------


def test_version_prints_the_package_release_and_with_a_dsn_the_engines(
        dsn: str, conn: psycopg.Connection[Any], embedded_db: db.EmbeddedCluster) -> None:
    package = f"cyclone {__version__} (package cyclone_py)\n"
    no_dsn = {"CYCLONE_DSN": None, "DATABASE_URL": None}
    assert ok(CliRunner().invoke(cli.main, ["--version"], env=no_dsn)) == package
    engine = f"database {db.dsn_label(dsn)}: Cyclone engine {__version__}\n"
    for args, env in ((["--dsn", dsn, "--version"], no_dsn), (["--version", "--dsn", dsn], no_dsn),
                      (["--version"], {"CYCLONE_DSN": dsn})):
        assert ok(CliRunner().invoke(cli.main, args, env=env)) == package + engine, args

    empty = embedded_db.url("postgres")
    assert ok(CliRunner().invoke(cli.main, ["--dsn", empty, "--version"])) == (
        package + f"database {db.dsn_label(empty)}: no Cyclone engine deployed (run: cyclone migrate)\n")

    conn.execute("DROP FUNCTION cyclone.version()")  # as an engine before 0.22.0 is
    older = ok(CliRunner().invoke(cli.main, ["--dsn", dsn, "--version"]))
    assert older.splitlines()[1] == (f"database {db.dsn_label(dsn)}: Cyclone engine older than 0.22.0 "
                                     "(it has no cyclone.version(); cyclone migrate upgrades it)")

    unreachable = CliRunner().invoke(cli.main, ["--dsn", "host=/nonexistent port=1 dbname=x", "--version"])
    assert unreachable.stdout == package
    assert one_line_error(unreachable).startswith("cyclone: database x@/nonexistent:1: database unavailable")
