"""Times and durations as the faces print them: the CLI, ``cyclone top`` and the console.

One function per kind of value; where the faces differ, a parameter says how
(the CLI marks UTC with ``Z`` and prints ``-`` for no value; the console's
pages say UTC in their headings and leave a cell empty). A face picks its
arguments once, where it prints, and never formats a time or a duration of
its own.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cyclone_py.durations import Duration, to_seconds

__all__ = ["fmt_duration", "fmt_interval", "fmt_local", "fmt_step", "fmt_time"]


def fmt_time(value: datetime | None, *, empty: str = "-", zulu: bool = True) -> str:
    """A moment in UTC, to the second: ``2025-01-31 12:00:05Z`` (without the ``Z``
    unless ``zulu``); ``empty`` for none."""
    if value is None:
        return empty
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ" if zulu else "%Y-%m-%d %H:%M:%S")


def fmt_local(value: datetime | None, *, weekday: bool = False, empty: str = "-") -> str:
    """A moment on its own offset, to the second: ``2025-01-31 04:00:05+01:00``
    (``Fri 2025-01-31 ...`` with ``weekday``); ``empty`` for none."""
    if value is None:
        return empty
    text = value.isoformat(sep=" ", timespec="seconds")
    return f"{value.strftime('%a')} {text}" if weekday else text


def fmt_duration(value: Duration | None, *, empty: str = "-", full: bool = False) -> str:
    """A duration (a timedelta, or seconds); ``empty`` for none.

    At a glance by default: at most two units, ``0.42s``, ``12s``, ``4m05s``,
    ``2h10m``, ``3d04h`` (a negative one as zero). ``full``: every unit from
    the largest down to whole seconds, signed: ``3m 20s``, ``1d 0h 0m 5s``,
    ``-45s`` (the console's time left and periods).
    """
    if value is None:
        return empty
    if full:
        return _full(int(to_seconds(value)))
    seconds = max(to_seconds(value), 0.0)
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"


def _full(seconds: int) -> str:
    sign = "-" if seconds < 0 else ""
    days, rest = divmod(abs(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days}d"] if days else []
    if hours or days:
        parts.append(f"{hours}h")
    if minutes or hours or days:
        parts.append(f"{minutes}m")
    parts.append(f"{secs}s")
    return sign + " ".join(parts)


def fmt_interval(value: timedelta | None, *, empty: str = "-") -> str:
    """A period as the CLI's duration options spell it, exactly: ``1m``, ``30s``,
    ``1h30m``, ``500ms`` (what ``cyclone limits set --per`` takes back); ``empty``
    for none."""
    if value is None:
        return empty
    micros = value // timedelta(microseconds=1)
    if micros <= 0:
        return f"{value.total_seconds():g}s"
    parts = []
    for unit, size in (("d", 86_400_000_000), ("h", 3_600_000_000), ("m", 60_000_000), ("s", 1_000_000),
                       ("ms", 1_000)):
        n, micros = divmod(micros, size)
        if n:
            parts.append(f"{n}{unit}")
    return "".join(parts) or f"{value.total_seconds():g}s"


def fmt_step(node: str, item_index: int | None) -> str:
    """A step as the faces name it: its node, and a map item's index after it (``resize[3]``, SPEC 16)."""
    return node if item_index is None else f"{node}[{item_index}]"
