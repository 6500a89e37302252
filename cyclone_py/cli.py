"""The ``cyclone`` command line (click).

Every command reads the target database from ``--dsn`` / ``CYCLONE_DSN`` /
``DATABASE_URL``, else the checkout's embedded database; options also read
the ``CYCLONE_*`` variables shown in ``--help`` (docs/cli.md lists them).
Listings print aligned tables, or JSON with ``--json``.

Exit codes: 0 success; 1 bad input, a refused action or a failure, with one
line on stderr and never a traceback; 2 a click usage error (a missing
argument, an unknown option). ``submit --wait`` exits 0 only when the run
completed.

This module parses, formats and prints: every database call goes through
:class:`cyclone_py.client.Client`, and every rule lives in SQL.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import re
import signal as os_signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn, TypeVar
from uuid import UUID

import click

from cyclone_py import db, errors, logs
from cyclone_py import shards as shards_setup
from cyclone_py.client import (
    Client,
    Explanation,
    LimitRow,
    Run,
    RunRow,
    ScheduleRow,
    StepError,
    StepRow,
    check_reachable,
)
from cyclone_py.formatting import fmt_duration, fmt_interval, fmt_local, fmt_time
from cyclone_py.metrics import parse_listen
from cyclone_py.vocabulary import (
    DISCARD_KINDS,
    OVERLAP_POLICIES,
    RUN_STATES,
    TERMINAL_RUN_STATES,
    TERMINAL_STEP_STATES,
)

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}

LOG_LEVELS = ("debug", "info", "warning", "error")

CONNECT_TIMEOUT = 10  # seconds: libpq's connect_timeout for every command
WAIT_POLL = 0.25  # seconds between two looks at a run under ``submit --wait``
WAIT_STALL = 2.0  # seconds without progress after which ``submit --wait`` says what the run waits on
# A claimable step due this long (engine clock) and still not claimed: no worker is claiming it.
CLAIM_GRACE = timedelta(seconds=5)
WAITING_SHOWN = 10  # steps the text of ``run`` and ``submit --wait`` lists under "waiting on"
WAITING_EXPLAINED = 50  # steps explained at most for one run (one explain_step call each)
ERROR_WIDTH = 60  # characters of an error shown in a table cell

F = TypeVar("F", bound=Callable[..., Any])


# -- errors -------------------------------------------------------------------


def fail(message: str) -> NoReturn:
    """Print one line on stderr and exit 1."""
    click.echo(f"cyclone: {' '.join(str(message).split())}", err=True)
    sys.exit(1)


_ERROR_LABELS: tuple[tuple[type[errors.CycloneError], str], ...] = (
    (errors.NotFound, "not found"),  # P0002
    (errors.WrongState, "wrong state"),  # 55000
    (errors.InvalidArgument, "invalid argument"),  # 22023, 22004, 22P02, ...
    (errors.PermissionDenied, "permission denied"),  # 42501
    (errors.DatabaseUnavailable, "database unavailable"),
)
# An undefined schema, function or table: the engine is not deployed there.
_NOT_DEPLOYED = ("3F000", "42883", "42P01")


def describe(exc: errors.CycloneError) -> str:
    """The one-line message for an engine error: its class, then the SQL message."""
    if exc.sqlstate in _NOT_DEPLOYED:
        return f"the cyclone schema is not deployed in this database (run: cyclone migrate): {exc.message}"
    for cls, label in _ERROR_LABELS:
        if isinstance(exc, cls):
            return exc.message if label in exc.message.lower() else f"{label}: {exc.message}"
    return exc.message + (f" [{exc.sqlstate}]" if exc.sqlstate else "")


def _reader_went_away() -> NoReturn:
    """The reader of our output left (``cyclone runs | head``): not an error.
    Exit 0 in silence; stdout goes to /dev/null so that the interpreter's final
    flush does not complain again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(0)


