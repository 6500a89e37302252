"""The operator's rough edges of issue 36 in the ``cyclone`` command: ``dlq retry``, ``top`` fitting the
terminal and streaming without one, ``ui`` on a busy port, read-only commands that never start the embedded
database, ``--version`` with the database's release.

In process with click's CliRunner against the test's own database, as tests/test_cli.py does; a subprocess
where a terminal (or its absence) or the environment matters.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import pytest
from click.testing import Result
from helpers import one_line_error

# -- cyclone ui -----------------------------------------------------------------------


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port something else listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        yield int(taken.getsockname()[1])


# console/server.py's bind() leaves its socket to the garbage collector when bind fails (a ResourceWarning,
# silent outside tests); the console's owner closes it there.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_ui_on_a_busy_port_names_the_address_and_what_to_do(invoke: Callable[..., Result], busy_port: int) -> None:
    line = one_line_error(invoke("ui", "--listen", f"127.0.0.1:{busy_port}"))
    assert line.startswith(f"cyclone: cannot serve the console on 127.0.0.1:{busy_port}: the address is in use")
    assert "--listen with another port" in line and "Errno" not in line
