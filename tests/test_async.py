"""``async def`` handlers: on the worker's event loop and in the harness.

Real database, real worker: output, the shared concurrency bound with thread
handlers, timeout, Permanent, a cancelled run, a lost lease, shutdown.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from helpers import expire_and_reclaim, start, step_of, terminal, wait_for

from cyclone_py import App, Cancelled, Permanent, Worker, Workflow, errors
from cyclone_py.aio import EventLoop, is_async_handler
from cyclone_py.client import Client
from cyclone_py.context import StepContext
from cyclone_py.execution import Outcome
from cyclone_py.testing import Env


def async_sleeper(name: str, **step: Any) -> tuple[Workflow, threading.Event, list[str | None]]:
    """A one-step workflow whose async handler awaits 30 s unless its task is
    cancelled; the event is set when it starts, the list gets the cancel
    reason it saw in its CancelledError."""
    wf = Workflow(name)
    started = threading.Event()
    cancelled: list[str | None] = []

    @wf.step(**step)
    async def job(ctx: StepContext) -> Any:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(ctx.cancel_reason)
            raise
        return "slept"

    return wf, started, cancelled


# -- the worker ---------------------------------------------------------------


def test_an_async_handler_returns_its_output_beside_thread_handlers(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    wf = Workflow("mixed")
    loops: set[int] = set()

    @wf.step()
    def fetch(ctx: StepContext) -> Any:
        return ctx.input["n"]

    @wf.step(deps=[fetch])
    async def double(ctx: StepContext) -> Any:
        loops.add(id(asyncio.get_running_loop()))
        await ctx.asleep(0.01)
        return ctx.deps["fetch"] * 2

    @wf.step(deps=[double])
    def report(ctx: StepContext) -> Any:
        return {"doubled": ctx.deps["double"], "attempt": ctx.attempt}

    start(workers, wf, dsn, concurrency=4)
    ids = client.submit_many(wf, [{"n": i} for i in range(10)])
    for i, run_id in enumerate(ids):
        run = wait_for(lambda r=run_id: terminal(client, r), what="run to finish")
        assert (run.state, run.output) == ("completed", {"report": {"doubled": 2 * i, "attempt": 1}})
        assert step_of(client, run_id, "double").output == 2 * i
    assert len(loops) == 1  # one event loop for the worker's life


def test_async_and_thread_handlers_together_never_exceed_concurrency(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    lock = threading.Lock()
    running = {"sync": 0, "async": 0}
    peaks = {"total": 0, "async": 0, "both": 0}

    def enter(kind: str) -> None:
        with lock:
            running[kind] += 1
            total = running["sync"] + running["async"]
            peaks["total"] = max(peaks["total"], total)
            peaks["async"] = max(peaks["async"], running["async"])
            if running["sync"] and running["async"]:
                peaks["both"] += 1

    def leave(kind: str) -> None:
        with lock:
            running[kind] -= 1

    threaded, evented = Workflow("threaded"), Workflow("evented")

    @threaded.step()
    def nap(ctx: StepContext) -> Any:
        enter("sync")
        time.sleep(0.05)
        leave("sync")

    @evented.step()
    async def anap(ctx: StepContext) -> Any:
        enter("async")
        await asyncio.sleep(0.05)
        leave("async")

    app = App(threaded, evented)
    client.define_workflow("threaded", threaded.definition())
    client.define_workflow("evented", evented.definition())
    ids = client.submit_many(threaded, [{}] * 20) + client.submit_many(evented, [{}] * 30)
    start(workers, app, dsn, concurrency=3)
    for run_id in ids:
        assert wait_for(lambda r=run_id: terminal(client, r), what="run to finish").state == "completed"
    assert peaks["total"] == 3
    assert peaks["async"] == 3  # async handlers alone fill the slots, not more
    assert peaks["both"] > 0  # and the two kinds did share them


def test_a_timeout_cancels_the_task_and_fails_the_step_as_timeout(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    wf, started, cancelled = async_sleeper("async_timeout", timeout=0.3, max_attempts=1)
    seen: list[errors.StepFailed] = []
    start(workers, wf, dsn, on_error=seen.append)
    t0 = time.monotonic()
    run_id = client.submit(wf)
    run = wait_for(lambda r=run_id: terminal(client, r), what="run to finish")
    assert time.monotonic() - t0 < 5
    assert cancelled == ["timeout"]  # the task itself was cancelled
    assert (run.state, run.error_kind) == ("failed", "timeout")
    s = step_of(client, run_id, "job")
    assert (s.state, s.error_kind, s.attempt) == ("discarded", "timeout", 1)
    assert s.error is not None and "timed out" in s.error
    wait_for(lambda: seen, what="error hook")
    assert isinstance(seen[0], errors.StepTimedOut)


def test_a_timed_out_async_step_is_retried(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("async_retry")

    @wf.step(timeout=0.3, max_attempts=2)
    async def job(ctx: StepContext) -> Any:
        if ctx.attempt == 1:
            await ctx.asleep(30)
        return ctx.attempt

    start(workers, wf, dsn, backoff=lambda attempt: 0)
    run_id = client.submit(wf)
    run = wait_for(lambda r=run_id: terminal(client, r), what="run to finish")
    assert (run.state, run.output) == ("completed", {"job": 2})


def test_permanent_in_an_async_handler_discards_at_once(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("async_perm", max_attempts=5)

    @wf.step()
    async def validate(ctx: StepContext) -> Any:
        await asyncio.sleep(0)
        raise Permanent("missing email")

    seen: list[errors.StepFailed] = []
    start(workers, wf, dsn, on_error=seen.append)
    run_id = client.submit(wf)
    run = wait_for(lambda r=run_id: terminal(client, r), what="run to finish")
    assert (run.state, run.error_kind, run.error) == ("failed", "permanent", "missing email")
    assert step_of(client, run_id, "validate").attempt == 1
    wait_for(lambda: seen, what="error hook")
    assert (seen[0].node, seen[0].error_kind) == ("validate", "permanent")


def test_errors_and_bad_output_of_async_handlers_are_failures(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    raises, odd = Workflow("async_raises", max_attempts=1), Workflow("async_odd", max_attempts=1)

    @raises.step()
    async def boom(ctx: StepContext) -> Any:
        await asyncio.sleep(0)
        raise ValueError("upstream said no")

    @odd.step()
    async def unserialisable(ctx: StepContext) -> Any:
        return object()

    start(workers, App(raises, odd), dsn)
    r1, r2 = client.submit(raises), client.submit(odd)
    run1 = wait_for(lambda: terminal(client, r1), what="run to finish")
    run2 = wait_for(lambda: terminal(client, r2), what="run to finish")
    assert (run1.state, run1.error_kind) == ("failed", "error")
    assert run1.error is not None and "Traceback" in run1.error and "ValueError: upstream said no" in run1.error
    assert (run2.state, run2.error_kind) == ("failed", "permanent")
    assert run2.error is not None and "not JSON" in run2.error


def test_cancelling_a_run_cancels_the_task_and_nothing_is_a_panic(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    wf, started, cancelled = async_sleeper("async_cancel")
    reported: list[Any] = []
    w = start(workers, wf, dsn, lease_ttl=30.0)
    reporter = w._shards[0].reporter
    assert reporter is not None
    put = reporter.put
    def keep_and_put(outcome: Outcome) -> None:
        reported.append(outcome)
        put(outcome)

    reporter.put = keep_and_put  # type: ignore[method-assign]
    run_id = client.submit(wf)
    wait_for(started.is_set, what="handler to start")
    t0 = time.monotonic()
    assert client.cancel(run_id, "operator")
    wait_for(lambda: cancelled, timeout=3, what="task cancelled")
    assert time.monotonic() - t0 < 2
    assert cancelled == ["run cancelled"]
    wait_for(lambda: w.in_flight == 0 and not w._active, what="the handler to end")
    # Not reported at all: renew refused the lease (the worker asked when the
    # cancel was announced), so the outcome is not this execution's to report.
    # The step keeps the engine's own verdict, never a panic nor a failed attempt.
    assert reported == []
    s = step_of(client, run_id, "job")
    assert (s.state, s.error_kind) == ("cancelled", "cancelled")
    assert client.get_run(run_id).state == "cancelled"


def test_a_lost_lease_cancels_the_task_and_its_step_runs_again_unharmed(
    dsn: str, conn: Any, client: Client, workers: list[Worker]
) -> None:
    wf = Workflow("async_reclaimed")
    first = threading.Event()
    reasons: list[str | None] = []

    @wf.step()
    async def job(ctx: StepContext) -> Any:
        if not first.is_set():
            first.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                reasons.append(ctx.cancel_reason)
                raise
        return "fresh"

    start(workers, wf, dsn, lease_ttl=1.5, concurrency=2)
    run_id = client.submit(wf)
    wait_for(first.is_set, what="handler to start")
    assert expire_and_reclaim(conn) == 1  # past the lease on the engine's clock; another client's tick
    run = wait_for(lambda r=run_id: terminal(client, r), what="run to finish")
    wait_for(lambda: reasons, what="the first task to be cancelled")
    assert reasons == ["lease lost"]
    assert run.output == {"job": "fresh"}
    s = step_of(client, run_id, "job")
    assert (s.attempt, s.reclaims, s.error_kind) == (1, 1, None)  # nothing of the first execution was taken


def test_shutdown_hands_back_the_lease_of_an_async_step_it_cancels(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    # SPEC 18: not a failed attempt; the lease goes back at once (release), so
    # another worker runs the same attempt without waiting for it to expire.
    wf, started, cancelled = async_sleeper("async_shutdown")
    w = start(workers, wf, dsn, lease_ttl=30.0, shutdown_grace=0.2)
    run_id = client.submit(wf)
    wait_for(started.is_set, what="handler to start")
    w.stop(timeout=10)
    assert cancelled == ["shutdown"]
    s = step_of(client, run_id, "job")
    assert (s.state, s.attempt, s.reclaims, s.error, s.error_kind, s.lease_owner) == (
        "available", 1, 0, None, None, None)


# -- the harness --------------------------------------------------------------


def test_the_harness_runs_async_steps_on_one_loop(dsn: str) -> None:
    wf = Workflow("harness_async")
    loops: list[int] = []

    @wf.step()
    async def a(ctx: StepContext) -> Any:
        loops.append(id(asyncio.get_running_loop()))
        await ctx.asleep(0)
        return ctx.input["n"] + 1

    @wf.step(deps=[a])
    def b(ctx: StepContext) -> Any:
        return ctx.deps["a"] * 10

    @wf.step(deps=[b])
    async def c(ctx: StepContext) -> Any:
        loops.append(id(asyncio.get_running_loop()))
        return ctx.deps["b"] + 1

    with Env(dsn, wf) as env:
        run = env.run_until_complete(env.submit(wf, {"n": 1}))
    assert (run.state, run.output) == ("completed", {"c": 21})
    assert len(loops) == 2 and len(set(loops)) == 1


def test_the_harness_times_out_and_discards_async_steps(dsn: str) -> None:
    slow, _, cancelled = async_sleeper("harness_async_timeout", timeout=0.2, max_attempts=1)
    perm = Workflow("harness_async_perm", max_attempts=3)

    @perm.step()
    async def refuse(ctx: StepContext) -> Any:
        raise Permanent("no")

    with Env(dsn, App(slow, perm)) as env:
        r1, r2 = env.submit(slow), env.submit(perm)
        t0 = time.monotonic()
        run1 = env.run_until_complete(r1)
        assert time.monotonic() - t0 < 5
        run2 = env.run_until_complete(r2)
    assert (run1.state, run1.error_kind) == ("failed", "timeout")
    assert cancelled == ["timeout"]
    assert (run2.state, run2.error_kind, run2.error) == ("failed", "permanent", "no")


def test_a_plain_handler_returning_a_coroutine_says_to_declare_it_async(dsn: str) -> None:
    wf = Workflow("forgot_async", max_attempts=1)

    async def work() -> int:
        return 1

    @wf.step()
    def job(ctx: StepContext) -> Any:
        return work()

    with Env(dsn, wf) as env:
        run = env.run_until_complete(env.submit(wf))
    assert (run.state, run.error_kind) == ("failed", "permanent")
    assert run.error is not None and "async def" in run.error


# -- the pieces ---------------------------------------------------------------


def _context() -> StepContext:
    return StepContext(
        step_id=1, run_id=__import__("uuid").uuid4(), workflow="w", node="n", handler="n",
        attempt=1, max_attempts=1, lease_generation=1, input=None, deps=None,
    )


def test_asleep_and_wait_cancelled_wake_on_cancellation() -> None:
    ctx = _context()

    async def main() -> tuple[str | None, float]:
        threading.Timer(0.1, ctx.cancel, ("lease lost",)).start()
        t0 = time.monotonic()
        reason = await ctx.wait_cancelled()
        return reason, time.monotonic() - t0

    reason, waited = asyncio.run(main())
    assert reason == "lease lost" and waited < 2

    ctx = _context()

    async def sleeper() -> None:
        await ctx.asleep(0.01)  # not cancelled: just sleeps
        threading.Timer(0.1, ctx.cancel, ("timeout",)).start()
        await ctx.asleep(30)

    with pytest.raises(Cancelled) as info:
        asyncio.run(asyncio.wait_for(sleeper(), 5))
    assert info.value.reason == "timeout"
    assert not ctx._callbacks  # both waits took their callbacks back


def test_the_cancelled_event_is_set_whether_it_was_made_before_or_after_the_cancel() -> None:
    # ctx.cancelled is made on first use; a cancel before or after it sets it.
    early, late = _context(), _context()
    event = early.cancelled
    assert not event.is_set()
    assert early.cancel("timeout") and event.is_set() and early.cancelled is event
    assert late.cancel("lease lost") and not late.cancel("again")
    assert late.cancelled.is_set() and late.cancelled.wait(0) and late.cancel_reason == "lease lost"
    with pytest.raises(Cancelled):
        late.check_cancelled()
    with pytest.raises(Cancelled):
        late.sleep(5)
    fresh = _context()
    fresh.check_cancelled()  # not cancelled: returns
    threading.Timer(0.05, fresh.cancel, ("shutdown",)).start()
    with pytest.raises(Cancelled):
        fresh.sleep(5)  # woken by a cancel from another thread


def test_is_async_handler() -> None:
    import functools

    async def coro(ctx: Any, extra: int = 0) -> None: ...

    class Callable_:
        async def __call__(self, ctx: Any) -> None: ...

    assert is_async_handler(coro)
    assert is_async_handler(functools.partial(coro, extra=1))
    assert is_async_handler(Callable_())
    assert not is_async_handler(lambda ctx: None)
    assert not is_async_handler(print)


def test_the_event_loop_cancels_what_runs_at_close() -> None:
    loop = EventLoop()
    started = threading.Event()

    async def forever() -> None:
        started.set()
        await asyncio.sleep(60)

    future = loop.submit(forever())
    assert started.wait(5)
    assert loop.close(timeout=1.0) == 0
    assert future.cancelled()
    with pytest.raises(RuntimeError):
        loop.submit(forever())
