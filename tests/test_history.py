"""History at size (docs/history.md): runs finished over several days through
the engine's own calls, archived, then pruned from the CLI a day at a time."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from click.testing import Result
from sqlapi import Call, connect, wait_until_blocked

from cyclone_py.client import Client

RUNS_A_DAY = 4_000
DAYS = 5

LIVE_SIZE = ("SELECT pg_total_relation_size('cyclone.cyclone_runs')"
             " + pg_total_relation_size('cyclone.cyclone_steps')")


def _finish_a_days_runs(conn: psycopg.Connection[Any]) -> None:
    conn.execute("SELECT count(*) FROM cyclone.submit_many('daily', array_fill('{}'::jsonb, ARRAY[%s]))",
                 (RUNS_A_DAY,))
    done = conn.execute(
        "WITH c AS (SELECT * FROM cyclone.claim('w', NULL, %s))"
        " SELECT count(*) FILTER (WHERE m.accepted) FROM cyclone.complete_many('w',"
        " (SELECT array_agg(step_id ORDER BY step_id) FROM c),"
        " (SELECT array_agg(lease_generation ORDER BY step_id) FROM c),"
        " (SELECT array_agg(NULL::jsonb) FROM c)) m", (RUNS_A_DAY,)).fetchone()
    assert done == (RUNS_A_DAY,)


def _vacuum_until_clean(conn: psycopg.Connection[Any]) -> None:
    """VACUUM the live tables until it leaves no dead row behind. A snapshot
    another session holds for a moment (autovacuum's ANALYZE of a day's new
    table takes one) keeps the rows a day deleted from a VACUUM, and the next
    day's rows would take new pages: the size measured would be the
    snapshot's, not the tables'."""
    deadline = time.monotonic() + 60
    while True:
        conn.execute("VACUUM cyclone.cyclone_runs, cyclone.cyclone_steps")
        dead = conn.execute(
            "SELECT sum(n_dead_tup) FROM pg_stat_user_tables"
            " WHERE relid IN ('cyclone.cyclone_runs'::regclass, 'cyclone.cyclone_steps'::regclass)").fetchone()
        if dead == (0,):
            return
        assert time.monotonic() < deadline, f"{dead} dead rows still in the live tables after a minute"
        time.sleep(0.2)


@pytest.mark.slow
def test_runs_of_several_days_are_archived_by_day_and_pruned_a_day_at_a_time(
    conn: psycopg.Connection[Any], client: Client, invoke: Callable[..., Result]
) -> None:
    conn.execute("""SELECT cyclone.define_workflow('daily', '{"nodes": [{"name": "work"}]}')""")
    live_sizes = []
    for _ in range(DAYS):
        _finish_a_days_runs(conn)
        while client.archive(1000) > 0:
            pass
        _vacuum_until_clean(conn)
        size = conn.execute(LIVE_SIZE).fetchone()
        assert size is not None
        live_sizes.append(size[0])
        client.advance_time(timedelta(days=1))

    assert conn.execute("SELECT count(*) FROM ONLY cyclone.cyclone_runs").fetchone() == (0,)
    assert conn.execute("SELECT count(*), count(DISTINCT tableoid) FROM cyclone.cyclone_runs").fetchone() == (
        RUNS_A_DAY * DAYS, DAYS)
    assert conn.execute("SELECT count(*) FROM cyclone.cyclone_v_steps WHERE state = 'completed'").fetchone() == (
        RUNS_A_DAY * DAYS,)
    # The live tables do not grow with the history behind them. A B-tree page
    # emptied by VACUUM is reused only once no snapshot can still see it, a
    # cycle or two later, so on some day the tables may take a day's pages
    # more, once (on a loaded machine [2.13, 2.15, 3.68, 3.69, 3.69] MB, and
    # [2.07, 2.10, 2.10, 3.60, 3.62]); a table growing with its history adds
    # a day's 1.5 MB every day, three times the first day's size by the fifth.
    assert max(live_sizes) <= 2 * live_sizes[0], live_sizes

    client.advance_time(timedelta(days=1))
    assert invoke("prune", "--older-than", "1d").output.strip() == f"pruned {RUNS_A_DAY * DAYS} runs"
    assert conn.execute("SELECT count(*) FROM cyclone.cyclone_runs").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM cyclone.cyclone_steps").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM cyclone.cyclone_history").fetchone() == (0,)
    assert conn.execute(
        "SELECT count(*) FROM pg_inherits WHERE inhparent IN ('cyclone.cyclone_runs'::regclass,"
        " 'cyclone.cyclone_steps'::regclass)").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM cyclone.check_invariants()").fetchone() == (0,)


def _once_finished(conn: psycopg.Connection[Any], n: int) -> None:
    """n one-step runs of workflow 'once', finished."""
    conn.execute("""SELECT cyclone.define_workflow('once', '{"nodes": [{"name": "work"}]}')""")
    conn.execute("SELECT cyclone.submit('once') FROM generate_series(1, %s)", (n,))
    conn.execute("SELECT cyclone.complete(step_id, 'w', lease_generation) FROM cyclone.claim('w', NULL, %s)", (n,))


def _after_commit(dsn: str, holder: psycopg.Connection[Any], waiter: psycopg.Connection[Any], query: str,
                  params: tuple[Any, ...] = ()) -> Any:
    """Run ``query`` on ``waiter`` while ``holder``'s open transaction blocks
    it, commit ``holder``, and return the query's row."""
    call = Call(lambda: waiter.execute(query, params).fetchone())
    call.start()
    with connect(dsn) as observer:
        wait_until_blocked(observer, waiter.info.backend_pid)
    holder.commit()
    return call.value(timeout=10)


