"""``cyclone events emit``, ``events list`` and ``signal-with-start``: the
coordination of SPEC 17 seen from outside a run (an event for the event nodes
that wait on its key; a signal to the run of a key, started when there is none)."""

from __future__ import annotations

import json
from typing import Any

import click

from cyclone_py.cli.common import JSON, Settings, json_option, pass_settings
from cyclone_py.cli.output import as_dict, echo_json, echo_table, short
from cyclone_py.client import PAGE_LIMIT

#: Characters of an event's payload in the listing (``--json`` has it whole).
PAYLOAD_WIDTH = 60


@click.group("events")
def events() -> None:
    """Events: emit one for the event nodes waiting on its key, list those kept."""


@events.command("emit")
@click.argument("key")
@click.option("--payload", type=JSON, metavar="JSON|@FILE",
              help="The event's payload, the output of the nodes it completes (JSON, @FILE or @-).")
@json_option
@pass_settings
def emit(settings: Settings, key: str, payload: Any, as_json: bool) -> None:
    """Emit an event of KEY (cyclone.emit_event).

    Completes every event node waiting on KEY, with the payload as its output,
    and keeps the event for the nodes of KEY still to come (of runs created
    before it was emitted) until prune removes it. Prints how many nodes it
    completed.
    """
    completed = settings.client().emit_event(key, payload)
    if as_json:
        echo_json({"key": key, "completed": completed})
        return
    click.echo(f"event {key!r} emitted: it completed {completed} event node{'' if completed == 1 else 's'}")


def _payload(value: Any) -> str:
    """An event's payload as a table cell: compact JSON, cut to ``PAYLOAD_WIDTH``."""
    return "-" if value is None else short(json.dumps(value, separators=(",", ":"), sort_keys=True), PAYLOAD_WIDTH)


@events.command("list")
@click.option("--key", metavar="KEY", help="Only events of this key.")
@click.option("--limit", type=click.IntRange(1, PAGE_LIMIT), default=50, show_default=True,
              help="At most this many.")
@json_option
@pass_settings
def list_events(settings: Settings, key: str | None, limit: int, as_json: bool) -> None:
    """List the kept events (cyclone_v_events), newest first."""
    rows = settings.client().events(key, limit=limit)
    if as_json:
        echo_json([as_dict(r) for r in rows])
        return
    echo_table(["key", "emitted", "payload"], [(short(r.key, 60), r.emitted_at, _payload(r.payload)) for r in rows],
               empty="no events")


@click.command("signal-with-start")
@click.argument("workflow")
@click.argument("key")
@click.argument("signal")
@click.option("--payload", type=JSON, metavar="JSON|@FILE", help="The signal's payload (JSON, @FILE or @-).")
@click.option("--input", "input_", type=JSON, metavar="JSON|@FILE",
              help="The input of the run, when it has to be started. Default: {}.")
@json_option
@pass_settings
def signal_with_start(settings: Settings, workflow: str, key: str, signal: str, payload: Any, input_: Any,
                      as_json: bool) -> None:
    """Signal the run of WORKFLOW with idempotency KEY, starting it first
    when there is none (cyclone.signal_with_start); print its id.

    One transaction: the run of that key (submitted with --input when there
    is none), then SIGNAL on it. A run of the key that has ended is refused.
    """
    run_id = settings.client().signal_with_start(workflow, key, signal, payload, input_)
    if as_json:
        echo_json({"run_id": run_id})
    else:
        click.echo(run_id)


COMMANDS = (events, signal_with_start)
