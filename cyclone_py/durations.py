"""Durations: every Cyclone API that takes one accepts a timedelta or seconds.

How a face prints one is :func:`cyclone_py.formatting.fmt_duration`.
"""

from __future__ import annotations

from datetime import timedelta

__all__ = ["Duration", "to_seconds", "to_timedelta"]

#: A duration: a ``timedelta``, or seconds as a float (or an int).
Duration = timedelta | float


def to_timedelta(value: Duration) -> timedelta:
    """``value`` as a timedelta (a number is seconds)."""
    return value if isinstance(value, timedelta) else timedelta(seconds=float(value))


def to_seconds(value: Duration) -> float:
    """``value`` in seconds."""
    return value.total_seconds() if isinstance(value, timedelta) else float(value)

