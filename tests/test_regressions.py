"""Named regressions: failure classes that other PostgreSQL job engines shipped.

Each test drives the SQL engine directly (psycopg, no runtime in between) and
would fail if Cyclone had the bug in its name:

- a recovery sweep overwriting a step that completed a moment before;
- the same step executing on two workers at once and both results accepted;
- a stale result from an older lease generation applied after a newer
  attempt started;
- a crashed worker's step stranded for longer than lease TTL + one tick;
- a poison step that kills its worker forever (bounded by max reclaims).

Time is the engine clock (``cyclone.advance_time``), never a sleep, except where
a real thread race is the point.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg.rows import dict_row
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

from cyclone_py import Worker, Workflow
from cyclone_py.context import StepContext


def claim(c: Conn, worker: str, handlers: list[str] | None = None, limit: int = 1,
          ttl: str = "30 seconds") -> list[Row]:
    return c.execute("SELECT * FROM cyclone.claim(%s, %s::text[], %s, %s::interval)",
                     (worker, handlers, limit, ttl)).fetchall()


def claim_one(c: Conn, worker: str, handler: str, ttl: str = "30 seconds") -> Row:
    rows = claim(c, worker, [handler], 1, ttl)
    assert len(rows) == 1, f"nothing claimable for handler {handler!r}"
    return rows[0]


def complete(c: Conn, step_id: int, worker: str, gen: int, output: Any = None) -> bool:
    row = c.execute("SELECT cyclone.complete(%s, %s, %s, %s) AS ok",
                    (step_id, worker, gen, None if output is None else Jsonb(output))).fetchone()
    assert row is not None
    return bool(row["ok"])


def complete_many(c: Conn, step_id: int, worker: str, gen: int, output: Any = None) -> bool:
    rows = c.execute("SELECT * FROM cyclone.complete_many(%s, %s::bigint[], %s::bigint[], %s::jsonb[])",
                     (worker, [step_id], [gen], [None if output is None else Jsonb(output)])).fetchall()
    assert [r["step_id"] for r in rows] == [step_id]
    return bool(rows[0]["accepted"])


def fail(c: Conn, step_id: int, worker: str, gen: int, kind: str = "error", retry_in: str | None = None) -> str | None:
    row = c.execute("SELECT cyclone.fail(%s, %s, %s, 'boom', %s, %s::interval) AS state",
                    (step_id, worker, gen, kind, retry_in)).fetchone()
    assert row is not None
    state: str | None = row["state"]
    return state


def renew(c: Conn, step_id: int, worker: str, gen: int, ttl: str = "30 seconds") -> bool:
    row = c.execute("SELECT cyclone.renew(%s, %s, %s, %s::interval) AS ok", (step_id, worker, gen, ttl)).fetchone()
    assert row is not None
    return bool(row["ok"])


def sweep(c: Conn, max_reclaims: int = 0) -> list[Row]:
    return c.execute("SELECT * FROM cyclone.sweep(%s)", (max_reclaims,)).fetchall()


def tick(c: Conn, max_reclaims: int = 0) -> dict[str, Any]:
    row = c.execute("SELECT cyclone.tick(%s) AS t", (max_reclaims,)).fetchone()
    assert row is not None
    return dict(row["t"])


def advance(c: Conn, by: str) -> None:
    c.execute("SELECT cyclone.advance_time(%s::interval)", (by,))


def step(c: Conn, step_id: int) -> Row:
    row: Row | None = c.execute("SELECT * FROM cyclone.cyclone_steps WHERE id = %s", (step_id,)).fetchone()
    assert row is not None
    return row


def step_of(c: Conn, run_id: UUID, node: str) -> Row:
    row: Row | None = c.execute("SELECT * FROM cyclone.cyclone_steps WHERE run_id = %s AND node = %s",
                                (run_id, node)).fetchone()
    assert row is not None
    return row


REPORTS: dict[str, Callable[[Conn, int, str, int], Any]] = {
    "complete": lambda c, sid, w, g: complete(c, sid, w, g, {"by": w}),
    "complete_many": lambda c, sid, w, g: complete_many(c, sid, w, g, {"by": w}),
    "fail": lambda c, sid, w, g: fail(c, sid, w, g, "error", "0 seconds"),
}


def accepted(kind: str, result: Any) -> bool:
    """Whether a report's return value says the engine took it."""
    return result is not None if kind == "fail" else bool(result)


