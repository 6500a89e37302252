"""The CLI of SPEC 17: ``cyclone events emit`` and ``events list``, ``rerun``,
``signal-with-start``, submit's ``--debounce-key``/``--debounce``/
``--debounce-max`` and ``--idempotency-window``; what ``explain``, ``steps``,
``run`` and ``runs`` say of event nodes, await nodes and reruns. Each refusal
is one line, exit 1."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from uuid import UUID

import pytest
from click.testing import CliRunner, Result
from helpers import ok, one_line_error, step_of

from cyclone_py import Client, cli

UNREACHABLE = "host=/nonexistent port=1 dbname=x"

# An event node waiting on the key its run's input makes, then a task.
PAY = {"nodes": [{"name": "paid", "kind": "event", "key": "order:{input.n}"},
                 {"name": "ship", "deps": ["paid"]}]}
# An await node on the run its input names.
FOLLOW = {"nodes": [{"name": "export_done", "kind": "await", "run": "input.run"}]}
# A wait node, then a task (what a rerun from a node keeps and runs again).
GATE = {"nodes": [{"name": "approval", "kind": "wait", "signal": "approved"},
                  {"name": "ship", "deps": ["approval"]}]}


@pytest.fixture
def client(dsn: str) -> Iterator[Client]:
    with Client(dsn) as c:
        for name, definition in (("pay", PAY), ("follow", FOLLOW), ("gate", GATE)):
            c.define_workflow(name, definition)
        yield c


def submit(invoke: Callable[..., Result], *args: str) -> UUID:
    return UUID(ok(invoke("submit", *args)).strip())


# -- events ------------------------------------------------------------------------------


def test_events_emit_completes_the_waiting_nodes_and_events_list_shows_the_kept_events(
        invoke: Callable[..., Result], client: Client) -> None:
    run_id = submit(invoke, "pay", "--input", '{"n": 1}')
    assert step_of(client, run_id, "paid").state == "waiting"

    out = ok(invoke("events", "emit", "order:1", "--payload", '{"paid": true, "by": "<b>card</b>"}'))
    assert out.strip() == "event 'order:1' emitted: it completed 1 event node"
    paid = step_of(client, run_id, "paid")
    assert (paid.state, paid.output) == ("completed", {"paid": True, "by": "<b>card</b>"})
    assert ok(invoke("events", "emit", "order:1")).strip() == "event 'order:1' emitted: it completed 0 event nodes"
    assert json.loads(ok(invoke("events", "emit", "order:2", "--json"))) == {"key": "order:2", "completed": 0}

    table = ok(invoke("events", "list")).splitlines()
    assert table[0].split() == ["KEY", "EMITTED", "PAYLOAD"]
    assert [line.split()[0] for line in table[1:]] == ["order:2", "order:1", "order:1"]  # newest first
    assert table[1].split()[-1] == "-" and table[3].endswith('{"by":"<b>card</b>","paid":true}')

    rows = json.loads(ok(invoke("events", "list", "--key", "order:1", "--json")))
    assert [(r["key"], r["payload"]) for r in rows] == [("order:1", None),
                                                        ("order:1", {"paid": True, "by": "<b>card</b>"})]
    assert rows[0]["emitted_at"].endswith("+00:00")
    assert len(json.loads(ok(invoke("events", "list", "--limit", "1", "--json")))) == 1
    empty = invoke("events", "list", "--key", "nosuch")
    assert ok(empty) == "" and "no events" in empty.stderr

    assert "invalid argument" in one_line_error(invoke("events", "emit", ""))


@pytest.mark.parametrize(("args", "expected"), [
    (["events", "emit", "k", "--payload", "{nope"], "not valid JSON"),
    (["events", "list", "--limit", "0"], "invalid value for '--limit'"),
    (["events", "list", "--limit", "501"], "invalid value for '--limit'"),
    (["rerun", "not-a-uuid"], "'not-a-uuid' is not a run id"),
    (["submit", "gate", "--debounce-key", "k", "--debounce", "soon"], "'soon' is not a duration"),
    (["submit", "gate", "--debounce-max", "1x"], "'1x' is not a duration"),
    (["submit", "gate", "--key", "k", "--idempotency-window", "later"], "'later' is not a duration"),
    (["signal-with-start", "gate", "k", "approved", "--input", "{nope"], "not valid JSON"),
])
def test_bad_values_are_refused_before_connecting(args: list[str], expected: str) -> None:
    assert expected in one_line_error(CliRunner().invoke(cli.main, ["--dsn", UNREACHABLE, *args]))


# -- what event and await nodes wait on ------------------------------------------------------------


def test_explain_steps_and_run_say_what_an_event_node_and_an_await_node_wait_on(
        invoke: Callable[..., Result], client: Client) -> None:
    pay = submit(invoke, "pay", "--input", '{"n": "a b"}')
    follow = submit(invoke, "follow", "--input", json.dumps({"run": str(pay)}))
    paid, done = step_of(client, pay, "paid"), step_of(client, follow, "export_done")

    assert ok(invoke("explain", str(paid.id))).strip().endswith(
        "waits for an event of key 'order:a b' (cyclone events emit 'order:a b')")
    assert ok(invoke("explain", str(done.id))).strip().endswith(f"waits for run {pay} to end")
    doc = json.loads(ok(invoke("explain", str(done.id), "--json")))
    assert (doc["reason"], doc["run_id"]) == ("waiting_run", str(pay))

    lines = ok(invoke("steps", str(pay))).splitlines()
    header = next(line for line in lines if line.startswith("ID  "))
    assert header.rstrip().endswith("COMPLETED  WAITS ON")
    assert next(line for line in lines if line.startswith(f"{paid.id} ")).rstrip().endswith("event order:a b")
    lines = ok(invoke("steps", str(follow))).splitlines()
    assert next(line for line in lines if line.startswith(f"{done.id} ")).rstrip().endswith(f"run {pay}")
    rows = json.loads(ok(invoke("steps", str(follow), "--json")))
    assert [(r["event_key"], r["awaited_run_id"]) for r in rows] == [(None, str(pay))]
    assert "WAITS ON" not in ok(invoke("steps", str(submit(invoke, "gate"))))  # no such node: no column

    fields = ok(invoke("run", str(follow))).splitlines()
    assert f"waiting on   export_done: waits for run {pay} to end" in fields
    assert "paid: waits for an event of key 'order:a b'" in ok(invoke("run", str(pay)))


# -- rerun ------------------------------------------------------------------------------------------


def test_rerun_prints_the_new_run_which_run_and_runs_name_as_a_rerun(
        invoke: Callable[..., Result], client: Client) -> None:
    original = submit(invoke, "gate", "--input", '{"n": 7}')
    assert "wrong state" in one_line_error(invoke("rerun", str(original)))  # a live run: not yet
    ok(invoke("signal", str(original), "approved", "--payload", '{"by": "ops"}'))
    ok(invoke("cancel", str(original)))

    again = UUID(ok(invoke("rerun", str(original), "--from", "ship", "--reason", "the courier is back")).strip())
    assert again != original
    row = client.get_run_row(again)
    assert (row.rerun_of, row.input) == (original, {"n": 7})
    steps = {s.node: (s.state, s.output) for s in client.steps(again)}
    assert steps == {"approval": ("completed", {"by": "ops"}), "ship": ("available", None)}
    assert [(a.action, a.node, a.reason) for a in client.audit(again)] == [("rerun", "ship", "the courier is back")]

    every = UUID(ok(invoke("rerun", str(original))).strip())
    assert {s.node: s.state for s in client.steps(every)} == {"approval": "waiting", "ship": "pending"}

    assert f"rerun of     {original}" in ok(invoke("run", str(again))).splitlines()
    assert "rerun of" not in ok(invoke("run", str(original)))
    assert json.loads(ok(invoke("run", str(again), "--json")))["rerun_of"] == str(original)
    table = ok(invoke("runs")).splitlines()
    assert table[0].split()[-2:] == ["RERUN", "OF"]
    listed = {line.split()[0]: line.split() for line in table[1:]}
    assert listed[str(again)][-1] == str(original) and listed[str(original)][-1] != str(original)
    assert "RERUN" not in ok(invoke("runs", "--workflow", "pay"))  # no rerun listed: no column

    assert "not found" in one_line_error(invoke("rerun", str(original), "--from", "nosuch"))
    assert "not found" in one_line_error(invoke("rerun", "00000000-0000-0000-0000-000000000000"))


# -- submit's debounce and dedupe window; signal-with-start ----------------------------------------


def test_submit_debounce_folds_a_burst_into_one_run_with_the_last_input(
        invoke: Callable[..., Result], client: Client) -> None:
    first = submit(invoke, "gate", "--input", '{"v": 1}', "--debounce-key", "k", "--debounce", "1m",
                   "--debounce-max", "5m")
    again = submit(invoke, "gate", "--input", '{"v": 2}', "--debounce-key", "k", "--debounce", "1m")
    assert again == first and client.get_run(first).input == {"v": 2}
    assert len(client.list_runs(workflow="gate")) == 1
    other = submit(invoke, "gate", "--debounce-key", "other", "--debounce", "30s")
    assert other != first

    assert "invalid argument" in one_line_error(invoke("submit", "gate", "--debounce-key", "k"))
    assert "invalid argument" in one_line_error(invoke("submit", "gate", "--debounce-max", "1m"))
    assert "invalid argument" in one_line_error(invoke("submit", "gate", "--debounce-key", "k", "--debounce", "0s"))


def test_submit_idempotency_window_dedupes_only_within_it(invoke: Callable[..., Result], client: Client) -> None:
    first = submit(invoke, "gate", "--key", "order-1", "--idempotency-window", "1h")
    assert submit(invoke, "gate", "--key", "order-1", "--idempotency-window", "1h") == first
    client.advance_time(timedelta(hours=2))
    later = submit(invoke, "gate", "--key", "order-1", "--idempotency-window", "1h")
    assert later != first
    assert submit(invoke, "gate", "--key", "order-1") == later  # the key names the new run now
    assert "invalid argument" in one_line_error(invoke("submit", "gate", "--idempotency-window", "1h"))


def test_signal_with_start_starts_the_run_of_the_key_once_and_signals_it(
        invoke: Callable[..., Result], client: Client) -> None:
    run_id = UUID(ok(invoke("signal-with-start", "gate", "order-9", "approved", "--payload", '{"by": "ops"}',
                            "--input", '{"n": 9}')).strip())
    assert client.get_run(run_id).input == {"n": 9}
    approval = step_of(client, run_id, "approval")
    assert (approval.state, approval.output) == ("completed", {"by": "ops"})
    doc = json.loads(ok(invoke("signal-with-start", "gate", "order-9", "again", "--json")))
    assert doc == {"run_id": str(run_id)}
    assert len(client.list_runs(workflow="gate")) == 1

    ok(invoke("cancel", str(run_id)))
    assert "wrong state" in one_line_error(invoke("signal-with-start", "gate", "order-9", "approved"))
    assert 'workflow "nosuch" not found' in one_line_error(invoke("signal-with-start", "nosuch", "k", "s"))
