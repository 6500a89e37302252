"""A two-step workflow for the metrics and log-format tests.

``a`` fails its first attempt when ``input.fail_once`` is true, then echoes
``input.secret`` (so a test can check that no payload reaches the logs);
``b`` follows ``a``. The app retries at once (``backoff`` 0).
"""

from __future__ import annotations

from typing import Any

from cyclone_py import App, Workflow
from cyclone_py.context import StepContext

metered = Workflow("metered")


@metered.step()
def a(ctx: StepContext) -> Any:
    if ctx.attempt == 1 and (ctx.input or {}).get("fail_once"):
        raise RuntimeError("failing the first attempt on purpose")
    return {"echo": (ctx.input or {}).get("secret")}


@metered.step(deps=[a])
def b(ctx: StepContext) -> Any:
    return {"seen": ctx.deps["a"]}


app = App(metered, backoff=lambda attempt: 0)
