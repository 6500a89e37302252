"""The harness: run_until_idle, advance_time, run_until_complete over the real engine."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from cyclone_py import App, Limit, Permanent, Workflow, errors
from cyclone_py.context import StepContext
from cyclone_py.testing import Env, RunStuck


def _orders() -> App:
    invoice = Workflow("make_invoice")

    @invoice.step()
    def render(ctx: StepContext) -> Any:
        return {"invoice_for": ctx.input["order"]}

    wf = Workflow("orders", max_attempts=3)

    @wf.step()
    def charge(ctx: StepContext) -> Any:
        if ctx.input.get("fail_charge_until", 0) >= ctx.attempt:
            raise RuntimeError("card processor unavailable")
        return {"charged": ctx.input["order"], "attempt": ctx.attempt}

    wf.wait("approval", signal="approved", deps=["charge"], max_wait=timedelta(hours=1))
    wf.child("invoice", invoice, deps=["charge"])

    @wf.step(deps=["charge"], max_attempts=1)
    def loyalty(ctx: StepContext) -> Any:
        if ctx.input.get("no_loyalty"):
            raise Permanent("customer has no loyalty account")
        return 10

    @wf.step(deps=["loyalty"], on_dep_failure="cancel_branch")
    def points_email(ctx: StepContext) -> Any:
        return "sent"

    @wf.step(deps=["approval", "invoice"])
    def ship(ctx: StepContext) -> Any:
        return {"shipped": True, "approved_by": ctx.deps["approval"]["by"], "invoice": ctx.deps["invoice"]}

    return App(wf)


@pytest.fixture
def env(dsn: str) -> Iterator[Env]:
    with Env(dsn, _orders()) as e:
        yield e


def test_deadline_example_from_the_notes(env: Env) -> None:
    run_id = env.submit("orders", {"order": 1}, deadline=timedelta(hours=1))
    env.run_until_idle()  # the run parks on the approval signal
    assert env.get_run(run_id).state == "running"
    assert env.step(run_id, "approval").state == "waiting"
    env.advance_time(timedelta(hours=2))
    run = env.run_until_complete(run_id)
    assert (run.state, run.error_kind, run.error) == ("failed", "deadline", "run deadline exceeded")
    assert env.step(run_id, "approval").error_kind == "deadline"
    assert any(d.error_kind == "deadline" for d in env.discards)
    assert any(isinstance(d, errors.DeadlineExceeded) for d in env.discards)


def test_run_stuck_comes_with_the_harness_and_names_the_signals_and_how_to_send_them(dsn: str) -> None:
    """Issue 36: ``from cyclone_py.testing import RunStuck`` (errors.py's class), and a wait node's
    reason names its signal and the call that sends it, a child run's wait node too."""
    assert RunStuck is errors.RunStuck
    gate = Workflow("gated")
    gate.wait("go", signal="go_ahead")
    parent = Workflow("asks")
    parent.wait("approve", signal="approve")
    parent.child("ask", gate)
    with Env(dsn, App(parent, gate)) as env:
        run_id = env.submit("asks")
        with pytest.raises(RunStuck) as stuck:
            env.run_until_complete(run_id)
        child = env.step(run_id, "ask").child_run_id
    assert "node 'approve' waits for signal 'approve' (env.signal(run, 'approve', ...))" in str(stuck.value)
    assert (f"node 'go' of child run {child} waits for signal 'go_ahead' "
            f"(env.signal('{child}', 'go_ahead', ...))") in str(stuck.value)


def test_signal_and_child_complete_the_run(env: Env) -> None:
    run_id = env.submit("orders", {"order": 7})
    with pytest.raises(RunStuck, match="'approval' waits for signal 'approved'"):
        env.run_until_complete(run_id)
    assert env.signal(run_id, "approved", {"by": "ann"})
    run = env.run_until_complete(run_id)
    assert run.state == "completed"
    assert run.output["ship"] == {
        "shipped": True, "approved_by": "ann", "invoice": {"render": {"invoice_for": 7}},
    }
    assert run.output["points_email"] == "sent"


def test_cancel_branch_contains_a_permanent_failure(env: Env) -> None:
    run_id = env.submit("orders", {"order": 2, "no_loyalty": True})
    env.signal(run_id, "approved", {"by": "bob"})  # an early signal is kept
    run = env.run_until_complete(run_id)
    assert run.state == "completed"
    states = {s.node: (s.state, s.error_kind) for s in env.steps(run_id)}
    assert states["loyalty"] == ("discarded", "permanent")
    assert states["points_email"] == ("cancelled", "cancelled")
    assert [d.node for d in env.discards] == ["loyalty"]


def test_retries_need_time_or_advance(env: Env) -> None:
    run_id = env.submit("orders", {"order": 3, "fail_charge_until": 2})
    env.signal(run_id, "approved", {"by": "cy"})
    with pytest.raises(errors.RunStuck, match="'charge' is scheduled at"):
        env.run_until_complete(run_id)
    run = env.run_until_complete(run_id, advance=True)
    assert run.state == "completed"
    charge = env.step(run_id, "charge")
    assert (charge.attempt, charge.output) == (3, {"charged": 3, "attempt": 3})


def test_exhausted_attempts_fail_the_run_with_the_traceback(dsn: str) -> None:
    with Env(dsn, _orders(), backoff=lambda attempt: timedelta(0)) as env:
        run_id = env.submit("orders", {"order": 4, "fail_charge_until": 99})
        run = env.run_until_complete(run_id)
        assert (run.state, run.error_kind) == ("failed", "error")
        assert run.error is not None
        assert "Traceback" in run.error and "card processor unavailable" in run.error
        assert env.step(run_id, "charge").attempt == 3


def test_paused_run_is_reported_stuck(env: Env) -> None:
    run_id = env.submit("orders", {"order": 5})
    env.client.pause(run_id)
    with pytest.raises(errors.RunStuck, match="paused"):
        env.run_until_complete(run_id)
    env.client.resume(run_id)
    env.signal(run_id, "approved", {"by": "dee"})
    assert env.run_until_complete(run_id).state == "completed"


def test_step_timeout_in_the_harness(dsn: str) -> None:
    wf = Workflow("slow")

    @wf.step(timeout=0.2, max_attempts=1)
    def nap(ctx: StepContext) -> Any:
        ctx.sleep(5)
        return "never"

    with Env(dsn, wf) as env:
        run_id = env.submit(wf)
        run = env.run_until_complete(run_id)
        assert (run.state, run.error_kind) == ("failed", "timeout")


def _limited() -> App:
    mail = Limit("mail", rate=1, per=timedelta(minutes=1))
    one = Limit("one", concurrency=1)
    send = Workflow("send", limits=[mail])

    @send.step()
    def deliver(ctx: StepContext) -> Any:
        return "sent"

    solo = Workflow("solo", limits=[one])

    @solo.step()
    def work(ctx: StepContext) -> Any:
        return "done"

    return App(send, solo)


def test_a_rate_limited_run_needs_time_and_advance_moves_it_to_the_next_slot(dsn: str) -> None:
    with Env(dsn, _limited()) as env:
        first, second = env.submit("send"), env.submit("send")
        assert env.run_until_complete(first).state == "completed"
        with pytest.raises(errors.RunStuck, match="'deliver' waits for limit mail's next slot at"):
            env.run_until_complete(second)
        before = env.client.now()
        assert env.run_until_complete(second, advance=True).state == "completed"
        assert env.client.now() - before >= timedelta(seconds=59)  # moved to the next slot, not past it by much
        assert env.client.now() - before < timedelta(minutes=2)


def test_a_run_held_back_by_a_full_bucket_says_so(dsn: str) -> None:
    with Env(dsn, _limited()) as env:
        other, held = env.submit("solo"), env.submit("solo")
        [taken] = env.client.claim("elsewhere", None, 1)  # another worker holds the one slot
        assert taken.run_id == other
        with pytest.raises(errors.RunStuck, match=r"'work' is held back: bucket '' of limit one is full \(1/1"):
            env.run_until_complete(held)
