"""The workflows the benchmark drains (``--app bench.apps:app``).

The handlers do no work, so what is measured is the engine and the runtime.
``work`` is the one no-op payload function: the Cyclone handlers and the raw
SKIP LOCKED baseline (bench/raw_queue.py) both call it, so both sides move the
same bytes.
"""

from __future__ import annotations

import time
from typing import Any

from cyclone_py import App, Workflow
from cyclone_py.workflow import StepContext

FANOUT = 8


def work(payload: Any) -> dict[str, Any]:
    """The no-op job: echo the job number."""
    return {"n": (payload or {}).get("n")}


# -- drain: one step per run --------------------------------------------------

noop = Workflow("bench_noop")


@noop.step(name="noop")
def _noop(ctx: StepContext) -> Any:
    return work(ctx.input)


# -- drain, async: one step per run, an ``async def`` handler ------------------

anoop = Workflow("bench_anoop")


@anoop.step(name="noop", handler="anoop")
async def _anoop(ctx: StepContext) -> Any:
    return work(ctx.input)


# -- dag: 1 -> 8 -> 1 fan-out / fan-in -----------------------------------------

dag = Workflow("bench_dag")


@dag.step(name="root", handler="dag_work")
def _dag_work(ctx: StepContext) -> Any:
    return work(ctx.input)


for _i in range(1, FANOUT + 1):
    dag.step(name=f"fan{_i}", handler="dag_work", deps=["root"])(_dag_work)

dag.step(name="join", handler="dag_work", deps=[f"fan{i}" for i in range(1, FANOUT + 1)])(_dag_work)


# -- latency: the handler records when it started -------------------------------

latency = Workflow("bench_latency")


@latency.step(name="stamp")
def _stamp(ctx: StepContext) -> Any:
    return {"t": time.time(), "i": (ctx.input or {}).get("i")}


app = App(noop, anoop, dag, latency)