# -- 1. a sweep overwriting a step completed a moment before -------------------


@pytest.mark.parametrize("kind", sorted(REPORTS))
def test_a_sweep_that_selected_a_step_does_not_overwrite_a_report_committed_before_its_write(
    dsn: str, db: Conn, kind: str
) -> None:
    """The sweep reads its candidates unlocked; the report commits between that
    read and the sweep's write. The sweep must re-match under the lock and do
    nothing (the bug: the reclaim overwrote the completed step)."""
    define(db, "one", [{"name": "work"}])
    run_id = submit(db, "one")
    c = claim_one(db, "w1", "work", "1 second")
    advance(db, "2 seconds")  # the lease has expired: the step is a sweep candidate

    with psycopg.connect(dsn, row_factory=dict_row) as holder, connect(dsn) as sweeper:
        holder.execute("SELECT 1 FROM cyclone.cyclone_runs WHERE id = %s FOR NO KEY UPDATE", (run_id,))
        sweeper_pid = sweeper.info.backend_pid
        racing_sweep = Call(lambda: sweep(sweeper))
        racing_sweep.start()
        wait_until_blocked(db, sweeper_pid)  # it has picked the step and waits for the run lock
        result = REPORTS[kind](holder, c["step_id"], "w1", c["lease_generation"])
        holder.commit()
        swept = racing_sweep.value()

    assert accepted(kind, result)
    assert swept == [], "the sweep acted on a step that was no longer running under that lease"
    s = step(db, c["step_id"])
    assert s["reclaims"] == 0
    if kind == "fail":
        assert (s["state"], s["error_kind"], s["attempt"]) == ("available", "error", 1)
    else:
        assert (s["state"], s["output"]) == ("completed", {"by": "w1"})
        assert run_state(db, run_id) == "completed"


@pytest.mark.parametrize("kind", sorted(REPORTS))
def test_a_report_that_arrives_after_a_committed_reclaim_is_refused(dsn: str, db: Conn, kind: str) -> None:
    """The mirror image: the sweep reclaims first; the report, already past its
    first read, must not resurrect the old lease."""
    define(db, "one", [{"name": "work"}])
    run_id = submit(db, "one")
    c = claim_one(db, "w1", "work", "1 second")
    advance(db, "2 seconds")

    with psycopg.connect(dsn, row_factory=dict_row) as holder, connect(dsn) as reporter:
        holder.execute("SELECT 1 FROM cyclone.cyclone_runs WHERE id = %s FOR NO KEY UPDATE", (run_id,))
        late = Call(lambda: REPORTS[kind](reporter, c["step_id"], "w1", c["lease_generation"]))
        late.start()
        wait_until_blocked(db, reporter.info.backend_pid)
        swept = holder.execute("SELECT * FROM cyclone.sweep()").fetchall()
        holder.commit()
        result = late.value()

    assert [(r["step_id"], r["action"]) for r in swept] == [(c["step_id"], "reclaimed")]
    assert not accepted(kind, result)
    s = step(db, c["step_id"])
    assert (s["state"], s["reclaims"], s["attempt"], s["output"], s["error"]) == ("available", 1, 1, None, None)
    assert run_state(db, run_id) == "running"


@pytest.mark.parametrize("kind", ["complete", "fail"])
def test_sweep_and_report_racing_on_two_connections_leave_exactly_one_winner(dsn: str, db: Conn, kind: str) -> None:
    define(db, "one", [{"name": "work"}])
    outcomes = {"report": 0, "sweep": 0}
    with connect(dsn) as a, connect(dsn) as b:
        for _ in range(60):
            run_id = submit(db, "one")
            c = claim_one(db, "w1", "work", "1 second")
            advance(db, "2 seconds")
            barrier = threading.Barrier(2)
            report = Call(lambda: REPORTS[kind](a, c["step_id"], "w1", c["lease_generation"]), barrier)
            swept = Call(lambda: sweep(b), barrier)
            report.start()
            swept.start()
            result, rows = report.value(), swept.value()
            s = step(db, c["step_id"])
            if accepted(kind, result):
                outcomes["report"] += 1
                assert rows == [], "a sweep reclaimed a step whose report was accepted"
                assert s["reclaims"] == 0
                assert s["state"] == ("available" if kind == "fail" else "completed")
            else:
                outcomes["sweep"] += 1
                assert [(r["step_id"], r["action"]) for r in rows] == [(c["step_id"], "reclaimed")]
                assert (s["state"], s["reclaims"], s["output"]) == ("available", 1, None)
            db.execute("SELECT cyclone.cancel(%s)", (run_id,))  # out of the way of the next claim
    assert sum(outcomes.values()) == 60


