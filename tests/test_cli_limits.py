"""``cyclone limits``, ``cyclone explain``, and what ``cyclone run`` and
``cyclone submit --wait`` say a run waits on: each command's text and
``--json``, and each refusal as one line, exit 1, nothing written."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any
from uuid import UUID

import helpers
import pytest
from click.testing import Result
from helpers import ok, start, step_of, wait_for

from cyclone_py import App, Client, Limit, Worker, Workflow
from cyclone_py.cli import explain as cli_explain
from cyclone_py.cli import runs as cli_runs
from cyclone_py.context import StepContext

CHARGE = {"nodes": [{"name": "charge", "limits": [{"name": "stripe"}, {"name": "per_tenant", "key": "tenant.id"}]},
                    {"name": "approval", "kind": "wait", "signal": "approved", "deps": ["charge"]},
                    {"name": "receipt", "deps": ["approval"], "limits": [{"name": "mail"}]}]}


@pytest.fixture
def client(dsn: str) -> Iterator[Client]:
    with Client(dsn) as c:
        yield c


@pytest.fixture
def charge(client: Client) -> Client:
    client.define_limit("stripe", 5)
    client.define_limit("per_tenant", 1)
    client.define_limit("mail", rate=1, period=timedelta(minutes=1))
    client.define_workflow("charge", CHARGE)
    return client


def one_line_error(result: Result) -> str:
    """One ``cyclone: ...`` line on stderr, and nothing on stdout."""
    line = helpers.one_line_error(result)
    assert result.stdout == ""
    return line


def claim_one(client: Client, run_id: UUID, node: str = "charge") -> None:
    """Claim the run's step as worker w1 (nothing else is claimable)."""
    [c] = client.claim("w1", limit=1)
    assert (c.run_id, c.node) == (run_id, node)


# -- cyclone limits ----------------------------------------------------------------


def test_set_then_list_shows_every_bucket_with_its_counts(invoke: Callable[..., Result], charge: Client) -> None:
    acme = charge.submit("charge", {"tenant": {"id": "acme"}})
    charge.submit("charge", {"tenant": {"id": "acme"}})
    claim_one(charge, acme)
    table = ok(invoke("limits")).splitlines()
    assert table[0].split() == ["NAME", "BUCKET", "CONCURRENCY", "RUNNING", "RATE", "CLAIMS", "IN", "PERIOD",
                                "AVAILABLE"]
    assert [line.split() for line in table[1:]] == [
        ["mail", "''", "-", "0", "1/1m", "0", "0"],
        ["per_tenant", "''", "1", "0", "-", "-", "0"],
        ["per_tenant", "'acme'", "1", "1", "-", "-", "1"],
        ["stripe", "''", "5", "1", "-", "-", "1"],
    ]
    assert ok(invoke("limits", "list")).splitlines() == table
    docs = json.loads(ok(invoke("limits", "--json")))
    assert docs[2] == {"name": "per_tenant", "bucket": "acme", "concurrency": 1, "running": 1, "rate": None,
                       "period": None, "claims_in_period": None, "available": 1}
    assert docs[0]["period"] == 60.0
    assert json.loads(ok(invoke("limits", "list", "--json"))) == docs


def test_set_creates_and_replaces_a_limit(invoke: Callable[..., Result], client: Client) -> None:
    assert ok(invoke("limits", "set", "stripe", "--concurrency", "5")).strip() == "limit 'stripe' set: concurrency 5"
    out = ok(invoke("limits", "set", "stripe", "--concurrency", "3", "--rate", "100", "--per", "1m"))
    assert out.strip() == "limit 'stripe' set: concurrency 3, rate 100 per 1m"
    assert json.loads(ok(invoke("limits", "set", "stripe", "--rate", "10", "--per", "1h30m", "--json"))) == {
        "name": "stripe", "concurrency": None, "rate": 10, "period": 5400.0}
    assert json.loads(ok(invoke("limits", "--json", "set", "mail", "--rate", "2", "--per", "500ms")))["period"] == 0.5
    assert [(r.name, r.concurrency, r.rate) for r in client.limits()] == [("mail", None, 2), ("stripe", None, 10)]


def test_list_with_no_limits_prints_nothing(invoke: Callable[..., Result]) -> None:
    empty = invoke("limits")
    assert ok(empty) == "" and "no limits" in empty.stderr
    assert json.loads(ok(invoke("limits", "--json"))) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "invalid argument: define_limit: give p_concurrency, or p_rate with p_period, or both"),
        (("--rate", "5"), "invalid argument: define_limit: p_rate and p_period come together"),
        (("--concurrency", "0"), "invalid argument: define_limit: p_concurrency must be positive, got 0"),
        (("--per", "1m"), "invalid argument: define_limit: p_rate and p_period come together"),
        (("--concurrency", "many"), "invalid value for '--concurrency': 'many' is not a valid integer."),
        (("--rate", "1", "--per", "soon"), "invalid value for '--per'"),
    ],
)
def test_bad_limits_are_one_line_and_write_nothing(
    invoke: Callable[..., Result], client: Client, args: tuple[str, ...], message: str
) -> None:
    assert one_line_error(invoke("limits", "set", "x", *args)).startswith(f"cyclone: {message}")
    assert client.limits() == []


