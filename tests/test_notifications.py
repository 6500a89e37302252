"""The NOTIFY channels of the engine, observed from a second connection.

pgTAP cannot see notifications (they are delivered at commit and its tests roll
back), so these tests commit real transactions and listen like a worker does.
A wake-up is sent only while a worker waits for work (wakeups.sql): the
listener below waits as a worker does, with a claim that came back short.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest

Conn = psycopg.Connection[tuple[object, ...]]


@pytest.fixture
def ears(dsn: str) -> Iterator[Conn]:
    """A connection listening on the engine's channels, no worker waiting."""
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("LISTEN cyclone_wakeup")
        c.execute("LISTEN cyclone_cancel")
        c.execute("LISTEN cyclone_discard")
        yield c


@pytest.fixture
def listener(ears: Conn) -> Conn:
    """The channels of a worker that waits: its claim (of a handler nobody
    submits) came back short."""
    wait(ears, "listener")
    return ears


def wait(conn: Conn, worker: str, ttl: str = "30 seconds") -> None:
    """A claim by ``worker`` that comes back short: the worker waits for work."""
    assert conn.execute("SELECT count(*) FROM cyclone.claim(%s, ARRAY['nothing'], 1, %s::interval)",
                        (worker, ttl)).fetchone() == (0,)


def drain(listener: Conn) -> list[tuple[str, str]]:
    return [(n.channel, n.payload) for n in listener.notifies(timeout=0.5, stop_after=None)]


def define(conn: Conn, name: str, nodes: list[dict[str, object]]) -> None:
    conn.execute("SELECT cyclone.define_workflow(%s, %s)", (name, json.dumps({"nodes": nodes})))


def test_submit_wakes_workers_once_per_transaction(conn: Conn, listener: Conn) -> None:
    define(conn, "fan", [{"name": "a"}, {"name": "b"}, {"name": "c"}])
    with conn.transaction():
        conn.execute("SELECT cyclone.submit('fan')")
        conn.execute("SELECT cyclone.submit('fan')")
    assert drain(listener) == [("cyclone_wakeup", "")]


def test_a_run_at_in_the_future_sends_no_wakeup(conn: Conn, listener: Conn) -> None:
    define(conn, "later", [{"name": "a"}])
    conn.execute("SELECT cyclone.submit('later', p_run_at => cyclone.now() + interval '1 hour')")
    assert drain(listener) == []


def test_completing_a_dependency_wakes_workers(conn: Conn, listener: Conn) -> None:
    define(conn, "chain", [{"name": "a"}, {"name": "b", "deps": ["a"]}])
    conn.execute("SELECT cyclone.submit('chain')")
    row = conn.execute("SELECT step_id, lease_generation FROM cyclone.claim('w', NULL, 1)").fetchone()
    assert row is not None
    drain(listener)
    conn.execute("SELECT cyclone.complete(%s, 'w', %s, '{}')", row)
    assert drain(listener) == [("cyclone_wakeup", "")]


def test_cancel_tells_the_workers_of_running_steps(conn: Conn, listener: Conn) -> None:
    define(conn, "one", [{"name": "a"}])
    run_id = conn.execute("SELECT cyclone.submit('one')").fetchone()[0]  # type: ignore[index]
    conn.execute("SELECT * FROM cyclone.claim('w', NULL, 1)")
    drain(listener)
    conn.execute("SELECT cyclone.cancel(%s, 'test')", (run_id,))
    assert drain(listener) == [("cyclone_cancel", str(run_id))]


def test_a_deadline_tells_the_workers_and_announces_the_discard(conn: Conn, listener: Conn) -> None:
    define(conn, "slow", [{"name": "a"}])
    run_id = conn.execute("SELECT cyclone.submit('slow', '{}', interval '1 minute')").fetchone()[0]  # type: ignore[index]
    conn.execute("SELECT * FROM cyclone.claim('w', NULL, 1)")
    conn.execute("SELECT cyclone.advance_time('2 minutes')")
    drain(listener)
    conn.execute("SELECT cyclone.tick()")
    got = drain(listener)
    assert ("cyclone_cancel", str(run_id)) in got
    discards = [json.loads(p) for ch, p in got if ch == "cyclone_discard"]
    assert [(d["run_id"], d["node"], d["error_kind"]) for d in discards] == [(str(run_id), "a", "deadline")]


def test_a_permanent_failure_announces_the_discard(conn: Conn, listener: Conn) -> None:
    define(conn, "bad", [{"name": "a"}])
    run_id = conn.execute("SELECT cyclone.submit('bad')").fetchone()[0]  # type: ignore[index]
    step_id, gen = conn.execute("SELECT step_id, lease_generation FROM cyclone.claim('w', NULL, 1)").fetchone()  # type: ignore[misc]
    drain(listener)
    conn.execute("SELECT cyclone.fail(%s, 'w', %s, 'no', 'permanent')", (step_id, gen))
    got = drain(listener)
    assert [(ch, json.loads(p)["error_kind"]) for ch, p in got] == [("cyclone_discard", "permanent")]
    assert json.loads(got[0][1])["run_id"] == str(run_id)


def test_a_reclaim_wakes_workers(conn: Conn, listener: Conn) -> None:
    define(conn, "crashy", [{"name": "a"}])
    conn.execute("SELECT cyclone.submit('crashy')")
    conn.execute("SELECT * FROM cyclone.claim('w', NULL, 1, interval '1 second')")
    conn.execute("SELECT cyclone.advance_time('2 seconds')")
    drain(listener)
    conn.execute("SELECT cyclone.sweep()")
    assert drain(listener) == [("cyclone_wakeup", "")]


def test_no_wakeup_while_no_worker_waits(conn: Conn, ears: Conn) -> None:
    define(conn, "quiet", [{"name": "a"}, {"name": "b", "deps": ["a"]}])
    conn.execute("SELECT cyclone.submit('quiet')")
    row = conn.execute("SELECT step_id, lease_generation FROM cyclone.claim('w', NULL, 1)").fetchone()
    assert row is not None  # a full claim: w is busy, not waiting
    conn.execute("SELECT cyclone.complete(%s, 'w', %s, '{}')", row)
    assert drain(ears) == []


def test_a_short_claim_waits_and_a_full_claim_stops_waiting(conn: Conn, ears: Conn) -> None:
    define(conn, "one", [{"name": "a"}])
    wait(conn, "w")
    conn.execute("SELECT cyclone.submit('one')")
    assert drain(ears) == [("cyclone_wakeup", "")]
    assert conn.execute("SELECT count(*) FROM cyclone.claim('w', NULL, 1)").fetchone() == (1,)
    conn.execute("SELECT cyclone.submit('one')")
    assert drain(ears) == []


def test_a_waiting_worker_is_forgotten_after_its_lease_ttl(conn: Conn, ears: Conn) -> None:
    define(conn, "one", [{"name": "a"}])
    wait(conn, "w", "10 seconds")
    conn.execute("SELECT cyclone.advance_time('9 seconds')")
    conn.execute("SELECT cyclone.submit('one')")
    assert drain(ears) == [("cyclone_wakeup", "")]
    conn.execute("SELECT cyclone.advance_time('2 seconds')")
    conn.execute("SELECT cyclone.submit('one')")
    assert drain(ears) == []