class CycloneGroup(click.Group):
    """A click group that turns every expected error into one line on stderr.

    A bad option or argument value (a malformed run id, JSON or duration, an
    unknown choice) is bad input: exit 1 with one line. A missing argument or
    an unknown option stays a click usage error (exit 2, with the usage).
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        except BrokenPipeError:
            _reader_went_away()

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _reader_went_away()
        except click.BadParameter as exc:
            if isinstance(exc, click.MissingParameter):
                raise
            message = exc.format_message()
            fail(message[:1].lower() + message[1:])
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except errors.CycloneError as exc:
            fail(describe(exc))
        except db.EmbeddedDBError as exc:
            fail(str(exc))
        except db.DatabaseError as exc:  # from the embedded database's own connections
            diag = getattr(exc, "sqlstate", None)
            fail(f"{exc}" + (f" [{diag}]" if diag else ""))
        except (OSError, ValueError) as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            fail("interrupted")
        except Exception as exc:
            if os.environ.get("CYCLONE_DEBUG"):
                raise
            fail(f"unexpected error: {type(exc).__name__}: {exc} (CYCLONE_DEBUG=1 shows the traceback)")


# -- the database -------------------------------------------------------------


@contextlib.contextmanager
def open_client(dsn: str) -> Iterator[Client]:
    """A small :class:`Client` for one command; the pool's own retry warnings are
    silenced (the command reports the failure itself, in one line)."""
    check_reachable(dsn, connect_timeout=CONNECT_TIMEOUT)
    pool_logger = logging.getLogger("psycopg.pool")
    level = pool_logger.level
    pool_logger.setLevel(logging.CRITICAL)
    try:
        with Client(dsn, min_size=1, max_size=2, timeout=CONNECT_TIMEOUT, application_name="cyclone-cli") as client:
            yield client
    finally:
        pool_logger.setLevel(level)


class Settings:
    """Options of the top-level group, passed to subcommands via ``ctx.obj``."""

    def __init__(self, dsn: str | None) -> None:
        self._dsn = dsn

    def use_dsn(self, dsn: str) -> None:
        self._dsn = dsn

    def dsn(self, *, start: bool = True) -> str:
        """The resolved DSN; the embedded database is started if it is the target
        (one line on stderr says so), unless ``dev-db stop`` stopped it."""
        return db.resolve_dsn(self._dsn, start=start, notice=lambda line: click.echo(f"cyclone: {line}", err=True))

    def client(self) -> Client:
        """A client for the running command, closed when the command ends."""
        return click.get_current_context().with_resource(open_client(self.dsn()))


def _subcommand_dsn(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    settings = ctx.find_object(Settings)
    if value is not None and settings is not None:
        settings.use_dsn(value)  # given after the subcommand: it wins


def pass_settings(f: Callable[..., Any]) -> Callable[..., Any]:
    """Pass the group's :class:`Settings`, and accept ``--dsn`` after the
    subcommand too (``cyclone migrate --dsn ...``), where it wins."""
    command = click.make_pass_decorator(Settings)(f)
    return click.option("--dsn", metavar="DSN", default=None, expose_value=False, callback=_subcommand_dsn,
                        help="libpq DSN or URL (also accepted before the command; this one wins).")(command)


# -- parameter types ------------------------------------------------------------

_DURATION = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str, *, bare_seconds: bool = False) -> timedelta:
    """``30s``, ``5m``, ``1h30m``, ``1.5h``, ``500ms``, ``2d`` (and ``2.5``, seconds,
    when ``bare_seconds``) -> timedelta. Raises ValueError."""
    value = text.strip().lower()
    hint = "e.g. 30s, 5m, 1h30m" + (", or plain seconds" if bare_seconds else "")
    if bare_seconds:
        try:
            seconds = float(value)
        except ValueError:
            pass
        else:
            if not math.isfinite(seconds) or seconds < 0:
                raise ValueError(f"{text!r} is not a duration ({hint})")
            return timedelta(seconds=seconds)
    if not _DURATION.fullmatch(value):
        raise ValueError(f"{text!r} is not a duration ({hint})")
    seconds = sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(value))
    try:
        return timedelta(seconds=seconds)
    except OverflowError:
        raise ValueError(f"{text!r} is too long a duration") from None


class Duration(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.5 on
    """A duration option: ``30s``, ``5m``, ``1h30m`` (plain seconds too when ``bare_seconds``)."""

    name = "duration"

    def __init__(self, *, bare_seconds: bool = False, positive: bool = False) -> None:
        self.bare_seconds = bare_seconds
        self.positive = positive

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> timedelta:
        if isinstance(value, timedelta):
            return value
        try:
            result = parse_duration(str(value), bare_seconds=self.bare_seconds)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        if self.positive and result <= timedelta(0):
            self.fail(f"{value!r} must be more than zero", param, ctx)
        return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class JsonValue(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.5 on
    """A JSON document given inline, as ``@FILE``, or as ``@-`` (standard input)."""

    name = "json"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        text = value
        if value.startswith("@"):
            path = value[1:]
            try:
                text = sys.stdin.read() if path == "-" else Path(path).read_text()
            except (OSError, UnicodeDecodeError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                self.fail(f"cannot read {path!r}: {reason}", param, ctx)
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep to parse
            self.fail(f"not valid JSON: {exc}", param, ctx)


class ListenAddress(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.5 on
    """``HOST:PORT`` to serve on (``:PORT``: every interface; ``[::1]:PORT``)."""

    name = "host:port"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            parse_listen(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        return str(value).strip()


class RunIdType(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.5 on
    """A run id (a UUID)."""

    name = "run_id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> UUID:
        if isinstance(value, UUID):
            return value
        try:
            return UUID(str(value).strip())
        except ValueError:
            self.fail(f"{value!r} is not a run id (a UUID)", param, ctx)


#: A moment a command was given as ``now``: the engine clock's now, read when the command runs.
NOW = "now"


class MomentType(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.5 on
    """A moment: ISO 8601 (``2026-01-31T03:00:00Z``, ``2026-01-31 04:00+01:00``,
    ``2026-01-31``; without an offset it is UTC), or ``now`` (the engine clock)."""

    name = "time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime | str:
        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        if text.lower() == NOW:
            return NOW
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            self.fail(f"{value!r} is not a time (ISO 8601, e.g. 2026-01-31T03:00:00Z or 2026-01-31 04:00+01:00, "
                      "or now)", param, ctx)
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def moment(client: Client, value: datetime | str) -> datetime:
    """A :class:`MomentType` value as a datetime (``now``: the engine's)."""
    return value if isinstance(value, datetime) else client.now()


RUN_ID = RunIdType()
JSON = JsonValue()
MOMENT = MomentType()


def json_option(fn: F) -> F:
    """``--json``: the command's data as JSON, for scripts."""
    return click.option(
        "--json", "as_json", is_flag=True, envvar="CYCLONE_JSON", show_envvar=True,
        help="Print JSON instead of text.",
    )(fn)


# -- output ---------------------------------------------------------------------


def _json_default(value: Any) -> Any:
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, default=_json_default, indent=2))


def as_dict(row: Any) -> dict[str, Any]:
    return dataclasses.asdict(row)


def short_error(text: str | None, width: int = ERROR_WIDTH) -> str:
    """The telling line of an error (a traceback's last line), cut to ``width``."""
    if not text:
        return "-"
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    line = lines[-1] if lines and lines[0].startswith("Traceback") else (lines[0] if lines else "")
    return line if len(line) <= width else line[: width - 3] + "..."


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, datetime):
        return fmt_time(value)
    if isinstance(value, timedelta):
        return fmt_duration(value)
    return str(value)


def echo_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, empty: str) -> None:
    """Aligned columns under upper-case headers; ``empty`` (on stderr) when no rows."""
    if not rows:
        click.echo(empty, err=True)
        return
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip()

    click.echo(line([h.upper() for h in headers]))
    for r in cells:
        click.echo(line(r))


def echo_fields(fields: Sequence[tuple[str, Any]]) -> None:
    """``label  value`` lines; a multi-line value continues under its first line."""
    width = max(len(label) for label, _ in fields)
    for label, value in fields:
        lines = _cell(value).splitlines() or [""]
        click.echo(f"{label.ljust(width)}  {lines[0]}".rstrip())
        for more in lines[1:]:
            click.echo(f"{' ' * width}  {more}".rstrip())


def fmt_counts(counts: Mapping[str, int]) -> str:
    """``5 steps: 3 completed, 1 running, 1 pending``."""
    total = sum(counts.values())
    order = ("completed", "running", "available", "waiting", "pending", "discarded", "cancelled")
    parts = [f"{counts[s]} {s}" for s in sorted(counts, key=lambda s: (order.index(s) if s in order else 99, s))]
    return f"{total} step{'' if total == 1 else 's'}" + (f": {', '.join(parts)}" if parts else "")


def short(name: str, limit: int = 40) -> str:
    """A name for a table cell: at most ``limit`` characters."""
    return name if len(name) <= limit else name[: limit - 3] + "..."


def attempts(step: StepRow) -> str:
    return f"{step.attempt}/{step.max_attempts}"


# -- the group ------------------------------------------------------------------


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


@main.group("dev-db", short_help="Manage the embedded PostgreSQL 15.")
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


# -- shards -------------------------------------------------------------------


@main.group("shards")
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


# -- migrate ------------------------------------------------------------------


def stdin_is_terminal() -> bool:
    """Whether a confirmation prompt can be answered (standard input is a terminal)."""
    return sys.stdin.isatty()


@main.command("migrate", short_help="Deploy the schema with sqitch.")
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
    dsn = settings.dsn()
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


# -- worker -------------------------------------------------------------------


def import_app(spec: str) -> Any:
    """Import ``MODULE:ATTR`` with the working directory on ``sys.path``."""
    from cyclone_py.loader import AppImportError, AppLoadError, load_app

    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return load_app(spec)
    except AppImportError as exc:
        fail(f"cannot import --app {spec}: {exc}")
    except AppLoadError as exc:
        fail(f"--app {spec}: {exc}")


@main.command("worker")
@click.option("--app", "app_spec", required=True, envvar="CYCLONE_APP", show_envvar=True, metavar="MODULE:ATTR",
              help="The App (or Workflow) to serve, imported with the working directory on sys.path.")
