"""The chaos soak's app (``apps.soak``) and a workflow of everything SPEC 16
and 17 added, for the soak to break.

``soak_flow``, input ``{"n": int, "go": bool, "other": <run id>}``:

- ``plan`` (task) returns ``{"items": [0, 1, 2], "n": n}``;
- ``each`` (map over ``deps.plan.items``): one item step per element, each
  returning ``{"double": 2 * item + n}``; item 0 fails its first attempt, so
  every map has an item that fails and is retried;
- ``fast`` (``when`` the input's ``go`` is true) and ``slow`` (``unless`` it
  is): one of the two is skipped in every run;
- ``nap`` (sleep, 1 s after ``plan``), woken by the workers' ticks;
- ``paid`` (event, a root), key ``soak-paid:{input.n}``: the soak emits that
  event, payload ``{"n": n}``, after the submit;
- ``other`` (await, a root) on the run whose id is ``input.other`` (a
  ``soak_fan`` run of ``n - 1``): its output is that run's;
- ``finish`` (task, ``on_dep_skipped: run``) checks what every node gave it
  and returns ``{"n", "items", "path", "problems"}``: ``problems`` is empty
  when everything arrived as this docstring says.

Every task and item execution writes its ledger row first
(``apps.chaos._record``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from apps.chaos import LEAVES, _record
from apps.soak import MINUTELY, expected_sum, fan, parent, slot
from cyclone_py import App, Workflow
from cyclone_py.context import StepContext

ITEMS = 3

flow = Workflow("soak_flow", max_attempts=25)


def flow_output(n: int, go: bool) -> dict[str, Any]:
    """What a ``soak_flow`` run of input ``n``, ``go`` returns."""
    return {"finish": {"n": n, "items": [2 * i + n for i in range(ITEMS)], "path": "fast" if go else "slow",
                       "problems": []}}


@flow.step()
def plan(ctx: StepContext) -> Any:
    _record(ctx)
    return {"items": list(range(ITEMS)), "n": int(ctx.input["n"])}


@flow.map(over="deps.plan.items", deps=["plan"])
def each(ctx: StepContext) -> Any:
    _record(ctx)
    if ctx.item_index == 0 and ctx.attempt == 1:
        raise RuntimeError("item 0 fails its first attempt")
    return {"double": 2 * int(ctx.item) + int(ctx.deps["plan"]["n"])}


@flow.step(deps=["plan"], when={"input": {"go": True}})
def fast(ctx: StepContext) -> Any:
    _record(ctx)
    return {"path": "fast"}


@flow.step(deps=["plan"], unless={"input": {"go": True}})
def slow(ctx: StepContext) -> Any:
    _record(ctx)
    return {"path": "slow"}


flow.sleep("nap", duration=timedelta(seconds=1), deps=["plan"])
flow.event("paid", key="soak-paid:{input.n}")
flow.await_run("other", run="input.other")


@flow.step(deps=["each", "fast", "slow", "nap", "paid", "other"], on_dep_skipped="run")
def finish(ctx: StepContext) -> Any:
    _record(ctx)
    n, go, deps = int(ctx.input["n"]), bool(ctx.input["go"]), ctx.deps
    problems = []
    paths = [name for name in ("fast", "slow") if name in deps]
    if paths != ["fast" if go else "slow"] or deps[paths[0]] != {"path": paths[0]}:
        problems.append(f"conditions: go={go} ran {paths}")
    if not isinstance(deps.get("nap"), dict) or "woke_at" not in deps["nap"]:
        problems.append(f"nap gave {deps.get('nap')!r}")
    if deps.get("paid") != {"n": n}:
        problems.append(f"paid gave {deps.get('paid')!r}")
    want_other = {"join": {"sum": expected_sum(n - 1), "leaves": len(LEAVES)}}
    if deps.get("other") != want_other:
        problems.append(f"other gave {deps.get('other')!r}, not {want_other!r}")
    items = [e.get("double") if isinstance(e, dict) else e for e in deps.get("each", [])]
    if items != [2 * i + n for i in range(ITEMS)]:
        problems.append(f"each gave {deps.get('each')!r}")
    return {"n": n, "items": items, "path": paths[0] if paths else None, "problems": problems}


app = App(fan, parent, slot, flow, schedules=[MINUTELY])