# -- 2. the same step executing on two workers at once ------------------------


def two_executions(db: Conn) -> tuple[UUID, Row, Row]:
    """Worker A's lease expires and is reclaimed; worker B claims the same step.
    Both are now executing it. Returns (run, A's claim, B's claim)."""
    define(db, "one", [{"name": "work"}])
    run_id = submit(db, "one")
    a = claim_one(db, "A", "work", "1 second")
    advance(db, "2 seconds")
    assert tick(db)["reclaimed"] == 1
    b = claim_one(db, "B", "work")
    assert b["step_id"] == a["step_id"]
    assert (a["attempt"], b["attempt"]) == (1, 1)  # a reclaim runs the same attempt again
    assert b["lease_generation"] == a["lease_generation"] + 1
    return run_id, a, b


@pytest.mark.parametrize("kind", sorted(REPORTS))
@pytest.mark.parametrize("old_first", [True, False], ids=["old-reports-first", "new-reports-first"])
def test_the_same_step_running_on_two_workers_has_only_the_current_lease_accepted(
    db: Conn, kind: str, old_first: bool
) -> None:
    run_id, a, b = two_executions(db)
    sid = a["step_id"]
    report = REPORTS[kind]
    if old_first:
        assert not accepted(kind, report(db, sid, "A", a["lease_generation"]))
        s = step(db, sid)
        assert (s["state"], s["lease_owner"], s["lease_generation"]) == ("running", "B", b["lease_generation"])
        assert not renew(db, sid, "A", a["lease_generation"]), "the old worker's heartbeat must fail"
        assert accepted(kind, report(db, sid, "B", b["lease_generation"]))
    else:
        assert accepted(kind, report(db, sid, "B", b["lease_generation"]))
        assert not accepted(kind, report(db, sid, "A", a["lease_generation"]))
    s = step(db, sid)
    if kind == "fail":
        assert (s["state"], s["attempt"], s["error_kind"]) == ("available", 1, "error")
    else:
        assert (s["state"], s["output"]) == ("completed", {"by": "B"})
        assert run_state(db, run_id) == "completed"


def test_neither_worker_can_borrow_the_others_lease(db: Conn) -> None:
    _, a, b = two_executions(db)
    sid = a["step_id"]
    assert not complete(db, sid, "A", b["lease_generation"]), "right generation, wrong owner"
    assert not complete(db, sid, "B", a["lease_generation"]), "right owner, old generation"
    assert fail(db, sid, "A", b["lease_generation"]) is None
    assert not renew(db, sid, "A", b["lease_generation"])
    assert step(db, sid)["state"] == "running"


def test_two_workers_completing_the_same_step_at_the_same_instant_have_one_accepted(dsn: str, db: Conn) -> None:
    define(db, "one", [{"name": "work"}])
    with connect(dsn) as ca, connect(dsn) as cb:
        for _ in range(40):
            run_id = submit(db, "one")
            a = claim_one(db, "A", "work", "1 second")
            advance(db, "2 seconds")
            tick(db)
            b = claim_one(db, "B", "work")
            barrier = threading.Barrier(2)
            ta = Call(lambda: complete(ca, a["step_id"], "A", a["lease_generation"], {"by": "A"}), barrier)
            tb = Call(lambda: complete(cb, b["step_id"], "B", b["lease_generation"], {"by": "B"}), barrier)
            ta.start()
            tb.start()
            assert (ta.value(), tb.value()) == (False, True)
            assert step(db, a["step_id"])["output"] == {"by": "B"}
            assert run_state(db, run_id) == "completed"


# -- 3. a stale result from an older generation after a newer attempt started --


