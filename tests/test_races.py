"""Races between connections: completions reaching a join, batches crossing
parent and child runs, and many claimers on one queue.

Every test runs real transactions on separate connections released together by
a barrier, many times over, and asserts both the outcome (the join reached
exactly once, nothing claimed twice, nothing missed) and that no deadlock
(SQLSTATE 40P01) ever reaches the caller.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID

import psycopg
import pytest
from helpers import assert_consistent
from psycopg.types.json import Jsonb
from sqlapi import (  # noqa: F401  (db is a fixture)
    Call,
    Conn,
    Row,
    connect,
    db,
    define,
    run_state,
    submit,
    wait_until_blocked,
)


@pytest.fixture(autouse=True)
def _consistent_at_the_end(dsn: str) -> Iterator[None]:
    """Every test here ends with no broken invariant (cyclone.check_invariants())."""
    yield
    assert_consistent(dsn)



def claim_node(c: Conn, run_id: UUID, node: str, worker: str) -> Row:
    """Claim the given node of a run (no other step of its handler may be due)."""
    rows: list[Row] = c.execute("SELECT c.* FROM cyclone.claim(%s, ARRAY[(SELECT handler FROM cyclone.cyclone_steps"
                     " WHERE run_id = %s AND node = %s)], 100) c", (worker, run_id, node)).fetchall()
    assert [(r["run_id"], r["node"]) for r in rows] == [(run_id, node)], rows
    return rows[0] | {"worker": worker}


def claim_all(c: Conn, handler: str, worker: str) -> dict[UUID, Row]:
    """Claim every due step of a handler; run id -> claim row."""
    rows = c.execute("SELECT * FROM cyclone.claim(%s, ARRAY[%s], 10000)", (worker, handler)).fetchall()
    return {r["run_id"]: r | {"worker": worker} for r in rows}


def steps(c: Conn, run_id: UUID) -> dict[str, Row]:
    return {r["node"]: r for r in c.execute("SELECT * FROM cyclone.cyclone_steps WHERE run_id = %s", (run_id,))}


def race(*fns: Callable[[], Any]) -> list[Any]:
    """Run the functions at the same instant; re-raise the first error (a
    deadlock would surface here as psycopg.errors.DeadlockDetected)."""
    barrier = threading.Barrier(len(fns))
    racers = [Call(fn, barrier) for fn in fns]
    for r in racers:
        r.start()
    for r in racers:
        r.join(60)
        assert not r.is_alive(), "a racer hung"
    for r in racers:
        if r.error is not None:
            raise r.error
    return [r.result for r in racers]


def complete(c: Conn, claim: Row, output: Any) -> bool:
    row = c.execute("SELECT cyclone.complete(%s, %s, %s, %s) AS ok",
                    (claim["step_id"], claim["worker"], claim["lease_generation"], Jsonb(output))).fetchone()
    assert row is not None
    return bool(row["ok"])


def complete_many(c: Conn, worker: str, claims: list[Row]) -> list[bool]:
    rows = c.execute(
        "SELECT * FROM cyclone.complete_many(%s, %s::bigint[], %s::bigint[], %s::jsonb[])",
        (worker, [x["step_id"] for x in claims], [x["lease_generation"] for x in claims],
         [Jsonb({"node": x["node"]}) for x in claims])).fetchall()
    return [bool(r["accepted"]) for r in rows]


# -- the join ----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("how", ["complete", "complete_many", "mixed"])
def test_the_last_two_dependencies_completing_at_once_reach_the_join_exactly_once(
    dsn: str, db: Conn, how: str
) -> None:
    define(db, "join", [{"name": "a"}, {"name": "b"}, {"name": "j", "deps": ["a", "b"]}])
    iterations = 200 if how == "complete" else 60
    with connect(dsn) as ca, connect(dsn) as cb:

        def report(c: Conn, claim: Row, batch: bool) -> bool:
            return complete_many(c, claim["worker"], [claim])[0] if batch else complete(c, claim, {"n": claim["node"]})

        for i in range(iterations):
            run_id = submit(db, "join")
            a = claim_node(db, run_id, "a", "wa")
            b = claim_node(db, run_id, "b", "wb")
            batch_a = how == "complete_many" or (how == "mixed" and i % 2 == 0)
            batch_b = how == "complete_many" or (how == "mixed" and i % 2 == 1)
            assert race(lambda: report(ca, a, batch_a), lambda: report(cb, b, batch_b)) == [True, True]

            j = steps(db, run_id)["j"]
            assert j["state"] == "available", f"iteration {i}: the join was not reached ({j['state']})"
            assert (j["attempt"], j["lease_generation"]) == (0, 0)
            claimed = claim_all(db, "j", "wj")
            assert list(claimed) == [run_id], "the join must be claimable exactly once"
            assert claimed[run_id]["deps"] == {"a": {"n": "a"} if not batch_a else {"node": "a"},
                                               "b": {"n": "b"} if not batch_b else {"node": "b"}}
            assert claim_all(db, "j", "wj2") == {}


@pytest.mark.slow
def test_a_wide_fan_in_completed_by_eight_connections_at_once_reaches_the_join_once(dsn: str, db: Conn) -> None:
    leaves = [f"l{i}" for i in range(8)]
    define(db, "fan", [{"name": "root"}, *({"name": n, "deps": ["root"]} for n in leaves),
                       {"name": "j", "deps": leaves}])
    conns = [connect(dsn) for _ in leaves]
    try:
        for _ in range(40):
            run_id = submit(db, "fan")
            assert complete(db, claim_node(db, run_id, "root", "w"), {})
            claims = {n: claim_node(db, run_id, n, "w") for n in leaves}
            results = race(*(
                (lambda c=c, x=claims[n]: complete(c, x, {"leaf": x["node"]}))
                for c, n in zip(conns, leaves, strict=True)))
            assert results == [True] * len(leaves)
            assert steps(db, run_id)["j"]["state"] == "available"
            assert list(claim_all(db, "j", "w")) == [run_id]
    finally:
        for c in conns:
            c.close()


def test_a_discard_racing_the_last_completion_never_reaches_the_join(dsn: str, db: Conn) -> None:
    define(db, "join", [{"name": "a"}, {"name": "b"}, {"name": "j", "deps": ["a", "b"]}])
    with connect(dsn) as ca, connect(dsn) as cb:
        for i in range(60):
            run_id = submit(db, "join")
            a = claim_node(db, run_id, "a", "wa")
            b = claim_node(db, run_id, "b", "wb")
            done, failed = race(
                lambda: complete(ca, a, {}),
                lambda: cb.execute("SELECT cyclone.fail(%s, 'wb', %s, 'no', 'permanent') AS s",
                                   (b["step_id"], b["lease_generation"])).fetchone())
            assert failed == {"s": "discarded"}
            s = steps(db, run_id)
            # Whichever went first: a completed, or a cancelled by the failed run
            # (and its late completion refused).
            assert s["a"]["state"] == ("completed" if done else "cancelled")
            assert (s["j"]["state"], s["j"]["error"]) == ("cancelled", "run failed"), f"iteration {i}"
            assert run_state(db, run_id) == "failed"


# -- batches that cross parent and child runs ------------------------------------------


@pytest.mark.slow
def test_complete_many_batches_crossing_parent_and_child_runs_never_deadlock(dsn: str, db: Conn) -> None:
    """Two workers each report a batch holding a child run's step and another
    tree's parent step. Locking runs by run id (a child locks its parent first)
    orders the two trees differently in each batch: 40P01. Runs must be locked
    in the order of their root run."""
    define(db, "kid", [{"name": "work"}])
    define(db, "mom", [{"name": "c", "kind": "child", "workflow": "kid"}, {"name": "t"}])
    pairs = 4
    with connect(dsn) as c1, connect(dsn) as c2:
        for _ in range(60):
            parents = [submit(db, "mom") for _ in range(2 * pairs)]
            kids = []
            for p in parents:
                row = db.execute("SELECT id FROM cyclone.cyclone_runs WHERE parent_run_id = %s", (p,)).fetchone()
                assert row is not None
                kids.append(UUID(str(row["id"])))
            ts, works = claim_all(db, "t", "w"), claim_all(db, "work", "w")
            parent_t = [ts[p] for p in parents]
            kid_work = [works[k] for k in kids]
            # Batch 1: kid of tree 2i with the parent step of tree 2i+1; batch 2 the reverse.
            one = [x for i in range(pairs) for x in (kid_work[2 * i], parent_t[2 * i + 1])]
            two = [x for i in range(pairs) for x in (kid_work[2 * i + 1], parent_t[2 * i])]
            r1, r2 = race(lambda: complete_many(c1, "w", one), lambda: complete_many(c2, "w", two))
            assert all(r1) and all(r2)
            for p, k in zip(parents, kids, strict=True):
                assert (run_state(db, k), run_state(db, p)) == ("completed", "completed")


def test_a_tick_whose_phases_touch_runs_out_of_order_does_not_deadlock_with_a_batch_complete(
    dsn: str, db: Conn
) -> None:
    """tick() sweeps run X (an expired lease), then fails run Y (its deadline),
    with Y < X. A worker's complete_many holding steps of both locks Y, then X.
    A step-row lock held by a third session (a heartbeat in flight) pauses the
    tick inside its sweep long enough for the batch to take Y: unless the tick
    takes all its runs up front in the one lock order, that is 40P01."""
    define(db, "two", [{"name": "a"}, {"name": "b"}])
    while True:
        y = submit(db, "two", deadline="5 seconds")
        x = submit(db, "two")
        if y < x:
            break
        db.execute("SELECT cyclone.cancel(%s), cyclone.cancel(%s)", (x, y))
    y_a = db.execute("SELECT * FROM cyclone.claim('w', ARRAY['a'], 1, '1 hour')").fetchone()
    x_a = db.execute("SELECT * FROM cyclone.claim('w', ARRAY['a'], 1, '1 second')").fetchone()  # to expire
    assert y_a is not None and x_a is not None and (y_a["run_id"], x_a["run_id"]) == (y, x)
    x_b = claim_all(db, "b", "w")[x]
    db.execute("SELECT cyclone.advance_time('10 seconds')")

    with psycopg.connect(dsn) as heartbeat, connect(dsn) as ticker, connect(dsn) as reporter:
        heartbeat.execute("SELECT 1 FROM cyclone.cyclone_steps WHERE run_id = %s AND node = 'a' FOR UPDATE", (x,))
        tick = Call(lambda: ticker.execute("SELECT cyclone.tick() AS t").fetchone())
        tick.start()
        wait_until_blocked(db, ticker.info.backend_pid)
        batch = Call(lambda: complete_many(reporter, "w", [y_a, x_b]))
        batch.start()
        wait_until_blocked(db, reporter.info.backend_pid)
        heartbeat.commit()
        for r in (tick, batch):
            r.join(30)
            if r.error is not None:
                raise r.error
    assert tick.result["t"]["reclaimed"] == 1 and tick.result["t"]["deadlines"] == 1
    assert batch.result == [False, True], "y's step was failed by its deadline first; x's b completes"


# -- many claimers on one queue -----------------------------------------------------------


def test_eight_connections_claiming_ten_thousand_steps_claim_each_exactly_once(dsn: str, db: Conn) -> None:
    total = 10_000
    define(db, "q", [{"name": "work"}])
    for _ in range(total // 2_000):
        db.execute("SELECT count(*) FROM cyclone.submit_many('q', array_fill('{}'::jsonb, ARRAY[2000]))")

    claimed: dict[str, list[int]] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def claimer(name: str) -> None:
        mine: list[int] = []
        claimed[name] = mine
        try:
            with psycopg.connect(dsn, autocommit=True) as c:
                barrier.wait(30)
                empty = 0
                while empty < 3:
                    rows = c.execute("SELECT step_id FROM cyclone.claim(%s, NULL, 25, '10 minutes')",
                                     (name,)).fetchall()
                    mine.extend(int(r[0]) for r in rows)
                    empty = empty + 1 if not rows else 0
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(f"claimer-{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    everything = [s for ids in claimed.values() for s in ids]
    dupes = [s for s, n in Counter(everything).items() if n > 1]
    assert dupes == [], f"{len(dupes)} steps were claimed twice"
    assert len(everything) == total, "a step was missed"
    assert sum(1 for ids in claimed.values() if ids) >= 2, "the claimers did not run concurrently"

    rows = db.execute("SELECT state, lease_owner, attempt, lease_generation, count(*) AS n FROM cyclone.cyclone_steps"
                      " GROUP BY 1, 2, 3, 4").fetchall()
    assert {r["state"] for r in rows} == {"running"}
    assert {(r["attempt"], r["lease_generation"]) for r in rows} == {(1, 1)}
    by_owner = {r["lease_owner"]: r["n"] for r in rows}
    assert by_owner == {name: len(ids) for name, ids in claimed.items() if ids}, "owner differs from the claimer"
