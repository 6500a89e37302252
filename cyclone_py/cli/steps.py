"""``cyclone steps`` and ``cyclone dlq``: a run's steps with their errors, and the
dead-letter queue (discarded steps): list it, retry what a filter picks (:mod:`cyclone_py.bulk`)."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from uuid import UUID

import click

from cyclone_py.bulk import Target, dead_letters, retry_each, runs_of
from cyclone_py.cli.common import RUN_ID, Duration, Settings, describe, json_option, pass_settings
from cyclone_py.cli.output import as_dict, attempts, cell, echo_json, echo_table, short, short_error
from cyclone_py.client import StepError, StepRow
from cyclone_py.formatting import fmt_step
from cyclone_py.vocabulary import DISCARD_KINDS


@click.command("steps")
@click.argument("run_id", type=RUN_ID)
@json_option
@pass_settings
def steps(settings: Settings, run_id: UUID, as_json: bool) -> None:
    """Show every step of a run, errors in full: each step's id (what
    `cyclone explain` takes), its latest error, then the errors of its earlier
    attempts; an available step's next try, a sleeping one's wake time, what
    an event or await node waits on."""
    client = settings.client()
    run_row = client.get_run_row(run_id)  # NotFound for an unknown run
    rows = client.steps(run_id)
    history: dict[int, list[StepError]] = {}
    for e in client.step_errors(run_id):
        history.setdefault(e.step_id, []).append(e)
    if as_json:
        echo_json([{**as_dict(r), "errors": [as_dict(e) for e in history.get(r.id, [])]} for r in rows])
        return
    now = client.now()

    def next_try(r: StepRow) -> datetime | None:
        if r.kind == "sleep" and r.state == "waiting":
            return r.scheduled_at  # when it wakes (SPEC 16)
        due = r.state == "available" and r.scheduled_at is not None and (r.attempt > 0 or r.scheduled_at > now)
        return r.scheduled_at if due else None

    # A map's items are shown as one row under it, their states counted (a map may have 100,000); the
    # errors of its failed items are listed below the table, the first ITEM_ERRORS_SHOWN of them.
    own = [r for r in rows if r.item_index is None]
    items: dict[str, list[StepRow]] = {}
    for r in rows:
        if r.item_index is not None:
            items.setdefault(r.node, []).append(r)
    click.echo(f"run {run_row.id}  {run_row.workflow}  {run_row.state}")
    click.echo()
    headers = ["id", "node", "kind", "state", "attempt", "reclaims", "error kind", "next try", "started", "completed"]
    with_child = any(r.child_run_id is not None for r in own)
    with_waits = any(_waits_on(r) for r in own)  # an event node's key, an await node's run (SPEC 17)
    with_progress = any(r.progress is not None for r in rows)
    table: list[tuple[object, ...]] = []
    for r in own:
        table.append((r.id, r.node, r.kind, r.state, attempts(r), r.reclaims, r.error_kind, next_try(r),
                      r.started_at, r.completed_at)
                     + ((r.child_run_id,) if with_child else ())
                     + ((_waits_on(r),) if with_waits else ())
                     + ((_progress(r),) if with_progress else ()))
        if r.node in items and r.kind == "map":
            group = items[r.node]
            table.append(("", f"  {r.node} ×{len(group):,}", "item", item_summary(group), "", "", "", "", "", "")
                         + (("",) if with_child else ()) + (("",) if with_waits else ())
                         + (("",) if with_progress else ()))
    echo_table(
        headers + (["child run"] if with_child else []) + (["waits on"] if with_waits else [])
        + (["progress"] if with_progress else []),
        table,
        empty="no steps",
    )
    failed_items = [r for group in items.values() for r in group if r.error]
    for r in own + failed_items[:ITEM_ERRORS_SHOWN]:
        label = fmt_step(r.node, r.item_index)
        earlier = history.get(r.id, [])
        if r.error and earlier and (earlier[-1].error, earlier[-1].attempt) == (r.error, r.attempt):
            earlier = earlier[:-1]  # the latest error is the step's own, shown first
        if r.error:
            click.echo()
            click.echo(f"{label}: {r.state}, {r.error_kind or 'error'}, attempt {attempts(r)}")
            _echo_indented(r.error)
        for e in reversed(earlier):
            click.echo()
            by = f", worker {e.worker}" if e.worker else ""
            click.echo(f"{label}: attempt {e.attempt} {'discarded' if e.discarded else 'failed'}, "
                       f"{e.error_kind}{by}, {cell(e.at)}")
            _echo_indented(e.error)
    if len(failed_items) > ITEM_ERRORS_SHOWN:
        click.echo()
        click.echo(f"... and {len(failed_items) - ITEM_ERRORS_SHOWN:,} more failed items (--json lists every step)")


#: The failed items of a map whose errors ``cyclone steps`` prints.
ITEM_ERRORS_SHOWN = 10


def item_summary(group: list[StepRow]) -> str:
    """A map's items by state, most first: ``9,990 completed, 10 running``."""
    counts: dict[str, int] = {}
    for r in group:
        counts[r.state] = counts.get(r.state, 0) + 1
    return ", ".join(f"{n:,} {state}" for state, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _waits_on(r: StepRow) -> str:
    """What an event or await node waits on (SPEC 17): ``event KEY``, ``run RUN_ID``; else empty."""
    if r.event_key is not None:
        return f"event {short(r.event_key, 60)}"
    if r.awaited_run_id is not None:
        return f"run {r.awaited_run_id}"
    return ""


def _progress(r: StepRow) -> str:
    """A step's progress as the table shows it: its JSON, cut to 30 characters."""
    if r.progress is None:
        return ""
    text = json.dumps(r.progress, separators=(",", ":"))
    return text if len(text) <= 30 else text[:29] + "…"


def _echo_indented(text: str) -> None:
    for line in text.rstrip().splitlines():
        click.echo(f"    {line}".rstrip())


# -- the dead-letter queue -----------------------------------------------------


@click.group("dlq")
def dlq() -> None:
    """The dead-letter queue: discarded steps."""


@dlq.command("list")
@click.option("--error-kind", "--reason", "error_kind", type=click.Choice(DISCARD_KINDS),
              help="Only steps discarded with this error kind (--reason: the older name).")
@click.option("--workflow", metavar="NAME", help="Only steps of runs of this workflow.")
@click.option("--limit", type=click.IntRange(1, 10000), default=100, show_default=True, help="At most this many.")
@json_option
@pass_settings
def dlq_list(settings: Settings, error_kind: str | None, workflow: str | None, limit: int, as_json: bool) -> None:
    """List discarded steps, newest first (retry them with `cyclone dlq retry` or `cyclone retry`)."""
    rows = settings.client().dlq(error_kind=error_kind, workflow=workflow, limit=limit)
    if as_json:
        echo_json([as_dict(r) for r in rows])
        return
    echo_table(
        ["run", "workflow", "node", "reason", "attempt", "discarded", "error"],
        [(r.run_id, r.workflow, r.node, r.error_kind, attempts(r), r.completed_at, short_error(r.error))
         for r in rows],
        empty="no discarded steps",
    )


@dlq.command("retry")
@click.option("--workflow", metavar="NAME", help="Only steps of runs of this workflow.")
@click.option("--error-kind", "error_kind", type=click.Choice(DISCARD_KINDS),
              help="Only steps discarded with this error kind.")
@click.option("--older-than", type=Duration(positive=True), metavar="DURATION",
              help="Only steps discarded at least this long ago (engine clock), e.g. 10m, 2h, 1d.")
@click.option("--all", "every", is_flag=True, help="Every dead letter (needed when no filter is given).")
@click.option("--additional-attempts", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="Allow each step this many more attempts than it has used (0: one more execution).")
@click.option("--reason", metavar="TEXT", help="Why (recorded in cyclone_audit, for each step).")
@click.option("--dry-run", is_flag=True, help="Say how many it would retry, and retry nothing.")
@pass_settings
def dlq_retry(settings: Settings, workflow: str | None, error_kind: str | None, older_than: timedelta | None,
              every: bool, additional_attempts: int, reason: str | None, dry_run: bool) -> None:
    """Retry the dead letters a filter picks, one `cyclone.retry` each.

    The filters go together: --workflow, --error-kind, --older-than; --all
    stands for none. A map's discarded items come back with their map,
    retried once. Each step's retry is its own transaction: one the engine
    refuses (retried meanwhile, a cancelled run) is named on stderr and the
    others go on; the command then exits 1.
    """
    if not (workflow or error_kind or older_than or every):
        raise click.UsageError("say which dead letters: --workflow, --error-kind, --older-than, or --all "
                               "(--reason is the audit's reason here; dlq list's --reason is --error-kind)")
    client = settings.client()
    cutoff = None if older_than is None else client.now() - older_than
    targets = dead_letters(client, workflow=workflow, error_kind=error_kind, discarded_before=cutoff)
    if not targets:
        click.echo("no dead letters match", err=True)
        return
    runs = runs_of(targets)
    if dry_run:
        click.echo(f"would retry {_steps_of_runs(len(targets), runs)}{_with_items(targets)}")
        return
    results = retry_each(client, targets, additional_attempts=additional_attempts, reason=reason)
    refused = [r for r in results if not r.ok]
    for r in refused:
        assert r.error is not None
        click.echo(f"cyclone: run {r.target.run_id}, node {r.target.node}: {describe(r.error)}", err=True)
    retried = [r.target for r in results if r.ok]
    if not refused:
        click.echo(f"retried {_steps_of_runs(len(retried), runs)}{_with_items(retried)}")
        return
    click.echo(f"retried {len(retried)} of {_steps_of_runs(len(targets), runs)}; {len(refused)} refused")
    sys.exit(1)


def _steps_of_runs(steps: int, runs: int) -> str:
    """``3 steps of 2 runs``."""
    return f"{steps:,} step{'' if steps == 1 else 's'} of {runs:,} run{'' if runs == 1 else 's'}"


def _with_items(targets: list[Target]) -> str:
    """``, 12 map items with their maps`` when maps are among ``targets``."""
    items = sum(t.items for t in targets)
    return f", {items:,} map item{'' if items == 1 else 's'} with their map" if items else ""


COMMANDS = (steps, dlq)
