"""``cyclone exporter``: the engine's gauges (``cyclone.metrics()``) as Prometheus metrics.

:class:`EngineCollector` is a ``prometheus_client`` custom collector: each
scrape calls :meth:`Client.metrics` once (nothing is cached between scrapes)
and turns each SQL gauge name into a gauge family whose samples carry each row's
own ``labels`` (SPEC 14 gives one family two label sets: a keyed limit's total
is ``{limit}``, an unkeyed limit's bucket ``{limit, bucket}``; Prometheus takes
both in one family, and a made-up ``bucket=""`` on the total would read as a
bucket it is not). Beside
them, the scrape's own ``cyclone_exporter_up`` (1 when ``metrics()`` answered,
0 otherwise) and ``cyclone_exporter_scrape_duration_seconds``: a database that
cannot be reached still gets an answer, with up 0, and the next scrape connects
again. :class:`Exporter` serves the collector with ``prometheus_client``'s HTTP
server (:func:`cyclone_py.metrics.serve`, the worker's too).

One exporter per database: the gauges are the database's, the same whichever
process asks, so one served by every worker would be counted once a worker.
Nothing here decides anything about the engine: every number is the SQL's.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric as Family
from prometheus_client.registry import Collector

from cyclone_py import errors
from cyclone_py.client import Client, Metric, check_reachable
from cyclone_py.metrics import metrics_url, serve, stop_serving

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

__all__ = ["HELP", "EngineCollector", "Exporter", "families"]

logger = logging.getLogger(__name__)

PREFIX = "cyclone_exporter"

#: The HELP text of each gauge of ``cyclone.metrics()`` (docs/sql-reference.md#metrics);
#: a gauge not listed here is exported all the same, with a generic one.
HELP: dict[str, str] = {
    "cyclone_runs": "Runs of each defined workflow in each live state (running, paused).",
    "cyclone_steps": "Steps of each workflow in each live state (pending, available, running, waiting).",
    "cyclone_ready_lag_seconds": "Now minus the oldest scheduled_at of due available steps of running runs; "
                                 "0 when none.",
    "cyclone_dlq_steps": "Discarded steps kept (dead letters), by workflow and error kind.",
    "cyclone_expired_leases": "Running steps past their lease: work the sweep has yet to reclaim.",
    "cyclone_workers": "Distinct lease owners holding a running step.",
    "cyclone_workers_alive": "Registered workers seen within the last 60 seconds, idle ones included.",
    "cyclone_schedule_next_fire_timestamp_seconds": "Unix time of the next slot of each schedule; paused ones "
                                                    "omitted.",
    "cyclone_limit_running": "Running slots of each limit (bucket \"\" for a limit without a key; a keyed "
                             "limit's total).",
    "cyclone_limit_saturated_buckets": "Buckets of each limit with no room (running slots or rate window full).",
}

_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def _label_value(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def families(rows: Sequence[Metric]) -> list[Family]:
    """The gauge families of ``metrics()``'s rows, one per name (every gauge of
    :data:`HELP` included, without samples when it has no row), each sample with
    its row's labels. A name or a label name Prometheus does not accept is
    skipped, with a warning."""
    by_name: dict[str, list[Metric]] = {name: [] for name in HELP}
    for row in rows:
        by_name.setdefault(row.name, []).append(row)
    out: list[Family] = []
    for name, members in by_name.items():
        if not _NAME.match(name) or name.startswith("__"):
            logger.warning("metrics() gauge skipped: not a Prometheus name", extra={"metric": name})
            continue
        keys = {str(k) for row in members for k in row.labels}
        bad = [k for k in sorted(keys) if not _LABEL.match(k) or k.startswith("__")]
        if bad:
            logger.warning("metrics() gauge skipped: not Prometheus label names",
                           extra={"metric": name, "labels": ",".join(bad)})
            continue
        family = Family(name, HELP.get(name, f"cyclone.metrics() gauge {name}."), "gauge")
        seen: set[tuple[tuple[str, str], ...]] = set()
        for row in members:
            labels = {str(k): _label_value(v) for k, v in row.labels.items()}
            key = tuple(sorted(labels.items()))
            if key not in seen:  # one sample per label set
                seen.add(key)
                family.add_sample(name, labels, float(row.value))
        out.append(family)
    return out


class EngineCollector(Collector):
    """A ``prometheus_client`` collector over ``cyclone.metrics()``.

    One scrape at a time (a lock): a scrape holds the one connection of its
    :class:`Client`. The client is made on the first scrape, after a check that
    the database answers (so an unreachable one fails fast, with libpq's
    reason), and dropped when the database became unavailable: a scrape whose
    connection the server had closed tries once more on a new one, and after a
    failure the next scrape connects afresh instead of waiting out the pool's
    reconnect backoff.
    """

    def __init__(self, dsn: str, *, timeout: float = 5.0) -> None:
        self.dsn = dsn
        self.timeout = timeout
        self._client: Client | None = None
        self._lock = threading.Lock()
        self._up: bool | None = None  # the last scrape's, for logging the changes only

    def describe(self) -> list[Family]:
        """Nothing: registering the collector must not call the database."""
        return []

    def collect(self) -> Iterator[Family]:
        with self._lock:
            started = time.perf_counter()
            rows: list[Metric] | None = None
            try:
                rows = self._metrics()
            except errors.CycloneError as exc:
                self._failed(exc)
            except Exception:  # a bug of ours: still an answer, with up 0
                logger.exception("metrics() scrape failed")
                self._up = False
            elapsed = time.perf_counter() - started
            if rows is not None and self._up is not True:
                logger.info("database answered metrics()", extra={"rows": len(rows)})
            self._up = rows is not None
        if rows is not None:
            yield from families(rows)
        up = GaugeMetricFamily(f"{PREFIX}_up", "1 when this scrape's cyclone.metrics() answered, 0 when it "
                               "failed (the database unreachable, the schema missing, a grant missing).")
        up.add_metric([], 1.0 if rows is not None else 0.0)
        yield up
        duration = GaugeMetricFamily(f"{PREFIX}_scrape_duration_seconds",
                                     "How long this scrape's cyclone.metrics() took (a failed one included).")
        duration.add_metric([], elapsed)
        yield duration

    def _metrics(self) -> list[Metric]:
        fresh = self._client is None
        client = self._client_now()
        try:
            return client.metrics()
        except errors.DatabaseUnavailable:
            self._drop_client()
            if fresh:
                raise
            # A connection the server closed (a restart, a terminated backend):
            # once more, on a new connection, before the scrape answers up 0.
            return self._client_now().metrics()

    def _drop_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _client_now(self) -> Client:
        if self._client is None:
            check_reachable(self.dsn, connect_timeout=max(1, round(self.timeout)))
            # A slow database (a lock, a table scan) answers the scrape with
            # up 0 after the timeout, not a scrape that hangs past Prometheus's.
            self._client = Client(self.dsn, min_size=1, max_size=1, timeout=self.timeout,
                                  application_name="cyclone-exporter", statement_timeout=self.timeout)
        return self._client

    def _failed(self, exc: errors.CycloneError) -> None:
        if isinstance(exc, errors.DatabaseUnavailable):
            self._drop_client()  # connect afresh on the next scrape
        message = " ".join(str(exc).split())
        extra = {"sqlstate": exc.sqlstate} if exc.sqlstate else {}
        if self._up is not False:  # logged when it starts failing; again at debug
            logger.warning("metrics() failed: %s", message, extra=extra)
        else:
            logger.debug("metrics() failed again: %s", message, extra=extra)

    def close(self) -> None:
        with self._lock:
            self._drop_client()


class Exporter:
    """The collector in a registry of its own (with the process collector),
    served on ``http://HOST:PORT/metrics``."""

    def __init__(self, dsn: str, *, timeout: float = 5.0) -> None:
        self.collector = EngineCollector(dsn, timeout=timeout)
        self.registry: CollectorRegistry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.collector)
        ProcessCollector(registry=self.registry)
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.address: tuple[str, int] | None = None

    def serve(self, host: str, port: int) -> str:
        """Start serving (a daemon thread); the URL. MetricsServerError when the
        address cannot be bound."""
        self._server, self._thread, self.address = serve(self.registry, host, port)
        return metrics_url(self.address)

    def close(self) -> None:
        """Stop serving and close the database connection."""
        server, self._server = self._server, None
        thread, self._thread = self._thread, None
        if server is not None:
            stop_serving(server, thread)
        self.collector.close()
