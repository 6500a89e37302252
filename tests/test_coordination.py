"""Coordination (SPEC 17): events, awaiting runs, debounce, dedupe windows,
signal_with_start and rerun, from the Python runtime and in races between
connections.

The races are forced in both orders: one transaction is held open at the
point that matters and the other is started against it (and shown to block
on a lock, or not), so each interleaving the lock design must survive is run
every time, not left to chance. Each is repeated five times.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from uuid import UUID

import pytest
from helpers import assert_consistent
from psycopg.types.json import Jsonb
from sqlapi import Call, Conn, connect, db, define, submit, wait_until_blocked  # noqa: F401  (db is a fixture)

from cyclone_py import App, Client, Workflow
from cyclone_py.context import StepContext
from cyclone_py.errors import InvalidArgument, WrongState
from cyclone_py.testing import Env

ROUNDS = 5


@pytest.fixture(autouse=True)
def _consistent_at_the_end(dsn: str) -> Iterator[None]:
    """Every test here ends with no broken invariant (cyclone.check_invariants())."""
    yield
    assert_consistent(dsn)


def claim_node(c: Conn, run_id: UUID, node: str) -> dict[str, Any]:
    rows = c.execute("SELECT c.* FROM cyclone.claim('w', ARRAY[(SELECT handler FROM cyclone.cyclone_steps"
                     " WHERE run_id = %s AND node = %s AND item_index IS NULL)], 100) c", (run_id, node)).fetchall()
    assert [(r["run_id"], r["node"]) for r in rows] == [(run_id, node)], rows
    return dict(rows[0])


def complete(c: Conn, claim: dict[str, Any], output: Any = None) -> None:
    row = c.execute("SELECT cyclone.complete(%s, 'w', %s, %s) AS ok",
                    (claim["step_id"], claim["lease_generation"], Jsonb(output or {}))).fetchone()
    assert row is not None and row["ok"] is True


def step(c: Conn, run_id: UUID, node: str) -> dict[str, Any]:
    row = c.execute("SELECT * FROM cyclone.cyclone_steps WHERE run_id = %s AND node = %s AND item_index IS NULL",
                    (run_id, node)).fetchone()
    assert row is not None
    return dict(row)


# -- an event and its node, reached at the same instant ------------------------------------------------


@pytest.mark.parametrize("first", ["reach", "emit"])
def test_an_event_emitted_as_its_node_is_reached_completes_it_exactly_once(dsn: str, db: Conn, first: str) -> None:
    """The reach holds its key's lock shared until it commits, emit_event takes it exclusive: whichever comes
    first, the other sees what it did, and the node completes once, with the event's payload."""
    define(db, "pay", [{"name": "a", "handler": "pay_a"},
                       {"name": "paid", "kind": "event", "key": "order:{input.n}", "deps": ["a"]},
                       {"name": "ship", "handler": "pay_ship", "deps": ["paid"]}])
    for n in range(ROUNDS):
        run_id = submit(db, "pay", {"n": n})
        claim = claim_node(db, run_id, "a")
        with connect(dsn) as reacher, connect(dsn) as emitter:
            reacher.autocommit = emitter.autocommit = False
            if first == "reach":
                complete(reacher, claim)  # the node is waiting, under the shared key lock, not committed
                pid = emitter.info.backend_pid
                emit = Call(lambda: emitter.execute("SELECT cyclone.emit_event(%s, %s) AS n",
                                                    (f"order:{n}", Jsonb({"paid": n}))).fetchone())
                emit.start()
                wait_until_blocked(db, pid)
                reacher.commit()
                assert emit.value()["n"] == 1, "the emit saw the node the reach left waiting"
                emitter.commit()
            else:
                emitter.execute("SELECT cyclone.emit_event(%s, %s)", (f"order:{n}", Jsonb({"paid": n})))
                pid = reacher.info.backend_pid
                reach = Call(lambda: complete(reacher, claim))
                reach.start()
                wait_until_blocked(db, pid)
                emitter.commit()
                reach.value()
                reacher.commit()
        paid = step(db, run_id, "paid")
        assert (paid["state"], paid["output"]) == ("completed", {"paid": n})
        assert step(db, run_id, "ship")["state"] == "available"
        assert_consistent(dsn)


