"""The overview page's numbers, shaped from the client's rows: what each
workflow is doing (its live runs, counted up to a cap, its ready steps and
their lag, its dead letters), the runs that finished in the last hour by
minute of finishing and by how they ended (the sparklines), the dead letters
with the newest errors, the registered workers, the limits' buckets and the
next schedule slots.

Nothing here reads the database or decides a state: :func:`build` only
groups rows the page's client calls returned (``overview_gauges``,
``finished_per_minute``, ``workers``, ``lease_holders``, ``limits``,
``schedules``, ``dead_letters``) and gives every number the URL of the list behind it (the
runs list and the dead letters with their filters, the runs that finished in
a range, the limits and schedules filtered by name): a number on the
overview is a link to its rows.

The sparklines are drawn as SVG by the template from numbers only (bar
positions and heights computed here); the text around them (a workflow's
name, a title) is the template's, escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from cyclone_py.client import LeaseHolder, LimitRow, Metric, MinuteCount, ScheduleRow, StepRow, WorkerRow
from cyclone_py.formatting import fmt_duration

#: Minutes a sparkline covers (the last hour, the current minute the last bar).
MINUTES = 60
#: The sparklines' height in SVG units (their width is one unit a minute).
SPARK_HEIGHT = 20.0
#: The ends of the runs that finished in the last hour a workflow's row counts, and the two it draws.
HOUR_STATES = ("completed", "failed", "cancelled")
DRAWN_STATES = ("completed", "failed")
#: Live runs counted a workflow (cyclone.overview_gauges' p_cap): past it the page says "100+".
LIVE_CAP = 100
#: Rows of a card at most (the page stays bounded); the rest is a link away.
CARD_ROWS = 20
#: The newest dead letters shown with their errors.
NEWEST_DEAD = 5


def runs_url(**filters: str | None) -> str:
    """The runs list with these filters (times as the filter form writes them: UTC, to the second)."""
    return "/runs?" + urlencode({k: v for k, v in filters.items() if v})


def form_time(at: datetime) -> str:
    """A moment as a ``datetime-local`` field holds it, in UTC (the filters' zone)."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")


def utc_iso(at: datetime) -> str:
    """A moment for ``<time datetime>`` (the browser shows it in its own zone: console.js)."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Bar:
    """One minute of a sparkline: where it is drawn, how many runs, and their list."""

    x: float
    height: float
    runs: int
    start: datetime
    href: str


@dataclass(frozen=True)
class Spark:
    """A state's runs of the last hour: how many, their list, and a bar for each minute that has some."""

    state: str
    total: int
    href: str
    bars: list[Bar]


@dataclass
class WorkflowRow:
    """A workflow as the overview shows it (each count with the list behind it)."""

    name: str
    running: int = 0
    paused: int = 0
    ready: int = 0
    ready_lag: float = 0.0
    dead: int = 0
    #: more live runs than LIVE_CAP: running and paused are lower bounds ("100+")
    capped: bool = False
    #: the runs that finished in the last hour, by how they ended: (count, URL)
    hour: dict[str, tuple[int, str]] = field(default_factory=dict)
    sparks: list[Spark] = field(default_factory=list)

    def url(self, **filters: str | None) -> str:
        return runs_url(workflow=self.name, **filters)

    def ended_url(self, state: str, since: datetime, until: datetime) -> str:
        """The runs list of this workflow's runs that ended in ``state`` within ``[since, until)``."""
        return self.url(state=state, ended_from=form_time(since), ended_until=form_time(until))

    @property
    def more(self) -> str:
        """``+`` after a count that is a lower bound."""
        return "+" if self.capped else ""

    @property
    def lag_text(self) -> str:
        return fmt_duration(self.ready_lag) if self.ready_lag > 0 else "0s"


@dataclass(frozen=True)
class DeadKind:
    kind: str
    count: int
    href: str


@dataclass(frozen=True)
class WorkerLine:
    """A registered worker, or a lease owner that is not registered (``alive``
    None: a worker of a release before the registry, or a claim made in SQL)."""

    name: str
    alive: bool | None
    handlers: str
    running: int
    seen: str


@dataclass(frozen=True)
class LimitLine:
    name: str
    bucket: str
    default_bucket: bool
    running: int
    concurrency: int | None
    claims: int | None
    rate: int | None
    period: timedelta | None
    available: int
    href: str


@dataclass(frozen=True)
class SlotLine:
    name: str
    workflow: str
    at: datetime
    iso: str
    zone: str
    paused: bool
    href: str
    runs_href: str


@dataclass
class Overview:
    now: datetime
    since: datetime
    until: datetime
    workflows: list[WorkflowRow]
    totals: dict[str, int]
    dead_total: int
    dead_kinds: list[DeadKind]
    newest_dead: Sequence[StepRow]
    workers: list[WorkerLine]
    workers_more: int
    limits: list[LimitLine]
    limits_more: int
    slots: list[SlotLine]
    expired_leases: int
    #: some workflow has more than LIVE_CAP live runs: the running and paused totals are lower bounds
    capped: bool = False

    @property
    def more(self) -> str:
        return "+" if self.capped else ""


def window(now: datetime) -> tuple[datetime, datetime]:
    """The sparklines' hour: ``MINUTES`` whole minutes ending with the current one."""
    minute = now.astimezone(UTC).replace(second=0, microsecond=0)
    return minute - timedelta(minutes=MINUTES - 1), minute + timedelta(minutes=1)


def _names(value: Any) -> str:
    """A worker's handlers as its info gives them (untrusted: any JSON): ``any``
    when it does not say (claim reads a missing list as every handler)."""
    if value is None:
        return "any"
    text = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    text = text or "none"
    return text if len(text) <= 120 else text[:119] + "…"


def _sparks(row: WorkflowRow, counts: Mapping[tuple[str, int], int], since: datetime) -> list[Spark]:
    sparks = []
    for state in DRAWN_STATES:
        series = [counts.get((state, i), 0) for i in range(MINUTES)]
        peak = max(series) or 1
        bars = []
        for i, n in enumerate(series):
            if not n:  # an empty minute is the sparkline's baseline: nothing to draw or link
                continue
            start = since + timedelta(minutes=i)
            bars.append(Bar(x=float(i), height=max(1.0, SPARK_HEIGHT * n / peak), runs=n, start=start,
                            href=row.ended_url(state, start, start + timedelta(minutes=1))))
        sparks.append(Spark(state, sum(series), row.hour[state][1], bars))
    return sparks


def _ago(now: datetime, at: datetime | None) -> str:
    return "" if at is None else fmt_duration(max(now - at, timedelta(0))) + " ago"


def _workers(now: datetime, workers: Sequence[WorkerRow], holders: Sequence[LeaseHolder]) -> list[WorkerLine]:
    """The registry's workers, then the lease owners it does not name."""
    lines = [WorkerLine(w.name, w.alive, _names(w.info.get("handlers") if isinstance(w.info, dict) else None),
                        w.running, _ago(now, w.last_seen_at)) for w in workers]
    known = {w.name for w in workers}
    lines += [WorkerLine(h.owner, None, "", h.steps, _ago(now, h.last_heartbeat)) for h in holders
              if h.owner not in known]
    return lines


def build(now: datetime, gauges: Iterable[Metric], minutes: Iterable[MinuteCount], workers: Sequence[WorkerRow],
          holders: Sequence[LeaseHolder], limits: Sequence[LimitRow], schedules: Sequence[ScheduleRow],
          newest_dead: Sequence[StepRow]) -> Overview:
    """The overview of the rows the page read at ``now`` (engine time): ``gauges`` are
    ``overview_gauges()``'s (named as ``metrics()``'s), ``minutes`` the runs finished in the
    sparklines' hour by minute of finishing."""
    since, until = window(now)
    rows: dict[str, WorkflowRow] = {}

    def wf(name: Any) -> WorkflowRow:
        key = str(name)
        return rows.setdefault(key, WorkflowRow(key))

    dead_kinds: dict[str, int] = {}
    expired = 0
    for m in gauges:
        labels = m.labels if isinstance(m.labels, dict) else {}
        value = int(m.value) if m.name != "cyclone_ready_lag_seconds" else 0
        if m.name == "cyclone_runs" and "workflow" in labels:
            row = wf(labels["workflow"])
            if labels.get("state") == "running":
                row.running = value
            elif labels.get("state") == "paused":
                row.paused = value
        elif m.name == "cyclone_runs_capped" and "workflow" in labels:
            wf(labels["workflow"]).capped = True
        elif m.name == "cyclone_steps" and labels.get("state") == "available" and "workflow" in labels:
            wf(labels["workflow"]).ready = value
        elif m.name == "cyclone_ready_lag_seconds" and "workflow" in labels:
            wf(labels["workflow"]).ready_lag = float(m.value)
        elif m.name == "cyclone_dlq_steps" and "workflow" in labels:
            wf(labels["workflow"]).dead += value
            kind = str(labels.get("error_kind"))
            dead_kinds[kind] = dead_kinds.get(kind, 0) + value
        elif m.name == "cyclone_expired_leases":
            expired = value
    by_workflow: dict[str, dict[tuple[str, int], int]] = {}
    for c in minutes:
        i = int((c.minute - since) // timedelta(minutes=1))
        if 0 <= i < MINUTES:
            key = (c.state, i)
            series = by_workflow.setdefault(c.workflow, {})
            series[key] = series.get(key, 0) + c.runs
            wf(c.workflow)
    for name, row in rows.items():
        counts = by_workflow.get(name, {})
        for state in HOUR_STATES:
            n = sum(v for (s, _), v in counts.items() if s == state)
            row.hour[state] = (n, row.ended_url(state, since, until))
        row.sparks = _sparks(row, counts, since)
    ordered = sorted(rows.values(), key=lambda r: r.name)
    totals = {"running": sum(r.running for r in ordered), "paused": sum(r.paused for r in ordered),
              "ready": sum(r.ready for r in ordered)}
    totals.update({f"hour_{s}": sum(r.hour[s][0] for r in ordered) for s in HOUR_STATES})
    capped = any(r.capped for r in ordered)
    worker_lines = _workers(now, workers, holders)
    totals["workers_alive"] = sum(1 for w in workers if w.alive)
    limit_lines = [LimitLine(li.name, li.bucket, li.bucket == "", li.running, li.concurrency, li.claims_in_period,
                             li.rate, li.period, li.available, "/limits?" + urlencode({"name": li.name}))
                   for li in limits[:CARD_ROWS]]
    upcoming = sorted(schedules, key=lambda s: (s.paused, s.next_fire_at))[:CARD_ROWS]
    slots = [SlotLine(s.name, s.workflow, s.next_fire_at, utc_iso(s.next_fire_at), s.timezone, s.paused,
                      "/schedules?" + urlencode({"name": s.name}), runs_url(workflow=s.workflow))
             for s in upcoming]
    return Overview(
        now=now, since=since, until=until, workflows=ordered, totals=totals, capped=capped,
        dead_total=sum(dead_kinds.values()),
        dead_kinds=[DeadKind(k, n, "/dead-letters?" + urlencode({"kind": k})) for k, n in sorted(dead_kinds.items())],
        newest_dead=newest_dead[:NEWEST_DEAD], workers=worker_lines[:CARD_ROWS],
        workers_more=max(0, len(worker_lines) - CARD_ROWS),
        limits=limit_lines, limits_more=max(0, len(limits) - CARD_ROWS), slots=slots, expired_leases=expired)
