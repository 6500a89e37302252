"""The soak's judges can convict: each check of ``soak_checks`` is given a
planted violation (observer rows written by hand over real steps of a real,
idle database, no worker) and must report it, and must not report the
legal cases next to it."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any

from apps.soak import JOIN_RATE, LEAF, TENANT, app
from chaos import soak_checks
from chaos.soak_checks import OBSERVER, StepAudit, query

from cyclone_py.client import Client

T0 = datetime.fromisoformat("2026-01-01T00:00:00+00:00")


def _ms(n: float) -> datetime:
    return T0 + timedelta(milliseconds=n)


def _setup(dsn: str, runs: int) -> dict[str, list[int]]:
    """The app registered, ``runs`` soak_fan runs of tenant t0 submitted; the
    ids of their steps by node."""
    query(dsn, OBSERVER)
    with Client(dsn, min_size=1, max_size=1) as c:
        for lim in app.limits:
            c.define_limit(**lim.arguments())
        for name, definition in app.definitions():
            c.define_workflow(name, definition)
        for i in range(runs):
            c.submit("soak_fan", {"n": i, "tenant": "t0"})
    steps: dict[str, list[int]] = {}
    for r in query(dsn, "SELECT id, node FROM cyclone.cyclone_steps ORDER BY id"):
        steps.setdefault(r["node"], []).append(r["id"])
    return steps


def _plant(dsn: str, rows: list[tuple[int, str, str, datetime]]) -> None:
    """Observer rows ``(step, old state, new state, at)``; engine_at = at."""
    for step_id, old, new, at in rows:
        query(dsn, "INSERT INTO public.chaos_transitions (step_id, old_state, new_state, at, engine_at)"
                   " VALUES (%s, %s, %s, %s, %s)", (step_id, old, new, at, at))


def _peak(peaks: list[dict[str, Any]], limit: str, bucket: str) -> int:
    return int(next(p["peak"] for p in peaks if p["limit"] == limit and p["bucket"] == bucket))


def test_three_steps_running_at_once_in_a_bucket_of_two_are_reported_and_a_handover_at_one_instant_is_not(
    dsn: str,
) -> None:
    steps = _setup(dsn, 1)
    a, b, c, d = (steps[f"leaf_{i}"][0] for i in range(4))
    _plant(dsn, [
        (a, "available", "running", _ms(0)), (b, "available", "running", _ms(1)),
        (c, "available", "running", _ms(2)),
        (a, "running", "completed", _ms(10)), (b, "running", "available", _ms(10)),
        (c, "running", "completed", _ms(10)),
        (d, "available", "running", _ms(10)),  # at the instant three slots came back
        (d, "running", "completed", _ms(20)),
    ])
    peaks = soak_checks.concurrency_peaks(dsn)
    assert _peak(peaks, TENANT.name, "t0") == 3 > TENANT.concurrency  # type: ignore[operator]
    assert _peak(peaks, LEAF.name, "") == 3


def test_a_step_still_running_holds_its_slot_to_the_end(dsn: str) -> None:
    steps = _setup(dsn, 1)
    a, b, c = (steps[f"leaf_{i}"][0] for i in range(3))
    _plant(dsn, [(a, "available", "running", _ms(0)),  # never leaves running
                 (b, "available", "running", _ms(100)), (b, "running", "completed", _ms(110)),
                 (c, "available", "running", _ms(200)), (c, "running", "completed", _ms(210))])
    assert _peak(soak_checks.concurrency_peaks(dsn), TENANT.name, "t0") == 2


def test_nine_claims_within_a_second_at_a_rate_of_eight_are_reported(dsn: str) -> None:
    joins = _setup(dsn, 9)["join"]
    _plant(dsn, [(j, "available", "running", _ms(100 * i)) for i, j in enumerate(joins)])
    (rate,) = soak_checks.rate_peaks(dsn)
    assert (rate["limit"], rate["rate"], rate["claims"]) == (JOIN_RATE.name, 8, 9)
    assert rate["peak"] == 9


def test_a_claim_exactly_one_period_after_another_is_in_the_next_window() -> None:
    second = timedelta(seconds=1)
    assert soak_checks.peak_in_window([_ms(0), _ms(1000), _ms(2000)], second) == 1
    assert soak_checks.peak_in_window([_ms(0), _ms(999), _ms(1000)], second) == 2
    assert soak_checks.peak_in_window([_ms(0), _ms(0), _ms(0), _ms(5000)], second) == 3
    assert soak_checks.peak_in_window([], second) == 0


def test_a_step_completed_twice_is_reported_from_the_observer_rows(dsn: str) -> None:
    split = _setup(dsn, 1)["split"][0]
    query(dsn, "UPDATE cyclone.cyclone_steps SET state = 'completed', output = '{}', finished_at = now(),"
               " attempt = 1, lease_generation = 1 WHERE id = %s", (split,))  # the observer records it
    query(dsn, "INSERT INTO public.chaos_ledger (step_id, run_id, node, attempt, lease_generation)"
               " SELECT id, run_id, node, 1, 1 FROM cyclone.cyclone_steps WHERE id = %s", (split,))
    (audit,) = [a for a in soak_checks.step_audit(dsn) if a.id == split]
    assert soak_checks.step_problems(audit) == ["completed from available, not running",
                                                "claims 0, generation 1, 1 + 0 + 0"]
    _plant(dsn, [(split, "running", "completed", _ms(0))])
    (audit,) = [a for a in soak_checks.step_audit(dsn) if a.id == split]
    assert "completed 2 times" in soak_checks.step_problems(audit)


GOOD = StepAudit(
    id=1, run_id=None, node="leaf_0", kind="task", state="completed", attempt=2, reclaims=1, lease_generation=3,
    leased=False, has_output=True, child_run_id=None, completions=1, completed_from="running",
    completed_generation=3, left_completed=0, claims=3, reclaimed=1, failed=1, executions=3,
    executed_generations=3, accepted_executed=True,
)


def test_a_good_step_has_no_problem_and_each_kind_of_bad_one_is_named() -> None:
    assert soak_checks.step_problems(GOOD) == []
    bad: dict[str, tuple[Any, str]] = {
        "state": ("running", "is running"),
        "leased": (True, "still holds a lease"),
        "completions": (2, "completed 2 times"),
        "left_completed": (1, "left completed 1 times"),
        "completed_generation": (2, "completed under generation 2, not its last, 3"),
        "reclaimed": (0, "0 reclaims observed, 1 counted"),
        "executions": (0, "completed without ever executing"),
        "executed_generations": (2, "a lease generation executed twice (3 executions, 2 generations)"),
        "accepted_executed": (False, "the accepted execution is not in the ledger"),
    }
    for name, (value, problem) in bad.items():
        assert problem in soak_checks.step_problems(dataclasses.replace(GOOD, **{name: value})), name
    four = dataclasses.replace(GOOD, executions=4, executed_generations=4)
    assert "4 executions, only 1 reclaims + 1 failed attempts" in soak_checks.step_problems(four)
    child = dataclasses.replace(GOOD, kind="child", completed_from="waiting", claims=0, executions=0,
                                child_run_id="c")
    assert soak_checks.step_problems(child) == []
    assert soak_checks.step_problems(dataclasses.replace(child, claims=1)) == [
        "a child node was claimed 1 times and executed 0 times"]


def test_a_skipped_step_a_rerun_s_kept_step_and_a_waiting_node_are_judged_by_their_own_rules() -> None:
    never = dataclasses.replace(GOOD, attempt=1, reclaims=0, lease_generation=0, completions=0, completed_from=None,
                                completed_generation=None, claims=0, reclaimed=0, failed=0, executions=0,
                                executed_generations=0, accepted_executed=False)
    skipped = dataclasses.replace(never, state="skipped", has_output=False)
    assert soak_checks.step_problems(skipped) == []
    assert soak_checks.step_problems(dataclasses.replace(skipped, executions=1)) == [
        "skipped, yet claimed 0, executed 1, completed 0 times, output False, leased False"]
    kept = dataclasses.replace(never, state="completed")
    assert soak_checks.step_problems(kept, kept=True) == []
    assert "completed 0 times" in soak_checks.step_problems(kept)
    assert soak_checks.step_problems(dataclasses.replace(kept, claims=1), kept=True) == [
        "a kept step was claimed 1, executed 0, completed 0 times"]
    for kind in ("map", "sleep", "event", "await"):
        node = dataclasses.replace(never, kind=kind, completions=1, completed_from="waiting")
        assert soak_checks.step_problems(node) == [], kind
        assert soak_checks.step_problems(dataclasses.replace(node, completed_from="running")) == [
            "completed from running, not waiting"], kind
        assert soak_checks.step_problems(dataclasses.replace(node, completions=2)) == ["completed 2 times"], kind


def test_a_run_of_one_step_that_complete_many_ends_straight_into_history_is_one_completion(dsn: str) -> None:
    """complete_many moves a run of one step and its step to the day tables
    (docs/history.md) with no UPDATE for the observer's trigger: its DELETE
    from the live table, recorded as a move from running, is the completion."""
    query(dsn, OBSERVER)
    with Client(dsn, min_size=1, max_size=1) as c:
        c.define_workflow("soak_slot", dict(app.definitions())["soak_slot"])
    query(dsn, "SELECT cyclone.tick(0)")  # today's day tables, which the move needs
    # A batch of 64: complete_many ends runs of one step straight into history from that size on.
    query(dsn, "SELECT cyclone.submit('soak_slot', jsonb_build_object('scheduled_for', n::text))"
               " FROM generate_series(1, 64) n")
    leases = query(dsn, "SELECT step_id, lease_generation FROM cyclone.claim('w', NULL, 64, '1 minute',"
                        " ARRAY['soak_slot'])")
    assert len(leases) == 64
    query(dsn, "INSERT INTO public.chaos_ledger (step_id, run_id, node, attempt, lease_generation)"
               " SELECT id, run_id, node, 1, lease_generation FROM cyclone.cyclone_steps WHERE id = ANY (%s)",
          ([lease["step_id"] for lease in leases],))
    query(dsn, "SELECT count(*) FROM cyclone.complete_many('w', %s::bigint[], %s::bigint[],"
               " array_fill('{}'::jsonb, ARRAY[64]))",
          ([lease["step_id"] for lease in leases], [lease["lease_generation"] for lease in leases]))
    assert query(dsn, "SELECT count(*) AS n FROM ONLY cyclone.cyclone_steps") == [{"n": 0}], "they did not move"
    audits = soak_checks.step_audit(dsn)
    assert len(audits) == 64
    for audit in audits:
        assert (audit.state, audit.completions, audit.completed_from) == ("completed", 1, "running")
        assert soak_checks.step_problems(audit) == []
