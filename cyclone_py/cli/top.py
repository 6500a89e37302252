"""``cyclone top``: the engine's gauges redrawn live; the frame is :mod:`cyclone_py.top`'s."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
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
    until Ctrl-C, fitted to the terminal's width. Without a terminal (a pipe,
    a file) it prints each frame as plain lines, one frame every --interval,
    a blank line between two.
    """
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from cyclone_py.top import frame, plain

    client = settings.client()
    console = Console()
    terminal = console.is_terminal

    def view() -> Any:
        started = time.perf_counter()
        rows = client.metrics()
        elapsed = time.perf_counter() - started
        return frame(rows, client.now(), scrape_seconds=elapsed, width=console.width if terminal else None)

    if not terminal:
        _stream(view, once=once, interval=interval, render=plain)
        return
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


def _stream(view: Callable[[], Any], *, once: bool, interval: timedelta, render: Callable[[Any], str]) -> None:
    """Frames as plain lines for a pipe or a file: one now, then one every ``interval`` (flushed, so that
    a reader sees each as it comes) until Ctrl-C; a database that stops answering is said on stderr, and
    tried again at the next frame."""
    click.echo(render(view()))
    if once:
        return
    with contextlib.suppress(KeyboardInterrupt):
        while True:
            sys.stdout.flush()
            time.sleep(interval.total_seconds())
            try:
                text = render(view())
            except errors.DatabaseUnavailable as exc:
                click.echo(f"cyclone top: {describe(exc)}", err=True)
                continue
            click.echo()
            click.echo(text)


COMMANDS = (top,)
