"""SPEC 16 in Python: ``raise Snooze(delay)``, ``ctx.progress(value)`` (throttled in the worker) and run
priority, through the harness and a real worker."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from helpers import start, step_of, terminal, wait_for

from cyclone_py import Snooze, Worker, Workflow
from cyclone_py.client import Client
from cyclone_py.context import StepContext
from cyclone_py.progress import ProgressThrottle
from cyclone_py.testing import Env


def snoozer(times: int = 1, delay: Any = timedelta(minutes=5)) -> Workflow:
    """A one-step workflow whose handler snoozes ``times`` times, then returns its attempt."""
    wf = Workflow("snoozy")
    seen: list[int] = []

    @wf.step()
    def wait_for_it(ctx: StepContext) -> Any:
        seen.append(ctx.attempt)
        if len(seen) <= times:
            raise Snooze(delay)
        return {"attempts": seen}

    return wf


def test_snooze_in_the_harness_charges_no_attempt(dsn: str) -> None:
    with Env(dsn, snoozer(times=2)) as env:
        run_id = env.submit("snoozy")
        env.run_once()
        step = env.client.steps(run_id)[0]
        assert (step.state, step.snoozes, step.attempt) == ("available", 1, 1)
        assert env.run_once() is None, "not due before its delay"
        run = env.run_until_complete(run_id, advance=True)
        assert run.state == "completed"
        assert run.output == {"wait_for_it": {"attempts": [1, 1, 1]}}, "every execution is attempt 1"
        step = env.client.steps(run_id)[0]
        assert (step.snoozes, step.attempt, step.error) == (2, 1, None)
        assert env.client.step_errors(run_id) == []


def test_a_snooze_beyond_365_days_is_a_failed_attempt_that_says_so(dsn: str) -> None:
    with Env(dsn, snoozer(times=1, delay=timedelta(days=400))) as env:
        run_id = env.submit("snoozy")
        env.run_once()
        step = env.client.steps(run_id)[0]
        assert step.snoozes == 0
        assert step.error is not None and "between 0 and 365 days" in step.error


def test_a_worker_reports_a_snooze(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = snoozer(times=1, delay=0.2)
    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf)
    start(workers, wf, dsn)
    run = wait_for(lambda: terminal(client, run_id), what="the snoozed run to finish")
    assert run.state == "completed"
    step = step_of(client, run_id, "wait_for_it")
    assert (step.snoozes, step.attempt) == (1, 1)


def test_progress_in_the_harness_is_kept_on_the_step(dsn: str) -> None:
    wf = Workflow("counting")

    @wf.step()
    def count(ctx: StepContext) -> Any:
        for i in range(3):
            ctx.progress({"done": i + 1, "total": 3})
        return "ok"

    with Env(dsn, wf) as env:
        run_id = env.submit("counting")
        env.run_until_complete(run_id)
        step = env.client.steps(run_id)[0]
        assert step.progress == {"done": 3, "total": 3}
        assert step.progress_at is not None


def test_progress_that_json_cannot_hold_raises_in_the_handler() -> None:
    ctx = StepContext(step_id=1, run_id=__import__("uuid").uuid4(), workflow="w", node="n", handler="n", attempt=1,
                      max_attempts=1, lease_generation=1, input={}, deps={})
    with pytest.raises(TypeError):
        ctx.progress(object())
    with pytest.raises(ValueError):
        ctx.progress(float("nan"))
    ctx.progress(0.5)  # no sink: kept nowhere, no error


def test_a_worker_throttles_progress_and_always_sends_the_last_value(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    wf = Workflow("busy")
    calls = 20_000

    @wf.step()
    def spin(ctx: StepContext) -> Any:
        end = time.monotonic() + 1.0
        i = 0
        while i < calls - 1 or time.monotonic() < end:
            ctx.progress(i)
            i += 1
            if i >= calls:
                time.sleep(0.01)
        ctx.progress("last")
        return i

    client.define_workflow(wf.name, wf.definition())
    received: list[dict[str, Any]] = []
    listening = threading.Event()
    done = threading.Event()

    def listen() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("LISTEN cyclone_progress")
            listening.set()
            while not done.is_set():
                for note in conn.notifies(timeout=0.1):
                    received.append(json.loads(note.payload))

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert listening.wait(5)
    run_id = client.submit(wf)
    start(workers, wf, dsn)
    assert wait_for(lambda: terminal(client, run_id), what="the run to finish").state == "completed"
    step = step_of(client, run_id, "spin")
    assert step.progress == "last", "the value pending at the end is sent before the result"
    time.sleep(0.3)
    done.set()
    listener.join(5)
    ours = [r for r in received if r == {"run_id": str(run_id), "step_id": step.id}]
    # Over a second or more of a tight loop: about four a second plus the last, never thousands.
    assert 2 <= len(ours) <= 12, len(ours)


def _step_7(generation: int) -> Any:
    """A stand-in for the ClaimedStep of step 7's execution of that lease generation."""
    return type("Step", (), {"step_id": 7, "lease_generation": generation, "execution": (7, generation),
                             "run_id": "r", "node": "n"})()