def test_a_retry_waiting_for_an_archive_that_moves_its_run_still_reopens_it(
    conn: psycopg.Connection[Any], dsn: str
) -> None:
    # retry_all locks the run first: when archive() holds it (moving it out of
    # the live table), the retry waits, then finds the run in its day's table
    # and brings it back, instead of looking for its steps in the live table.
    conn.execute("""SELECT cyclone.define_workflow('once', '{"max_attempts": 1, "nodes": [{"name": "work"}]}')""")
    submitted = conn.execute("SELECT cyclone.submit('once')").fetchone()
    assert submitted is not None
    run = submitted[0]
    conn.execute("SELECT cyclone.fail(step_id, 'w', lease_generation, 'boom') FROM cyclone.claim('w', NULL, 1)")
    with psycopg.connect(dsn) as archiver, psycopg.connect(dsn, autocommit=True) as operator:
        assert archiver.execute("SELECT cyclone.archive()").fetchone() == (1,)  # moved, not committed
        assert _after_commit(dsn, archiver, operator, "SELECT cyclone.retry_all(%s)", (run,)) == (1,)
    assert conn.execute("SELECT state, tableoid::regclass::text FROM cyclone.cyclone_runs WHERE id = %s",
                        (run,)).fetchone() == ("running", "cyclone.cyclone_runs")


def test_two_prunes_at_once_drop_each_day_once(conn: psycopg.Connection[Any], dsn: str) -> None:
    # The second prune waits for the first one's lock on a day, then finds the
    # day gone: it counts nothing for it and fails nothing.
    _once_finished(conn, 3)
    assert conn.execute("SELECT cyclone.archive()").fetchone() == (3,)
    conn.execute("SELECT cyclone.advance_time('3 days')")
    with psycopg.connect(dsn) as first, psycopg.connect(dsn, autocommit=True) as second:
        assert first.execute("SELECT cyclone.prune('1 day')").fetchone() == (3,)  # dropped, not committed
        assert _after_commit(dsn, first, second, "SELECT cyclone.prune('1 day')") == (0,)
    assert conn.execute("SELECT count(*) FROM cyclone.cyclone_runs").fetchone() == (0,)


def test_an_archive_into_a_day_that_a_prune_drops_meanwhile_makes_the_day_again(
    conn: psycopg.Connection[Any], dsn: str
) -> None:
    # Finished runs of a day past the cutoff, still live (a backlog after an
    # upgrade): a prune drops the day's tables while archive() waits to write
    # into them; archive makes the day again instead of failing the tick.
    _once_finished(conn, 3)
    assert conn.execute("SELECT cyclone.archive(1)").fetchone() == (1,)  # the day has its tables
    conn.execute("SELECT cyclone.advance_time('3 days')")
    with psycopg.connect(dsn) as pruner, psycopg.connect(dsn, autocommit=True) as archiver:
        # The day, and one of the two live runs row by row; not committed.
        assert pruner.execute("SELECT cyclone.prune('1 day', 1)").fetchone() == (2,)
        assert _after_commit(dsn, pruner, archiver, "SELECT cyclone.archive()") == (1,)
    assert conn.execute("SELECT count(*), bool_and(tableoid <> 'cyclone.cyclone_runs'::regclass)"
                        " FROM cyclone.cyclone_runs").fetchone() == (1, True)
    assert conn.execute("SELECT cyclone.prune('1 day')").fetchone() == (1,)
