"""The worker's listener thread: ``LISTEN cyclone_wakeup`` and ``cyclone_cancel``.

On its own connection (:func:`cyclone_py.client.listen`), reconnecting with
a capped exponential delay. A ``cyclone_cancel`` payload (a run id) cancels
that run's handlers here; a ``cyclone_wakeup`` is claimed at once on the
listening connection (see :meth:`Listener._claim_on_wakeup`), for slots the
worker reserves, so the listener and the main loop together never claim
more than the worker has room for. With the worker's metrics on, it counts
its reconnects and times its claims (:mod:`cyclone_py.metrics`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from cyclone_py import errors
from cyclone_py.client import CANCEL_CHANNEL, WAKEUP_CHANNEL, ClaimedStep, ListenConnection, claim_on, listen
from cyclone_py.metrics import WorkerMetrics
from cyclone_py.runtime import DatabaseOutage, log_extra

__all__ = ["Listener"]

# The worker's threads log as the worker (docs/python.md).
logger = logging.getLogger("cyclone_py.worker")


class Listener(threading.Thread):
    """Listens until ``closing`` is set.

    The worker lends it: ``reserve()`` (hold the free slots for one claim;
    how many), ``start_steps(claimed, reserved)`` (start what was claimed
    and give the reservation back), ``wake()`` (ask the main loop to claim)
    and ``cancel_run(payload)``; and its ``metrics``, if on.
    ``extra``: fields on every log line (the database, when the worker serves several).
    """

    def __init__(
        self,
        dsn: str,
        worker: str,
        handlers: Sequence[str],
        workflows: Sequence[str],
        *,
        lease_ttl: float,
        max_backoff: float,
        closing: threading.Event,
        reserve: Callable[[], int],
        start_steps: Callable[[Sequence[ClaimedStep], int], None],
        wake: Callable[[], None],
        cancel_run: Callable[[str], object],
        outage: DatabaseOutage | None = None,
        metrics: WorkerMetrics | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(name="cyclone-listener", daemon=True)
        self.dsn = dsn
        self.worker = worker
        self.handlers = list(handlers)
        self.workflows = list(workflows)
        self.lease_ttl = lease_ttl
        self.max_backoff = max_backoff
        self._closing = closing
        self._reserve = reserve
        self._start_steps = start_steps
        self._wake = wake
        self._cancel_run = cancel_run
        self._metrics = metrics
        self._outage = outage or DatabaseOutage(worker)
        self._extra = dict(extra or {})  # on every log line: the database, when the worker serves several

    def _log_extra(self, **more: Any) -> dict[str, Any]:
        return log_extra(self.worker, **self._extra, **more)

    def run(self) -> None:
        delay = 0.1
        while not self._closing.is_set():
            try:
                with listen(self.dsn, (WAKEUP_CHANNEL, CANCEL_CHANNEL)) as conn:
                    delay = 0.1
                    self._wake()  # we may have missed some while (re)connecting
                    while not self._closing.is_set():
                        woken = False
                        for note in conn.notifies(timeout=0.5, stop_after=1):
                            if note.channel == CANCEL_CHANNEL:
                                self._cancel_run(note.payload)
                            elif note.channel == WAKEUP_CHANNEL:
                                woken = True
                        if woken:
                            self._claim_on_wakeup(conn)
            except errors.CycloneError as exc:  # listen() and claim_on() translate psycopg's errors
                if self._closing.is_set():
                    return
                if self._metrics is not None:
                    self._metrics.reconnects.labels("listener").inc()
                if isinstance(exc, errors.DatabaseUnavailable):
                    self._outage.failed("listen", exc, reconnect_in=delay)
                else:
                    logger.warning("listener failed (%s); reconnecting in %.1fs", exc, delay, extra=self._log_extra())
                self._closing.wait(delay)
                delay = min(delay * 2, self.max_backoff)

    def _claim_on_wakeup(self, conn: ListenConnection) -> None:
        """Claim at once, on the listener's own connection: its backend has
        just delivered the NOTIFY and is awake, where a pooled connection's
        backend (and the main loop's thread) would first have to be woken:
        0.2-0.5 ms of the pickup latency on a small VM. Without free slots,
        or when this claim is saturated, the main loop takes over."""
        free = self._reserve() if self.handlers else 0
        if free == 0:
            self._wake()
            return
        claimed: list[ClaimedStep] = []
        try:
            began = time.perf_counter()
            claimed = claim_on(conn, self.worker, self.handlers, free, timedelta(seconds=self.lease_ttl),
                               self.workflows)
            if self._metrics is not None:
                self._metrics.claim_seconds.observe(time.perf_counter() - began)
        except errors.DatabaseUnavailable:
            self._wake()
            raise
        except errors.CycloneError as exc:
            logger.error("claim failed (%s); the main loop retries", exc, extra=self._log_extra())
            self._wake()
        finally:
            self._start_steps(claimed, free)
        if len(claimed) == free:
            self._wake()
