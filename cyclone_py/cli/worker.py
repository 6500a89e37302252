"""``cyclone worker``: serve an app's workflows on one database or several."""

from __future__ import annotations

import gc
import logging
import os
import sys
from datetime import timedelta
from typing import Any

import click

from cyclone_py import db, errors
from cyclone_py.cli.common import (
    CONNECT_TIMEOUT,
    Duration,
    ListenAddress,
    Settings,
    describe,
    fail,
    log_format_option,
    log_level_option,
    log_to_stderr,
)
from cyclone_py.client import check_reachable


def import_app(spec: str) -> Any:
    """Import ``MODULE:ATTR`` with the working directory on ``sys.path``."""
    from cyclone_py.loader import AppImportError, AppLoadError, load_app

    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return load_app(spec)
    except AppImportError as exc:
        fail(f"cannot import --app {spec}: {exc}")
    except AppLoadError as exc:
        fail(f"--app {spec}: {exc}")


@click.command("worker")
@click.option("--app", "app_spec", required=True, envvar="CYCLONE_APP", show_envvar=True, metavar="MODULE:ATTR",
              help="The App (or Workflow) to serve, imported with the working directory on sys.path.")
@click.option("--workflow", "workflows", metavar="NAME", multiple=True, envvar="CYCLONE_WORKFLOWS", show_envvar=True,
              help="Claim steps of this workflow of the app only; repeat it for several. Default: every workflow "
                   "the app declares.")
@click.option("--concurrency", type=click.IntRange(min=1), default=10, show_default=True,
              envvar="CYCLONE_CONCURRENCY", show_envvar=True, help="Handlers run at once.")
@click.option("--lease-ttl", type=Duration(bare_seconds=True, positive=True), default="30s", show_default=True,
              envvar="CYCLONE_LEASE_TTL", show_envvar=True, metavar="DURATION",
              help="Lease of a claimed step, renewed every ttl/3 while its handler runs.")
@click.option("--poll-interval", type=Duration(bare_seconds=True, positive=True), default="1s", show_default=True,
              envvar="CYCLONE_POLL_INTERVAL", show_envvar=True, metavar="DURATION",
              help="How often to look for due steps and call tick() without a wake-up.")
@click.option("--max-reclaims", type=click.IntRange(min=0), default=None,
              envvar="CYCLONE_MAX_RECLAIMS", show_envvar=True,
              help="Discard a step whose lease expired this many times (0 = unbounded). "
                   "Default: the app's max_reclaims, else 0.")
@click.option("--prefetch", type=click.IntRange(min=0), default=None, envvar="CYCLONE_PREFETCH", show_envvar=True,
              help="Steps leased beyond the running ones (0 = none). Default: adaptive, between "
                   "--concurrency and 50 x --concurrency (at most 500).")
@click.option("--shutdown-grace", type=Duration(bare_seconds=True), default="30s", show_default=True,
              envvar="CYCLONE_SHUTDOWN_GRACE", show_envvar=True, metavar="DURATION",
              help="After SIGTERM, how long in-flight handlers may finish.")
@click.option("--name", default=None, envvar="CYCLONE_WORKER_NAME", show_envvar=True,
              help="Lease owner name. Default: host:pid:random.")
@log_level_option("info")
@log_format_option
@click.option("--metrics-listen", type=ListenAddress(), default=None, envvar="CYCLONE_METRICS_LISTEN",
              show_envvar=True, metavar="HOST:PORT",
              help="Serve the worker's Prometheus metrics on HOST:PORT (:PORT for every interface). Default: off.")
@click.option("--dsn", "dsns", metavar="DSN", multiple=True,
              help="A database to serve; repeat it to serve several (shards), each fairly. Given here, it wins "
                   "over the --dsn before the command and $CYCLONE_DSN.")
@click.make_pass_decorator(Settings)
def worker(
    settings: Settings,
    dsns: tuple[str, ...],
    app_spec: str,
    workflows: tuple[str, ...],
    concurrency: int,
    lease_ttl: timedelta,
    poll_interval: timedelta,
    max_reclaims: int | None,
    prefetch: int | None,
    shutdown_grace: timedelta,
    name: str | None,
    log_level: str,
    log_format: str,
    metrics_listen: str | None,
) -> None:
    """Run a worker for an app's workflows.

    Claims and runs the steps of the App's (or Workflow's) handlers until
    stopped; with --workflow, of the workflows named only. With --dsn
    repeated after the command, one worker serves every database given (the
    shards of a sharded Cyclone), running tick() on each and sharing its
    --concurrency handlers fairly among those with steps due.

    The first SIGTERM (or Ctrl-C) stops claiming and lets in-flight handlers
    finish within --shutdown-grace; a second one exits at once.
    """
    from cyclone_py.worker import Worker, served_workflows
    from cyclone_py.workflow import as_app

    log_to_stderr(log_level, log_format)
    # The worker reports a lost database itself, once (its own log lines);
    # the pool's per-connection warnings say the same again, many times.
    if logging.getLogger().level > logging.DEBUG:
        logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    app = import_app(app_spec)
    if workflows:
        try:  # before the databases: a name the app does not declare is the command line's mistake
            served_workflows(as_app(app), workflows)
        except ValueError as exc:
            fail(f"--workflow: {exc}")
    targets = list(dsns) or [settings.dsn(start=True)]  # a worker serves the database: it may start it
    for target in targets:
        try:
            check_reachable(target, connect_timeout=CONNECT_TIMEOUT)
        except errors.CycloneError as exc:
            fail(f"{db.dsn_label(target)}: {describe(exc)}")
    runner = Worker(
        app,
        targets,
        concurrency=concurrency,
        lease_ttl=lease_ttl,
        poll_interval=poll_interval,
        max_reclaims=max_reclaims,
        shutdown_grace=shutdown_grace,
        name=name,
        prefetch=prefetch,
        metrics_listen=metrics_listen,
        workflows=workflows or None,
    )
    # What exists now (the modules, the app, the worker) lives as long as the process: out of the garbage
    # collector's way, its collections walk only what the steps make. The worker's CPU a step 0.7x in a
    # drain of no-op steps (docs/performance.md, "The garbage collector").
    gc.collect()
    gc.freeze()
    runner.run()


COMMANDS = (worker,)
