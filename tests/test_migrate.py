"""``cyclone migrate``: status, the confirmation before a revert, and a machine
without sqitch. Each runs the command as a process (``python -m
cyclone_py.cli``), the way an operator does; the wheel installed outside the
checkout is ``tests/test_install.py``."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import subprocess
import sys
import threading
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


# -- a deploy that meets a lock ------------------------------------------------------------------------------------
# A sqitch project of the test's own: change `tables` makes two tables, change `alter` (its body given) changes
# them. `cyclone migrate` deploys it as it deploys the engine's (db.sqitch_project pointed at it), with the real
# sqitch and psql, against a lock a transaction really holds.

def small_project(folder: Path, alter: str) -> Path:
    for sub in ("deploy", "revert", "verify"):
        (folder / sub).mkdir(parents=True)
    (folder / "sqitch.conf").write_text("[core]\n\tengine = pg\n\tplan_file = sqitch.plan\n\ttop_dir = .\n")
    (folder / "sqitch.plan").write_text(
        "%syntax-version=1.0.0\n%project=locked\n\n"
        "tables 2026-01-01T00:00:00Z Test <test@cyclone.invalid> # two tables\n"
        "alter [tables] 2026-01-01T00:00:01Z Test <test@cyclone.invalid> # changes them\n")
    (folder / "deploy" / "tables.sql").write_text("BEGIN;\nCREATE TABLE t_a (id int);\nCREATE TABLE t_b (id int);\n"
                                                  "COMMIT;\n")
    (folder / "revert" / "tables.sql").write_text("BEGIN;\nDROP TABLE t_a, t_b;\nCOMMIT;\n")
    (folder / "deploy" / "alter.sql").write_text(f"BEGIN;\n{alter}\nCOMMIT;\n")
    (folder / "revert" / "alter.sql").write_text("BEGIN;\nALTER TABLE t_a DROP COLUMN IF EXISTS c;\nCOMMIT;\n")
    for change in ("tables", "alter"):
        (folder / "verify" / f"{change}.sql").write_text("SELECT 1;\n")
    return folder


def migrate_small(project: Path, dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``cyclone migrate`` of ``project`` (not the engine's), as a process."""
    boot = ("import sys; from pathlib import Path; from cyclone_py import db; "
            f"db.sqitch_project = lambda: Path({str(project)!r}); "
            "from cyclone_py.cli import main; sys.argv[0] = 'cyclone'; main()")
    base = {k: v for k, v in os.environ.items() if k not in ("CYCLONE_DSN", "DATABASE_URL")}
    return subprocess.run([sys.executable, "-c", boot, "--dsn", dsn, "migrate", *args], capture_output=True,
                          text=True, env=base, stdin=subprocess.DEVNULL, timeout=120)


def has_column(dsn: str) -> bool:
    with psycopg.connect(dsn) as c:
        row = c.execute("SELECT count(*) FROM pg_attribute WHERE attrelid = 't_a'::regclass AND attname = 'c'"
                        ).fetchone()
    return bool(row and row[0])


@contextlib.contextmanager
def hold(dsn: str, sql: str, seconds: float) -> Iterator[None]:
    """A transaction that ran ``sql`` (taking its locks), open for ``seconds`` from its start in a thread, or
    until the block ends, whichever comes first."""
    ready, done = threading.Event(), threading.Event()

    def run() -> None:
        with psycopg.connect(dsn) as c:
            c.execute(sql)
            ready.set()
            done.wait(seconds)
            c.rollback()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield
    finally:
        done.set()
        thread.join(10)


RETRY_LINE = re.compile(r"^cyclone: change alter met a lock timeout \(55P03\) and was rolled back; "
                        r"deploying again in (\d+) s \(retry (\d) of (\d)\)$")


def retry_of(line: str) -> tuple[str, ...]:
    """(wait, retry, retries) of a retry line; () for any other line."""
    found = RETRY_LINE.match(line)
    return found.groups() if found else ()


@pytest.fixture
def lockable(tmp_path: Path, empty_db: str) -> Iterator[tuple[Path, str]]:
    """The small project whose change `alter` waits 200 ms for its lock, deployed up to `tables`. Its script
    first drops what is not there, as the engine's scripts do: psql's NOTICE comes before the error, and the
    error is still the line that is said and retried on."""
    project = small_project(tmp_path / "proj", "SET LOCAL lock_timeout = '200ms';\n"
                                                "DROP FUNCTION IF EXISTS nothing_here();\n"
                                                "ALTER TABLE t_a ADD COLUMN c int;")
    db.sqitch(["deploy", "--to", "tables"], empty_db, quiet=True, project=project)
    yield project, empty_db


