"""The worker's machinery: the timer heap, the handler pool, the per-step bookkeeping.

:class:`Timers` is one thread with one heap for every step's heartbeat and
timeout; :class:`HandlerPool` is the fixed set of handler threads fed by one
queue per database, with the concurrency slots they share with the event
loop's handlers; :class:`Active` is what the worker knows of one leased step while
it runs. None of them talks to the database: :class:`cyclone_py.worker.Worker`
ties them to the client.
"""

from __future__ import annotations

import collections
import functools
import heapq
import itertools
import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cyclone_py.client import ClaimedStep
from cyclone_py.context import StepContext

__all__ = ["Active", "DatabaseOutage", "HandlerPool", "Timer", "Timers", "log_extra"]

# The worker's threads log as the worker (docs/python.md).
logger = logging.getLogger("cyclone_py.worker")


def log_extra(worker: str, step: ClaimedStep | None = None, **more: Any) -> dict[str, Any]:
    """The structured ``extra`` of a worker's log record: its name, the step's identity, ``more``."""
    extra: dict[str, Any] = {"worker": worker}
    if step is not None:
        extra.update(
            step_id=step.step_id,
            run_id=str(step.run_id),
            node=step.node,
            workflow=step.workflow,
            attempt=step.attempt,
        )
    extra.update(more)
    return extra


# -- losing the database --------------------------------------------------------


class DatabaseOutage:
    """What the worker's threads log when they lose the database: one warning
    when the first of them fails, the others' failures at debug level, and one
    info line when a call through the pool answers again (how long, how many
    failed calls). A restart or a failover is then two lines per worker, not
    one per thread and retry. The listener reports its failures here but does
    not end an outage: it has its own connection."""

    # An outage that ends and starts again within this many seconds is one
    # outage: a primary's connections do not all die at the same instant, so a
    # call on one still up can answer between the first failures.
    SETTLE = 5.0

    def __init__(self, worker: str, extra: Mapping[str, Any] | None = None) -> None:
        self.worker = worker
        self.extra = dict(extra or {})  # on every line: the database, when the worker serves several
        self._lock = threading.Lock()
        self._since: float | None = None
        self._failures = 0
        self._ended: tuple[float, float] | None = None  # (when the last outage ended, when it began)

    @property
    def ongoing(self) -> bool:
        return self._since is not None

    def failed(self, what: str, exc: BaseException, **extra: Any) -> None:
        """``what`` (claim, renew, complete_many...) failed with a lost or
        unreachable database."""
        with self._lock:
            now = time.monotonic()
            first = self._since is None
            if first:
                if self._ended is not None and now - self._ended[0] < self.SETTLE:
                    self._since, first = self._ended[1], False  # the same outage, going on
                else:
                    self._since = now
            self._failures += 1
        if first:
            logger.warning("database unavailable (%s failed: %s); retrying until it answers", what, exc,
                           extra=log_extra(self.worker, **self.extra, **extra))
        else:
            logger.debug("%s failed (%s); retrying", what, exc, extra=log_extra(self.worker, **self.extra, **extra))

    def answered(self, started: float) -> None:
        """A call through the pool that began at ``started`` (time.monotonic())
        succeeded: the outage, if any, is over, unless the call began before
        the outage was seen (it went out on a connection that was still up, and
        says nothing of the database now)."""
        if self._since is None:  # the common case: no lock
            return
        with self._lock:
            if self._since is None or started < self._since:
                return
            since, failures = self._since, self._failures
            self._since, self._failures = None, 0
            self._ended = (time.monotonic(), since)
        if since is not None:
            took = time.monotonic() - since
            logger.info("database reachable again after %.1fs (%d failed calls)", took, failures,
                        extra=log_extra(self.worker, **self.extra, outage_seconds=round(took, 3),
                                        failures=failures))


# -- the timer thread ---------------------------------------------------------


