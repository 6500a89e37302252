"""How a command prints: aligned tables, ``label  value`` fields, JSON.

Times and durations go through :mod:`cyclone_py.formatting` with the CLI's
choices (UTC with a ``Z``, ``-`` for none), as ``cyclone top`` prints them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import click

from cyclone_py.client import StepRow
from cyclone_py.formatting import fmt_attempts, fmt_duration, fmt_time

ERROR_WIDTH = 60  # characters of an error shown in a table cell


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


def cell(value: Any) -> str:
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
    cells = [[cell(v) for v in row] for row in rows]
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
        lines = cell(value).splitlines() or [""]
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
    """``2/5``, or ``6 of 5 (reopened)`` past the maximum (:func:`cyclone_py.formatting.fmt_attempts`)."""
    return fmt_attempts(step.attempt, step.max_attempts)
