"""Schedules from Python (SPEC 13): declaring them on an App, the client's
calls, the harness and the worker registering them, and a real worker process
firing them as the engine clock moves (and keeping a paused one paused across
a restart). The rules themselves are the SQL's (sql/tests/schedules/)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import WorkerProcess, start, wait_for

from cyclone_py import App, Schedule, Worker, Workflow, errors
from cyclone_py.client import Client
from cyclone_py.context import StepContext
from cyclone_py.testing import Env

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def report_workflow(name: str = "report") -> Workflow:
    wf = Workflow(name)

    @wf.step()
    def render(ctx: StepContext) -> Any:
        return {"scheduled_for": ctx.input["scheduled_for"]}

    return wf


def slot_text(at: datetime) -> str:
    """A slot as the engine spells it in scheduled_for and the idempotency key."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- declaring ------------------------------------------------------------------


def test_an_app_declares_schedules_of_its_own_workflows() -> None:
    report = report_workflow()
    nightly = Schedule("nightly-report", "0 3 * * *", report, input={"format": "pdf"}, timezone="Europe/Berlin",
                       catchup=600, deadline=timedelta(hours=2))
    app = App(report, schedules=[nightly])
    hourly = app.schedule("hourly", "@hourly", "report", overlap="cancel_other")
    assert app.schedules == [nightly, hourly]
    assert nightly.workflow == "report" and nightly.catchup == timedelta(minutes=10)
    assert nightly.arguments() == {
        "name": "nightly-report", "cron": "0 3 * * *", "workflow": "report", "input": {"format": "pdf"},
        "timezone": "Europe/Berlin", "overlap": "skip", "catchup": timedelta(minutes=10),
        "deadline": timedelta(hours=2),
    }
    assert hourly.arguments()["input"] == {} and hourly.deadline is None and hourly.timezone == "UTC"
    app.add_schedule(nightly)  # the same object again: no change
    assert len(app.schedules) == 2


def test_a_schedule_of_a_workflow_the_app_lacks_is_refused_at_declaration() -> None:
    report, other = report_workflow(), report_workflow("other")
    with pytest.raises(ValueError, match="runs workflow 'other', which this app does not declare"):
        App(report, schedules=[Schedule("s", "* * * * *", other)])
    app = App(report)
    with pytest.raises(ValueError, match="which this app does not declare"):
        app.schedule("s", "* * * * *", "nosuch")
    with pytest.raises(ValueError, match="another workflow object named 'report'"):
        app.schedule("s", "* * * * *", report_workflow())  # same name, not the app's workflow
    app.schedule("s", "* * * * *", report)
    with pytest.raises(ValueError, match="already has a different schedule named 's'"):
        app.schedule("s", "0 * * * *", report)
    assert [s.cron for s in app.schedules] == ["* * * * *"]