class Timer:
    """One entry of the timer heap. ``cancel()`` drops the callback at once, so
    that a finished step is not kept alive until its heartbeat would have been due."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn: Callable[[], None] | None = fn

    def cancel(self) -> None:
        self.fn = None


class Timers(threading.Thread):
    """One thread, one heap: every step's heartbeat and timeout.

    Most steps finish long before their first heartbeat is due, so most
    entries are cancelled: when they are more than half the heap it is rebuilt
    without them (as asyncio does with its timer handles)."""

    COMPACT_MIN = 256

    def __init__(self) -> None:
        super().__init__(name="cyclone-timers", daemon=True)
        self._heap: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()  # taken as itself where no one is notified (a Condition's `with` is Python code)
        self._cond = threading.Condition(self._lock)
        self._stopped = False
        self._cancelled = 0

    def call_at(self, due: float, fn: Callable[[], None]) -> Timer:
        timer = Timer(fn)
        with self._lock:
            heapq.heappush(self._heap, (due, next(self._seq), timer))
            # The thread sleeps until the earliest entry: wake it only when
            # this one is the new earliest (not for every claimed step).
            if self._heap[0][0] == due:
                self._cond.notify()
        return timer

    def cancel(self, timer: Timer | None) -> None:
        if timer is None:
            return
        with self._lock:
            if timer.fn is None:  # fired or cancelled already
                return
            timer.cancel()
            self._cancelled += 1
            if self._cancelled > self.COMPACT_MIN and self._cancelled * 2 > len(self._heap):
                self._heap = [entry for entry in self._heap if entry[2].fn is not None]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def __len__(self) -> int:
        with self._cond:
            return len(self._heap)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def run(self) -> None:
        while True:
            with self._cond:
                while not self._stopped:
                    now = time.monotonic()
                    if self._heap and self._heap[0][0] <= now:
                        break
                    self._cond.wait(None if not self._heap else self._heap[0][0] - now)
                if self._stopped:
                    return
                _, _, timer = heapq.heappop(self._heap)
                fn, timer.fn = timer.fn, None
                if fn is None:
                    self._cancelled -= 1
                    continue
            try:
                fn()
            except Exception:
                logger.exception("timer callback failed")
            del fn  # do not hold the step until the next timer fires


# -- the handler pool ---------------------------------------------------------


class HandlerPool:
    """``size`` handler threads, started up front, and ``size`` slots: a step
    runs only while it holds one. (A ThreadPoolExecutor made a Future, with
    its Condition, for every step.)

    Steps wait in one queue per source (``sources``: the databases a worker
    serves, :meth:`submit`'s ``source``). A thread takes a slot, then the
    next step of the source with the fewest handlers running, ties going
    round-robin: with a backlog on every source, each holds an equal share
    of the slots, whatever the order its steps were claimed in; a source
    with nothing waiting takes no turn. One source is the plain FIFO queue.

    A plain handler runs in the thread, which gives the slot back when it
    returns. An ``async def`` handler (``active.is_async``) is handed off
    with ``hand_off(active, release)`` (to the event loop,
    :mod:`cyclone_py.aio`), which must call ``release()`` once the coroutine
    has ended; the thread goes back for the next step at once. So handlers
    of both kinds together never run more than ``size`` at a time.
    ``release()`` passes the slot on where it can: when the step it would
    go to next is an ``async def`` one too, it hands that step off at once
    (on the event loop's thread, which is where ``release()`` is called), and
    no handler thread wakes up for it. A drain of async steps runs on the
    loop alone once the threads have started the first ``size``. The
    slots, and the count of steps waiting, are tokens in ``SimpleQueue``s
    (C), not ``threading.Semaphore``s, whose release notifies a
    ``Condition`` in Python: a fifth of the worker's time on a drain of
    async no-op steps."""

    def __init__(
        self,
        size: int,
        run: Callable[[Active], None],
        hand_off: Callable[[Active, Callable[[], None]], None] | None = None,
        *,
        sources: int = 1,
    ) -> None:
        if sources < 1:
            raise ValueError("a handler pool needs at least one source")
        # No lock: deque appends and pops are atomic. A step is in its
        # source's deque before its token is in _ready, so a thread holding a
        # token always finds a step (see _take).
        self._waiting: list[collections.deque[Active]] = [collections.deque() for _ in range(sources)]
        self._running: list[collections.deque[None]] = [collections.deque() for _ in range(sources)]  # len(): running
        self._next = 0  # where the round-robin starts looking
        self._ready: queue.SimpleQueue[bool] = queue.SimpleQueue()  # one True a step submitted; False: exit
        self._slots: queue.SimpleQueue[None] = queue.SimpleQueue()
        for _ in range(size):
            self._slots.put(None)
        self._passes = [functools.partial(self._pass_on, source) for source in range(sources)]
        self._run = run
        self._hand_off = hand_off
        self._closed = False
        self._threads = [threading.Thread(target=self._serve, name=f"cyclone-handler-{i}") for i in range(size)]
        for thread in self._threads:
            thread.start()

    def _release(self, source: int) -> None:
        """Give a slot back."""
        self._running[source].pop()
        self._slots.put(None)

    def _pass_on(self, source: int) -> None:
        """An ``async def`` step of ``source`` has ended (on the event loop's
        thread): hand its slot to the next step if that is an async one too,
        else give it back for a thread. Taking a step here follows the rules
        a thread follows: a token of ``_ready`` first (one a step queued, so a
        step is there for it), then :meth:`_take`, which keeps the sources
        fair. The look at the next step before that is only a guess (threads
        take steps concurrently): a plain step taken after all goes back to
        the front of its queue with its token."""
        self._running[source].pop()
        nxt = self._choose()
        if self._closed or nxt < 0 or self._hand_off is None or not _is_async_head(self._waiting[nxt]):
            self._slots.put(None)
            return
        try:
            token = self._ready.get_nowait()
        except queue.Empty:  # a thread holds the token of that step: it takes it
            self._slots.put(None)
            return
        if not token:  # shutting down: that token is a thread's, to exit
            self._ready.put(False)
            self._slots.put(None)
            return
        taken = self._take()
        if taken is None:
            self._slots.put(None)
            return
        active, source = taken
        if not active.is_async:
            self._running[source].pop()
            self._waiting[source].appendleft(active)
            self._ready.put(True)
            self._slots.put(None)
            return
        try:
            self._hand_off(active, self._passes[source])
        except BaseException:  # hand_off does not raise; never lose a slot
            self._release(source)
            logger.exception("event loop: could not start the next async step")

    def queued(self) -> int:
        """Steps waiting for a slot (the prefetch buffer), approximately."""
        return sum(len(waiting) for waiting in self._waiting)

    def submit(self, active: Active, source: int = 0) -> None:
        if self._closed:
            raise RuntimeError("the handler pool is shut down")
        self._waiting[source].append(active)
        self._ready.put(True)

    def shutdown(self) -> list[Active]:
        """Drop the steps not started yet and let each thread exit after its
        current handler (an async one runs on: its loop is closed by its
        owner). Returns the dropped steps: none of them will run (a thread
        takes a step by popping it, so each is either taken or here)."""
        self._closed = True
        dropped: list[Active] = []
        for waiting in self._waiting:
            while True:
                try:
                    dropped.append(waiting.popleft())
                except IndexError:
                    break
        for _ in self._threads:
            self._slots.put(None)  # a thread waiting for a slot must reach its False
            self._ready.put(False)
        return dropped

    def _take(self) -> tuple[Active, int] | None:
        """The next step and its source; None once shut down (its step was dropped).

        Another thread may pop the step this one chose first: it then looks
        again. Each thread takes a step only for a token it holds, and each
        token's step was queued before the token, so one is always there."""
        while True:
            source = self._choose()
            if source >= 0:
                try:
                    active = self._waiting[source].popleft()
                except IndexError:
                    continue
                self._running[source].append(None)
                return active, source
            if self._closed:
                return None

    def _choose(self) -> int:
        """Of the sources with a step waiting, the one with the fewest
        handlers running, ties round-robin; -1 when none has one."""
        waiting, running = self._waiting, self._running
        n = len(waiting)
        if n == 1:
            return 0 if waiting[0] else -1
        best = -1
        for i in range(self._next, self._next + n):
            source = i % n
            if waiting[source] and (best < 0 or len(running[source]) < len(running[best])):
                best = source
        if best >= 0:
            self._next = best + 1
        return best

    def _serve(self) -> None:
        while True:
            self._slots.get()
            if not self._ready.get():
                return
            taken = self._take()
            if taken is None:
                self._slots.put(None)
                continue
            active, source = taken
            if self._hand_off is not None and active.is_async:
                try:
                    self._hand_off(active, self._passes[source])
                except BaseException:  # hand_off does not raise; never lose a thread or a slot
                    self._release(source)
                    logger.exception("handler thread: could not hand the step to the event loop")
                del active, taken
                continue
            try:
                self._run(active)
            except BaseException:  # _run reports its own failures; never lose a thread
                logger.exception("handler thread: unexpected error")
            finally:
                self._release(source)
            del active, taken  # not kept alive while this thread waits


def _is_async_head(waiting: collections.deque[Active]) -> bool:
    """Whether the step at the front of ``waiting`` is an ``async def`` one
    (False when another thread emptied it meanwhile)."""
    try:
        return waiting[0].is_async
    except IndexError:
        return False


# -- the per-step bookkeeping -------------------------------------------------


@dataclass
class Active:
    """A step this worker leased: its context, its timers, how far it got."""

    step: ClaimedStep
    ctx: StepContext
    is_async: bool = False  # an async def handler: run on the event loop
    source: int = 0  # which of the worker's databases it came from (Worker.dsns)
    traced: bool = False  # tracing.recording() when it was claimed: its execution gets a span
    handler_done: bool = False
    settled: bool = False  # its outcome was handled (reported, dropped or kept for release) during a shutdown
    finished: bool = False  # reported (or given up): no more heartbeats
    # The engine said the step is no longer this execution's (renew refused its
    # lease: run cancelled or failed, step reclaimed): its handler is cancelled
    # and whatever it produces is dropped, not reported.
    lost: bool = False
    heartbeat: Timer | None = None  # the next one
    heartbeat_due: float = math.inf  # when it is due (time.monotonic()); the worker renews those due together
    timeout: Timer | None = None