@pytest.mark.slow
def test_a_deploy_that_meets_a_lock_timeout_is_tried_again_and_deploys_once_the_lock_is_gone(
        lockable: tuple[Path, str]) -> None:
    project, dsn = lockable
    began = time.monotonic()
    # A reader holds t_a for 4 s: longer than sqitch takes to start the first attempt, even on a busy machine,
    # shorter than the three attempts take. The first meets it; the second (1 s later) or the third (2 s after
    # that) does not.
    with hold(dsn, "SELECT * FROM t_a", 4):
        proc = migrate_small(project, dsn)
    assert proc.returncode == 0, proc.stderr
    retries = proc.stderr.strip().splitlines()
    assert [retry_of(line) for line in retries] in ([("1", "1", "3")], [("1", "1", "3"), ("2", "2", "3")]), \
        proc.stderr
    assert has_column(dsn)
    assert time.monotonic() - began < 30


@pytest.mark.slow
def test_a_lock_that_is_never_released_fails_the_deploy_in_one_line_after_the_retries(
        lockable: tuple[Path, str]) -> None:
    project, dsn = lockable
    with hold(dsn, "SELECT * FROM t_a", 120):  # until the deploy has given up
        proc = migrate_small(project, dsn, "--retries", "2")
    assert proc.returncode == 1
    *retries, last = proc.stderr.strip().splitlines()
    assert [retry_of(line) for line in retries] == [("1", "1", "2"), ("2", "2", "2")], proc.stderr
    assert re.fullmatch(r"cyclone: sqitch deploy failed: psql:\S*deploy/alter\.sql:\d+: ERROR: 55P03: canceling "
                        r"statement due to lock timeout \(still after 2 retries\)", last), last
    assert not has_column(dsn)
    # --retries 0: the first lock timeout is the error, as before.
    with hold(dsn, "SELECT * FROM t_a", 120):
        line = one_line(migrate_small(project, dsn, "--retries", "0"))
    assert line.endswith("ERROR: 55P03: canceling statement due to lock timeout"), line


@pytest.mark.slow
def test_a_deploy_that_a_deadlock_broke_is_tried_again(tmp_path: Path, empty_db: str) -> None:
    # The deploy locks t_a, then waits for t_b; the holder of t_b then waits for t_a. The deploy's wait ends
    # first (deadlock_timeout, 1 s, against the holder's 10 s): PostgreSQL breaks the cycle by failing it.
    project = small_project(tmp_path / "proj", "LOCK TABLE t_a;\nALTER TABLE t_b ADD COLUMN c int;")
    dsn = empty_db
    db.sqitch(["deploy", "--to", "tables"], dsn, quiet=True, project=project)
    closing = threading.Event()

    def holder() -> None:
        with psycopg.connect(dsn) as c:
            c.execute("SET deadlock_timeout = '10s'")
            c.execute("LOCK TABLE t_b")
            deadline = time.monotonic() + 30
            while not c.execute("SELECT count(*) FROM pg_locks WHERE relation = 't_a'::regclass AND granted "
                                "AND pid <> pg_backend_pid()").fetchone()[0]:  # type: ignore[index]
                assert time.monotonic() < deadline
                time.sleep(0.05)
            c.execute("LOCK TABLE t_a")  # waits until the deploy's transaction is the one that fails
            closing.set()
            c.rollback()

    thread = threading.Thread(target=holder, daemon=True)
    thread.start()
    proc = migrate_small(project, dsn)
    thread.join(30)
    assert closing.is_set()
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"cyclone: change alter met a deadlock \(40P01\) and was rolled back; deploying again in "
                        r"1 s \(retry 1 of 3\)", proc.stderr.strip()), proc.stderr
    with psycopg.connect(dsn) as c:
        assert c.execute("SELECT count(*) FROM pg_attribute WHERE attrelid = 't_b'::regclass AND attname = 'c'"
                         ).fetchone() == (1,)


def test_another_error_fails_the_deploy_at_once(tmp_path: Path, empty_db: str) -> None:
    project = small_project(tmp_path / "proj", "DROP FUNCTION IF EXISTS nothing_here();\n"
                                                "ALTER TABLE t_nowhere ADD COLUMN c int;")
    line = one_line(migrate_small(project, empty_db))
    assert re.search(r"deploy/alter\.sql:\d+: ERROR: 42P01: relation \"t_nowhere\" does not exist$", line), line
