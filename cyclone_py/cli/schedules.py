"""``cyclone schedules`` and ``cyclone cron-next``: cron schedules, and a preview of
a cron's fire times (docs/schedules.md)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import click

from cyclone_py.cli.common import JSON, MOMENT, NOW, Duration, Settings, fail, json_option, moment, pass_settings
from cyclone_py.cli.output import as_dict, echo_json, echo_table
from cyclone_py.client import Client, ScheduleRow
from cyclone_py.formatting import fmt_local, fmt_time
from cyclone_py.vocabulary import OVERLAP_POLICIES


def _schedule_document(row: ScheduleRow) -> dict[str, Any]:
    """A schedule for ``--json``: the view's columns, the last run's state, and
    the next slot on the schedule's own clock."""
    doc = as_dict(row)
    del doc["next_fire_wall"]
    doc["next_fire_local"] = row.next_fire_local
    return doc


def _get_schedule(client: Client, name: str) -> ScheduleRow:
    rows = client.schedules(name)
    if not rows:
        fail(f'schedule "{name}" not found')
    return rows[0]


def _schedules_json(as_json: bool) -> bool:
    """``--json`` given to the subcommand or to ``cyclone schedules`` itself."""
    ctx = click.get_current_context()
    return as_json or bool(ctx.meta.get("cyclone.schedules.json"))


def _list_schedules(client: Client, *, as_json: bool) -> None:
    rows = client.schedules()
    if as_json:
        echo_json([_schedule_document(r) for r in rows])
        return
    echo_table(
        ["name", "cron", "timezone", "workflow", "next fire", "next fire (utc)", "last slot", "last run", "state",
         "paused", "overlap"],
        [(r.name, r.cron, r.timezone, r.workflow, fmt_local(r.next_fire_local), r.next_fire_at, r.last_slot,
          r.last_run_id, r.last_run_state, "yes" if r.paused else "no", r.overlap) for r in rows],
        empty="no schedules",
    )


@click.group("schedules", invoke_without_command=True)
@json_option
@pass_settings
@click.pass_context
def schedules(ctx: click.Context, settings: Settings, as_json: bool) -> None:
    """List schedules (`cyclone schedules`), or change one.

    A schedule submits a workflow at every fire time of a cron in a time zone
    (the run's input gets `scheduled_for`, the slot in UTC). Workers register
    the schedules their app declares when they start; these commands act on the
    engine's schedules directly.
    """
    ctx.meta["cyclone.schedules.json"] = as_json
    if ctx.invoked_subcommand is None:
        _list_schedules(settings.client(), as_json=as_json)


@schedules.command("list")
@json_option
@pass_settings
def schedules_list(settings: Settings, as_json: bool) -> None:
    """List schedules: next fire time (in the schedule's zone and in UTC), last slot, last run and its state."""
    _list_schedules(settings.client(), as_json=_schedules_json(as_json))


@schedules.command("set")
@click.argument("name")
@click.argument("cron")
@click.argument("workflow")
@click.option("--input", "input_", type=JSON, metavar="JSON|@FILE",
              help="The runs' input, a JSON object (inline, @FILE or @-). Default: {}.")
@click.option("--timezone", "--tz", "timezone", default="UTC", show_default=True, metavar="TZ",
              help="The time zone whose wall clock the cron reads (a name of pg_timezone_names).")
@click.option("--overlap", type=click.Choice(OVERLAP_POLICIES), default="skip", show_default=True,
              help="While a run of the schedule is unfinished: skip the slot, allow another run, "
                   "or cancel_other (cancel it, then submit).")
@click.option("--catchup", type=Duration(), default="1h", show_default=True, metavar="DURATION",
              help="Slots older than this when a tick sees them are skipped, except the latest (0s: latest only).")
@click.option("--deadline", type=Duration(), metavar="DURATION", help="Each run's deadline (30s, 5m, 1h30m).")
@json_option
@pass_settings
def schedules_set(settings: Settings, name: str, cron: str, workflow: str, input_: Any, timezone: str,
                  overlap: str, catchup: timedelta, deadline: timedelta | None, as_json: bool) -> None:
    """Create or replace schedule NAME: run WORKFLOW at every fire time of CRON.

    CRON has five fields (minute hour day-of-month month day-of-week) or is one
    of @yearly @monthly @weekly @daily @hourly; quote it. Replacing a schedule
    sets every option anew (an option not given goes back to its default) but
    keeps the slots already fired and the paused state.
    """
    client = settings.client()
    client.schedule(name, cron, workflow, input_, timezone, overlap, catchup, deadline)
    row = _get_schedule(client, name)
    if _schedules_json(as_json):
        echo_json(_schedule_document(row))
        return
    state = "; paused" if row.paused else ""
    click.echo(f"schedule {name!r} set: {workflow} at {cron!r} ({timezone}); next fire "
               f"{fmt_local(row.next_fire_local)} ({fmt_time(row.next_fire_at)}){state}")


