"""One release number: the package's (``cyclone_py.__version__``), the engine's (``cyclone.version()``, SQL
change ``version``) and the plan's tags agree, so that a worker can tell which engine it talks to."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg

from cyclone_py import __version__

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
