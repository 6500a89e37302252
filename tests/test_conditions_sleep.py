"""SPEC 16 in Python: conditions (``when=``, ``unless=``, ``on_dep_skipped=``) and sleep nodes
(``wf.sleep``), declared on a Workflow and run by the harness (sleeps by ``advance_time``) and a worker."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from helpers import start, step_of, terminal, wait_for

from cyclone_py import Worker, Workflow, errors
from cyclone_py.client import Client
from cyclone_py.context import StepContext
from cyclone_py.testing import Env


def approvals() -> Workflow:
    """check -> (ship when ok | alert unless ok) -> cool_off (sleep 1 day, after ship) -> done (runs after
    either branch)."""
    wf = Workflow("approvals")

    @wf.step()
    def check(ctx: StepContext) -> Any:
        return {"ok": ctx.input["amount"] < 100}

    @wf.step(deps=[check], when={"deps": {"check": {"ok": True}}})
    def ship(ctx: StepContext) -> Any:
        return "shipped"

    @wf.step(deps=[check], unless={"deps": {"check": {"ok": True}}})
    def alert(ctx: StepContext) -> Any:
        return "alerted"

    wf.sleep("cool_off", duration=timedelta(days=1), deps=["ship"])

    @wf.step(deps=["cool_off", alert], on_dep_skipped="run")
    def done(ctx: StepContext) -> Any:
        return sorted(ctx.deps)

    return wf


def test_the_definition_carries_conditions_and_sleeps() -> None:
    nodes = {n["name"]: n for n in approvals().definition()["nodes"]}
    assert nodes["ship"]["when"] == {"deps": {"check": {"ok": True}}}
    assert nodes["alert"]["unless"] == {"deps": {"check": {"ok": True}}}
    assert nodes["cool_off"] == {"name": "cool_off", "kind": "sleep", "deps": ["ship"], "duration": "1 day"}
    assert nodes["done"]["on_dep_skipped"] == "run"
    assert "when" not in nodes["check"] and "on_dep_skipped" not in nodes["check"]


def test_a_sleep_needs_exactly_one_of_duration_and_until() -> None:
    wf = Workflow("w")
    with pytest.raises(ValueError, match="exactly one of duration and until"):
        wf.sleep("z")
    with pytest.raises(ValueError, match="exactly one of duration and until"):
        wf.sleep("z", duration=5, until="input.at")


def test_the_harness_runs_conditions_and_sleeps_by_moving_time(dsn: str) -> None:
    with Env(dsn, approvals()) as env:
        cheap = env.submit("approvals", {"amount": 5})
        with pytest.raises(errors.RunStuck, match="sleeps until"):
            env.run_until_complete(cheap)
        run = env.run_until_complete(cheap, advance=True)
        assert run.state == "completed"
        states = {s.node: s.state for s in env.client.steps(cheap)}
        assert states == {"check": "completed", "ship": "completed", "alert": "skipped",
                          "cool_off": "completed", "done": "completed"}
        # done ran after the skipped alert: only cool_off is in its deps.
        assert run.output == {"done": ["cool_off"]}
        assert step_of(env.client, cheap, "cool_off").output.keys() == {"woke_at"}

        dear = env.submit("approvals", {"amount": 500})
        run = env.run_until_complete(dear)
        states = {s.node: s.state for s in env.client.steps(dear)}
        assert states == {"check": "completed", "ship": "skipped", "alert": "completed",
                          "cool_off": "skipped", "done": "completed"}
        assert run.output == {"done": ["alert"]}
        assert env.client.check_invariants() == []


def test_a_worker_and_tick_run_a_sleep(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = Workflow("nap")

    @wf.step()
    def first(ctx: StepContext) -> Any:
        return 1

    wf.sleep("pause", duration=timedelta(milliseconds=300), deps=[first])

    @wf.step(deps=["pause"])
    def second(ctx: StepContext) -> Any:
        return 2

    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf)
    start(workers, wf, dsn, poll_interval=0.1)
    run = wait_for(lambda: terminal(client, run_id), what="the run with a sleep to finish")
    assert run.state == "completed"
    assert run.output == {"second": 2}
    assert step_of(client, run_id, "pause").state == "completed"


def test_tick_counts_what_slept(dsn: str, client: Client) -> None:
    wf = Workflow("dozer")
    wf.sleep("z", duration=60)
    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf)
    assert client.explain_step(step_of(client, run_id, "z").id).reason == "sleeping"
    client.advance_time(timedelta(seconds=60))
    assert client.tick().slept == 1
    assert client.get_run(run_id).state == "completed"