@schedules.command("rm")
@click.argument("name")
@json_option
@pass_settings
def schedules_rm(settings: Settings, name: str, as_json: bool) -> None:
    """Remove schedule NAME; its runs stay.

    A worker whose app still declares it registers it again when it starts.
    """
    if not settings.client().unschedule(name):
        fail(f'schedule "{name}" not found')
    if _schedules_json(as_json):
        echo_json({"name": name, "removed": True})
        return
    click.echo(f"schedule {name!r} removed (its runs stay)")


def _pause_or_resume(settings: Settings, name: str, *, pause: bool, as_json: bool) -> None:
    client = settings.client()
    changed = client.pause_schedule(name) if pause else client.resume_schedule(name)
    if not changed:
        _get_schedule(client, name)  # missing: say so, exit 1
    verb = "paused" if pause else "resumed"
    if _schedules_json(as_json):
        echo_json({"name": name, "paused": pause, "changed": changed})
        return
    if changed:
        click.echo(f"schedule {name!r} {verb}")
    else:
        click.echo(f"schedule {name!r} is {'already' if pause else 'not'} paused; nothing changed")


@schedules.command("pause")
@click.argument("name")
@json_option
@pass_settings
def schedules_pause(settings: Settings, name: str, as_json: bool) -> None:
    """Pause schedule NAME: it fires nothing until resumed.

    Its runs already submitted go on. Workers that restart keep it paused.
    Pausing a paused schedule changes nothing and exits 0.
    """
    _pause_or_resume(settings, name, pause=True, as_json=as_json)


@schedules.command("resume")
@click.argument("name")
@json_option
@pass_settings
def schedules_resume(settings: Settings, name: str, as_json: bool) -> None:
    """Resume schedule NAME.

    The slots missed while it was paused follow its catch-up rule at the next
    tick: the latest one is fired, older ones only within --catchup. Resuming
    a schedule that is not paused changes nothing and exits 0.
    """
    _pause_or_resume(settings, name, pause=False, as_json=as_json)


@schedules.command("backfill")
@click.argument("name")
@click.option("--from", "start", type=MOMENT, required=True, metavar="TIME",
              help="The first moment of the range (ISO 8601; UTC without an offset).")
@click.option("--to", "end", type=MOMENT, required=True, metavar="TIME",
              help="The end of the range, not included (ISO 8601, or now).")
@json_option
@pass_settings
def schedules_backfill(settings: Settings, name: str, start: datetime | str, end: datetime | str,
                       as_json: bool) -> None:
    """Submit a run for every slot of NAME in [--from, --to) that has none yet.

    Overlap is ignored; a slot that already has a run (fired or backfilled) is
    left alone, so a backfill can be repeated. Prints how many runs it created.
    """
    client = settings.client()
    start_at, end_at = moment(client, start), moment(client, end)
    created = client.backfill(name, start_at, end_at)
    if _schedules_json(as_json):
        echo_json({"name": name, "from": start_at, "to": end_at, "created": created})
        return
    click.echo(f"backfill of schedule {name!r}: {created} run{'' if created == 1 else 's'} created")


@click.command("cron-next")
@click.argument("cron")
@click.option("--tz", "--timezone", "timezone", default="UTC", show_default=True, metavar="TZ",
              help="The time zone whose wall clock the cron reads.")
@click.option("-n", "--count", "count", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="How many fire times.")
@click.option("--after", type=MOMENT, default=NOW, show_default=True, metavar="TIME",
              help="Fire times strictly after this (ISO 8601, UTC without an offset; now: the engine clock).")
@json_option
@pass_settings
def cron_next(settings: Settings, cron: str, timezone: str, count: int, after: datetime | str,
              as_json: bool) -> None:
    """Preview the next fire times of CRON (cyclone.next_fire), in its zone and in UTC."""
    client = settings.client()
    times = client.next_fires(cron, moment(client, after), timezone, count)
    if as_json:
        echo_json([{"at": t.at, "local": t.local} for t in times])
        return
    echo_table(["local", "utc"], [(fmt_local(t.local, weekday=True), t.at) for t in times], empty="")


COMMANDS = (schedules, cron_next)
