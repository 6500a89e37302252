"""``cyclone submit``, ``runs`` and ``run``: start a run (and wait for it), list
runs, show one with what it waits on."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import click

from cyclone_py.cli.common import JSON, RUN_ID, Duration, Settings, fail, json_option, pass_settings
from cyclone_py.cli.explain import explain_text
from cyclone_py.cli.output import as_dict, echo_fields, echo_json, echo_table, fmt_counts
from cyclone_py.client import Client, Run, RunRow, StepRow
from cyclone_py.formatting import fmt_duration, fmt_step
from cyclone_py.vocabulary import RUN_STATES, TERMINAL_STEP_STATES

WAIT_POLL = 0.25  # seconds between two looks at a run under ``submit --wait``
WAIT_STALL = 2.0  # seconds without progress after which ``submit --wait`` says what the run waits on
WAITING_SHOWN = 10  # steps the text of ``run`` and ``submit --wait`` lists under "waiting on"
WAITING_EXPLAINED = 50  # steps explained at most for one run (one explain_step call each)


# -- what a run waits on ------------------------------------------------------------


def _explained(client: Client, step: StepRow, now: datetime) -> dict[str, Any]:
    e = client.explain_step(step.id)
    return {"step_id": step.id, "run_id": step.run_id, "workflow": step.workflow, "node": step.node,
            "item_index": step.item_index, **e.raw, "text": explain_text(e, step, now=now)}


def waiting_on(client: Client, run_id: UUID) -> list[dict[str, Any]]:
    """What the run's unfinished steps that are not running wait on: the steps
    that can move first (available, waiting), then those waiting for
    dependencies; each with its ``explain_step`` answer and its words."""
    rows = [r for r in client.steps(run_id) if r.state not in TERMINAL_STEP_STATES and r.state != "running"]
    rows.sort(key=lambda r: (r.state == "pending", r.id))
    now = client.now()
    return [_explained(client, r, now) for r in rows[:WAITING_EXPLAINED]]


def waiting_lines(waiting: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [f"{fmt_step(w['node'], w.get('item_index'))}: {w['text']}" for w in waiting[:WAITING_SHOWN]]
    if len(waiting) > WAITING_SHOWN:
        lines.append(f"... and {len(waiting) - WAITING_SHOWN} more (cyclone run RUN_ID --json)")
    return lines


# -- submit and wait ----------------------------------------------------------


def stderr_is_tty() -> bool:
    """The progress bar is drawn only for a person watching a terminal."""
    return sys.stderr.isatty()


def wait_for_run(client: Client, run_id: UUID, timeout: timedelta | None, *, progress: bool) -> Run:
    """Poll until the run is terminal, drawing steps done/total on stderr; returns
    the run as last seen (not terminal when ``timeout`` passed first)."""
    give_up = None if timeout is None else time.monotonic() + timeout.total_seconds()
    total = sum(client.step_counts(run_id).values())
    bar = click.progressbar(
        length=max(total, 1), label=f"run {run_id}", file=sys.stderr, hidden=not progress,
        show_eta=False, show_percent=False, show_pos=True, item_show_func=lambda state: state,
    )
    seen: tuple[str, tuple[tuple[str, int], ...]] | None = None
    moved = explained = time.monotonic()
    waits: str | None = None  # what it waits on; None: not asked since the run last moved
    with bar:
        while True:
            run = client.get_run(run_id)
            counts = client.step_counts(run_id)
            # A retry can reopen steps, so the position is set, not advanced.
            bar.pos = sum(n for state, n in counts.items() if state in TERMINAL_STEP_STATES)
            bar.current_item = run.state
            if run.terminal or (give_up is not None and time.monotonic() >= give_up):
                bar.render_progress()
                return run
            now_seen = (run.state, tuple(sorted(counts.items())))
            if now_seen != seen:
                seen, moved, waits = now_seen, time.monotonic(), None
            elif (now := time.monotonic()) - moved >= WAIT_STALL and (waits is None or now - explained >= WAIT_STALL):
                # The run has not moved for a while: say what it waits on (asked
                # again every WAIT_STALL while it stays stuck; printed once per change).
                explained = now
                text = "; ".join(waiting_lines(waiting_on(client, run_id)))
                if text and not progress and text != waits:
                    click.echo(f"run {run_id} is waiting on {text}", err=True)
                waits = text
            if progress and waits:
                bar.current_item = f"{run.state}, waiting on {waits}"
            bar.render_progress()
            time.sleep(WAIT_POLL)


@click.command("submit")
@click.argument("workflow")
@click.option("--input", "input_", type=JSON, metavar="JSON|@FILE",
              help="The run input: inline JSON, @FILE, or @- for stdin. Default: {}.")
@click.option("--deadline", type=Duration(), metavar="DURATION",
              help="Fail the run if it is not done this long after submit (30s, 5m, 1h30m).")
@click.option("--key", default=None, metavar="KEY",
              help="Idempotency key: a key already used for this workflow returns that run.")
@click.option("--priority", type=click.IntRange(-1000, 1000), default=0, show_default=True, metavar="N",
              help="Added to each node's priority (-1000..1000): smaller runs first.")
@click.option("--idempotency-window", type=Duration(), metavar="DURATION",
              help="With --key: the key dedupes only against a run created within this long; an older run's "
                   "key names the new run.")
@click.option("--debounce-key", metavar="KEY",
              help="With --debounce: a burst of submits of this key makes one run, with the last input.")
@click.option("--debounce", type=Duration(), metavar="DURATION",
              help="With --debounce-key: start the run once the burst has been quiet this long.")
@click.option("--debounce-max", type=Duration(), metavar="DURATION",
              help="With --debounce: start it at the latest this long after the burst's first submit.")
@click.option("--wait", is_flag=True, help="Show progress until the run ends; exit 0 only if it completed.")
@click.option("--timeout", type=Duration(positive=True), metavar="DURATION",
              help="With --wait: stop waiting after this long (exit 1; the run goes on).")
@json_option
@pass_settings
def submit(
    settings: Settings,
    workflow: str,
    input_: Any,
    deadline: timedelta | None,
    key: str | None,
    priority: int,
    idempotency_window: timedelta | None,
    debounce_key: str | None,
    debounce: timedelta | None,
    debounce_max: timedelta | None,
    wait: bool,
    timeout: timedelta | None,
    as_json: bool,
) -> None:
    """Start a run of WORKFLOW and print its id.

    With --debounce-key and --debounce, a submit of a key whose run has not
    started yet folds into that run (its input replaced, its start moved) and
    prints that run's id.
    """
    if timeout is not None and not wait:
        raise click.UsageError("--timeout only applies with --wait")
    client = settings.client()
    run_id = client.submit(workflow, input_, deadline=deadline, idempotency_key=key, priority=priority,
                           debounce_key=debounce_key, debounce=debounce, debounce_max=debounce_max,
                           idempotency_window=idempotency_window)
    if not wait:
        if as_json:
            echo_json({"run_id": run_id})
        else:
            click.echo(run_id)
        return
    if not as_json:
        click.echo(run_id)
    try:
        run = wait_for_run(client, run_id, timeout, progress=not as_json and stderr_is_tty())
    except KeyboardInterrupt:
        fail(f"stopped waiting; run {run_id} goes on (see: cyclone run {run_id})")
    if not run.terminal:
        doc = run_document(client, run_id)
        if as_json:
            echo_json({**doc, "timed_out": True})
        lines = waiting_lines(doc["waiting_on"])
        waits = f"; waiting on {'; '.join(lines)}" if lines else ""
        fail(f"timed out after {fmt_duration(timeout)} waiting for run {run_id}, which is still {run.state} "
             f"and goes on (see: cyclone run {run_id}){waits}")
    show_run(client, run_id, as_json=as_json)
    sys.exit(0 if run.state == "completed" else 1)


# -- reading runs ---------------------------------------------------------------


def run_document(client: Client, run_id: UUID) -> dict[str, Any]:
    """``get_run`` with the view's timing columns and the step counts."""
    run = client.get_run(run_id)
    row = client.get_run_row(run_id)
    end = run.finished_at or client.now()
    return {
        "id": run.id,
        "workflow": run.workflow,
        "state": run.state,
        "error_kind": run.error_kind,
        "error": run.error,
        "created_at": run.created_at,
        "started_at": row.started_at,
        "finished_at": run.finished_at,
        "duration_seconds": (end - run.created_at).total_seconds(),
        "deadline_at": run.deadline_at,
        "paused_at": row.paused_at,
        "parent_run_id": row.parent_run_id,
        "rerun_of": row.rerun_of,
        "steps": client.step_counts(run_id),
        "waiting_on": [] if run.terminal else waiting_on(client, run_id),
        "input": run.input,
        "output": run.output,
    }


