"""The worker: claim steps, run handlers, heartbeat, report results.

The worker owns no state rule. It calls ``cyclone.claim`` for as many steps
as it has free handler slots plus a prefetch buffer, runs each handler in a
thread pool, renews each step's lease on that step's own schedule (every
``lease_ttl/3`` with a random first phase and +-10% jitter), and reports through ``complete_many`` (batched:
whatever finished while the previous report was in flight) or ``fail``. Every
poll interval it refreshes its row of the worker registry (``cyclone.register_worker``,
removed again at a clean exit) and calls ``cyclone.tick`` so that expired leases, timeouts,
deadlines, ``max_wait`` and due schedule slots are handled even with no pg_cron.

At start it registers, on each database, the app's limits (``define_limit``: the app's
declaration wins over a value set by hand, and one log line says so when it
changes one), then its workflows (``define_workflow``, which refuses a limit it
does not know), then its schedules (``cyclone.schedule``: replacing one keeps its fired slots and its
paused state, so a restart never undoes an operator's pause). A schedule the
app no longer declares is left alone: ``cyclone schedules rm`` removes it.

Threads, for each database it serves (:class:`Shard`; several are the
shards of SPEC 15, one is the one-shard case): a claim loop (claim, tick;
this module), a listener on its own connection (``LISTEN cyclone_wakeup``
and ``cyclone_cancel``, each a hint: it claims on that connection when woken,
at most once a burst of wake-ups, and checks with renew the runs a cancel
names: :mod:`cyclone_py.listener`), a timer thread with one heap for every
heartbeat and timeout of that database's steps, and a reporter
(:mod:`cyclone_py.reporter`). Shared by all: the handler pool
(:mod:`cyclone_py.runtime`), whose ``concurrency`` slots go to the database
with the fewest handlers running among those with steps waiting, and, with
``async def`` handlers, one event loop thread (:mod:`cyclone_py.aio`) that
they run on, each holding one of those slots like a thread handler. Running
one handler is :mod:`cyclone_py.execution`'s. A database's loop and listener
reserve the free slots they claim for, so together they never exceed its
capacity (``concurrency`` plus its prefetch buffer). A database that goes
away stalls only its own threads; the worker logs it once and keeps serving
the others.

Cancellation reaches a handler through ``ctx.cancelled`` when: ``renew``
refuses its lease (its heartbeat's renew, or the listener's at once when a
``NOTIFY cyclone_cancel`` names its run: the run was cancelled or failed by
its deadline, or the step was reclaimed), its timeout passes on the worker's
clock, or the shutdown grace period ends; an ``async def`` handler's task is
cancelled as well. A notification alone cancels nothing: anyone who can
connect may send one (:mod:`cyclone_py.listener`). What a handler whose lease
renew refused then produces is dropped, never reported (the engine has
settled the step; its compare-and-set would refuse the report anyway); a
timed-out handler's failure is reported as ``timeout``; at shutdown nothing
is reported: the lease decides. A claimed step whose input or deps cannot be
decoded is not run: it fails as ``permanent`` (:mod:`cyclone_py.execution`).

Signals: the first SIGTERM/SIGINT stops claiming and waits up to
``shutdown_grace`` seconds for in-flight handlers; the second exits at once.

Metrics (``metrics_listen``): the worker's own counters, histograms and
gauges (:mod:`cyclone_py.metrics`), counted where each event happens (the
claims here and in the listener, a handler's start and end here, reports in
the reporter, renewals in the heartbeat) and served over HTTP until shutdown.
Off, nothing is counted.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import os
import random
import signal
import socket
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Collection, Sequence
from datetime import timedelta
from functools import partial
from types import FrameType
from typing import Any
from uuid import UUID

from cyclone_py import errors, tracing
from cyclone_py.aio import EventLoop, is_async_handler
from cyclone_py.client import ClaimedStep, Client
from cyclone_py.durations import Duration, to_seconds
from cyclone_py.execution import Backoff, ErrorHook, Outcome, execute, execute_async, failure, make_context
from cyclone_py.limit import Limit
from cyclone_py.listener import Listener
from cyclone_py.metrics import ABANDONED, REFUSED, MetricsServerError, WorkerMetrics, parse_listen
from cyclone_py.progress import ProgressThrottle
from cyclone_py.reporter import Reporter
from cyclone_py.runtime import Active, DatabaseOutage, HandlerPool, Timers, log_extra
from cyclone_py.version import __version__
from cyclone_py.workflow import App, Workflow, as_app, format_interval

__all__ = ["Backoff", "ErrorHook", "Worker"]

logger = logging.getLogger(__name__)

# The adaptive prefetch buffer holds at most this many times `concurrency` steps (and at most `max_batch`):
# what one worker may hold leased ahead of its handler threads when slow steps follow fast ones (the
# averages lag). 20, not 10 (up to 0.25.0): claims of ~200 steps instead of ~100 drained 1.16x as fast,
# with 0.90x the database's CPU a step (docs/performance.md, "Claims of 200"). 50, not 20 (up to 0.30.0),
# once claim and complete_many no longer scanned the batch for each step (0.29.0, 0.30.0): a buffer of 500
# at the default concurrency and max_batch, 1.07x the drain and 0.91x the database's CPU a step
# (docs/performance.md, "A buffer of 500").
PREFETCH_CAP = 50

#: Heartbeats of one database that fall due within this many seconds of each
#: other are sent in one ``renew_many`` call (each step keeps its own schedule,
#: phase and jitter: only the round trip and the commit are shared).
HEARTBEAT_WINDOW = 0.1

#: A started step's first heartbeat is put on its database's timer heap by a
#: pass made this many seconds after its claim (at most: a tenth of the lease
#: TTL when that is sooner), one pass for all of a claim's steps. Most steps end
#: before it, and never cost a heap entry and its cancel (7% of the worker's
#: time under the GIL in a drain of no-op steps). A step whose random first
#: phase falls before the pass is renewed at the pass: its heartbeat comes
#: late by at most this, as heartbeats within HEARTBEAT_WINDOW of each other
#: come early or late by as much to share a call.
FIRST_HEARTBEAT_PASS = 0.1

#: A step whose row another transaction held when its heartbeat was sent
#: (``renew_many`` answered None: its completion, a cancel) is asked again
#: after this many seconds (or half an interval, when that is sooner).
HELD_RETRY = 0.5

#: The worker refreshes its registry row (``cyclone.register_worker``, SPEC
#: 18) on every poll, and at least this often when the poll interval is
#: longer: the registry counts a worker alive while it was seen within the
#: last 60 seconds.
ANNOUNCE_EVERY = 20.0


# -- the worker -------------------------------------------------------------


class Worker:
    """Claims and runs the steps of an App's workflows.

    ``dsn``: a database, or a sequence of them (the shards of a sharded
    Cyclone), each served by its own claim loop and ticked, with one pool of
    ``concurrency`` handlers shared fairly among them; None: the one
    :func:`cyclone_py.db.resolve_dsn` names.

    ``run()`` blocks until stopped (a signal, or ``stop()`` from another
    thread); ``run_in_thread()`` starts it in a thread for tests. A Worker
    runs once: make a new one to start again.

    ``backoff(attempt)`` (a timedelta or seconds) replaces the engine's
    default retry delay; ``on_error(exc)`` is called with a
    :class:`~cyclone_py.errors.StepFailed` for every discard this worker sees
    (its own failures, and its ticks' reclaim limits, timeouts, deadlines and
    max_waits), from the reporter or main-loop thread: keep it short.
    ``backoff``, ``on_error`` and ``max_reclaims`` default to the App's
    (``App(..., backoff=..., on_error=..., max_reclaims=...)``); given here,
    they win.

    ``workflows``: the names of the app's workflows this worker claims steps
    of, each to be named (a child workflow too); None: all of them. A worker
    of one workflow claims its steps without a limit from a queue of their
    own, so the others' backlogs there cost its claims nothing. It registers
    the whole app either way.

    ``metrics_listen="HOST:PORT"`` serves the worker's Prometheus metrics
    there (``:PORT``: every interface; port 0: a free one, see
    ``metrics.url``) from start to shutdown; ``metrics`` is then the
    :class:`~cyclone_py.metrics.WorkerMetrics`, with its own registry.
    """

    def __init__(
        self,
        app: App | Workflow,
        dsn: str | Sequence[str] | None = None,
        *,
        concurrency: int = 10,
        lease_ttl: Duration = 30.0,
        poll_interval: Duration = 1.0,
        max_reclaims: int | None = None,
        backoff: Backoff | None = None,
        on_error: ErrorHook | None = None,
        name: str | None = None,
        shutdown_grace: Duration = 30.0,
        register: bool = True,
        max_batch: int = 500,
        max_db_backoff: Duration = 30.0,
        prefetch: int | None = None,
        metrics_listen: str | None = None,
        workflows: Sequence[str] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if to_seconds(lease_ttl) <= 0 or to_seconds(poll_interval) <= 0:
            raise ValueError("lease_ttl and poll_interval must be positive")
        if max_reclaims is not None and max_reclaims < 0:
            raise ValueError("max_reclaims must be >= 0")
        if prefetch is not None and prefetch < 0:
            raise ValueError("prefetch must be >= 0")
        self.metrics_listen = None if metrics_listen is None else parse_listen(metrics_listen)
        self.app = as_app(app)
        # The databases served (shards: SPEC 15); one is the common case.
        self.dsns = _as_dsns(dsn)
        self.dsn = self.dsns[0]
        self.concurrency = concurrency
        # Durations are kept in seconds.
        self.lease_ttl = to_seconds(lease_ttl)
        self.poll_interval = to_seconds(poll_interval)
        # The app's policy, unless given here.
        self.max_reclaims = max_reclaims if max_reclaims is not None else self.app.max_reclaims or 0
        self.backoff = backoff if backoff is not None else self.app.backoff
        self.on_error = on_error if on_error is not None else self.app.on_error
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.shutdown_grace = to_seconds(shutdown_grace)
        self.register_workflows = register
        self.max_batch = max_batch
        # Steps claimed beyond the handler threads wait in the handler pool's queue
        # (leased and heartbeating), so that one claim serves many completions.
        # None: adaptive, enough to keep the threads busy for one claim round
        # trip (see _prefetch_now).
        self.prefetch = prefetch
        self.max_db_backoff = to_seconds(max_db_backoff)
        # Claims are for these workflows only: another service's workflow may
        # share a handler name (SPEC 6, p_workflows).
        self.workflows = served_workflows(self.app, workflows)
        served = [self.app[name] for name in self.workflows]
        self.handlers = sorted({handler for wf in served for handler in wf.handlers})
        # (workflow, handler) of the async def handlers: they run on the event loop.
        self._async = {
            (wf.name, handler) for wf in served for handler, fn in wf.handlers.items() if is_async_handler(fn)
        }
        # Whether the latest claim's steps get spans (tracing.recording(), asked once a claim).
        self._traced = False
        # Steps whose handler the shutdown cancelled and that ended: their leases are handed back (_release).
        self._abandoned: list[Active] = []
        # The worker's Prometheus metrics, when served; None: nothing is counted.
        self.metrics: WorkerMetrics | None = None
        if self.metrics_listen is not None:
            steps = [(wf.name, n.name) for wf in served for n in wf.nodes.values() if n.kind == "task"]
            self.metrics = WorkerMetrics(self.name, steps)

        self.started = threading.Event()
        self.error: BaseException | None = None
        self._stop_claiming = threading.Event()
        self._force = threading.Event()
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        # Keyed by database, then step or run: ids are unique per database only.
        # Each execution by (database, step id, lease generation): this worker may claim a step again (after
        # a reclaim) before the earlier execution's result is handled, and each keeps its own timers.
        self._active: dict[tuple[int, int, int], Active] = {}
        self._by_run: dict[tuple[int, UUID], set[tuple[int, int]]] = {}  # ClaimedStep.execution of each
        self._running_handlers = 0  # on every database
        self._signal_count = 0
        self._stopped_by_signal = False
        self._thread: threading.Thread | None = None
        self._handler_pool: HandlerPool | None = None
        self._aio: EventLoop | None = None
        self._shards = _shards(self.name, self.dsns)
        # What the worker tells the registry about itself on every poll (SPEC 18); fixed for its life.
        self.registry_info: dict[str, Any] = {
            "handlers": list(self.handlers),
            "workflows": list(self.workflows),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "language": "python",
            "version": __version__,
            "concurrency": self.concurrency,
            "lease_ttl": self.lease_ttl,
            "poll_interval": self.poll_interval,
            "max_reclaims": self.max_reclaims,
        }

    def __repr__(self) -> str:
        return f"Worker(name={self.name!r}, handlers={self.handlers})"

    def _log_extra(self, step: ClaimedStep | None = None, shard: Shard | None = None, **more: Any) -> dict[str, Any]:
        return log_extra(self.name, step, **(shard.extra if shard is not None else {}), **more)

    @property
    def client(self) -> Client:
        """The client of the (first) database."""
        client = self._shards[0].client
        if client is None:
            raise RuntimeError("worker is not running")
        return client

    @property
    def in_flight(self) -> int:
        """Handlers running now."""
        with self._lock:
            return self._running_handlers

    # -- lifecycle --------------------------------------------------------

    def run(self, *, install_signals: bool = True) -> None:
        """Run until stopped; re-raises what stopped it abnormally.

        Called from the main thread with ``install_signals``, it installs
        SIGTERM/SIGINT handlers and runs the loop in a second thread, so that
        a signal never interrupts the main thread while it holds one of the
        worker's locks."""
        if install_signals and threading.current_thread() is threading.main_thread():
            previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
            try:
                thread = threading.Thread(target=self._run_body, name="cyclone-loop")
                self._thread = thread
                thread.start()
                while thread.is_alive():
                    thread.join(0.5)
            finally:
                for signum, handler in previous.items():
                    signal.signal(signum, handler)
        else:
            self._run_body()
        if self.error is not None:
            raise self.error

    def _run_body(self) -> None:
        running = False
        try:
            self._start()
            running = True
            self._serve()
        except BaseException as exc:
            self.error = exc
            # An engine refusal at start (a bad definition, a missing grant) or
            # a metrics address that cannot be bound is the caller's to report:
            # run() re-raises it, run_in_thread() too.
            if running or not isinstance(exc, (errors.CycloneError, MetricsServerError)):
                logger.error("worker failed: %s", exc, exc_info=True, extra=self._log_extra())
        finally:
            self.started.set()
            self._shutdown(log=running)

    def run_in_thread(self, *, wait: Duration | None = 10.0) -> threading.Thread:
        """Start the worker in a thread (no signal handlers); waits up to
        ``wait`` seconds until it has registered its workflows."""
        thread = threading.Thread(target=self._run_body, name=f"cyclone-worker-{self.name}")
        self._thread = thread
        thread.start()
        if wait is not None and not self.started.wait(to_seconds(wait)):
            raise TimeoutError(f"timed out after {to_seconds(wait):g}s waiting for the worker to start")
        if self.error is not None:
            raise RuntimeError(f"worker failed to start: {self.error}") from self.error
        return thread

    def stop(self, *, wait: bool = True, timeout: Duration | None = None, force: bool = False) -> None:
        """Stop claiming; in-flight handlers get the grace period (``force``:
        cancel them at once). With ``wait``, join a ``run_in_thread`` thread."""
        self._stop_claiming.set()
        if force:
            self._force.set()
        self._wake_all()
        with self._idle:
            self._idle.notify_all()
        if wait and self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(None if timeout is None else to_seconds(timeout))

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signal_count += 1
        if self._signal_count == 1:
            logger.info(
                "signal received: stopping (waiting up to %.0fs for in-flight steps; signal again to exit now)",
                self.shutdown_grace,
                extra=self._log_extra(signal=signum),
            )
            self._stopped_by_signal = True
            # The main thread only joins the loop thread (see run()), so it
            # holds none of the locks these events take.
            self._stop_claiming.set()
            self._wake_all()
        else:
            logger.warning("second signal: exiting now", extra=self._log_extra(signal=signum))
            _hard_exit(1)

    def _start(self) -> None:
        if self.metrics is not None and self.metrics_listen is not None:
            self.metrics.serve(*self.metrics_listen)  # first: a bad address stops the worker before it claims
            self.metrics.gauges(self._in_flight_now, self._prefetched_now)
        self._handler_pool = HandlerPool(self.concurrency, self._run_step, self._hand_off, sources=len(self._shards))
        if self._async:
            self._aio = EventLoop(name="cyclone-aio")
        for shard in self._shards:
            self._open(shard)
        for shard in self._shards:
            self._check_engine(shard)
        for shard in self._shards:
            # A database down now registers in its own loop, before it claims.
            shard.registered = not self.register_workflows or self._register(shard, wait=False)
            self._listen(shard)
        served: dict[str, Any] = {} if self.metrics is None else {"metrics": self.metrics.url}
        if len(self._shards) > 1:
            served["databases"] = [shard.extra["database"] for shard in self._shards]
        logger.info(
            "worker started",
            extra=self._log_extra(
                **served,
                workflows=self.workflows,
                handlers=self.handlers,
                concurrency=self.concurrency,
                prefetch="adaptive" if self.prefetch is None else self.prefetch,
                lease_ttl=self.lease_ttl,
                poll_interval=self.poll_interval,
                max_reclaims=self.max_reclaims,
            ),
        )

    def _open(self, shard: Shard) -> None:
        """One database's timer thread, client and reporter. Its own timer
        thread: a renew waiting for a database that went away delays only
        that database's heartbeats."""
        shard.timers = Timers()
        shard.timers.start()
        # A checkout waits at most one heartbeat interval: the timer thread
        # renews every lease in turn, and the pool's own retry after a
        # connection that failed its check backs off from 1 s, doubling.
        shard.open(Client(shard.dsn, min_size=1, max_size=4, application_name="cyclone-worker",
                          timeout=min(10.0, self.lease_ttl / 3)))
        client = shard.client
        shard.progress = ProgressThrottle(
            lambda step, value: client.progress(step.step_id, self.name, step.lease_generation, value),
            extra=shard.extra,
        )
        shard.reporter = Reporter(
            shard.client,
            self.name,
            max_batch=self.max_batch,
            lease_ttl=self.lease_ttl,
            force=self._force,
            finish=lambda step: self._finish_step(shard, step),
            on_discard=lambda exc, step: self._emit_error(exc, step, shard),
            outage=shard.outage,
            metrics=self.metrics,
            extra=shard.extra,
            flush_progress=shard.progress.flush,
        )
        shard.reporter.start()

    def _listen(self, shard: Shard) -> None:
        """One database's listener."""
        Listener(
            shard.dsn,
            self.name,
            self.handlers,
            self.workflows,
            lease_ttl=self.lease_ttl,
            max_backoff=self.max_db_backoff,
            closing=self._closing,
            reserve=lambda: self._reserve(shard),
            start_steps=lambda claimed, reserved: self._start_steps(shard, claimed, reserved),
            wake=lambda: self._on_wakeup(shard),
            holds=lambda run_id: (shard.index, run_id) in self._by_run,
            held_steps=lambda run_ids: self._held_steps(shard, run_ids),
            lost=lambda steps: self._steps_lost(shard, steps),
            outage=shard.outage,
            metrics=self.metrics,
            extra=shard.extra,
        ).start()

    def _check_engine(self, shard: Shard) -> None:
        """Refuse to start against an engine older than this package
        (:class:`~cyclone_py.errors.EngineTooOld`, naming both releases): its
        functions would refuse or misread what this worker sends. A newer engine
        is served (a release keeps the calls of the one before; docs/operations.md
        says per release). A database down now is not checked (logged)."""
        try:
            engine = shard.client.engine_version()
        except errors.DatabaseUnavailable as exc:
            logger.warning("engine release not checked: %s", exc, extra=self._log_extra(shard=shard))
            return
        if engine is None or _release(engine) < _release(__version__):
            raise errors.EngineTooOld(
                f"the database holds Cyclone engine {engine or 'older than 0.22.0'} and this worker is {__version__}:"
                f" deploy the schema first (cyclone migrate), then start workers of {__version__}")
        if _release(engine) > _release(__version__):
            logger.info("the database holds a newer engine (%s) than this worker (%s)", engine, __version__,
                        extra=self._log_extra(shard=shard))

    def _register(self, shard: Shard, *, wait: bool) -> bool:
        """Register the app's limits, workflows and schedules on one database:
        True once done. While it is unavailable, retry until it answers (or
        the worker stops); without ``wait``, False at once instead."""
        delay = 0.1
        while not self._stop_claiming.is_set():
            try:
                for lim in self.app.limits:
                    self._register_limit(shard, lim)
                for name, definition in self.app.definitions():
                    shard.client.define_workflow(name, definition)
                for sched in self.app.schedules:
                    shard.client.schedule(**sched.arguments())
                    logger.info(
                        "schedule %s registered: %s (%s) -> %s",
                        sched.name, sched.cron, sched.timezone, sched.workflow,
                        extra=self._log_extra(shard=shard, schedule=sched.name, cron=sched.cron,
                                              timezone=sched.timezone, workflow=sched.workflow,
                                              overlap=sched.overlap),
                    )
                return True
            except errors.DatabaseUnavailable as exc:
                self._count_reconnect()
                shard.outage.failed("registering workflows", exc)
                if not wait:
                    return False
                self._stop_claiming.wait(delay)
                delay = min(delay * 2, self.max_db_backoff)
        return False

    def _register_limit(self, shard: Shard, lim: Limit) -> None:
        """``define_limit`` with the app's values; the values it replaced (read
        from ``cyclone_v_limits``, which the worker role may read) go in the log line."""
        try:
            before = next((r for r in shard.client.limits(lim.name) if r.bucket == ""), None)
        except errors.PermissionDenied:  # a role without the view: say only that it registered
            before = None
        shard.client.define_limit(**lim.arguments())
        new = _limit_values(lim.concurrency, lim.rate, lim.per)
        extra = self._log_extra(shard=shard, limit=lim.name, concurrency=lim.concurrency, rate=lim.rate,
                                period=None if lim.per is None else lim.per.total_seconds())
        old = None if before is None else _limit_values(before.concurrency, before.rate, before.period)
        if old is not None and old != new:
            logger.warning("limit %s changed at registration: %s -> %s (the app's declaration wins)",
                           lim.name, old, new, extra={**extra, "was": old})
        else:
            logger.info("limit %s registered: %s", lim.name, new, extra=extra)

    def _shutdown(self, *, log: bool = True) -> None:
        self._stop_claiming.set()
        deadline = time.monotonic() + (0.0 if self._force.is_set() else self.shutdown_grace)
        with self._idle:
            while self._running_handlers and not self._force.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._idle.wait(remaining)
        # The grace is over: no step waiting for a handler starts any more
        # (a thread freed by a cancelled handler would take the next one).
        dropped = self._handler_pool.shutdown() if self._handler_pool is not None else []
        for active in dropped:
            self._handler_finished(active)  # never to run
        with self._idle:
            stuck = [active for active in self._active.values() if not active.handler_done]
        if stuck:
            logger.warning(
                "shutdown grace over: cancelling %d in-flight step(s); their leases are handed back as they end",
                len(stuck),
                extra=self._log_extra(),
            )
            for active in stuck:
                active.ctx.cancel("shutdown")
            with self._idle:
                end = time.monotonic() + min(1.0, max(self.shutdown_grace, 0.1))
                while not all(active.settled for active in stuck) and time.monotonic() < end:
                    self._idle.wait(end - time.monotonic())
        # Flush the reporters (each reports what was queued before, then
        # exits), then stop everything else.
        flushed_by = time.monotonic() + max(5.0, self.lease_ttl)
        reporters = [shard.reporter for shard in self._shards if shard.reporter is not None]
        for reporter in reporters:
            reporter.close(0)  # all at once: one retrying a lost database holds up no other
        for reporter in reporters:
            reporter.join(max(0.0, flushed_by - time.monotonic()))
        self._closing.set()
        for shard in self._shards:
            shard.progress.close()
            if shard.timers is not None:
                shard.timers.stop()
        if self._aio is not None:
            self._aio.close()
        released = self._release(dropped)
        self._deregister()
        for shard in self._shards:
            shard.close()
        if self.metrics is not None:
            self.metrics.close()
        with self._lock:
            left = self._running_handlers
        if log:
            logger.info("worker stopped", extra=self._log_extra(abandoned=left, released=released))
        if left and self._stopped_by_signal:
            # A handler ignored cancellation: the process would hang joining it.
            _hard_exit(1)

    def _release(self, dropped: Sequence[Active]) -> int:
        """Hand back the leases of the steps this worker will not finish (SPEC
        18): those whose handler ended cancelled by the shutdown, and those
        still waiting for a handler (``dropped``), so that another worker takes
        them at once instead of after their lease expires. Not a step whose
        handler still runs (it ignored the cancel): another worker would run
        it beside it. Returns how many the engine took back; a database that
        does not answer leaves its steps to their leases."""
        with self._lock:
            steps = self._abandoned + list(dropped)
            self._abandoned = []
        released = 0
        unreachable: set[int] = set()
        for active in steps:
            step, shard = active.step, self._shards[active.source]
            if shard.index in unreachable:
                continue
            try:
                if shard.client.release(step.step_id, self.name, step.lease_generation):
                    released += 1
            except errors.CycloneError as exc:
                if isinstance(exc, errors.DatabaseUnavailable):
                    unreachable.add(shard.index)  # one wait for it, not one a step
                logger.warning("could not release step %d: %s; its lease will expire", step.step_id, exc,
                               extra=self._log_extra(step, shard))
        return released

    # -- the claim loops --------------------------------------------------

    def _serve(self) -> None:
        """One claim loop per database: the first in this thread, each other
        in a thread of its own. Whichever ends first (stopped, or failed)
        stops the others."""
        others = [threading.Thread(target=self._loop_in_thread, args=(shard,), name=f"cyclone-loop-{shard.index}")
                  for shard in self._shards[1:]]
        for thread in others:
            thread.start()
        self.started.set()
        try:
            self._loop(self._shards[0])
        finally:
            self._stop_claiming.set()
            self._wake_all()
            for thread in others:
                thread.join()

    def _loop_in_thread(self, shard: Shard) -> None:
        try:
            self._loop(shard)
        except BaseException as exc:  # as the first loop's failure does in _run_body: stop the worker
            if self.error is None:
                self.error = exc
            logger.error("worker failed: %s", exc, exc_info=True, extra=self._log_extra(shard=shard))
            self.stop(wait=False)

    def _loop(self, shard: Shard) -> None:
        """Claim and tick on one database until the worker stops."""
        if not shard.registered and not self._register(shard, wait=True):
            return  # stopped before the database answered
        next_tick = next_announce = time.monotonic()
        claim_due = True
        failures = 0
        while not self._stop_claiming.is_set():
            started = time.monotonic()
            try:
                if time.monotonic() >= next_announce:
                    self._announce(shard)
                    next_announce = time.monotonic() + min(self.poll_interval, ANNOUNCE_EVERY)
                if time.monotonic() >= next_tick:
                    self._tick(shard)
                    next_tick = time.monotonic() + self.poll_interval
                    claim_due = True
                free = self._reserve(shard) if claim_due and self.handlers else 0
                if free > 0:
                    claimed: list[ClaimedStep] = []
                    try:
                        asked = time.perf_counter()
                        claimed = shard.client.claim(self.name, self.handlers, free,
                                                     timedelta(seconds=self.lease_ttl), self.workflows)
                        took = time.perf_counter() - asked
                        shard.claim_s = _average(shard.claim_s, took)
                        if self.metrics is not None:
                            self.metrics.claim_seconds.observe(took)
                    finally:
                        self._start_steps(shard, claimed, free)
                    claim_due = len(claimed) == free  # saturated: more are probably due
                elif not self.handlers:
                    claim_due = False
                failures = 0
                shard.outage.answered(started)
            except errors.DatabaseUnavailable as exc:
                failures += 1
                self._count_reconnect()
                delay = self._db_backoff(failures)
                shard.outage.failed("claim/tick", exc, failures=failures, retry_in=delay)
                if self._back_off(shard, delay):
                    failures = 0  # the listener got through: the database answers again
                claim_due = True
                continue
            except errors.CycloneError as exc:
                failures += 1
                delay = self._db_backoff(failures)
                logger.error("claim/tick failed (%s); retrying in %.1fs", exc, delay,
                             extra=self._log_extra(shard=shard))
                self._stop_claiming.wait(delay)
                continue
            if claim_due and self._free(shard) > 0:
                continue
            shard.wake.wait(max(0.0, min(next_tick, next_announce) - time.monotonic()))
            shard.wake.clear()
            if shard.wakeup_pending:
                shard.wakeup_pending = False
                claim_due = True

    def _db_backoff(self, failures: int) -> float:
        """A claim loop's wait after ``failures`` failed rounds in a row: the
        poll interval, doubling, at most ``max_db_backoff`` and at most one
        lease TTL. The loop is this worker's ticker: once the database answers
        again, the leases it stranded are reclaimed within a lease TTL and a
        poll interval of their expiry, whether or not the listener's own
        reconnect wakes it up first."""
        return float(min(self.max_db_backoff, self.lease_ttl, self.poll_interval * 2 ** min(failures - 1, 16)))

    def _back_off(self, shard: Shard, delay: float) -> bool:
        """Wait ``delay`` seconds after a database failure, or less: until the
        worker stops, or a wake-up comes (the database's listener sends one
        each time it has (re)connected, so the database answers again). True
        when a wake-up cut it short, so the caller retries at once with its
        backoff reset."""
        deadline = time.monotonic() + delay
        while not self._stop_claiming.is_set() and not shard.wakeup_pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            shard.wake.wait(remaining)
            shard.wake.clear()
        woken = shard.wakeup_pending
        shard.wakeup_pending = False
        return woken

    def _prefetch_now(self, shard: Shard) -> int:
        """A database's prefetch buffer: the fixed ``prefetch``, or (adaptive)
        as many of its steps as the handler threads finish during one claim
        round trip to it, at least ``concurrency`` and at most ``PREFETCH_CAP``
        times it (and ``max_batch``). Slow handlers keep it at
        ``concurrency``; short ones let one claim serve many. The cap bounds
        what one claim can hoard when slow steps follow a run of fast ones
        (the average lags behind)."""
        if self.prefetch is not None:
            return self.prefetch
        claim_s, handler_s = shard.claim_s, shard.handler_s
        if claim_s is None or handler_s is None:
            return self.concurrency
        window = self.concurrency * claim_s / max(handler_s, 1e-6)
        cap = min(self.max_batch, PREFETCH_CAP * self.concurrency)
        return max(self.concurrency, min(cap, int(window)))

    def _free(self, shard: Shard) -> int:
        """How many steps to claim now from one database: none while its
        prefetch buffer is more than half full and it holds a step for every
        handler thread, else up to its capacity. Slots reserved by a claim in
        flight count as taken. Each database has the whole capacity: the
        handler pool shares the threads out among those with steps waiting."""
        with self._lock:
            return self._free_locked(shard)

    def _free_locked(self, shard: Shard) -> int:
        prefetch = self._prefetch_now(shard)
        capacity = self.concurrency + prefetch
        in_flight = shard.held + shard.reserved
        if in_flight >= self.concurrency and capacity - in_flight <= prefetch // 2:
            return 0
        return capacity - in_flight

    def _reserve(self, shard: Shard) -> int:
        """Hold the free slots for one claim on a database (its loop and its
        listener both claim); _start_steps gives them back."""
        with self._lock:
            if self._stop_claiming.is_set():
                return 0
            free = self._free_locked(shard)
            shard.reserved += free
            return free

    def _start_steps(self, shard: Shard, claimed: Sequence[ClaimedStep], reserved: int) -> None:
        """Start what one claim leased (a loop's or a listener's)."""
        if claimed:
            if self.metrics is not None:
                self.metrics.claimed.inc(len(claimed))
            self._traced = tracing.recording()  # once a claim, not once a step: the answer reads the environment
            self._start_batch(shard, claimed)
        with self._lock:
            shard.reserved -= reserved

    def _pass_soon(self, shard: Shard) -> None:
        """Make sure a pass of :meth:`_first_heartbeats` comes for the steps just
        started (after they were queued: a pass that has begun may miss them,
        and one that has not will see them)."""
        if shard.pass_pending or shard.timers is None:
            return
        shard.pass_pending = True
        delay = min(FIRST_HEARTBEAT_PASS, self.lease_ttl / 10)
        shard.timers.call_at(time.monotonic() + delay, lambda: self._first_heartbeats(shard))

    def _first_heartbeats(self, shard: Shard) -> None:
        """On the timer thread: put the first heartbeat of each step started
        since the last pass, and still running, on the heap, at its own due
        time (at once, when that has passed)."""
        shard.pass_pending = False  # before reading the queue: a step queued from now on gets a pass of its own
        timers, unscheduled = shard.timers, shard.unscheduled
        assert timers is not None
        while unscheduled:
            active = unscheduled.popleft()
            if active.finished or self._closing.is_set():
                continue
            self._schedule_heartbeat(active, timers)

    def _announce(self, shard: Shard) -> None:
        """Insert or refresh this worker's registry row on one database (SPEC
        18): what it claims and who it is, for ``cyclone workers``, metrics and
        ``cyclone explain``. Bookkeeping only: a refusal (a database of an
        older release without the registry, an info the engine will not keep)
        is logged once, not asked again, and the worker goes on claiming."""
        if shard.announce_failed:
            return
        try:
            shard.client.register_worker(self.name, self.registry_info)
        except errors.DatabaseUnavailable:
            raise
        except errors.CycloneError as exc:
            if not shard.announce_failed:
                shard.announce_failed = True
                logger.warning("could not register in the worker registry (%s); claiming anyway", exc,
                               extra=self._log_extra(shard=shard))

    def _deregister(self) -> None:
        """Remove this worker's registry rows at its exit (SPEC 18). A
        database that is down (or does not answer now) is not waited for: its
        row stops being alive within a minute, and a tick forgets it a day
        later."""
        for shard in self._shards:
            if shard.announce_failed or shard.outage.ongoing:
                continue
            try:
                shard.client.deregister_worker(self.name)
            except errors.DatabaseUnavailable:
                logger.debug("could not deregister: the database does not answer", extra=self._log_extra(shard=shard))
            except errors.CycloneError as exc:
                logger.warning("could not deregister: %s", exc, extra=self._log_extra(shard=shard))
            except RuntimeError:
                pass  # never opened (the worker failed to start)

    def _tick(self, shard: Shard) -> None:
        result = shard.client.tick(self.max_reclaims)
        if (result.reclaimed or result.retried or result.discarded or result.deadlines or result.max_wait
                or result.scheduled or result.skipped_slots):
            logger.info(
                "tick: %d reclaimed, %d retried, %d discarded, %d deadlines, %d max_wait, "
                "%d scheduled, %d slots skipped",
                result.reclaimed,
                result.retried,
                result.discarded,
                result.deadlines,
                result.max_wait,
                result.scheduled,
                result.skipped_slots,
                extra=self._log_extra(shard=shard),
            )
        for discarded in result.discarded_steps:
            self._emit_error(discarded.exception(), shard=shard)

    def _emit_error(self, exc: errors.StepFailed, step: ClaimedStep | None = None, shard: Shard | None = None) -> None:
        """Log a discard and call the hook; ``step``: the execution of ours that
        was discarded (a tick's discards name the step but not its attempt)."""
        if step is not None:
            extra = self._log_extra(step, shard, error_kind=exc.error_kind)
        else:
            extra = self._log_extra(shard=shard, step_id=exc.step_id, run_id=str(exc.run_id), node=exc.node,
                                    workflow=exc.workflow, error_kind=exc.error_kind)
        logger.warning("step discarded (%s)", exc.error_kind, extra=extra)
        if self.on_error is None:
            return
        try:
            self.on_error(exc)
        except Exception:
            logger.exception("error hook failed", extra=self._log_extra(shard=shard, step_id=exc.step_id))

    # -- one step ---------------------------------------------------------

    def _start_batch(self, shard: Shard, steps: Sequence[ClaimedStep]) -> None:
        """Start the steps of one claim, on the thread that claimed them (the
        claim loop's, whose next claim waits for this). What can be done once
        for the batch is: one clock reading (the steps of a claim start
        together), one hold of the worker's lock to register them all, one
        extend of the first-heartbeat queue. The first step reaches a handler
        thread once every record is made (3.3 µs a step)."""
        timers, pool = shard.timers, self._handler_pool
        assert pool is not None and timers is not None
        started = time.monotonic()
        third = self.lease_ttl / 3
        sink, name, index, traced, async_handlers = (shard.progress.sink, self.name, shard.index, self._traced,
                                                   self._async)
        uniform = random.random
        batch = [
            Active(step=step, ctx=make_context(step, name, sink(step)),
                   is_async=(step.workflow, step.handler) in async_handlers, source=index, traced=traced,
                   heartbeat_due=started + third * (1.0 - uniform()))
            for step in steps
        ]
        with self._lock:
            by_execution, by_run = self._active, self._by_run
            for active in batch:
                step = active.step
                by_execution[(index, *step.execution)] = active
                by_run.setdefault((index, step.run_id), set()).add(step.execution)
            self._running_handlers += len(batch)
            shard.held += len(batch)
        if logger.isEnabledFor(logging.DEBUG):
            for active in batch:
                logger.debug("step claimed", extra=self._log_extra(active.step, shard))
        shard.unscheduled.extend(batch)  # their heartbeats' timers: at the next pass (_first_heartbeats)
        self._pass_soon(shard)
        for active in batch:
            if active.step.timeout is not None:
                active.timeout = timers.call_at(
                    started + active.step.timeout.total_seconds(), partial(self._time_out, active)
                )
            try:
                pool.submit(active, index)
            except RuntimeError:  # pool shut down under us: leave the step to its lease
                self._handler_finished(active)
                self._finish(active)

    def _run_step(self, active: Active) -> None:
        """Run a plain handler in this handler thread."""
        if self.metrics is not None:
            self.metrics.step(active.step.workflow, active.step.node).started.inc()
        began = time.perf_counter()
        step = active.step
        try:
            with tracing.step_span(step.traceparent, step.workflow, step.node, lambda: _span_attributes(step),
                                   step.previous_span, record=active.traced) as span:
                outcome = _end_span(span, execute(self.app, step, active.ctx, self.backoff))
        except BaseException:  # the machinery around the handler failed
            outcome = failure(active.step, traceback.format_exc(), "panic", self.backoff)
        finally:
            self._handler_finished(active, time.perf_counter() - began)
        self._ran(active, outcome)

    def _hand_off(self, active: Active, release: Callable[[], None]) -> None:
        """Start an ``async def`` handler on the event loop; ``release`` (its
        concurrency slot) is called once the coroutine has ended."""
        try:
            assert self._aio is not None  # made in _start when the app has async handlers
            self._aio.spawn(self._run_async(active), lambda task: self._async_ran(active, task, release))
        except BaseException:  # the loop is closed (shutting down): leave the step to its lease
            release()
            self._handler_finished(active)
            self._finish(active)

    async def _run_async(self, active: Active) -> tuple[Outcome, float]:
        """On the loop: the handler's outcome, and how long it ran (for the adaptive prefetch)."""
        if self.metrics is not None:
            self.metrics.step(active.step.workflow, active.step.node).started.inc()
        began = time.perf_counter()
        step = active.step
        # The span is current in this task, and so in the handler (awaited in it).
        with tracing.step_span(step.traceparent, step.workflow, step.node, lambda: _span_attributes(step),
                               step.previous_span, record=active.traced) as span:
            outcome = _end_span(span, await execute_async(self.app, step, active.ctx, self.backoff))
        return outcome, time.perf_counter() - began

    def _async_ran(
        self, active: Active, task: asyncio.Task[tuple[Outcome, float]], release: Callable[[], None]
    ) -> None:
        """On the loop's thread: an async handler's coroutine ended."""
        release()
        outcome: Outcome | None = None
        ran_s: float | None = None
        try:
            if not task.cancelled():  # cancelled before it ran: the loop was closed under it
                outcome, ran_s = task.result()
        except BaseException:  # the machinery around the handler failed
            outcome = failure(active.step, traceback.format_exc(), "panic", self.backoff)
        finally:
            self._handler_finished(active, ran_s)
        if outcome is None:
            self._finish(active)
            self._mark_settled(active)
            return
        self._ran(active, outcome)

    def _ran(self, active: Active, outcome: Outcome) -> None:
        """A handler of either kind ended: report its outcome (or, cancelled by
        the shutdown, keep its lease for _release); _shutdown waits for the
        steps it cancelled to get this far."""
        try:
            self._handle_outcome(active, outcome)
        finally:
            self._mark_settled(active)

    def _mark_settled(self, active: Active) -> None:
        if self._stop_claiming.is_set():  # only then does anyone wait for it
            with self._idle:
                active.settled = True
                self._idle.notify_all()

    def _handle_outcome(self, active: Active, outcome: Outcome) -> None:
        if active.ctx.cancel_reason == "shutdown" and not outcome.ok:
            # Cancelled by our own shutdown: not the step's failure; _shutdown hands the lease back.
            logger.info("step abandoned at shutdown", extra=self._log_extra(active.step, self._shards[active.source]))
            if self.metrics is not None:
                self.metrics.dropped.labels(active.step.workflow, active.step.node, ABANDONED).inc()
            with self._lock:
                self._abandoned.append(active)
            self._finish(active)
            return
        if active.lost:
            # The engine refused the lease (renew): the step was cancelled, failed
            # or reclaimed, and the result is not this execution's to report (the
            # compare-and-set would refuse it too). Never a failed attempt.
            logger.debug("result dropped: the step is no longer this worker's (%s)", active.ctx.cancel_reason,
                         extra=self._log_extra(active.step, self._shards[active.source]))
            if self.metrics is not None:
                self.metrics.dropped.labels(active.step.workflow, active.step.node, REFUSED).inc()
            self._finish(active)
            return
        reporter = self._shards[active.source].reporter
        assert reporter is not None  # started before the handler pool is fed
        reporter.put(outcome)

    def _handler_finished(self, active: Active, ran_s: float | None = None) -> None:
        if ran_s is not None and self.metrics is not None:
            self.metrics.step(active.step.workflow, active.step.node).duration.observe(ran_s)
        shard = self._shards[active.source]
        with self._lock:  # the lock of self._idle: only _shutdown waits on it, so only then is it notified
            active.handler_done = True
            self._running_handlers -= 1
            shard.held -= 1
            if ran_s is not None:
                shard.handler_s = _average(shard.handler_s, ran_s)
            if self._stop_claiming.is_set():
                self._idle.notify_all()
        if not shard.wake.is_set():  # the loop clears it before it looks at `held` again
            shard.wake.set()

    def _finish(self, active: Active) -> None:
        step = active.step
        with self._lock:
            active.finished = True
            self._active.pop((active.source, *step.execution), None)
            ids = self._by_run.get((active.source, step.run_id))
            if ids is not None:
                ids.discard(step.execution)
                if not ids:
                    del self._by_run[active.source, step.run_id]
            if self._stop_claiming.is_set():
                self._idle.notify_all()
        # After `finished` is set: a heartbeat scheduled concurrently either is
        # seen here or sees `finished` itself (_next_heartbeat).
        shard = self._shards[active.source]
        shard.progress.forget(step)
        timers = shard.timers
        if timers is not None:
            timers.cancel(active.heartbeat)
            timers.cancel(active.timeout)

    def _heartbeat(self, active: Active) -> None:
        """``active``'s heartbeat fell due (on the timer thread): renew its
        lease, and in the same call those of its database's other steps whose
        heartbeats fall due within HEARTBEAT_WINDOW (one ``renew_many``).
        Each step then gets its own next interval, with its own jitter."""
        if active.finished or self._closing.is_set():
            return
        shard = self._shards[active.source]
        batch = self._due_with(active, shard)
        ttl = timedelta(seconds=self.lease_ttl)
        started = time.monotonic()
        try:
            if len(batch) == 1:
                step = active.step
                answers: dict[int, bool | None] = {
                    step.step_id: shard.client.renew(step.step_id, self.name, step.lease_generation, ttl)}
            else:
                answers = shard.client.renew_many(self.name, [a.step.step_id for a in batch],
                                                  [a.step.lease_generation for a in batch], ttl)
        except errors.CycloneError as exc:
            if isinstance(exc, errors.DatabaseUnavailable):
                shard.outage.failed("renew", exc, step_id=active.step.step_id)
            else:
                logger.warning("heartbeat failed: %s", exc, extra=self._log_extra(active.step, shard))
            for a in batch:
                self._count_renewal(a.step, "failed")
                self._next_heartbeat(a, self._heartbeat_interval() / 2)
            return
        shard.outage.answered(started)
        for a in batch:
            self._renewed(a, shard, answers.get(a.step.step_id, False))

    def _due_with(self, active: Active, shard: Shard) -> list[Active]:
        """``active`` and the other steps of ``shard`` whose heartbeat is due
        within HEARTBEAT_WINDOW, their timers cancelled: the caller renews them
        now. (Heartbeats fire on the one timer thread, this caller's, so none of
        theirs is running; a step whose first timer is not set yet is left to it.)"""
        horizon = time.monotonic() + HEARTBEAT_WINDOW
        ids = {active.step.step_id}  # one execution of a step a call: renew_many answers by step id
        others: list[Active] = []
        with self._lock:
            for (source, step_id, _), a in self._active.items():
                if (source == shard.index and a is not active and not a.finished and a.heartbeat is not None
                        and a.heartbeat_due <= horizon and step_id not in ids):
                    ids.add(step_id)
                    others.append(a)
        if others and shard.timers is not None:
            for a in others:
                shard.timers.cancel(a.heartbeat)
        return [active, *others]

    def _heartbeat_interval(self) -> float:
        """One step's next heartbeat interval: lease_ttl / 3, ±10% jitter."""
        return self.lease_ttl / 3 * random.uniform(0.9, 1.1)

    def _renewed(self, active: Active, shard: Shard, ok: bool | None) -> None:
        """The engine's answer to one step's heartbeat: schedule the next one,
        or cancel the handler of a step that is no longer this execution's."""
        step = active.step
        if ok is not None:
            self._count_renewal(step, "renewed" if ok else "refused")
        if active.finished:
            return
        if ok is None:  # another transaction held the row (its completion, a cancel): ask again soon
            self._next_heartbeat(active, min(HELD_RETRY, self._heartbeat_interval() / 2))
            return
        if ok:
            self._next_heartbeat(active, self._heartbeat_interval())
            return
        if active.handler_done:
            logger.debug("lease lost before the result was reported", extra=self._log_extra(step, shard))
            return
        # renew also refuses once the step's timeout has passed on the engine's
        # clock while the lease is still ours: report that as a timeout. (If the
        # lease was really lost, the fail CAS refuses whatever kind we send.)
        if step.timeout is not None:
            if active.ctx.cancel("timeout"):
                logger.warning("renew refused (timeout): cancelling the handler", extra=self._log_extra(step, shard))
            return
        self._lose(active, "lease lost", shard)

    def _lose(self, active: Active, reason: str, shard: Shard) -> None:
        """The engine refused ``active``'s lease (renew): cancel its handler and
        drop whatever it produces (:meth:`_ran`)."""
        active.lost = True
        if active.ctx.cancel(reason):
            logger.warning("renew refused (%s): cancelling the handler", reason,
                           extra=self._log_extra(active.step, shard))

    def _held_steps(self, shard: Shard, run_ids: Collection[UUID]) -> list[ClaimedStep]:
        """The steps of these runs whose handlers run (or wait for a slot) here
        (a listener's, for its check of a ``cyclone_cancel``)."""
        with self._lock:
            return [active.step for run_id in run_ids for key in self._by_run.get((shard.index, run_id), ())
                    if (active := self._active.get((shard.index, *key))) is not None
                    and not active.handler_done and not active.finished]

    def _steps_lost(self, shard: Shard, steps: Sequence[ClaimedStep]) -> None:
        """The engine refused these steps' leases when the listener checked the
        runs a ``cyclone_cancel`` named: their runs were cancelled or failed
        (or the steps are no longer these executions')."""
        for step in steps:
            active = self._active.get((shard.index, *step.execution))
            if active is not None and active.step is step and not active.handler_done:
                self._lose(active, "run cancelled", shard)

    def _count_renewal(self, step: ClaimedStep, outcome: str) -> None:
        if self.metrics is not None:
            self.metrics.renewals.labels(step.workflow, step.node, outcome).inc()

    def _count_reconnect(self) -> None:
        if self.metrics is not None:
            self.metrics.reconnects.labels("pool").inc()

    def _in_flight_now(self) -> float:
        """Handlers running (for the gauge): the steps started here whose handler has not ended, less
        those still queued for a slot."""
        queued = self._handler_pool.queued() if self._handler_pool is not None else 0
        return max(0, self._running_handlers - queued)

    def _prefetched_now(self) -> float:
        """Steps leased and waiting in the handler pool's queue (for the gauge)."""
        return self._handler_pool.queued() if self._handler_pool is not None else 0

    def _next_heartbeat(self, active: Active, delay: float) -> None:
        timers = self._shards[active.source].timers
        assert timers is not None
        active.heartbeat_due = time.monotonic() + delay
        self._schedule_heartbeat(active, timers)

    def _schedule_heartbeat(self, active: Active, timers: Timers) -> None:
        active.heartbeat = timers.call_at(active.heartbeat_due, lambda: self._heartbeat(active))
        if active.finished:  # finished meanwhile: _finish may have missed this one
            timers.cancel(active.heartbeat)

    def _time_out(self, active: Active) -> None:
        if active.handler_done or active.finished:
            return
        if active.ctx.cancel("timeout"):
            logger.warning("step timed out: cancelling the handler",
                           extra=self._log_extra(active.step, self._shards[active.source]))

    def cancel_run(self, run_id: UUID | str, reason: str = "run cancelled") -> int:
        """Cancel the handlers of ``run_id`` running here; returns how many.
        A local decision, asked of nobody: their outcomes are reported as
        usual (the engine's compare-and-set decides). A ``cyclone_cancel``
        notification does not come here: the listener asks the engine first."""
        try:
            rid = UUID(str(run_id))
        except ValueError:
            raise ValueError(f"not a run id: {run_id!r}") from None
        with self._lock:
            targets = [self._active[key] for shard in self._shards for k in self._by_run.get((shard.index, rid), ())
                       if (key := (shard.index, *k)) in self._active]
        n = 0
        for active in targets:
            if not active.handler_done and active.ctx.cancel(reason):
                n += 1
                logger.info("run cancelled: cancelling the handler",
                            extra=self._log_extra(active.step, self._shards[active.source]))
        return n

    def _finish_step(self, shard: Shard, step: ClaimedStep) -> None:
        active = self._active.get((shard.index, *step.execution))
        if active is not None:
            self._finish(active)

    def _on_wakeup(self, shard: Shard) -> None:
        shard.wakeup_pending = True
        shard.wake.set()

    def _wake_all(self) -> None:
        for shard in self._shards:
            shard.wake.set()


