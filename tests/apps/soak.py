"""The chaos soak's app: the fan-out/fan-in of ``apps.chaos`` under three limits,
a parent whose child node runs it, and a schedule.

- ``soak_fan``: ``split`` -> ``leaf_0`` .. ``leaf_{W-1}`` -> ``join``, input
  ``{"n": int, "tenant": str}``; the join returns ``{"sum": W*10*n + W*(W-1)/2,
  "leaves": W}``. Every task node takes ``soak_tenant`` by ``tenant`` (a keyed
  concurrency limit), the leaves take ``soak_leaves`` (one bucket, a
  concurrency limit) and the join takes ``soak_joins`` (one bucket, a rate).
- ``soak_parent``: ``prepare`` -> child node ``sub`` (a run of ``soak_fan``
  with the parent's input) -> ``finish``, which checks what the child run
  returned and returns ``{"sum": ..., "checked": true}``. Its task nodes take
  ``soak_tenant`` too.
- ``soak_slot``: one step ``slot`` that returns the ``scheduled_for`` the
  engine put in its input; the schedule ``soak-minutely`` (every minute, UTC,
  overlap ``allow``) runs it, and the soak backfills it.

Every execution writes its ledger row first (``apps.chaos._record``), so the
soak can count executions. ``W`` is ``CYCLONE_CHAOS_WIDTH`` (default 4).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from apps.chaos import LEAVES, _record, _work
from cyclone_py import App, Limit, Schedule, Workflow
from cyclone_py.context import StepContext

TENANT = Limit("soak_tenant", concurrency=2)
LEAF = Limit("soak_leaves", concurrency=6)
JOIN_RATE = Limit("soak_joins", rate=8, per=timedelta(seconds=1))
TENANTS = 6

fan = Workflow("soak_fan", max_attempts=25, limits=[TENANT.by("tenant")])


def expected_sum(n: int) -> int:
    """What the join of a ``soak_fan`` run with input ``n`` adds up."""
    return len(LEAVES) * 10 * n + len(LEAVES) * (len(LEAVES) - 1) // 2


@fan.step()
def split(ctx: StepContext) -> Any:
    _record(ctx)
    _work()
    return {"n": int(ctx.input["n"])}


def leaf(ctx: StepContext) -> Any:
    _record(ctx)
    _work()
    i = int(ctx.node.removeprefix("leaf_"))
    return {"value": ctx.deps["split"]["n"] * 10 + i}


for _name in LEAVES:
    fan.step(name=_name, handler="leaf", deps=["split"], limits=[LEAF])(leaf)


@fan.step(deps=LEAVES, limits=[JOIN_RATE])
def join(ctx: StepContext) -> Any:
    _record(ctx)
    _work()
    missing = [n for n in LEAVES if n not in ctx.deps]
    if missing:
        raise RuntimeError(f"join reached without {missing}")
    return {"sum": sum(ctx.deps[n]["value"] for n in LEAVES), "leaves": len(LEAVES)}


parent = Workflow("soak_parent", max_attempts=25, limits=[TENANT.by("tenant")])


@parent.step()
def prepare(ctx: StepContext) -> Any:
    _record(ctx)
    return {"n": int(ctx.input["n"])}


parent.child("sub", fan, deps=["prepare"])


@parent.step(deps=["sub"])
def finish(ctx: StepContext) -> Any:
    _record(ctx)
    n = int(ctx.input["n"])
    got = ctx.deps["sub"]
    want = {"join": {"sum": expected_sum(n), "leaves": len(LEAVES)}}
    if got != want:
        raise RuntimeError(f"child run of n={n} returned {got!r}, not {want!r}")
    return {"sum": got["join"]["sum"], "checked": True}


slot = Workflow("soak_slot", max_attempts=25)


@slot.step(name="slot")
def fire(ctx: StepContext) -> Any:
    _record(ctx)
    return {"scheduled_for": ctx.input["scheduled_for"]}


MINUTELY = Schedule("soak-minutely", "* * * * *", slot, input={"kind": "minutely"}, overlap="allow")

app = App(fan, parent, slot, schedules=[MINUTELY])