def show_run(client: Client, run_id: UUID, *, as_json: bool) -> None:
    doc = run_document(client, run_id)
    if as_json:
        echo_json(doc)
        return
    took = timedelta(seconds=doc["duration_seconds"])
    fields: list[tuple[str, Any]] = [
        ("run", doc["id"]),
        ("workflow", doc["workflow"]),
        ("state", doc["state"]),
        ("error kind", doc["error_kind"]),
        ("error", doc["error"]),
        ("created", doc["created_at"]),
        ("started", doc["started_at"]),
        ("finished", doc["finished_at"]),
        ("duration" if doc["finished_at"] else "running for", took),
        ("deadline", doc["deadline_at"]),
    ]
    if doc["paused_at"] is not None:
        fields.append(("paused", doc["paused_at"]))
    if doc["parent_run_id"] is not None:
        fields.append(("parent run", doc["parent_run_id"]))
    if doc["rerun_of"] is not None:
        fields.append(("rerun of", doc["rerun_of"]))
    fields.append(("steps", fmt_counts(doc["steps"])))
    if doc["waiting_on"]:
        fields.append(("waiting on", "\n".join(waiting_lines(doc["waiting_on"]))))
    if doc["output"] is not None:
        fields.append(("output", json.dumps(doc["output"], sort_keys=True)))
    echo_fields(fields)