# -- the databases ------------------------------------------------------------


class Shard:
    """One database a worker serves (a shard, SPEC 15; one database is the
    one-shard case): its client, reporter, timer thread (its steps'
    heartbeats and timeouts) and outage log, and the state of its claim
    loop. The handler pool and the event loop are the worker's, shared by
    all of them."""

    def __init__(self, index: int, dsn: str, worker: str, label: str | None) -> None:
        self.index = index  # in Worker.dsns; Active.source
        self.dsn = dsn
        # On every log line of this database, when the worker serves several.
        self.extra: dict[str, Any] = {} if label is None else {"database": label}
        self.outage = DatabaseOutage(worker, self.extra)
        self.wake = threading.Event()  # its loop waits on it
        self.wakeup_pending = False
        self.registered = False
        self.announce_failed = False  # register_worker was refused: logged once, not asked again
        self.held = 0  # steps started here whose handler has not ended (running or queued)
        self.reserved = 0  # slots held for claims in flight (its loop, its listener)
        # Moving averages (seconds) for the adaptive prefetch: one claim round
        # trip, one handler run of its steps. None until the first sample.
        self.claim_s: float | None = None
        self.handler_s: float | None = None
        self.reporter: Reporter | None = None
        self.timers: Timers | None = None
        # Steps started whose first heartbeat is not on the timer heap yet, and whether a pass to put them
        # there is due (Worker._first_heartbeats).
        self.unscheduled: collections.deque[Active] = collections.deque()
        self.pass_pending = False
        # ctx.progress of its steps, throttled (made with its client in Worker._open; this one keeps nothing).
        self.progress = ProgressThrottle(lambda step, value: False)
        self._client: Client | None = None

    @property
    def client(self) -> Client:
        if self._client is None:
            raise RuntimeError("worker is not running")
        return self._client

    def open(self, client: Client) -> None:
        self._client = client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def _as_dsns(dsn: str | Sequence[str] | None) -> tuple[str, ...]:
    """The databases a worker serves: ``dsn``, or each of them; None: the one
    :func:`cyclone_py.db.resolve_dsn` names."""
    if dsn is None:
        from cyclone_py import db

        return (db.resolve_dsn(),)
    dsns = (dsn,) if isinstance(dsn, str) else tuple(dsn)
    if not dsns:
        raise ValueError("a worker needs a database: give a DSN, or several")
    if len(set(dsns)) < len(dsns):
        raise ValueError("the same DSN is given twice")
    return dsns


