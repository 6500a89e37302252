"""An app that declares a schedule, for the worker-process schedule tests."""

from __future__ import annotations

import os
from typing import Any

from cyclone_py import App, Schedule, Workflow
from cyclone_py.context import StepContext

report = Workflow("report")


@report.step()
def render(ctx: StepContext) -> Any:
    # What the engine put in the input: the slot, in UTC.
    return {"scheduled_for": ctx.input["scheduled_for"], "kind": ctx.input["kind"]}


# CYCLONE_TEST_CRON: another cron (a bad one, to see the worker refuse to start).
CRON = os.environ.get("CYCLONE_TEST_CRON", "* * * * *")

app = App(report, schedules=[Schedule("every-minute", CRON, report, input={"kind": "minutely"}, overlap="allow")])
