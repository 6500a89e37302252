"""The ``cyclone`` command line: every command's happy path, ``--json``, bad input.

Most tests drive :data:`cyclone_py.cli.main` in-process with click's
CliRunner against the test's own database; the console-script tests run the
installed ``.venv/bin/cyclone`` as a subprocess, the way an operator does.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest
from click.testing import CliRunner, Result
from helpers import ok, one_line_error, terminal, wait_for

from cyclone_py import App, Client, Permanent, Worker, Workflow, cli
from cyclone_py.cli import runs as cli_runs
from cyclone_py.context import StepContext

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CYCLONE = ROOT / ".venv" / "bin" / "cyclone"
if not CYCLONE.exists():  # an install outside the checkout's venv
    CYCLONE = Path(sys.executable).with_name("cyclone")
UNREACHABLE = "host=/nonexistent port=1 dbname=x"
NO_RUN = "00000000-0000-0000-0000-000000000000"

# A workflow parked on a signal: nothing runs until `approved` arrives.
GATE = {"nodes": [{"name": "approval", "kind": "wait", "signal": "approved"},
                  {"name": "ship", "deps": ["approval"]}]}

doomed = Workflow("doomed")


@doomed.step()
def boom(ctx: StepContext) -> Any:
    raise Permanent("card declined")


# -- fixtures and helpers -----------------------------------------------------


@pytest.fixture
def client(dsn: str) -> Iterator[Client]:
    from apps.basic import basic

    with Client(dsn) as c:
        c.define_workflow("basic", basic.definition())
        c.define_workflow("gate", GATE)
        yield c


def submit(invoke: Callable[..., Result], *args: str) -> UUID:
    return UUID(ok(invoke("submit", *args)).strip())


def deadline_failed_run(invoke: Callable[..., Result], client: Client) -> UUID:
    """A `gate` run failed by its deadline (time moved, then one tick)."""
    run_id = submit(invoke, "gate", "--deadline", "1m")
    client.advance_time(timedelta(minutes=2))
    assert "deadlines  1" in ok(invoke("tick"))
    return run_id


@pytest.fixture
def worker_for(dsn: str) -> Iterator[Callable[[App | Workflow], Worker]]:
    started: list[Worker] = []

    def start(app: App | Workflow) -> Worker:
        w = Worker(app, dsn, poll_interval=0.1, lease_ttl=5.0, shutdown_grace=5.0, name=f"test-cli-{len(started)}")
        w.run_in_thread()
        started.append(w)
        return w

    yield start
    for w in started:
        w.stop(timeout=10)


# -- durations ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30), ("5m", 300), ("1h30m", 5400), ("1.5h", 5400), ("500ms", 0.5), ("2d", 172800), ("1H", 3600)],
)
def test_durations_take_units(text: str, seconds: float) -> None:
    assert cli.parse_duration(text) == timedelta(seconds=seconds)


def test_plain_seconds_only_where_allowed() -> None:
    assert cli.parse_duration("2.5", bare_seconds=True) == timedelta(seconds=2.5)
    with pytest.raises(ValueError, match="not a duration"):
        cli.parse_duration("30")


@pytest.mark.parametrize("text", ["", "5x", "m", "1h 30m", "-5s", "1.s", "nan"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        cli.parse_duration(text, bare_seconds=True)


# -- submit, runs, run ----------------------------------------------------------


def test_submit_prints_the_run_id_and_runs_lists_it(invoke: Callable[..., Result], client: Client) -> None:
    run_id = submit(invoke, "basic", "--input", '{"n": 1}')
    assert client.get_run(run_id).input == {"n": 1}

    table = ok(invoke("runs")).splitlines()
    assert table[0].split() == ["RUN", "WORKFLOW", "STATE", "CREATED", "DURATION"]
    assert table[1].split()[:3] == [str(run_id), "basic", "running"]

    rows = json.loads(ok(invoke("runs", "--json", "--workflow", "basic", "--state", "running", "--limit", "5")))
    assert [r["id"] for r in rows] == [str(run_id)]
    assert rows[0]["input"] == {"n": 1}

    empty = invoke("runs", "--state", "completed")
    assert ok(empty) == ""
    assert "no runs" in empty.stderr
    assert json.loads(ok(invoke("runs", "--json", "--workflow", "nosuch"))) == []


def test_submit_reads_input_from_a_file_and_honours_the_idempotency_key(
    invoke: Callable[..., Result], client: Client, tmp_path: Path
) -> None:
    path = tmp_path / "input.json"
    path.write_text('{"n": 42}')
    first = json.loads(ok(invoke("submit", "basic", "--input", f"@{path}", "--key", "order-42", "--json")))
    again = json.loads(ok(invoke("submit", "basic", "--input", "@-", "--key", "order-42", "--json", input="{}")))
    assert first == again
    assert client.get_run(first["run_id"]).input == {"n": 42}


def test_submit_deadline_sets_deadline_at(invoke: Callable[..., Result], client: Client) -> None:
    run_id = submit(invoke, "gate", "--deadline", "1h30m")
    run = client.get_run(run_id)
    assert run.deadline_at is not None
    assert run.deadline_at - run.created_at == timedelta(hours=1, minutes=30)


def test_run_shows_state_error_kind_error_and_timing(invoke: Callable[..., Result], client: Client) -> None:
    run_id = deadline_failed_run(invoke, client)

    text = ok(invoke("run", str(run_id)))
    fields = dict(line.split(None, 1) for line in text.splitlines() if not line.startswith(("error kind", "steps")))
    assert fields["state"].strip() == "failed"
    assert "error kind  deadline" in text
    assert "run deadline exceeded" in fields["error"]
    assert {"created", "started", "finished", "duration", "deadline"} <= set(fields)
    assert "2 steps: 1 discarded, 1 cancelled" in text

    doc = json.loads(ok(invoke("run", str(run_id), "--json")))
    assert (doc["id"], doc["state"], doc["error_kind"], doc["error"]) == (
        str(run_id), "failed", "deadline", "run deadline exceeded")
    assert doc["steps"] == {"discarded": 1, "cancelled": 1}
    assert doc["finished_at"] is not None and doc["duration_seconds"] >= 120


def test_run_of_a_running_run_shows_how_long_it_has_run(invoke: Callable[..., Result], client: Client) -> None:
    run_id = submit(invoke, "gate")
    text = ok(invoke("run", str(run_id)))
    assert "running for" in text
    assert "2 steps: 1 waiting, 1 pending" in text


# -- steps, dlq, tick, workflows ----------------------------------------------------


def test_steps_lists_every_step_with_its_full_error(invoke: Callable[..., Result], client: Client) -> None:
    run_id = deadline_failed_run(invoke, client)

    lines = ok(invoke("steps", str(run_id))).splitlines()
    assert lines[0] == f"run {run_id}  gate  failed"
    header = next(i for i, ln in enumerate(lines) if ln.startswith("ID  "))
    assert lines[header].split()[:3] == ["ID", "NODE", "KIND"]
    ids = {s.node: s.id for s in client.steps(run_id)}
    assert lines[header + 1].split()[:4] == [str(ids["approval"]), "approval", "wait", "discarded"]
    assert lines[header + 2].split()[:4] == [str(ids["ship"]), "ship", "task", "cancelled"]
    assert "approval: discarded, deadline, attempt 0/25" in lines
    assert "    run deadline exceeded" in lines

    rows = json.loads(ok(invoke("steps", str(run_id), "--json")))
    assert [(r["node"], r["state"], r["error_kind"], r["error"]) for r in rows] == [
        ("approval", "discarded", "deadline", "run deadline exceeded"),
        ("ship", "cancelled", "cancelled", "run deadline exceeded"),
    ]


def test_steps_shows_each_steps_id_which_explain_takes(invoke: Callable[..., Result], client: Client) -> None:
    """Issue 36: the ID column, so that `cyclone explain` needs no --json to find its argument."""
    run_id = submit(invoke, "gate")
    lines = ok(invoke("steps", str(run_id))).splitlines()
    header = next(ln for ln in lines if ln.startswith("ID  "))
    rows = {ln.split()[1]: ln.split()[0] for ln in lines[lines.index(header) + 1:] if ln.strip()}
    assert rows == {s.node: str(s.id) for s in client.steps(run_id)}
    assert ok(invoke("explain", rows["approval"])).startswith(f"step {rows['approval']} (node approval of run {run_id}")


def test_steps_shows_a_traceback_in_full(
    invoke: Callable[..., Result], client: Client, worker_for: Callable[[App | Workflow], Worker]
) -> None:
    flaky = Workflow("flaky", max_attempts=1)

    @flaky.step()
    def explode(ctx: StepContext) -> Any:
        raise RuntimeError("kaboom")

    worker_for(flaky)
    run_id = submit(invoke, "flaky")
    wait_for(lambda: client.get_run(run_id).terminal, what="the run to fail")
    text = ok(invoke("steps", str(run_id)))
    assert "    Traceback (most recent call last):" in text
    assert "    RuntimeError: kaboom" in text
    dlq = ok(invoke("dlq", "list", "--reason", "error"))
    assert "RuntimeError: kaboom" in dlq  # the telling line of the traceback


def test_steps_shows_the_error_of_every_attempt_and_the_next_try(
    invoke: Callable[..., Result], client: Client
) -> None:
    flaky = Workflow("flaky3", max_attempts=3)

    @flaky.step()
    def work(ctx: StepContext) -> Any:
        return None

    client.define_workflow(flaky.name, flaky.definition())
    run_id = submit(invoke, "flaky3")
    for attempt, retry_in in ((1, timedelta(0)), (2, timedelta(hours=1))):
        (step,) = client.claim(f"w{attempt}", ["work"], 1)
        assert client.fail(step.step_id, f"w{attempt}", step.lease_generation, f"boom {attempt}",
                           retry_in=retry_in) == "available"
    due = client.steps(run_id)[0].scheduled_at

    text = ok(invoke("steps", str(run_id)))
    lines = text.splitlines()
    header = next(ln for ln in lines if ln.startswith("ID  "))
    assert "NEXT TRY" in header
    row = lines[lines.index(header) + 1]
    assert row.split()[1:5] == ["work", "task", "available", "2/3"]
    assert cli.fmt_time(due) in row, "the next try is shown"
    assert "work: available, error, attempt 2/3" in lines
    assert "    boom 2" in lines
    assert any(ln.startswith("work: attempt 1 failed, error, worker w1, ") for ln in lines), text
    assert "    boom 1" in lines, "the first attempt's error, overwritten on the step, is still shown"

    rows = json.loads(ok(invoke("steps", str(run_id), "--json")))
    errors = [(e["attempt"], e["error"], e["worker"]) for e in rows[0]["errors"]]
    assert errors == [(1, "boom 1", "w1"), (2, "boom 2", "w2")]


def test_dlq_list_filters_by_reason_and_workflow(invoke: Callable[..., Result], client: Client) -> None:
    run_id = deadline_failed_run(invoke, client)

    table = ok(invoke("dlq", "list", "--reason", "deadline")).splitlines()
    assert table[0].split() == ["RUN", "WORKFLOW", "NODE", "REASON", "ATTEMPT", "DISCARDED", "ERROR"]
    assert len(table) == 2
    assert table[1].split()[:4] == [str(run_id), "gate", "approval", "deadline"]
    assert table[1].endswith("run deadline exceeded")

    rows = json.loads(ok(invoke("dlq", "list", "--json", "--workflow", "gate")))
    assert [(r["run_id"], r["node"], r["error_kind"]) for r in rows] == [(str(run_id), "approval", "deadline")]
    assert json.loads(ok(invoke("dlq", "list", "--json", "--reason", "timeout"))) == []
    assert json.loads(ok(invoke("dlq", "list", "--json", "--workflow", "basic"))) == []
    assert "no discarded steps" in invoke("dlq", "list", "--reason", "max_wait").stderr


def test_check_says_consistent_or_lists_what_breaks_an_invariant(invoke: Callable[..., Result], client: Client,
                                                                 dsn: str) -> None:
    assert ok(invoke("check")).strip() == "consistent: no invariant is broken"
    assert json.loads(ok(invoke("check", "--json"))) == []
    run_id = submit(invoke, "basic", "--input", '{"n": 1}')
    [step] = client.claim("w1", None, 1)
    with psycopg.connect(dsn, autocommit=True) as c:  # broken by hand: the API cannot break it
        c.execute("UPDATE cyclone.cyclone_steps SET lease_generation = 0 WHERE id = %s", (step.step_id,))
    result = invoke("check", "--json")
    assert result.exit_code == 1
    [row] = json.loads(result.stdout)
    assert (row["invariant"], row["detail"]["run_id"]) == ("running_step_without_lease", str(run_id))
    text = invoke("check")
    assert text.exit_code == 1 and "running_step_without_lease" in text.stdout


def test_tick_reports_counts(invoke: Callable[..., Result], client: Client) -> None:
    counts = json.loads(ok(invoke("tick", "--json", "--max-reclaims", "3")))
    assert {k: counts[k] for k in ("reclaimed", "retried", "discarded", "deadlines", "max_wait")} == dict.fromkeys(
        ("reclaimed", "retried", "discarded", "deadlines", "max_wait"), 0)
    run_id = submit(invoke, "gate", "--deadline", "10s")
    client.advance_time(timedelta(minutes=1))
    text = ok(invoke("tick"))
    assert "deadlines  1" in text
    assert str(run_id) in text and "run deadline exceeded" in text


def test_prune_deletes_runs_finished_longer_ago_and_keeps_the_rest(
    invoke: Callable[..., Result], client: Client
) -> None:
    old = [deadline_failed_run(invoke, client) for _ in range(3)]
    client.advance_time(timedelta(days=2))
    recent = deadline_failed_run(invoke, client)
    live = submit(invoke, "gate")
    # A batch of 1 still prunes all three: the command calls prune until none is left.
    assert ok(invoke("prune", "--older-than", "1d", "--batch", "1")).strip() == "pruned 3 runs"
    for run_id in old:
        assert "not found" in one_line_error(invoke("run", str(run_id)))
    assert client.get_run(recent).state == "failed"
    assert client.get_run(live).state == "running"
    assert json.loads(ok(invoke("prune", "--older-than", "1d", "--json"))) == {"pruned": 0, "reindexed": False}


def test_prune_reindex_rebuilds_the_engine_indexes(
    invoke: Callable[..., Result], client: Client, dsn: str
) -> None:
    import psycopg

    deadline_failed_run(invoke, client)
    client.advance_time(timedelta(days=2))

    def index_files() -> set[int]:
        with psycopg.connect(dsn) as c:
            return {int(r[0]) for r in c.execute(
                "SELECT c.relfilenode FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "WHERE i.indrelid IN ('cyclone.cyclone_steps'::regclass, 'cyclone.cyclone_runs'::regclass)")}

    before = index_files()
    assert len(before) >= 10
    assert ok(invoke("prune", "--older-than", "1d", "--reindex")).strip() == "pruned 1 run; indexes rebuilt"
    assert before.isdisjoint(index_files())  # every index is a new file
    assert json.loads(ok(invoke("prune", "--older-than", "1d", "--reindex", "--json"))) == {
        "pruned": 0, "reindexed": True}


def test_prune_needs_an_age(invoke: Callable[..., Result]) -> None:
    result = invoke("prune")
    assert result.exit_code == 2 and "Missing option '--older-than'" in result.stderr


def test_workflows_shows_edges_and_cuts_long_names(invoke: Callable[..., Result], client: Client) -> None:
    long_name = "w" * 200
    client.define_workflow(long_name, {"nodes": [
        {"name": "a"}, {"name": "b", "deps": ["a"]}, {"name": "c", "deps": ["a"]},
        {"name": "d", "deps": ["b", "c"]}, {"name": "lonely"}]})
    [row] = [ln for ln in ok(invoke("workflows")).splitlines() if ln.startswith("www")]
    assert row.split(None, 2) == ["w" * 37 + "...", "5", "a -> b, a -> c, b -> d, c -> d, lonely"]


def test_workflows_lists_definitions(invoke: Callable[..., Result], client: Client) -> None:
    lines = ok(invoke("workflows")).splitlines()
    assert lines[0].split() == ["WORKFLOW", "NODES", "GRAPH"]
    assert lines[2].split(None, 2) == ["gate", "2", "approval[wait:approved] -> ship"]
    defs = json.loads(ok(invoke("workflows", "--json")))
    assert [d["name"] for d in defs] == ["basic", "gate"]
    assert defs[1]["definition"]["nodes"][0]["signal"] == "approved"


# -- operator actions ---------------------------------------------------------------


def test_retry_reopens_a_discarded_step_and_refuses_the_rest(invoke: Callable[..., Result], client: Client) -> None:
    run_id = deadline_failed_run(invoke, client)

    msg = one_line_error(invoke("retry", str(run_id), "ship"))
    assert "wrong state" in msg and "not discarded (state=cancelled)" in msg
    assert "not found" in one_line_error(invoke("retry", str(run_id), "nosuch"))

    out = ok(invoke("retry", str(run_id), "approval", "--additional-attempts", "2", "--reason", "approver is back"))
    assert out.strip() == f"step 'approval' of run {run_id} reopened"
    assert client.get_run(run_id).state == "running"
    assert {s.node: s.state for s in client.steps(run_id)} == {"approval": "waiting", "ship": "pending"}

    assert "no discarded step" in one_line_error(invoke("retry", str(run_id)))


def test_retry_without_a_node_reopens_every_discarded_step(invoke: Callable[..., Result], client: Client) -> None:
    run_id = deadline_failed_run(invoke, client)
    assert ok(invoke("retry", str(run_id), "--reason", "all of it")).strip() == (
        f"1 discarded step of run {run_id} reopened")
    assert client.get_run(run_id).state == "running"
    result = invoke("retry", str(run_id), "--additional-attempts", "1")
    assert result.exit_code == 2 and "needs a NODE" in result.stderr


def test_signal_completes_the_wait_node_once(invoke: Callable[..., Result], client: Client) -> None:
    run_id = submit(invoke, "gate")
    out = ok(invoke("signal", str(run_id), "approved", "--payload", '{"by": "ops"}'))
    assert out.strip() == f"signal 'approved' delivered to run {run_id}"
    approval = {s.node: s for s in client.steps(run_id)}["approval"]
    assert (approval.state, approval.output) == ("completed", {"by": "ops"})

    assert "no wait node for 'approved' is still to come" in one_line_error(
        invoke("signal", str(run_id), "approved"))
    assert "not valid JSON" in one_line_error(invoke("signal", str(run_id), "other", "--payload", "{nope"))


def test_pause_resume_cancel_and_their_refusals(invoke: Callable[..., Result], client: Client) -> None:
    run_id = submit(invoke, "gate")
    assert ok(invoke("pause", str(run_id))).strip() == f"run {run_id} paused"
    assert one_line_error(invoke("pause", str(run_id))) == f"cyclone: cannot pause run {run_id}: it is paused"
    assert ok(invoke("resume", str(run_id))).strip() == f"run {run_id} resumed"
    assert one_line_error(invoke("resume", str(run_id))) == f"cyclone: cannot resume run {run_id}: it is running"
    assert ok(invoke("cancel", str(run_id), "--reason", "customer changed their mind")).strip() == (
        f"run {run_id} cancelled")
    assert one_line_error(invoke("cancel", str(run_id))) == f"cyclone: cannot cancel run {run_id}: it is cancelled"
    assert client.get_run(run_id).state == "cancelled"
    assert "it is cancelled" in one_line_error(invoke("signal", str(run_id), "approved"))


# -- submit --wait ----------------------------------------------------------------


def test_submit_wait_exits_0_when_the_run_completes(
    invoke: Callable[..., Result], client: Client, worker_for: Callable[[App | Workflow], Worker]
) -> None:
    from apps.basic import app

    worker_for(app)
    result = invoke("submit", "basic", "--input", '{"n": 5}', "--wait")
    out = ok(result)
    UUID(out.splitlines()[0])  # the first line is the run id
    assert "state       completed" in out
    assert '"only": {"n": 5}' in out
    assert result.stderr == ""  # no terminal: no progress bar

    doc = json.loads(ok(invoke("submit", "basic", "--wait", "--json")))
    assert doc["state"] == "completed" and doc["steps"] == {"completed": 1}


def test_submit_wait_draws_steps_done_on_a_terminal(
    invoke: Callable[..., Result], client: Client, worker_for: Callable[[App | Workflow], Worker],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from apps.basic import app

    monkeypatch.setattr(cli_runs, "stderr_is_tty", lambda: True)
    monkeypatch.setattr("click._termui_impl.isatty", lambda stream: True)
    worker_for(app)
    result = invoke("submit", "basic", "--wait")
    run_id = UUID(ok(result).splitlines()[0])
    assert f"run {run_id}  [" in result.stderr
    assert "1/1  completed" in result.stderr


def test_submit_wait_exits_1_when_the_run_fails(
    invoke: Callable[..., Result], client: Client, worker_for: Callable[[App | Workflow], Worker]
) -> None:
    worker_for(doomed)
    result = invoke("submit", "doomed", "--wait")
    assert result.exit_code == 1, result.output
    assert "state       failed" in result.stdout
    assert "error kind  permanent" in result.stdout
    assert "card declined" in result.stdout
    assert "Traceback" not in result.output

    doc = json.loads(invoke("submit", "doomed", "--wait", "--json").stdout)
    assert (doc["state"], doc["error_kind"]) == ("failed", "permanent")


def test_submit_wait_gives_up_after_its_timeout(invoke: Callable[..., Result], client: Client) -> None:
    msg = one_line_error(invoke("submit", "gate", "--wait", "--timeout", "300ms"))
    assert msg.startswith("cyclone: timed out after 0.30s waiting for run ") and "which is still running" in msg


def test_submit_wait_json_prints_a_json_object_on_timeout(invoke: Callable[..., Result], client: Client) -> None:
    result = invoke("submit", "gate", "--wait", "--timeout", "300ms", "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert (doc["state"], doc["timed_out"]) == ("running", True)
    assert doc["id"] == str(client.list_runs(limit=1)[0].id)


# -- bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "not-a-uuid"], "'not-a-uuid' is not a run id"),
        (["submit", "basic", "--input", "{nope"], "not valid JSON"),
        (["submit", "basic", "--input", "NaN"], "not valid JSON"),
        (["submit", "basic", "--input", "@/nonexistent/input.json"], "cannot read"),
        (["submit", "basic", "--deadline", "soon"], "'soon' is not a duration"),
        (["runs", "--state", "exploded"], "invalid value for '--state'"),
        (["runs", "--limit", "0"], "invalid value for '--limit'"),
        (["dlq", "list", "--reason", "gremlins"], "invalid value for '--error-kind' / '--reason'"),
        (["dlq", "retry", "--error-kind", "gremlins"], "invalid value for '--error-kind'"),
        (["dlq", "retry", "--all", "--older-than", "soon"], "'soon' is not a duration"),
        (["tick", "--max-reclaims", "-1"], "invalid value for '--max-reclaims'"),
        (["prune", "--older-than", "soon"], "'soon' is not a duration"),
        (["prune", "--older-than", "30d", "--batch", "0"], "invalid value for '--batch'"),
        (["worker", "--app", "apps.basic:app", "--lease-ttl", "0"], "must be more than zero"),
        (["worker", "--app", "apps.basic:app", "--prefetch", "-1"], "invalid value for '--prefetch'"),
        (["worker", "--app", "apps.basic:app", "--metrics-listen", "nonsense"], "'nonsense' is not HOST:PORT"),
        (["worker", "--app", "apps.basic:app", "--metrics-listen", "127.0.0.1:65536"], "is not HOST:PORT"),
        (["worker", "--app", "apps.basic:app", "--log-format", "xml"], "invalid value for '--log-format'"),
        (["worker", "--app", "apps.basic:app", "--workflow", "basic", "--workflow", "nosuch"],
         "cyclone: --workflow: the app declares no workflow 'nosuch' (its workflows: basic)"),
    ],
)
def test_bad_values_are_refused_before_connecting(args: list[str], expected: str) -> None:
    """Values are checked before any connection: the unreachable DSN is never tried."""
    assert expected in one_line_error(CliRunner().invoke(cli.main, ["--dsn", UNREACHABLE, *args]))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", NO_RUN], f"cyclone: run {NO_RUN} not found"),
        (["steps", NO_RUN], "not found"),
        (["cancel", NO_RUN], "not found"),
        (["retry", NO_RUN, "x"], "not found"),
        (["submit", "nosuch"], 'cyclone: workflow "nosuch" not found'),
        (["retry", NO_RUN, "x"], f"cyclone: run {NO_RUN} not found"),
        (["submit", "basic", "--key", ""], "invalid argument"),
        (["signal", NO_RUN, ""], "invalid argument"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(
    invoke: Callable[..., Result], client: Client, args: list[str], expected: str
) -> None:
    assert expected in one_line_error(invoke(*args))


def test_unreachable_database_is_one_line() -> None:
    started = time.monotonic()
    result = CliRunner().invoke(cli.main, ["--dsn", UNREACHABLE, "runs"])
    assert "database unavailable" in one_line_error(result)
    assert time.monotonic() - started < 5


def test_a_database_without_the_schema_says_so(embedded_db: Any) -> None:
    result = CliRunner().invoke(cli.main, ["--dsn", embedded_db.url("postgres"), "runs"])
    assert "not deployed" in one_line_error(result)


@pytest.mark.parametrize("args", [["run"], ["retry"], ["runs", "--bogus"], ["nosuch"]])
def test_usage_errors_exit_2(invoke: Callable[..., Result], args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_options_read_cyclone_environment_variables(dsn: str, client: Client) -> None:
    client.submit("basic")
    result = CliRunner().invoke(cli.main, ["runs"], env={"CYCLONE_DSN": dsn, "CYCLONE_JSON": "1"})
    assert [r["workflow"] for r in json.loads(ok(result))] == ["basic"]


@pytest.mark.slow
def test_migrate_verify_on_a_deployed_database(invoke: Callable[..., Result]) -> None:
    ok(invoke("migrate", "--verify"))


# -- the installed console script ---------------------------------------------------


def console(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CYCLONE_DSN", "DATABASE_URL")}
    return subprocess.run([str(CYCLONE), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


def test_console_script_lists_runs_as_json(dsn: str, client: Client) -> None:
    run_id = client.submit("basic", {"n": 3})
    proc = console("--dsn", dsn, "runs", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [r["id"] for r in json.loads(proc.stdout)] == [str(run_id)]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "not-a-uuid"], "is not a run id"),
        (["steps", NO_RUN], "not found"),
        (["submit", "basic", "--input", "{nope"], "not valid JSON"),
    ],
)
def test_console_script_bad_input_is_one_line_without_traceback(
    dsn: str, client: Client, args: list[str], expected: str
) -> None:
    proc = console("--dsn", dsn, *args)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("cyclone: ") and expected in line


def test_piping_into_head_is_no_error(dsn: str, client: Client) -> None:
    client.submit_many("basic", [{"n": i} for i in range(3000)])
    for args in (["runs", "--limit", "3000"], ["runs", "--json", "--limit", "3000"]):
        proc = subprocess.run(f"{CYCLONE} --dsn '{dsn}' {' '.join(args)} | head -c 10 >/dev/null; "
                              "echo ${PIPESTATUS[0]}", shell=True, executable="/bin/bash",
                              capture_output=True, text=True, timeout=60)
        assert (proc.stdout.strip(), proc.stderr) == ("0", ""), args


def test_a_bad_definition_at_worker_start_is_one_line(dsn: str, tmp_path: Path) -> None:
    (tmp_path / "badapp.py").write_text(
        "from cyclone_py import App, Workflow\n"
        "wf = Workflow('bad')\n"
        "@wf.step(timeout='nonsense')\n"
        "def a(ctx):\n"
        "    return 1\n"
        "app = App(wf)\n")
    proc = console("--dsn", dsn, "worker", "--app", "badapp:app", cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line == 'cyclone: invalid argument: workflow "bad": node "a": timeout "nonsense" is not an interval', line


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import json\nx = 1\nraise ValueError('broken module')\n", "broken.py, line 3: ValueError: broken module"),
        ("def x(:\n", "broken.py, line 1: SyntaxError: invalid syntax"),
        ("import no_such_module_here\n", "broken.py, line 1: ModuleNotFoundError: No module named"),
    ],
)
def test_an_error_in_the_app_module_names_its_file_and_line(
    dsn: str, tmp_path: Path, source: str, expected: str
) -> None:
    (tmp_path / "broken.py").write_text(source)
    proc = console("--dsn", dsn, "worker", "--app", "broken:app", cwd=tmp_path)
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("cyclone: cannot import --app broken:app: ") and expected in line, line


def test_dsn_after_the_subcommand_works_and_wins(dsn: str, client: Client) -> None:
    run_id = client.submit("basic", {"n": 1})
    for args in (["runs", "--json", "--dsn", dsn], ["--dsn", UNREACHABLE, "runs", "--json", "--dsn", dsn]):
        proc = console(*args)
        assert proc.returncode == 0, proc.stderr
        assert [r["id"] for r in json.loads(proc.stdout)] == [str(run_id)]
    proc = console("--dsn", dsn, "runs", "--dsn", UNREACHABLE)
    assert proc.returncode == 1 and "database unavailable" in proc.stderr, "the subcommand's value wins"


def test_console_script_unreachable_database(tmp_path: Path) -> None:
    proc = console("--dsn", UNREACHABLE, "submit", "basic", "--wait")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert "database unavailable" in line


@contextmanager
def worker_process(dsn: str, log: Path, *args: str, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """``cyclone worker ARGS`` run from tests/ (no PYTHONPATH) on ``dsn`` with ``env`` besides, its output in
    ``log``; at the end of the block it must stop cleanly on SIGTERM (it is killed if the block failed)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CYCLONE_DSN", "DATABASE_URL")}
    environ.update(CYCLONE_DSN=dsn, CYCLONE_POLL_INTERVAL="100ms", **env)
    with open(log, "w") as fh:
        proc = subprocess.Popen([str(CYCLONE), "worker", *args], cwd=TESTS, env=environ, stdout=fh,
                                stderr=subprocess.STDOUT)
        try:
            yield proc
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


