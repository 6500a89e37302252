"""``cyclone workers``: the worker registry (SPEC 18), who is there and what each claims."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import click

from cyclone_py.cli.common import Settings, json_option, pass_settings
from cyclone_py.cli.output import as_dict, echo_json, echo_table, short
from cyclone_py.client import WorkerRow
from cyclone_py.formatting import fmt_duration


def _names(value: Any) -> str:
    """A worker's handlers or workflows as its info gives them (untrusted: any JSON): ``any`` when it does
    not say, as claim reads a NULL list."""
    if value is None:
        return "any"
    if isinstance(value, list):
        return short(", ".join(str(v) for v in value), 50) or "none"
    return short(str(value), 50)


def _where(info: dict[str, Any]) -> str:
    """``host:pid``, or what of it the info has."""
    parts = [str(info[k]) for k in ("host", "pid") if info.get(k) is not None]
    return short(":".join(parts), 40) or "-"


@click.command("workers")
@json_option
@pass_settings
def workers(settings: Settings, as_json: bool) -> None:
    """List the registered workers (cyclone_v_workers): alive (seen within
    the last 60 seconds), when last seen, the steps each holds, the handlers
    and workflows it claims, and where it runs.

    A worker refreshes its row on every poll and removes it at a clean exit;
    a tick forgets a worker unseen for a day.
    """
    client = settings.client()
    rows = client.workers()
    if as_json:
        echo_json([as_dict(r) for r in rows])
        return
    now = client.now()
    echo_table(
        ["name", "alive", "last seen", "running", "handlers", "workflows", "where"],
        [_row(r, now) for r in rows],
        empty="no workers registered",
    )


def _row(r: WorkerRow, now: datetime) -> tuple[Any, ...]:
    info = r.info if isinstance(r.info, dict) else {}
    seen = f"{fmt_duration(max(now - r.last_seen_at, timedelta(0)))} ago"
    return (short(r.name, 60), "yes" if r.alive else "no", seen, r.running,
            _names(info.get("handlers")), _names(info.get("workflows")), _where(info))


COMMANDS = (workers,)
