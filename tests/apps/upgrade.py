"""The upgrade-under-load test's app and its submitter (tests/test_upgrade_under_load.py).

Both run on the *previous* release's ``cyclone_py`` as well as on this one's,
so they use only what every release since 0.21.0 has: ``App``, ``Workflow``,
``step(name=, handler=, deps=)``, ``StepContext``'s ids and ``Client.submit``
with an idempotency key.

``upgrade_fan``: ``split`` -> ``leaf_0``, ``leaf_1`` (handler ``leaf``) ->
``join``. Each handler first writes one row to ``public.upgrade_ledger`` in the
test's database (``CYCLONE_UPGRADE_DSN``): this lease generation of this step
started executing, in this process. Input ``{"n": int}``; the run's output is
``{"join": {"sum": 20n + 1}}``.

``python -m apps.upgrade DSN OUT STOP RATE`` submits runs of ``upgrade_fan``
at RATE a second, each with the idempotency key ``up-<i>``, retrying a submit
that fails until it is acknowledged, until the file STOP exists. It appends
``key run_id seconds`` to OUT for every acknowledged submit (the seconds the
call took, retries included) and one ``! key error`` line for every failed
attempt.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

from cyclone_py import App, Client, Workflow
from cyclone_py.context import StepContext

LEAVES = ["leaf_0", "leaf_1"]

LEDGER_TABLE = """
CREATE TABLE public.upgrade_ledger (
    id bigserial PRIMARY KEY, step_id bigint NOT NULL, run_id uuid NOT NULL, node text NOT NULL,
    attempt int NOT NULL, lease_generation bigint NOT NULL, pid int NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp());
"""

upgrade = Workflow("upgrade_fan", max_attempts=10)
_local = threading.local()


def _record(ctx: StepContext) -> None:
    """One ledger row per execution, on this handler thread's own connection."""
    conn = getattr(_local, "conn", None)
    if conn is None or conn.closed:
        conn = psycopg.connect(os.environ["CYCLONE_UPGRADE_DSN"], autocommit=True, connect_timeout=5,
                               application_name="upgrade-ledger")
        _local.conn = conn
    try:
        conn.execute("INSERT INTO public.upgrade_ledger (step_id, run_id, node, attempt, lease_generation, pid)"
                     " VALUES (%s, %s, %s, %s, %s, %s)",
                     (ctx.step_id, ctx.run_id, ctx.node, ctx.attempt, ctx.lease_generation, os.getpid()))
    except psycopg.Error:
        _local.conn = None
        conn.close()
        raise


@upgrade.step()
def split(ctx: StepContext) -> Any:
    _record(ctx)
    time.sleep(random.uniform(0.005, 0.03))
    return {"n": int(ctx.input["n"])}


def leaf(ctx: StepContext) -> Any:
    _record(ctx)
    time.sleep(random.uniform(0.005, 0.03))
    return {"value": ctx.deps["split"]["n"] * 10 + int(ctx.node.removeprefix("leaf_"))}


for _name in LEAVES:
    upgrade.step(name=_name, handler="leaf", deps=["split"])(leaf)


@upgrade.step(deps=LEAVES)
def join(ctx: StepContext) -> Any:
    _record(ctx)
    return {"sum": sum(ctx.deps[n]["value"] for n in LEAVES)}


app = App(upgrade)


def expected_sum(n: int) -> int:
    return 20 * n + 1


def submit_load(dsn: str, out: Path, stop: Path, rate: float) -> None:
    """Submit at ``rate`` a second until ``stop`` exists; every submit retried until acknowledged."""
    with Client(dsn) as client, out.open("a", buffering=1) as log:
        i = 0
        start = time.monotonic()
        while not stop.exists():
            key = f"up-{i}"
            began = time.monotonic()
            while True:
                try:
                    run_id = client.submit("upgrade_fan", {"n": i}, idempotency_key=key)
                    break
                except Exception as exc:  # noqa: BLE001 - every failure is recorded, then retried
                    log.write(f"! {key} {' '.join(str(exc).split())[:300]}\n")
                    time.sleep(0.05)
            log.write(f"{key} {run_id} {time.monotonic() - began:.4f}\n")
            i += 1
            time.sleep(max(0.0, start + i / rate - time.monotonic()))


if __name__ == "__main__":
    submit_load(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4]))
