"""``cyclone migrate``: status, the confirmation before a revert, and a machine
without sqitch. Each runs the command as a process (``python -m
cyclone_py.cli``), the way an operator does; the wheel installed outside the
checkout is ``tests/test_install.py``."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from cyclone_py import db

UNREACHABLE = "host=/nonexistent port=1 dbname=x"


def cyclone(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("CYCLONE_DSN", "DATABASE_URL")}
    return subprocess.run([sys.executable, "-m", "cyclone_py.cli", *args], capture_output=True, text=True,
                          env={**base, **(env or {})}, cwd=cwd, stdin=stdin, timeout=120)


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The command failed (exit 1) with exactly one ``cyclone: ...`` line on stderr."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cyclone: "), proc.stderr
    return lines[0]


def deployed(dsn: str) -> bool:
    with psycopg.connect(dsn) as c:
        row = c.execute("SELECT to_regnamespace('cyclone') IS NOT NULL").fetchone()
    return bool(row and row[0])


@pytest.fixture
def empty_db(embedded_db: db.EmbeddedCluster) -> Iterator[str]:
    name = f"cyclone_migrate_{uuid.uuid4().hex[:8]}"
    try:
        yield embedded_db.create_database(name)
    finally:
        embedded_db.drop_database(name)


def test_without_sqitch_migrate_says_how_to_get_it(tmp_path: Path) -> None:
    # A PATH with python's own folder but no sqitch on it.
    proc = cyclone("--dsn", UNREACHABLE, "migrate", env={"PATH": str(tmp_path)})
    line = one_line(proc)
    assert "apt-get install sqitch libdbd-pg-perl" in line and "sqitch.org" in line
    assert "database unavailable" not in line  # it said so before trying to connect


@pytest.mark.slow
def test_status_shows_what_is_deployed(dsn: str, empty_db: str) -> None:
    proc = cyclone("--dsn", dsn, "migrate", "--status")
    assert proc.returncode == 0, proc.stderr
    assert "Nothing to deploy (up-to-date)" in proc.stdout

    assert "nothing is deployed in database 'cyclone_migrate_" in one_line(
        cyclone("--dsn", empty_db, "migrate", "--status"))
    assert not deployed(empty_db)  # --status changed nothing


def test_revert_without_yes_on_a_pipe_refuses(dsn: str) -> None:
    line = one_line(cyclone("--dsn", dsn, "migrate", "--revert"))
    assert "pass --yes" in line
    assert deployed(dsn)


@pytest.mark.slow
def test_revert_with_yes_drops_the_schema(dsn: str) -> None:
    proc = cyclone("--dsn", dsn, "migrate", "--revert", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert not deployed(dsn)


def test_revert_asks_on_a_terminal_and_no_keeps_the_schema(dsn: str) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "cyclone_py.cli", "--dsn", dsn, "migrate", "--revert"],
                            stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"[y/N]" not in seen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.5)[0]:
                seen += os.read(master, 4096)
        assert b"This drops the engine and all its data" in seen, seen
        os.write(master, b"n\n")
        assert proc.wait(timeout=60) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert deployed(dsn)


def test_revert_does_not_combine_with_status(dsn: str) -> None:
    assert "do not go together" in one_line(cyclone("--dsn", dsn, "migrate", "--revert", "--status", "--yes"))
    assert deployed(dsn)
