"""Client: one method per SQL function, typed rows, SQLSTATE -> exception."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any, cast
from uuid import uuid4

import psycopg
import pytest

from cyclone_py import client as client_module
from cyclone_py import errors
from cyclone_py.client import Client
from cyclone_py.workflow import Workflow


@pytest.fixture
def client(dsn: str) -> Iterator[Client]:
    with Client(dsn) as c:
        yield c


def _linear() -> Workflow:
    wf = Workflow("linear", max_attempts=3)

    @wf.step()
    def a(ctx: object) -> None:
        return None

    @wf.step(deps=["a"], timeout=30)
    def b(ctx: object) -> None:
        return None

    return wf


def test_submit_claim_complete_advances_the_dag(client: Client) -> None:
    wf = _linear()
    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf, {"x": 1})
    run = client.get_run(run_id)
    assert (run.state, run.workflow, run.input, run.error_kind) == ("running", "linear", {"x": 1}, None)

    [step] = client.claim("w1", ["a", "b"], 10, timedelta(seconds=30))
    assert (step.node, step.attempt, step.max_attempts, step.input, step.deps) == ("a", 1, 3, {"x": 1}, {})
    assert client.renew(step.step_id, "w1", step.lease_generation, 30.0) is True
    assert client.renew(step.step_id, "w2", step.lease_generation, 30.0) is False
    res = client.complete_many("w1", [step.step_id], [step.lease_generation], [{"ok": True}])
    assert [(r.step_id, r.accepted) for r in res] == [(step.step_id, True)]

    [b] = client.claim("w1", None, 10, 30.0)
    assert (b.node, b.deps, b.timeout) == ("b", {"a": {"ok": True}}, timedelta(seconds=30))
    # A stale generation is refused, the right one accepted.
    assert client.complete(b.step_id, "w1", b.lease_generation - 1, 1) is False
    assert client.complete(b.step_id, "w1", b.lease_generation, [1, 2]) is True
    run = client.get_run(run_id)
    assert run.state == "completed"
    assert run.output == {"b": [1, 2]}
    assert [s.state for s in client.steps(run_id)] == ["completed", "completed"]
    assert [r.id for r in client.list_runs(workflow="linear")] == [run_id]
    assert client.step_counts(run_id) == {"completed": 2}
    assert client.get_run_row(run_id).state == "completed"


def test_complete_many_with_null_outputs(client: Client) -> None:
    wf = Workflow("pair")
    wf.step(name="x", handler="h")(lambda ctx: None)
    wf.step(name="y", handler="h")(wf.handlers["h"])
    client.define_workflow(wf.name, wf.definition())
    client.submit(wf)
    steps = client.claim("w", ["h"], 5, 30)
    assert len(steps) == 2
    res = client.complete_many(
        "w", [s.step_id for s in steps], [s.lease_generation for s in steps], [None, None], serialized=True
    )
    assert all(r.accepted for r in res)



def test_complete_many_keeps_every_output_as_given(client: Client) -> None:
    # The arrays go to the server as literals the client writes itself: quotes,
    # backslashes, braces, commas, NULL-looking text and non-ASCII come through.
    outputs = ['he said "hi"', "C:\\temp\\new", "{a,b}", "NULL", None, {"k": ["\\", '"', "é ✓"]}, 7, ""]
    wf = Workflow("many")

    def h(ctx: object) -> None:
        return None

    for i in range(len(outputs)):
        wf.step(name=f"n{i}", handler="h")(h)
    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf)
    steps = sorted(client.claim("w", ["h"], 20, 30), key=lambda s: s.node)
    res = client.complete_many("w", [s.step_id for s in steps], [s.lease_generation for s in steps], outputs)
    assert [r.accepted for r in res] == [True] * len(outputs)
    by_node = {s.node: s.output for s in client.steps(run_id)}
    assert [by_node[f"n{i}"] for i in range(len(outputs))] == outputs


@pytest.mark.parametrize("bad", ["1", 1.0, True, None])
def test_complete_many_refuses_an_id_that_is_not_an_integer(client: Client, bad: object) -> None:
    with pytest.raises(errors.InvalidArgument):
        client.complete_many("w", [bad], [1], [None])  # type: ignore[list-item]


def test_fail_retry_in_and_permanent(client: Client) -> None:
    wf = _linear()
    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf)
    [s] = client.claim("w", None, 1, 30)
    before = client.now()
    assert client.fail(s.step_id, "w", s.lease_generation, "boom", "error", timedelta(minutes=7)) == "available"
    row = client.steps(run_id)[0]
    assert row.scheduled_at is not None
    assert timedelta(minutes=7) <= row.scheduled_at - before < timedelta(minutes=7, seconds=5)
    assert client.fail(s.step_id, "w", s.lease_generation, "late") is None
    client.advance_time(timedelta(minutes=8))
    [s2] = client.claim("w", None, 1, 30)
    assert s2.attempt == 2
    assert client.fail(s2.step_id, "w", s2.lease_generation, "bad input", "permanent") == "discarded"
    run = client.get_run(run_id)
    assert (run.state, run.error_kind, run.error) == ("failed", "permanent", "bad input")
    [dlq] = client.dlq(error_kind="permanent")
    assert (dlq.node, dlq.workflow) == ("a", "linear")
    assert client.dlq(workflow="other") == []
    client.retry(run_id, "a", additional_attempts=1, reason="fixed")
    assert client.get_run(run_id).state == "running"


def test_sqlstates_map_to_exceptions(client: Client) -> None:
    with pytest.raises(errors.NotFound):
        client.submit("no_such_workflow")
    with pytest.raises(errors.NotFound):
        client.get_run(uuid4())
    with pytest.raises(errors.InvalidArgument):
        client.define_workflow("bad", {"nodes": []})
    with pytest.raises(errors.InvalidArgument):
        client.get_run("not-a-uuid")
    # Any data exception (class 22) is bad input: a NUL escape jsonb refuses
    # (22P05), an interval past PostgreSQL's (22008), a number past an int (22003).
    client.define_workflow("one", {"nodes": [{"name": "a"}]})
    with pytest.raises(errors.InvalidArgument, match="Unicode escape") as raised:
        client.submit("one", {"a": "\x00"})
    assert raised.value.sqlstate == "22P05"
    with pytest.raises(errors.InvalidArgument) as raised:
        client._value("SELECT 2147483647 + 1")
    assert raised.value.sqlstate == "22003"
    wf = _linear()
    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf)
    with pytest.raises(errors.WrongState):
        client.retry(run_id, "a")
    with pytest.raises(errors.NotFound):
        client.retry(run_id, "nope")


def test_operator_actions_and_signal(client: Client) -> None:
    wf = Workflow("gated")
    wf.wait("approval", signal="approved")
    client.define_workflow(wf.name, wf.definition())
    r1, r2 = client.submit_many(wf, [{"n": 1}, {"n": 2}], deadline=timedelta(hours=1))
    assert client.get_run(r1).deadline_at is not None
    assert client.pause(r1) is True
    assert client.pause(r1) is False
    assert client.resume(r1) is True
    assert client.signal(r1, "approved", {"by": "ann"}) is True
    assert client.get_run(r1).state == "completed"
    assert client.signal(r1, "approved") is False
    assert client.cancel(r2, "test") is True
    assert client.get_run(r2).state == "cancelled"
    assert client.retry_all(r2) == 0


def test_idempotency_key_and_tick(client: Client) -> None:
    wf = _linear()
    client.define_workflow(wf.name, wf.definition())
    a = client.submit(wf, idempotency_key="k1")
    assert client.submit(wf, idempotency_key="k1") == a
    res = client.tick()
    assert (res.reclaimed, res.discarded, res.discarded_steps) == (0, 0, [])
    t0 = client.now()
    t1 = client.advance_time(timedelta(hours=1))
    assert t1 - t0 >= timedelta(hours=1)
    client.reset_time()
    assert client.now() < t1
    assert timedelta(seconds=0.5) <= client.backoff(1) <= timedelta(seconds=1)


def test_a_failed_pool_check_replaces_every_connection_the_server_closed_while_idle(
        dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    """The server closes all of the pool's idle connections at once (a proxy, an
    idle timeout, pg_terminate_backend): the first checkout's check fails once,
    and the pool's own check() replaces the other three there and then, instead
    of the pool finding them one checkout retry at a time (its retries back off
    from 1 s, doubling)."""
    with Client(dsn, min_size=4, max_size=4, application_name="cyclone-pooltest") as c, \
            psycopg.connect(dsn, autocommit=True) as killer:
        c.pool.wait()
        killed = killer.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                " WHERE application_name = 'cyclone-pooltest'").fetchone()
        assert killed == (4,)
        with caplog.at_level(logging.INFO, logger="psycopg.pool"):
            c.now()
        failed_checks = [r for r in caplog.records if r.getMessage().startswith("connection failed check")]
        assert len(failed_checks) == 1
        assert c.pool.get_stats()["connections_lost"] == 4


def _kill(killer: psycopg.Connection[tuple[object, ...]], name: str) -> int:
    row = killer.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                         " WHERE application_name = %s", (name,)).fetchone()
    return cast(int, row[0]) if row else 0


def test_a_connection_back_in_the_pool_for_a_moment_is_not_checked_and_a_call_that_finds_it_closed_fails_once(
        dsn: str) -> None:
    """A connection used less than CHECK_AFTER_IDLE ago is handed out without
    the check's round trip: if the server closed it meanwhile, that call fails
    (a worker retries it) and the pool's broken connections are replaced then,
    so the next call works."""
    with Client(dsn, min_size=1, max_size=1, application_name="cyclone-recent") as c, \
            psycopg.connect(dsn, autocommit=True) as killer:
        c.now()
        assert _kill(killer, "cyclone-recent") == 1
        with pytest.raises(errors.DatabaseUnavailable):
            c.now()
        c.now()


def test_a_connection_idle_in_the_pool_longer_than_a_moment_is_checked_first(dsn: str) -> None:
    with Client(dsn, min_size=1, max_size=1, application_name="cyclone-idle") as c, \
            psycopg.connect(dsn, autocommit=True) as killer:
        c.now()
        assert _kill(killer, "cyclone-idle") == 1
        time.sleep(client_module.CHECK_AFTER_IDLE + 0.2)
        c.now()  # the check finds it closed and the pool replaces it: the call never sees it
        assert c.pool.get_stats()["connections_lost"] == 1


def test_a_claimed_row_is_the_frozen_step_its_columns_name(dsn: str) -> None:
    """The claim's row factory fills a ClaimedStep without its __init__ when the columns are all of its
    fields: the object equals the one __init__ makes, stays frozen, and a prefix of the columns still gets
    the defaults of the rest."""
    from dataclasses import FrozenInstanceError, fields

    from psycopg.types.json import Jsonb

    from cyclone_py.client import ClaimedStep, _dataclass_row

    values: tuple[Any, ...] = (7, uuid4(), "w", "n", "h", "task", 1, 3, 2, timedelta(seconds=5), {"a": 1}, {},
                               None, None, None, [1], 0)
    with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor(row_factory=_dataclass_row(ClaimedStep)) as cur:
        names = ", ".join(f"%s AS {f.name}" for f in fields(ClaimedStep))
        row = cur.execute(f"SELECT {names}", [Jsonb(v) if isinstance(v, dict | list) else v for v in values]).fetchone()
        assert row == ClaimedStep(*values)
        assert row.execution == (7, 2)
        with pytest.raises(FrozenInstanceError):
            row.step_id = 8  # type: ignore[misc]
        prefix = cur.execute("SELECT 1 AS step_id, %s AS run_id, 'w' AS workflow, 'n' AS node, 'h' AS handler, "
                             "'task' AS kind, 1 AS attempt, 3 AS max_attempts, 1 AS lease_generation, "
                             "NULL::interval AS timeout, '{}'::jsonb AS input, '{}'::jsonb AS deps",
                             [values[1]]).fetchone()
        assert prefix is not None and prefix.traceparent is None and prefix.item is None and prefix.item_index is None
