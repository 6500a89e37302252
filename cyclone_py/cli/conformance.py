"""``cyclone conformance``: run the conformance kit against a worker command (docs/conformance.md)."""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path

import click

from cyclone_py import db
from cyclone_py.cli.common import Settings, fail, open_client, pass_settings
from cyclone_py.conformance import SCENARIOS, run_kit


@click.command("conformance", context_settings={"ignore_unknown_options": True,
                                                "allow_interspersed_args": False})
@click.option("--list", "list_only", is_flag=True, help="Print the scenarios and exit.")
@click.option("--only", multiple=True, metavar="NAME", help="Run only this scenario (repeatable).")
@click.option("--keep", is_flag=True, help="Keep the scratch database (its name is printed).")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where the worker's output goes (default: a temporary file, named at the end).")
@click.option("--template", default=None, metavar="DATABASE",
              help="Make the scratch database as a copy of DATABASE, already deployed, instead of deploying.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@pass_settings
def conformance(settings: Settings, list_only: bool, only: tuple[str, ...], keep: bool, log_path: Path | None,
                template: str | None, command: tuple[str, ...]) -> None:
    """Check that a worker follows the protocol: cyclone conformance -- COMMAND...

    Makes a scratch database on the server of --dsn (by default the embedded
    one), deploys the engine, defines the kit's workflows, starts COMMAND with
    CYCLONE_DSN set to that database, and runs each scenario against it,
    judging from the engine's tables alone. One line per scenario; exit 1 if
    any failed. The worker must take the kit's settings (a lease TTL of at most
    3 s, a poll of at most 1 s, a shutdown grace of at most 2 s): see
    docs/conformance.md.
    """
    if list_only:
        width = max(len(s.name) for s in SCENARIOS)
        for s in SCENARIOS:
            click.echo(f"{s.name.ljust(width)}  {s.summary}")
        return
    unknown = sorted(set(only) - {s.name for s in SCENARIOS})
    if unknown:
        fail(f"no scenario {', '.join(unknown)} (cyclone conformance --list)")
    if not command:
        fail("give the worker's command after --: cyclone conformance -- COMMAND...")
    server = settings.dsn(start=True)  # it makes scratch databases there
    name = f"cyclone_conformance_{secrets.token_hex(4)}"
    dsn = db.create_database(server, name, template=template)
    failed = 0
    if log_path is None:
        log_path = Path(tempfile.gettempdir()) / f"{name}.log"
    try:
        if template is None:
            db.sqitch(["deploy"], dsn, quiet=True)
        with log_path.open("a") as log, open_client(dsn) as client:
            for result in run_kit(client, command, dsn=dsn, log=log, only=only):
                failed += not result.ok
                verdict = "ok  " if result.ok else "FAIL"
                click.echo(f"{verdict} {result.name:<11} {result.detail} ({result.seconds:.1f}s)")
    finally:
        if keep:
            click.echo(f"scratch database kept: {name}", err=True)
        else:
            db.drop_database(server, name)
    click.echo(f"the worker's output: {log_path}", err=True)
    if failed:
        fail(f"{failed} scenario(s) failed")


COMMANDS = (conformance,)
