"""The log formats of ``cyclone worker``: one event per line, as text or JSON.

Both carry a record's structured ``extra`` (the worker puts ``worker`` on
every record, and ``run_id``, ``step_id``, ``node``, ``workflow`` and
``attempt`` on every step event: :func:`cyclone_py.runtime.log_extra`).
:class:`KeyValueFormatter` appends them to the line as ``key=value``;
:class:`JsonFormatter` writes the event as one JSON object. Neither knows
what the fields mean: what is logged (never a payload at INFO) is the
callers' rule.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

__all__ = ["FORMATS", "JsonFormatter", "KeyValueFormatter", "formatter"]

# The fields every LogRecord has: anything else on a record came from ``extra``.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def extras(record: logging.LogRecord) -> dict[str, Any]:
    """The record's structured fields (what ``extra=`` added), in order."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD}


class KeyValueFormatter(logging.Formatter):
    """Plain log lines with the structured ``extra`` fields appended as key=value."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = " ".join(f"{k}={v}" for k, v in extras(record).items())
        return f"{line} {fields}" if fields else line


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``time`` (UTC, ISO 8601), ``level``, ``logger``,
    ``message``, then the ``extra`` fields (a field named like one of the
    four does not replace it), and ``exc_info`` / ``stack_info`` as text
    when the record has them. Values JSON cannot hold (a UUID, a timedelta)
    are written as their ``str()``."""

    def format(self, record: logging.LogRecord) -> str:
        event: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in extras(record).items():
            event.setdefault(key, value)
        if record.exc_info:
            event["exc_info"] = self.formatException(record.exc_info)
        elif record.exc_text:
            event["exc_info"] = record.exc_text
        if record.stack_info:
            event["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(event, default=str, ensure_ascii=False)


FORMATS = ("text", "json")


def formatter(name: str) -> logging.Formatter:
    """The formatter of a ``--log-format`` value: ``text`` or ``json``."""
    if name == "json":
        return JsonFormatter()
    if name == "text":
        return KeyValueFormatter(TEXT_FORMAT)
    raise ValueError(f"unknown log format {name!r} (one of: {', '.join(FORMATS)})")
