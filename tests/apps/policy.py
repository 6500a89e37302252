"""An app that carries its own policy: a backoff, an error hook, a reclaim limit.

``policy_flaky`` always raises (its retries are scheduled by the app's
backoff: 7 minutes x attempt); ``policy_perm`` raises ``Permanent``. The
error hook appends ``<step_id> <error_kind>`` to ``$CYCLONE_TEST_DIR/hook.log``.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from cyclone_py import App, Permanent, StepFailed, Workflow
from cyclone_py.context import StepContext

flaky = Workflow("policy_flaky", max_attempts=3)
perm = Workflow("policy_perm", max_attempts=3)


@flaky.step()
def wobble(ctx: StepContext) -> Any:
    raise ValueError("not yet")


@perm.step()
def refuse(ctx: StepContext) -> Any:
    raise Permanent("never")


def backoff(attempt: int) -> timedelta:
    return timedelta(minutes=7 * attempt)


def on_error(exc: StepFailed) -> None:
    with Path(os.environ["CYCLONE_TEST_DIR"], "hook.log").open("a") as fh:
        fh.write(f"{exc.step_id} {exc.error_kind}\n")


app = App(flaky, perm, backoff=backoff, on_error=on_error, max_reclaims=1)