@click.command("runs")
@click.option("--state", type=click.Choice(RUN_STATES), help="Only runs in this state.")
@click.option("--workflow", metavar="NAME", help="Only runs of this workflow.")
@click.option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True, help="At most this many.")
@json_option
@pass_settings
def runs(settings: Settings, state: str | None, workflow: str | None, limit: int, as_json: bool) -> None:
    """List runs, newest first."""
    client = settings.client()
    rows = client.list_runs(workflow=workflow, state=state, limit=limit)
    if as_json:
        echo_json([as_dict(r) for r in rows])
        return
    now = client.now()

    def took(r: RunRow) -> timedelta:
        return (r.finished_at or now) - r.created_at

    reruns = any(r.rerun_of is not None for r in rows)  # the column only when a run listed is a rerun
    echo_table(
        ["run", "workflow", "state", "created", "duration"] + (["rerun of"] if reruns else []),
        [(r.id, r.workflow, r.state, r.created_at, took(r)) + ((r.rerun_of,) if reruns else ()) for r in rows],
        empty="no runs",
    )


@click.command("run")
@click.argument("run_id", type=RUN_ID)
@json_option
@pass_settings
def run(settings: Settings, run_id: UUID, as_json: bool) -> None:
    """Show a run: state, error, timing, and what it waits on.

    The error kind and error are those of the discard that failed the run.
    For an unfinished run, "waiting on" says why each step that is not running
    does not run (cyclone.explain_step): a dependency, a signal, an event, a
    child run, an awaited run, a backoff, a full limit bucket, a rate limit, a
    pause, or no worker claiming it. A rerun names the run it reruns.
    """
    show_run(settings.client(), run_id, as_json=as_json)


COMMANDS = (submit, runs, run)
