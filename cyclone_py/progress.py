"""A running step's progress, throttled: ``ctx.progress`` to ``cyclone.progress``.

A handler may call ``ctx.progress(value)`` in a tight loop. :class:`ProgressThrottle`
keeps each step's newest value and sends at most one ``cyclone.progress`` call per
step every ``interval`` seconds (four a second by default) from a thread of its own,
so neither a handler thread nor the event loop waits for the database. The value
still pending when the handler ends is sent before its result: the worker's
reporter calls :meth:`ProgressThrottle.flush` first, so the last value always
arrives (the engine refuses progress once the step is no longer running).
Sending is best effort: a refused or failed call is logged, never the step's
failure.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cyclone_py import errors
from cyclone_py.client import ClaimedStep

__all__ = ["INTERVAL", "ProgressThrottle"]

logger = logging.getLogger("cyclone_py.worker")

#: Seconds between two progress calls of one step.
INTERVAL = 0.25


@dataclass
class _Entry:
    step: ClaimedStep
    value: Any = None
    pending: bool = False
    next_at: float = 0.0  # monotonic time before which no call for this step is sent
    # Held while this step's value is sent: a flush waits for a send in flight, so values arrive in order.
    sending: threading.Lock = field(default_factory=threading.Lock)


class ProgressThrottle:
    """Per step, the newest ``ctx.progress`` value, sent at most every ``interval`` seconds.

    ``send(step, value)`` makes the call (``Client.progress``); ``extra`` is put
    on every log line (the database, when the worker serves several). The
    sending thread starts with the first value and stops at :meth:`close`.
    """

    def __init__(
        self,
        send: Callable[[ClaimedStep, Any], object],
        *,
        interval: float = INTERVAL,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        self._send_call = send
        self.interval = interval
        self._extra = dict(extra or {})
        self._cond = threading.Condition()
        self._entries: dict[int, _Entry] = {}
        self._thread: threading.Thread | None = None
        self._closed = False

    def sink(self, step: ClaimedStep) -> Callable[[Any], None]:
        """What ``step``'s context calls with each value (never blocks on the database)."""
        entry = _Entry(step)
        with self._cond:
            self._entries[step.step_id] = entry

        def put(value: Any) -> None:
            with self._cond:
                if self._entries.get(step.step_id) is not entry:
                    return  # the step has ended: its result is reported already
                entry.value = value
                entry.pending = True
                if self._thread is None and not self._closed:
                    self._thread = threading.Thread(target=self._run, name="cyclone-progress", daemon=True)
                    self._thread.start()
                self._cond.notify()

        return put

    def flush(self, step_id: int) -> None:
        """The step has ended: send its pending value now (in the caller's
        thread, after a send in flight) and forget it."""
        with self._cond:
            entry = self._entries.pop(step_id, None)
        if entry is not None:
            self._send(entry)

    def forget(self, step_id: int) -> None:
        """The step has ended without a result to report: drop its pending value."""
        with self._cond:
            self._entries.pop(step_id, None)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(5.0)

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._closed:
                        return
                    now = time.monotonic()
                    pending = [e for e in self._entries.values() if e.pending]
                    due = [e for e in pending if e.next_at <= now]
                    if due:
                        break
                    self._cond.wait(min((e.next_at - now for e in pending), default=None))
            for entry in due:
                self._send(entry)

    def _send(self, entry: _Entry) -> None:
        with entry.sending:
            with self._cond:
                if not entry.pending:
                    return
                value, entry.pending = entry.value, False
                entry.next_at = time.monotonic() + self.interval
            step = entry.step
            try:
                if not self._send_call(step, value):
                    logger.debug("progress refused: the step is no longer this worker's",
                                 extra={"step_id": step.step_id, "run_id": str(step.run_id), **self._extra})
            except Exception as exc:  # best effort: never the step's failure
                # A database that is down is the reporter's and the heartbeat's to report, once; a value the
                # engine refuses (over 64 KiB) is the handler's bug, said each time.
                level = logging.DEBUG if isinstance(exc, errors.DatabaseUnavailable) else logging.WARNING
                logger.log(level, "progress not sent: %s", exc,
                           extra={"step_id": step.step_id, "run_id": str(step.run_id), "node": step.node,
                                  **self._extra})