def served_workflows(app: App, names: Sequence[str] | None) -> list[str]:
    """The workflows a worker claims steps of: ``names``, each one the app
    declares, or (None) every one of them."""
    declared = app.workflow_names()
    if names is None:
        return declared
    if isinstance(names, str):
        raise TypeError("workflows must be a sequence of names, not a string")
    chosen = sorted(set(names))
    if not chosen:
        raise ValueError("workflows must name at least one workflow (None serves them all)")
    unknown = [name for name in chosen if name not in app]
    if unknown:
        raise ValueError(f"the app declares no workflow {', '.join(map(repr, unknown))} "
                         f"(its workflows: {', '.join(declared) or 'none'})")
    return chosen


def _shards(worker: str, dsns: Sequence[str]) -> list[Shard]:
    """One :class:`Shard` a database; several are named on their log lines."""
    if len(dsns) == 1:
        return [Shard(0, dsns[0], worker, None)]
    from cyclone_py import db

    return [Shard(i, dsn, worker, db.dsn_label(dsn)) for i, dsn in enumerate(dsns)]


def _limit_values(concurrency: int | None, rate: int | None, period: timedelta | None) -> str:
    """``concurrency 5``, ``rate 100 per 1 minute``, or both."""
    parts = [] if concurrency is None else [f"concurrency {concurrency}"]
    if rate is not None:
        parts.append(f"rate {rate}" + ("" if period is None else f" per {format_interval(period)}"))
    return ", ".join(parts) or "no bound"


