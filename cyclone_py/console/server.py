"""Serving the console: its tokens, its socket and uvicorn.

``serve`` binds the socket itself (port 0 picks a free one, and the URL it
prints names the real port), then runs uvicorn on it until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
from collections.abc import Callable

import uvicorn

from cyclone_py.client import Client
from cyclone_py.console.app import Settings, create_app


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
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on sockets whose
    # proto says TCP, and without it every keep-alive answer waited ~40 ms (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
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
    config = uvicorn.Config(app, log_level=log_level, access_log=log_level == "debug", server_header=False,
                            limit_concurrency=100, timeout_keep_alive=5, h11_max_incomplete_event_size=64 * 1024)
    server = uvicorn.Server(config)
    if on_start is not None:
        on_start()
    server.run(sockets=[sock])
