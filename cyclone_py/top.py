"""``cyclone top``: one frame of the engine's gauges as ``rich`` tables.

:func:`frame` lays out the rows of ``cyclone.metrics()`` (SPEC 14) read at
one moment: a header (the engine clock, workers, expired leases), runs and
steps by state with the ready lag and the dead letters of each workflow, the
dead letters by error kind, the limits (running slots, saturated buckets) and
the schedules' next fire times. It only arranges what the SQL counted; the
command (``cli/top.py``) reads the rows and redraws the frame in a ``rich.live.Live``
on a terminal, or prints it as plain lines (:func:`plain`) without one.

A frame fits the width it is given: the workflows' table, one row a workflow
and a column per state, is split into a table of runs and one of steps when it
is wider than the terminal, so that no header is cut; without a width (no
terminal) nothing is cut and lines are as long as they need.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime

from rich import box
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from cyclone_py.client import Metric
from cyclone_py.formatting import fmt_duration, fmt_time
from cyclone_py.vocabulary import LIVE_RUN_STATES, LIVE_STEP_STATES

__all__ = ["frame", "plain"]

#: Columns a frame may take when nothing bounds it (no terminal): more than any frame needs.
UNBOUNDED = 10_000


def _n(value: float) -> str:
    """A count as an integer, anything else with up to 3 significant decimals."""
    return str(int(value)) if float(value).is_integer() else f"{value:.3g}"


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD, show_edge=False,
                 pad_edge=False)


def _label(row: Metric, key: str) -> str:
    value = row.labels.get(key)
    return "" if value is None else str(value)


def _console(width: int) -> Console:
    """A console that writes nowhere, without colours: to measure and to render plain text."""
    return Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False, legacy_windows=False)


def _natural_width(renderable: RenderableType) -> int:
    """The columns ``renderable`` takes when nothing bounds it."""
    console = _console(UNBOUNDED)
    return Measurement.get(console, console.options, renderable).maximum


def plain(renderable: RenderableType) -> str:
    """``renderable`` as plain lines, as wide as they need (nothing cut, no escape codes, no trailing
    blanks): a frame for a pipe or a file."""
    console = _console(UNBOUNDED)
    with console.capture() as captured:
        console.print(renderable)
    return "\n".join(line.rstrip() for line in captured.get().splitlines())


def frame(rows: Sequence[Metric], now: datetime, *, scrape_seconds: float | None = None,
          width: int | None = None) -> RenderableType:
    """The frame of ``metrics()``'s ``rows``, read when the engine clock said ``now``, for a
    terminal ``width`` columns wide (None: no bound)."""
    by_name: dict[str, list[Metric]] = defaultdict(list)
    for row in rows:
        by_name[row.name].append(row)

    def total(name: str) -> float:
        return sum(r.value for r in by_name[name])

    alive, busy = total("cyclone_workers_alive"), total("cyclone_workers")
    expired = total("cyclone_expired_leases")
    header = Text.assemble(
        ("cyclone top", "bold"),
        f"  {fmt_time(now)}  workers alive ",
        (_n(alive), "bold"),
        "  busy ",
        (_n(busy), "bold"),
        "  expired leases ",
        (_n(expired), "bold red" if expired > 0 else "bold"),
        f"  scrape {scrape_seconds * 1000:.0f} ms" if scrape_seconds is not None else "",
    )
    sections = [
        _workflows(by_name, width),
        _dead_letters(by_name["cyclone_dlq_steps"]),
        _limits(by_name["cyclone_limit_running"], by_name["cyclone_limit_saturated_buckets"]),
        _schedules(by_name["cyclone_schedule_next_fire_timestamp_seconds"], now),
    ]
    parts: list[RenderableType] = [header]
    for section in sections:
        parts += [Text(""), section]
    return Group(*parts)


def _workflows(by_name: dict[str, list[Metric]], width: int | None) -> RenderableType:
    """Runs and steps by state, ready lag and dead letters, a row a workflow: one table, or, when
    that is wider than ``width``, a table of runs above one of steps."""
    runs: dict[str, dict[str, float]] = defaultdict(dict)
    steps: dict[str, dict[str, float]] = defaultdict(dict)
    for r in by_name["cyclone_runs"]:
        runs[_label(r, "workflow")][_label(r, "state")] = r.value
    for r in by_name["cyclone_steps"]:
        steps[_label(r, "workflow")][_label(r, "state")] = r.value
    lag = {_label(r, "workflow"): r.value for r in by_name["cyclone_ready_lag_seconds"]}
    dead: dict[str, float] = defaultdict(float)
    for r in by_name["cyclone_dlq_steps"]:
        dead[_label(r, "workflow")] += r.value
    names = sorted(set(runs) | set(steps) | set(lag) | set(dead))
    if not names:
        return Text("no workflows defined", style="dim")

    run_cells = {n: [_n(runs[n].get(s, 0.0)) for s in LIVE_RUN_STATES] for n in names}
    step_cells = {n: [_n(steps[n].get(s, 0.0)) for s in LIVE_STEP_STATES] for n in names}
    tail: dict[str, list[RenderableType]] = {
        n: [fmt_duration(lag.get(n, 0.0)), Text(_n(dead[n]), style="red" if dead[n] > 0 else "")] for n in names}

    wide = _table("workflows")
    wide.add_column("\nworkflow")
    for state in LIVE_RUN_STATES:
        wide.add_column(f"runs\n{state}", justify="right", no_wrap=True)
    for state in LIVE_STEP_STATES:
        wide.add_column(f"steps\n{state}", justify="right", no_wrap=True)
    wide.add_column("ready\nlag", justify="right", no_wrap=True)
    wide.add_column("dead\nletters", justify="right", no_wrap=True)
    for name in names:
        wide.add_row(name, *run_cells[name], *step_cells[name], *tail[name])
    if width is None or _natural_width(wide) <= width:
        return wide

    by_runs = _table("workflows: runs")
    by_runs.add_column("\nworkflow", overflow="ellipsis")
    for state in LIVE_RUN_STATES:
        by_runs.add_column(f"\n{state}", justify="right", no_wrap=True)
    by_runs.add_column("ready\nlag", justify="right", no_wrap=True)
    by_runs.add_column("dead\nletters", justify="right", no_wrap=True)
    by_steps = _table("workflows: steps")
    by_steps.add_column("workflow", overflow="ellipsis")
    for state in LIVE_STEP_STATES:
        by_steps.add_column(state, justify="right", no_wrap=True)
    for name in names:
        by_runs.add_row(name, *run_cells[name], *tail[name])
        by_steps.add_row(name, *step_cells[name])
    return Group(by_runs, Text(""), by_steps)


def _dead_letters(rows: list[Metric]) -> RenderableType:
    if not rows:
        return Text("no dead letters", style="dim")
    table = _table("dead letters")
    table.add_column("workflow")
    table.add_column("error kind")
    table.add_column("steps", justify="right")
    for r in sorted(rows, key=lambda r: (_label(r, "workflow"), _label(r, "error_kind"))):
        table.add_row(_label(r, "workflow"), _label(r, "error_kind"), _n(r.value))
    return table


def _limits(running: list[Metric], saturated: list[Metric]) -> RenderableType:
    if not running and not saturated:
        return Text("no limits", style="dim")
    full = {_label(r, "limit"): r.value for r in saturated}
    table = _table("limits")
    table.add_column("limit")
    table.add_column("bucket")
    table.add_column("running", justify="right")
    table.add_column("saturated\nbuckets", justify="right")
    for r in sorted(running, key=lambda r: (_label(r, "limit"), _label(r, "bucket"))):
        name = _label(r, "limit")
        bucket = "(every key)" if "bucket" not in r.labels else _label(r, "bucket") or "-"
        n = full.get(name, 0.0)
        table.add_row(name, bucket, _n(r.value), Text(_n(n), style="yellow" if n > 0 else ""))
    return table


def _schedules(rows: list[Metric], now: datetime) -> RenderableType:
    if not rows:
        return Text("no active schedules", style="dim")
    table = _table("next schedules")
    table.add_column("schedule")
    table.add_column("next fire (UTC)")
    table.add_column("in", justify="right")
    for r in sorted(rows, key=lambda r: (r.value, _label(r, "schedule"))):
        at = datetime.fromtimestamp(r.value, UTC)
        delta = r.value - now.timestamp()
        when = fmt_duration(delta) if delta >= 0 else Text(f"overdue {fmt_duration(-delta)}", style="red")
        table.add_row(_label(r, "schedule"), fmt_time(at), when)
    return table
