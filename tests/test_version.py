"""One release number: the package's (``cyclone_py.__version__``), the engine's (``cyclone.version()``, SQL
change ``version``) and the plan's tags agree, so that a worker can tell which engine it talks to."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cyclone_py import Worker, Workflow, __version__
from cyclone_py.errors import EngineTooOld

ROOT = Path(__file__).resolve().parent.parent


def _tags(plan: Path) -> list[str]:
    return re.findall(r"^@v(\d+\.\d+\.\d+)\b", plan.read_text(), re.M)


def _ends_with_a_tag(plan: Path) -> bool:
    lines = [line for line in plan.read_text().splitlines() if line.strip() and not line.startswith("%")]
    return lines[-1].startswith("@")


def test_the_engine_answers_the_package_release(conn: psycopg.Connection[Any]) -> None:
    row = conn.execute("SELECT cyclone.version()").fetchone()
    assert row is not None and row[0] == __version__


def test_the_package_release_is_the_newest_tag_or_the_one_being_made() -> None:
    """A tagged plan's newest tag is the package's release; a plan with changes after its newest tag is
    making the package's release, which is newer than that tag."""
    for plan in (ROOT / "sqitch.plan", ROOT / "router" / "sqitch.plan"):
        newest = _tags(plan)[-1]
        if _ends_with_a_tag(plan):
            assert newest == __version__, plan
        else:
            assert tuple(map(int, __version__.split("."))) > tuple(map(int, newest.split("."))), plan


def test_the_version_change_names_the_package_release() -> None:
    engine = (ROOT / "sql" / "engine" / "47_version.sql").read_text()
    assert f"SELECT '{__version__}'::text" in engine


def _worker(dsn: str) -> Worker:
    wf = Workflow("version_check")

    @wf.step()
    def work(ctx: Any) -> Any:
        return {}

    return Worker(wf, dsn, concurrency=1)


def test_a_worker_refuses_an_older_engine_naming_both_releases(dsn: str, conn: psycopg.Connection[Any]) -> None:
    """SPEC/issue 37: a worker of N+1 started on a database still at N refuses with one line naming both."""
    conn.execute("CREATE OR REPLACE FUNCTION cyclone.version() RETURNS text LANGUAGE sql AS $$ SELECT '0.21.9' $$")
    conn.commit()
    with pytest.raises(EngineTooOld, match=rf"engine 0\.21\.9 and this worker is {re.escape(__version__)}: deploy"):
        _worker(dsn).run(install_signals=False)
    conn.execute("DROP FUNCTION cyclone.version()")
    conn.commit()
    with pytest.raises(EngineTooOld, match="engine older than 0.22.0 and this worker is"):
        _worker(dsn).run(install_signals=False)


def test_a_worker_serves_a_newer_engine(dsn: str, conn: psycopg.Connection[Any]) -> None:
    conn.execute("CREATE OR REPLACE FUNCTION cyclone.version() RETURNS text LANGUAGE sql AS $$ SELECT '9.0.0' $$")
    conn.commit()
    worker = _worker(dsn)
    worker.run_in_thread()
    try:
        assert worker.error is None
    finally:
        worker.stop()
