"""Serving the console: its tokens, its socket and uvicorn.

``serve`` binds the socket itself (port 0 picks a free one, and the URL it
prints names the real port), then runs uvicorn on it until SIGTERM or Ctrl-C.
No log line carries a token: :class:`Redact` rewrites the value of every
``token=`` (and ``csrf=``) in a query string of uvicorn's access log (written
at ``--log-level debug``) and of any other line of uvicorn's or the console's.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import secrets
import socket
from collections.abc import Callable

import uvicorn

from cyclone_py.client import Client
from cyclone_py.console.app import Settings, create_app

#: A secret in a query string: its value, up to the next parameter.
_SECRET_PARAM = re.compile(r"((?:^|[?&;\s])(?:token|csrf)=)[^&;\s\"']*", re.IGNORECASE)
#: The loggers a request's URL may reach.
REDACTED_LOGGERS = ("uvicorn.access", "uvicorn.error", "uvicorn.asgi", "cyclone_py.console.app")


def redact(text: str) -> str:
    """``text`` with the value of each ``token=`` and ``csrf=`` replaced by ``[redacted]``."""
    return _SECRET_PARAM.sub(r"\1[redacted]", text)


class Redact(logging.Filter):
    """A filter that redacts secrets in a record's message and its arguments
    (uvicorn's access log passes the path and query as an argument)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return True


def redact_logs() -> None:
    """Put :class:`Redact` on every logger a URL may reach (once)."""
    for name in REDACTED_LOGGERS:
        log = logging.getLogger(name)
        if not any(isinstance(f, Redact) for f in log.filters):
            log.addFilter(Redact())


class TokenError(ValueError):
    """A ``CYCLONE_UI_TOKEN`` that cannot be used."""


def parse_tokens(text: str) -> dict[str, str]:
    """``CYCLONE_UI_TOKEN``: ``NAME:SECRET`` entries separated by commas (a bare
    ``SECRET`` is named ``token``), as ``{secret: name}``."""
    tokens: dict[str, str] = {}
    for entry in text.split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, secret = entry.partition(":")
        if not sep:
            name, secret = "token", entry
        name, secret = name.strip(), secret.strip()
        if not name or len(name) > 100:
            raise TokenError(f"a token's name is 1 to 100 characters: {entry[:20]!r}...")
        if len(secret) < 16:
            raise TokenError(f"the token named {name!r} is shorter than 16 characters")
        if secret in tokens:
            raise TokenError(f"the token named {name!r} is given twice")
        tokens[secret] = name
    if not tokens:
        raise TokenError("CYCLONE_UI_TOKEN names no token")
    return tokens


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    return secrets.token_urlsafe(24)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; closed again when it cannot be had (the error is raised)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on sockets whose
    # proto says TCP, and without it every keep-alive answer waited ~40 ms (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()  # an address in use, a privileged port, an unknown host: the caller gets the error, not the fd
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    if host in ("0.0.0.0", "::"):
        shown = socket.gethostname()
    return f"http://{shown}:{port}/"


def serve(client: Client, settings: Settings, sock: socket.socket, *, log_level: str = "warning",
          on_start: Callable[[], None] | None = None) -> None:
    """Serve the console on ``sock`` until SIGTERM or Ctrl-C."""
    app = create_app(client, settings)
    level = "debug" if log_level == "trace" else log_level  # trace would log each request's scope: its headers
    config = uvicorn.Config(app, log_level=level, access_log=level == "debug", server_header=False,
                            limit_concurrency=100, timeout_keep_alive=5, h11_max_incomplete_event_size=64 * 1024)
    redact_logs()  # after Config: it (re)configures uvicorn's loggers
    server = uvicorn.Server(config)
    if on_start is not None:
        on_start()
    try:
        server.run(sockets=[sock])
    finally:
        app.state.console.layouts.close()
