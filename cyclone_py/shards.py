"""Setting up a sharded deployment (SPEC 15, docs/scaling.md).

A **router** database holds PL/Proxy functions (the sqitch project in
``router/``) that send each call to the **shard** holding its partition; each
shard is an ordinary Cyclone database. :func:`init` deploys the engine on
every shard and the router project on the router, and records the layout on
both sides: the router's partitions (a power of two) and which shard holds
each, and on each shard the partitions it holds (``cyclone.configure_shard``),
from which it makes ids that encode them. Partition ``p`` starts on shard
``p mod S``. :func:`status` reads it back and checks that both sides agree.

:func:`start_embedded` is the development mode of ``cyclone dev-db start
--shards N``: a router and N shard databases in the embedded cluster.

Every write goes through the engine's and the router's functions; running
``init`` again with the same shards changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cyclone_py import db, errors
from cyclone_py.client import Client, RouterPartition, check_reachable

#: Partitions of a new deployment unless given: room to grow to 16 shards
#: without splitting one (a partition moves whole; it is never split).
DEFAULT_PARTITIONS = 16
MAX_PARTITIONS = 1024
#: How long the router waits to connect to a shard (added to a DSN without one).
CONNECT_TIMEOUT = 5
#: The databases of the embedded sharded mode.
ROUTER_DBNAME = "cyclone_router"
SHARD_DBNAME = "cyclone_shard_{}"


@dataclass(frozen=True)
class ShardStatus:
    """One shard as the router and the shard itself see it."""

    name: str
    dsn: str
    #: The partitions the router sends to it.
    partitions: list[int]
    #: False when the shard could not be reached: ``error`` says why.
    reachable: bool
    #: The partitions the shard says it holds (None: not configured or unreachable).
    holds: list[int] | None
    error: str | None = None

    @property
    def agrees(self) -> bool:
        return self.holds == self.partitions


def shard_names(count: int) -> list[str]:
    """The names :func:`init` gives ``count`` shards, in the order given."""
    return [f"shard-{i}" for i in range(count)]


def layout(names: Sequence[str], partitions: int) -> list[str]:
    """The shard of each partition: partition ``p`` on ``names[p mod S]``."""
    return [names[p % len(names)] for p in range(partitions)]


def _check_partitions(partitions: int, shards: int) -> None:
    if shards < 1:
        raise errors.InvalidArgument("a sharded deployment needs at least one --shard")
    if not 1 <= partitions <= MAX_PARTITIONS or partitions & (partitions - 1):
        raise errors.InvalidArgument(
            f"--partitions must be a power of two from 1 to {MAX_PARTITIONS}, not {partitions}")
    if partitions < shards:
        raise errors.InvalidArgument(
            f"--partitions {partitions} leaves some of the {shards} shards without a partition")


def router_dsn(dsn: str) -> str:
    """A shard's DSN as the router keeps it: with ``connect_timeout`` and
    ``tcp_user_timeout`` unless it sets them. PL/Proxy connects without
    blocking, so libpq's ``connect_timeout`` does not bound its connections;
    ``tcp_user_timeout`` (milliseconds) does, for a shard over TCP whose host
    does not answer: sent data, a connection request included, that stays
    unacknowledged that long fails the call, in seconds rather than TCP's
    minutes (docs/reliability.md, A shard that stops)."""
    params = db.conninfo_params(dsn)
    added = {name: value for name, value in (("connect_timeout", CONNECT_TIMEOUT),
                                             ("tcp_user_timeout", CONNECT_TIMEOUT * 1000)) if name not in params}
    return db.with_options(dsn, **added) if added else dsn


def init(router: str, shards: Sequence[str], partitions: int | None = None) -> list[RouterPartition]:
    """Deploy and configure a sharded deployment (``cyclone shards init``):
    the engine on each shard, the router project on ``router``, partition
    ``p`` on shard ``p mod S``. Each DSN is checked reachable first; the
    shards' DSNs must be reachable from the router's server too (the router
    connects to them). A shard that already has another layout is refused
    (:class:`~cyclone_py.errors.WrongState`), and so is one that
    ``configure_shard`` would refuse (tried first in a transaction rolled
    back), before anything is configured. Returns the router's partitions."""
    count = partitions if partitions is not None else max(DEFAULT_PARTITIONS, _next_power_of_two(len(shards)))
    _check_partitions(count, len(shards))
    if len(set(shards)) != len(shards):
        raise errors.InvalidArgument("the same --shard DSN is given twice")
    for dsn in (router, *shards):
        check_reachable(dsn)
    names = shard_names(len(shards))
    owners = layout(names, count)
    holds = {name: [p for p, owner in enumerate(owners) if owner == name] for name in names}
    for dsn in shards:
        db.sqitch(["deploy"], dsn, quiet=True)
    # Every check before the first write: a shard refused half-way would
    # leave the others on a layout the router does not have.
    for name, dsn in zip(names, shards, strict=True):
        with Client(dsn, min_size=1, max_size=1, application_name="cyclone-shards") as client:
            config = client.shard()
            wanted = (name, count, holds[name])
            if config is not None and (config.name, config.partition_count, config.partitions) != wanted:
                raise errors.WrongState(
                    f"{db.without_password(dsn)} is already {config.name} of {config.partition_count} partitions "
                    f"holding {config.partitions}, not {name} holding {holds[name]}: init keeps a layout it made; "
                    "moving partitions is a procedure of its own (docs/scaling.md)")
            client.try_configure_shard(name, count, holds[name])  # the engine's refusal, if any
    for name, dsn in zip(names, shards, strict=True):
        with Client(dsn, min_size=1, max_size=1, application_name="cyclone-shards") as client:
            client.configure_shard(name, count, holds[name])
    db.sqitch(["deploy"], router, quiet=True, project=db.router_project())
    with Client(router, min_size=1, max_size=1, application_name="cyclone-shards") as client:
        client.configure_router([(n, router_dsn(d)) for n, d in zip(names, shards, strict=True)], owners)
        return client.router_partitions()


def status(router: str) -> list[ShardStatus]:
    """Each shard of ``router``'s configuration with the partitions the router
    sends it and those the shard says it holds (``cyclone shards status``)."""
    with Client(router, min_size=1, max_size=1, application_name="cyclone-shards") as client:
        rows = client.router_partitions()
    shards: dict[str, tuple[str, list[int]]] = {}
    for row in rows:
        shards.setdefault(row.shard, (row.dsn, []))[1].append(row.partition)
    out = []
    for name, (dsn, held) in shards.items():
        try:
            check_reachable(dsn, connect_timeout=CONNECT_TIMEOUT)
            with Client(dsn, min_size=1, max_size=1, application_name="cyclone-shards") as client:
                config = client.shard()
        except errors.CycloneError as exc:
            out.append(ShardStatus(name, db.without_password(dsn), held, False, None, str(exc).splitlines()[0]))
            continue
        holds = None if config is None else config.partitions
        out.append(ShardStatus(name, db.without_password(dsn), held, True, holds))
    return out


def start_embedded(shards: int, partitions: int | None = None) -> tuple[str, list[str]]:
    """The embedded cluster's sharded mode (``cyclone dev-db start --shards N``):
    start it, make the router and N shard databases when missing, and
    :func:`init` them. Returns (router DSN, shard DSNs)."""
    cluster = db.embedded()
    cluster.start()
    router = cluster.ensure_database(ROUTER_DBNAME)
    shard_dsns = [cluster.ensure_database(SHARD_DBNAME.format(i)) for i in range(shards)]
    init(router, shard_dsns, partitions)
    return router, shard_dsns


def _next_power_of_two(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()
