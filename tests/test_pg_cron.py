"""schedule_tick()/unschedule_tick() with the real pg_cron the embedded cluster preloads.

pg_cron lives in one database per cluster (cron.database_name = 'cyclone' in
the embedded cluster), so this test deploys the schema there (as `make deploy`
does) and works inside a transaction that it rolls back.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from cyclone_py import db


@pytest.fixture
def cron_conn(embedded_db: db.EmbeddedCluster) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    dsn = embedded_db.url("cyclone")
    db.sqitch(["deploy"], dsn, quiet=True)
    with psycopg.connect(dsn) as conn:
        (cron_db,) = conn.execute("SHOW cron.database_name").fetchone()  # type: ignore[misc]
        assert cron_db == "cyclone"
        yield conn
        conn.rollback()


@pytest.mark.slow
def test_schedule_tick_creates_a_cron_job_that_calls_tick(cron_conn: psycopg.Connection[tuple[object, ...]]) -> None:
    cron_conn.execute("CREATE EXTENSION IF NOT EXISTS pg_cron")
    cron_conn.execute("SELECT cyclone.unschedule_tick()")
    (job_id,) = cron_conn.execute("SELECT cyclone.schedule_tick('* * * * *', 3)").fetchone()  # type: ignore[misc]
    row = cron_conn.execute(
        "SELECT jobid, schedule, command, database FROM cron.job WHERE jobname = 'cyclone-tick'"
    ).fetchone()
    assert row == (job_id, "* * * * *", "SELECT cyclone.tick(3)", "cyclone")
    assert cron_conn.execute("SELECT cyclone.unschedule_tick()").fetchone() == (True,)
    assert cron_conn.execute("SELECT count(*) FROM cron.job WHERE jobname = 'cyclone-tick'").fetchone() == (0,)
    assert cron_conn.execute("SELECT cyclone.unschedule_tick()").fetchone() == (False,)


@pytest.mark.slow
def test_scheduling_twice_keeps_one_job(cron_conn: psycopg.Connection[tuple[object, ...]]) -> None:
    cron_conn.execute("CREATE EXTENSION IF NOT EXISTS pg_cron")
    cron_conn.execute("SELECT cyclone.schedule_tick('* * * * *')")
    cron_conn.execute("SELECT cyclone.schedule_tick('*/5 * * * *')")
    rows = cron_conn.execute("SELECT schedule FROM cron.job WHERE jobname = 'cyclone-tick'").fetchall()
    assert rows == [("*/5 * * * *",)]
