"""Running one handler: what the worker and the test harness share.

:func:`make_context` turns a claimed step into the handler's
:class:`~cyclone_py.context.StepContext`; :func:`execute` runs the handler and
turns what it did into an :class:`Outcome` (a completion, or a failure with
its error kind, its text cut to :data:`MAX_ERROR_CHARS` and the retry delay
of the caller's ``backoff``; or a snooze, when the handler raised
:class:`~cyclone_py.errors.Snooze`). A step whose input or deps the client could not
decode (:class:`~cyclone_py.client.Undecodable`) is not run: its outcome is a
``permanent`` failure saying why. Reporting the outcome is the caller's: the
worker batches it (:mod:`cyclone_py.reporter`), the harness reports it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from cyclone_py import errors
from cyclone_py.client import ClaimedStep, DiscardedStep, Undecodable
from cyclone_py.context import StepContext
from cyclone_py.durations import to_timedelta
from cyclone_py.vocabulary import RETRYABLE_KINDS
from cyclone_py.workflow import App, Backoff, ErrorHook

__all__ = ["MAX_ERROR_CHARS", "Backoff", "ErrorHook", "Outcome", "execute", "execute_async", "failure", "make_context"]

# The worker's threads log as the worker (docs/python.md).
logger = logging.getLogger("cyclone_py.worker")

MAX_ERROR_CHARS = 32_000
# A NUL escape in JSON text (an odd number of backslashes before u0000).
_JSON_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
#: A handler's result as JSON text, NaN and infinities refused: ``json.dumps(..., allow_nan=False)`` builds an
#: encoder on every call (0.6 of its 1.6 us for a small result), this one is built once.
_to_json = json.JSONEncoder(allow_nan=False).encode


@dataclass(frozen=True)
class Outcome:
    """What an execution produced: a completion (``ok``) or a failure to report."""

    step: ClaimedStep
    ok: bool
    output_json: str | None = None
    error: str | None = None
    error_kind: str = "error"
    retry_in: timedelta | None = None
    cancel_reason: str | None = None
    #: a failure's span (a W3C traceparent), passed to ``fail`` for the next attempt's link
    span: str | None = None
    #: set when the handler raised :class:`~cyclone_py.errors.Snooze`: report ``snooze``, not ``fail``
    snooze: timedelta | None = None

    def discard(self) -> DiscardedStep:
        """This failure as the discard it became when ``fail`` returned ``discarded``."""
        step = self.step
        return DiscardedStep(
            step_id=step.step_id,
            run_id=step.run_id,
            node=step.node,
            workflow=step.workflow,
            error_kind=self.error_kind,
            error=self.error,
        )


def _truncate(text: str) -> str:
    if len(text) <= MAX_ERROR_CHARS:
        return text
    return text[: MAX_ERROR_CHARS // 2] + "\n...\n" + text[-MAX_ERROR_CHARS // 2 :]


def make_context(
    step: ClaimedStep, worker: str | None = None, progress: Callable[[Any], object] | None = None
) -> StepContext:
    """The handler's view of a claimed step; ``progress`` receives what it
    passes to ``ctx.progress``."""
    return StepContext(
        step_id=step.step_id,
        run_id=step.run_id,
        workflow=step.workflow,
        node=step.node,
        handler=step.handler,
        attempt=step.attempt,
        max_attempts=step.max_attempts,
        lease_generation=step.lease_generation,
        input=step.input,
        deps=step.deps if isinstance(step.deps, dict) else {},
        timeout=step.timeout,
        worker=worker,
        progress=progress,
        item=step.item,
        item_index=step.item_index,
    )


def _retry_in(backoff: Backoff | None, step: ClaimedStep, kind: str) -> timedelta | None:
    if backoff is None or kind not in RETRYABLE_KINDS:
        return None
    try:
        value = backoff(step.attempt)
    except Exception:
        logger.exception(
            "backoff function failed; using the engine's default",
            extra={"step_id": step.step_id, "run_id": str(step.run_id), "node": step.node,
                   "workflow": step.workflow, "attempt": step.attempt},
        )
        return None
    return to_timedelta(value)


def failure(
    step: ClaimedStep, error: str, kind: str, backoff: Backoff | None = None, cancel_reason: str | None = None
) -> Outcome:
    """A failed execution of ``step``: its error cut to size, the retry delay ``backoff`` asks for."""
    return Outcome(
        step=step,
        ok=False,
        error=_truncate(error),
        error_kind=kind,
        retry_in=_retry_in(backoff, step, kind),
        cancel_reason=cancel_reason,
    )


def execute(app: App, step: ClaimedStep, ctx: StepContext, backoff: Backoff | None = None) -> Outcome:
    """Run the (plain function) handler of ``step`` and turn what it did into an :class:`Outcome`.

    ``Permanent`` -> ``permanent``; any other exception -> ``error`` (the
    traceback is the error text), or ``timeout`` when the step's timeout fired
    first; a BaseException that is not an Exception -> ``panic``. A return
    value that JSON (or PostgreSQL's jsonb) cannot hold is ``permanent``: the
    same code would return it again on every attempt. A step whose input or
    deps could not be decoded is not run: ``permanent`` (:func:`_undecodable`).
    An ``async def`` handler is :func:`execute_async`'s.
    """
    unreadable = _undecodable(step, ctx, backoff)
    if unreadable is not None:
        return unreadable
    fn = app.lookup(step.workflow, step.handler)
    if fn is None:
        return _no_handler(step, ctx, backoff)
    try:
        result = fn(ctx)
    except BaseException as exc:
        return _raised(step, ctx, backoff, exc)
    return _returned(step, ctx, backoff, result)


async def execute_async(app: App, step: ClaimedStep, ctx: StepContext, backoff: Backoff | None = None) -> Outcome:
    """:func:`execute` for an ``async def`` handler, awaited on the caller's loop.

    Cancelling the step (``ctx.cancel``) cancels the task running this
    coroutine. The ``asyncio.CancelledError`` that ends the handler then
    becomes: ``timeout`` when its timeout fired; for any other reason (a lost
    lease, a cancelled run, shutdown) an ``error`` naming the reason, whose
    report the engine's compare-and-set refuses (the worker does not report a
    shutdown at all). Never a ``panic``.
    """
    unreadable = _undecodable(step, ctx, backoff)
    if unreadable is not None:
        return unreadable
    fn = app.lookup(step.workflow, step.handler)
    if fn is None:
        return _no_handler(step, ctx, backoff)
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None

    def cancel_task() -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the task is long gone
            loop.call_soon_threadsafe(task.cancel)

    forget = ctx.on_cancel(cancel_task)
    try:
        result = await fn(ctx)
    except asyncio.CancelledError:
        if ctx.cancel_reason is None:  # not ours: something the handler awaited was cancelled
            return failure(step, traceback.format_exc(), "error", backoff)
        if ctx.cancel_reason == "timeout":
            return failure(step, f"step timed out after {step.timeout}", "timeout", backoff, ctx.cancel_reason)
        return failure(step, f"step cancelled: {ctx.cancel_reason}", "error", backoff, ctx.cancel_reason)
    except BaseException as exc:
        return _raised(step, ctx, backoff, exc)
    finally:
        forget()
    return _returned(step, ctx, backoff, result)


def _undecodable(step: ClaimedStep, ctx: StepContext, backoff: Backoff | None) -> Outcome | None:
    """A ``permanent`` failure when the claim could not decode the step's
    input or its dependencies' outputs (``client.load_json``): no attempt
    would decode them, so the handler is not run, and the failure is reported
    through ``fail`` like any other. None when both were decoded."""
    for what, value in (("input", step.input), ("dependencies' outputs (deps)", step.deps), ("item", step.item)):
        if type(value) is Undecodable:
            return failure(step, f"step {step.node!r} was not run: its {what} cannot be decoded: it is {value}",
                           "permanent", backoff, ctx.cancel_reason)
    return None


def _no_handler(step: ClaimedStep, ctx: StepContext, backoff: Backoff | None) -> Outcome:
    return failure(
        step,
        f"no handler {step.handler!r} for workflow {step.workflow!r} in this worker "
        "(is its code older than the workflow's definition?)",
        "panic",
        backoff,
        ctx.cancel_reason,
    )


def _raised(step: ClaimedStep, ctx: StepContext, backoff: Backoff | None, exc: BaseException) -> Outcome:
    """The outcome of a handler that raised ``exc`` (called while it is handled)."""
    if isinstance(exc, errors.Snooze) and ctx.cancel_reason is None:
        return _snoozed(step, ctx, backoff, exc)
    if isinstance(exc, errors.Permanent):
        kind, error = "permanent", str(exc) or type(exc).__name__
    elif isinstance(exc, Exception) and ctx.cancel_reason == "timeout":
        kind, error = "timeout", f"step timed out after {step.timeout} ({type(exc).__name__}: {exc})"
    elif isinstance(exc, Exception):
        kind, error = "error", traceback.format_exc()
    else:  # SystemExit, KeyboardInterrupt, GeneratorExit raised by a handler
        kind, error = "panic", traceback.format_exc()
    return failure(step, error, kind, backoff, ctx.cancel_reason)


#: The longest snooze the engine takes (cyclone.snooze: 0 to 365 days).
MAX_SNOOZE = timedelta(days=365)


def _snoozed(step: ClaimedStep, ctx: StepContext, backoff: Backoff | None, exc: errors.Snooze) -> Outcome:
    """A handler that raised ``Snooze(delay)``: the step goes back for later (SPEC 16). A delay the
    engine would refuse is the handler's bug, reported as a failed attempt that says so (the engine's
    refusal would leave the step to its lease)."""
    try:
        delay = to_timedelta(exc.delay)
    except (TypeError, ValueError, OverflowError):
        delay = None
    if delay is None or not timedelta(0) <= delay <= MAX_SNOOZE:
        return failure(step, f"Snooze({exc.delay!r}): the delay must be between 0 and 365 days", "error",
                       backoff, ctx.cancel_reason)
    return Outcome(step=step, ok=False, snooze=delay, cancel_reason=ctx.cancel_reason)


#: What most handlers return, none of it awaitable (``inspect.isawaitable`` is Python code).
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})


def _returned(step: ClaimedStep, ctx: StepContext, backoff: Backoff | None, result: Any) -> Outcome:
    """The outcome of a handler that returned ``result``."""
    if ctx.cancel_reason == "timeout":
        return failure(step, f"step timed out after {step.timeout}", "timeout", backoff, ctx.cancel_reason)
    if type(result) not in _PLAIN and inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()  # never awaited: no "coroutine was never awaited" warning
        return failure(
            step,
            f"handler returned an awaitable ({type(result).__name__}), which is not JSON: "
            "declare the handler with `async def` to have it awaited",
            "permanent",
            backoff,
            ctx.cancel_reason,
        )
    try:
        output_json = None if result is None else _to_json(result)
    except (TypeError, ValueError) as exc:
        return failure(
            step, f"handler returned a value that is not JSON: {exc}", "permanent", backoff, ctx.cancel_reason
        )
    if output_json is not None and _JSON_NUL.search(output_json):
        return failure(
            step,
            "handler returned a string with a NUL character (\\u0000), which jsonb cannot store",
            "permanent",
            backoff,
            ctx.cancel_reason,
        )
    return Outcome(step=step, ok=True, output_json=output_json, cancel_reason=ctx.cancel_reason)
