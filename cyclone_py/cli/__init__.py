"""The ``cyclone`` command line (click).

Every command reads the target database from ``--dsn`` / ``CYCLONE_DSN`` /
``DATABASE_URL``, else the checkout's embedded database; options also read
the ``CYCLONE_*`` variables shown in ``--help`` (docs/cli.md lists them).
Listings print aligned tables, or JSON with ``--json``.

Exit codes: 0 success; 1 bad input, a refused action or a failure, with one
line on stderr and never a traceback; 2 a click usage error (a missing
argument, an unknown option). ``submit --wait`` exits 0 only when the run
completed.

The package parses, formats and prints: every database call goes through
:class:`cyclone_py.client.Client`, and every rule lives in SQL. This module
is the group, :data:`main`; each command group of its tree has a module
(``runs``: submit, runs, run; ``steps``: steps, dlq; ``explain``;
``actions``: retry, cancel, pause, resume, signal, rerun; ``events``: events emit,
events list, signal-with-start; ``workflows``;
``limits``; ``schedules``: schedules, cron-next; ``maintenance``: prune,
check, tick; ``worker``; ``workers``: the registry; ``exporter``; ``top``; ``ui``; ``migrate``;
``dev_db``; ``shards``; ``conformance``: the kit). ``common`` holds what they share (the one-line
errors, the DSN, the option types), ``output`` how they print, and
:mod:`cyclone_py.formatting` how a time or a duration reads.
"""

from __future__ import annotations

import os
from typing import Any

import click

from cyclone_py import db, errors
from cyclone_py.cli import (
    actions,
    conformance,
    dev_db,
    events,
    explain,
    exporter,
    limits,
    maintenance,
    migrate,
    runs,
    schedules,
    shards,
    steps,
    top,
    ui,
    worker,
    workers,
    workflows,
)
from cyclone_py.cli.common import CycloneGroup, Settings, describe, fail, open_client, parse_duration
from cyclone_py.formatting import fmt_time
from cyclone_py.version import __version__

__all__ = ["fmt_time", "main", "parse_duration"]  # the last two: how the CLI reads a duration and prints a time

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


def _version_option(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """``--version`` and the group's ``--dsn`` are both eager, so that ``--version`` sees a ``--dsn``
    given before or after it: each records itself, and the second one processed prints."""
    if ctx.resilient_parsing:
        return value
    ctx.meta[f"cyclone.{param.name}"] = value
    if "cyclone.version" in ctx.meta and "cyclone.dsn" in ctx.meta and ctx.meta["cyclone.version"]:
        dsn = ctx.meta["cyclone.dsn"] or os.environ.get("CYCLONE_DSN") or os.environ.get("DATABASE_URL") or None
        print_version(dsn)
        ctx.exit()
    return value


@click.group(cls=CycloneGroup, context_settings=CONTEXT_SETTINGS)
@click.option(
    "--dsn",
    metavar="DSN",
    default=None,
    is_eager=True,
    callback=_version_option,
    help="libpq DSN or URL. Default: $CYCLONE_DSN, else $DATABASE_URL, else the embedded database.",
)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_version_option,
              help="Print the package's release and, with a DSN given or set, the database's engine release.")
@click.pass_context
def main(ctx: click.Context, dsn: str | None) -> None:
    """Cyclone: a durable workflow engine on PostgreSQL."""
    ctx.obj = Settings(dsn or os.environ.get("CYCLONE_DSN") or os.environ.get("DATABASE_URL") or None)


def print_version(dsn: str | None) -> None:
    """``cyclone X.Y.Z``, then, with a DSN, the release of the engine that database holds
    (``Client.engine_version``: ``cyclone.version()``); an unreachable database is one line on
    stderr and exit 1, as for any command."""
    click.echo(f"cyclone {__version__} (package cyclone_py)")
    if dsn is None:
        return
    try:
        with open_client(dsn) as client:
            engine = client.engine_version()
    except errors.CycloneError as exc:
        if exc.sqlstate == "3F000":  # no schema cyclone: nothing deployed
            click.echo(f"database {db.dsn_label(dsn)}: no Cyclone engine deployed (run: cyclone migrate)")
            return
        fail(f"database {db.dsn_label(dsn)}: {describe(exc)}")
    if engine is None:
        click.echo(f"database {db.dsn_label(dsn)}: Cyclone engine older than 0.22.0 (it has no cyclone.version(); "
                   "cyclone migrate upgrades it)")
    else:
        click.echo(f"database {db.dsn_label(dsn)}: Cyclone engine {engine}")


for _group in (dev_db, shards, migrate, worker, workers, exporter, ui, top, runs, steps, workflows, actions, events,
               limits, explain, schedules, maintenance, conformance):
    for _command in _group.COMMANDS:
        main.add_command(_command)
