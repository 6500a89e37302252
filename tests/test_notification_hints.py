"""Notifications are hints (issue 30, finding 2).

PostgreSQL lets every role that can connect NOTIFY any channel. A forged
``NOTIFY cyclone_cancel, '<run id>'`` made the worker cancel the handler and
report a failed attempt (three dead-lettered the step); a flood of
``cyclone_wakeup`` made a claim a burst. Now the worker asks the engine
(renew) before it cancels anything, coalesces wake-ups, and no payload can end
its listener. The forger here is a login role with no Cyclone grant at all.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from helpers import start, step_of, terminal, wait_for
from psycopg import conninfo, sql

from cyclone_py import Worker, Workflow, errors
from cyclone_py.client import Client
from cyclone_py.context import StepContext
from cyclone_py.listener import CHECK_PAUSE, WAKEUP_PAUSE

Conn = psycopg.Connection[tuple[object, ...]]


@pytest.fixture
def stranger(dsn: str, conn: Conn) -> Iterator[Callable[[], Conn]]:
    """Connections as a fresh LOGIN role with no Cyclone grant (it may connect:
    PUBLIC has CONNECT on a database, and every role may NOTIFY)."""
    role = f"stranger_{uuid.uuid4().hex[:8]}"
    conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    made: list[Conn] = []

    def connect() -> Conn:
        c = psycopg.connect(conninfo.make_conninfo(dsn, user=role), autocommit=True)
        made.append(c)
        return c

    yield connect
    for c in made:
        c.close()
    conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
    conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def notify(c: Conn, channel: str, payload: str) -> None:
    c.execute("SELECT pg_notify(%s, %s)", (channel, payload))


def holder(name: str) -> tuple[Workflow, threading.Event, threading.Event, list[str | None]]:
    """A one-step workflow whose handler holds its step until released or
    cancelled: (workflow, started, release, the cancel reasons it saw)."""
    wf = Workflow(name)
    started, release = threading.Event(), threading.Event()
    reasons: list[str | None] = []

    @wf.step()
    def job(ctx: StepContext) -> Any:
        started.set()
        while not release.is_set():
            if ctx.cancelled.wait(0.01):
                reasons.append(ctx.cancel_reason)
                ctx.check_cancelled()
        return "done"

    return wf, started, release, reasons


def sample(w: Worker, name: str, **labels: str) -> float:
    assert w.metrics is not None
    return w.metrics.registry.get_sample_value(name, labels or None) or 0.0


def claims(w: Worker) -> float:
    return sample(w, "cyclone_worker_claim_duration_seconds_count")


def renewed(w: Worker) -> float:
    return sample(w, "cyclone_worker_renewals_total", workflow=w.workflows[0], node="job", outcome="renewed")


def listener_alive() -> bool:
    return any(t.name == "cyclone-listener" and t.is_alive() for t in threading.enumerate())


def test_the_stranger_has_no_cyclone_grant(stranger: Callable[[], Conn]) -> None:
    c = stranger()
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.execute("SELECT cyclone.cancel(gen_random_uuid())")


def test_a_forged_cancel_neither_cancels_the_handler_nor_costs_an_attempt(
    dsn: str, client: Client, workers: list[Worker], stranger: Callable[[], Conn]
) -> None:
    wf, started, release, reasons = holder("forged_cancel")
    w = start(workers, wf, dsn, lease_ttl=30.0, metrics_listen="127.0.0.1:0")
    run_id = client.submit(wf)
    assert started.wait(20)
    forger = stranger()
    for payload in (str(run_id), str(run_id), str(run_id), f"{{{run_id}}}", str(run_id).upper()):
        notify(forger, "cyclone_cancel", payload)
    # The listener asked the engine (renew of the step: still this worker's) ...
    wait_for(lambda: renewed(w) >= 1, what="the listener to check the run")
    time.sleep(3 * CHECK_PAUSE)
    # ... and cancelled nothing: the handler runs on, the step is on its first attempt.
    assert reasons == []
    s = step_of(client, run_id, "job")
    assert (s.state, s.attempt, s.reclaims) == ("running", 1, 0)
    release.set()
    run = wait_for(lambda: terminal(client, run_id), what="the run to finish")
    assert (run.state, run.output) == ("completed", {"job": "done"})
    assert step_of(client, run_id, "job").attempt == 1
    assert client.step_errors(run_id) == []
    assert sample(w, "cyclone_worker_steps_failed_total", workflow=wf.name, node="job", error_kind="error",
                  outcome="retried") == 0


def test_a_real_cancel_still_cancels_the_handler_at_once_and_reports_no_failure(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    wf, started, release, reasons = holder("real_cancel")
    w = start(workers, wf, dsn, lease_ttl=30.0, metrics_listen="127.0.0.1:0")
    run_id = client.submit(wf)
    assert started.wait(20)
    t0 = time.monotonic()
    assert client.cancel(run_id, "operator")
    wait_for(lambda: reasons, timeout=3, what="the handler to be cancelled")
    assert time.monotonic() - t0 < 2
    assert reasons == ["run cancelled"]
    # The result is dropped, never reported: the engine refused the lease.
    wait_for(lambda: sample(w, "cyclone_worker_results_dropped_total", workflow=wf.name, node="job",
                            outcome="refused") == 1, what="the result to be dropped")
    assert w.metrics is not None
    assert sum(s.value for m in w.metrics.registry.collect() for s in m.samples
               if s.name == "cyclone_worker_steps_failed_total") == 0
    assert client.get_run(run_id).state == "cancelled"
    assert step_of(client, run_id, "job").state == "cancelled"


def test_garbage_payloads_never_end_the_listener(
    dsn: str, client: Client, workers: list[Worker], stranger: Callable[[], Conn]
) -> None:
    wf, started, release, reasons = holder("garbage")
    release.set()
    # A long poll interval: only the listener's wake-up claim can be quick.
    start(workers, wf, dsn, poll_interval=30.0)
    forger = stranger()
    payloads = ["", "garbage", "x" * 7999, "\u00e9\u0000"[:1] * 100, "{" * 40, str(uuid.uuid4()),
                "urn:uuid:" + str(uuid.uuid4()), "'; SELECT 1; --", "\t" + str(uuid.uuid4()) + "\n"]
    for payload in payloads:
        notify(forger, "cyclone_cancel", payload)
        notify(forger, "cyclone_wakeup", payload)
    with pytest.raises(psycopg.errors.InvalidParameterValue):  # PostgreSQL's own cap: 8,000 bytes
        notify(forger, "cyclone_cancel", "x" * 8000)
    time.sleep(0.3)
    assert listener_alive()
    t0 = time.monotonic()
    run_id = client.submit(wf)
    assert wait_for(lambda: terminal(client, run_id), timeout=5).state == "completed"
    assert time.monotonic() - t0 < 5  # claimed on its wake-up, not by the 30 s poll
    assert reasons == []


def test_a_flood_of_wakeups_and_cancels_is_coalesced(
    dsn: str, client: Client, workers: list[Worker], stranger: Callable[[], Conn]
) -> None:
    """10,000 wake-ups and 10,000 forged cancels naming a run the worker holds,
    from two connections: a bounded number of claims and renew checks, no
    cancelled handler."""
    wf, started, release, reasons = holder("flood")
    w = start(workers, wf, dsn, lease_ttl=30.0, poll_interval=30.0, metrics_listen="127.0.0.1:0")
    run_id = client.submit(wf)
    assert started.wait(20)
    time.sleep(0.5)  # the claims of the start and of the submit are over
    claims_before, checks_before = claims(w), renewed(w)

    def flood(channel: str, payload: str) -> None:
        c = stranger()
        for _ in range(10_000):
            notify(c, channel, payload)

    senders = [threading.Thread(target=flood, args=("cyclone_wakeup", "")),
               threading.Thread(target=flood, args=("cyclone_cancel", str(run_id)))]
    t0 = time.monotonic()
    for t in senders:
        t.start()
    for t in senders:
        t.join()
    time.sleep(0.5)
    took = time.monotonic() - t0
    made, checked = claims(w) - claims_before, renewed(w) - checks_before
    print(f"flood of 2 x 10,000 notifications in {took:.2f}s: {made:.0f} claims, {checked:.0f} renew checks")
    # At most one empty claim a WAKEUP_PAUSE and one check a CHECK_PAUSE, plus slack for the loaded test machine.
    assert made <= took / WAKEUP_PAUSE + 5, (made, took)
    assert checked <= took / CHECK_PAUSE + 5, (checked, took)
    assert checked >= 1  # the cancels were seen, and checked with the engine
    assert reasons == [] and listener_alive()
    release.set()
    assert wait_for(lambda: terminal(client, run_id)).state == "completed"
    assert step_of(client, run_id, "job").attempt == 1


def test_renew_many_answers_which_leases_are_still_the_workers(client: Client) -> None:
    wf = Workflow("renew_many")

    @wf.step()
    def job(ctx: StepContext) -> Any:
        return None

    client.define_workflow(wf.name, wf.definition())
    first, second = client.submit_many(wf, [{}, {}])
    steps = {s.run_id: s for s in client.claim("w", None, 2)}
    a, b = steps[first], steps[second]
    assert client.renew_many("w", [a.step_id, b.step_id], [a.lease_generation, b.lease_generation]) == {
        a.step_id: True, b.step_id: True}
    assert client.cancel(second)
    assert client.renew_many("w", [b.step_id, a.step_id], [b.lease_generation, a.lease_generation]) == {
        a.step_id: True, b.step_id: False}
    assert client.renew_many("other", [a.step_id], [a.lease_generation]) == {a.step_id: False}
    assert client.renew_many("w", [], []) == {}
    with pytest.raises(errors.InvalidArgument):
        client.renew_many("w", [a.step_id], [])
