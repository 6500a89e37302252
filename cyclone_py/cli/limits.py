"""``cyclone limits``: list limits and their buckets, set or remove one (docs/flow-control.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import click

from cyclone_py.cli.common import Duration, Settings, fail, json_option, pass_settings
from cyclone_py.cli.output import as_dict, echo_json, echo_table
from cyclone_py.client import Client, LimitRow
from cyclone_py.formatting import fmt_interval


def _bucket(name: str) -> str:
    return repr(name)  # '' for the bucket of a limit without a key


def _rate(row: LimitRow) -> str:
    return "-" if row.rate is None else f"{row.rate}/{fmt_interval(row.period)}"


def _limits_json(as_json: bool) -> bool:
    """``--json`` given to the subcommand or to ``cyclone limits`` itself."""
    return as_json or bool(click.get_current_context().meta.get("cyclone.limits.json"))


def _limit_document(row: LimitRow) -> dict[str, Any]:
    return {"name": row.name, "concurrency": row.concurrency, "rate": row.rate,
            "period": None if row.period is None else row.period.total_seconds()}


def _list_limits(client: Client, *, as_json: bool) -> None:
    rows = client.limits()
    if as_json:
        echo_json([as_dict(r) for r in rows])
        return
    echo_table(
        ["name", "bucket", "concurrency", "running", "rate", "claims in period", "available"],
        [(r.name, _bucket(r.bucket), r.concurrency, r.running, _rate(r), r.claims_in_period, r.available)
         for r in rows],
        empty="no limits",
    )


@click.group("limits", invoke_without_command=True)
@json_option
@pass_settings
@click.pass_context
def limits(ctx: click.Context, settings: Settings, as_json: bool) -> None:
    """List limits and their buckets (`cyclone limits`), or change one.

    A limit bounds how many steps of each of its buckets run at once
    (concurrency) and how many are claimed in any period (rate). Workers
    register the limits their app declares when they start, and the app's
    values win over those set here.
    """
    ctx.meta["cyclone.limits.json"] = as_json
    if ctx.invoked_subcommand is None:
        _list_limits(settings.client(), as_json=as_json)


@limits.command("list")
@json_option
@pass_settings
def limits_list(settings: Settings, as_json: bool) -> None:
    """List each limit's buckets: running steps, claims in the current period,
    and available (the due steps that take the bucket and are not running)."""
    _list_limits(settings.client(), as_json=_limits_json(as_json))


@limits.command("set")
@click.argument("name")
@click.option("--concurrency", type=int, default=None, metavar="N", help="At most N running steps per bucket.")
@click.option("--rate", type=int, default=None, metavar="N", help="At most N claims per bucket in any --per.")
@click.option("--per", type=Duration(), default=None, metavar="DURATION", help="The rate's period (1s, 1m, 1h).")
@json_option
@pass_settings
def limits_set(settings: Settings, name: str, concurrency: int | None, rate: int | None, per: timedelta | None,
               as_json: bool) -> None:
    """Create or replace limit NAME (cyclone.define_limit).

    Every value is set anew: one not given is no bound. Give --concurrency,
    or --rate with --per, or both. Applies to the next claim; lowering it
    cancels nothing. A worker whose app declares NAME sets the app's values
    again when it starts.
    """
    client = settings.client()
    client.define_limit(name, concurrency, rate, per)
    row = next(r for r in client.limits(name) if r.bucket == "")
    if _limits_json(as_json):
        echo_json(_limit_document(row))
        return
    values = [] if row.concurrency is None else [f"concurrency {row.concurrency}"]
    if row.rate is not None:
        values.append(f"rate {row.rate} per {fmt_interval(row.period)}")
    click.echo(f"limit {name!r} set: {', '.join(values)}")


@limits.command("rm")
@click.argument("name")
@json_option
@pass_settings
def limits_rm(settings: Settings, name: str, as_json: bool) -> None:
    """Remove limit NAME (cyclone.drop_limit).

    Refused while a workflow definition names it or an unfinished step takes
    it. A worker whose app still declares it registers it again when it starts.
    """
    if not settings.client().drop_limit(name):
        fail(f'limit "{name}" not found')
    if _limits_json(as_json):
        echo_json({"name": name, "removed": True})
        return
    click.echo(f"limit {name!r} removed")


COMMANDS = (limits,)