def test_the_end_of_an_execution_leaves_the_next_execution_of_its_step_reporting() -> None:
    """A worker may claim a step again (after a reclaim) before the earlier execution's result is handled:
    ending that execution's progress leaves the new one's alone."""
    sent: list[tuple[int, Any]] = []

    def send(step: Any, value: Any) -> bool:
        sent.append((step.lease_generation, value))
        return True

    throttle = ProgressThrottle(send, interval=0.01)
    first = _step_7(1)
    second = _step_7(2)
    put_first, put_second = throttle.sink(first), throttle.sink(second)
    throttle.forget(first)
    put_first("late")
    put_second("half")
    throttle.flush(second)
    throttle.close()
    assert sent == [(2, "half")]


def test_the_throttle_sends_the_newest_value_at_most_every_interval() -> None:
    sent: list[tuple[int, Any, float]] = []

    def send(step: Any, value: Any) -> bool:
        sent.append((step.step_id, value, time.monotonic()))
        return True

    throttle = ProgressThrottle(send, interval=0.1)
    step = _step_7(1)
    put = throttle.sink(step)
    began = time.monotonic()
    while time.monotonic() - began < 0.5:
        put(time.monotonic())
    put("final")
    throttle.flush(step)
    throttle.close()
    values = [v for _, v, _ in sent]
    assert values[-1] == "final"
    assert len(values) <= 8, len(values)
    gaps = [b - a for (_, _, a), (_, _, b) in zip(sent[:-2], sent[1:-1], strict=True)]
    assert all(g >= 0.09 for g in gaps), gaps
    put("after the end")  # the step ended: dropped
    assert [v for _, v, _ in sent][-1] == "final"


def test_priority_orders_the_claims(dsn: str, client: Client) -> None:
    wf = Workflow("prio")

    @wf.step()
    def work(ctx: StepContext) -> Any:
        return None

    client.define_workflow(wf.name, wf.definition())
    low = client.submit(wf, priority=10)
    (batch,) = client.submit_many(wf, [{}], priority=-5)
    plain = client.submit(wf)
    assert client.get_run_row(low).priority == 10
    claimed = client.claim("w", None, 3)
    assert [c.run_id for c in claimed] == [batch, plain, low]


def test_an_async_handler_snoozes_and_reports_progress(dsn: str) -> None:
    wf = Workflow("async_snoozy")
    seen: list[int] = []

    @wf.step()
    async def poll(ctx: StepContext) -> Any:
        ctx.progress({"polls": len(seen) + 1})
        seen.append(ctx.attempt)
        if len(seen) == 1:
            raise Snooze(30)
        return "ready"

    with Env(dsn, wf) as env:
        run_id = env.submit("async_snoozy")
        run = env.run_until_complete(run_id, advance=True)
        step = env.client.steps(run_id)[0]
        assert (run.state, seen, step.snoozes, step.progress) == ("completed", [1, 1], 1, {"polls": 2})