def test_rm_removes_a_limit_and_refuses_one_in_use(invoke: Callable[..., Result], charge: Client) -> None:
    charge.define_limit("spare", 1)
    assert ok(invoke("limits", "rm", "spare")).strip() == "limit 'spare' removed"
    charge.define_limit("spare", 1)
    assert json.loads(ok(invoke("limits", "rm", "spare", "--json"))) == {"name": "spare", "removed": True}
    assert one_line_error(invoke("limits", "rm", "spare")) == 'cyclone: limit "spare" not found'
    assert one_line_error(invoke("limits", "rm", "stripe")) == (
        'cyclone: wrong state: drop_limit: limit "stripe" is named by workflow "charge"')
    assert {r.name for r in charge.limits()} == {"mail", "per_tenant", "stripe"}


# -- cyclone explain ---------------------------------------------------------------


def explain(invoke: Callable[..., Result], step_id: int) -> tuple[str, dict[str, Any]]:
    text = ok(invoke("explain", str(step_id))).strip()
    doc = json.loads(ok(invoke("explain", str(step_id), "--json")))
    assert text.endswith(doc["text"]) and doc["step_id"] == step_id
    return text, doc


def test_explain_words_each_reason(invoke: Callable[..., Result], charge: Client) -> None:
    first = charge.submit("charge", {"tenant": {"id": "acme"}})
    second = charge.submit("charge", {"tenant": {"id": "acme"}})
    held = step_of(charge, second, "charge")

    text, doc = explain(invoke, held.id)
    assert text == (f"step {held.id} (node charge of run {second}, workflow charge): claimable: the next worker "
                    "that claims its handler takes it")
    assert doc == {"step_id": held.id, "run_id": str(second), "workflow": "charge", "node": "charge",
                   "reason": "claimable", "workers": 0, "text": doc["text"]}

    claim_one(charge, first)
    assert explain(invoke, step_of(charge, first, "charge").id)[1]["text"] == "running (worker w1)"
    text, doc = explain(invoke, held.id)
    assert doc["text"] == "held back: bucket 'acme' of limit per_tenant is full (1/1 running)"
    assert (doc["reason"], doc["limit"], doc["bucket"], doc["running"], doc["max"]) == (
        "concurrency_limit", "per_tenant", "acme", 1, 1)
    assert explain(invoke, step_of(charge, first, "receipt").id)[1]["text"] == "waiting for dependency approval"

    charge.define_limit("per_tenant", 5)  # room again; now the stripe bucket '' is full
    charge.define_limit("stripe", 1)
    assert explain(invoke, held.id)[1]["text"] == "held back: bucket '' of limit stripe is full (1/1 running)"

    charge.pause(second)
    assert explain(invoke, held.id)[1]["text"] == "run paused (cyclone resume RUN_ID)"
    charge.resume(second)
    charge.cancel(second)
    assert explain(invoke, held.id)[1]["text"] == "cancelled"


def test_explain_a_signal_a_rate_limit_a_backoff_and_no_worker(invoke: Callable[..., Result], charge: Client) -> None:
    a = charge.submit("charge", {"tenant": {"id": "a"}})
    b = charge.submit("charge", {"tenant": {"id": "b"}})
    for _ in (a, b):  # each run's first step
        [c] = charge.claim("w1", limit=1)
        assert charge.complete(c.step_id, "w1", c.lease_generation, {})
    assert explain(invoke, step_of(charge, a, "approval").id)[1]["text"] == "waiting for signal 'approved'"
    charge.signal(a, "approved")
    charge.signal(b, "approved")
    [c] = charge.claim("w1", limit=5)  # mail: 1 a minute
    other = b if c.run_id == a else a
    rate, doc = explain(invoke, step_of(charge, other, "receipt").id)
    assert doc["reason"] == "rate_limit" and doc["limit"] == "mail" and doc["bucket"] == ""
    assert doc["text"].startswith("rate limit mail: next slot at ") and "(in " in doc["text"]

    assert charge.fail(c.step_id, "w1", c.lease_generation, "smtp down", "error", timedelta(minutes=10)) == "available"
    text = explain(invoke, c.step_id)[1]["text"]
    assert text.startswith("backing off after attempt 1 failed (error): not due until ") and "(in 9m" in text

    # Claimable for longer than the grace on the engine clock, and nobody took it: no worker claims it.
    charge.advance_time(timedelta(minutes=2))
    assert explain(invoke, step_of(charge, other, "receipt").id)[1]["text"].endswith(
        "but not claimed: no worker is claiming handler 'receipt' of workflow 'charge'")


@pytest.mark.parametrize(
    ("arg", "message"),
    [("999999", "cyclone: step 999999 not found"),
     ("abc", "cyclone: invalid value for 'STEP_ID': 'abc' is not a valid integer.")],
)
def test_explain_of_an_unknown_or_malformed_step_is_one_line(
    invoke: Callable[..., Result], client: Client, arg: str, message: str
) -> None:
    assert one_line_error(invoke("explain", arg)) == message
    assert one_line_error(invoke("explain", arg, "--json")) == message


