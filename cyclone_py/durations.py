"""Durations: every Cyclone API that takes one accepts a timedelta or seconds."""

from __future__ import annotations

from datetime import timedelta

__all__ = ["Duration", "short", "to_seconds", "to_timedelta"]

#: A duration: a ``timedelta``, or seconds as a float (or an int).
Duration = timedelta | float


def to_timedelta(value: Duration) -> timedelta:
    """``value`` as a timedelta (a number is seconds)."""
    return value if isinstance(value, timedelta) else timedelta(seconds=float(value))


def to_seconds(value: Duration) -> float:
    """``value`` in seconds."""
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def short(value: Duration) -> str:
    """A duration as people read it at a glance: ``0.42s``, ``12s``, ``4m05s``,
    ``2h10m``, ``3d04h`` (negative ones as zero)."""
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