@pytest.mark.parametrize("first", ["reach", "end"])
def test_a_run_ending_as_its_await_node_is_reached_ends_the_node_exactly_once(dsn: str, db: Conn, first: str) -> None:
    """The reach reads the awaited run FOR SHARE, the run's end holds it FOR NO KEY UPDATE: whichever comes
    first, the other sees it, and the await node completes once, with the run's output."""
    define(db, "exp", [{"name": "dump", "handler": "exp_dump"}])
    define(db, "rep", [{"name": "start", "handler": "rep_start"},
                       {"name": "done", "kind": "await", "run": "deps.start.run", "deps": ["start"]}])
    for n in range(ROUNDS):
        export = submit(db, "exp")
        report = submit(db, "rep")
        dump = claim_node(db, export, "dump")
        start = claim_node(db, report, "start")
        with connect(dsn) as ender, connect(dsn) as reacher:
            ender.autocommit = reacher.autocommit = False
            if first == "reach":
                complete(reacher, start, {"run": str(export)})  # waiting, the export's row held FOR SHARE
                blocked, other, action = ender, reacher, lambda: complete(ender, dump, {"rows": n})
            else:
                complete(ender, dump, {"rows": n})  # the export ended, not committed
                blocked, other, action = reacher, ender, lambda: complete(reacher, start, {"run": str(export)})
            call = Call(action)
            call.start()
            wait_until_blocked(db, blocked.info.backend_pid)
            other.commit()
            call.value()
            blocked.commit()
        done = step(db, report, "done")
        assert (done["state"], done["output"]) == ("completed", {"dump": {"rows": n}})
        assert_consistent(dsn)


def test_eight_connections_debouncing_one_key_at_once_make_one_run(dsn: str, db: Conn) -> None:
    define(db, "idx", [{"name": "index", "handler": "idx"}])
    for n in range(ROUNDS):
        barrier = threading.Barrier(8)

        def submit_one(i: int, key: str = f"doc:{n}") -> UUID:
            with connect(dsn) as c:
                barrier.wait(10)
                row = c.execute("SELECT cyclone.submit('idx', %s, p_debounce_key => %s, p_debounce => '5 seconds')"
                                " AS id", (Jsonb({"i": i}), key)).fetchone()
                assert row is not None
                return UUID(str(row["id"]))

        calls = [Call(lambda i=i: submit_one(i)) for i in range(8)]  # type: ignore[misc]
        for call in calls:
            call.start()
        ids = {call.value() for call in calls}
        assert len(ids) == 1, "one run for the burst"
        runs = db.execute("SELECT input FROM cyclone.cyclone_runs WHERE workflow = 'idx' AND debounce_key = %s",
                          (f"doc:{n}",)).fetchall()
        assert len(runs) == 1 and runs[0]["input"]["i"] in range(8)


# -- the runtime ---------------------------------------------------------------------------------------


def _order_app() -> tuple[App, Workflow]:
    wf = Workflow("order_paid")

    @wf.step()
    def place(ctx: StepContext) -> Any:
        return {"order_id": ctx.input["order_id"]}

    wf.event("paid", key="payment:{deps.place.order_id}", deps=[place], max_wait=timedelta(days=1))

    @wf.step(deps=["paid"])
    def ship(ctx: StepContext) -> Any:
        return {"shipped": ctx.deps["paid"]["amount"]}

    return App(wf), wf


def test_an_order_waits_for_its_payment_event_in_the_harness(dsn: str) -> None:
    app, wf = _order_app()
    assert wf.definition()["nodes"][1] == {"name": "paid", "kind": "event", "deps": ["place"],
                                        "key": "payment:{deps.place.order_id}", "max_wait": "1 day"}
    with Env(dsn, app) as env:
        run_id = env.submit(wf, {"order_id": 7})
        env.run_until_idle()
        assert env.step(run_id, "paid").event_key == "payment:7"
        explained = env.client.explain_step(env.step(run_id, "paid").id)
        assert (explained.reason, explained.key) == ("waiting_event", "payment:7")
        assert env.emit_event("payment:7", {"amount": 30}) == 1
        run = env.run_until_complete(run_id)
        assert run.state == "completed" and run.output == {"ship": {"shipped": 30}}
        assert [(e.key, e.payload) for e in env.client.events("payment:7")] == [("payment:7", {"amount": 30})]


