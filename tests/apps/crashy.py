"""A workflow whose one step can hang, sleep, or kill its own process.

``input.mode``: ``hang`` (sleeps a minute when ``CYCLONE_TEST_HANG=1``, else
returns at once), ``sleep`` (``input.seconds``, ignoring cancellation),
``suicide`` (SIGKILLs its own process), ``gc`` (returns how many objects the
garbage collector leaves out: ``gc.get_freeze_count()``). Every execution
first writes a marker file ``<step_id>-<attempt>-<pid>`` into
``CYCLONE_TEST_DIR``.
"""

from __future__ import annotations

import gc
import os
import signal
import time
from pathlib import Path
from typing import Any

from cyclone_py import App, Workflow
from cyclone_py.context import StepContext

crashy = Workflow("crashy", max_attempts=3)


@crashy.step()
def work(ctx: StepContext) -> Any:
    marker_dir = os.environ.get("CYCLONE_TEST_DIR")
    if marker_dir:
        Path(marker_dir, f"{ctx.step_id}-{ctx.attempt}-{os.getpid()}").write_text(ctx.node)
    mode = (ctx.input or {}).get("mode")
    if mode == "hang" and os.environ.get("CYCLONE_TEST_HANG") == "1":
        time.sleep(60)
    elif mode == "sleep":
        time.sleep(float(ctx.input.get("seconds", 1.0)))
    elif mode == "suicide":
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "gc":
        return {"frozen": gc.get_freeze_count()}
    return {"attempt": ctx.attempt, "pid": os.getpid()}


app = App(crashy)
