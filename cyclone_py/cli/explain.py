"""``cyclone explain``: why a step does not run, in words.

The reason is SQL's (``cyclone.explain_step``); the words are
:func:`cyclone_py.formatting.explain_text`'s, the one wording the console's
run page shares. ``cyclone run`` and ``submit --wait`` say it too, for the
steps a run waits on.
"""

from __future__ import annotations

from datetime import datetime

import click

from cyclone_py import formatting
from cyclone_py.cli.common import Settings, json_option, pass_settings
from cyclone_py.cli.output import echo_json
from cyclone_py.client import Explanation, StepRow

# A claimable step due this long (engine clock) and still not claimed: no worker is claiming it.
CLAIM_GRACE = formatting.CLAIM_GRACE


def explain_text(e: Explanation, step: StepRow | None = None, *, now: datetime | None = None) -> str:
    """An ``explain_step`` answer in the CLI's words (with the step's row, when
    given, for who holds it, what it retries and its workflow)."""
    return formatting.explain_text(e, step, now=now, workflow=None if step is None else step.workflow,
                                   grace=CLAIM_GRACE)


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
