"""``cyclone dev-db``: the checkout's embedded PostgreSQL (start, stop, url, ...)."""

from __future__ import annotations

import sys

import click

from cyclone_py import db
from cyclone_py import shards as shards_setup
from cyclone_py.cli.common import fail


@click.group("dev-db", short_help="Manage the embedded PostgreSQL 15.")
def dev_db() -> None:
    """Manage this checkout's embedded PostgreSQL 15 (unix socket only)."""


@dev_db.command("start")
@click.option("--shards", type=click.IntRange(1, 64), default=None, metavar="N",
              help="Also make a router and N shard databases in it, deployed and configured "
                   "(docs/scaling.md); prints their DSNs.")
@click.option("--partitions", type=int, default=None, metavar="N",
              help=f"With --shards: the router's partition count (a power of two; default "
                   f"{shards_setup.DEFAULT_PARTITIONS}).")
def dev_db_start(shards: int | None, partitions: int | None) -> None:
    """Start the embedded database (initialising it the first time); idempotent."""
    if shards is None:
        if partitions is not None:
            fail("--partitions goes with --shards")
        db.embedded().start()
        return
    router, shard_dsns = shards_setup.start_embedded(shards, partitions)
    click.echo(f"router   {router}")
    for i, dsn in enumerate(shard_dsns):
        click.echo(f"shard-{i}  {dsn}")


@dev_db.command("stop")
@click.option("--mode", type=click.Choice(["smart", "fast", "immediate"]), default="fast", show_default=True)
def dev_db_stop(mode: str) -> None:
    """Stop the embedded database; it stays stopped (commands that need it refuse)
    until ``cyclone dev-db start``."""
    db.embedded().stop(mode, by_user=True)  # type: ignore[arg-type]


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
@click.option("--router", "router", is_flag=True, help="The sharded mode's router (dev-db start --shards).")
@click.option("--shard", "shard", type=click.IntRange(min=0), default=None, metavar="I",
              help="The sharded mode's shard I (from 0).")
def dev_db_url(router: bool, shard: int | None) -> None:
    """Print the embedded database's DSN."""
    if router and shard is not None:
        fail("--router and --shard do not go together")
    cluster = db.embedded()
    if router:
        click.echo(cluster.url(shards_setup.ROUTER_DBNAME))
    elif shard is not None:
        click.echo(cluster.url(shards_setup.SHARD_DBNAME.format(shard)))
    else:
        click.echo(cluster.url())


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


COMMANDS = (dev_db,)
