"""Cyclone: a durable workflow engine whose state machine lives in PostgreSQL.

The Python package is a thin runtime over the SQL functions of schema
``cyclone``: declare workflows (:class:`Workflow`, :class:`App`), their
limits (:class:`Limit`) and schedules (:class:`Schedule`), run them
(:class:`Worker`), drive the engine directly (:class:`Client`), and test without waiting
(:class:`cyclone_py.testing.Env`).
"""

from __future__ import annotations

from cyclone_py import errors, vocabulary
from cyclone_py.client import (
    ClaimedStep,
    Client,
    EventRow,
    Explanation,
    FireTime,
    LimitRow,
    Run,
    RunRow,
    ScheduleRow,
    StepRow,
    TickResult,
)
from cyclone_py.context import StepContext
from cyclone_py.errors import (
    Cancelled,
    CycloneError,
    DatabaseUnavailable,
    InvalidArgument,
    NotFound,
    Permanent,
    ReclaimLimitExceeded,
    Snooze,
    StepFailed,
    WrongState,
)
from cyclone_py.limit import Limit, LimitUse
from cyclone_py.loader import load_app
from cyclone_py.schedule import Schedule
from cyclone_py.version import __version__ as __version__
from cyclone_py.worker import Worker
from cyclone_py.workflow import App, Workflow

__all__ = [
    "App",
    "Cancelled",
    "ClaimedStep",
    "Client",
    "CycloneError",
    "DatabaseUnavailable",
    "EventRow",
    "Explanation",
    "FireTime",
    "InvalidArgument",
    "Limit",
    "LimitRow",
    "LimitUse",
    "NotFound",
    "Permanent",
    "ReclaimLimitExceeded",
    "Run",
    "RunRow",
    "Schedule",
    "ScheduleRow",
    "Snooze",
    "StepContext",
    "StepFailed",
    "StepRow",
    "TickResult",
    "Worker",
    "Workflow",
    "WrongState",
    "errors",
    "load_app",
    "vocabulary",
]