@click.option("--concurrency", type=click.IntRange(min=1), default=10, show_default=True,
              envvar="CYCLONE_CONCURRENCY", show_envvar=True, help="Handlers run at once.")
@click.option("--lease-ttl", type=Duration(bare_seconds=True, positive=True), default="30s", show_default=True,
              envvar="CYCLONE_LEASE_TTL", show_envvar=True, metavar="DURATION",
              help="Lease of a claimed step, renewed every ttl/3 while its handler runs.")
@click.option("--poll-interval", type=Duration(bare_seconds=True, positive=True), default="1s", show_default=True,
              envvar="CYCLONE_POLL_INTERVAL", show_envvar=True, metavar="DURATION",
              help="How often to look for due steps and call tick() without a wake-up.")
@click.option("--max-reclaims", type=click.IntRange(min=0), default=None,
              envvar="CYCLONE_MAX_RECLAIMS", show_envvar=True,
              help="Discard a step whose lease expired this many times (0 = unbounded). "
                   "Default: the app's max_reclaims, else 0.")
@click.option("--prefetch", type=click.IntRange(min=0), default=None, envvar="CYCLONE_PREFETCH", show_envvar=True,
              help="Steps leased beyond the running ones (0 = none). Default: adaptive, between "
                   "--concurrency and 10 x --concurrency.")
@click.option("--shutdown-grace", type=Duration(bare_seconds=True), default="30s", show_default=True,
              envvar="CYCLONE_SHUTDOWN_GRACE", show_envvar=True, metavar="DURATION",
              help="After SIGTERM, how long in-flight handlers may finish.")
@click.option("--name", default=None, envvar="CYCLONE_WORKER_NAME", show_envvar=True,
              help="Lease owner name. Default: host:pid:random.")
@click.option("--log-level", type=click.Choice(LOG_LEVELS, case_sensitive=False), default="info",
              show_default=True, envvar="CYCLONE_LOG_LEVEL", show_envvar=True)
@click.option("--log-format", type=click.Choice(logs.FORMATS, case_sensitive=False), default="text",
              show_default=True, envvar="CYCLONE_LOG_FORMAT", show_envvar=True,
              help="text: a line with the fields as key=value; json: one JSON object a line.")
@click.option("--metrics-listen", type=ListenAddress(), default=None, envvar="CYCLONE_METRICS_LISTEN",
              show_envvar=True, metavar="HOST:PORT",
              help="Serve the worker's Prometheus metrics on HOST:PORT (:PORT for every interface). Default: off.")
@click.option("--dsn", "dsns", metavar="DSN", multiple=True,
              help="A database to serve; repeat it to serve several (shards), each fairly. Given here, it wins "
                   "over the --dsn before the command and $CYCLONE_DSN.")
@click.make_pass_decorator(Settings)
def worker(
    settings: Settings,
    dsns: tuple[str, ...],
    app_spec: str,
    concurrency: int,
    lease_ttl: timedelta,
    poll_interval: timedelta,
    max_reclaims: int | None,
    prefetch: int | None,
    shutdown_grace: timedelta,
    name: str | None,
    log_level: str,
    log_format: str,
    metrics_listen: str | None,
) -> None:
    """Run a worker for an app's workflows.

    Claims and runs the steps of the App's (or Workflow's) handlers until
    stopped. With --dsn repeated after the command, one worker serves every
    database given (the shards of a sharded Cyclone), running tick() on each
    and sharing its --concurrency handlers fairly among those with steps due.

    The first SIGTERM (or Ctrl-C) stops claiming and lets in-flight handlers
    finish within --shutdown-grace; a second one exits at once.
    """
    from cyclone_py.worker import Worker

    handler = logging.StreamHandler()
    handler.setFormatter(logs.formatter(log_format.lower()))
    logging.basicConfig(level=log_level.upper(), handlers=[handler])
    # The worker reports a lost database itself, once (its own log lines);
    # the pool's per-connection warnings say the same again, many times.
    if logging.getLogger().level > logging.DEBUG:
        logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    app = import_app(app_spec)
    targets = list(dsns) or [settings.dsn()]
    for target in targets:
        try:
            check_reachable(target, connect_timeout=CONNECT_TIMEOUT)
        except errors.CycloneError as exc:
            fail(f"{db.dsn_label(target)}: {describe(exc)}")
    Worker(
        app,
        targets,
        concurrency=concurrency,
        lease_ttl=lease_ttl,
        poll_interval=poll_interval,
        max_reclaims=max_reclaims,
        shutdown_grace=shutdown_grace,
        name=name,
        prefetch=prefetch,
        metrics_listen=metrics_listen,
    ).run()


# -- the engine's gauges: exporter and top ------------------------------------


@main.command("exporter")
@click.option("--listen", type=ListenAddress(), default="127.0.0.1:9464", show_default=True,
              envvar="CYCLONE_EXPORTER_LISTEN", show_envvar=True, metavar="HOST:PORT",
              help="Serve the engine's gauges on HOST:PORT (:PORT for every interface).")
@click.option("--scrape-timeout", type=Duration(bare_seconds=True, positive=True), default="5s",
              show_default=True, envvar="CYCLONE_EXPORTER_SCRAPE_TIMEOUT", show_envvar=True, metavar="DURATION",
              help="How long a scrape waits for a database connection, and for metrics(), before it "
                   "answers up 0.")
@click.option("--log-level", type=click.Choice(LOG_LEVELS, case_sensitive=False), default="info",
              show_default=True, envvar="CYCLONE_LOG_LEVEL", show_envvar=True)
@click.option("--log-format", type=click.Choice(logs.FORMATS, case_sensitive=False), default="text",
              show_default=True, envvar="CYCLONE_LOG_FORMAT", show_envvar=True,
              help="text: a line with the fields as key=value; json: one JSON object a line.")
@pass_settings
def exporter(settings: Settings, listen: str, scrape_timeout: timedelta, log_level: str, log_format: str) -> None:
    """Serve cyclone.metrics() to Prometheus.

    Each scrape of http://HOST:PORT/metrics calls cyclone.metrics() once and
    serves its gauges, with cyclone_exporter_up (0 when the database did not
    answer: the endpoint still answers, and the next scrape connects again) and
    cyclone_exporter_scrape_duration_seconds. Run one per database, not one per
    worker. SIGTERM or Ctrl-C stops it.
    """
    from cyclone_py.exporter import Exporter

    handler = logging.StreamHandler()
    handler.setFormatter(logs.formatter(log_format.lower()))
    logging.basicConfig(level=log_level.upper(), handlers=[handler])
    log = logging.getLogger("cyclone_py.exporter")
    host, port = parse_listen(listen)
    dsn = settings.dsn()
    timeout = scrape_timeout.total_seconds()
    try:
        check_reachable(dsn, connect_timeout=max(1, round(timeout)))
    except errors.DatabaseUnavailable as exc:  # served all the same, with up 0, until it answers
        log.warning("database unavailable at start: %s", " ".join(str(exc).split()))
    stop = threading.Event()
    service = Exporter(dsn, timeout=timeout)
    url = service.serve(host, port)
    previous = {sig: os_signal.signal(sig, lambda *_: stop.set()) for sig in (os_signal.SIGTERM, os_signal.SIGINT)}
    log.info("exporter started", extra={"url": url})
    try:
        while not stop.wait(1.0):
            pass
    finally:
        service.close()
        for sig, old in previous.items():
            os_signal.signal(sig, old)
    log.info("exporter stopped", extra={"url": url})


