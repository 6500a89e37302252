"""The conformance kit's workflows and the Python worker's handlers for them (docs/conformance.md).

``cyclone conformance`` defines :data:`WORKFLOWS` in its scratch database and judges a worker that serves
these handlers; this app is how the Python worker takes the kit::

    cyclone conformance -- cyclone worker --app cyclone_py.conformance_app:app \\
        --concurrency 2 --lease-ttl 2 --poll-interval 0.2 --shutdown-grace 1

The handlers do what the kit's contract says, and nothing a worker in another language could not: each
reads its input, its attempt and its cancellation, no more.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cyclone_py.context import StepContext
from cyclone_py.errors import Permanent, Snooze
from cyclone_py.workflow import App, Workflow

__all__ = ["WORKFLOWS", "app"]

#: The longest a ``hang`` handler waits to be cancelled.
HANG_SECONDS = 60.0


def echo(ctx: StepContext) -> Any:
    return {"input": ctx.input, "deps": ctx.deps, "attempt": ctx.attempt, "item": ctx.item,
            "item_index": ctx.item_index}


def snooze(ctx: StepContext) -> Any:
    """Snoozes until the input's ``until`` (an ISO 8601 time on the worker's clock), then completes."""
    left = (datetime.fromisoformat(ctx.input["until"]) - datetime.now(UTC)).total_seconds()
    if left > 0:
        raise Snooze(left)
    return {"attempt": ctx.attempt}


def flaky(ctx: StepContext) -> Any:
    if ctx.attempt <= int(ctx.input.get("fail_times", 0)):
        raise RuntimeError(f"flaky: attempt {ctx.attempt} fails by design")
    return {"attempt": ctx.attempt}


def permanent(ctx: StepContext) -> Any:
    raise Permanent("permanent by design")


def sleep(ctx: StepContext) -> Any:
    slow = ctx.input.get("slow_attempts")
    if slow is None or ctx.attempt <= int(slow):
        ctx.sleep(float(ctx.input.get("seconds", 0)))  # raises Cancelled when the step is cancelled
    return {"attempt": ctx.attempt}


def hang(ctx: StepContext) -> Any:
    ctx.sleep(HANG_SECONDS)
    return {"ignored": True}


def _workflows() -> list[Workflow]:
    echo_wf = Workflow("conformance_echo")
    echo_wf.step(name="first", handler="echo")(echo)
    echo_wf.step(name="second", handler="echo", deps=["first"])(echo)

    flaky_wf = Workflow("conformance_flaky", max_attempts=5)
    flaky_wf.step(name="flaky", handler="flaky")(flaky)

    permanent_wf = Workflow("conformance_permanent", max_attempts=5)
    permanent_wf.step(name="doomed", handler="permanent")(permanent)

    sleep_wf = Workflow("conformance_sleep", max_attempts=3)
    sleep_wf.step(name="nap", handler="sleep")(sleep)

    timeout_wf = Workflow("conformance_timeout", max_attempts=2)
    timeout_wf.step(name="nap", handler="sleep", timeout="1 second")(sleep)

    hang_wf = Workflow("conformance_hang", max_attempts=1)
    hang_wf.step(name="hang", handler="hang")(hang)

    signal_wf = Workflow("conformance_signal")
    signal_wf.wait("approval", signal="approve")
    signal_wf.step(name="after", handler="echo", deps=["approval"])(echo)

    map_wf = Workflow("conformance_map")
    map_wf.map(name="each", handler="echo", over="input.items")(echo)

    snooze_wf = Workflow("conformance_snooze", max_attempts=1)
    snooze_wf.step(name="later", handler="snooze")(snooze)
    return [echo_wf, flaky_wf, permanent_wf, sleep_wf, timeout_wf, hang_wf, signal_wf, map_wf, snooze_wf]


app = App(*_workflows())

#: The kit's workflows, as ``cyclone.define_workflow`` takes them: name -> definition.
WORKFLOWS: dict[str, dict[str, Any]] = dict(app.definitions())
