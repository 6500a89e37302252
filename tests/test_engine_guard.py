"""The engine guard (scripts/engine_guard.py, scripts/engine-guard.sh): it sees each kind of drift.

A database loaded from sql/engine/ alone is the reference; each test copies it, plants one drift the way a
migration (or an engine edit without its migration) would, and checks that the guard reports that object.
The copies check and scripts/rework.py are tried on a small sqitch project of their own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from cyclone_py import db

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import engine_guard  # noqa: E402
import rework  # noqa: E402


def load_engine(dsn: str, engine: Path) -> None:
    """What scripts/load-engine.sh does: every file in name order, one transaction, psql stopping at errors."""
    files = [arg for f in sorted(engine.glob("*.sql")) for arg in ("-f", str(f))]
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-1", *files], env=db.pg_env(dsn), check=True,
                   stdout=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def engine_template(embedded_db: db.EmbeddedCluster) -> Iterator[tuple[str, engine_guard.Snapshot]]:
    """A database built from sql/engine/ alone (a template), and its snapshot."""
    name = f"cyclone_tpl_{os.getpid()}_engine"
    embedded_db.drop_database(name)
    dsn = embedded_db.create_database(name)
    try:
        load_engine(dsn, ROOT / "sql" / "engine")
        reference = engine_guard.snapshot(dsn)
        with embedded_db.admin() as c:
            c.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false IS_TEMPLATE true')
        yield name, reference
    finally:
        embedded_db.drop_database(name)


@pytest.fixture
def engine_copy(embedded_db: db.EmbeddedCluster,
                engine_template: tuple[str, engine_guard.Snapshot]) -> Iterator[str]:
    name = f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    dsn = embedded_db.create_database(name, template=engine_template[0])
    try:
        yield dsn
    finally:
        embedded_db.drop_database(name)


def test_a_copy_of_the_engine_has_no_difference(engine_copy: str,
                                                engine_template: tuple[str, engine_guard.Snapshot]) -> None:
    assert engine_guard.compare(engine_template[1], engine_guard.snapshot(engine_copy)) == []


# Each kind of drift the guard must see: the statement that plants it, and the object and aspect it reports.
DRIFTS = {
    "a body changed": (
        """DO $d$ BEGIN EXECUTE replace(pg_get_functiondef('cyclone.sweep(integer, integer)'::regprocedure),
                                        'BEGIN', E'BEGIN\\n    -- drifted'); END $d$""",
        "function cyclone.sweep(integer,integer) · body"),
    "a column added only by a migration": (
        "ALTER TABLE cyclone.cyclone_runs ADD COLUMN drifted int",
        "table cyclone.cyclone_runs · columns"),
    "a column moved to the end": (
        """ALTER TABLE cyclone.cyclone_signals RENAME COLUMN payload TO old_payload;
           ALTER TABLE cyclone.cyclone_signals ADD COLUMN payload jsonb;
           UPDATE cyclone.cyclone_signals SET payload = old_payload;
           ALTER TABLE cyclone.cyclone_signals DROP COLUMN old_payload""",
        "table cyclone.cyclone_signals · columns"),
    "a grant missing": (
        "REVOKE EXECUTE ON FUNCTION cyclone.renew(bigint, text, bigint, interval) FROM cyclone_worker",
        "function cyclone.renew(bigint,text,bigint,interval) · privileges"),
    "a table grant missing": (
        "REVOKE SELECT ON cyclone.cyclone_v_runs FROM cyclone_client",
        "view cyclone.cyclone_v_runs · privileges"),
    "a comment changed": (
        "COMMENT ON FUNCTION cyclone.now() IS 'drifted'",
        "function cyclone.now() · comment"),
    "an index option different": (
        "ALTER INDEX cyclone.cyclone_audit_run SET (fillfactor = 50)",
        "index cyclone.cyclone_audit_run · storage options"),
    "an index definition different": (
        """DROP INDEX cyclone.cyclone_audit_run;
           CREATE INDEX cyclone_audit_run ON cyclone.cyclone_audit (run_id)""",
        "index cyclone.cyclone_audit_run · definition"),
    "a table's storage option different": (
        "ALTER TABLE cyclone.cyclone_runs SET (fillfactor = 41)",
        "table cyclone.cyclone_runs · storage options"),
    "a constraint dropped": (
        "ALTER TABLE cyclone.clock DROP CONSTRAINT clock_singleton",
        "constraint cyclone.clock.clock_singleton · definition"),
    "a function's setting different": (
        "ALTER FUNCTION cyclone.metrics() RESET ALL",
        "function cyclone.metrics() · settings"),
    "a function no longer SECURITY DEFINER": (
        "ALTER FUNCTION cyclone.sweep(integer, integer) SECURITY INVOKER",
        "function cyclone.sweep(integer,integer) · attributes"),
    "a trigger dropped": (
        "DROP TRIGGER cyclone_steps_release_slots ON cyclone.cyclone_steps",
        "trigger cyclone.cyclone_steps.cyclone_steps_release_slots · definition"),
    "a view changed": (
        "ALTER VIEW cyclone.cyclone_v_runs RENAME COLUMN workflow TO drifted",
        "view cyclone.cyclone_v_runs · definition"),
    "a seed row different": (
        "UPDATE cyclone.clock SET time_offset = interval '1 second'",
        "table cyclone.clock · rows"),
    "a function only in the migrations": (
        "CREATE FUNCTION cyclone._drifted() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "function cyclone._drifted() · body"),
}


@pytest.mark.parametrize("kind", DRIFTS)
def test_the_guard_reports_each_kind_of_drift(kind: str, engine_copy: str,
                                              engine_template: tuple[str, engine_guard.Snapshot]) -> None:
    statement, expected = DRIFTS[kind]
    with psycopg.connect(engine_copy, autocommit=True) as c:
        c.execute(statement)
    reports = engine_guard.compare(engine_template[1], engine_guard.snapshot(engine_copy))
    assert [r for r in reports if r.startswith(expected + ":")], reports
    # The report names both versions (or says which side lacks the object).
    report = next(r for r in reports if r.startswith(expected + ":"))
    assert ("only in" in report) or ("sqitch" in report and "engine" in report)


# --- the copies check and scripts/rework.py, on a small project -------------------------------------------

PLAN = """%syntax-version=1.0.0
%project=mini

