"""The chaos soak's workflow: fan-out/fan-in, every execution in a ledger.

``chaos_fan``: ``split`` -> ``leaf_0`` .. ``leaf_{W-1}`` (handler ``leaf``) ->
``join``. Each handler first writes one row to ``public.chaos_ledger`` in the
test database (``CYCLONE_CHAOS_DSN``): the app's own table, recording that this
lease generation of this step started executing in this process. Then it
sleeps a little, so that a SIGKILL often lands mid-step, and returns a value the
join adds up, so the soak can check the data that flowed through the DAG.

``W`` is ``CYCLONE_CHAOS_WIDTH`` (default 4); input ``{"n": int}``; the join
returns ``{"sum": W*10*n + W*(W-1)/2, "leaves": W}``.
"""

from __future__ import annotations

import os
import random
import threading
import time
from typing import Any

import psycopg

from cyclone_py import App, Workflow
from cyclone_py.context import StepContext

WIDTH = int(os.environ.get("CYCLONE_CHAOS_WIDTH", "4"))
LEAVES = [f"leaf_{i}" for i in range(WIDTH)]

#: The app's ledger table: each test that runs the app creates it in its database.
LEDGER_TABLE = """
CREATE TABLE public.chaos_ledger (
    id bigserial PRIMARY KEY, step_id bigint NOT NULL, run_id uuid NOT NULL, node text NOT NULL,
    attempt int NOT NULL, lease_generation bigint NOT NULL, worker text, pid int,
    at timestamptz NOT NULL DEFAULT clock_timestamp());
"""

chaos = Workflow("chaos_fan", max_attempts=25)
_local = threading.local()


def _record(ctx: StepContext) -> None:
    """One ledger row per execution, on this handler thread's own connection
    (reopened after a failure; a failure fails the attempt, which is retried)."""
    conn = getattr(_local, "conn", None)
    if conn is None or conn.closed:
        conn = psycopg.connect(os.environ["CYCLONE_CHAOS_DSN"], autocommit=True, connect_timeout=5,
                               application_name="chaos-ledger")
        _local.conn = conn
    try:
        conn.execute(
            "INSERT INTO public.chaos_ledger (step_id, run_id, node, attempt, lease_generation, worker, pid)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (ctx.step_id, ctx.run_id, ctx.node, ctx.attempt, ctx.lease_generation, ctx.worker, os.getpid()),
        )
    except psycopg.Error:
        _local.conn = None
        conn.close()
        raise


def _work() -> None:
    time.sleep(random.uniform(0.02, 0.15))


@chaos.step()
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
    chaos.step(name=_name, handler="leaf", deps=["split"])(leaf)


@chaos.step(deps=LEAVES)
def join(ctx: StepContext) -> Any:
    _record(ctx)
    _work()
    missing = [n for n in LEAVES if n not in ctx.deps]
    if missing:
        raise RuntimeError(f"join reached without {missing}")
    return {"sum": sum(ctx.deps[n]["value"] for n in LEAVES), "leaves": len(LEAVES)}


app = App(chaos)
