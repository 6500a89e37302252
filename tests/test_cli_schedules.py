"""``cyclone schedules`` and ``cyclone cron-next``: each command's text and
``--json``, and each refusal as one line, exit 1, nothing written."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import helpers
import pytest
from click.testing import Result
from helpers import ok

from cyclone_py import Client, cli

REPORT = {"nodes": [{"name": "render"}]}


@pytest.fixture
def client(dsn: str) -> Iterator[Client]:
    with Client(dsn) as c:
        c.define_workflow("report", REPORT)
        yield c


def one_line_error(result: Result) -> str:
    """One ``cyclone: ...`` line on stderr, and nothing on stdout."""
    line = helpers.one_line_error(result)
    assert result.stdout == ""
    return line


def test_set_then_list_shows_the_next_fire_in_the_zone_and_in_utc(
    invoke: Callable[..., Result], client: Client
) -> None:
    out = ok(invoke("schedules", "set", "nightly", "0 3 * * *", "report", "--input", '{"format": "pdf"}',
                    "--timezone", "Europe/Berlin", "--overlap", "allow", "--catchup", "30m", "--deadline", "2h"))
    [row] = client.schedules()
    assert (row.timezone, row.overlap, row.catchup) == ("Europe/Berlin", "allow", timedelta(minutes=30))
    local = row.next_fire_local.isoformat(sep=" ")
    assert out.strip() == (f"schedule 'nightly' set: report at '0 3 * * *' (Europe/Berlin); next fire {local} "
                           f"({cli.fmt_time(row.next_fire_at)})")

    table = ok(invoke("schedules")).splitlines()
    assert table[0].split() == ["NAME", "CRON", "TIMEZONE", "WORKFLOW", "NEXT", "FIRE", "NEXT", "FIRE", "(UTC)",
                                "LAST", "SLOT", "LAST", "RUN", "STATE", "PAUSED", "OVERLAP"]
    assert table[1].split() == ["nightly", "0", "3", "*", "*", "*", "Europe/Berlin", "report",
                                *local.split(), *cli.fmt_time(row.next_fire_at).split(), "-", "-", "-", "no", "allow"]
    assert ok(invoke("schedules", "list")).splitlines() == table

    [doc] = json.loads(ok(invoke("schedules", "--json")))
    assert doc == {
        "name": "nightly", "cron": "0 3 * * *", "timezone": "Europe/Berlin", "workflow": "report",
        "overlap": "allow", "catchup": 1800.0, "paused": False, "next_fire_at": row.next_fire_at.isoformat(),
        "last_slot": None, "last_run_id": None, "last_run_state": None,
        "next_fire_local": row.next_fire_local.isoformat(),
    }
    assert json.loads(ok(invoke("schedules", "list", "--json"))) == [doc]

    # The run a slot gets carries the input (and scheduled_for) and the deadline.
    client.advance_time(row.next_fire_at - client.now() + timedelta(seconds=1))
    assert client.tick().scheduled == 1
    [doc] = json.loads(ok(invoke("schedules", "--json")))
    assert (doc["last_slot"], doc["last_run_state"]) == (row.next_fire_at.isoformat(), "running")
    run = client.get_run(doc["last_run_id"])
    assert run.input["format"] == "pdf" and run.deadline_at is not None
    assert run.deadline_at - run.created_at == timedelta(hours=2)
    assert doc["last_run_id"] in ok(invoke("schedules"))


def test_set_replaces_and_keeps_the_paused_state(invoke: Callable[..., Result], client: Client) -> None:
    ok(invoke("schedules", "set", "s", "@hourly", "report"))
    ok(invoke("schedules", "pause", "s"))
    doc = json.loads(ok(invoke("schedules", "set", "s", "*/5 * * * *", "report", "--json")))
    assert (doc["cron"], doc["paused"]) == ("*/5 * * * *", True)
    assert ok(invoke("schedules", "set", "s", "@daily", "report")).rstrip().endswith("; paused")


def test_list_with_no_schedules_prints_nothing(invoke: Callable[..., Result]) -> None:
    empty = invoke("schedules")
    assert ok(empty) == "" and "no schedules" in empty.stderr
    assert json.loads(ok(invoke("schedules", "--json"))) == []


def test_pause_resume_and_rm(invoke: Callable[..., Result], client: Client) -> None:
    ok(invoke("schedules", "set", "s", "@hourly", "report"))
    assert ok(invoke("schedules", "pause", "s")).strip() == "schedule 's' paused"
    assert client.schedules("s")[0].paused is True
    # Already in the state asked for: said so, exit 0.
    assert ok(invoke("schedules", "pause", "s")).strip() == "schedule 's' is already paused; nothing changed"
    assert json.loads(ok(invoke("schedules", "pause", "s", "--json"))) == {
        "name": "s", "paused": True, "changed": False}
    assert json.loads(ok(invoke("schedules", "resume", "s", "--json"))) == {
        "name": "s", "paused": False, "changed": True}
    assert client.schedules("s")[0].paused is False
    assert ok(invoke("schedules", "resume", "s")).strip() == "schedule 's' is not paused; nothing changed"
    ok(invoke("schedules", "pause", "s"))
    assert ok(invoke("schedules", "resume", "s")).strip() == "schedule 's' resumed"

    assert ok(invoke("schedules", "rm", "s")).strip() == "schedule 's' removed (its runs stay)"
    assert client.schedules() == []
    ok(invoke("schedules", "set", "t", "@hourly", "report"))
    assert json.loads(ok(invoke("schedules", "rm", "t", "--json"))) == {"name": "t", "removed": True}


@pytest.mark.parametrize("command", ["rm", "pause", "resume"])
def test_a_missing_schedule_is_one_line_and_exit_1(invoke: Callable[..., Result], command: str) -> None:
    assert one_line_error(invoke("schedules", command, "nosuch")) == 'cyclone: schedule "nosuch" not found'
    assert one_line_error(invoke("schedules", command, "nosuch", "--json")) == 'cyclone: schedule "nosuch" not found'


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["61 * * * *", "report"], "invalid argument: cron: minute 61 is out of range (0 to 59)"),
        (["* * *", "report"], "invalid argument: cron: "),
        (["0 0 30 2 *", "report"], 'invalid argument: schedule: cron "0 0 30 2 *" never fires'),
        (["* * * * *", "report", "--timezone", "Mars/Olympus"],
         'invalid argument: schedule: time zone "Mars/Olympus" is not in pg_timezone_names'),
        (["* * * * *", "nope"], 'workflow "nope" not found'),
        (["* * * * *", "report", "--input", "[1]"], "invalid argument: schedule: p_input must be a JSON object"),
        (["* * * * *", "report", "--input", "{nope"], "invalid value for '--input': not valid JSON"),
        (["* * * * *", "report", "--overlap", "queue"], "invalid value for '--overlap': 'queue' is not one of"),
        (["* * * * *", "report", "--catchup", "soon"], "invalid value for '--catchup': 'soon' is not a duration"),
        (["* * * * *", "report", "--deadline", "0s"], "invalid argument: schedule: p_deadline must be positive"),
    ],
)
def test_a_bad_schedule_is_one_line_naming_the_field_and_nothing_is_written(
    invoke: Callable[..., Result], client: Client, args: list[str], message: str
) -> None:
    line = one_line_error(invoke("schedules", "set", "s", *args))
    assert line.startswith(f"cyclone: {message}"), line
    assert client.schedules() == []


def test_backfill_prints_how_many_runs_it_created(invoke: Callable[..., Result], client: Client) -> None:
    ok(invoke("schedules", "set", "hourly", "0 * * * *", "report"))
    client.advance_time(timedelta(days=1))
    top = client.now().replace(minute=0, second=0, microsecond=0)
    start = top - timedelta(hours=3)
    out = ok(invoke("schedules", "backfill", "hourly", "--from", start.isoformat(), "--to",
                    (top - timedelta(hours=1)).isoformat()))
    assert out.strip() == "backfill of schedule 'hourly': 2 runs created"
    # Naive times are UTC; "now" is the engine clock's.
    naive = start.astimezone(UTC).replace(tzinfo=None).isoformat()
    doc = json.loads(ok(invoke("schedules", "backfill", "hourly", "--from", naive, "--to", "now", "--json")))
    assert (doc["name"], doc["created"], doc["from"]) == ("hourly", 2, start.isoformat())  # top - 1h, top
    assert datetime.fromisoformat(doc["to"]) >= top
    assert ok(invoke("schedules", "backfill", "hourly", "--from", naive, "--to", "now")).strip() == (
        "backfill of schedule 'hourly': 0 runs created")
    assert len(client.list_runs(workflow="report")) == 4


def test_backfill_refusals_are_one_line(invoke: Callable[..., Result], client: Client) -> None:
    ok(invoke("schedules", "set", "hourly", "0 * * * *", "report"))
    assert one_line_error(invoke("schedules", "backfill", "nosuch", "--from", "2026-01-01", "--to", "now")) == (
        'cyclone: schedule "nosuch" not found')
    line = one_line_error(invoke("schedules", "backfill", "hourly", "--from", "2026-01-02", "--to", "2026-01-01"))
    assert line.startswith("cyclone: invalid argument: backfill: p_from < p_to <= now must hold"), line
    line = one_line_error(invoke("schedules", "backfill", "hourly", "--from", "last week", "--to", "now"))
    assert line.startswith("cyclone: invalid value for '--from': 'last week' is not a time"), line
    assert client.list_runs(workflow="report") == []


def test_cron_next_previews_fire_times_in_the_zone_and_in_utc(invoke: Callable[..., Result]) -> None:
    out = ok(invoke("cron-next", "30 2 * * *", "--tz", "Europe/Berlin", "-n", "3", "--after", "2026-03-27T12:00Z"))
    assert out.splitlines() == [
        "LOCAL                          UTC",
        "Sat 2026-03-28 02:30:00+01:00  2026-03-28 01:30:00Z",
        "Sun 2026-03-29 03:00:00+02:00  2026-03-29 01:00:00Z",  # 02:30 does not exist that night
        "Mon 2026-03-30 02:30:00+02:00  2026-03-30 00:30:00Z",
    ]
    assert json.loads(ok(invoke("cron-next", "@daily", "--json", "-n", "2", "--after", "2026-01-01"))) == [
        {"at": "2026-01-02T00:00:00+00:00", "local": "2026-01-02T00:00:00+00:00"},
        {"at": "2026-01-03T00:00:00+00:00", "local": "2026-01-03T00:00:00+00:00"},
    ]
    assert len(ok(invoke("cron-next", "* * * * *")).splitlines()) == 6  # after now, 5 by default


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["0 24 * * *"], "invalid argument: cron: hour 24 is out of range (0 to 23)"),
        (["@daily", "--tz", "Nowhere"], 'invalid argument: next_fire: time zone "Nowhere" is not in pg_timezone_names'),
        (["0 0 30 2 *"], 'invalid argument: next_fire: cron "0 0 30 2 *" never fires'),
        (["@daily", "-n", "0"], "invalid value for '-n' / '--count'"),
        (["@daily", "--after", "tomorrow"], "invalid value for '--after': 'tomorrow' is not a time"),
    ],
)
def test_cron_next_refusals_are_one_line(invoke: Callable[..., Result], args: list[str], message: str) -> None:
    line = one_line_error(invoke("cron-next", *args))
    assert line.startswith(f"cyclone: {message}"), line


def test_tick_shows_what_it_scheduled_and_skipped(invoke: Callable[..., Result], client: Client) -> None:
    # Hourly, not every minute: the second tick must not cross a slot's time
    # (the engine clock moves with the real one between the two ticks).
    ok(invoke("schedules", "set", "m", "0 * * * *", "report", "--catchup", "0s"))
    client.advance_time(timedelta(hours=5))
    text = ok(invoke("tick"))
    assert "scheduled  1" in text and "skipped    " in text
    counts = json.loads(ok(invoke("tick", "--json")))
    assert (counts["scheduled"], counts["skipped_slots"]) == (0, 0)
