"""``cyclone explain``: why a step does not run, in words.

The reason is SQL's (``cyclone.explain_step``); :func:`explain_text` only
says it. ``cyclone run`` and ``submit --wait`` say it too, for the steps a
run waits on.
"""

from __future__ import annotations

import shlex
from datetime import datetime, timedelta

import click

from cyclone_py.cli.common import Settings, json_option, pass_settings
from cyclone_py.cli.output import echo_json
from cyclone_py.client import Explanation, StepRow
from cyclone_py.formatting import fmt_duration, fmt_time

# A claimable step due this long (engine clock) and still not claimed: no worker is claiming it.
CLAIM_GRACE = timedelta(seconds=5)


def _at(when: datetime | None, now: datetime | None) -> str:
    if when is None:
        return "-"
    ahead = "" if now is None or when <= now else f" (in {fmt_duration(when - now)})"
    return fmt_time(when) + ahead


def explain_text(e: Explanation, step: StepRow | None = None, *, now: datetime | None = None) -> str:
    """An ``explain_step`` answer in words. The reason is SQL's; this only says it
    (with the step's row, when given, for who holds it and what it retries)."""
    reason = e.reason
    if reason == "running":
        owner = step.lease_owner if step is not None else None
        return "running" + (f" (worker {owner})" if owner else "")
    if reason == "discarded":
        return "discarded: a dead letter (cyclone retry RUN_ID NODE reopens it)"
    if reason in ("completed", "cancelled"):
        return reason
    if reason == "skipped":
        return "skipped: its condition did not hold, or a dependency was skipped"
    if reason == "sleeping":
        return f"sleeping until {_at(e.until, now)}"
    if reason == "waiting_items":
        return f"waiting for its items: {e.raw.get('done', 0):,} of {e.raw.get('total', 0):,} done"
    if reason == "waiting_signal":
        return f"waiting for signal {e.signal!r}"
    if reason == "waiting_event":  # SPEC 17: the key its template made
        key = e.key or ""
        return f"waits for an event of key {key!r} (cyclone events emit {shlex.quote(key)})"
    if reason == "waiting_run":
        return f"waits for run {e.run_id or '-'} to end"
    if reason == "waiting_child":
        return "waiting for its child run" + (f" {e.child_run_id}" if e.child_run_id else "")
    if reason == "pending_deps":
        noun = "dependency" if len(e.deps) == 1 else "dependencies"
        return f"waiting for {noun} {', '.join(e.deps)}"
    if reason == "run_terminal":
        return f"its run is {e.run_state}"
    if reason == "run_paused":
        return "run paused (cyclone resume RUN_ID)"
    if reason == "not_due":
        if step is not None and step.attempt > 0 and step.error_kind is not None:
            return (f"backing off after attempt {step.attempt} failed ({step.error_kind}): "
                    f"not due until {_at(e.until, now)}")
        return f"not due until {_at(e.until, now)}"
    if reason == "concurrency_limit":
        return f"held back: bucket {e.bucket!r} of limit {e.limit} is full ({e.running}/{e.max} running)"
    if reason == "rate_limit":
        bucket = "" if not e.bucket else f" (bucket {e.bucket!r})"
        return f"rate limit {e.limit}{bucket}: next slot at {_at(e.next_slot_at, now)}"
    if reason == "claimable":
        due = step.scheduled_at if step is not None else None
        if step is not None and due is not None and now is not None and now - due >= CLAIM_GRACE:
            since = f"claimable since {fmt_time(due)} ({fmt_duration(now - due)} ago) but not claimed"
            # The registry (explain_step's workers) says whether anyone would claim it: 0, nobody alive does;
            # None, a database without the registry, where the wait itself is the only sign.
            if e.workers:  # registered workers claim it: they are busy, or held up
                noun = "worker claims" if e.workers == 1 else "workers claim"
                return f"{since}, though {e.workers} live {noun} its handler {step.handler!r}: busy?"
            return f"{since}: no worker is claiming handler {step.handler!r} of workflow {step.workflow!r}"
        return "claimable: the next worker that claims its handler takes it"
    return reason  # a reason this version does not word yet


@click.command("explain")
@click.argument("step_id", type=int)
@json_option
@pass_settings
def explain(settings: Settings, step_id: int, as_json: bool) -> None:
    """Say why step STEP_ID is not running (cyclone.explain_step).

    The first reason that applies: its terminal state, running, waiting for a
    signal, an event, a child run or an awaited run, waiting for
    dependencies, its run ended or paused, not due yet (a backoff or a
    run_at), a full limit bucket, a rate limit, or claimable (and, when it
    has been for a while, that no worker claims it).
    Step ids are the ID column of `cyclone steps RUN_ID`.
    """
    client = settings.client()
    e = client.explain_step(step_id)  # NotFound for an unknown id
    step = client.step(step_id)
    now = client.now()
    text = explain_text(e, step, now=now)
    if as_json:
        echo_json({"step_id": step_id, "run_id": step.run_id, "workflow": step.workflow, "node": step.node,
                   **e.raw, "text": text})
        return
    click.echo(f"step {step_id} (node {step.node} of run {step.run_id}, workflow {step.workflow}): {text}")


COMMANDS = (explain,)
