"""A one-step workflow for process-level tests."""

from __future__ import annotations

from typing import Any

from cyclone_py import App, Workflow
from cyclone_py.context import StepContext

basic = Workflow("basic")


@basic.step()
def only(ctx: StepContext) -> Any:
    return {"n": (ctx.input or {}).get("n")}


app = App(basic)
