"""The ``cyclone`` command line (click).

Every command reads the target database from ``--dsn`` / ``CYCLONE_DSN`` /
``DATABASE_URL``, else the checkout's embedded database. Bad input and
failures exit 1 with a one-line message on stderr, never a traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click
import psycopg

from cyclone_py import db

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


def fail(message: str) -> NoReturn:
    """Print one line on stderr and exit 1."""
    click.echo(f"cyclone: {' '.join(str(message).split())}", err=True)
    sys.exit(1)


class CycloneGroup(click.Group):
    """A click group that turns every expected error into one line on stderr."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except db.EmbeddedDBError as exc:
            fail(str(exc))
        except psycopg.Error as exc:
            diag = getattr(exc, "sqlstate", None)
            fail(f"{exc}" + (f" [{diag}]" if diag else ""))
        except (OSError, ValueError) as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            fail("interrupted")


class Settings:
    """Options of the top-level group, passed to subcommands via ``ctx.obj``."""

    def __init__(self, dsn: str | None) -> None:
        self._dsn = dsn

    def dsn(self, *, start: bool = True) -> str:
        """The resolved DSN; the embedded database is started if it is the target."""
        return db.resolve_dsn(self._dsn, start=start)


pass_settings = click.make_pass_decorator(Settings)


@click.group(cls=CycloneGroup, context_settings=CONTEXT_SETTINGS)
@click.option(
    "--dsn",
    metavar="DSN",
    default=None,
    help="libpq DSN or URL. Default: $CYCLONE_DSN, else $DATABASE_URL, else the embedded database.",
)
@click.version_option(package_name="cyclone_py", prog_name="cyclone")
@click.pass_context
def main(ctx: click.Context, dsn: str | None) -> None:
    """Cyclone: a durable workflow engine on PostgreSQL."""
    ctx.obj = Settings(dsn or os.environ.get("CYCLONE_DSN") or os.environ.get("DATABASE_URL") or None)


# -- dev-db -------------------------------------------------------------------


@main.group("dev-db")
def dev_db() -> None:
    """Manage this checkout's embedded PostgreSQL 15 (unix socket only)."""


@dev_db.command("start")
def dev_db_start() -> None:
    """Start the embedded database (initialising it the first time); idempotent."""
    db.embedded().start()


@dev_db.command("stop")
@click.option("--mode", type=click.Choice(["smart", "fast", "immediate"]), default="fast", show_default=True)
def dev_db_stop(mode: str) -> None:
    """Stop the embedded database."""
    db.embedded().stop(mode)  # type: ignore[arg-type]


@dev_db.command("restart")
@click.option("--mode", type=click.Choice(["smart", "fast", "immediate"]), default="fast", show_default=True)
def dev_db_restart(mode: str) -> None:
    """Restart the embedded database (``--mode immediate`` simulates a crash)."""
    db.embedded().restart(mode)  # type: ignore[arg-type]


@dev_db.command("status")
def dev_db_status() -> None:
    """Print whether the embedded database runs; exit 3 if it does not."""
    cluster = db.embedded()
    if cluster.status():
        click.echo(f"running  {cluster.url()}  ({cluster.home})")
    else:
        click.echo(f"stopped  ({cluster.home})")
        sys.exit(3)


@dev_db.command("url")
def dev_db_url() -> None:
    """Print the embedded database's DSN."""
    click.echo(db.embedded().url())


@dev_db.command("env")
def dev_db_env() -> None:
    """Print ``export PG...=`` lines for psql, sqitch and pg_prove (use with eval)."""
    import shlex

    for key, value in db.embedded().env().items():
        click.echo(f"export {key}={shlex.quote(value)}")


@dev_db.command("destroy")
@click.confirmation_option(prompt="Delete the embedded database and all its data?")
def dev_db_destroy() -> None:
    """Stop the embedded database and delete its files."""
    db.embedded().destroy()


# -- migrate ------------------------------------------------------------------


@main.command("migrate")
@click.option("--revert", "revert", is_flag=True, help="Revert every change (sqitch revert -y) instead of deploying.")
@click.option("--verify", "verify", is_flag=True, help="Run sqitch verify after the deploy (or alone with --revert unset).")
@pass_settings
def migrate(settings: Settings, revert: bool, verify: bool) -> None:
    """Deploy the schema with sqitch (from the checkout's sqitch.plan)."""
    dsn = settings.dsn()
    if revert:
        db.sqitch(["revert", "-y"], dsn)
        return
    db.sqitch(["deploy"], dsn)
    if verify:
        db.sqitch(["verify"], dsn)


if __name__ == "__main__":  # pragma: no cover
    main()