@main.command("ui")
@click.option("--listen", type=ListenAddress(), default="127.0.0.1:8600", show_default=True,
              envvar="CYCLONE_UI_LISTEN", show_envvar=True, metavar="HOST:PORT",
              help="Serve the console on HOST:PORT (port 0: a free one). Off loopback a token is required.")
@click.option("--allow-actions", is_flag=True, envvar="CYCLONE_UI_ALLOW_ACTIONS", show_envvar=True,
              help="Offer the actions (retry, cancel, pause, resume, signal, schedules) the database role allows.")
@click.option("--proxy-user-header", default=None, envvar="CYCLONE_UI_PROXY_USER_HEADER", show_envvar=True,
              metavar="HEADER", help="Trust HEADER, set by a proxy in front, to name the user (the audit's actor).")
@click.option("--log-level", type=click.Choice(LOG_LEVELS, case_sensitive=False), default="warning",
              show_default=True, envvar="CYCLONE_LOG_LEVEL", show_envvar=True)
@pass_settings
def ui(settings: Settings, listen: str, allow_actions: bool, proxy_user_header: str | None, log_level: str) -> None:
    """Serve the web console (needs the extra: pip install 'cyclone-py[ui]').

    Pages: the overview, runs, a run with its DAG, dead letters, schedules and
    limits. Actions only with --allow-actions, as POSTs with a CSRF token.
    CYCLONE_UI_TOKEN (NAME:SECRET[,NAME:SECRET...]) sets the tokens, whose
    names the audit trail records; without it, a non-loopback --listen gets a
    generated token, printed once. docs/console.md has the details.
    """
    import getpass

    try:
        from cyclone_py.console import app as console_app
        from cyclone_py.console import server
    except ImportError as exc:
        fail(f"the web console needs the ui extra (pip install 'cyclone-py[ui]'): {exc}")
    host, port = parse_listen(listen)
    local = getpass.getuser()
    generated = None
    env_tokens = os.environ.get("CYCLONE_UI_TOKEN")
    if env_tokens is not None:
        try:
            tokens = server.parse_tokens(env_tokens)
        except server.TokenError as exc:
            fail(str(exc))
    elif server.is_loopback(host):
        tokens = {}
    else:
        generated = server.new_token()
        tokens = {generated: local}
    if proxy_user_header is not None and not re.fullmatch(r"[A-Za-z0-9-]{1,100}", proxy_user_header):
        fail(f"--proxy-user-header {proxy_user_header[:40]!r} is not a header name")
    dsn = settings.dsn()
    check_reachable(dsn, connect_timeout=CONNECT_TIMEOUT)
    config = console_app.Settings(allow_actions=allow_actions, tokens=tokens, proxy_user_header=proxy_user_header,
                                  local_actor=local)
    with Client(dsn, min_size=1, max_size=8, timeout=CONNECT_TIMEOUT, application_name="cyclone-ui") as client:
        sock = server.bind(host, port)
        url = server.url_of(sock)
        if generated is not None:
            click.echo(f"cyclone ui: token for {local}: {generated}")
            click.echo(f"cyclone ui: open {url}?token={generated}")
        click.echo(f"cyclone ui: serving {url}" + ("" if allow_actions else " (read-only)"))
        sys.stdout.flush()
        logging.basicConfig(level=log_level.upper())
        server.serve(client, config, sock, log_level=log_level.lower())


@main.command("top")
@click.option("--once", is_flag=True, help="Print one frame and exit.")
@click.option("--interval", type=Duration(bare_seconds=True, positive=True), default="1s", show_default=True,
              metavar="DURATION", help="Time between two frames.")
@pass_settings
def top(settings: Settings, once: bool, interval: timedelta) -> None:
    """A live view of the engine's gauges (cyclone.metrics()), like top.

    Runs by state per workflow, ready lag, dead letters by kind, limits,
    the next schedules, workers and expired leases, redrawn every --interval
    until Ctrl-C.
    """
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from cyclone_py.top import frame

    client = settings.client()
    console = Console()

    def view() -> Any:
        started = time.perf_counter()
        rows = client.metrics()
        elapsed = time.perf_counter() - started
        return frame(rows, client.now(), scrape_seconds=elapsed)

    if once:
        console.print(view())
        return
    with contextlib.suppress(KeyboardInterrupt), Live(view(), console=console, auto_refresh=False) as live:
        while True:
            time.sleep(interval.total_seconds())
            try:
                live.update(view(), refresh=True)
            except errors.DatabaseUnavailable as exc:  # shown, and tried again at the next frame
                live.update(Text(f"cyclone top: {describe(exc)}", style="bold red"), refresh=True)


# -- why a step does not run (explain_step, in words) ------------------------------


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
    if reason == "waiting_signal":
        return f"waiting for signal {e.signal!r}"
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
            return (f"claimable since {fmt_time(due)} ({fmt_duration(now - due)} ago) but not claimed: no worker "
                    f"is claiming handler {step.handler!r} of workflow {step.workflow!r}")
        return "claimable: the next worker that claims its handler takes it"
    return reason  # a reason this version does not word yet


def _explained(client: Client, step: StepRow, now: datetime) -> dict[str, Any]:
    e = client.explain_step(step.id)
    return {"step_id": step.id, "run_id": step.run_id, "workflow": step.workflow, "node": step.node, **e.raw,
            "text": explain_text(e, step, now=now)}


def waiting_on(client: Client, run_id: UUID) -> list[dict[str, Any]]:
    """What the run's unfinished steps that are not running wait on: the steps
    that can move first (available, waiting), then those waiting for
    dependencies; each with its ``explain_step`` answer and its words."""
    rows = [r for r in client.steps(run_id) if r.state not in TERMINAL_STEP_STATES and r.state != "running"]
    rows.sort(key=lambda r: (r.state == "pending", r.id))
    now = client.now()
    return [_explained(client, r, now) for r in rows[:WAITING_EXPLAINED]]