schema 2026-01-01T00:00:00Z Dev <dev@mini.invalid> # The schema.
greet [schema] 2026-01-01T00:00:01Z Dev <dev@mini.invalid> # greet().
@v1 2026-01-01T00:00:02Z Dev <dev@mini.invalid> # Release 1.
"""


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    """A released sqitch project whose change `greet` has an engine file."""
    (tmp_path / "sqitch.plan").write_text(PLAN)
    (tmp_path / "sqitch.conf").write_text("[core]\n\tengine = pg\n\ttop_dir = sql\n\tplan_file = sqitch.plan\n")
    for folder in ("deploy", "revert", "verify", "engine"):
        (tmp_path / "sql" / folder).mkdir(parents=True)
    (tmp_path / "sql" / "deploy" / "schema.sql").write_text("BEGIN;\nCREATE SCHEMA mini;\nCOMMIT;\n")
    (tmp_path / "sql" / "revert" / "schema.sql").write_text("BEGIN;\nDROP SCHEMA mini;\nCOMMIT;\n")
    (tmp_path / "sql" / "verify" / "schema.sql").write_text("SELECT 'mini'::regnamespace;\n")
    greet = "CREATE OR REPLACE FUNCTION mini.greet() RETURNS text LANGUAGE sql AS $$ SELECT 'hello' $$;"
    (tmp_path / "sql" / "deploy" / "greet.sql").write_text(f"-- Deploy mini:greet\nBEGIN;\n\n{greet}\n\nCOMMIT;\n")
    (tmp_path / "sql" / "revert" / "greet.sql").write_text("BEGIN;\nDROP FUNCTION mini.greet();\nCOMMIT;\n")
    (tmp_path / "sql" / "verify" / "greet.sql").write_text("SELECT 'mini.greet()'::regprocedure;\n")
    (tmp_path / "sql" / "engine" / "20_greet.sql").write_text(greet + "\n")
    return tmp_path


def test_copies_accepts_a_deploy_script_that_wraps_its_engine_file(mini: Path) -> None:
    assert engine_guard.copies(mini) == []


def test_copies_reports_an_engine_file_edited_without_its_rework(mini: Path) -> None:
    engine = mini / "sql" / "engine" / "20_greet.sql"
    engine.write_text(engine.read_text().replace("hello", "hi"))
    reports = engine_guard.copies(mini)
    assert len(reports) == 1 and "sql/engine/20_greet.sql" in reports[0] and "make rework CHANGE=greet" in reports[0]


def test_copies_reports_an_engine_file_named_after_no_change(mini: Path) -> None:
    (mini / "sql" / "engine" / "30_nothing.sql").write_text("SELECT 1;\n")
    (mini / "sql" / "engine" / "10_mini_tables.sql").write_text("CREATE TABLE mini.t (id int);\n")
    reports = engine_guard.copies(mini)
    assert len(reports) == 1 and "30_nothing.sql" in reports[0]


@pytest.mark.skipif(shutil.which("sqitch") is None, reason="sqitch is not installed")
def test_rework_writes_the_deploy_as_a_copy_and_the_revert_as_the_previous_deploy(mini: Path) -> None:
    previous_deploy = (mini / "sql" / "deploy" / "greet.sql").read_text()
    engine = mini / "sql" / "engine" / "20_greet.sql"
    engine.write_text(engine.read_text().replace("hello", "hi") + "\nCREATE OR REPLACE FUNCTION mini.wave("
                      "p_times int DEFAULT 1, p_to text DEFAULT '') RETURNS text LANGUAGE sql AS $$ SELECT 'o/' $$;\n")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "rework.py"), "greet", "greet says hi",
                    "--project", str(mini)], check=True, capture_output=True)
    plan = (mini / "sqitch.plan").read_text().splitlines()
    assert plan[-1].startswith("greet [greet@v1") and plan[-1].endswith("# greet says hi")
    assert (mini / "sql" / "deploy" / "greet@v1.sql").read_text() == previous_deploy
    # The new version requires the previous one and what that required, and its header says so (test_sql_guards).
    assert "[greet@v1 schema]" in plan[-1]
    assert "-- requires: greet@v1 schema\n" in (mini / "sql" / "deploy" / "greet.sql").read_text()
    assert engine_guard.copies(mini) == []
    revert = (mini / "sql" / "revert" / "greet.sql").read_text()
    assert "DROP FUNCTION IF EXISTS mini.wave(int, text);" in revert
    assert "SELECT 'hello'" in revert and "SELECT 'hi'" not in revert


def test_rework_of_a_change_not_released_yet_writes_its_deploy_again(mini: Path) -> None:
    (mini / "sqitch.plan").write_text(PLAN.replace("@v1 2026", "@v0 2026").replace(
        "greet [schema]", "@v1 2026-01-01T00:00:00Z Dev <dev@mini.invalid> # r\ngreet [schema]").replace(
        "@v0 2026-01-01T00:00:02Z Dev <dev@mini.invalid> # Release 1.\n", ""))
    engine = mini / "sql" / "engine" / "20_greet.sql"
    engine.write_text(engine.read_text().replace("hello", "hey"))
    assert rework.main(["greet", "greet says hey", "--project", str(mini)]) == 0
    assert "SELECT 'hey'" in (mini / "sql" / "deploy" / "greet.sql").read_text()
    assert not (mini / "sql" / "deploy" / "greet@v1.sql").exists()
    assert engine_guard.copies(mini) == []
