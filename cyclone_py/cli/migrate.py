"""``cyclone migrate``: deploy, verify, show or revert the schema with sqitch."""

from __future__ import annotations

import sys

import click

from cyclone_py import db
from cyclone_py.cli.common import Settings, fail, pass_settings


def stdin_is_terminal() -> bool:
    """Whether a confirmation prompt can be answered (standard input is a terminal)."""
    return sys.stdin.isatty()


@click.command("migrate", short_help="Deploy the schema with sqitch.")
@click.option("--revert", "revert", is_flag=True,
              help="Revert every change instead of deploying: drops the engine and all its data.")
@click.option("--verify", "verify", is_flag=True, help="Run sqitch verify after the deploy.")
@click.option("--status", "status", is_flag=True, help="Show what is deployed (sqitch status); change nothing.")
@click.option("--yes", "-y", "yes", is_flag=True, help="Do not ask before --revert.")
@pass_settings
def migrate(settings: Settings, revert: bool, verify: bool, status: bool, yes: bool) -> None:
    """Deploy the schema with sqitch, from the sqitch project the package carries."""
    if revert + verify + status > 1:
        fail("--revert, --verify and --status do not go together")
    db.sqitch_executable()  # both before the embedded database starts
    db.sqitch_project()
    # A deploy sets the database up: it may start the embedded one. --status only reads, and --revert
    # only takes away: both need it running.
    dsn = settings.dsn(start=not (status or revert))
    what = f"database {db.dbname_of(dsn)!r}"
    if status:
        try:
            db.sqitch(["status"], dsn)
        except db.SqitchError as exc:
            if exc.detail is None:  # sqitch said "No changes deployed" on stdout
                fail(f"nothing is deployed in {what} (run: cyclone migrate)")
            raise
    elif revert:
        if not yes:
            if not stdin_is_terminal():
                fail(f"migrate --revert drops the cyclone schema and all its data in {what}; pass --yes to confirm")
            click.confirm(f"Revert every Cyclone change in {what}? This drops the engine and all its data",
                          abort=True, err=True)
        db.sqitch(["revert", "-y"], dsn)
    else:
        db.sqitch(["deploy"], dsn)
        if verify:
            db.sqitch(["verify"], dsn)


COMMANDS = (migrate,)
