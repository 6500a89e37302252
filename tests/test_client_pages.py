"""The client's list pages and run details (what the web console reads), and
the actor it names to the audit trail.

- ``runs_page``: newest first, every filter (workflow, state, created range,
  idempotency key, run id prefix), keyset pages that add up to the whole list
  with no row twice, bounded page sizes and checked filters;
- ``dead_letters``: the same for discarded steps (workflow, error kind), the
  error cut to ``PAGE_ERROR_CHARS``;
- ``run_steps``, ``audit``, ``lease_holders``, ``executable``;
- ``acting_as``: an action names ``'actor via role'``, only in its own
  transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from psycopg import conninfo, sql

from cyclone_py import errors
from cyclone_py.client import PAGE_ERROR_CHARS, Client, Page
from cyclone_py.workflow import Workflow


def _one(name: str, attempts: int = 1) -> Workflow:
    wf = Workflow(name, max_attempts=attempts)

    @wf.step()
    def work(ctx: object) -> None:
        return None

    return wf


def _define(client: Client, *wfs: Workflow) -> None:
    for wf in wfs:
        client.define_workflow(wf.name, wf.definition())


def _all(fetch: Callable[[Any], Page[Any]]) -> list[Any]:
    rows: list[Any] = []
    cursor = None
    while True:
        page = fetch(cursor)
        rows += page.rows
        if page.next is None:
            return rows
        cursor = page.next


def _discard(client: Client, run_id: Any, error: str = "boom", kind: str = "error") -> None:
    step = _claimed.pop(run_id, None) or next(
        s for s in _claim_all(client) if s.run_id == run_id)
    assert client.fail(step.step_id, "w1", step.lease_generation, error, kind) == "discarded"


_claimed: dict[Any, Any] = {}


def _claim_all(client: Client) -> list[Any]:
    steps = client.claim("w1", None, 100, 30.0)
    _claimed.update({s.run_id: s for s in steps})
    return steps


def test_runs_page_keyset_pages_add_up_to_the_list_newest_first(client: Client) -> None:
    _define(client, _one("a"), _one("b"))
    ids = [client.submit("a") for _ in range(4)]
    client.advance_time(timedelta(seconds=10))
    ids += client.submit_many("b", [{}] * 3)  # one transaction: one created_at, ties broken by id
    client.advance_time(timedelta(seconds=10))
    ids.append(client.submit("a"))

    whole = client.runs_page(limit=100)
    assert whole.next is None and len(whole.rows) == 8
    keys = [(r.created_at, r.id) for r in whole.rows]
    assert keys == sorted(keys, reverse=True)
    paged = _all(lambda after: client.runs_page(after=after, limit=3))
    assert [r.id for r in paged] == [r.id for r in whole.rows]
    first = client.runs_page(limit=3)
    assert len(first.rows) == 3 and first.next == (first.rows[-1].created_at, first.rows[-1].id)
    assert client.runs_page(limit=8).next is None


def test_runs_page_filters(client: Client) -> None:
    _define(client, _one("a"), _one("b"))
    old = client.submit("a", idempotency_key="order-1")
    client.advance_time(timedelta(minutes=5))
    middle = client.now()
    new_a = client.submit("a", idempotency_key="order-2")
    new_b = client.submit("b", idempotency_key="order-1")
    assert client.cancel(new_b, "no")

    def ids(**kw: Any) -> set[Any]:
        return {r.id for r in client.runs_page(**kw).rows}

    assert ids(workflow="a") == {old, new_a}
    assert ids(state="cancelled") == {new_b}
    assert ids(workflow="a", state="cancelled") == set()
    assert ids(created_from=middle) == {new_a, new_b}
    assert ids(created_until=middle) == {old}
    assert ids(idempotency_key="order-1") == {old, new_b}
    assert ids(id_prefix=str(new_a)[:8]) >= {new_a}
    assert ids(id_prefix=str(new_a).upper()) == {new_a}
    assert ids(id_prefix=str(new_a).replace("-", "")) == {new_a}
    [row] = client.runs_page(idempotency_key="order-2").rows
    assert (row.workflow, row.state, row.idempotency_key) == ("a", "running", "order-2")


@pytest.mark.parametrize("kw, message", [
    ({"state": "exploded"}, "unknown run state"),
    ({"limit": 0}, "a page has 1 to 500 rows"),
    ({"limit": 501}, "a page has 1 to 500 rows"),
    ({"id_prefix": "xyz"}, "hex digits"),
    ({"id_prefix": "0" * 33}, "hex digits"),
])
def test_runs_page_refuses_bad_filters(client: Client, kw: dict[str, Any], message: str) -> None:
    with pytest.raises(errors.InvalidArgument, match=message):
        client.runs_page(**kw)


def test_dead_letters_pages_filters_and_cut_errors(client: Client) -> None:
    _define(client, _one("a"), _one("b"))
    runs = [client.submit("a") for _ in range(3)] + [client.submit("b")]
    for i, r in enumerate(runs):
        client.advance_time(timedelta(seconds=1))
        _discard(client, r, error="x" * (PAGE_ERROR_CHARS + 50) if i == 0 else f"error {i}",
                 kind="permanent" if i == 3 else "error")
    whole = client.dead_letters(limit=100)
    assert [s.run_id for s in whole.rows] == runs[::-1]
    assert len(whole.rows[-1].error or "") == PAGE_ERROR_CHARS
    assert [s.run_id for s in _all(lambda after: client.dead_letters(after=after, limit=1))] == runs[::-1]
    assert [s.run_id for s in client.dead_letters(workflow="b").rows] == [runs[3]]
    assert [s.run_id for s in client.dead_letters(error_kind="permanent").rows] == [runs[3]]
    assert [s.run_id for s in client.dead_letters(workflow="a", error_kind="permanent").rows] == []
    with pytest.raises(errors.InvalidArgument, match="unknown error kind"):
        client.dead_letters(error_kind="<b>")
    # The run's own page has the error whole.
    assert len(client.step_errors(runs[0])[0].error) == PAGE_ERROR_CHARS + 50


def test_run_steps_have_edges_kinds_and_payloads(client: Client) -> None:
    wf = Workflow("shape")

    @wf.step()
    def a(ctx: object) -> None:
        return None

    wf.wait("approve", deps=[a], signal="ok")
    _define(client, wf)
    run = client.submit("shape", {"n": 1})
    steps = client.run_steps(run)
    assert [(s.node, s.kind, s.deps, s.signal, s.input) for s in steps] == [
        ("a", "task", [], None, {"n": 1}), ("approve", "wait", ["a"], "ok", {"n": 1})]
    [claimed] = client.claim("w9", None, 1, 30.0)
    [holder] = client.lease_holders()
    assert (holder.owner, holder.steps) == ("w9", 1)
    assert client.run_steps(run)[0].lease_owner == "w9"
    assert client.complete(claimed.step_id, "w9", claimed.lease_generation, {"out": 2})
    assert client.lease_holders() == []


def test_run_failures_name_the_step_that_failed_the_run_not_a_contained_discard(client: Client) -> None:
    """Issue 36: the runs list's failing step was the run's earliest discarded step, even one whose discard
    cancel_branch dependents contained (it did not fail the run); it is now get_run's: the one that did."""
    wf = Workflow("contained", max_attempts=1)

    @wf.step()
    def optional(ctx: object) -> None:
        return None

    @wf.step(deps=[optional], on_dep_failure="cancel_branch")
    def extra(ctx: object) -> None:
        return None

    @wf.step()
    def charge(ctx: object) -> None:
        return None

    _define(client, wf)
    run = client.submit("contained")
    steps = {s.node: s for s in _claim_all(client) if s.run_id == run}
    assert client.fail(steps["optional"].step_id, "w1", steps["optional"].lease_generation, "meh",
                       "error") == "discarded"
    client.advance_time(1)
    assert client.fail(steps["charge"].step_id, "w1", steps["charge"].lease_generation, "card declined",
                       "timeout") == "discarded"
    failed = client.get_run(run)
    assert (failed.state, failed.error) == ("failed", "card declined")
    [failure] = client.run_failures([run]).values()
    assert (failure.node, failure.error_kind, failure.error) == ("charge", "timeout", "card declined")


