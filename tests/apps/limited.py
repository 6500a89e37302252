"""An app whose one step takes a per-tenant limit, for the worker-process limit test.

Every execution appends ``<tenant> <start> <end>`` (``time.time()``, taken
inside the handler) to ``$CYCLONE_TEST_DIR/spans``; the handler sleeps
``input.seconds`` (default 0.2) in between. ``CYCLONE_TEST_PER_TENANT`` sets the
limit's concurrency (default 2).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from cyclone_py import App, Limit, Workflow
from cyclone_py.context import StepContext

per_tenant = Limit("per_tenant", concurrency=int(os.environ.get("CYCLONE_TEST_PER_TENANT", "2")))

charge = Workflow("charge", limits=[per_tenant.by("tenant.id")])


@charge.step()
def call_api(ctx: StepContext) -> Any:
    start = time.time()
    time.sleep(float(ctx.input.get("seconds", 0.2)))
    end = time.time()
    with open(Path(os.environ["CYCLONE_TEST_DIR"], "spans"), "a") as f:
        f.write(f"{ctx.input['tenant']['id']} {start!r} {end!r}\n")
    return {"tenant": ctx.input["tenant"]["id"]}


app = App(charge)
