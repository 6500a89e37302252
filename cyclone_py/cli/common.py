"""What every command shares: its one-line errors, the DSN, the option types.

- :class:`CycloneGroup` turns every expected error into one line on stderr
  (exit 1) and never a traceback; :func:`fail` is that line.
- :class:`Settings` resolves the target database (``--dsn``, ``CYCLONE_DSN``,
  ``DATABASE_URL``, else the embedded one); :func:`pass_settings` hands it to a
  command and accepts ``--dsn`` after the command too.
- The option types (durations, JSON, run ids, moments, listen addresses) and
  the options several commands share (``--json``, ``--log-level``,
  ``--log-format``), each reading its ``CYCLONE_*`` variable.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn, TypeVar
from uuid import UUID

import click

from cyclone_py import db, errors, logs
from cyclone_py.client import Client, check_reachable
from cyclone_py.metrics import parse_listen

LOG_LEVELS = ("debug", "info", "warning", "error")

CONNECT_TIMEOUT = 10  # seconds: libpq's connect_timeout for every command

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

    def dsn(self, *, start: bool = False) -> str:
        """The resolved DSN. When it is the embedded database's: with ``start`` (the
        commands that set a database up or serve it: migrate, worker, conformance)
        it is started if it is not running (one line on stderr says so), unless
        ``dev-db stop`` stopped it; without (every other command) it must be
        running already, else :class:`cyclone_py.db.EmbeddedDBError` says how to
        start it. docs/cli.md, Choosing the database, has the rule."""
        return db.resolve_dsn(self._dsn, start=start, running=not start,
                              notice=lambda line: click.echo(f"cyclone: {line}", err=True))

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


# -- options several commands share ------------------------------------------------


def json_option(fn: F) -> F:
    """``--json``: the command's data as JSON, for scripts."""
    return click.option(
        "--json", "as_json", is_flag=True, envvar="CYCLONE_JSON", show_envvar=True,
        help="Print JSON instead of text.",
    )(fn)


def log_level_option(default: str) -> Callable[[F], F]:
    """``--log-level`` (``CYCLONE_LOG_LEVEL``), ``default`` unless given."""
    def decorate(fn: F) -> F:
        return click.option(
            "--log-level", type=click.Choice(LOG_LEVELS, case_sensitive=False), default=default,
            show_default=True, envvar="CYCLONE_LOG_LEVEL", show_envvar=True,
        )(fn)

    return decorate


def log_format_option(fn: F) -> F:
    """``--log-format`` (``CYCLONE_LOG_FORMAT``): text or JSON lines."""
    return click.option(
        "--log-format", type=click.Choice(logs.FORMATS, case_sensitive=False), default="text",
        show_default=True, envvar="CYCLONE_LOG_FORMAT", show_envvar=True,
        help="text: a line with the fields as key=value; json: one JSON object a line.",
    )(fn)


def log_to_stderr(log_level: str, log_format: str) -> None:
    """The root logger at ``log_level``, one line a record on stderr in ``log_format``."""
    handler = logging.StreamHandler()
    handler.setFormatter(logs.formatter(log_format.lower()))
    logging.basicConfig(level=log_level.upper(), handlers=[handler])