def test_acting_as_names_the_actor_in_the_actions_transaction_only(dsn: str) -> None:
    with Client(dsn, min_size=1, max_size=1) as client:  # one connection: a leaked setting would show
        _define(client, _one("a"))
        role = client._value("SELECT session_user")
        first, second = client.submit("a"), client.submit("a")
        client.acting_as("alice").pause(first)
        client.pause(second)
        client.acting_as("bob").resume(first)
        client.acting_as(None).cancel(second, "x")
        # Who, via the role, from where: the Python client's application_name, 'cyclone' (issue 36).
        assert [(a.action, a.actor) for a in client.audit(first)] == [
            ("pause", f"alice via {role} from cyclone"), ("resume", f"bob via {role} from cyclone")]
        assert [(a.action, a.actor, a.reason) for a in client.audit(second)] == [
            ("pause", f"{role} from cyclone", None), ("cancel", f"{role} from cyclone", "x")]
        # A refused action names no one and leaves nothing behind.
        with pytest.raises(errors.WrongState):
            client.acting_as("carol").retry(first, "work")
        assert len(client.audit(first)) == 2


@pytest.fixture
def client_login(dsn: str) -> Iterator[str]:
    """The DSN of a fresh LOGIN role in cyclone_client."""
    role = f"cyc_pages_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(sql.SQL("CREATE ROLE {} LOGIN IN ROLE cyclone_client").format(sql.Identifier(role)))
    yield conninfo.make_conninfo(dsn, user=role)
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
        c.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_a_client_role_reads_the_pages_and_executes_no_operator_action(client: Client, client_login: str) -> None:
    _define(client, _one("a"))
    run = client.submit("a")
    client.acting_as("admin-person").cancel(run, "seen")
    with Client(client_login, min_size=1, max_size=1) as reader:
        assert [r.id for r in reader.runs_page().rows] == [run]
        assert reader.dead_letters().rows == []
        assert [a.actor.split(" via ")[0] for a in reader.audit(run)] == ["admin-person"]
        assert reader.executable(["retry", "cancel", "signal", "pause_schedule"]) == {"signal"}
        with pytest.raises(errors.PermissionDenied):
            reader.acting_as("mallory").cancel(run)
    assert client.executable(["retry", "cancel", "signal", "pause_schedule"]) >= {"retry", "cancel", "signal"}


def test_explain_steps_answers_for_every_step_in_one_call(client: Client) -> None:
    wf = Workflow("why")

    @wf.step()
    def a(ctx: object) -> None:
        return None

    wf.wait("approve", deps=[a], signal="ok")
    _define(client, wf)
    run = client.submit("why")
    a_step, wait_step = client.run_steps(run)
    why = client.explain_steps([a_step.id, wait_step.id])
    assert {i: e.reason for i, e in why.items()} == {a_step.id: "claimable", wait_step.id: "pending_deps"}
    assert why[wait_step.id].deps == ("a",)
    assert why == {i: client.explain_step(i) for i in (a_step.id, wait_step.id)}
    assert client.explain_steps([]) == {}
    with pytest.raises(errors.NotFound):
        client.explain_steps([a_step.id, 10**12])
