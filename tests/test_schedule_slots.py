"""Schedules fire each slot exactly once with real connections (SPEC 13): several
connections ticking at the same time, and a database that crashes in the middle
of a tick. The rules themselves are pinned by the pgTAP tests in
sql/tests/schedules."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from helpers import assert_consistent
from psycopg.rows import dict_row

from cyclone_py import db

Conn = psycopg.Connection[Any]

@pytest.fixture(autouse=True)
def _consistent_at_the_end(dsn: str) -> Iterator[None]:
    """Every test here ends with no broken invariant (cyclone.check_invariants())."""
    yield
    assert_consistent(dsn)



def connect(dsn: str) -> Conn:
    return psycopg.connect(dsn, autocommit=True, row_factory=dict_row)


def travel_to(c: Conn, at: datetime) -> None:
    c.execute("SELECT cyclone.advance_time(%s - cyclone.now())", (at,))


def slots(c: Conn, schedule: str) -> list[str]:
    rows = c.execute("SELECT r.input ->> 'scheduled_for' AS slot FROM cyclone.cyclone_schedule_runs sr"
                     " JOIN cyclone.cyclone_runs r ON r.id = sr.run_id WHERE sr.schedule = %s ORDER BY sr.slot",
                     (schedule,)).fetchall()
    return [r["slot"] for r in rows]


def minutes(first: datetime, n: int) -> list[str]:
    return [(first + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ") for i in range(n)]


def define(c: Conn) -> None:
    c.execute("SELECT cyclone.define_workflow('tick_me', '{\"nodes\": [{\"name\": \"work\"}]}')")


def test_four_connections_ticking_at_once_fire_each_slot_once(dsn: str) -> None:
    with connect(dsn) as c:
        define(c)
        start = datetime(2030, 1, 7, 10, 0, 30, tzinfo=UTC)
        travel_to(c, start)
        for name, overlap in (("every_minute", "allow"), ("other", "allow"), ("skipper", "skip")):
            c.execute("SELECT cyclone.schedule(%s, '* * * * *', 'tick_me', '{}', 'UTC', %s, '1 day')", (name, overlap))
        done = threading.Event()
        fired: list[int] = []
        errors: list[BaseException] = []

        def ticker() -> None:
            try:
                with connect(dsn) as t:
                    while not done.is_set():
                        row = t.execute("SELECT cyclone.tick() AS t").fetchone()
                        assert row is not None
                        fired.append(row["t"]["scheduled"])
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=ticker) for _ in range(4)]
        for th in threads:
            th.start()
        for _ in range(60):
            c.execute("SELECT cyclone.advance_time('1 minute')")
            time.sleep(0.01)  # let the tickers race for each minute
        done.set()
        for th in threads:
            th.join(30)
        assert errors == []
        c.execute("SELECT cyclone.tick()")
        want = minutes(datetime(2030, 1, 7, 10, 1, tzinfo=UTC), 60)
        assert slots(c, "every_minute") == want
        assert slots(c, "other") == want
        assert len(slots(c, "skipper")) == 1, "skip: its first run never finishes"
        row = c.execute("SELECT count(*) AS n, count(DISTINCT idempotency_key) AS keys FROM cyclone.cyclone_runs"
                        " WHERE idempotency_key LIKE 'schedule:%'").fetchone()
        assert row == {"n": 121, "keys": 121}
        assert len(fired) > 8, "the tickers really ticked during the hour"


@pytest.mark.cluster
@pytest.mark.alone
def test_a_crash_in_the_middle_of_a_tick_loses_its_slots_and_the_next_tick_fires_them_once(
        dsn: str, embedded_db: db.EmbeddedCluster) -> None:
    with connect(dsn) as c:
        define(c)
        travel_to(c, datetime(2030, 1, 7, 10, 0, 30, tzinfo=UTC))
        c.execute("SELECT cyclone.schedule('s', '* * * * *', 'tick_me', '{}', 'UTC', 'allow', '1 day')")
        c.execute("SELECT cyclone.advance_time('2 minutes')")
        assert c.execute("SELECT cyclone.tick() -> 'scheduled' AS n").fetchone() == {"n": 2}
        c.execute("SELECT cyclone.advance_time('3 minutes')")
    # A tick fires 10:03-10:05 and the database crashes before it commits.
    doomed = psycopg.connect(dsn, row_factory=dict_row)
    assert doomed.execute("SELECT cyclone.tick() -> 'scheduled' AS n").fetchone() == {"n": 3}
    embedded_db.restart(mode="immediate")
    doomed.close()
    with connect(dsn) as c:
        assert slots(c, "s") == minutes(datetime(2030, 1, 7, 10, 1, tzinfo=UTC), 2), "the committed slots survive"
        assert c.execute("SELECT cyclone.tick() -> 'scheduled' AS n").fetchone() == {"n": 3}
        assert c.execute("SELECT cyclone.tick() -> 'scheduled' AS n").fetchone() == {"n": 0}
        assert slots(c, "s") == minutes(datetime(2030, 1, 7, 10, 1, tzinfo=UTC), 5)
