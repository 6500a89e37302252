"""Limits from Python (SPEC 12): declaring them on workflows, steps and an App,
the definition JSON, the client's calls, the harness and the worker
registering them (before the workflows; the app's declaration wins, and says
so), and a real worker process that never runs more than a tenant's limit at
once. The enforcement itself is the SQL's (sql/tests/limits/, sql/tests/claim/)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from helpers import start, terminal, wait_for
from psycopg import conninfo, sql

from cyclone_py import App, Limit, Worker, Workflow, errors
from cyclone_py.client import Client, LimitRow
from cyclone_py.context import StepContext
from cyclone_py.testing import Env

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

stripe = Limit("stripe", concurrency=5)
per_tenant = Limit("per_tenant", concurrency=2)
mail = Limit("mail", rate=100, per=timedelta(minutes=1))


def charge_workflow(name: str = "charge", *, tenant_limit: Limit = per_tenant) -> Workflow:
    wf = Workflow(name, limits=[stripe, tenant_limit.by("tenant.id")])

    @wf.step()
    def charge(ctx: StepContext) -> Any:
        return {"charged": ctx.input["tenant"]["id"]}

    @wf.step(deps=[charge], limits=[mail])
    def receipt(ctx: StepContext) -> Any:
        return "sent"

    return wf


def bucket(client: Client, name: str, key: str = "") -> LimitRow:
    return next(r for r in client.limits(name) if r.bucket == key)


# -- declaring ------------------------------------------------------------------


def test_limits_are_plain_data_and_a_key_is_given_per_use() -> None:
    assert (mail.rate, mail.per, mail.concurrency) == (100, timedelta(minutes=1), None)
    assert Limit("m", rate=5, per=30).per == timedelta(seconds=30)
    assert Limit("stripe", concurrency=5) == stripe  # values, not identity
    assert stripe.arguments() == {"name": "stripe", "concurrency": 5, "rate": None, "period": None}
    assert mail.arguments() == {"name": "mail", "concurrency": None, "rate": 100, "period": timedelta(minutes=1)}
    use = per_tenant.by("tenant.id")
    assert (use.name, use.key, use.to_json()) == ("per_tenant", "tenant.id", {"name": "per_tenant", "key": "tenant.id"})
    assert stripe.use().to_json() == {"name": "stripe"}
    assert repr(mail) == "Limit('mail', rate=100, per=datetime.timedelta(seconds=60))"


def test_the_definition_names_each_limit_with_its_key_as_workflows_sql_expects() -> None:
    wf = charge_workflow()
    assert wf.definition() == {
        "limits": [{"name": "stripe"}, {"name": "per_tenant", "key": "tenant.id"}],
        "nodes": [
            {"name": "charge", "kind": "task", "handler": "charge", "deps": []},
            {"name": "receipt", "kind": "task", "handler": "receipt", "deps": ["charge"],
             "limits": [{"name": "mail"}]},
        ],
    }
    assert Workflow("plain").definition() == {"nodes": []}  # no "limits" key without limits


def test_python_checks_the_shape_and_leaves_the_values_to_sql() -> None:
    # Not Python's to judge: define_limit refuses these at registration.
    odd = Limit("odd", concurrency=0, rate=5)
    assert (odd.concurrency, odd.rate, odd.per) == (0, 5, None)
    with pytest.raises(ValueError, match="needs a name"):
        Limit("")
    with pytest.raises(TypeError, match="concurrency is an int"):
        Limit("x", concurrency="5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rate is an int"):
        Limit("x", rate=True, per=1)
    with pytest.raises(TypeError, match="per is a timedelta or seconds"):
        Limit("x", rate=1, per="1 minute")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the key is a dot path"):
        stripe.by("")
    with pytest.raises(TypeError, match="expected a cyclone Limit or limit.by"):
        Workflow("w", limits=["stripe"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="limits is a list"):
        Workflow("w", limits=stripe)  # type: ignore[arg-type]


def test_wait_and_child_nodes_cannot_take_limits() -> None:
    wf = Workflow("w")
    with pytest.raises(ValueError, match="wait node 'approval' cannot take limits: limits apply to task nodes only"):
        wf.wait("approval", limits=[stripe])
    with pytest.raises(ValueError, match="child node 'invoice' cannot take limits"):
        wf.child("invoice", "make_invoice", limits=[per_tenant.by("tenant.id")])
    assert wf.nodes == {}  # nothing was added
    wf.wait("approval", limits=[])  # none is fine


def test_an_app_collects_its_workflows_limits_once_each_and_may_declare_more() -> None:
    wf = charge_workflow()
    other = Workflow("refund", limits=[stripe])
    spare = Limit("spare", concurrency=1)
    app = App(wf, other, limits=[spare])
    assert app.limits == [spare, stripe, per_tenant, mail]

    # A step declared after its workflow was added is collected too.
    @other.step(limits=[Limit("ledger", concurrency=1)])
    def refund(ctx: StepContext) -> Any:
        return None

    assert [lim.name for lim in app.limits] == ["spare", "stripe", "per_tenant", "mail", "ledger"]
    assert app.add_limit(Limit("spare", concurrency=1)) == spare  # an equal limit: the same one


def test_two_different_limits_of_one_name_in_one_app_are_refused() -> None:
    with pytest.raises(ValueError, match="app has two different limits named 'stripe'"):
        App(charge_workflow(), Workflow("refund", limits=[Limit("stripe", concurrency=9)]))
    app = App(charge_workflow())
    with pytest.raises(ValueError, match="two different limits named 'mail'"):
        app.add_limit(Limit("mail", rate=1, per=1))
    with pytest.raises(ValueError, match="two different limits named 'per_tenant'"):
        app.workflow("refund", limits=[Limit("per_tenant", concurrency=3).by("tenant.id")])
    late = app.workflow("late")

    @late.step(limits=[Limit("stripe", concurrency=1)])  # after the workflow was added
    def pay(ctx: StepContext) -> Any:
        return None

    with pytest.raises(ValueError, match="two different limits named 'stripe'"):
        app.limits  # noqa: B018  (what a worker reads at start)
    with pytest.raises(TypeError, match="expected a cyclone Limit"):
        App(limits=["stripe"])  # type: ignore[list-item]


# -- the client -------------------------------------------------------------------


def test_the_client_defines_lists_and_drops_a_limit(client: Client) -> None:
    client.define_limit("stripe", 5)
    client.define_limit("mail", rate=100, period=timedelta(minutes=1))
    assert client.limits() == [
        LimitRow("mail", "", None, 0, 100, timedelta(minutes=1), 0, 0),
        LimitRow("stripe", "", 5, 0, None, None, None, 0),
    ]
    assert [r.name for r in client.limits("stripe")] == ["stripe"] and client.limits("nosuch") == []
    client.define_limit("stripe", rate=10, period=1)  # every value anew
    assert bucket(client, "stripe") == LimitRow("stripe", "", None, 0, 10, timedelta(seconds=1), 0, 0)

    client.define_workflow("charge", {"limits": [{"name": "stripe"}], "nodes": [{"name": "charge"}]})
    with pytest.raises(errors.WrongState, match='drop_limit: limit "stripe" is named by workflow "charge"'):
        client.drop_limit("stripe")
    assert client.drop_limit("mail") is True
    assert client.drop_limit("mail") is False
    assert [r.name for r in client.limits()] == ["stripe"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give p_concurrency, or p_rate with p_period, or both"),
        ((None, 5), "p_rate and p_period come together"),
        ((0,), "p_concurrency must be positive, got 0"),
        ((None, 5, timedelta(0)), "p_period must be positive"),
    ],
)
def test_bad_limits_are_refused_by_sql_and_nothing_is_written(
    client: Client, args: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(errors.InvalidArgument, match=message):
        client.define_limit("x", *args)
    assert client.limits() == []


def test_explain_step_is_a_typed_answer(client: Client) -> None:
    client.define_limit("per_tenant", 1)
    client.define_workflow("charge", {
        "nodes": [{"name": "charge", "limits": [{"name": "per_tenant", "key": "tenant.id"}]},
                  {"name": "receipt", "deps": ["charge"]}]})
    a, b = client.submit_many("charge", [{"tenant": {"id": "acme"}}] * 2)
    [claimed] = client.claim("w1", limit=10)
    held = next(s for s in client.steps(b if claimed.run_id == a else a) if s.node == "charge")
    e = client.explain_step(held.id)
    assert (e.reason, e.limit, e.bucket, e.running, e.max) == ("concurrency_limit", "per_tenant", "acme", 1, 1)
    assert e.raw == {"reason": "concurrency_limit", "limit": "per_tenant", "bucket": "acme", "running": 1, "max": 1}
    pending = next(s for s in client.steps(claimed.run_id) if s.node == "receipt")
    assert client.explain_step(pending.id).deps == ("charge",)
    assert client.explain_step(claimed.step_id).reason == "running"
    assert client.step(held.id) == held
    with pytest.raises(errors.NotFound, match="step 999999 not found"):
        client.explain_step(999999)
    with pytest.raises(errors.NotFound, match="step 999999 not found"):
        client.step(999999)


# -- the harness and the worker register an app's limits ------------------------------


def test_the_harness_registers_the_apps_limits_before_its_workflows(dsn: str) -> None:
    with Env(dsn, App(charge_workflow(), limits=[Limit("spare", concurrency=1)])) as env:
        assert {r.name: (r.concurrency, r.rate) for r in env.client.limits()} == {
            "mail": (None, 100), "per_tenant": (2, None), "spare": (1, None), "stripe": (5, None)}
        run = env.run_until_complete(env.submit("charge", {"tenant": {"id": "acme"}}))
        assert run.output == {"receipt": "sent"}


def test_a_worker_registers_limits_first_and_its_declaration_wins_over_a_hand_set_value(
    dsn: str, client: Client, workers: list[Worker], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="cyclone_py.worker")
    # A fresh database: define_workflow would refuse the workflow if its limits came later.
    w = start(workers, charge_workflow(), dsn)
    assert {r.name for r in client.limits()} == {"stripe", "per_tenant", "mail"}
    run_id = client.submit("charge", {"tenant": {"id": "acme"}})
    assert wait_for(lambda: terminal(client, run_id)).state == "completed"
    w.stop(timeout=10)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("limit ")]
    assert lines == ["limit stripe registered: concurrency 5", "limit per_tenant registered: concurrency 2",
                     "limit mail registered: rate 100 per 1 minute"]

    # An operator changes two limits by hand; the next start puts the app's values back, and says so.
    client.define_limit("stripe", 3)
    client.define_limit("mail", 7, 50, timedelta(seconds=30))
    caplog.clear()
    start(workers, charge_workflow(), dsn)
    assert (bucket(client, "stripe").concurrency, bucket(client, "mail").rate) == (5, 100)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("limit ")]
    assert lines == [
        "limit stripe changed at registration: concurrency 3 -> concurrency 5 (the app's declaration wins)",
        "limit per_tenant registered: concurrency 2",
        "limit mail changed at registration: concurrency 7, rate 50 per 30 seconds -> rate 100 per 1 minute "
        "(the app's declaration wins)",
    ]
    changed = next(r for r in caplog.records if r.getMessage().startswith("limit stripe"))
    assert changed.levelno == logging.WARNING
    assert (changed.__dict__["limit"], changed.__dict__["was"]) == ("stripe", "concurrency 3")


@pytest.fixture
def worker_login(dsn: str) -> Iterator[Callable[[], str]]:
    """The DSN of a fresh LOGIN role in ``cyclone_worker`` (dropped at the end)."""
    made: list[str] = []

    def make() -> str:
        role = f"cyc_worker_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(sql.SQL("CREATE ROLE {} LOGIN IN ROLE cyclone_worker").format(sql.Identifier(role)))
        made.append(role)
        return conninfo.make_conninfo(dsn, user=role)

    yield make
    with psycopg.connect(dsn, autocommit=True) as c:
        for role in made:
            c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
            c.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            c.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_a_worker_role_registers_limits_and_reads_the_value_it_replaces(
    dsn: str, client: Client, worker_login: Callable[[], str], workers: list[Worker],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="cyclone_py.worker")
    client.define_limit("stripe", 1)
    start(workers, charge_workflow(), worker_login())
    assert bucket(client, "stripe").concurrency == 5
    assert "limit stripe changed at registration: concurrency 1 -> concurrency 5 (the app's declaration wins)" in [
        r.getMessage() for r in caplog.records]


def test_a_worker_with_a_bad_limit_does_not_start(dsn: str, client: Client, workers: list[Worker]) -> None:
    w = Worker(Workflow("w", limits=[Limit("bad", rate=5)]), dsn, poll_interval=0.1)
    workers.append(w)
    with pytest.raises(RuntimeError, match="p_rate and p_period come together"):
        w.run_in_thread()
    assert isinstance(w.error, errors.InvalidArgument)
    assert client.limits() == [] and client.workflows() == {}


# -- a real worker process ---------------------------------------------------------------


def max_overlap(spans: list[tuple[float, float]]) -> int:
    """The most spans open at one moment (an end before a start at the same instant)."""
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans], key=lambda x: (x[0], x[1]))
    most = now = 0
    for _, delta in events:
        now += delta
        most = max(most, now)
    return most


@pytest.mark.slow
def test_a_worker_with_concurrency_20_never_runs_more_than_2_handlers_of_one_tenant(
    dsn: str, client: Client, tmp_path: Path
) -> None:
    from apps.limited import app

    tenants = [f"t{i}" for i in range(5)]
    for lim in app.limits:
        client.define_limit(**lim.arguments())
    for name, definition in app.definitions():
        client.define_workflow(name, definition)
    ids = client.submit_many("charge", [{"tenant": {"id": t}} for t in tenants for _ in range(6)])

    env = {**os.environ, "CYCLONE_TEST_DIR": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    log = tmp_path / "worker.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cyclone_py.cli", "--dsn", dsn, "worker", "--app", "apps.limited:app",
             "--concurrency", "20", "--poll-interval", "0.1", "--shutdown-grace", "5"],
            env=env, cwd=str(ROOT), stdout=fh, stderr=subprocess.STDOUT,
        )
        try:
            wait_for(lambda: all(terminal(client, r) for r in ids), timeout=30, what="the 30 runs to finish")
            # While they ran, the listing never showed a bucket over its limit (checked once more here).
            assert all(r.running <= 2 for r in client.limits("per_tenant"))
        finally:
            proc.terminate()
            proc.wait(15)
    assert all(client.get_run(r).state == "completed" for r in ids)
    assert "limit per_tenant registered: concurrency 2" in log.read_text()

    spans: dict[str, list[tuple[float, float]]] = {t: [] for t in tenants}
    for line in (tmp_path / "spans").read_text().splitlines():
        tenant, s, e = line.split()
        spans[tenant].append((float(s), float(e)))
    assert {t: len(v) for t, v in spans.items()} == dict.fromkeys(tenants, 6)
    overlaps = {t: max_overlap(v) for t, v in spans.items()}
    assert overlaps == dict.fromkeys(tenants, 2), overlaps  # never more than 2, and it did reach 2
    # The worker ran several tenants at once: the limit is per bucket, not a global one.
    assert max_overlap([s for v in spans.values() for s in v]) >= 6


def test_a_step_held_back_by_one_limit_does_not_keep_a_claimable_step_of_its_other_bucket_out_of_the_batch(
        client: Client) -> None:
    """SPEC 12: a step held back never delays a claimable step behind it. Here
    `both` (limits lim and per:a) is held back by lim, which `first` takes in
    the same batch; `other` (per:a only) fits, so one claim of two takes two.
    Found by tests/test_state_machine.py."""
    client.define_limit("lim", concurrency=1)
    client.define_limit("per", concurrency=1)
    client.define_workflow("first", {"nodes": [{"name": "a"}], "limits": [{"name": "lim"}]})
    client.define_workflow("both", {"nodes": [{"name": "a"}],
                                    "limits": [{"name": "lim"}, {"name": "per", "key": "tenant"}]})
    client.define_workflow("other", {"nodes": [{"name": "a"}], "limits": [{"name": "per", "key": "tenant"}]})
    for wf in ("first", "both", "other"):
        client.submit(wf, {"tenant": "a"})
    claimed = client.claim("w", limit=2)
    assert sorted(c.workflow for c in claimed) == ["first", "other"]


def test_a_rate_lowered_then_raised_within_its_period_still_counts_every_claim_in_the_window(
        client: Client) -> None:
    """SPEC 12: in any window of p_period, at most p_rate claims take a slot of
    one bucket; changing a limit applies to the next claim. Three claims at rate
    3, the rate lowered to 1 and raised back to 3 within the hour: the window
    still holds three claims, so a fourth must wait for the oldest to leave it.
    (define_limit's lowering deleted all but the latest token, and the raise
    let two more claims in: five in one hour at rate 3.) Found while extending
    tests/test_state_machine.py."""
    client.define_limit("burst", rate=3, period=timedelta(hours=1))
    client.define_workflow("many", {"limits": [{"name": "burst"}],
                                    "nodes": [{"name": f"n{i}"} for i in range(5)]})
    client.submit("many")
    assert len(client.claim("w", limit=5, lease_ttl=3600)) == 3
    client.define_limit("burst", rate=1, period=timedelta(hours=1))
    client.define_limit("burst", rate=3, period=timedelta(hours=1))
    assert client.claim("w", limit=5, lease_ttl=3600) == [], "the window already holds 3 claims"
    client.advance_time(timedelta(hours=1, seconds=1))  # all three have left the window
    assert len(client.claim("w", limit=5, lease_ttl=3600)) == 2