def test_worker_command_runs_an_app_until_sigterm(dsn: str, client: Client, tmp_path: Path) -> None:
    """``cyclone worker`` imports ``apps.basic:app`` from its working directory
    (no PYTHONPATH), runs a run to completion, and stops cleanly on SIGTERM."""
    log = tmp_path / "worker.log"
    with worker_process(dsn, log, "--app", "apps.basic:app", "--concurrency", "2", "--prefetch", "0",
                        CYCLONE_LEASE_TTL="5", CYCLONE_SHUTDOWN_GRACE="5s"):
        run_id = client.submit("basic", {"n": 9})
        run = wait_for(lambda: (r := client.get_run(run_id)).terminal and r, what="the worker to run the step")
        assert (run.state, run.output) == ("completed", {"only": {"n": 9}})
    text = log.read_text()
    assert "worker started" in text and "poll_interval=0.1" in text and "worker stopped" in text
    assert "prefetch=0" in text
    assert "Traceback" not in text


@pytest.mark.slow
def test_worker_command_with_workflow_claims_steps_of_that_workflow_only(
        dsn: str, client: Client, tmp_path: Path) -> None:
    """``--workflow`` narrows what the worker claims to the workflows named:
    apps.policy declares two, and the other one's step is never taken."""
    from apps.policy import app, flaky, perm

    for name, definition in app.definitions():
        client.define_workflow(name, definition)
    skipped, served = client.submit(flaky), client.submit(perm)  # the skipped one first in claim order
    log = tmp_path / "worker.log"
    with worker_process(dsn, log, "--app", "apps.policy:app", "--workflow", "policy_perm",
                        CYCLONE_TEST_DIR=str(tmp_path)):
        assert wait_for(lambda: terminal(client, served), what="the served run").state == "failed"
        later = client.submit(flaky)  # its wake-up reaches the listener, which claims too
        time.sleep(0.5)
    for run_id in (skipped, later):
        step = client.steps(run_id)[0]
        assert (step.state, step.attempt) == ("available", 0), log.read_text()
    assert "workflows=['policy_perm']" in log.read_text()


def test_a_metrics_port_in_use_is_one_line_before_any_claim(dsn: str, client: Client) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = console("--dsn", dsn, "worker", "--app", "apps.basic:app", "--metrics-listen", f"127.0.0.1:{port}",
                       cwd=TESTS)
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert line == f"cyclone: cannot serve metrics on 127.0.0.1:{port}: Address already in use", line
    assert "worker started" not in proc.stdout


def test_worker_command_with_an_unknown_app_is_one_line(dsn: str) -> None:
    proc = console("--dsn", dsn, "worker", "--app", "nosuch_module:app")
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert "cannot import --app nosuch_module:app" in line