def test_a_timed_out_attempts_late_result_is_refused_once_the_next_attempt_runs(db: Conn) -> None:
    """The same worker name runs attempt 2 while attempt 1's handler is still
    going; only the generation tells the two apart."""
    define(db, "slow", [{"name": "work", "timeout": "5 seconds"}])
    run_id = submit(db, "slow")
    first = claim_one(db, "w", "work")
    advance(db, "6 seconds")
    assert tick(db)["retried"] == 1  # a timeout: attempt charged, backoff
    advance(db, "2 seconds")  # past the attempt-1 backoff (at most 1 s)
    second = claim_one(db, "w", "work")
    assert (first["attempt"], second["attempt"]) == (1, 2)

    old_gen = first["lease_generation"]
    assert not complete(db, first["step_id"], "w", old_gen, {"attempt": 1})
    assert not complete_many(db, first["step_id"], "w", old_gen, {"attempt": 1})
    assert fail(db, first["step_id"], "w", old_gen, "permanent") is None, "a stale fail must not discard attempt 2"
    assert not renew(db, first["step_id"], "w", old_gen)
    s = step(db, first["step_id"])
    assert (s["state"], s["attempt"], s["lease_generation"], s["output"]) == (
        "running", 2, second["lease_generation"], None)

    assert complete(db, second["step_id"], "w", second["lease_generation"], {"attempt": 2})
    assert step(db, first["step_id"])["output"] == {"attempt": 2}
    assert run_state(db, run_id) == "completed"


def test_a_restarted_worker_with_the_same_name_cannot_complete_with_its_old_lease(db: Conn) -> None:
    """Fencing by owner alone fails here: the owner matches, the generation does not."""
    define(db, "one", [{"name": "work"}])
    submit(db, "one")
    old = claim_one(db, "host:1", "work", "1 second")
    advance(db, "2 seconds")
    assert tick(db)["reclaimed"] == 1
    new = claim_one(db, "host:1", "work")
    assert not complete(db, old["step_id"], "host:1", old["lease_generation"], {"from": "old"})
    assert complete(db, new["step_id"], "host:1", new["lease_generation"], {"from": "new"})
    assert step(db, new["step_id"])["output"] == {"from": "new"}


def test_an_execution_fenced_by_a_deadline_cannot_complete_the_operator_retry(db: Conn) -> None:
    define(db, "one", [{"name": "work"}])
    row = db.execute("SELECT cyclone.submit('one', '{}', '10 seconds') AS id").fetchone()
    assert row is not None
    run_id = UUID(str(row["id"]))
    old = claim_one(db, "w", "work")
    advance(db, "11 seconds")
    assert tick(db)["deadlines"] == 1
    db.execute("SELECT cyclone.retry(%s, 'work', 1, 'deadline was too short')", (run_id,))
    new = claim_one(db, "w", "work")
    assert new["lease_generation"] > old["lease_generation"]
    assert not complete(db, old["step_id"], "w", old["lease_generation"], {"from": "old"})
    assert step(db, new["step_id"])["state"] == "running"
    assert complete(db, new["step_id"], "w", new["lease_generation"], {"from": "new"})
    assert run_state(db, run_id) == "completed"


def test_a_duplicate_complete_is_refused_and_advances_the_dag_once(db: Conn) -> None:
    """A client that retries its complete after a lost reply must not reach the
    next node twice (nor reschedule it)."""
    define(db, "chain", [{"name": "a"}, {"name": "b", "deps": ["a"]}])
    run_id = submit(db, "chain")
    c = claim_one(db, "w", "a")
    assert complete(db, c["step_id"], "w", c["lease_generation"], {"n": 1})
    b_before = step_of(db, run_id, "b")
    advance(db, "1 second")
    assert not complete(db, c["step_id"], "w", c["lease_generation"], {"n": 2})
    b_after = step_of(db, run_id, "b")
    assert b_after["state"] == "available"
    assert b_after["scheduled_at"] == b_before["scheduled_at"], "the second complete advanced the DAG again"
    assert step(db, c["step_id"])["output"] == {"n": 1}


# -- 4. a crashed worker's step stranded past lease TTL + one tick -------------


def test_a_crashed_workers_step_is_reclaimed_by_the_first_tick_after_its_lease_ttl(db: Conn) -> None:
    define(db, "one", [{"name": "work"}])
    run_id = submit(db, "one")
    crashed = claim_one(db, "crashed", "work", "2 seconds")  # and never heard from again
    advance(db, "1.5 seconds")
    assert tick(db)["reclaimed"] == 0, "inside the TTL the lease holds"
    advance(db, "0.6 seconds")
    assert tick(db)["reclaimed"] == 1, "the first tick past the TTL reclaims it"
    s = step_of(db, run_id, "work")
    assert (s["state"], s["lease_owner"], s["attempt"], s["reclaims"]) == ("available", None, 1, 1)
    retaken = claim_one(db, "healthy", "work")  # claimable at once: no backoff on a reclaim
    assert (retaken["step_id"], retaken["attempt"]) == (crashed["step_id"], 1)


