"""The worker's own Prometheus metrics: :class:`WorkerMetrics` and its HTTP endpoint.

Counters of the work one worker does (SPEC 14: the engine's gauges are
``cyclone.metrics()``'s; counters of work done belong to the process that
does it), in a :class:`prometheus_client.CollectorRegistry` of the worker's
own, so that several workers in one process (or a test session) never
collide; served by ``prometheus_client``'s own HTTP server
(:meth:`WorkerMetrics.serve`). Labels are bounded: the workflow and node
names of the app's definitions, the engine's error kinds, a few fixed
outcomes; never a run id, a step id or an input.

The worker calls these at the one place each event happens (docs/operations.md
lists the metrics). The per-step ones go through :meth:`WorkerMetrics.step`,
whose label children are made once per (workflow, node), so that a step costs
a dictionary lookup and an increment, not a ``labels()`` call. Nothing here
talks to the database or decides anything: metrics only observe.
"""

from __future__ import annotations

import importlib.metadata
import re
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["MetricsServerError", "StepSeries", "WorkerMetrics", "metrics_url", "parse_listen", "serve", "stop_serving"]

PREFIX = "cyclone_worker"

# Handler durations: no-op handlers take tens of microseconds, real ones
# milliseconds to minutes.
HANDLER_BUCKETS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
                   300.0, 900.0, 3600.0)
# One round trip to the database: claim, complete_many.
ROUND_TRIP_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

# A result the engine did not take, and why (the ``outcome`` label of results_dropped_total).
REFUSED = "refused"  # the compare-and-set refused it: the lease was lost (reclaimed, timed out, cancelled)
UNREPORTED = "unreported"  # the database stayed unavailable for a lease TTL: left to the lease
ABANDONED = "abandoned"  # cancelled by the worker's own shutdown: not reported, left to the lease

_LISTEN = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^:\[\]\s]*)):(?P<port>[0-9]{1,5})$")


class MetricsServerError(OSError):
    """The worker's metrics endpoint could not be served."""


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6, ``:PORT`` for every interface;
    port 0 picks a free one) as ``(host, port)``; ValueError otherwise."""
    m = _LISTEN.match(text.strip())
    port = int(m["port"]) if m else -1
    if m is None or not 0 <= port <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:9100, :9100 or [::1]:9100)")
    host = m["v6"] if m["v6"] is not None else m["host"] or "0.0.0.0"
    return host, port


@dataclass(frozen=True)
class StepSeries:
    """The label children of one (workflow, node): what a step's hot path touches."""

    started: Counter
    completed: Counter
    duration: Histogram


