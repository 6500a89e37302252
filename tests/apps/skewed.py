"""The skewed-clock test's workflows (tests/test_clock_skew.py), run by workers
whose wall clock libfaketime sets 10 minutes off the database's.

``skewed``, three root nodes:
- ``long`` holds its step for ``CYCLONE_SKEW_LONG`` seconds (three lease
  TTLs): only its heartbeats keep the lease;
- ``timed`` (``timeout`` 1 s, two attempts) waits to be cancelled on its first
  attempt and writes ``timed <seconds waited> <reason>`` to its process's file
  in ``CYCLONE_LEDGER_DIR``; its second attempt returns;
- ``flaky`` (two attempts) fails its first attempt; the app's backoff is
  ``BACKOFF`` seconds.

``held``: one node, ``hold``, which waits ``CYCLONE_SKEW_LONG`` seconds: the
test kills its worker mid-step and watches the other reclaim it.

Every wait is ``ctx.sleep`` or ``ctx.cancelled.wait`` (the monotonic clock),
never ``time.sleep``: libfaketime 0.9.10 hands ``clock_nanosleep`` an absolute
monotonic deadline less the fake offset, which the kernel refuses (EINVAL).
"""

from __future__ import annotations

import os
import time
from typing import Any

from cyclone_py import App, Workflow
from cyclone_py.context import StepContext

LONG = float(os.environ.get("CYCLONE_SKEW_LONG", "4.5"))
BACKOFF = 2.0
TIMEOUT = 1.0

skewed = Workflow("skewed")
held = Workflow("held")


@skewed.step()
def long(ctx: StepContext) -> Any:
    ctx.sleep(LONG)
    return {"held": LONG}


@skewed.step(timeout=TIMEOUT, max_attempts=2)
def timed(ctx: StepContext) -> Any:
    if ctx.attempt > 1:
        return {"attempt": ctx.attempt}
    began = time.monotonic()
    ctx.cancelled.wait(30)
    waited = time.monotonic() - began
    path = os.path.join(os.environ["CYCLONE_LEDGER_DIR"], f"{os.getpid()}.timed")
    with open(path, "a") as fh:
        fh.write(f"timed {waited:.3f} {ctx.cancel_reason}\n")
    raise RuntimeError(f"cancelled after {waited:.3f}s")


@skewed.step(max_attempts=2)
def flaky(ctx: StepContext) -> Any:
    if ctx.attempt == 1:
        raise RuntimeError("the first attempt fails")
    return {"attempt": ctx.attempt}


@held.step()
def hold(ctx: StepContext) -> Any:
    ctx.sleep(LONG)
    return {"held": LONG}


app = App(skewed, held, backoff=lambda attempt: BACKOFF)
