"""``cyclone migrate``: deploy, verify, show or revert the schema with sqitch.

A deploy that meets a lock timeout (``55P03``: a change's ``lock_timeout``
behind a long transaction) or a deadlock (``40P01``: PostgreSQL broke a cycle
with claims) changed nothing and is deployed again, up to ``--retries`` times,
after 1 s, 2 s, 4 s, ...: what an operator would do by hand. Any other error
fails at once."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable

import click

from cyclone_py import db
from cyclone_py.cli.common import Settings, fail, pass_settings

#: The errors after which a deploy is tried again, and how a retry names them.
RETRYABLE = {"55P03": "a lock timeout", "40P01": "a deadlock"}
RETRIES = 3
#: Seconds before the first retry; each next one waits twice as long.
BACKOFF = 1.0
# psql's error line, as sqitch passes it on with VERBOSITY=verbose: the script (a change's, maybe reworked:
# deploy/advance@v0.21.0.sql) and the SQLSTATE.
_PSQL_ERROR = re.compile(r"^psql:(?:.*/)?(?P<change>[^/@:]+)(?:@[^/:]*)?\.sql:\d+: ERROR:\s+(?P<state>[0-9A-Z]{5}): ")


def retryable(exc: db.SqitchError) -> tuple[str, str] | None:
    """(change, SQLSTATE) when ``exc`` is a deploy script that met a lock timeout or a deadlock, else None."""
    found = _PSQL_ERROR.match(exc.detail or "")
    if found is None or found["state"] not in RETRYABLE:
        return None
    return found["change"], found["state"]


def deploy(dsn: str, retries: int, say: Callable[[str], None]) -> None:
    """``sqitch deploy``, again after a lock timeout or a deadlock (:func:`retryable`), ``retries`` times at
    most, saying so in one line each time. sqitch rolls a failed change back, and the changes it deployed
    before it in that attempt (its default mode), so each attempt starts where the database stood."""
    for attempt in range(retries + 1):
        try:
            db.sqitch(["deploy", "--set", "VERBOSITY=verbose"], dsn)
            return
        except db.SqitchError as exc:
            met = retryable(exc)
            if met is None:
                raise
            change, state = met
            if attempt == retries:
                raise db.SqitchError("deploy", exc.returncode,
                                     f"{exc.detail} (still after {retries} retries)" if retries else exc.detail
                                     ) from exc
            wait = BACKOFF * 2 ** attempt
            say(f"change {change} met {RETRYABLE[state]} ({state}) and was rolled back; "
                f"deploying again in {wait:g} s (retry {attempt + 1} of {retries})")
            time.sleep(wait)


def stdin_is_terminal() -> bool:
    """Whether a confirmation prompt can be answered (standard input is a terminal)."""
    return sys.stdin.isatty()


@click.command("migrate", short_help="Deploy the schema with sqitch.")
@click.option("--revert", "revert", is_flag=True,
              help="Revert every change instead of deploying: drops the engine and all its data.")
@click.option("--verify", "verify", is_flag=True, help="Run sqitch verify after the deploy.")
@click.option("--status", "status", is_flag=True, help="Show what is deployed (sqitch status); change nothing.")
@click.option("--yes", "-y", "yes", is_flag=True, help="Do not ask before --revert.")
@click.option("--retries", type=click.IntRange(0, 20), default=RETRIES, show_default=True,
              help="Deploy again this many times after a lock timeout (55P03) or a deadlock (40P01).")
@pass_settings
def migrate(settings: Settings, revert: bool, verify: bool, status: bool, yes: bool, retries: int) -> None:
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
        deploy(dsn, retries, lambda line: click.echo(f"cyclone: {line}", err=True))
        if verify:
            db.sqitch(["verify"], dsn)


COMMANDS = (migrate,)
