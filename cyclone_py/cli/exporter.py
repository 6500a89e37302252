"""``cyclone exporter``: the engine's gauges (``cyclone.metrics()``) served to Prometheus."""

from __future__ import annotations

import logging
import signal as os_signal
import threading
from datetime import timedelta

import click

from cyclone_py import errors
from cyclone_py.cli.common import (
    Duration,
    ListenAddress,
    Settings,
    log_format_option,
    log_level_option,
    log_to_stderr,
    pass_settings,
)
from cyclone_py.client import check_reachable
from cyclone_py.metrics import parse_listen


@click.command("exporter")
@click.option("--listen", type=ListenAddress(), default="127.0.0.1:9464", show_default=True,
              envvar="CYCLONE_EXPORTER_LISTEN", show_envvar=True, metavar="HOST:PORT",
              help="Serve the engine's gauges on HOST:PORT (:PORT for every interface).")
@click.option("--scrape-timeout", type=Duration(bare_seconds=True, positive=True), default="5s",
              show_default=True, envvar="CYCLONE_EXPORTER_SCRAPE_TIMEOUT", show_envvar=True, metavar="DURATION",
              help="How long a scrape waits for a database connection, and for metrics(), before it "
                   "answers up 0.")
@log_level_option("info")
@log_format_option
@pass_settings
def exporter(settings: Settings, listen: str, scrape_timeout: timedelta, log_level: str, log_format: str) -> None:
    """Serve cyclone.metrics() to Prometheus.

    Each scrape of http://HOST:PORT/metrics calls cyclone.metrics() once and
    serves its gauges, with cyclone_exporter_up (0 when the database did not
    answer: the endpoint still answers, and the next scrape connects again) and
    cyclone_exporter_scrape_duration_seconds. Run one per database, not one per
    worker. SIGTERM or Ctrl-C stops it.
    """
    from cyclone_py.exporter import Exporter

    log_to_stderr(log_level, log_format)
    log = logging.getLogger("cyclone_py.exporter")
    host, port = parse_listen(listen)
    dsn = settings.dsn()
    timeout = scrape_timeout.total_seconds()
    try:
        check_reachable(dsn, connect_timeout=max(1, round(timeout)))
    except errors.DatabaseUnavailable as exc:  # served all the same, with up 0, until it answers
        log.warning("database unavailable at start: %s", " ".join(str(exc).split()))
    stop = threading.Event()
    service = Exporter(dsn, timeout=timeout)
    url = service.serve(host, port)
    previous = {sig: os_signal.signal(sig, lambda *_: stop.set()) for sig in (os_signal.SIGTERM, os_signal.SIGINT)}
    log.info("exporter started", extra={"url": url})
    try:
        while not stop.wait(1.0):
            pass
    finally:
        service.close()
        for sig, old in previous.items():
            os_signal.signal(sig, old)
    log.info("exporter stopped", extra={"url": url})


COMMANDS = (exporter,)
