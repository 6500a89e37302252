"""Every duration a Python API takes is a timedelta or seconds."""

from __future__ import annotations

from datetime import timedelta
from uuid import uuid4

import pytest

from cyclone_py import Cancelled, StepContext, Worker, Workflow
from cyclone_py.durations import to_seconds, to_timedelta
from cyclone_py.formatting import fmt_duration as short


def test_to_seconds_and_to_timedelta() -> None:
    assert to_seconds(timedelta(minutes=1, milliseconds=500)) == 60.5
    assert to_seconds(2) == 2.0
    assert to_timedelta(1.5) == timedelta(seconds=1.5)
    assert to_timedelta(timedelta(hours=1)) == timedelta(hours=1)


def test_worker_options_take_a_timedelta_or_seconds() -> None:
    wf = Workflow("durations")
    w = Worker(wf, "dbname=unused", lease_ttl=timedelta(seconds=12), poll_interval=0.5,
               shutdown_grace=timedelta(minutes=1), max_db_backoff=timedelta(seconds=3))
    assert (w.lease_ttl, w.poll_interval, w.shutdown_grace, w.max_db_backoff) == (12.0, 0.5, 60.0, 3.0)
    with pytest.raises(ValueError, match="positive"):
        Worker(wf, "dbname=unused", lease_ttl=timedelta(0))


def test_step_context_sleep_takes_a_timedelta() -> None:
    ctx = StepContext(step_id=1, run_id=uuid4(), workflow="w", node="n", handler="n",
                      attempt=1, max_attempts=1, lease_generation=1, input={}, deps=None)
    ctx.sleep(timedelta(milliseconds=1))
    ctx.cancel("test")
    with pytest.raises(Cancelled):
        ctx.sleep(timedelta(hours=1))


def test_short_reads_at_a_glance() -> None:
    assert [short(s) for s in (-1, 0.42, 12, 245, 7800, 273600)] == ["0.00s", "0.42s", "12s", "4m05s", "2h10m",
                                                                       "3d04h"]
    assert short(timedelta(minutes=4, seconds=5)) == "4m05s"
