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

Every execution writes its ledger row first (``apps.chaos._record``; the fan's
handlers are the chaos app's own), so the
soak can count executions. ``W`` is ``CYCLONE_CHAOS_WIDTH`` (default 4).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from apps.chaos import LEAVES, _record, join, leaf, split
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


# The handlers are the chaos app's (each writes its ledger row first).
fan.step()(split)
for _name in LEAVES:
    fan.step(name=_name, handler="leaf", deps=["split"], limits=[LEAF])(leaf)
fan.step(deps=LEAVES, limits=[JOIN_RATE])(join)


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
