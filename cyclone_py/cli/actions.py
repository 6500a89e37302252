"""The operator's actions on a run: ``cyclone retry``, ``cancel``, ``pause``,
``resume``, ``signal`` and ``rerun``; each is one SQL function, refused in one line.
``cyclone audit`` lists what was done to a run: who, from where, and why."""

from __future__ import annotations

from typing import Any, NoReturn
from uuid import UUID

import click

from cyclone_py.cli.common import JSON, RUN_ID, Settings, fail, json_option, pass_settings
from cyclone_py.cli.output import as_dict, echo_json, echo_table
from cyclone_py.client import AuditRow, Client
from cyclone_py.vocabulary import TERMINAL_RUN_STATES


@click.command("retry")
@click.argument("run_id", type=RUN_ID)
@click.argument("node", required=False)
@click.option("--additional-attempts", type=click.IntRange(min=0), default=None,
              help="With NODE: allow this many more attempts than it has used.")
@click.option("--reason", metavar="TEXT", help="Why (recorded in cyclone_audit).")
@pass_settings
def retry(settings: Settings, run_id: UUID, node: str | None, additional_attempts: int | None,
          reason: str | None) -> None:
    """Reopen a discarded step, or every one of a run.

    With NODE, reopen that discarded step; without, every discarded step of
    the run. A failed run goes back to running.
    """
    if node is None and additional_attempts is not None:
        raise click.UsageError("--additional-attempts needs a NODE")
    client = settings.client()
    if node is not None:
        client.retry(run_id, node, additional_attempts or 0, reason)
        click.echo(f"step {node!r} of run {run_id} reopened")
        return
    count = client.retry_all(run_id, reason)
    if count == 0:
        fail(f"run {run_id} has no discarded step to retry")
    click.echo(f"{count} discarded step{'' if count == 1 else 's'} of run {run_id} reopened")


def _refused(client: Client, run_id: UUID, verb: str) -> NoReturn:
    fail(f"cannot {verb} run {run_id}: it is {client.get_run(run_id).state}")


@click.command("cancel")
@click.argument("run_id", type=RUN_ID)
@click.option("--reason", metavar="TEXT", help="Why (recorded in cyclone_audit).")
@pass_settings
def cancel(settings: Settings, run_id: UUID, reason: str | None) -> None:
    """Cancel a running or paused run.

    Its live steps and its child runs are cancelled too, and running handlers
    are told at once. The reason is recorded in cyclone_audit.
    """
    client = settings.client()
    if not client.cancel(run_id, reason):
        _refused(client, run_id, "cancel")
    click.echo(f"run {run_id} cancelled")


@click.command("pause")
@click.argument("run_id", type=RUN_ID)
@pass_settings
def pause(settings: Settings, run_id: UUID) -> None:
    """Pause a running run.

    No step of it is claimed until it is resumed; in-flight handlers may
    finish. Its deadline and max_wait clocks stop.
    """
    client = settings.client()
    if not client.pause(run_id):
        _refused(client, run_id, "pause")
    click.echo(f"run {run_id} paused")


@click.command("resume")
@click.argument("run_id", type=RUN_ID)
@pass_settings
def resume(settings: Settings, run_id: UUID) -> None:
    """Resume a paused run.

    Its deadline and max_wait expiries move forward by the length of the pause.
    """
    client = settings.client()
    if not client.resume(run_id):
        _refused(client, run_id, "resume")
    click.echo(f"run {run_id} resumed")


@click.command("signal")
@click.argument("run_id", type=RUN_ID)
@click.argument("name")
@click.option("--payload", type=JSON, metavar="JSON|@FILE", help="The wait node's output (JSON, @FILE or @-).")
@pass_settings
def signal(settings: Settings, run_id: UUID, name: str, payload: Any) -> None:
    """Send a signal to a run's wait node.

    Completes the run's waiting wait node for NAME, with the payload as its
    output, or keeps the signal for a wait node still to come.
    """
    client = settings.client()
    if not client.signal(run_id, name, payload):
        run_state = client.get_run(run_id).state
        why = f"it is {run_state}" if run_state in TERMINAL_RUN_STATES else (
            f"no wait node for {name!r} is still to come")
        fail(f"run {run_id} did not take signal {name!r}: {why}")
    click.echo(f"signal {name!r} delivered to run {run_id}")


@click.command("rerun")
@click.argument("run_id", type=RUN_ID)
@click.option("--from", "from_node", metavar="NODE",
              help="Run again only NODE and what depends on it; the other nodes that completed keep their outputs.")
@click.option("--reason", metavar="TEXT", help="Why (recorded in cyclone_audit).")
@pass_settings
def rerun(settings: Settings, run_id: UUID, from_node: str | None, reason: str | None) -> None:
    """Start a new run of a finished run's workflow and input; print its id.

    The run must be completed, failed or cancelled. The new run is of the
    workflow's current definition and names the original (rerun of). Without
    --from every node runs again; with it, only NODE and its descendants do.
    The reason is recorded in cyclone_audit, on the new run.
    """
    click.echo(settings.client().rerun(run_id, from_node, reason))


def audit_what(row: AuditRow) -> str:
    """What an audit row did, in the console's words: ``signal approve (23 bytes)``, ``rerun from b of RUN``,
    ``retry charge``. A signal's payload is never in the trail, only its size."""
    detail = row.detail if isinstance(row.detail, dict) else {}
    if row.action == "signal":
        size = detail.get("payload_bytes")
        return f"signal {row.node}" + (f" ({size} byte{'' if size == 1 else 's'})" if isinstance(size, int) else "")
    if row.action == "rerun":
        return "rerun" + (f" from {row.node}" if row.node else "") + (
            f" of {detail['rerun_of']}" if isinstance(detail.get("rerun_of"), str) else "")
    return row.action + (f" {row.node}" if row.node else "")


@click.command("audit")
@click.argument("run_id", type=RUN_ID)
@json_option
@pass_settings
def audit(settings: Settings, run_id: UUID, as_json: bool) -> None:
    """What was done to RUN_ID, oldest first (cyclone_v_audit).

    Each retry, cancel, pause, resume and rerun, and each signal (its name
    and payload's size, never its content): when, why (--reason), and by
    whom from where: 'alice via ROLE from cyclone-ui' (a person the console
    names, the database role, the session's application_name: cyclone-cli,
    cyclone-ui, psql...).
    """
    rows = settings.client().audit(run_id)
    if as_json:
        echo_json([as_dict(r) for r in rows])
        return
    echo_table(["at", "what", "reason", "by, from where"],
               [(r.at, audit_what(r), r.reason or "-", r.actor) for r in rows], empty="no audit rows for this run")


COMMANDS = (retry, cancel, pause, resume, signal, rerun, audit)
