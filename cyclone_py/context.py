"""The handler's view of one execution: :class:`StepContext`.

A handler gets one ``StepContext`` per execution: the step's identity, its
input and its dependencies' outputs, and the ``cancelled`` event the runtime
sets when the step must stop (see :meth:`StepContext.cancel`). Plain data and
a lock: nothing here talks to the database or starts a thread.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
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
    :meth:`check_cancelled` or use :meth:`sleep`.
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
        self.cancelled = threading.Event()
        self.cancel_reason: str | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"StepContext(workflow={self.workflow!r}, node={self.node!r}, step_id={self.step_id}, "
            f"run_id={self.run_id}, attempt={self.attempt}/{self.max_attempts})"
        )

    @property
    def last_attempt(self) -> bool:
        """True when a failure of this execution discards the step."""
        return self.attempt >= self.max_attempts

    def cancel(self, reason: str) -> bool:
        """Ask the handler to stop (the runtime calls this); True the first time."""
        with self._lock:
            if self.cancelled.is_set():
                return False
            self.cancel_reason = reason
            self.cancelled.set()
            return True

    def check_cancelled(self) -> None:
        """Raise :class:`~cyclone_py.errors.Cancelled` if the step was cancelled."""
        if self.cancelled.is_set():
            raise Cancelled(reason=self.cancel_reason)

    def sleep(self, seconds: Duration) -> None:
        """Sleep ``seconds`` (or a timedelta), waking at once to raise
        :class:`~cyclone_py.errors.Cancelled` if the step is cancelled meanwhile."""
        if self.cancelled.wait(max(0.0, to_seconds(seconds))):
            raise Cancelled(reason=self.cancel_reason)
