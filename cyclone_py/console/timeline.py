"""A run's timeline (a Gantt chart of its steps' attempts), shaped from the
rows of one page of its steps and the errors they were given.

Each step is a lane: its current attempt a bar from ``started_at`` to
``completed_at`` (to now while it runs or waits), and each attempt that
failed a mark at the time of its error (``cyclone_step_errors``: the engine
keeps when an attempt failed, not when it began; a discard's mark is at the
end of its bar). The scale is
the run's span, from its start to its end (or now), stretched to hold every
bar and mark.

Nothing here reads the database or decides a state. The template draws each
lane as an inline SVG from the numbers computed here (positions in
thousandths of the span) and the step's state as a class; the step's name is
HTML beside it, never text in the SVG.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from cyclone_py.client import FailedAttempt, StepDetail
from cyclone_py.formatting import fmt_duration, fmt_step

#: The width of a lane in SVG units: a position is a thousandth of the span.
WIDTH = 1000.0
#: The narrowest bar drawn (an attempt of no measurable length stays visible).
MIN_BAR = 3.0


@dataclass(frozen=True)
class Bar:
    """A step's current attempt: where it is drawn, when, and for how long."""

    x: float
    width: float
    attempt: int
    start: datetime
    end: datetime | None
    took: timedelta


@dataclass(frozen=True)
class Mark:
    """An attempt that failed: where its error is drawn, and what it was."""

    x: float
    attempt: int
    at: datetime
    error_kind: str
    discarded: bool


@dataclass(frozen=True)
class Lane:
    row: int
    node: str
    label: str
    state: str
    bar: Bar | None
    marks: tuple[Mark, ...]

    @property
    def took_text(self) -> str:
        return "" if self.bar is None else fmt_duration(self.bar.took)


@dataclass(frozen=True)
class Timeline:
    start: datetime
    end: datetime
    lanes: tuple[Lane, ...]

    @property
    def middle(self) -> datetime:
        return self.start + (self.end - self.start) / 2

    @property
    def span_text(self) -> str:
        return fmt_duration(self.end - self.start)


def build(steps: Sequence[StepDetail], failures: Iterable[FailedAttempt], *, start: datetime,
          end: datetime | None, now: datetime, first_row: int = 0) -> Timeline:
    """The timeline of ``steps`` (one page of a run's steps, lane ``first_row``
    and on), from ``start`` (the run's) to ``end`` (the run's, None while it
    runs: now)."""
    by_step: dict[int, list[FailedAttempt]] = {}
    for f in failures:
        by_step.setdefault(f.step_id, []).append(f)
    spans: list[tuple[StepDetail, datetime | None, datetime | None]] = []
    last = end or now
    first = start
    for s in steps:
        begin = s.started_at
        finish = s.completed_at if s.completed_at is not None else (now if begin is not None else None)
        if begin is not None and finish is not None and finish < begin:
            finish = begin
        spans.append((s, begin, finish))
        for moment in (begin, finish, *(f.at for f in by_step.get(s.id, ()))):
            if moment is not None:
                first, last = min(first, moment), max(last, moment)
    if last <= first:
        last = first + timedelta(seconds=1)
    total = (last - first).total_seconds()

    def x(at: datetime) -> float:
        return round(WIDTH * (at - first).total_seconds() / total, 1)

    lanes = []
    for i, (s, begin, finish) in enumerate(spans):
        bar = None
        if begin is not None and finish is not None:
            left = x(begin)
            bar = Bar(x=min(left, WIDTH - MIN_BAR), width=max(MIN_BAR, x(finish) - left), attempt=s.attempt,
                      start=begin, end=s.completed_at, took=finish - begin)
        marks = tuple(Mark(x(f.at), f.attempt, f.at, f.error_kind, f.discarded) for f in by_step.get(s.id, ()))
        lanes.append(Lane(first_row + i, s.node, fmt_step(s.node, s.item_index), s.state, bar, marks))
    return Timeline(first, last, tuple(lanes))
