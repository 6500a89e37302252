"""One formatting module serves every face: the CLI, ``cyclone top`` and the console.

Where the faces differ (the CLI marks UTC with a ``Z`` and prints ``-`` for
nothing; the console's pages say UTC in their headings, leave a cell empty
and spell a time left in full), a parameter says so; each face's output is
pinned here.
"""

from __future__ import annotations

import inspect
from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID

from cyclone_py import cli
from cyclone_py.cli import explain as cli_explain
from cyclone_py.client import Explanation
from cyclone_py.console import app as console_app
from cyclone_py.console.app import _environment
from cyclone_py.formatting import explain_text, fmt_duration, fmt_interval, fmt_local, fmt_time

AT = datetime(2025, 1, 31, 12, 0, 5, 250_000, tzinfo=UTC)
PARIS = timezone(timedelta(hours=1))


def test_the_cli_prints_a_time_in_utc_with_a_z_and_a_dash_for_none() -> None:
    assert fmt_time(AT) == "2025-01-31 12:00:05Z"
    assert fmt_time(AT.astimezone(PARIS)) == "2025-01-31 12:00:05Z"
    assert fmt_time(None) == "-"
    assert cli.fmt_time is fmt_time


def test_the_console_prints_a_time_in_utc_without_a_z_and_nothing_for_none() -> None:
    env = _environment()
    assert env.from_string("{{ t | time }}").render(t=AT.astimezone(PARIS)) == "2025-01-31 12:00:05"
    assert env.from_string("[{{ t | time }}]").render(t=None) == "[]"


def test_a_local_time_keeps_its_offset() -> None:
    moment = AT.astimezone(PARIS)
    assert fmt_local(moment) == "2025-01-31 13:00:05+01:00"
    assert fmt_local(moment, weekday=True) == "Fri 2025-01-31 13:00:05+01:00"
    assert fmt_local(None) == "-"


def test_a_duration_at_a_glance_for_the_cli_and_top() -> None:
    assert fmt_duration(timedelta(minutes=4, seconds=5)) == "4m05s"
    assert fmt_duration(7800) == "2h10m"
    assert fmt_duration(-3) == "0.00s"
    assert fmt_duration(None) == "-"


def test_a_duration_in_full_for_the_console() -> None:
    delta = _environment().from_string("[{{ d | delta }}]").render
    assert delta(d=timedelta(minutes=3, seconds=20)) == "[3m 20s]"
    assert delta(d=timedelta(days=1, seconds=5)) == "[1d 0h 0m 5s]"
    assert delta(d=timedelta(hours=2)) == "[2h 0m 0s]"
    assert delta(d=timedelta(seconds=-45.5)) == "[-45s]"
    assert delta(d=timedelta(0)) == "[0s]"
    assert delta(d=None) == "[]"
    assert fmt_duration(timedelta(seconds=-3725), full=True) == "-1h 2m 5s"


def test_an_interval_as_the_duration_options_spell_it() -> None:
    assert [fmt_interval(timedelta(seconds=s)) for s in (60, 90, 0.5, 5400, 86400)] == ["1m", "1m30s", "500ms",
                                                                                       "1h30m", "1d"]
    assert cli.parse_duration(fmt_interval(timedelta(hours=1, minutes=30))) == timedelta(hours=1, minutes=30)
    assert fmt_interval(timedelta(0)) == "0s"
    assert fmt_interval(None) == "-"


def test_explain_step_is_worded_by_one_function_for_the_cli_and_the_console() -> None:
    """Issue 36: the console's run page showed ``not_due · until 2026-…`` where the CLI
    said a sentence; both now call formatting.explain_text, the CLI naming its commands."""
    assert "formatting.explain_text(" in inspect.getsource(cli_explain.explain_text)
    assert "explain_text(" in inspect.getsource(console_app)
    now = AT
    paused = Explanation(1, "run_paused")
    assert cli_explain.explain_text(paused) == "run paused (cyclone resume RUN_ID)"
    assert explain_text(paused, commands=False) == "run paused"
    due = Explanation(1, "not_due", until=AT + timedelta(minutes=3, seconds=5))
    assert explain_text(due, now=now) == "not due until 2025-01-31 12:03:10Z (in 3m05s)"
    deps = Explanation(1, "pending_deps", deps=("approval", "charge"))
    assert explain_text(deps) == "waiting for dependencies approval, charge"
    event = Explanation(1, "waiting_event", key="order:1 2")
    assert cli_explain.explain_text(event) == "waits for an event of key 'order:1 2' (cyclone events emit 'order:1 2')"
    assert explain_text(event, commands=False) == "waits for an event of key 'order:1 2'"
    run = UUID(int=7)
    assert explain_text(Explanation(1, "waiting_run", run_id=run)) == f"waits for run {run} to end"
