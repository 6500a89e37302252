"""Small helpers shared by the runtime, process and CLI tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(pred: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    """Poll ``pred`` until it returns something truthy (and return that), or fail
    the test after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
