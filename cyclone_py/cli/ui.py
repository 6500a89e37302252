"""``cyclone ui``: serve the web console (``cyclone_py.console``, the extra ``ui``)."""

from __future__ import annotations

import errno
import logging
import os
import re
import socket
import sys

import click

from cyclone_py.cli.common import (
    CONNECT_TIMEOUT,
    ListenAddress,
    Settings,
    fail,
    log_level_option,
    pass_settings,
)
from cyclone_py.client import Client, check_reachable
from cyclone_py.metrics import parse_listen


@click.command("ui")
@click.option("--listen", type=ListenAddress(), default="127.0.0.1:8600", show_default=True,
              envvar="CYCLONE_UI_LISTEN", show_envvar=True, metavar="HOST:PORT",
              help="Serve the console on HOST:PORT (port 0: a free one). Off loopback a token is required.")
@click.option("--allow-actions", is_flag=True, envvar="CYCLONE_UI_ALLOW_ACTIONS", show_envvar=True,
              help="Offer the actions (retry, cancel, pause, resume, signal, schedules) the database role allows.")
@click.option("--proxy-user-header", default=None, envvar="CYCLONE_UI_PROXY_USER_HEADER", show_envvar=True,
              metavar="HEADER", help="Trust HEADER, set by a proxy in front, to name the user (the audit's actor).")
@log_level_option("warning")
@pass_settings
def ui(settings: Settings, listen: str, allow_actions: bool, proxy_user_header: str | None, log_level: str) -> None:
    """Serve the web console (needs the extra: pip install 'cyclone-py[ui]').

    Pages: the overview, runs, a run with its DAG, dead letters, schedules and
    limits. Actions only with --allow-actions, as POSTs with a CSRF token.
    CYCLONE_UI_TOKEN (NAME:SECRET[,NAME:SECRET...]) sets the tokens, whose
    names the audit trail records; without it, a non-loopback --listen gets a
    generated token, printed once. docs/console.md has the details.
    """
    import getpass

    try:
        from cyclone_py.console import app as console_app
        from cyclone_py.console import server
    except ImportError as exc:
        fail(f"the web console needs the ui extra (pip install 'cyclone-py[ui]'): {exc}")
    host, port = parse_listen(listen)
    local = getpass.getuser()
    generated = None
    env_tokens = os.environ.get("CYCLONE_UI_TOKEN")
    if env_tokens is not None:
        try:
            tokens = server.parse_tokens(env_tokens)
        except server.TokenError as exc:
            fail(str(exc))
    elif server.is_loopback(host):
        tokens = {}
    else:
        generated = server.new_token()
        tokens = {generated: local}
    if proxy_user_header is not None and not re.fullmatch(r"[A-Za-z0-9-]{1,100}", proxy_user_header):
        fail(f"--proxy-user-header {proxy_user_header[:40]!r} is not a header name")
    dsn = settings.dsn()
    check_reachable(dsn, connect_timeout=CONNECT_TIMEOUT)
    config = console_app.Settings(allow_actions=allow_actions, tokens=tokens, proxy_user_header=proxy_user_header,
                                  local_actor=local)
    with Client(dsn, min_size=1, max_size=8, timeout=CONNECT_TIMEOUT, application_name="cyclone-ui") as client:
        refused: str | None = None
        try:
            sock = server.bind(host, port)
        except OSError as exc:
            refused = cannot_listen(host, port, exc)
        if refused is not None:  # failed out of the except block: its traceback, and the socket bind() made, go now
            fail(refused)
        url = server.url_of(sock)
        if generated is not None:
            click.echo(f"cyclone ui: token for {local}: {generated}")
            click.echo(f"cyclone ui: open {url}?token={generated}")
        click.echo(f"cyclone ui: serving {url}" + ("" if allow_actions else " (read-only)"))
        sys.stdout.flush()
        logging.basicConfig(level=log_level.upper())
        server.serve(client, config, sock, log_level=log_level.lower())


def cannot_listen(host: str, port: int, exc: OSError) -> str:
    """The line for a ``--listen`` address the console cannot bind: the address, why, and what to do."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    head = f"cannot serve the console on {where}"
    if isinstance(exc, socket.gaierror):
        return f"{head}: unknown host ({exc.strerror}); pass --listen with an address of this machine"
    if exc.errno == errno.EADDRINUSE:
        return (f"{head}: the address is in use (another cyclone ui, or another server); stop it, or pass "
                f"--listen with another port (port 0 picks a free one)")
    if exc.errno == errno.EACCES:
        return f"{head}: permission denied (a port below 1024 needs privileges); pass --listen with a higher port"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{head}: no interface of this machine has that address; pass --listen with one it has"
    return f"{head}: {exc.strerror or exc}"


COMMANDS = (ui,)