class WorkerMetrics:
    """The counters, histograms and gauges of one worker, in a registry of its own."""

    def __init__(self, worker: str, steps: Iterable[tuple[str, str]] = ()) -> None:
        # Imported here: ``import cyclone_py`` (every CLI command, every
        # service using the Client) does not pay for a library only a worker
        # with metrics uses.
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, ProcessCollector

        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._lock = threading.Lock()
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.address: tuple[str, int] | None = None

        Info(f"{PREFIX}", "The worker: its lease owner name and the cyclone_py version.", registry=r).info(
            {"worker": worker, "version": _version()}
        )
        ProcessCollector(registry=r)
        step_labels = ("workflow", "node")
        self.started = Counter(f"{PREFIX}_steps_started_total", "Handlers started.", step_labels, registry=r)
        self.completed = Counter(
            f"{PREFIX}_steps_completed_total", "Completions the engine accepted.", step_labels, registry=r
        )
        self.failed = Counter(
            f"{PREFIX}_steps_failed_total",
            "Failures the engine accepted, by error kind; outcome: retried (due again) or discarded.",
            (*step_labels, "error_kind", "outcome"),
            registry=r,
        )
        self.dropped = Counter(
            f"{PREFIX}_results_dropped_total",
            "Results the engine did not take; outcome: refused (lease lost), unreported (database down), "
            "abandoned (shutdown).",
            (*step_labels, "outcome"),
            registry=r,
        )
        self.duration = Histogram(
            f"{PREFIX}_handler_duration_seconds",
            "How long handlers ran.",
            step_labels,
            buckets=HANDLER_BUCKETS,
            registry=r,
        )
        self.claimed = Counter(f"{PREFIX}_steps_claimed_total", "Steps leased by claim.", registry=r)
        self.claim_seconds = Histogram(
            f"{PREFIX}_claim_duration_seconds",
            "Round trip of one claim (empty ones included).",
            buckets=ROUND_TRIP_BUCKETS,
            registry=r,
        )
        self.complete_seconds = Histogram(
            f"{PREFIX}_complete_duration_seconds",
            "Round trip of one complete_many batch.",
            buckets=ROUND_TRIP_BUCKETS,
            registry=r,
        )
        self.renewals = Counter(
            f"{PREFIX}_renewals_total",
            "Heartbeat renewals; outcome: renewed, refused (lease lost or step timed out) or failed (database error).",
            (*step_labels, "outcome"),
            registry=r,
        )
        self.reconnects = Counter(
            f"{PREFIX}_reconnects_total",
            "Database connections lost and retried; connection: listener (its LISTEN connection) or pool "
            "(claims, ticks, reports).",
            ("connection",),
            registry=r,
        )
        self.in_flight = Gauge(f"{PREFIX}_steps_in_flight", "Handlers running now.", registry=r)
        self.prefetched = Gauge(
            f"{PREFIX}_steps_prefetched", "Steps leased and waiting for a free handler slot.", registry=r
        )
        self._steps: dict[tuple[str, str], StepSeries] = {}
        for workflow, node in steps:  # zeros from the start for every step node of the app
            self.step(workflow, node)
        for connection in ("listener", "pool"):
            self.reconnects.labels(connection)

    def step(self, workflow: str, node: str) -> StepSeries:
        """The children of (workflow, node), made on first use."""
        series = self._steps.get((workflow, node))
        if series is None:
            with self._lock:
                series = self._steps.get((workflow, node))
                if series is None:
                    series = StepSeries(
                        started=self.started.labels(workflow, node),
                        completed=self.completed.labels(workflow, node),
                        duration=self.duration.labels(workflow, node),
                    )
                    self._steps[(workflow, node)] = series
        return series

    def gauges(self, in_flight: Callable[[], float], prefetched: Callable[[], float]) -> None:
        """Read the two gauges from the worker at scrape time (nothing on the hot path)."""
        self.in_flight.set_function(in_flight)
        self.prefetched.set_function(prefetched)

    # -- the endpoint -------------------------------------------------------

    def serve(self, host: str, port: int) -> tuple[str, int]:
        """Serve ``/metrics`` on ``host:port`` in a daemon thread; the address
        bound (port 0: the one picked). MetricsServerError when the address
        cannot be bound."""
        self._server, self._thread, self.address = serve(self.registry, host, port)
        return self.address

    def close(self) -> None:
        """Stop the endpoint (waits up to its poll interval, 0.5 s) and free the port."""
        server, self._server = self._server, None
        thread, self._thread = self._thread, None
        if server is not None:
            stop_serving(server, thread)

    @property
    def url(self) -> str | None:
        """``http://HOST:PORT/metrics`` once served."""
        return None if self.address is None else metrics_url(self.address)


def serve(registry: CollectorRegistry, host: str, port: int) -> tuple[WSGIServer, threading.Thread, tuple[str, int]]:
    """Serve ``registry`` on ``http://host:port/metrics`` with ``prometheus_client``'s
    server, in a daemon thread: (the server, its thread, the address bound; port 0:
    the one picked). MetricsServerError when the address cannot be bound. Shared by
    the worker's endpoint and ``cyclone exporter``'s."""
    from prometheus_client import start_http_server

    try:
        server, thread = start_http_server(port, host, registry=registry)
    except (OSError, UnicodeError) as exc:
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if isinstance(exc, socket.gaierror):
            reason = f"unknown host ({reason})"
        raise MetricsServerError(f"cannot serve metrics on {where}: {reason}") from exc
    bound = server.server_address
    return server, thread, (str(bound[0]), int(bound[1]))


def stop_serving(server: WSGIServer, thread: threading.Thread | None) -> None:
    """Stop a :func:`serve` endpoint (waits up to its poll interval, 0.5 s) and free the port."""
    server.shutdown()
    server.server_close()
    if thread is not None:
        thread.join(5)


def metrics_url(address: tuple[str, int]) -> str:
    """``http://HOST:PORT/metrics`` (``[HOST]`` for IPv6)."""
    host, port = address
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/metrics"


def _version() -> str:
    try:
        return importlib.metadata.version("cyclone_py")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout without installing
        return "unknown"