# -- what a run that does not move waits on -------------------------------------------


def test_run_says_what_each_step_waits_on(invoke: Callable[..., Result], charge: Client) -> None:
    first = charge.submit("charge", {"tenant": {"id": "acme"}})
    second = charge.submit("charge", {"tenant": {"id": "acme"}})
    claim_one(charge, first)
    text = ok(invoke("run", str(second)))
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("waiting on"))
    assert lines[at].split(None, 2)[2] == "charge: held back: bucket 'acme' of limit per_tenant is full (1/1 running)"
    assert lines[at + 1].strip() == "approval: waiting for dependency charge"
    assert lines[at + 2].strip() == "receipt: waiting for dependency approval"
    doc = json.loads(ok(invoke("run", str(second), "--json")))
    assert [(w["node"], w["reason"]) for w in doc["waiting_on"]] == [
        ("charge", "concurrency_limit"), ("approval", "pending_deps"), ("receipt", "pending_deps")]
    # The run that holds the slot is running: it waits on nothing but its own steps' dependencies.
    assert [w["node"] for w in json.loads(ok(invoke("run", str(first), "--json")))["waiting_on"]] == [
        "approval", "receipt"]
    charge.cancel(second)
    assert "waiting on" not in ok(invoke("run", str(second)))
    assert json.loads(ok(invoke("run", str(second), "--json")))["waiting_on"] == []


def test_submit_wait_says_what_a_stuck_run_waits_on(
    invoke: Callable[..., Result], charge: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_runs, "WAIT_STALL", 0.1)
    blocker = charge.submit("charge", {"tenant": {"id": "acme"}})
    claim_one(charge, blocker)  # holds acme's one slot
    result = invoke("submit", "charge", "--input", '{"tenant": {"id": "acme"}}', "--wait", "--timeout", "1s")
    assert result.exit_code == 1
    run_id = UUID(result.stdout.splitlines()[0])
    lines = result.stderr.strip().splitlines()
    stalled = (f"run {run_id} is waiting on charge: held back: bucket 'acme' of limit per_tenant is full "
               "(1/1 running); approval: waiting for dependency charge; receipt: waiting for dependency approval")
    assert lines == [stalled, f"cyclone: timed out after 1.00s waiting for run {run_id}, which is still running and "
                              f"goes on (see: cyclone run {run_id}); waiting on " + stalled.split(" waiting on ")[1]]
    result = invoke("submit", "charge", "--input", '{"tenant": {"id": "acme"}}', "--wait", "--timeout", "300ms",
                    "--json")
    doc = json.loads(result.stdout)
    assert doc["timed_out"] is True and doc["waiting_on"][0]["reason"] == "concurrency_limit"


def test_submit_wait_says_no_worker_claims_and_then_finishes_when_one_does(
    dsn: str, invoke: Callable[..., Result], client: Client, monkeypatch: pytest.MonkeyPatch,
    workers: list[Worker],
) -> None:
    monkeypatch.setattr(cli_runs, "WAIT_STALL", 0.1)
    monkeypatch.setattr(cli_explain, "CLAIM_GRACE", timedelta(milliseconds=300))
    wf = Workflow("greet", limits=[Limit("api", concurrency=1)])

    @wf.step()
    def hello(ctx: StepContext) -> Any:
        return "hi"

    client.define_limit("api", 1)
    client.define_workflow("greet", wf.definition())
    said = threading.Event()
    original = cli_runs.waiting_on

    def watch(c: Client, run_id: UUID) -> list[dict[str, Any]]:
        found = original(c, run_id)
        if any("no worker is claiming" in w["text"] for w in found):
            said.set()
        return found

    monkeypatch.setattr(cli_runs, "waiting_on", watch)
    threading.Thread(target=lambda: (wait_for(said.is_set, timeout=20, what="the stall line"),
                                     start(workers, App(wf), dsn)), daemon=True).start()
    result = invoke("submit", "greet", "--wait", "--timeout", "20s")
    assert result.exit_code == 0, result.output
    assert "state       completed" in result.stdout
    assert "hello: claimable since " in result.stderr
    assert "but not claimed: no worker is claiming handler 'hello' of workflow 'greet'" in result.stderr


def test_submit_wait_on_a_terminal_says_it_in_the_progress_bar(
    invoke: Callable[..., Result], charge: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_runs, "WAIT_STALL", 0.1)
    monkeypatch.setattr(cli_runs, "stderr_is_tty", lambda: True)
    monkeypatch.setattr("click._termui_impl.isatty", lambda stream: True)
    claim_one(charge, charge.submit("charge", {"tenant": {"id": "acme"}}))
    result = invoke("submit", "charge", "--input", '{"tenant": {"id": "acme"}}', "--wait", "--timeout", "1s")
    assert result.exit_code == 1
    assert "running, waiting on charge: held back: bucket 'acme' of limit per_tenant is full" in result.stderr
    assert " is waiting on " not in result.stderr  # no line of its own under the bar
