"""The engine's upkeep: ``cyclone prune`` (finished runs), ``check`` (the
invariants) and ``tick`` (one pass of time-driven work)."""

from __future__ import annotations

import json
import sys
from datetime import timedelta

import click

from cyclone_py.cli.common import Duration, Settings, json_option, pass_settings
from cyclone_py.cli.output import echo_fields, echo_json, echo_table, short_error


@click.command("prune")
@click.option("--older-than", type=Duration(), required=True, metavar="DURATION",
              help="Delete runs that finished longer ago than this (e.g. 30d).")
@click.option("--batch", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Runs deleted per call (each call is one short transaction).")
@click.option("--reindex", is_flag=True,
              help="Then rebuild the engine's indexes (REINDEX TABLE CONCURRENTLY; needs the tables' owner).")
@json_option
@pass_settings
def prune(settings: Settings, older_than: timedelta, batch: int, reindex: bool, as_json: bool) -> None:
    """Delete finished runs and their steps, oldest first, until none is left.

    A finished child run whose parent is still live is kept. PostgreSQL keeps
    an index at its peak size after a large delete: --reindex rebuilds them
    without blocking the engine.
    """
    client = settings.client()
    total = 0
    while (deleted := client.prune(older_than, batch)) > 0:
        total += deleted
    if reindex:
        client.reindex()
    if as_json:
        echo_json({"pruned": total, "reindexed": reindex})
        return
    click.echo(f"pruned {total} run{'' if total == 1 else 's'}" + ("; indexes rebuilt" if reindex else ""))


@click.command("check")
@json_option
@pass_settings
def check(settings: Settings, as_json: bool) -> None:
    """Check the engine's consistency rules (cyclone.check_invariants()).

    Prints every row that breaks one and exits 1, or says the state is
    consistent and exits 0. One snapshot: safe while workers run. Needs
    cyclone_admin.
    """
    violations = settings.client().check_invariants()
    if as_json:
        echo_json([{"invariant": v.invariant, "detail": v.detail} for v in violations])
    elif not violations:
        click.echo("consistent: no invariant is broken")
    else:
        echo_table(["invariant", "detail"],
                   [(v.invariant, json.dumps(v.detail, sort_keys=True)) for v in violations], empty="")
    if violations:
        sys.exit(1)


@click.command("tick")
@click.option("--max-reclaims", type=click.IntRange(min=0), default=0, show_default=True,
              envvar="CYCLONE_MAX_RECLAIMS", show_envvar=True,
              help="Discard a step whose lease expired this many times (0 = unbounded).")
@json_option
@pass_settings
def tick(settings: Settings, max_reclaims: int, as_json: bool) -> None:
    """Run one pass of time-driven work.

    Reclaims expired leases, retries or discards timed-out steps, fails runs
    past their deadline, discards waits past their max_wait, fires the due
    slots of schedules and archives finished runs (docs/history.md).
    """
    result = settings.client().tick(max_reclaims)
    if as_json:
        echo_json(dict(result.raw))
        return
    echo_fields([
        ("reclaimed", result.reclaimed),
        ("retried", result.retried),
        ("discarded", result.discarded),
        ("deadlines", result.deadlines),
        ("max_wait", result.max_wait),
        ("scheduled", result.scheduled),
        ("skipped", result.skipped_slots),
        ("archived", result.archived),
    ])
    if result.discarded_steps:
        click.echo()
        echo_table(
            ["run", "workflow", "node", "reason", "error"],
            [(d.run_id, d.workflow, d.node, d.error_kind, short_error(d.error)) for d in result.discarded_steps],
            empty="",
        )


COMMANDS = (prune, check, tick)