def waiting_lines(waiting: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [f"{w['node']}: {w['text']}" for w in waiting[:WAITING_SHOWN]]
    if len(waiting) > WAITING_SHOWN:
        lines.append(f"... and {len(waiting) - WAITING_SHOWN} more (cyclone run RUN_ID --json)")
    return lines


# -- submit and wait ----------------------------------------------------------


def stderr_is_tty() -> bool:
    """The progress bar is drawn only for a person watching a terminal."""
    return sys.stderr.isatty()


def wait_for_run(client: Client, run_id: UUID, timeout: timedelta | None, *, progress: bool) -> Run:
    """Poll until the run is terminal, drawing steps done/total on stderr; returns
    the run as last seen (not terminal when ``timeout`` passed first)."""
    give_up = None if timeout is None else time.monotonic() + timeout.total_seconds()
    total = sum(client.step_counts(run_id).values())
    bar = click.progressbar(
        length=max(total, 1), label=f"run {run_id}", file=sys.stderr, hidden=not progress,
        show_eta=False, show_percent=False, show_pos=True, item_show_func=lambda state: state,
    )
    seen: tuple[str, tuple[tuple[str, int], ...]] | None = None
    moved = explained = time.monotonic()
    waits: str | None = None  # what it waits on; None: not asked since the run last moved
    with bar:
        while True:
            run = client.get_run(run_id)
            counts = client.step_counts(run_id)
            # A retry can reopen steps, so the position is set, not advanced.
            bar.pos = sum(n for state, n in counts.items() if state in TERMINAL_STEP_STATES)
            bar.current_item = run.state
            if run.terminal or (give_up is not None and time.monotonic() >= give_up):
                bar.render_progress()
                return run
            now_seen = (run.state, tuple(sorted(counts.items())))
            if now_seen != seen:
                seen, moved, waits = now_seen, time.monotonic(), None
            elif (now := time.monotonic()) - moved >= WAIT_STALL and (waits is None or now - explained >= WAIT_STALL):
                # The run has not moved for a while: say what it waits on (asked
                # again every WAIT_STALL while it stays stuck; printed once per change).
                explained = now
                text = "; ".join(waiting_lines(waiting_on(client, run_id)))
                if text and not progress and text != waits:
                    click.echo(f"run {run_id} is waiting on {text}", err=True)
                waits = text
            if progress and waits:
                bar.current_item = f"{run.state}, waiting on {waits}"
            bar.render_progress()
            time.sleep(WAIT_POLL)


@main.command("submit")
@click.argument("workflow")
@click.option("--input", "input_", type=JSON, metavar="JSON|@FILE",
              help="The run input: inline JSON, @FILE, or @- for stdin. Default: {}.")
@click.option("--deadline", type=Duration(), metavar="DURATION",
              help="Fail the run if it is not done this long after submit (30s, 5m, 1h30m).")
@click.option("--key", default=None, metavar="KEY",
              help="Idempotency key: a key already used for this workflow returns that run.")
@click.option("--wait", is_flag=True, help="Show progress until the run ends; exit 0 only if it completed.")
@click.option("--timeout", type=Duration(positive=True), metavar="DURATION",
              help="With --wait: stop waiting after this long (exit 1; the run goes on).")
@json_option
@pass_settings
def submit(
    settings: Settings,
    workflow: str,
    input_: Any,
    deadline: timedelta | None,
    key: str | None,
    wait: bool,
    timeout: timedelta | None,
    as_json: bool,
) -> None:
    """Start a run of WORKFLOW and print its id."""
    if timeout is not None and not wait:
        raise click.UsageError("--timeout only applies with --wait")
    client = settings.client()
    run_id = client.submit(workflow, input_, deadline=deadline, idempotency_key=key)
    if not wait:
        if as_json:
            echo_json({"run_id": run_id})
        else:
            click.echo(run_id)
        return
    if not as_json:
        click.echo(run_id)
    try:
        run = wait_for_run(client, run_id, timeout, progress=not as_json and stderr_is_tty())
    except KeyboardInterrupt:
        fail(f"stopped waiting; run {run_id} goes on (see: cyclone run {run_id})")
    if not run.terminal:
        doc = run_document(client, run_id)
        if as_json:
            echo_json({**doc, "timed_out": True})
        lines = waiting_lines(doc["waiting_on"])
        waits = f"; waiting on {'; '.join(lines)}" if lines else ""
        fail(f"timed out after {fmt_duration(timeout)} waiting for run {run_id}, which is still {run.state} "
             f"and goes on (see: cyclone run {run_id}){waits}")
    show_run(client, run_id, as_json=as_json)
    sys.exit(0 if run.state == "completed" else 1)


# -- reading runs ---------------------------------------------------------------


def run_document(client: Client, run_id: UUID) -> dict[str, Any]:
    """``get_run`` with the view's timing columns and the step counts."""
    run = client.get_run(run_id)
    row = client.get_run_row(run_id)
    end = run.finished_at or client.now()
    return {
        "id": run.id,
        "workflow": run.workflow,
        "state": run.state,
        "error_kind": run.error_kind,
        "error": run.error,
        "created_at": run.created_at,
        "started_at": row.started_at,
        "finished_at": run.finished_at,
        "duration_seconds": (end - run.created_at).total_seconds(),
        "deadline_at": run.deadline_at,
        "paused_at": row.paused_at,
        "parent_run_id": row.parent_run_id,
        "steps": client.step_counts(run_id),
        "waiting_on": [] if run.terminal else waiting_on(client, run_id),
        "input": run.input,
        "output": run.output,
    }


def show_run(client: Client, run_id: UUID, *, as_json: bool) -> None:
    doc = run_document(client, run_id)
    if as_json:
        echo_json(doc)
        return
    took = timedelta(seconds=doc["duration_seconds"])
    fields: list[tuple[str, Any]] = [
        ("run", doc["id"]),
        ("workflow", doc["workflow"]),
        ("state", doc["state"]),
        ("error kind", doc["error_kind"]),
        ("error", doc["error"]),
        ("created", doc["created_at"]),
        ("started", doc["started_at"]),
        ("finished", doc["finished_at"]),
        ("duration" if doc["finished_at"] else "running for", took),
        ("deadline", doc["deadline_at"]),
    ]
    if doc["paused_at"] is not None:
        fields.append(("paused", doc["paused_at"]))
    if doc["parent_run_id"] is not None:
        fields.append(("parent run", doc["parent_run_id"]))
    fields.append(("steps", fmt_counts(doc["steps"])))
    if doc["waiting_on"]:
        fields.append(("waiting on", "\n".join(waiting_lines(doc["waiting_on"]))))
    if doc["output"] is not None:
        fields.append(("output", json.dumps(doc["output"], sort_keys=True)))
    echo_fields(fields)


@main.command("runs")
@click.option("--state", type=click.Choice(RUN_STATES), help="Only runs in this state.")
@click.option("--workflow", metavar="NAME", help="Only runs of this workflow.")
@click.option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True, help="At most this many.")
@json_option
@pass_settings
def runs(settings: Settings, state: str | None, workflow: str | None, limit: int, as_json: bool) -> None:
    """List runs, newest first."""
    client = settings.client()
    rows = client.list_runs(workflow=workflow, state=state, limit=limit)
    if as_json:
        echo_json([as_dict(r) for r in rows])
        return
    now = client.now()

    def took(r: RunRow) -> timedelta:
        return (r.finished_at or now) - r.created_at

    echo_table(
        ["run", "workflow", "state", "created", "duration"],
        [(r.id, r.workflow, r.state, r.created_at, took(r)) for r in rows],
        empty="no runs",
    )


@main.command("run")
@click.argument("run_id", type=RUN_ID)
@json_option
@pass_settings
def run(settings: Settings, run_id: UUID, as_json: bool) -> None:
    """Show a run: state, error, timing, and what it waits on.

    The error kind and error are those of the discard that failed the run.
    For an unfinished run, "waiting on" says why each step that is not running
    does not run (cyclone.explain_step): a dependency, a signal, a child run, a
    backoff, a full limit bucket, a rate limit, a pause, or no worker claiming it.
    """
    show_run(settings.client(), run_id, as_json=as_json)


