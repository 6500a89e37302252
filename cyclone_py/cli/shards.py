"""``cyclone shards``: set up and inspect a sharded deployment (docs/scaling.md)."""

from __future__ import annotations

import sys

import click

from cyclone_py import db
from cyclone_py import shards as shards_setup
from cyclone_py.cli.common import Settings, json_option, pass_settings
from cyclone_py.cli.output import as_dict, echo_json, echo_table, short


@click.group("shards")
def shards() -> None:
    """Set up and inspect a sharded deployment: a PL/Proxy router in front of
    several Cyclone databases (docs/scaling.md)."""


@shards.command("init")
@click.option("--router", "router", required=True, metavar="DSN", help="The router database.")
@click.option("--shard", "shard_dsns", required=True, multiple=True, metavar="DSN",
              help="A shard database, as the router's server reaches it; repeat for each (named shard-0, shard-1, "
                   "... in this order).")
@click.option("--partitions", type=int, default=None, metavar="N",
              help=f"Partitions of the router: a power of two, at least the shards "
                   f"(default {shards_setup.DEFAULT_PARTITIONS}). Partition p starts on shard p mod S.")
def shards_init(router: str, shard_dsns: tuple[str, ...], partitions: int | None) -> None:
    """Deploy the engine on each shard and the router on the router, and
    record which shard holds each partition; running it again changes nothing.

    The router needs the plproxy extension: a superuser installs it once
    (CREATE EXTENSION plproxy), or deploys the router as a superuser.
    """
    rows = shards_setup.init(router, list(shard_dsns), partitions)
    echo_table(["partition", "shard", "dsn"], [(r.partition, r.shard, db.without_password(r.dsn)) for r in rows],
               empty="no partitions")


@shards.command("status")
@click.option("--router", "router", default=None, metavar="DSN", help="The router (default: --dsn / CYCLONE_DSN).")
@json_option
@pass_settings
def shards_status(settings: Settings, router: str | None, as_json: bool) -> None:
    """Each shard with the partitions the router sends it, whether it answers,
    and whether it holds what the router says; exit 3 if any does not."""
    rows = shards_setup.status(router or settings.dsn())
    if as_json:
        echo_json([{**as_dict(r), "agrees": r.agrees} for r in rows])
    else:
        echo_table(
            ["shard", "partitions", "reachable", "agrees", "dsn"],
            [(r.name, ",".join(map(str, r.partitions)), "yes" if r.reachable else f"no: {short(r.error or '', 60)}",
              "yes" if r.agrees else ("?" if not r.reachable else f"no (holds {r.holds})"), r.dsn) for r in rows],
            empty="no shards",
        )
    if not all(r.reachable and r.agrees for r in rows):
        sys.exit(3)


COMMANDS = (shards,)
