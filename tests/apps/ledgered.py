"""A two-step workflow whose executions are counted without the database.

``ledgered``: ``first`` -> ``second``. Each execution appends one line,
``step_id lease_generation node``, to its process's file in
``CYCLONE_LEDGER_DIR`` (``<pid>.log``) before it does anything else, so a
test can count the executions even while the worker has no connection (the
exhausted-connections test), then waits ``CYCLONE_LEDGER_STEP_SECONDS``
(default 0.05) on ``ctx.sleep`` (cancellable, and a wait on the monotonic
clock: the skewed-clock test runs this app under libfaketime) and returns
``{"n": input n}``; ``second`` returns ``first``'s n plus one.
"""

from __future__ import annotations

import os
from typing import Any

from cyclone_py import App, Workflow
from cyclone_py.context import StepContext

ledgered = Workflow("ledgered", max_attempts=25)
STEP_SECONDS = float(os.environ.get("CYCLONE_LEDGER_STEP_SECONDS", "0.05"))


def _record(ctx: StepContext) -> None:
    path = os.path.join(os.environ["CYCLONE_LEDGER_DIR"], f"{os.getpid()}.log")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{ctx.step_id} {ctx.lease_generation} {ctx.node}\n".encode())  # one write: one whole line
    finally:
        os.close(fd)


@ledgered.step()
def first(ctx: StepContext) -> Any:
    _record(ctx)
    ctx.sleep(STEP_SECONDS)
    return {"n": int(ctx.input["n"])}


@ledgered.step(deps=["first"])
def second(ctx: StepContext) -> Any:
    _record(ctx)
    ctx.sleep(STEP_SECONDS)
    return {"n": int(ctx.deps["first"]["n"]) + 1}


app = App(ledgered)


def ledger(folder: str | os.PathLike[str]) -> list[tuple[int, int, str]]:
    """Every execution recorded in ``folder``: (step_id, lease_generation, node)."""
    rows = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".log"):
            with open(os.path.join(folder, name)) as fh:
                for line in fh:
                    step_id, generation, node = line.split()
                    rows.append((int(step_id), int(generation), node))
    return rows