@main.command("steps")
@click.argument("run_id", type=RUN_ID)
@json_option
@pass_settings
def steps(settings: Settings, run_id: UUID, as_json: bool) -> None:
    """Show every step of a run, errors in full: each step's latest error, then
    the errors of its earlier attempts; an available step's next try."""
    client = settings.client()
    run_row = client.get_run_row(run_id)  # NotFound for an unknown run
    rows = client.steps(run_id)
    history: dict[int, list[StepError]] = {}
    for e in client.step_errors(run_id):
        history.setdefault(e.step_id, []).append(e)
    if as_json:
        echo_json([{**as_dict(r), "errors": [as_dict(e) for e in history.get(r.id, [])]} for r in rows])
        return
    now = client.now()

    def next_try(r: StepRow) -> datetime | None:
        due = r.state == "available" and r.scheduled_at is not None and (r.attempt > 0 or r.scheduled_at > now)
        return r.scheduled_at if due else None

    click.echo(f"run {run_row.id}  {run_row.workflow}  {run_row.state}")
    click.echo()
    headers = ["node", "kind", "state", "attempt", "reclaims", "error kind", "next try", "started", "completed"]
    with_child = any(r.child_run_id is not None for r in rows)
    echo_table(
        headers + (["child run"] if with_child else []),
        [
            (r.node, r.kind, r.state, attempts(r), r.reclaims, r.error_kind, next_try(r), r.started_at,
             r.completed_at)
            + ((r.child_run_id,) if with_child else ())
            for r in rows
        ],
        empty="no steps",
    )
    for r in rows:
        earlier = history.get(r.id, [])
        if r.error and earlier and (earlier[-1].error, earlier[-1].attempt) == (r.error, r.attempt):
            earlier = earlier[:-1]  # the latest error is the step's own, shown first
        if r.error:
            click.echo()
            click.echo(f"{r.node}: {r.state}, {r.error_kind or 'error'}, attempt {attempts(r)}")
            _echo_indented(r.error)
        for e in reversed(earlier):
            click.echo()
            by = f", worker {e.worker}" if e.worker else ""
            click.echo(f"{r.node}: attempt {e.attempt} {'discarded' if e.discarded else 'failed'}, "
                       f"{e.error_kind}{by}, {_cell(e.at)}")
            _echo_indented(e.error)


def _echo_indented(text: str) -> None:
    for line in text.rstrip().splitlines():
        click.echo(f"    {line}".rstrip())


@main.command("workflows")
@json_option
@pass_settings
def workflows(settings: Settings, as_json: bool) -> None:
    """List the registered workflow definitions."""
    defs = settings.client().workflows()
    if as_json:
        echo_json([{"name": name, "definition": d} for name, d in defs.items()])
        return

    def node(n: Mapping[str, Any]) -> str:
        kind, name = n.get("kind", "task"), short(str(n["name"]))
        if kind == "wait":
            return f"{name}[wait:{short(str(n.get('signal', n['name'])))}]"
        if kind == "child":
            return f"{name}[child:{short(str(n.get('workflow')))}]"
        return name

    def graph(nodes: Sequence[Mapping[str, Any]]) -> str:
        """Each edge as ``dep -> node``; a node with no edge at all on its own."""
        shown = {str(n["name"]): node(n) for n in nodes}
        edges = [f"{shown.get(d, short(d))} -> {shown[str(n['name'])]}" for n in nodes for d in n.get("deps", [])]
        linked = {d for n in nodes for d in n.get("deps", [])} | {str(n["name"]) for n in nodes if n.get("deps")}
        alone = [shown[name] for name in shown if name not in linked]
        return ", ".join(edges + alone)

    echo_table(
        ["workflow", "nodes", "graph"],
        [(short(name), len(d.get("nodes", [])), graph(d.get("nodes", []))) for name, d in defs.items()],
        empty="no workflows",
    )


# -- the dead-letter queue -----------------------------------------------------


@main.group("dlq")
def dlq() -> None:
    """The dead-letter queue: discarded steps."""


@dlq.command("list")
@click.option("--reason", type=click.Choice(DISCARD_KINDS), help="Only steps discarded with this error kind.")
@click.option("--workflow", metavar="NAME", help="Only steps of runs of this workflow.")
@click.option("--limit", type=click.IntRange(1, 10000), default=100, show_default=True, help="At most this many.")
@json_option
@pass_settings
def dlq_list(settings: Settings, reason: str | None, workflow: str | None, limit: int, as_json: bool) -> None:
    """List discarded steps, newest first (retry them with `cyclone retry`)."""
    rows = settings.client().dlq(error_kind=reason, workflow=workflow, limit=limit)
    if as_json:
        echo_json([as_dict(r) for r in rows])
        return
    echo_table(
        ["run", "workflow", "node", "reason", "attempt", "discarded", "error"],
        [(r.run_id, r.workflow, r.node, r.error_kind, attempts(r), r.completed_at, short_error(r.error))
         for r in rows],
        empty="no discarded steps",
    )


# -- operator actions -------------------------------------------------------------


@main.command("retry")
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


@main.command("cancel")
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


@main.command("pause")
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


@main.command("resume")
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


@main.command("signal")
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


# -- limits ----------------------------------------------------------------------


def _bucket(name: str) -> str:
    return repr(name)  # '' for the bucket of a limit without a key


def _rate(row: LimitRow) -> str:
    return "-" if row.rate is None else f"{row.rate}/{fmt_interval(row.period)}"


def _limits_json(as_json: bool) -> bool:
    """``--json`` given to the subcommand or to ``cyclone limits`` itself."""
    return as_json or bool(click.get_current_context().meta.get("cyclone.limits.json"))


def _limit_document(row: LimitRow) -> dict[str, Any]:
    return {"name": row.name, "concurrency": row.concurrency, "rate": row.rate,
            "period": None if row.period is None else row.period.total_seconds()}


def _list_limits(client: Client, *, as_json: bool) -> None:
    rows = client.limits()
    if as_json:
        echo_json([as_dict(r) for r in rows])
        return
    echo_table(
        ["name", "bucket", "concurrency", "running", "rate", "claims in period", "available"],
        [(r.name, _bucket(r.bucket), r.concurrency, r.running, _rate(r), r.claims_in_period, r.available)
         for r in rows],
        empty="no limits",
    )


@main.group("limits", invoke_without_command=True)
@json_option
@pass_settings
@click.pass_context
def limits(ctx: click.Context, settings: Settings, as_json: bool) -> None:
    """List limits and their buckets (`cyclone limits`), or change one.

    A limit bounds how many steps of each of its buckets run at once
    (concurrency) and how many are claimed in any period (rate). Workers
    register the limits their app declares when they start, and the app's
    values win over those set here.
    """
    ctx.meta["cyclone.limits.json"] = as_json
    if ctx.invoked_subcommand is None:
        _list_limits(settings.client(), as_json=as_json)


