"""A limit under real concurrency (SPEC 12): 8 claimers on their own
connections against ``concurrency = 3``, completing, failing (retried) and
discarding what they claim, over 2,000 single-step runs.

An observer records every transition of every step: a test-only trigger on
``cyclone_steps`` that takes one advisory lock before it writes its log row,
so that the transactions that change a step's state commit in the order of the
log's sequence. Replaying the log is then the exact history of the running
set: it must never hold more than 3 steps, and no step may be claimed while it
is running. The claimers' own view agrees: no (step, lease generation) is
handed out twice, and no deadlock (40P01) or other error reaches them.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from helpers import assert_consistent
from psycopg.types.json import Jsonb
from sqlapi import Conn, connect, db  # noqa: F401, F811  (db is a fixture)

RUNS = 2000
CLAIMERS = 8
CONCURRENCY = 3

OBSERVER = """
CREATE SCHEMA observer;
CREATE TABLE observer.log (seq bigserial PRIMARY KEY, step_id bigint, old_state text, new_state text);
CREATE FUNCTION observer.record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Held to commit: the transactions that move steps commit in log order.
    PERFORM pg_advisory_xact_lock(424242);
    INSERT INTO observer.log (step_id, old_state, new_state) VALUES (NEW.id, OLD.state, NEW.state);
    RETURN NULL;
END $$;
CREATE TRIGGER zz_observe AFTER UPDATE OF state ON cyclone.cyclone_steps
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION observer.record();
"""

@pytest.fixture(autouse=True)
def _consistent_at_the_end(dsn: str) -> Iterator[None]:
    """Every test here ends with no broken invariant (cyclone.check_invariants())."""
    yield
    assert_consistent(dsn)



def claimer(dsn: str, name: str, seed: int, claimed: list[tuple[int, int]], stop: threading.Event) -> None:
    rng = random.Random(seed)
    with connect(dsn) as c:
        while not stop.is_set():
            rows = c.execute("SELECT step_id, lease_generation FROM cyclone.claim(%s, NULL, %s)",
                             (name, rng.randint(1, 3))).fetchall()
            if not rows:
                time.sleep(0.001)
                continue
            claimed.extend((r["step_id"], r["lease_generation"]) for r in rows)
            done = []
            for r in rows:
                roll = rng.random()
                if roll < 0.15:
                    c.execute("SELECT cyclone.fail(%s, %s, %s, 'boom', 'error', '0 seconds')",
                              (r["step_id"], name, r["lease_generation"]))
                elif roll < 0.20:
                    c.execute("SELECT cyclone.fail(%s, %s, %s, 'bad', 'permanent')",
                              (r["step_id"], name, r["lease_generation"]))
                else:
                    done.append(r)
            if len(done) == 1:
                c.execute("SELECT cyclone.complete(%s, %s, %s)",
                          (done[0]["step_id"], name, done[0]["lease_generation"]))
            elif done:
                c.execute("SELECT * FROM cyclone.complete_many(%s, %s, %s, %s)",
                          (name, [r["step_id"] for r in done], [r["lease_generation"] for r in done],
                           [Jsonb({"ok": True})] * len(done)))


def _race(dsn: str, db: Conn, seed: int) -> list[tuple[int, int]]:
    """CLAIMERS claimers (seeds ``seed`` + i) until no run is running (at most
    240 s); what they claimed. A claimer's exception fails the test."""
    stop = threading.Event()
    claimed: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            claimer(dsn, f"w{i}", seed + i, claimed, stop)
        except BaseException as exc:  # reported below
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(CLAIMERS)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not stop.is_set():
        row = db.execute("SELECT count(*) AS n FROM cyclone.cyclone_runs WHERE state = 'running'").fetchone()
        if row is not None and row["n"] == 0:
            break
        time.sleep(0.1)
    stop.set()
    for t in threads:
        t.join(30)
    assert not errors, errors
    return claimed


