"""The embedded database, DSN resolution, the test fixtures and the CLI plumbing."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from cyclone_py import cli, db


def test_resolve_dsn_prefers_explicit_then_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CYCLONE_DSN", "dbname=a")
    monkeypatch.setenv("DATABASE_URL", "postgresql:///b")
    assert db.resolve_dsn("dbname=x") == "dbname=x"
    assert db.resolve_dsn() == "dbname=a"
    monkeypatch.delenv("CYCLONE_DSN")
    assert db.resolve_dsn() == "postgresql:///b"
    monkeypatch.delenv("DATABASE_URL")
    assert db.resolve_dsn() == db.embedded().url()


def test_an_installed_package_keeps_one_embedded_database_per_user_whatever_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = tmp_path / "venv" / "lib" / "site-packages" / "cyclone_py"  # no checkout around it
    installed.mkdir(parents=True)
    monkeypatch.delenv("CYCLONE_ROOT", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    roots = set()
    for folder in ("service", "elsewhere"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "sqitch.plan").write_text("")  # another project's plan is not ours
        monkeypatch.chdir(tmp_path / folder)
        roots.add(db.repo_root(installed))
    assert roots == {(tmp_path / "data" / "cyclone").resolve()}
    monkeypatch.delenv("XDG_DATA_HOME")
    assert db.repo_root(installed) == (Path.home() / ".local" / "share" / "cyclone").resolve()
    assert db.repo_root() == Path(db.__file__).resolve().parent.parent, "in a checkout: the checkout"


def test_pg_env_maps_a_url() -> None:
    env = db.pg_env("postgresql://u:pw@h:5433/d?sslmode=disable", base={})
    assert {k: env[k] for k in ("PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE", "PGSSLMODE")} == {
        "PGHOST": "h", "PGPORT": "5433", "PGUSER": "u", "PGPASSWORD": "pw",
        "PGDATABASE": "d", "PGSSLMODE": "disable",
    }


def test_embedded_cluster_is_unix_socket_only(embedded_db: db.EmbeddedCluster) -> None:
    with psycopg.connect(embedded_db.url(), autocommit=True) as c:
        assert c.execute("SHOW listen_addresses").fetchone() == ("",)
        assert c.execute("SHOW fsync").fetchone() == ("on",)
        assert c.execute("SHOW shared_preload_libraries").fetchone() == ("pg_cron",)
        assert c.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone() == (15,)


def test_start_is_idempotent(embedded_db: db.EmbeddedCluster) -> None:
    assert embedded_db.start() == embedded_db.url()
    assert embedded_db.status()


def test_each_test_gets_a_deployed_private_database(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    row = conn.execute("SELECT current_database(), to_regnamespace('cyclone') IS NOT NULL").fetchone()
    assert row is not None
    name, has_schema = row
    assert str(name).startswith("cyclone_t_")
    assert has_schema


def test_cli_errors_are_one_line_without_traceback() -> None:
    result = CliRunner().invoke(cli.main, ["--dsn", "host=/nonexistent port=1 dbname=x", "migrate"])
    assert result.exit_code == 1
    proc = subprocess.run(
        [sys.executable, "-m", "cyclone_py.cli", "--dsn", "host=/nonexistent port=1 dbname=x", "migrate"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_cli_dev_db_url_matches_embedded() -> None:
    result = CliRunner().invoke(cli.main, ["dev-db", "url"])
    assert result.exit_code == 0
    assert result.output.strip() == db.embedded().url()


# -- the embedded database outside a checkout ---------------------------------------


@pytest.fixture
def elsewhere(tmp_path: Path) -> Iterator[tuple[db.EmbeddedCluster, dict[str, str]]]:
    """A project folder other than this checkout, with no DSN set: commands run
    with it target a cluster of their own (created on first use, destroyed after)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CYCLONE_DSN", "DATABASE_URL", "CYCLONE_HOME")}
    env["CYCLONE_ROOT"] = str(tmp_path)
    cluster = db.EmbeddedCluster.for_repo(tmp_path)
    assert not cluster.initialized()
    try:
        yield cluster, env
    finally:
        cluster.destroy()


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cyclone_py.cli", *args],
                          capture_output=True, text=True, env=env, timeout=120)


#: A command that may start the embedded database (it serves it), and fails at once on a cluster
#: without the engine.
WORKER = ("worker", "--app", "examples.orders:app")


def test_read_only_commands_never_start_the_embedded_database(
        elsewhere: tuple[db.EmbeddedCluster, dict[str, str]]) -> None:
    """Issue 36: with no DSN, a read (or an action on a run) does not create or start the
    embedded database; it says how to, or to name another database, in one line."""
    cluster, env = elsewhere
    for args in (["runs"], ["dlq", "list"], ["top", "--once"], ["explain", "1"], ["migrate", "--status"]):
        refused = run_cli(env, *args)
        assert refused.returncode == 1, args
        assert refused.stderr.strip().splitlines() == [
            f"cyclone: {db.NOT_CREATED.format(home=cluster.home)}"], args
        assert "cyclone dev-db start" in refused.stderr and "CYCLONE_DSN" in refused.stderr
    assert not cluster.initialized()


@pytest.mark.cluster
def test_a_command_that_starts_the_embedded_database_says_so_once(
        elsewhere: tuple[db.EmbeddedCluster, dict[str, str]]) -> None:
    cluster, env = elsewhere
    first = run_cli(env, *WORKER)
    # The schema is not deployed there: the command itself fails, after the notice.
    lines = first.stderr.strip().splitlines()  # the worker's log lines too
    (notice,) = [ln for ln in lines if ln.startswith("cyclone: no --dsn or CYCLONE_DSN given: ")]
    error = lines[-1]
    assert notice.startswith("cyclone: no --dsn or CYCLONE_DSN given: created the embedded PostgreSQL 15 in ")
    assert str(cluster.home) in notice and "--dsn" in notice
    assert "not deployed" in error
    assert cluster.status()

    again = run_cli(env, "runs")
    assert [ln for ln in again.stderr.splitlines() if "embedded" in ln] == []
    assert "not deployed" in again.stderr

    cluster.stop()  # not by the user (a reboot): a read says how to start it, and leaves it stopped
    refused = run_cli(env, "runs")
    assert refused.stderr.strip().splitlines() == [f"cyclone: {db.NOT_RUNNING.format(home=cluster.home)}"]
    assert not cluster.status()
    assert "started the embedded PostgreSQL 15" in run_cli(env, *WORKER).stderr  # a worker starts it again
    assert cluster.status()


@pytest.mark.cluster
def test_dev_db_stop_is_not_undone_by_the_next_command(
        elsewhere: tuple[db.EmbeddedCluster, dict[str, str]]) -> None:
    cluster, env = elsewhere
    assert run_cli(env, "dev-db", "start").returncode == 0
    assert run_cli(env, "dev-db", "stop").returncode == 0

    for args in (["runs"], ["migrate", "--status"]):
        refused = run_cli(env, *args)
        assert refused.returncode == 1
        assert refused.stderr.strip().splitlines() == [
            "cyclone: the embedded database was stopped with `cyclone dev-db stop`;"
            " run `cyclone dev-db start` or pass --dsn"]
    assert not cluster.status()

    started = run_cli(env, "dev-db", "start")
    assert started.returncode == 0 and started.stderr == ""
    after = run_cli(env, "runs")
    assert "not deployed" in after.stderr and "embedded" not in after.stderr