@limits.command("list")
@json_option
@pass_settings
def limits_list(settings: Settings, as_json: bool) -> None:
    """List each limit's buckets: running steps, claims in the current period,
    and available (the due steps that take the bucket and are not running)."""
    _list_limits(settings.client(), as_json=_limits_json(as_json))


@limits.command("set")
@click.argument("name")
@click.option("--concurrency", type=int, default=None, metavar="N", help="At most N running steps per bucket.")
@click.option("--rate", type=int, default=None, metavar="N", help="At most N claims per bucket in any --per.")
@click.option("--per", type=Duration(), default=None, metavar="DURATION", help="The rate's period (1s, 1m, 1h).")
@json_option
@pass_settings
def limits_set(settings: Settings, name: str, concurrency: int | None, rate: int | None, per: timedelta | None,
               as_json: bool) -> None:
    """Create or replace limit NAME (cyclone.define_limit).

    Every value is set anew: one not given is no bound. Give --concurrency,
    or --rate with --per, or both. Applies to the next claim; lowering it
    cancels nothing. A worker whose app declares NAME sets the app's values
    again when it starts.
    """
    client = settings.client()
    client.define_limit(name, concurrency, rate, per)
    row = next(r for r in client.limits(name) if r.bucket == "")
    if _limits_json(as_json):
        echo_json(_limit_document(row))
        return
    values = [] if row.concurrency is None else [f"concurrency {row.concurrency}"]
    if row.rate is not None:
        values.append(f"rate {row.rate} per {fmt_interval(row.period)}")
    click.echo(f"limit {name!r} set: {', '.join(values)}")


@limits.command("rm")
@click.argument("name")
@json_option
@pass_settings
def limits_rm(settings: Settings, name: str, as_json: bool) -> None:
    """Remove limit NAME (cyclone.drop_limit).

    Refused while a workflow definition names it or an unfinished step takes
    it. A worker whose app still declares it registers it again when it starts.
    """
    if not settings.client().drop_limit(name):
        fail(f'limit "{name}" not found')
    if _limits_json(as_json):
        echo_json({"name": name, "removed": True})
        return
    click.echo(f"limit {name!r} removed")


@main.command("explain")
@click.argument("step_id", type=int)
@json_option
@pass_settings
def explain(settings: Settings, step_id: int, as_json: bool) -> None:
    """Say why step STEP_ID is not running (cyclone.explain_step).

    The first reason that applies: its terminal state, running, waiting for a
    signal or a child run, waiting for dependencies, its run ended or paused,
    not due yet (a backoff or a run_at), a full limit bucket, a rate limit, or
    claimable (and, when it has been for a while, that no worker claims it).
    Step ids are in `cyclone steps RUN_ID --json`.
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


# -- schedules -------------------------------------------------------------------


def _schedule_document(row: ScheduleRow) -> dict[str, Any]:
    """A schedule for ``--json``: the view's columns, the last run's state, and
    the next slot on the schedule's own clock."""
    doc = as_dict(row)
    del doc["next_fire_wall"]
    doc["next_fire_local"] = row.next_fire_local
    return doc


def _get_schedule(client: Client, name: str) -> ScheduleRow:
    rows = client.schedules(name)
    if not rows:
        fail(f'schedule "{name}" not found')
    return rows[0]


def _schedules_json(as_json: bool) -> bool:
    """``--json`` given to the subcommand or to ``cyclone schedules`` itself."""
    ctx = click.get_current_context()
    return as_json or bool(ctx.meta.get("cyclone.schedules.json"))


def _list_schedules(client: Client, *, as_json: bool) -> None:
    rows = client.schedules()
    if as_json:
        echo_json([_schedule_document(r) for r in rows])
        return
    echo_table(
        ["name", "cron", "timezone", "workflow", "next fire", "next fire (utc)", "last slot", "last run", "state",
         "paused", "overlap"],
        [(r.name, r.cron, r.timezone, r.workflow, fmt_local(r.next_fire_local), r.next_fire_at, r.last_slot,
          r.last_run_id, r.last_run_state, "yes" if r.paused else "no", r.overlap) for r in rows],
        empty="no schedules",
    )


@main.group("schedules", invoke_without_command=True)
@json_option
@pass_settings
@click.pass_context
def schedules(ctx: click.Context, settings: Settings, as_json: bool) -> None:
    """List schedules (`cyclone schedules`), or change one.

    A schedule submits a workflow at every fire time of a cron in a time zone
    (the run's input gets `scheduled_for`, the slot in UTC). Workers register
    the schedules their app declares when they start; these commands act on the
    engine's schedules directly.
    """
    ctx.meta["cyclone.schedules.json"] = as_json
    if ctx.invoked_subcommand is None:
        _list_schedules(settings.client(), as_json=as_json)


@schedules.command("list")
@json_option
@pass_settings
def schedules_list(settings: Settings, as_json: bool) -> None:
    """List schedules: next fire time (in the schedule's zone and in UTC), last slot, last run and its state."""
    _list_schedules(settings.client(), as_json=_schedules_json(as_json))


@schedules.command("set")
@click.argument("name")
@click.argument("cron")
@click.argument("workflow")
@click.option("--input", "input_", type=JSON, metavar="JSON|@FILE",
              help="The runs' input, a JSON object (inline, @FILE or @-). Default: {}.")
@click.option("--timezone", "--tz", "timezone", default="UTC", show_default=True, metavar="TZ",
              help="The time zone whose wall clock the cron reads (a name of pg_timezone_names).")
@click.option("--overlap", type=click.Choice(OVERLAP_POLICIES), default="skip", show_default=True,
              help="While a run of the schedule is unfinished: skip the slot, allow another run, "
                   "or cancel_other (cancel it, then submit).")
@click.option("--catchup", type=Duration(), default="1h", show_default=True, metavar="DURATION",
              help="Slots older than this when a tick sees them are skipped, except the latest (0s: latest only).")
@click.option("--deadline", type=Duration(), metavar="DURATION", help="Each run's deadline (30s, 5m, 1h30m).")
@json_option
@pass_settings
def schedules_set(settings: Settings, name: str, cron: str, workflow: str, input_: Any, timezone: str,
                  overlap: str, catchup: timedelta, deadline: timedelta | None, as_json: bool) -> None:
    """Create or replace schedule NAME: run WORKFLOW at every fire time of CRON.

    CRON has five fields (minute hour day-of-month month day-of-week) or is one
    of @yearly @monthly @weekly @daily @hourly; quote it. Replacing a schedule
    sets every option anew (an option not given goes back to its default) but
    keeps the slots already fired and the paused state.
    """
    client = settings.client()
    client.schedule(name, cron, workflow, input_, timezone, overlap, catchup, deadline)
    row = _get_schedule(client, name)
    if _schedules_json(as_json):
        echo_json(_schedule_document(row))
        return
    state = "; paused" if row.paused else ""
    click.echo(f"schedule {name!r} set: {workflow} at {cron!r} ({timezone}); next fire "
               f"{fmt_local(row.next_fire_local)} ({fmt_time(row.next_fire_at)}){state}")


