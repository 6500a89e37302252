"""The harness keeps to itself: scratch databases, the clock, the pytest plugin.

A harness on a scratch database never runs a step of a run it did not submit
and never moves another database's clock; ``Env.close()`` puts a clock it
moved back on real time; the ``cyclone_env`` fixture (a user's project, run
in a pytest subprocess) does both, loads the user's schema through its hook,
and stops in one line when it cannot make databases or has no sqitch.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cyclone_py import Workflow
from cyclone_py.client import Client, StepRow
from cyclone_py.context import StepContext
from cyclone_py.db import pid_alive
from cyclone_py.testing import Env, Template

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "python.md"


@pytest.fixture
def client(dsn: str) -> Iterator[Client]:
    with Client(dsn) as c:
        yield c


def _orders() -> Workflow:
    wf = Workflow("orders")

    @wf.step()
    def charge(ctx: StepContext) -> Any:
        return {"charged": (ctx.input or {}).get("amount")}

    return wf


def foreign_run(client: Client, wf: Workflow) -> tuple[Any, StepRow]:
    """A run of ``wf`` submitted to the shared database, due now."""
    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf, {"amount": 99})
    [step] = client.steps(run_id)
    assert (step.state, step.attempt) == ("available", 0)
    return run_id, step


def assert_untouched(client: Client, run_id: Any) -> None:
    [step] = client.steps(run_id)
    assert (step.state, step.attempt, step.started_at) == ("available", 0, None)
    assert client.get_run(run_id).state == "running"


def assert_real_time(client: Client) -> None:
    assert abs(client.now() - datetime.now(UTC)) < timedelta(seconds=30)


def databases(dsn: str) -> set[str]:
    """The databases cyclone_py.testing makes (``cyclone_tpl_<pid>_<hex>``,
    ``cyclone_env_<pid>_<hex>``), of this process or of one that has exited
    (a pytest run in a subprocess): not those of other test processes running
    at the same time (pytest -n), whose databases come and go meanwhile."""
    with psycopg.connect(dsn, autocommit=True) as c:
        rows = c.execute(r"SELECT datname, (regexp_match(datname, '^cyclone_(?:tpl|env)_([0-9]+)_[0-9a-f]{8}$'))[1] "
                         "FROM pg_database").fetchall()
    return {str(name) for name, pid in rows
            if pid is not None and (int(pid) == os.getpid() or not pid_alive(int(pid)))}


def test_env_close_puts_the_clock_it_moved_back_on_real_time(dsn: str, client: Client) -> None:
    with Env(dsn, _orders()) as env:
        env.advance_time(timedelta(days=3))
        assert client.now() - datetime.now(UTC) > timedelta(days=2)
    assert_real_time(client)


@pytest.mark.slow
def test_a_scratch_env_touches_only_its_own_runs_and_clock(dsn: str, client: Client) -> None:
    wf = _orders()
    foreign, _ = foreign_run(client, wf)
    before = databases(dsn)
    template = Template.deploy(dsn)
    try:
        with Env.scratch(template, wf) as env:
            assert env.dsn != dsn
            mine = env.submit(wf, {"amount": 1})
            assert env.run_until_idle() == 1
            env.advance_time(timedelta(days=1))
            assert env.get_run(mine).state == "completed"
            assert env.now() - datetime.now(UTC) > timedelta(hours=23)
            assert_untouched(client, foreign)  # while it runs too
            assert_real_time(client)
            scratch = env.client.dsn
            assert isinstance(scratch, str)
        assert_untouched(client, foreign)
        assert_real_time(client)
        with pytest.raises(psycopg.OperationalError):  # dropped at close
            psycopg.connect(scratch, connect_timeout=5).close()
    finally:
        template.drop()
    assert databases(dsn) == before


# -- the plugin, in a user's project -------------------------------------------


def docs_example() -> dict[str, str]:
    """The files of the complete example in docs/python.md (``# name.py`` first lines)."""
    files: dict[str, str] = {}
    for block in re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S):
        first = block.splitlines()[0]
        m = re.fullmatch(r"# ((?:conftest|test_\w+)\.py)", first)
        if m:
            files[m.group(1)] = block
    assert set(files) >= {"conftest.py", "test_orders.py"}, "the docs lost their example"
    return files


def run_pytest(project: Path, dsn: str, *, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CYCLONE_DSN", "DATABASE_URL", "PYTEST_ADDOPTS")}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", "--cyclone-dsn", dsn,
         str(project)],
        cwd=project, env=env, text=True, capture_output=True, timeout=300,
    )


@pytest.mark.slow
def test_the_docs_example_runs_with_the_plugin_and_leaves_the_shared_database_alone(
    dsn: str, client: Client, tmp_path: Path
) -> None:
    foreign, _ = foreign_run(client, _orders())  # same workflow name as the example's
    before = databases(dsn)
    for name, text in docs_example().items():
        (tmp_path / name).write_text(text)
    proc = run_pytest(tmp_path, dsn)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"\b4 passed\b", proc.stdout), proc.stdout
    assert_untouched(client, foreign)
    assert_real_time(client)
    assert databases(dsn) == before  # the template and every scratch database dropped
    with pytest.raises(psycopg.errors.UndefinedTable):  # the hook loaded the template, not this database
        with psycopg.connect(dsn) as c:
            c.execute("SELECT * FROM orders")


def assert_one_line(output: str, start: str) -> None:
    """The fixture's error is one line starting with ``start``, with no traceback around it."""
    lines = [ln for ln in output.splitlines() if ln.startswith("cyclone_env:")]
    assert len(lines) == 1 and lines[0].startswith(start), output
    assert "Traceback" not in output and "During handling" not in output, output


def _one_test_project(tmp_path: Path) -> Path:
    (tmp_path / "conftest.py").write_text(
        "import pytest\nfrom cyclone_py import Workflow\n\n"
        "@pytest.fixture\ndef cyclone_app():\n    return Workflow('empty')\n"
    )
    (tmp_path / "test_it.py").write_text("def test_it(cyclone_env):\n    cyclone_env.run_until_idle()\n")
    return tmp_path


@pytest.mark.slow
def test_the_fixture_stops_in_one_line_when_the_role_cannot_create_databases(
    dsn: str, client: Client, conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    foreign, _ = foreign_run(client, _orders())
    role = f"nocreatedb_{uuid.uuid4().hex[:8]}"
    conn.execute(f"CREATE ROLE {role} LOGIN NOCREATEDB")
    try:
        proc = run_pytest(_one_test_project(tmp_path), psycopg.conninfo.make_conninfo(dsn, user=role))
    finally:
        conn.execute(f"DROP ROLE {role}")
    assert proc.returncode != 0
    assert_one_line(proc.stdout, f"cyclone_env: role '{role}' cannot create databases")
    assert_untouched(client, foreign)


@pytest.mark.slow
def test_the_fixture_stops_in_one_line_without_sqitch(dsn: str, client: Client, tmp_path: Path) -> None:
    foreign, _ = foreign_run(client, _orders())
    before = databases(dsn)
    proc = run_pytest(_one_test_project(tmp_path), dsn, path=str(Path(sys.executable).parent))
    assert proc.returncode != 0
    assert_one_line(proc.stdout, "cyclone_env: sqitch is not installed")
    assert_untouched(client, foreign)
    assert databases(dsn) == before
