"""The worker's listener thread: ``LISTEN cyclone_wakeup`` and ``cyclone_cancel``.

On its own connection (:func:`cyclone_py.client.listen`), reconnecting with
a capped exponential delay. A notification is a hint, never an order:
PostgreSQL lets every role that can connect NOTIFY any channel, with any
payload, so what a notification says is asked of the engine before anything
is done. The listener takes the notifications in bursts (the first one, then
whatever else has arrived by then) and acts once a burst:

- ``cyclone_wakeup``: one claim, on the listening connection (see
  :meth:`Listener._claim_on_wakeup`), for slots the worker reserves, so the
  listener and the main loop together never claim more than the worker has
  room for. A wake-up claim that leases nothing makes the listener wait
  :data:`WAKEUP_PAUSE` before it claims on a wake-up again; the wake-ups that
  arrive meanwhile are one claim at its end. So a flood of wake-ups costs at
  most ``1 / WAKEUP_PAUSE`` empty claims a second, and a wake-up that finds
  work is claimed at once.
- ``cyclone_cancel`` (payload: a run id): the runs named that the worker
  holds steps of are checked with the engine in one statement, ``renew_many``
  of their steps (:func:`cyclone_py.client.renew_on`), at most once
  every :data:`CHECK_PAUSE`; a handler is cancelled only when it refuses
  its lease (its run was cancelled or failed, or its step is no longer this
  execution's). A payload that is not a run id, or names a run the worker
  holds no step of, costs nothing but its parsing.

Nothing a notification carries can end the thread: an unexpected error is
logged and the listener reconnects. With the worker's metrics on, it counts
its reconnects, its renewals and times its claims (:mod:`cyclone_py.metrics`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import timedelta
from typing import Any
from uuid import UUID

from cyclone_py import errors
from cyclone_py.client import (
    CANCEL_CHANNEL,
    WAKEUP_CHANNEL,
    ClaimedStep,
    ListenConnection,
    claim_on,
    listen,
    renew_on,
)
from cyclone_py.metrics import WorkerMetrics
from cyclone_py.runtime import DatabaseOutage, log_extra

__all__ = ["CHECK_PAUSE", "WAKEUP_PAUSE", "Listener"]

# The worker's threads log as the worker (docs/python.md).
logger = logging.getLogger("cyclone_py.worker")

#: Seconds after a wake-up claim that leased nothing before the listener claims
#: on a wake-up again (the wake-ups meanwhile are one claim at its end): at
#: most 20 empty claims a second, whatever the rate of wake-ups.
WAKEUP_PAUSE = 0.05
#: Seconds after one check of the runs named on ``cyclone_cancel`` before the
#: next (the names that arrive meanwhile are checked together at its end).
CHECK_PAUSE = 0.05
#: Reads of the connection that make one burst at most, so that a flood
#: cannot keep the listener reading without ever acting.
BURST_READS = 64


class Listener(threading.Thread):
    """Listens until ``closing`` is set.

    The worker lends it: ``reserve()`` (hold the free slots for one claim;
    how many), ``start_steps(claimed, reserved)`` (start what was claimed
    and give the reservation back), ``wake()`` (ask the main loop to claim),
    ``holds(run_id)`` (whether a handler of that run is running or queued
    here), ``held_steps(run_ids)`` (those steps) and ``lost(steps)`` (the
    engine refused their leases: cancel their handlers); and its ``metrics``,
    if on. ``extra``: fields on every log line (the database, when the worker
    serves several).
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
        holds: Callable[[UUID], bool],
        held_steps: Callable[[Collection[UUID]], Sequence[ClaimedStep]],
        lost: Callable[[Sequence[ClaimedStep]], None],
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
        self._holds = holds
        self._held_steps = held_steps
        self._lost = lost
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
                    self._serve(conn)
            except errors.CycloneError as exc:  # listen(), claim_on() and renew_on() translate psycopg's errors
                if self._closing.is_set():
                    return
                if self._metrics is not None:
                    self._metrics.reconnects.labels("listener").inc()
                if isinstance(exc, errors.DatabaseUnavailable):
                    self._outage.failed("listen", exc, reconnect_in=delay)
                else:
                    logger.warning("listener failed (%s); reconnecting in %.1fs", exc, delay, extra=self._log_extra())
            except Exception:  # a bug, never a payload's doing: the worker must keep its listener
                if self._closing.is_set():
                    return
                logger.exception("listener failed; reconnecting in %.1fs", delay, extra=self._log_extra())
            self._closing.wait(delay)
            delay = min(delay * 2, self.max_backoff)

    def _serve(self, conn: ListenConnection) -> None:
        """Take bursts of notifications and act on each until closing."""
        wake = False
        runs: set[UUID] = set()
        claim_at = check_at = 0.0  # time.monotonic(): no wake-up claim, no check, before
        while not self._closing.is_set():
            due = [at for at, pending in ((claim_at, wake), (check_at, runs)) if pending]
            wait = 0.5 if not due else max(0.0, min(due) - time.monotonic())
            ignored = 0
            for reads in range(BURST_READS):
                got = False
                for note in conn.notifies(timeout=wait if reads == 0 else 0.0, stop_after=1 if reads == 0 else None):
                    got = True
                    if note.channel == WAKEUP_CHANNEL:
                        wake = True
                    elif note.channel == CANCEL_CHANNEL:
                        run_id = _run_id(note.payload)
                        if run_id is None:
                            ignored += 1
                        elif run_id not in runs and self._holds(run_id):
                            runs.add(run_id)
                if not got:
                    break
            if ignored:
                logger.debug("ignored %d cyclone_cancel payloads that are not run ids", ignored,
                             extra=self._log_extra())
            now = time.monotonic()
            if runs and now >= check_at:
                self._check(conn, runs)
                runs = set()
                check_at = time.monotonic() + CHECK_PAUSE
            if wake and now >= claim_at:
                wake = False
                if self._claim_on_wakeup(conn) == 0:
                    claim_at = time.monotonic() + WAKEUP_PAUSE

    def _check(self, conn: ListenConnection, runs: Collection[UUID]) -> None:
        """Ask the engine whether the steps this worker holds of ``runs`` are
        still its own (one renew_many), and have the handlers
        of those that are not cancelled."""
        steps = self._held_steps(runs)
        if not steps:
            return
        try:
            still = renew_on(conn, self.worker, [s.step_id for s in steps], [s.lease_generation for s in steps],
                             timedelta(seconds=self.lease_ttl))
        except errors.DatabaseUnavailable:
            raise  # reconnect; meanwhile the heartbeats renew (and find a lost lease) as always
        except errors.CycloneError as exc:
            logger.warning("checking the runs named on %s failed (%s); the heartbeats will tell",
                           CANCEL_CHANNEL, exc, extra=self._log_extra())
            return
        if self._metrics is not None:
            for s in steps:
                answer = still.get(s.step_id)
                if answer is not None:  # None: its row was held (its completion, a cancel); its heartbeat will tell
                    self._metrics.renewals.labels(s.workflow, s.node, "renewed" if answer else "refused").inc()
        lost = [s for s in steps if still.get(s.step_id) is False]
        if lost:
            self._lost(lost)

    def _claim_on_wakeup(self, conn: ListenConnection) -> int:
        """Claim at once, on the listener's own connection: its backend has
        just delivered the NOTIFY and is awake, where a pooled connection's
        backend (and the main loop's thread) would first have to be woken:
        0.2-0.5 ms of the pickup latency on a small VM. Without free slots,
        or when this claim is saturated, the main loop takes over. How many
        steps it leased; -1 when it did not claim (no free slot, or the claim
        failed)."""
        free = self._reserve() if self.handlers else 0
        if free == 0:
            self._wake()
            return -1
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
            return -1
        finally:
            self._start_steps(claimed, free)
        if len(claimed) == free:
            self._wake()
        return len(claimed)


def _run_id(payload: str) -> UUID | None:
    """The run id a ``cyclone_cancel`` payload names; None when it is not one
    (a payload is anyone's text, up to 8,000 bytes)."""
    if len(payload) > 45:  # the longest spelling UUID() reads: urn:uuid: and 36 characters
        return None
    try:
        return UUID(payload)
    except ValueError:
        return None
