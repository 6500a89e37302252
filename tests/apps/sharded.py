"""The app of the sharded tests (tests/test_shards.py): a DAG with a child run
(split -> left, right, kid -> join), a wait for a signal, and a step that
fails for good on its first attempt."""

from __future__ import annotations

from typing import Any

from cyclone_py import App, Permanent, Workflow
from cyclone_py.context import StepContext

leaf = Workflow("shard_leaf")


@leaf.step()
def double(ctx: StepContext) -> Any:
    return {"n2": ctx.input["n"] * 2}


dag = Workflow("shard_dag")


@dag.step()
def split(ctx: StepContext) -> Any:
    return {"n": ctx.input["n"]}


@dag.step(deps=[split])
def left(ctx: StepContext) -> Any:
    return {"v": ctx.deps["split"]["n"] + 1}


@dag.step(deps=[split])
def right(ctx: StepContext) -> Any:
    return {"v": ctx.deps["split"]["n"] + 2}


dag.child("kid", leaf, deps=[split])


@dag.step(deps=[left, right, "kid"])
def join(ctx: StepContext) -> Any:
    return {"sum": ctx.deps["left"]["v"] + ctx.deps["right"]["v"] + ctx.deps["kid"]["double"]["n2"]}


gated = Workflow("shard_gated")
gated.wait("go", signal="go")


@gated.step(deps=["go"])
def after(ctx: StepContext) -> Any:
    return {"got": ctx.deps["go"]}


broken = Workflow("shard_broken", max_attempts=1)


@broken.step()
def boom(ctx: StepContext) -> Any:
    if ctx.attempt == 1:
        raise Permanent("boom")
    return {"ok": True}


app = App(dag, leaf, gated, broken)


def expected_sum(n: int) -> int:
    return (n + 1) + (n + 2) + 2 * n