def test_python_checks_the_shape_only_and_leaves_cron_and_zone_to_sql() -> None:
    report = report_workflow()
    # Not Python's to judge: SQL refuses these at registration.
    odd = Schedule("odd", "61 * * * *", report, timezone="Mars/Olympus", overlap="queue", catchup=-5)
    assert (odd.cron, odd.timezone, odd.overlap) == ("61 * * * *", "Mars/Olympus", "queue")
    with pytest.raises(ValueError, match="needs a name"):
        Schedule("", "* * * * *", report)
    with pytest.raises(TypeError, match="input is a mapping"):
        Schedule("s", "* * * * *", report, input=[1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="workflow is a Workflow or its name"):
        Schedule("s", "* * * * *", 42)  # type: ignore[arg-type]


# -- the client -------------------------------------------------------------------


@pytest.fixture
def report_client(client: Client) -> Client:
    client.define_workflow("report", report_workflow().definition())
    return client


def test_the_client_sets_lists_pauses_resumes_and_removes_a_schedule(report_client: Client) -> None:
    client = report_client
    now = client.now()
    client.schedule("nightly", "0 3 * * *", "report", {"format": "pdf"}, "Europe/Berlin", "allow",
                    timedelta(minutes=30), timedelta(hours=1))
    [row] = client.schedules()
    assert (row.name, row.cron, row.timezone, row.workflow, row.overlap, row.catchup, row.paused) == (
        "nightly", "0 3 * * *", "Europe/Berlin", "report", "allow", timedelta(minutes=30), False)
    assert row.next_fire_at == client.next_fire("0 3 * * *", now, "Europe/Berlin")
    local = row.next_fire_local
    assert local == row.next_fire_at and (local.hour, local.minute) == (3, 0)
    assert local.utcoffset() in (timedelta(hours=1), timedelta(hours=2))
    assert (row.last_slot, row.last_run_id, row.last_run_state) == (None, None, None)
    assert client.schedules("nightly") == [row] and client.schedules("nosuch") == []

    assert client.pause_schedule("nightly") is True
    assert client.pause_schedule("nightly") is False  # already paused
    # Replacing keeps the paused state (what a worker does at every start).
    client.schedule("nightly", "0 4 * * *", "report", timezone="Europe/Berlin")
    assert client.schedules("nightly")[0].paused is True
    assert client.resume_schedule("nightly") is True
    assert client.resume_schedule("nightly") is False
    assert client.pause_schedule("nosuch") is False and client.resume_schedule("nosuch") is False
    assert client.unschedule("nightly") is True
    assert client.unschedule("nightly") is False
    assert client.schedules() == []


def test_tick_fires_a_due_slot_and_the_listing_shows_its_run(report_client: Client) -> None:
    client = report_client
    client.schedule("minutely", "* * * * *", "report", {"kind": "m"})
    slot = client.schedules("minutely")[0].next_fire_at
    client.advance_time(slot - client.now() + timedelta(seconds=1))
    result = client.tick()
    assert (result.scheduled, result.skipped_slots) == (1, 0)
    [row] = client.schedules()
    assert row.last_slot == slot and row.last_run_id is not None and row.last_run_state == "running"
    run = client.get_run(row.last_run_id)
    assert run.input == {"kind": "m", "scheduled_for": slot_text(slot)}
    assert client.tick().scheduled == 0  # each slot once


def test_backfill_submits_the_unfired_slots_of_a_range_once(report_client: Client) -> None:
    client = report_client
    client.schedule("hourly", "0 * * * *", "report")
    client.advance_time(timedelta(days=1))
    now = client.now()
    start_at = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=5)
    assert client.backfill("hourly", start_at, start_at + timedelta(hours=3)) == 3
    assert client.backfill("hourly", start_at, now) == 3  # the first three have runs already
    with pytest.raises(errors.InvalidArgument, match="p_from < p_to <= now"):
        client.backfill("hourly", now, now - timedelta(hours=1))
    with pytest.raises(errors.NotFound, match='schedule "nosuch" not found'):
        client.backfill("nosuch", start_at, now)


