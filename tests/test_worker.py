"""The worker in a thread: claims, heartbeats, cancellation, timeouts, results."""

from __future__ import annotations

import gc
import logging
import threading
import time
from datetime import timedelta
from functools import partial
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest
from helpers import FAST, expire_and_reclaim, start, step_of, terminal, wait_for

from cyclone_py import App, Permanent, Worker, Workflow, errors
from cyclone_py import worker as worker_module
from cyclone_py.client import Client
from cyclone_py.context import StepContext
from cyclone_py.runtime import Active, HandlerPool, Timers


def run_to_completion(
    workers: list[Worker], wf: Workflow, dsn: str, client: Client, inputs: list[Any], **kw: Any
) -> tuple[Worker, list[Any]]:
    """Submit one run of ``wf`` per input, start a worker, wait until every run completed."""
    client.define_workflow(wf.name, wf.definition())
    ids = client.submit_many(wf, inputs)
    w = start(workers, wf, dsn, **kw)
    for run_id in ids:
        assert wait_for(lambda: terminal(client, run_id), what="run to finish").state == "completed"
    return w, ids


def sleeper(name: str) -> tuple[Workflow, threading.Event, list[str | None]]:
    """A one-step workflow whose handler sleeps until cancelled; the event is
    set when it starts, the list gets its cancel reason."""
    wf = Workflow(name)
    started = threading.Event()
    reasons: list[str | None] = []

    @wf.step()
    def job(ctx: StepContext) -> Any:
        started.set()
        try:
            ctx.sleep(30)
        finally:
            reasons.append(ctx.cancel_reason)

    return wf, started, reasons