def _span_attributes(step: ClaimedStep) -> dict[str, Any]:
    """The attributes an execution's span starts with (:mod:`cyclone_py.tracing`)."""
    return {
        "cyclone.run_id": str(step.run_id),
        "cyclone.step_id": step.step_id,
        "cyclone.attempt": step.attempt,
        "cyclone.lease_generation": step.lease_generation,
        "cyclone.workflow": step.workflow,
        "cyclone.node": step.node,
    }


def _end_span(span: tracing.StepSpan, outcome: Outcome) -> Outcome:
    """``cyclone.outcome``: completed; cancelled when the worker cancelled the
    handler (lease lost, run cancelled, shutdown) and it did not complete;
    else failed (a timeout included). A failure's outcome comes back with the
    span's traceparent, for ``fail`` to keep (the next attempt links to it);
    without OpenTelemetry the outcome is returned as it is."""
    if outcome.ok:
        span.end("completed")
        return outcome
    cancelled = outcome.cancel_reason is not None and outcome.error_kind != "timeout"
    span.end("cancelled" if cancelled else "failed", outcome.error_kind, outcome.error, outcome.cancel_reason)
    traceparent = span.traceparent
    return outcome if traceparent is None else dataclasses.replace(outcome, span=traceparent)


def _average(current: float | None, sample: float, weight: float = 0.1) -> float:
    """An exponentially weighted moving average; the first sample starts it."""
    return sample if current is None else current + weight * (sample - current)


def _hard_exit(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)


def _release(version: str) -> tuple[int, ...]:
    """``"0.22.0"`` -> ``(0, 22, 0)``; a part that is not a number counts as 0 (a local build's suffix)."""
    return tuple(int(part) if part.isdigit() else 0 for part in version.split(".")[:3])