@schedules.command("rm")
@click.argument("name")
@json_option
@pass_settings
def schedules_rm(settings: Settings, name: str, as_json: bool) -> None:
    """Remove schedule NAME; its runs stay.

    A worker whose app still declares it registers it again when it starts.
    """
    if not settings.client().unschedule(name):
        fail(f'schedule "{name}" not found')
    if _schedules_json(as_json):
        echo_json({"name": name, "removed": True})
        return
    click.echo(f"schedule {name!r} removed (its runs stay)")


def _pause_or_resume(settings: Settings, name: str, *, pause: bool, as_json: bool) -> None:
    client = settings.client()
    changed = client.pause_schedule(name) if pause else client.resume_schedule(name)
    if not changed:
        _get_schedule(client, name)  # missing: say so, exit 1
    verb = "paused" if pause else "resumed"
    if _schedules_json(as_json):
        echo_json({"name": name, "paused": pause, "changed": changed})
        return
    if changed:
        click.echo(f"schedule {name!r} {verb}")
    else:
        click.echo(f"schedule {name!r} is {'already' if pause else 'not'} paused; nothing changed")


@schedules.command("pause")
@click.argument("name")
@json_option
@pass_settings
def schedules_pause(settings: Settings, name: str, as_json: bool) -> None:
    """Pause schedule NAME: it fires nothing until resumed.

    Its runs already submitted go on. Workers that restart keep it paused.
    Pausing a paused schedule changes nothing and exits 0.
    """
    _pause_or_resume(settings, name, pause=True, as_json=as_json)


@schedules.command("resume")
@click.argument("name")
@json_option
@pass_settings
def schedules_resume(settings: Settings, name: str, as_json: bool) -> None:
    """Resume schedule NAME.

    The slots missed while it was paused follow its catch-up rule at the next
    tick: the latest one is fired, older ones only within --catchup. Resuming
    a schedule that is not paused changes nothing and exits 0.
    """
    _pause_or_resume(settings, name, pause=False, as_json=as_json)


@schedules.command("backfill")
@click.argument("name")
@click.option("--from", "start", type=MOMENT, required=True, metavar="TIME",
              help="The first moment of the range (ISO 8601; UTC without an offset).")
@click.option("--to", "end", type=MOMENT, required=True, metavar="TIME",
              help="The end of the range, not included (ISO 8601, or now).")
@json_option
@pass_settings
def schedules_backfill(settings: Settings, name: str, start: datetime | str, end: datetime | str,
                       as_json: bool) -> None:
    """Submit a run for every slot of NAME in [--from, --to) that has none yet.

    Overlap is ignored; a slot that already has a run (fired or backfilled) is
    left alone, so a backfill can be repeated. Prints how many runs it created.
    """
    client = settings.client()
    start_at, end_at = moment(client, start), moment(client, end)
    created = client.backfill(name, start_at, end_at)
    if _schedules_json(as_json):
        echo_json({"name": name, "from": start_at, "to": end_at, "created": created})
        return
    click.echo(f"backfill of schedule {name!r}: {created} run{'' if created == 1 else 's'} created")


@main.command("cron-next")
@click.argument("cron")
@click.option("--tz", "--timezone", "timezone", default="UTC", show_default=True, metavar="TZ",
              help="The time zone whose wall clock the cron reads.")
@click.option("-n", "--count", "count", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="How many fire times.")
@click.option("--after", type=MOMENT, default=NOW, show_default=True, metavar="TIME",
              help="Fire times strictly after this (ISO 8601, UTC without an offset; now: the engine clock).")
@json_option
@pass_settings
def cron_next(settings: Settings, cron: str, timezone: str, count: int, after: datetime | str,
              as_json: bool) -> None:
    """Preview the next fire times of CRON (cyclone.next_fire), in its zone and in UTC."""
    client = settings.client()
    times = client.next_fires(cron, moment(client, after), timezone, count)
    if as_json:
        echo_json([{"at": t.at, "local": t.local} for t in times])
        return
    echo_table(["local", "utc"], [(fmt_local(t.local, weekday=True), t.at) for t in times], empty="")


@main.command("prune")
@click.option("--older-than", type=Duration(), required=True, metavar="DURATION",
              help="Delete runs that finished longer ago than this (e.g. 30d).")
@click.option("--batch", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Runs deleted per call (each call is one short transaction).")
@click.option("--reindex", is_flag=True,
              help="Then rebuild the engine's indexes (REINDEX TABLE CONCURRENTLY; needs the tables' owner).")
@json_option
@pass_settings
def prune(settings: Settings, older_than: timedelta, batch: int, reindex: bool, as_json: bool) -> None:
    """Delete finished runs and their steps, oldest first, until none is left.

    A finished child run whose parent is still live is kept. PostgreSQL keeps
    an index at its peak size after a large delete: --reindex rebuilds them
    without blocking the engine.
    """
    client = settings.client()
    total = 0
    while (deleted := client.prune(older_than, batch)) > 0:
        total += deleted
    if reindex:
        client.reindex()
    if as_json:
        echo_json({"pruned": total, "reindexed": reindex})
        return
    click.echo(f"pruned {total} run{'' if total == 1 else 's'}" + ("; indexes rebuilt" if reindex else ""))


@main.command("check")
@json_option
@pass_settings
def check(settings: Settings, as_json: bool) -> None:
    """Check the engine's consistency rules (cyclone.check_invariants()).

    Prints every row that breaks one and exits 1, or says the state is
    consistent and exits 0. One snapshot: safe while workers run. Needs
    cyclone_admin.
    """
    violations = settings.client().check_invariants()
    if as_json:
        echo_json([{"invariant": v.invariant, "detail": v.detail} for v in violations])
    elif not violations:
        click.echo("consistent: no invariant is broken")
    else:
        echo_table(["invariant", "detail"],
                   [(v.invariant, json.dumps(v.detail, sort_keys=True)) for v in violations], empty="")
    if violations:
        sys.exit(1)


@main.command("tick")
@click.option("--max-reclaims", type=click.IntRange(min=0), default=0, show_default=True,
              envvar="CYCLONE_MAX_RECLAIMS", show_envvar=True,
              help="Discard a step whose lease expired this many times (0 = unbounded).")
@json_option
@pass_settings
def tick(settings: Settings, max_reclaims: int, as_json: bool) -> None:
    """Run one pass of time-driven work.

    Reclaims expired leases, retries or discards timed-out steps, fails runs
    past their deadline, discards waits past their max_wait, fires the due
    slots of schedules and archives finished runs (docs/history.md).
    """
    result = settings.client().tick(max_reclaims)
    if as_json:
        echo_json(dict(result.raw))
        return
    echo_fields([
        ("reclaimed", result.reclaimed),
        ("retried", result.retried),
        ("discarded", result.discarded),
        ("deadlines", result.deadlines),
        ("max_wait", result.max_wait),
        ("scheduled", result.scheduled),
        ("skipped", result.skipped_slots),
        ("archived", result.archived),
    ])
    if result.discarded_steps:
        click.echo()
        echo_table(
            ["run", "workflow", "node", "reason", "error"],
            [(d.run_id, d.workflow, d.node, d.error_kind, short_error(d.error)) for d in result.discarded_steps],
            empty="",
        )


if __name__ == "__main__":  # pragma: no cover
    main()
