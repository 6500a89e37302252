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
from typing import Any

from cyclone_py import errors
from cyclone_py.client import ClaimedStep

__all__ = ["INTERVAL", "ProgressThrottle"]

logger = logging.getLogger("cyclone_py.worker")

#: Seconds between two progress calls of one step.
INTERVAL = 0.25


class _Entry:
    """One running step's progress: its newest value, and whether it still has to be sent."""

    __slots__ = ("step", "value", "pending", "next_at", "ended", "_sending")

    def __init__(self, step: ClaimedStep) -> None:
        self.step = step
        self.value: Any = None
        self.pending = False
        self.next_at = 0.0  # monotonic time before which no call for this step is sent
        self.ended = False  # flushed or forgotten: a later value is dropped
        self._sending: threading.Lock | None = None

    @property
    def sending(self) -> threading.Lock:
        """Held while this step's value is sent: a flush waits for a send in flight, so values arrive in
        order. Made with the first value (under the throttle's condition), not for every step."""
        assert self._sending is not None
        return self._sending


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
        self._lock = threading.Lock()  # taken as itself where no one is notified (a Condition's `with` is Python code)
        self._cond = threading.Condition(self._lock)
        # By (step id, lease generation): one execution's, not the next one's of the same step, which
        # this worker may have claimed again (after a reclaim) before the earlier one's result was handled.
        self._sinks: dict[tuple[int, int], _Entry] = {}  # every running execution's
        self._entries: dict[tuple[int, int], _Entry] = {}  # those that reported a value: the sending thread's
        self._thread: threading.Thread | None = None
        self._closed = False

    def sink(self, step: ClaimedStep) -> Callable[[Any], None]:
        """What ``step``'s context calls with each value (never blocks on the database). Most steps
        report no progress: a step is known to the sending thread only from its first value, and until
        then costs an object and a dict entry, no lock."""
        entry = _Entry(step)
        key = step.execution
        self._sinks[key] = entry  # only flush and forget take it out; nothing iterates it

        def put(value: Any) -> None:
            with self._cond:
                if entry.ended:
                    return  # the step has ended: its result is reported already
                entry.value = value
                entry.pending = True
                if entry._sending is None:
                    entry._sending = threading.Lock()
                    self._entries[key] = entry
                if self._thread is None and not self._closed:
                    self._thread = threading.Thread(target=self._run, name="cyclone-progress", daemon=True)
                    self._thread.start()
                self._cond.notify()

        return put

    def flush(self, step: ClaimedStep) -> None:
        """The step has ended: send its pending value now (in the caller's
        thread, after a send in flight) and forget it."""
        entry = self._end(step)
        if entry is not None and entry._sending is not None:
            self._send(entry)

    def forget(self, step: ClaimedStep) -> None:
        """The step has ended without a result to report: drop its pending value."""
        self._end(step)

    def _end(self, step: ClaimedStep) -> _Entry | None:
        key = step.execution
        entry = self._sinks.pop(key, None)
        if entry is not None:
            with self._lock:
                entry.ended = True
                self._entries.pop(key, None)
        return entry

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
