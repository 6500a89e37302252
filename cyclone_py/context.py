"""The handler's view of one execution: :class:`StepContext`.

A handler gets one ``StepContext`` per execution: the step's identity, its
input and its dependencies' outputs, and the ``cancelled`` event the runtime
sets when the step must stop (see :meth:`StepContext.cancel`). An ``async
def`` handler awaits :meth:`StepContext.asleep` or
:meth:`StepContext.wait_cancelled` instead of blocking;
:meth:`StepContext.progress` hands a value to the sink the runtime gave it.
Plain data and a lock: nothing here talks to the database or starts a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any
from uuid import UUID

from cyclone_py.durations import Duration, to_seconds
from cyclone_py.errors import Cancelled

__all__ = ["StepContext"]


class StepContext:
    """What a handler sees of the execution it runs.

    ``cancelled`` is set when the step must stop: its lease was lost (renew
    returned false), its run was cancelled or failed by its deadline, its
    timeout passed, or the worker is shutting down. Long handlers should call
    :meth:`check_cancelled` or use :meth:`sleep` (``async def`` handlers:
    :meth:`asleep`, :meth:`wait_cancelled`; their task is cancelled too).
    """

    def __init__(
        self,
        *,
        step_id: int,
        run_id: UUID,
        workflow: str,
        node: str,
        handler: str,
        attempt: int,
        max_attempts: int,
        lease_generation: int,
        input: Any,
        deps: Mapping[str, Any] | None,
        timeout: timedelta | None = None,
        worker: str | None = None,
        progress: Callable[[Any], object] | None = None,
        item: Any = None,
        item_index: int | None = None,
    ) -> None:
        self.step_id = step_id
        self.run_id = run_id
        self.workflow = workflow
        self.node = node
        self.handler = handler
        self.attempt = attempt
        self.max_attempts = max_attempts
        self.lease_generation = lease_generation
        self.input = input
        self.deps: Mapping[str, Any] = dict(deps or {})
        self.timeout = timeout
        self.worker = worker
        #: A map item's element of its list and its position from 0 (SPEC 16); None for any other step.
        self.item = item
        self.item_index = item_index
        self._progress = progress
        self.cancel_reason: str | None = None
        self._is_cancelled = False
        # Made on first use: most handlers never look at it, and an Event (a
        # Condition and its lock) per execution was a tenth of the worker's
        # time on a drain of no-op steps.
        self._cancelled: threading.Event | None = None
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        return (
            f"StepContext(workflow={self.workflow!r}, node={self.node!r}, step_id={self.step_id}, "
            f"run_id={self.run_id}, attempt={self.attempt}/{self.max_attempts})"
        )

    @property
    def cancelled(self) -> threading.Event:
        """The event set when the step must stop (``ctx.cancelled.wait(5)``)."""
        event = self._cancelled
        if event is None:
            with self._lock:
                if self._cancelled is None:
                    self._cancelled = threading.Event()
                    if self._is_cancelled:
                        self._cancelled.set()
                event = self._cancelled
        return event

    @property
    def last_attempt(self) -> bool:
        """True when a failure of this execution discards the step."""
        return self.attempt >= self.max_attempts

    def cancel(self, reason: str) -> bool:
        """Ask the handler to stop (the runtime calls this); True the first time.

        Runs the :meth:`on_cancel` callbacks, in the caller's thread."""
        with self._lock:
            if self._is_cancelled:
                return False
            self.cancel_reason = reason
            self._is_cancelled = True
            if self._cancelled is not None:
                self._cancelled.set()
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn()
        return True

    def on_cancel(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn()`` once when the step is cancelled (at once if it already
        is); returns a function that takes it back. The runtime uses it to
        cancel an ``async def`` handler's task; ``fn`` must be quick and must
        not raise."""
        with self._lock:
            if not self._is_cancelled:
                self._callbacks.append(fn)
                return lambda: self._forget(fn)
        fn()
        return lambda: None

    def _forget(self, fn: Callable[[], None]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._callbacks.remove(fn)

    def progress(self, value: Any) -> None:
        """Report the step's progress: any JSON value (``0.4``, ``{"done": 40,
        "total": 100}``), kept as the step's latest ``progress`` (SPEC 16).

        Cheap to call in a tight loop: the worker sends at most a few calls a
        second, always the newest value, and the value pending when the handler
        ends is sent before its result. Raises ``TypeError``/``ValueError`` for
        a value JSON cannot hold. A context made outside a worker or the
        harness keeps nothing."""
        json.dumps(value, allow_nan=False)
        if self._progress is not None:
            self._progress(value)

    def check_cancelled(self) -> None:
        """Raise :class:`~cyclone_py.errors.Cancelled` if the step was cancelled."""
        if self._is_cancelled:
            raise Cancelled(reason=self.cancel_reason)

    def sleep(self, seconds: Duration) -> None:
        """Sleep ``seconds`` (or a timedelta), waking at once to raise
        :class:`~cyclone_py.errors.Cancelled` if the step is cancelled meanwhile."""
        if self.cancelled.wait(max(0.0, to_seconds(seconds))):
            raise Cancelled(reason=self.cancel_reason)

    async def wait_cancelled(self) -> str | None:
        """Wait (in an ``async def`` handler) until the step is cancelled;
        returns the reason. Useful as one branch of ``asyncio.wait``."""
        loop = asyncio.get_running_loop()
        woken = loop.create_future()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                loop.call_soon_threadsafe(_resolve, woken)

        forget = self.on_cancel(wake)
        try:
            await woken
        finally:
            forget()
        return self.cancel_reason

    async def asleep(self, seconds: Duration) -> None:
        """:meth:`sleep` for ``async def`` handlers: await ``seconds`` (or a
        timedelta), raising :class:`~cyclone_py.errors.Cancelled` as soon as the
        step is cancelled. (The runtime also cancels the handler's task, so
        the ``await`` usually ends in ``asyncio.CancelledError`` first.)"""
        self.check_cancelled()
        try:
            await asyncio.wait_for(self.wait_cancelled(), max(0.0, to_seconds(seconds)))
        except TimeoutError:
            return
        raise Cancelled(reason=self.cancel_reason)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
