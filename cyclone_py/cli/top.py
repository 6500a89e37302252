"""``cyclone top``: the engine's gauges redrawn live; the frame is :mod:`cyclone_py.top`'s."""

from __future__ import annotations

import contextlib
import time
from datetime import timedelta
from typing import Any

import click

from cyclone_py import errors
from cyclone_py.cli.common import Duration, Settings, describe, pass_settings


@click.command("top")
@click.option("--once", is_flag=True, help="Print one frame and exit.")
@click.option("--interval", type=Duration(bare_seconds=True, positive=True), default="1s", show_default=True,
              metavar="DURATION", help="Time between two frames.")
@pass_settings
def top(settings: Settings, once: bool, interval: timedelta) -> None:
    """A live view of the engine's gauges (cyclone.metrics()), like top.

    Runs by state per workflow, ready lag, dead letters by kind, limits,
    the next schedules, workers and expired leases, redrawn every --interval
    until Ctrl-C.
    """
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from cyclone_py.top import frame

    client = settings.client()
    console = Console()

    def view() -> Any:
        started = time.perf_counter()
        rows = client.metrics()
        elapsed = time.perf_counter() - started
        return frame(rows, client.now(), scrape_seconds=elapsed)

    if once:
        console.print(view())
        return
    with contextlib.suppress(KeyboardInterrupt), Live(view(), console=console, auto_refresh=False) as live:
        while True:
            time.sleep(interval.total_seconds())
            try:
                live.update(view(), refresh=True)
            except errors.DatabaseUnavailable as exc:  # shown, and tried again at the next frame
                live.update(Text(f"cyclone top: {describe(exc)}", style="bold red"), refresh=True)


COMMANDS = (top,)