def test_runs_many_workflows_to_completion(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("chain")

    @wf.step()
    def a(ctx: StepContext) -> Any:
        return ctx.input["n"]

    @wf.step(deps=[a])
    def b(ctx: StepContext) -> Any:
        return ctx.deps["a"] * 2

    start(workers, wf, dsn, concurrency=8)
    ids = client.submit_many(wf, [{"n": i} for i in range(40)])
    for i, run_id in enumerate(ids):
        run = wait_for(lambda: terminal(client, run_id), what="run to finish")
        assert (run.state, run.output) == ("completed", {"b": 2 * i})


@pytest.mark.slow
def test_heartbeat_keeps_a_long_handler_alive(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("long")

    @wf.step()
    def slow(ctx: StepContext) -> Any:
        time.sleep(2.0)  # > 3 lease TTLs
        return "done"

    start(workers, wf, dsn, lease_ttl=0.6)
    run_id = client.submit(wf)
    run = wait_for(lambda: terminal(client, run_id), what="run to finish")
    assert run.state == "completed"
    s = step_of(client, run_id, "slow")
    assert (s.attempt, s.reclaims, s.output) == (1, 0, "done")


def test_lost_lease_cancels_the_handler_and_its_late_result_is_refused(
    dsn: str, conn: Any, client: Client, workers: list[Worker]
) -> None:
    wf = Workflow("reclaimed")
    first = threading.Event()
    reasons: list[str | None] = []

    @wf.step()
    def job(ctx: StepContext) -> Any:
        if not first.is_set():
            first.set()
            ctx.cancelled.wait(10)  # ignores the cancellation and returns anyway
            reasons.append(ctx.cancel_reason)
            return "late"
        return "fresh"

    start(workers, wf, dsn, lease_ttl=3.0, concurrency=2)
    run_id = client.submit(wf)
    wait_for(first.is_set, what="handler to start")
    # Simulate a reclaim: the engine clock passes the lease, another client ticks.
    assert expire_and_reclaim(conn) == 1  # past the lease on the engine's clock; another client's tick
    run = wait_for(lambda: terminal(client, run_id), what="run to finish")
    wait_for(lambda: reasons, what="first handler to notice")
    assert reasons == ["lease lost"]
    assert run.output == {"job": "fresh"}
    s = step_of(client, run_id, "job")
    assert (s.attempt, s.reclaims) == (1, 1)


def test_a_late_result_leaves_the_next_execution_of_its_step_alone(
    dsn: str, conn: Any, client: Client, workers: list[Worker], caplog: pytest.LogCaptureFixture
) -> None:
    """This worker claims a step again (after a reclaim) while its earlier execution still runs. That
    execution's late result is refused, and must leave the new execution (same step id) tracked: its
    heartbeats go on and cancel_run reaches it. Keyed by step id alone, ending the first ended the second's
    bookkeeping, and a long second execution lost its lease for want of heartbeats."""
    wf = Workflow("reclaimed_again")
    release_first = threading.Event()
    second_started = threading.Event()
    reasons: list[str | None] = []

    @wf.step()
    def job(ctx: StepContext) -> Any:
        if ctx.lease_generation == 1:
            release_first.wait(10)
            return "late"
        second_started.set()
        ctx.cancelled.wait(10)
        reasons.append(ctx.cancel_reason)
        return "second"

    worker = start(workers, wf, dsn, lease_ttl=30.0, concurrency=2)
    run_id = client.submit(wf)
    wait_for(lambda: step_of(client, run_id, "job").state == "running", what="the first execution")
    with caplog.at_level(logging.DEBUG, logger="cyclone_py.worker"):
        assert expire_and_reclaim(conn) == 1
        wait_for(second_started.is_set, what="this worker to claim the step again")
        release_first.set()
        wait_for(lambda: any(m in r.getMessage() for r in caplog.records
                             for m in ("completion refused", "result dropped")), what="the late result refused")
    assert worker.cancel_run(run_id, "run cancelled") == 1
    wait_for(lambda: reasons, what="the second execution to be cancelled")
    assert reasons == ["run cancelled"]
    s = step_of(client, run_id, "job")
    assert (s.lease_generation, s.reclaims) == (2, 1)


def test_timeout_cancels_and_retries(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("timeouts")
    reasons: list[str | None] = []

    @wf.step(timeout=0.3, max_attempts=2)
    def job(ctx: StepContext) -> Any:
        if ctx.attempt == 1:
            try:
                ctx.sleep(10)
            finally:
                reasons.append(ctx.cancel_reason)
        return ctx.attempt

    start(workers, wf, dsn, backoff=lambda attempt: timedelta(0))
    t0 = time.monotonic()
    run_id = client.submit(wf)
    run = wait_for(lambda: terminal(client, run_id), what="run to finish")
    assert time.monotonic() - t0 < 5
    assert reasons == ["timeout"]
    assert (run.state, run.output) == ("completed", {"job": 2})


def test_timeout_on_the_last_attempt_discards(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("timeout_once")

    @wf.step(timeout=0.2, max_attempts=1)
    def job(ctx: StepContext) -> Any:
        ctx.sleep(10)

    seen: list[errors.StepFailed] = []
    start(workers, wf, dsn, on_error=seen.append)
    run_id = client.submit(wf)
    run = wait_for(lambda: terminal(client, run_id), what="run to finish")
    assert (run.state, run.error_kind) == ("failed", "timeout")
    wait_for(lambda: seen, what="error hook")
    assert isinstance(seen[0], errors.StepTimedOut)
    assert seen[0].run_id == run_id


def test_permanent_discards_at_once_and_calls_the_hook(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("perm", max_attempts=5)

    @wf.step()
    def validate(ctx: StepContext) -> Any:
        raise Permanent("missing email")

    seen: list[errors.StepFailed] = []
    start(workers, wf, dsn, on_error=seen.append)
    run_id = client.submit(wf)
    run = wait_for(lambda: terminal(client, run_id), what="run to finish")
    assert (run.state, run.error_kind, run.error) == ("failed", "permanent", "missing email")
    assert step_of(client, run_id, "validate").attempt == 1
    wait_for(lambda: seen, what="error hook")
    assert (seen[0].node, seen[0].error_kind, seen[0].step_id) == (
        "validate", "permanent", step_of(client, run_id, "validate").id,
    )


def test_errors_carry_the_traceback_and_use_the_custom_backoff(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    wf = Workflow("flaky")

    @wf.step()
    def job(ctx: StepContext) -> Any:
        raise ValueError("upstream said no")

    start(workers, wf, dsn, backoff=lambda attempt: timedelta(minutes=10 * attempt))
    run_id = client.submit(wf)
    s = wait_for(lambda: (r := step_of(client, run_id, "job")).error and r, what="first failure")
    assert (s.state, s.attempt, s.error_kind) == ("available", 1, "error")
    assert "Traceback" in s.error and "ValueError: upstream said no" in s.error
    assert s.scheduled_at is not None and s.started_at is not None
    delay = s.scheduled_at - s.started_at
    assert timedelta(minutes=10) <= delay < timedelta(minutes=10, seconds=5)


def test_bad_output_is_permanent_and_a_base_exception_a_panic(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    odd = Workflow("odd", max_attempts=5)

    @odd.step()
    def unserialisable(ctx: StepContext) -> Any:
        return object()

    nan = Workflow("nan", max_attempts=5)

    @nan.step()
    def not_a_number(ctx: StepContext) -> Any:
        return {"x": float("nan")}

    nul = Workflow("nul", max_attempts=5)

    @nul.step()
    def with_nul(ctx: StepContext) -> Any:
        return "a\x00b"

    huge = Workflow("huge", max_attempts=5)

    @huge.step()
    def too_big(ctx: StepContext) -> Any:
        return {"x": "y" * 1_100_000}  # over the engine's 1 MiB cap on a stored value (SPEC 18, issue 35)

    exits = Workflow("exits", max_attempts=1)

    @exits.step()
    def bail(ctx: StepContext) -> Any:
        raise SystemExit(3)

    start(workers, App(odd, nan, nul, huge, exits), dsn)
    r1, r2 = client.submit(odd), client.submit(exits)
    run1 = wait_for(lambda: terminal(client, r1), what="run to finish")
    run2 = wait_for(lambda: terminal(client, r2), what="run to finish")
    assert (run1.state, run1.error_kind) == ("failed", "permanent")
    assert run1.error is not None and "handler returned a value that is not JSON" in run1.error
    assert client.steps(r1)[0].attempt == 1, "discarded at once, not retried"
    for wf, says in ((nan, "not JSON: Out of range float values"), (nul, "NUL character"),
                     (huge, "the limit is 1 MiB")):
        run_id = client.submit(wf)
        run = wait_for(lambda: terminal(client, run_id), what="run to finish")
        assert (run.state, run.error_kind, client.steps(run_id)[0].attempt) == ("failed", "permanent", 1)
        assert run.error is not None and says in run.error, run.error
    assert (run2.state, run2.error_kind) == ("failed", "panic")
    assert run2.error is not None and "SystemExit" in run2.error


def test_cancelling_a_run_cancels_its_handler_at_once(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf, started, reasons = sleeper("cancellable")
    start(workers, wf, dsn, lease_ttl=30.0)
    run_id = client.submit(wf)
    wait_for(started.is_set, what="handler to start")
    t0 = time.monotonic()
    assert client.cancel(run_id, "operator")
    wait_for(lambda: reasons, timeout=3, what="handler cancelled")
    assert time.monotonic() - t0 < 2
    assert reasons == ["run cancelled"]
    assert client.get_run(run_id).state == "cancelled"


def test_a_deadline_cancels_the_running_handler_at_once(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf, started, reasons = sleeper("deadlined")
    # The lease outlives the clock's jump: a heartbeat after the jump (due
    # 9-11 s after the claim on a slow machine) would find a 30 s lease
    # expired and cancel with "lease lost"; only the deadline may end it here.
    start(workers, wf, dsn, lease_ttl=600.0, poll_interval=5.0)
    run_id = client.submit(wf, deadline=timedelta(minutes=1))
    wait_for(started.is_set, what="handler to start")
    client.advance_time(timedelta(minutes=2))
    assert client.tick().deadlines == 1  # another client's tick fails the run
    wait_for(lambda: reasons, timeout=3, what="handler cancelled")
    assert reasons == ["run cancelled"]
    run = client.get_run(run_id)
    assert (run.state, run.error_kind) == ("failed", "deadline")


def test_worker_survives_lost_connections(
    dsn: str, client: Client, conn: psycopg.Connection[Any], workers: list[Worker]
) -> None:
    wf = Workflow("resilient")

    @wf.step()
    def job(ctx: StepContext) -> Any:
        return ctx.input["n"]

    start(workers, wf, dsn, max_db_backoff=0.5)
    first = client.submit(wf, {"n": 1})
    wait_for(lambda: terminal(client, first), what="first run")
    killed = conn.execute(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE datname = current_database() AND application_name LIKE 'cyclone-%%' "
        "AND application_name <> 'cyclone' AND pid <> pg_backend_pid()"
    ).fetchone()
    assert killed is not None and killed[0] >= 1
    second = client.submit(wf, {"n": 2})
    run = wait_for(lambda: terminal(client, second), what="second run")
    assert run.output == {"job": 2}


def test_the_workers_pool_checkout_waits_at_most_one_heartbeat_interval(
        dsn: str, workers: list[Worker]) -> None:
    """The timer thread renews every lease in turn: a checkout that waited the
    Client's default 10 s would hold every other heartbeat back by as long."""
    wf = Workflow("checkout")

    @wf.step()
    def job(ctx: StepContext) -> Any:
        return None

    assert start(workers, wf, dsn, lease_ttl=3.0).client.pool.timeout == 1.0
    assert start(workers, wf, dsn, lease_ttl=60.0).client.pool.timeout == 10.0


def test_the_main_loops_database_backoff_is_at_most_one_lease_ttl() -> None:
    """The main loop is the worker's ticker: however long the database was gone,
    it is back to ticking within a lease TTL of the database answering again."""
    w = Worker(Workflow("backoff"), "postgresql:///unused", lease_ttl=3.0, poll_interval=0.3, max_db_backoff=30.0)
    assert [w._db_backoff(n) for n in (1, 2, 3, 4, 20)] == pytest.approx([0.3, 0.6, 1.2, 2.4, 3.0])
    w = Worker(Workflow("backoff"), "postgresql:///unused", lease_ttl=60.0, poll_interval=1.0, max_db_backoff=30.0)
    assert w._db_backoff(20) == 30.0


def test_stop_waits_for_in_flight_handlers(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("drain")
    started = threading.Event()

    @wf.step()
    def job(ctx: StepContext) -> Any:
        started.set()
        time.sleep(0.5)
        return "finished"

    # No prefetch: a step claimed into the buffer before stop() would be run
    # in the grace period too (documented), which is not what this checks.
    w = start(workers, wf, dsn, concurrency=1, prefetch=0)
    run_id = client.submit(wf)
    wait_for(started.is_set, what="handler to start")
    other = client.submit(wf)
    w.stop(timeout=10)
    assert client.get_run(run_id).state == "completed"
    assert step_of(client, other, "job").state == "available"  # not claimed after stop


def test_worker_needs_only_the_cyclone_worker_role(
    dsn: str, client: Client, conn: psycopg.Connection[Any], workers: list[Worker]
) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    role = f"cyclone_test_worker_{time.monotonic_ns() % 10**9}"
    conn.execute(f"CREATE ROLE {role} LOGIN IN ROLE cyclone_worker")
    try:
        params = conninfo_to_dict(dsn)
        params["user"] = role
        worker_dsn = make_conninfo(**{k: str(v) for k, v in params.items() if v is not None})
        wf = Workflow("least_privilege")

        @wf.step(max_attempts=2)
        def job(ctx: StepContext) -> Any:
            if ctx.attempt == 1:
                raise RuntimeError("once")
            return "ok"

        w = start(workers, wf, worker_dsn, backoff=lambda attempt: timedelta(0))
        run_id = client.submit(wf)
        run = wait_for(lambda: terminal(client, run_id), what="run to finish")
        assert (run.state, run.output) == ("completed", {"job": "ok"})
        w.stop(timeout=10)
    finally:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
        )
        conn.execute(f"DROP OWNED BY {role}")
        conn.execute(f"DROP ROLE {role}")


def test_a_bad_definition_stops_the_worker_at_start(dsn: str) -> None:
    wf = Workflow("broken")
    wf.step(name="a", deps=["missing"])(lambda ctx: None)
    w = Worker(wf, dsn, **FAST)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="worker failed to start") as info:
        w.run_in_thread()
    assert isinstance(info.value.__cause__, errors.InvalidArgument)
    assert time.monotonic() - t0 < 5
    with pytest.raises(errors.InvalidArgument):
        Worker(wf, dsn, **FAST).run(install_signals=False)


def test_prefetch_leases_a_buffer_beyond_the_handler_threads(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("slowish")
    release = threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()

    @wf.step()
    def work(ctx: StepContext) -> Any:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        release.wait(10)
        with lock:
            running -= 1
        return None

    start(workers, wf, dsn, concurrency=2, prefetch=3)
    ids = client.submit_many(wf, [{} for _ in range(10)])

    def leased() -> int:
        return sum(1 for r in ids for s in client.steps(r) if s.state == "running")

    # Two handlers run; three more steps are leased and wait for a thread.
    assert wait_for(lambda: leased() == 5, what="five leased steps")
    time.sleep(0.3)
    assert leased() == 5 and most == 2
    release.set()
    for run_id in ids:
        run = wait_for(lambda: terminal(client, run_id), what="run to finish")
        assert run.state == "completed"
    assert most == 2


def _largest_claim(conn: psycopg.Connection[Any], run_ids: list[Any]) -> int:
    """The most steps one claim took: a claim stamps its steps' started_at with
    its transaction's time."""
    row = conn.execute(
        "SELECT max(n) FROM (SELECT count(*) AS n FROM cyclone.cyclone_steps WHERE run_id = ANY (%s) "
        "GROUP BY started_at) c", (run_ids,)).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.slow
def test_adaptive_prefetch_claims_big_batches_for_short_handlers(
    dsn: str, client: Client, conn: psycopg.Connection[Any], workers: list[Worker]
) -> None:
    wf = Workflow("quick")

    @wf.step()
    def noop(ctx: StepContext) -> Any:
        return None

    _, ids = run_to_completion(workers, wf, dsn, client, [{}] * 600, concurrency=2)  # prefetch not given: adaptive
    # A fixed buffer of `concurrency` would cap a claim at 2 + 2 steps, the cap of 0.30.0 (20 x) at 2 + 40.
    assert _largest_claim(conn, ids) > 2 + 20 * 2


def test_the_adaptive_prefetch_lies_between_concurrency_and_its_caps() -> None:
    # concurrency x claim time / handler time, at least concurrency, at most PREFETCH_CAP x concurrency and
    # max_batch (python.md).
    wf = Workflow("bounds")

    @wf.step()
    def noop(ctx: StepContext) -> Any:
        return None

    w = Worker(wf, "dbname=never_opened", concurrency=4)
    shard = w._shards[0]
    assert w._prefetch_now(shard) == 4  # nothing measured yet
    shard.claim_s, shard.handler_s = 0.005, 1.0  # slow handlers
    assert w._prefetch_now(shard) == 4
    shard.claim_s, shard.handler_s = 0.005, 0.001
    assert w._prefetch_now(shard) == 20
    shard.claim_s, shard.handler_s = 0.005, 1e-6  # no-op handlers
    assert w._prefetch_now(shard) == worker_module.PREFETCH_CAP * 4 == 200
    w.max_batch = 150
    assert w._prefetch_now(shard) == 150


def test_adaptive_prefetch_stays_at_concurrency_for_slow_handlers(
    dsn: str, client: Client, conn: psycopg.Connection[Any], workers: list[Worker]
) -> None:
    wf = Workflow("slow")

    @wf.step()
    def nap(ctx: StepContext) -> Any:
        time.sleep(0.1)
        return None

    _, ids = run_to_completion(workers, wf, dsn, client, [{}] * 16, concurrency=2)
    assert _largest_claim(conn, ids) <= 4  # two running plus a buffer of two


@pytest.mark.slow
def test_finished_steps_are_not_kept_alive_by_their_timers(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    # Every claimed step gets a heartbeat (and here a timeout) on the timer heap,
    # due seconds later; a short step finishes long before. Those entries must
    # not keep the step (its input, context, closures) alive until then.
    wf = Workflow("short_lived")

    @wf.step(timeout=60)
    def noop(ctx: StepContext) -> Any:
        return None

    w, _ = run_to_completion(workers, wf, dsn, client, [{"pad": "x" * 100}] * 1200, concurrency=4, lease_ttl=60)
    wait_for(lambda: w.in_flight == 0 and not w._active, what="worker to settle")
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, Active) and o.step.workflow == wf.name]
    timers = w._shards[0].timers
    assert timers is not None and len(timers) <= 2 * Timers.COMPACT_MIN + 1  # 2400 entries were pushed


def test_a_step_that_ends_before_the_first_heartbeat_pass_never_reaches_the_timer_heap(
    dsn: str, client: Client, workers: list[Worker], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A step's first heartbeat goes on the heap at a pass FIRST_HEARTBEAT_PASS after its claim, one pass
    # for a claim's steps: a short step ends before it, and costs no entry (before: one a step). The pass
    # comes later here than its 0.1 s, so that on a loaded machine a claim of 200 no-op steps (the buffer
    # at concurrency 4) surely ends before it: which steps end first is what is tested, not how fast.
    monkeypatch.setattr(worker_module, "FIRST_HEARTBEAT_PASS", 2.0)
    pushed: list[float] = []
    call_at = Timers.call_at

    def counted(self: Timers, due: float, fn: Any) -> Any:
        pushed.append(due)
        return call_at(self, due, fn)

    monkeypatch.setattr(Timers, "call_at", counted)
    wf = Workflow("quick")

    @wf.step()
    def noop(ctx: StepContext) -> Any:
        return None

    run_to_completion(workers, wf, dsn, client, [{}] * 400, concurrency=4, lease_ttl=60)
    assert len(pushed) < 40  # the passes (at most one a claim, one a 0.1 s): not one entry a step


def test_a_cancelled_timer_never_fires_and_the_heap_is_compacted() -> None:
    timers = Timers()
    timers.start()
    try:
        fired: list[int] = []
        now = time.monotonic()
        keep = [timers.call_at(now + 0.05 + i / 1000, partial(fired.append, i)) for i in range(3)]
        dropped = [timers.call_at(now + 0.05, lambda: fired.append(-1)) for _ in range(Timers.COMPACT_MIN + 10)]
        for t in dropped:
            timers.cancel(t)
        assert len(timers) <= 2 * Timers.COMPACT_MIN + 1
        timers.cancel(keep[1])
        timers.cancel(keep[1])  # twice is harmless
        wait_for(lambda: len(fired) == 2, what="the live timers to fire")
        time.sleep(0.05)
        assert fired == [0, 2]
        assert len(timers) == 0
    finally:
        timers.stop()


def test_runs_exactly_concurrency_handlers_at_once(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("parallel")
    lock = threading.Lock()
    running = [0]
    peak = [0]

    @wf.step()
    def nap(ctx: StepContext) -> Any:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return None

    run_to_completion(workers, wf, dsn, client, [{}] * 24, concurrency=3)
    assert peak[0] == 3


def test_the_handler_pool_drops_steps_not_started_at_shutdown() -> None:
    release = threading.Event()
    ran: list[int] = []

    def run(active: Any) -> None:
        ran.append(active)
        release.wait(5)

    pool = HandlerPool(1, run)
    for i in range(3):
        pool.submit(i)  # type: ignore[arg-type]
    wait_for(lambda: ran == [0], what="the first to start")
    pool.shutdown()
    release.set()
    for thread in pool._threads:
        thread.join(5)
        assert not thread.is_alive()
    assert ran == [0]
    with pytest.raises(RuntimeError):
        pool.submit(3)  # type: ignore[arg-type]


def test_the_end_of_an_async_step_starts_the_next_async_one_itself() -> None:
    """An async step's release hands its slot straight to the next async
    step, in the releasing thread (the event loop's): no handler thread wakes
    up for it. A plain step next gets the slot back for a thread."""
    handed: list[tuple[str, str]] = []
    releases: list[Any] = []
    ran: list[tuple[str, str]] = []

    def hand_off(item: Any, release: Any) -> None:
        handed.append((item.name, threading.current_thread().name))
        releases.append(release)

    def run(item: Any) -> None:
        ran.append((item.name, threading.current_thread().name))

    def step(name: str, is_async: bool) -> Any:
        return SimpleNamespace(name=name, is_async=is_async)

    pool = HandlerPool(1, run, hand_off)
    try:
        for item in (step("a1", True), step("a2", True), step("a3", True), step("p", False), step("a4", True)):
            pool.submit(item)
        wait_for(lambda: len(handed) == 1, what="a handler thread to hand off the first")
        assert handed[0][1].startswith("cyclone-handler-")
        releases.pop()()  # a1 ends: a2 starts in this thread, holding a1's slot
        releases.pop()()  # a2 ends: a3 starts here
        assert handed[1:] == [("a2", "MainThread"), ("a3", "MainThread")]
        releases.pop()()  # a3 ends: the plain step is next, so the slot goes back to a thread
        wait_for(lambda: len(ran) == 1 and len(handed) == 4, what="the plain step, then a4, on the thread")
        assert ran[0][0] == "p" and ran[0][1].startswith("cyclone-handler-")
        assert handed[3][0] == "a4" and handed[3][1].startswith("cyclone-handler-")
        assert pool.queued() == 0
    finally:
        pool.shutdown()


def test_a_handler_thread_survives_an_error_around_the_handler() -> None:
    ran: list[int] = []

    def run(item: Any) -> None:
        ran.append(item)
        if item == 0:
            raise RuntimeError("boom")

    pool = HandlerPool(1, run)
    try:
        pool.submit(0)  # type: ignore[arg-type]
        pool.submit(1)  # type: ignore[arg-type]
        wait_for(lambda: ran == [0, 1], what="the second item to run on the same thread")
    finally:
        pool.shutdown()


def test_a_wakeup_is_claimed_on_the_listeners_connection(
    dsn: str, client: Client, conn: psycopg.Connection[Any], workers: list[Worker]
) -> None:
    wf = Workflow("woken")

    @wf.step()
    def noop(ctx: StepContext) -> Any:
        return None

    start(workers, wf, dsn, concurrency=2, poll_interval=30)  # no poll: only the NOTIFY can start it
    # Until the listener LISTENs on both channels, a NOTIFY would be missed;
    # until the main loop's first claim found nothing (and recorded the worker
    # as waiting), that claim could take the step.
    wait_for(lambda: conn.execute(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'cyclone-listener' AND query NOT IN ('', 'LISTEN \"cyclone_wakeup\"')").fetchone()
        and conn.execute("SELECT 1 FROM cyclone.cyclone_waiting_workers").fetchone(),
        what="the listener to listen and the first claim to find nothing")
    run_id = client.submit(wf, {})
    assert wait_for(lambda: terminal(client, run_id), what="run to finish").state == "completed"
    row = conn.execute(
        "SELECT query FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'cyclone-listener'").fetchone()
    assert row is not None and "cyclone.claim(" in str(row[0])


def test_the_listener_and_the_main_loop_never_lease_more_than_capacity(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    # Both claim (the listener on a NOTIFY, the main loop on its poll and when
    # a handler frees a slot), for slots they share: with prefetch 0 the worker
    # never holds more leases than handler threads.
    wf = Workflow("crowded")

    @wf.step()
    def nap(ctx: StepContext) -> Any:
        time.sleep(0.02)
        return None

    most = 0

    class Counting(Worker):
        def _start_batch(self, shard: Any, steps: Any) -> None:
            nonlocal most
            super()._start_batch(shard, steps)
            most = max(most, self.in_flight)

    start(workers, wf, dsn, cls=Counting, concurrency=2, prefetch=0, poll_interval=0.01)
    ids = []
    for _ in range(60):  # one NOTIFY per submit
        ids.append(client.submit(wf, {}))
        time.sleep(0.005)
    for run_id in ids:
        assert wait_for(lambda: terminal(client, run_id), what="run to finish").state == "completed"
    assert most == 2


# -- two services, one database -------------------------------------------------


def _service(workflow: str) -> Workflow:
    wf = Workflow(workflow)

    @wf.step()
    def prepare(ctx: StepContext) -> Any:  # the same handler name in both services
        return {"prepared_by": workflow}

    return wf


@pytest.mark.slow
def test_two_services_sharing_a_handler_name_never_take_each_others_steps(
    workers: list[Worker], dsn: str, client: Client
) -> None:
    orders, billing = _service("orders"), _service("billing")
    for wf in (orders, billing):
        client.define_workflow(wf.name, wf.definition())
    billing_runs = client.submit_many(billing, [{}] * 5)  # first in claim order
    orders_runs = client.submit_many(orders, [{}] * 5)

    start(workers, App(orders), dsn)
    for run_id in orders_runs:
        assert wait_for(lambda: terminal(client, run_id), what="orders run").state == "completed"
    # Now submitted, so that the wake-up reaches the listener, which claims too.
    billing_runs += client.submit_many(billing, [{}])
    orders_runs += client.submit_many(orders, [{}])
    assert wait_for(lambda: terminal(client, orders_runs[-1]), what="orders run").state == "completed"
    for run_id in billing_runs:
        step = step_of(client, run_id, "prepare")
        assert (step.state, step.attempt, step.error) == ("available", 0, None), "orders' worker took a billing step"

    start(workers, App(billing), dsn)
    for service, runs in (("orders", orders_runs), ("billing", billing_runs)):
        for run_id in runs:
            run = wait_for(lambda: terminal(client, run_id), what=f"{service} run")
            assert (run.state, run.output) == ("completed", {"prepare": {"prepared_by": service}})
            assert step_of(client, run_id, "prepare").attempt == 1


@pytest.mark.slow
def test_a_worker_given_some_of_its_apps_workflows_claims_steps_of_those_only(
    workers: list[Worker], dsn: str, client: Client
) -> None:
    orders, billing, shipping = _service("orders"), _service("billing"), _service("shipping")
    app = App(orders, billing, shipping)
    for wf in app:
        client.define_workflow(wf.name, wf.definition())
    billing_runs = client.submit_many(billing, [{}] * 3)  # first in claim order
    served_runs = client.submit_many(shipping, [{}] * 3) + client.submit_many(orders, [{}] * 3)

    w = start(workers, app, dsn, workflows=["shipping", "orders", "orders"])
    assert (w.workflows, w.handlers) == (["orders", "shipping"], ["prepare"])
    assert w.registry_info["workflows"] == ["orders", "shipping"]
    for run_id in served_runs:
        assert wait_for(lambda: terminal(client, run_id), what="run").state == "completed"
    # Now submitted, so that the wake-up reaches the listener, which claims too.
    billing_runs += client.submit_many(billing, [{}])
    last = client.submit(orders, {})
    assert wait_for(lambda: terminal(client, last), what="orders run").state == "completed"
    for run_id in billing_runs:
        step = step_of(client, run_id, "prepare")
        assert (step.state, step.attempt) == ("available", 0), "a worker of orders and shipping took a billing step"


def test_a_worker_refuses_workflows_its_app_does_not_declare() -> None:
    app = App(_service("orders"), _service("billing"))
    with pytest.raises(ValueError, match=r"the app declares no workflow 'nosuch' \(its workflows: billing, orders\)"):
        Worker(app, "dbname=unused", workflows=["orders", "nosuch"])
    with pytest.raises(ValueError, match="at least one workflow"):
        Worker(app, "dbname=unused", workflows=[])
    with pytest.raises(TypeError, match="not a string"):
        Worker(app, "dbname=unused", workflows="orders")
    assert Worker(app, "dbname=unused").workflows == ["billing", "orders"]


def test_an_outage_is_one_warning_and_one_line_when_the_database_answers_again(
        caplog: pytest.LogCaptureFixture) -> None:
    """However many threads and retries fail while the database is gone (a
    restart, a failover), the worker logs one warning, and one info line once a
    call sent after the outage began answers again (one sent before, on a
    connection still up, ends nothing); failures within SETTLE seconds of its
    end are the same outage; a later one is logged again."""
    from cyclone_py.runtime import DatabaseOutage  # noqa: PLC0415

    outage = DatabaseOutage("w")
    with caplog.at_level(logging.INFO, logger="cyclone_py.worker"):
        outage.answered(time.monotonic())  # no outage: nothing to say
        before = time.monotonic()
        for what in ("claim/tick", "renew", "complete_many", "listen", "renew"):
            outage.failed(what, errors.DatabaseUnavailable("gone"))
        outage.answered(before)  # a call sent before the outage was seen ends nothing
        outage.answered(time.monotonic())
        outage.answered(time.monotonic())
        outage.failed("listen", errors.DatabaseUnavailable("flapping"))  # within SETTLE: the same outage
        outage.answered(time.monotonic())
        outage._ended = (time.monotonic() - outage.SETTLE, time.monotonic() - outage.SETTLE)
        outage.failed("claim/tick", errors.DatabaseUnavailable("gone again"))
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert lines == [
        ("WARNING", "database unavailable (claim/tick failed: gone); retrying until it answers"),
        ("INFO", lines[1][1]),
        ("INFO", lines[2][1]),
        ("WARNING", "database unavailable (claim/tick failed: gone again); retrying until it answers"),
    ]
    assert lines[1][1].startswith("database reachable again after ") and lines[1][1].endswith("(5 failed calls)")