def test_a_report_awaits_an_export_run_and_the_harness_runs_both(dsn: str) -> None:
    export = Workflow("export_rows")

    @export.step()
    def dump(ctx: StepContext) -> Any:
        return {"rows": 3}

    report = Workflow("report_rows")
    report.await_run("export_done", run="input.export")

    @report.step(deps=["export_done"])
    def render(ctx: StepContext) -> Any:
        return {"rendered": ctx.deps["export_done"]["dump"]["rows"]}

    with Env(dsn, App(export, report)) as env:
        export_id = env.submit(export)
        report_id = env.submit(report, {"export": str(export_id)})
        assert env.step(report_id, "export_done").awaited_run_id == export_id
        explained = env.client.explain_step(env.step(report_id, "export_done").id)
        assert (explained.reason, explained.run_id) == ("waiting_run", export_id)
        run = env.run_until_complete(report_id)
        assert run.output == {"render": {"rendered": 3}}


def test_signal_with_start_rerun_and_a_debounced_submit_through_the_client(dsn: str, client: Client) -> None:
    wf = Workflow("approve_then")
    wf.wait("approve")

    @wf.step(deps=["approve"])
    def act(ctx: StepContext) -> Any:
        return ctx.deps["approve"]

    with Env(dsn, App(wf)) as env:
        run_id = env.signal_with_start(wf, "ticket-1", "approve", {"by": "ann"}, {"ticket": 1})
        assert env.signal_with_start(wf, "ticket-1", "approve", {"by": "bob"}) == run_id
        assert env.run_until_complete(run_id).output == {"act": {"by": "ann"}}
        with pytest.raises(WrongState, match="already completed"):
            client.signal_with_start(wf, "ticket-1", "approve")

        again = env.rerun(run_id, "act", "once more")
        assert client.get_run_row(again).rerun_of == run_id
        assert env.step(again, "approve").state == "completed", "upstream of act: kept"
        assert env.run_until_complete(again).output == {"act": {"by": "ann"}}

        first = env.submit(wf, {"v": 1}, debounce_key="t:9", debounce=timedelta(seconds=30))
        assert env.submit(wf, {"v": 2}, debounce_key="t:9", debounce=30, debounce_max=60) == first
        assert client.get_run_row(first).input == {"v": 2}
        keyed = client.submit(wf, idempotency_key="k", idempotency_window=timedelta(hours=1))
        assert client.submit(wf, idempotency_key="k", idempotency_window=timedelta(hours=1)) == keyed
        env.advance_time(timedelta(hours=2))
        assert client.submit(wf, idempotency_key="k", idempotency_window=timedelta(hours=1)) != keyed


def test_a_run_awaited_twice_by_one_run_ends_both_nodes_in_its_transaction(db: Conn) -> None:
    define(db, "solo", [{"name": "s", "handler": "solo_s"}])
    define(db, "twice", [{"name": "w1", "kind": "await", "run": "input.r"},
                         {"name": "w2", "kind": "await", "run": "input.r"}])
    target = submit(db, "solo")
    waiter = submit(db, "twice", {"r": str(target)})
    assert {step(db, waiter, n)["state"] for n in ("w1", "w2")} == {"waiting"}
    complete(db, claim_node(db, target, "s"), {"x": 1})
    assert {step(db, waiter, n)["state"] for n in ("w1", "w2")} == {"completed"}
    assert db.execute("SELECT state FROM cyclone.cyclone_runs WHERE id = %s", (waiter,)).fetchone() == {
        "state": "completed"}


def test_bad_coordination_calls_are_one_clear_error(client: Client) -> None:
    with pytest.raises(InvalidArgument, match="p_key must be a non-empty event key"):
        client.emit_event("")
    with pytest.raises(InvalidArgument, match="p_debounce_key and p_debounce go together"):
        client.submit("any", debounce_key="k")
