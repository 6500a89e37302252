"""SPEC 16's map nodes in Python: ``@wf.map(over=...)`` with ``ctx.item`` and ``ctx.item_index``, run by the
harness and by a worker; the definition it makes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from click.testing import Result
from helpers import assert_consistent, start, step_of, terminal, wait_for

from cyclone_py import Permanent, Worker, Workflow
from cyclone_py.client import Client
from cyclone_py.context import StepContext
from cyclone_py.testing import Env


def thumbnails(on_item_failure: str = "fail") -> Workflow:
    """list -> resize (a map over the listed images) -> report."""
    wf = Workflow("thumbnails")

    @wf.step()
    def listing(ctx: StepContext) -> Any:
        return {"images": ctx.input["images"]}

    @wf.map(over="deps.listing.images", deps=[listing], on_item_failure=on_item_failure, max_attempts=1)
    def resize(ctx: StepContext) -> Any:
        if ctx.item == "broken.png":
            raise Permanent("cannot decode broken.png")
        return {"index": ctx.item_index, "thumb": "small-" + ctx.item, "size": ctx.input["size"]}

    @wf.step(deps=[resize])
    def report(ctx: StepContext) -> Any:
        return len(ctx.deps["resize"])

    return wf


def test_the_definition_of_a_map_node() -> None:
    nodes = {n["name"]: n for n in thumbnails("collect").definition()["nodes"]}
    assert nodes["resize"] == {"name": "resize", "kind": "map", "handler": "resize", "deps": ["listing"],
                               "over": "deps.listing.images", "on_item_failure": "collect", "max_attempts": 1}


def test_the_harness_runs_a_map(dsn: str) -> None:
    with Env(dsn, thumbnails()) as env:
        run_id = env.submit("thumbnails", {"images": ["a.png", "b.png", "c.png"], "size": 64})
        run = env.run_until_complete(run_id)
        assert run.state == "completed"
        assert run.output == {"report": 3}
        resize = step_of(env.client, run_id, "resize")
        assert resize.output == [{"index": i, "thumb": f"small-{n}", "size": 64}
                                 for i, n in enumerate(["a.png", "b.png", "c.png"])]
        items = [s for s in env.client.steps(run_id) if s.kind == "item"]
        assert [s.item_index for s in items] == [0, 1, 2]
        assert env.client.check_invariants() == []


@pytest.mark.parametrize("policy", ["fail", "collect"])
def test_a_failed_item_as_its_policy_says(dsn: str, policy: str) -> None:
    with Env(dsn, thumbnails(policy)) as env:
        run_id = env.submit("thumbnails", {"images": ["a.png", "broken.png"], "size": 8})
        run = env.run_until_complete(run_id)
        resize = step_of(env.client, run_id, "resize")
        if policy == "fail":
            assert run.state == "failed"
            assert (run.error_kind, resize.error_kind) == ("item_failed", "item_failed")
            assert resize.error is not None and "item 1 failed (permanent)" in resize.error
        else:
            assert run.state == "completed"
            assert resize.output[1] == {"error": "cannot decode broken.png", "error_kind": "permanent"}


def test_a_worker_runs_a_map_of_many_items(dsn: str, client: Client, workers: list[Worker]) -> None:
    wf = thumbnails()
    client.define_workflow(wf.name, wf.definition())
    images = [f"{i}.png" for i in range(200)]
    run_id = client.submit(wf, {"images": images, "size": 1})
    start(workers, wf, dsn, concurrency=8)
    run = wait_for(lambda: terminal(client, run_id), what="the map to finish", timeout=60)
    assert run.state == "completed"
    assert run.output == {"report": 200}
    assert [o["thumb"] for o in step_of(client, run_id, "resize").output] == [f"small-{n}" for n in images]
    assert_consistent(dsn)


def test_cyclone_steps_collapses_a_maps_items(dsn: str, invoke: Callable[..., Result]) -> None:
    with Env(dsn, thumbnails("collect")) as env:
        run_id = env.submit("thumbnails", {"images": ["a.png", "broken.png", "c.png"], "size": 2})
        env.run_until_complete(run_id)
    result = invoke("steps", str(run_id))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    items_row = next(line for line in lines if "resize ×3" in line)
    assert "2 completed, 1 discarded" in items_row
    assert sum(1 for line in lines if line.split()[1:3] == ["resize", "map"]) == 1, "one row for the map itself"
    assert "resize[1]: discarded, permanent" in result.output, "a failed item's error, labelled with its index"


def test_cyclone_run_names_the_items_a_run_waits_on(dsn: str, client: Client, invoke: Callable[..., Result]) -> None:
    client.define_workflow("fan", {"nodes": [{"name": "each", "kind": "map", "over": "input.items"}]})
    run_id = client.submit("fan", {"items": list(range(12))})
    result = invoke("run", str(run_id))
    assert result.exit_code == 0, result.output
    assert "each: waiting for its items: 0 of 12 done" in result.output
    assert "each[0]: claimable" in result.output and "... and " in result.output