def test_a_big_crash_is_recovered_in_bounded_ticks(db: Conn) -> None:
    """150 steps stranded at once: each tick reclaims at most 100, so two ticks."""
    define(db, "one", [{"name": "work"}])
    db.execute("SELECT cyclone.submit_many('one', array_fill('{}'::jsonb, ARRAY[150]))")
    assert len(claim(db, "crashed", ["work"], 150, "2 seconds")) == 150
    advance(db, "3 seconds")
    assert tick(db)["reclaimed"] == 100
    assert tick(db)["reclaimed"] == 50
    row = db.execute("SELECT count(*) AS n FROM cyclone.cyclone_steps WHERE state = 'available'").fetchone()
    assert row is not None and row["n"] == 150


@pytest.mark.slow
def test_a_live_worker_reclaims_and_runs_a_stranded_step_on_its_own_tick(dsn: str, db: Conn) -> None:
    """No pg_cron: the surviving worker's poll-interval tick is the recovery."""
    wf = Workflow("stranded")

    @wf.step()
    def work(ctx: StepContext) -> Any:
        return {"attempt": ctx.attempt, "worker": ctx.worker}

    define(db, "stranded", wf.definition()["nodes"])
    run_id = submit(db, "stranded")
    claim_one(db, "crashed", "work", "30 seconds")
    worker = Worker(wf, dsn, lease_ttl=30.0, poll_interval=0.2, name="survivor", shutdown_grace=2.0)
    worker.run_in_thread()
    try:
        time.sleep(0.5)
        assert step_of(db, run_id, "work")["state"] == "running", "reclaimed before its lease ended"
        advance(db, "31 seconds")
        end = time.monotonic() + 10
        while run_state(db, run_id) != "completed" and time.monotonic() < end:
            time.sleep(0.05)
    finally:
        worker.stop(timeout=10)
    s = step_of(db, run_id, "work")
    assert s["state"] == "completed"
    assert s["output"] == {"attempt": 1, "worker": "survivor"}
    assert s["reclaims"] == 1


# -- 5. a poison step that kills its worker forever -----------------------------


def test_a_poison_step_is_discarded_at_the_reclaim_limit_without_charging_attempts(db: Conn) -> None:
    define(db, "poison", [{"name": "work"}], max_attempts=5)
    run_id = submit(db, "poison")
    executions = 0
    last: dict[str, Any] = {}
    for n in range(1, 10):
        rows = claim(db, f"worker-{n}", ["work"], 1, "1 second")
        if not rows:
            break
        executions += 1  # the handler kills its worker: no report, ever
        assert rows[0]["attempt"] == 1
        advance(db, "2 seconds")
        last = tick(db, 3)
    assert executions == 4, "three reclaims, then the fourth expiry discards it"
    assert (last["reclaimed"], last["discarded"]) == (0, 1)
    assert [d["error_kind"] for d in last["discarded_steps"]] == ["reclaim_limit"]
    s = step_of(db, run_id, "work")
    assert (s["state"], s["error_kind"], s["attempt"], s["reclaims"]) == ("discarded", "reclaim_limit", 1, 3)
    row = db.execute("SELECT state, error_kind FROM cyclone.get_run(%s)", (run_id,)).fetchone()
    assert row == {"state": "failed", "error_kind": "reclaim_limit"}
    assert claim(db, "worker-x", ["work"]) == []


def test_without_a_reclaim_limit_a_poison_step_is_reclaimed_indefinitely(db: Conn) -> None:
    """The documented default (max reclaims 0 = unbounded): set a limit in production."""
    define(db, "poison", [{"name": "work"}])
    run_id = submit(db, "poison")
    for n in range(12):
        assert len(claim(db, f"worker-{n}", ["work"], 1, "1 second")) == 1
        advance(db, "2 seconds")
        assert tick(db, 0)["reclaimed"] == 1
    s = step_of(db, run_id, "work")
    assert (s["state"], s["reclaims"], s["attempt"]) == ("available", 12, 1)