def test_next_fires_lists_fire_times_in_a_zone_across_a_dst_jump(client: Client) -> None:
    after = datetime(2026, 3, 27, 12, tzinfo=UTC)
    times = client.next_fires("30 2 * * *", after, "Europe/Berlin", 3)
    # 02:30 does not exist on 2026-03-29 in Berlin: it fires at the jump (03:00 CEST).
    assert [t.local.isoformat() for t in times] == [
        "2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"]
    assert [t.at for t in times] == [t.local for t in times]
    assert times[0].at == client.next_fire("30 2 * * *", after, "Europe/Berlin")
    assert client.next_fires("@daily", after, "UTC", 1)[0].at == datetime(2026, 3, 28, tzinfo=UTC)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("61 * * * *", "report"), "cron: minute 61 is out of range (0 to 59)"),
        (("* * * * *", "report", None, "Mars/Olympus"), 'schedule: time zone "Mars/Olympus" is not in'),
        (("0 0 30 2 *", "report"), 'schedule: cron "0 0 30 2 *" never fires'),
        (("* * * * *", "report", [1]), "p_input must be a JSON object"),
        (("* * * * *", "report", None, "UTC", "queue"), "p_overlap must be skip, allow or cancel_other"),
        (("* * * * *", "report", None, "UTC", "skip", -60), "p_catchup must not be negative"),
    ],
)
def test_bad_schedules_are_refused_by_sql_and_nothing_is_written(
    report_client: Client, args: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(errors.InvalidArgument, match=re.escape(message)):
        report_client.schedule("s", *args)
    assert report_client.schedules() == []


def test_a_schedule_of_an_unknown_workflow_is_not_found(client: Client) -> None:
    with pytest.raises(errors.NotFound, match='workflow "nope" not found'):
        client.schedule("s", "* * * * *", "nope")
    with pytest.raises(errors.InvalidArgument, match="next_fire: time zone"):
        client.next_fires("* * * * *", datetime(2026, 1, 1, tzinfo=UTC), "Nowhere", 2)


# -- the harness and the worker register an app's schedules ---------------------------


def test_the_harness_registers_the_apps_schedules_and_fires_them_as_time_moves(dsn: str) -> None:
    report = report_workflow()
    app = App(report, schedules=[Schedule("minutely", "* * * * *", report, input={"n": 1})])
    with Env(dsn, app) as env:
        [row] = env.client.schedules()
        env.advance_time(row.next_fire_at - env.now() + timedelta(seconds=1))  # ticks: the slot fires
        assert env.run_until_idle() == 1
        [run] = env.client.list_runs(workflow="report")
        assert env.get_run(run.id).output == {"render": {"scheduled_for": slot_text(row.next_fire_at)}}
        assert run.input == {"n": 1, "scheduled_for": slot_text(row.next_fire_at)}


def test_a_worker_registers_its_schedules_and_leaves_undeclared_ones_alone(
    dsn: str, report_client: Client, workers: list[Worker]
) -> None:
    report = report_workflow()
    report_client.schedule("by-hand", "@daily", "report")  # an operator's, in no app
    w = start(workers, App(report, schedules=[Schedule("daily", "0 6 * * *", report, timezone="Asia/Tokyo")]), dsn)
    assert {r.name: r.timezone for r in report_client.schedules()} == {"by-hand": "UTC", "daily": "Asia/Tokyo"}
    w.stop(timeout=10)
    start(workers, App(report), dsn)  # the app no longer declares "daily": it stays
    assert [r.name for r in report_client.schedules()] == ["by-hand", "daily"]


def test_a_worker_with_a_bad_schedule_does_not_start(dsn: str, workers: list[Worker]) -> None:
    report = report_workflow()
    w = Worker(App(report, schedules=[Schedule("bad", "61 * * * *", report)]), dsn, poll_interval=0.1)
    workers.append(w)
    with pytest.raises(RuntimeError, match=r"cron: minute 61 is out of range \(0 to 59\)"):
        w.run_in_thread()
    assert isinstance(w.error, errors.InvalidArgument)


# -- a real worker process --------------------------------------------------------------


class Proc(WorkerProcess):
    """``cyclone worker --app apps.scheduled:app`` in its own process."""

    def __init__(self, dsn: str, tmp: Path, **env_more: str) -> None:
        super().__init__(["--dsn", dsn, "worker", "--app", "apps.scheduled:app", "--poll-interval", "0.1",
                          "--shutdown-grace", "5"], tmp / f"worker-{time.monotonic_ns()}.log", env_more)


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for p in started:
        p.close()


def report_runs(client: Client) -> list[Any]:
    return [client.get_run(r.id) for r in client.list_runs(workflow="report", limit=100)]


@pytest.mark.slow
def test_a_worker_process_fires_its_schedule_and_a_restart_keeps_it_paused(
    dsn: str, tmp_path: Path, procs: list[Proc]
) -> None:
    with Client(dsn) as client:
        a = Proc(dsn, tmp_path)
        procs.append(a)
        wait_for(lambda: "schedule every-minute registered" in a.text(), what="worker A to register its schedule")
        [row] = client.schedules()
        assert (row.cron, row.workflow, row.overlap, row.paused) == ("* * * * *", "report", "allow", False)

        # The engine clock passes the next slot: the worker's own tick fires it.
        client.advance_time(row.next_fire_at - client.now() + timedelta(seconds=1))
        done = wait_for(lambda: [r for r in report_runs(client) if r.state == "completed"], what="a scheduled run")
        run = done[0]
        assert run.output == {"render": {"scheduled_for": run.input["scheduled_for"], "kind": "minutely"}}
        assert run.input["scheduled_for"] in {slot_text(r.last_slot) for r in client.schedules() if r.last_slot}
        assert datetime.fromisoformat(run.input["scheduled_for"]).second == 0

        # An operator pauses it; the worker restarts and registers the schedule again.
        assert client.pause_schedule("every-minute")
        assert a.stop() == 0
        fired = len(report_runs(client))
        b = Proc(dsn, tmp_path)
        procs.append(b)
        wait_for(lambda: "schedule every-minute registered" in b.text(), what="worker B to register its schedule")
        assert client.schedules()[0].paused is True
        client.advance_time(timedelta(minutes=3))
        assert client.tick().scheduled == 0  # paused: nothing is due
        time.sleep(0.3)  # a few of the worker's own ticks
        assert len(report_runs(client)) == fired

        # Resumed, the slots missed meanwhile fire (within the one-hour catch-up).
        assert client.resume_schedule("every-minute")
        wait_for(lambda: len(report_runs(client)) >= fired + 3, what="the missed slots to fire")
        wait_for(lambda: all(r.state == "completed" for r in report_runs(client)), what="the runs to complete")
        slots = [r.input["scheduled_for"] for r in report_runs(client)]
        assert len(slots) == len(set(slots))  # each slot once
        assert b.stop() == 0


def test_a_worker_process_with_a_bad_cron_exits_with_one_line(dsn: str, tmp_path: Path, procs: list[Proc]) -> None:
    p = Proc(dsn, tmp_path, CYCLONE_TEST_CRON="0 3 * * 8")
    procs.append(p)
    assert p.p.wait(30) == 1
    lines = p.text().strip().splitlines()
    assert lines == ["cyclone: invalid argument: cron: day of week 8 is out of range (0 to 7)"], lines


def test_a_scheduled_run_retried_after_it_failed_holds_off_the_next_slot_again(client: Client) -> None:
    """SPEC 13: with overlap skip, a slot whose schedule still has a run running
    or paused is skipped. A run of the schedule that failed, was seen finished
    by a tick, and was then retried is running again, so the next slot is
    skipped. (It was fired: a tick closed the failed run's row of
    cyclone_schedule_runs, and a retry did not open it again, so the overlap
    rules no longer saw the run.) Found by tests/test_state_machine.py."""
    client.define_workflow("one", {"max_attempts": 1, "nodes": [{"name": "a"}]})
    client.schedule("hourly", "0 * * * *", "one")
    runs = []
    for _ in range(2):  # two slots, each run failing: the second tick closes the first run's row
        client.advance_time(timedelta(hours=1))
        assert client.tick().scheduled == 1
        [c] = client.claim("w", workflows=["one"])
        assert client.fail(c.step_id, "w", c.lease_generation, "boom", error_kind="permanent") == "discarded"
        runs.append(c.run_id)
    client.retry(runs[0], "a", additional_attempts=1)
    assert client.get_run(runs[0]).state == "running"
    client.advance_time(timedelta(hours=1))
    result = client.tick()
    assert (result.scheduled, result.skipped_slots) == (0, 1), result.raw