@pytest.mark.slow
def test_eight_claimers_never_run_more_than_concurrency_and_never_claim_a_step_twice(dsn: str, db: Conn) -> None:
    db.execute(OBSERVER)
    db.execute("SELECT cyclone.define_limit('gate', %s)", (CONCURRENCY,))
    db.execute("SELECT cyclone.define_workflow('gated', %s)",
               (Jsonb({"max_attempts": 3, "nodes": [{"name": "work", "limits": [{"name": "gate"}]}]}),))
    db.execute("SELECT count(*) FROM cyclone.submit_many('gated', %s)", ([Jsonb({"i": i}) for i in range(RUNS)],))

    claimed = _race(dsn, db, seed=0)
    assert db.execute("SELECT count(*) AS n FROM cyclone.cyclone_runs WHERE state = 'running'").fetchone() == {"n": 0}

    # The claimers' view: nothing handed out twice.
    assert len(claimed) >= RUNS
    assert not [k for k, n in Counter(claimed).items() if n > 1], "a lease was handed out twice"

    # The observer's: replay every transition in commit order.
    log: list[dict[str, Any]] = db.execute(
        "SELECT step_id, old_state, new_state FROM observer.log ORDER BY seq").fetchall()
    running: set[int] = set()
    peak = 0
    claims = 0
    for e in log:
        if e["new_state"] == "running":
            assert e["step_id"] not in running, f"step {e['step_id']} claimed while running"
            running.add(e["step_id"])
            claims += 1
            peak = max(peak, len(running))
            assert len(running) <= CONCURRENCY, f"{len(running)} running in a bucket of {CONCURRENCY}"
        elif e["old_state"] == "running":
            running.discard(e["step_id"])
    assert claims == len(claimed), "the observer saw every claim"
    assert peak == CONCURRENCY, "the limit was reached (the test exercised it)"
    assert running == set()
    assert db.execute("SELECT count(*) AS n FROM cyclone.cyclone_slots").fetchone() == {"n": 0}, "every slot back"
    states = {r["state"]: r["n"]
              for r in db.execute("SELECT state, count(*) AS n FROM cyclone.cyclone_runs GROUP BY state")}
    assert states.get("completed", 0) > RUNS // 2 and states.get("failed", 0) > 0, states


@pytest.mark.slow
def test_eight_claimers_over_keyed_buckets_never_deadlock_and_never_exceed_a_bucket(dsn: str, db: Conn) -> None:
    """The same, over a per-key limit: 10 buckets of concurrency 2, where claims
    mark full buckets and add slots to growing ones at the same time, in any
    order. No claim waits for a bucket row, so none deadlocks; and no bucket
    ever runs more than 2."""
    runs, keys, per_key = 1000, 10, 2
    db.execute(OBSERVER)
    db.execute("SELECT cyclone.define_limit('tenant', %s)", (per_key,))
    db.execute("SELECT cyclone.define_workflow('keyed', %s)",
               (Jsonb({"max_attempts": 3, "nodes": [{"name": "work", "limits": [{"name": "tenant", "key": "t"}]}]}),))
    db.execute("SELECT count(*) FROM cyclone.submit_many('keyed', %s)",
               ([Jsonb({"t": f"t{i % keys}"}) for i in range(runs)],))

    claimed = _race(dsn, db, seed=100)
    assert not [k for k, n in Counter(claimed).items() if n > 1], "a lease was handed out twice"

    bucket_of = {r["id"]: r["queue_bucket"]
                 for r in db.execute("SELECT s.id, s.queue_bucket FROM cyclone.cyclone_steps s "
                                     "JOIN cyclone.cyclone_runs r ON r.id = s.run_id WHERE r.workflow = 'keyed'")}
    running: dict[int, set[int]] = {}
    peak = 0
    for e in db.execute("SELECT step_id, old_state, new_state FROM observer.log ORDER BY seq").fetchall():
        bucket = running.setdefault(bucket_of[e["step_id"]], set())
        if e["new_state"] == "running":
            bucket.add(e["step_id"])
            peak = max(peak, len(bucket))
            assert len(bucket) <= per_key, f"{len(bucket)} running in a bucket of {per_key}"
        elif e["old_state"] == "running":
            bucket.discard(e["step_id"])
    assert peak == per_key, "a bucket was full (the test exercised it)"
    assert db.execute("SELECT count(*) AS n FROM cyclone.cyclone_slots").fetchone() == {"n": 0}, "every slot back"


def test_a_freed_slot_wakes_idle_workers_when_a_step_is_held_back(dsn: str, db: Conn) -> None:
    """SPEC 5: a step leaving running in a bucket with held-back steps sends
    NOTIFY cyclone_wakeup; with nothing held back, a completion sends none."""
    db.execute("SELECT cyclone.define_limit('one', 1)")
    db.execute("SELECT cyclone.define_workflow('solo', %s)",
               (Jsonb({"nodes": [{"name": "work", "limits": [{"name": "one"}]}]}),))
    with psycopg.connect(dsn, autocommit=True) as listener:
        listener.execute("LISTEN cyclone_wakeup")

        def drain() -> int:
            return sum(1 for _ in listener.notifies(timeout=0.3))

        db.execute("SELECT cyclone.submit('solo')")
        db.execute("SELECT cyclone.submit('solo')")
        drain()
        first = db.execute("SELECT step_id, lease_generation FROM cyclone.claim('w', NULL, 5)").fetchall()
        assert len(first) == 1
        db.execute("SELECT cyclone.complete(%s, 'w', %s)", (first[0]["step_id"], first[0]["lease_generation"]))
        assert drain() == 1, "the held-back step's worker is woken"
        second = db.execute("SELECT step_id, lease_generation FROM cyclone.claim('w', NULL, 5)").fetchall()
        assert len(second) == 1
        db.execute("SELECT cyclone.complete(%s, 'w', %s)", (second[0]["step_id"], second[0]["lease_generation"]))
        assert drain() == 0, "nothing held back: no wake-up"
