"""cyclone.next_fire against an independent cron implementation (croniter).

Random crons are drawn only from forms where the two conventions agree: a day
field is either exactly ``*`` or does not begin with ``*`` (croniter reads
``*/2`` in a day field as restricted, SPEC 13 as unrestricted), and instants in
other zones than UTC are kept away from daylight-saving transition days, where
SPEC 13 fixes its own rules (pinned by the pgTAP tests in sql/tests/next_fire).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import psycopg
import pytest
from croniter import CroniterBadDateError, croniter
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
WEEKDAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]


@pytest.fixture
def conn(dsn: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    with psycopg.connect(dsn, autocommit=True) as c:
        yield c


@st.composite
def elements(draw: st.DrawFn, lo: int, hi: int, names: list[str] | None, name_base: int) -> str:
    """One list element: a value, a range, or a range with a step (a-b/n)."""
    a = draw(st.integers(lo, hi))
    b = draw(st.integers(a, hi))

    def shown(v: int) -> str:
        if names and draw(st.booleans()):
            name = names[v - name_base]
            return draw(st.sampled_from([name, name.lower(), name.capitalize()]))
        return str(v)

    form = draw(st.sampled_from(["value", "range", "step"]))
    # croniter reads a one-value range (13-13) as '*'.
    if form == "value" or a == b:
        return shown(a)
    if form == "range":
        return f"{shown(a)}-{shown(b)}"
    return f"{shown(a)}-{shown(b)}/{draw(st.integers(1, hi - lo + 1))}"


@st.composite
def fields(draw: st.DrawFn, lo: int, hi: int, names: list[str] | None = None, name_base: int = 0,
           star_steps: bool = True) -> str:
    form = draw(st.sampled_from(["star", "star_step", "list"] if star_steps else ["star", "list"]))
    if form == "star":
        return "*"
    if form == "star_step":
        return f"*/{draw(st.integers(1, hi - lo + 1))}"
    return ",".join(draw(st.lists(elements(lo, hi, names, name_base), min_size=1, max_size=3)))


@st.composite
def crons(draw: st.DrawFn) -> str:
    return " ".join([
        draw(fields(0, 59)),
        draw(fields(0, 23)),
        draw(fields(1, 31, star_steps=False)),
        draw(fields(1, 12, MONTHS, 1)),
        draw(fields(0, 6, WEEKDAYS, 0, star_steps=False)),
    ])


INSTANTS = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2090, 12, 31),
                        timezones=st.just(UTC))


def expected(cron: str, after: datetime) -> datetime | None:
    try:
        result = croniter(cron, after).get_next(datetime)
    except CroniterBadDateError:
        return None
    assert isinstance(result, datetime)
    return result


def next_fire(conn: psycopg.Connection[tuple[object, ...]], cron: str, after: datetime, tz: str) -> datetime:
    row = conn.execute("SELECT cyclone.next_fire(%s, %s, %s)", (cron, after, tz)).fetchone()
    assert row is not None and isinstance(row[0], datetime)
    return row[0]


@SETTINGS
@given(cron=crons(), after=INSTANTS)
def test_next_fire_agrees_with_croniter_in_utc(conn: psycopg.Connection[tuple[object, ...]], cron: str,
                                               after: datetime) -> None:
    want = expected(cron, after)
    assume(want is not None and want - after < timedelta(days=365 * 8))
    assert next_fire(conn, cron, after, "UTC") == want, cron


def _near_a_transition(moment: datetime, zone: ZoneInfo) -> bool:
    local = moment.astimezone(zone)
    return (local - timedelta(days=2)).utcoffset() != (local + timedelta(days=2)).utcoffset()


@settings(SETTINGS, max_examples=40)
@given(cron=crons(), after=INSTANTS, tz=st.sampled_from(["Europe/Berlin", "America/New_York", "Asia/Kolkata"]))
def test_next_fire_agrees_with_croniter_away_from_dst_transitions(
        conn: psycopg.Connection[tuple[object, ...]], cron: str, after: datetime, tz: str) -> None:
    zone = ZoneInfo(tz)
    local_after = after.astimezone(zone)
    want = expected(cron, local_after)
    assume(want is not None and want - local_after < timedelta(days=365 * 8))
    assert want is not None
    assume(not _near_a_transition(after, zone) and not _near_a_transition(want, zone))
    assert next_fire(conn, cron, after, tz) == want, cron
