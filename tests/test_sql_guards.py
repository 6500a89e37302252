"""Guards over the sqitch project's text, so that its structure stays true:

- every change requires, directly, each change whose functions it calls
  (reworked changes such as ``claim [claim@v0.2.0]`` and their
  ``deploy/claim@v0.2.0.sql`` scripts included), and its deploy header's
  ``-- requires:`` line says the same as the plan;
- engine SQL (``sql/deploy/`` and ``sql/engine/``) reads time only through ``cyclone.now()``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqitch_project import (
    ROOT,
    called_functions,
    code,
    defined_functions,
    read_plan,
    requires_header,
    strip_comments,
)

TOP = ROOT / "sql"
PLAN = ROOT / "sqitch.plan"

# Ways to read the clock other than cyclone.now(); clock.sql defines it.
_CLOCK_READS = re.compile(
    r"(?<![\w.])(?:pg_catalog\.)?(?:now|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday)\s*\("
    r"|\b(?:current_timestamp|current_time|current_date|localtimestamp|localtime)\b",
    re.IGNORECASE,
)
_NOW_LITERAL = re.compile(r"'(?:now|today|tomorrow|yesterday)'", re.IGNORECASE)


def missing_requirements(top: Path, plan: Path) -> list[str]:
    """One line per call of a function whose change the caller does not require."""
    entries = read_plan(plan)
    scripts = [(entry, entry.script(top)) for entry in entries]
    owners: dict[str, set[str]] = {}
    for entry, path in scripts:
        for fn in defined_functions(path):
            owners.setdefault(fn, set()).add(entry.name)
    problems = []
    for entry, path in scripts:
        allowed = entry.dep_names | {entry.name}
        for fn in sorted(called_functions(path, set(owners))):
            if not owners[fn] & allowed:
                problems.append(
                    f"{path.relative_to(top)} calls cyclone.{fn}() of {' or '.join(sorted(owners[fn]))}, "
                    f"which {entry.name} does not require"
                )
    return problems


def header_mismatches(top: Path, plan: Path) -> list[str]:
    problems = []
    for entry in read_plan(plan):
        path = entry.script(top)
        header = requires_header(path)
        if header is None:
            problems.append(f"{path.relative_to(top)} has no '-- requires:' line")
        elif sorted(header) != sorted(entry.deps):
            problems.append(f"{path.relative_to(top)} requires {header}, the plan says {entry.deps}")
    return problems


def clock_reads(top: Path) -> list[str]:
    problems = []
    scripts = sorted((top / "deploy").glob("*.sql")) + sorted((top / "engine").glob("*.sql"))
    for path in scripts:
        # The clock's own files: the deploy scripts of change clock, and its engine files.
        if path.name == "clock.sql" or path.name.startswith("clock@") or path.name.endswith(("_clock.sql",
                                                                                              "_clock_tables.sql")):
            continue
        text = strip_comments(path.read_text())
        for m in _NOW_LITERAL.finditer(text):
            problems.append(f"{path.name}: {m[0]} reads the clock; use cyclone.now()")
        for m in _CLOCK_READS.finditer(code(path)):
            problems.append(f"{path.name}: {m[0]} reads the clock; use cyclone.now()")
    return problems


# -- the project itself -------------------------------------------------------


def test_every_change_requires_the_changes_it_calls() -> None:
    assert missing_requirements(TOP, PLAN) == []


def test_deploy_headers_list_what_the_plan_requires() -> None:
    assert header_mismatches(TOP, PLAN) == []


def test_engine_sql_reads_time_only_through_cyclone_now() -> None:
    assert clock_reads(TOP) == []


def test_the_guards_see_every_change_and_function() -> None:
    # A parser that read nothing would pass the guards above.
    entries = read_plan(PLAN)
    assert {"schema", "clock", "checks", "runs", "advance", "claim", "tick"} <= {e.name for e in entries}
    assert all(e.script(TOP).exists() for e in entries)
    defined = set().union(*(defined_functions(e.script(TOP)) for e in entries))
    assert {"now", "_require", "_lock_run", "_advance", "claim", "tick"} <= defined
    tick = next(e for e in entries if e.name == "tick")
    assert {"sweep", "enforce_deadlines", "_lock_run", "now"} <= called_functions(tick.script(TOP), defined)


# -- the guards catch what they are for ---------------------------------------


def _project(tmp_path: Path, plan: str, scripts: dict[str, str]) -> tuple[Path, Path]:
    top = tmp_path / "sql"
    (top / "deploy").mkdir(parents=True)
    for name, text in scripts.items():
        (top / "deploy" / name).write_text(text)
    plan_path = tmp_path / "sqitch.plan"
    plan_path.write_text("%syntax-version=1.0.0\n%project=t\n\n" + plan)
    return top, plan_path


STAMP = "2026-01-01T00:00:00Z A <a@b.c>"
LOW = "-- requires: (none)\nCREATE OR REPLACE FUNCTION cyclone._low() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\n"


def test_a_call_into_a_change_not_required_is_reported(tmp_path: Path) -> None:
    top, plan = _project(tmp_path, f"low {STAMP}\nmid [low] {STAMP}\nhigh [mid] {STAMP}\n", {
        "low.sql": LOW,
        "mid.sql": "-- requires: low\nCREATE FUNCTION cyclone.mid() RETURNS int LANGUAGE sql AS $$ SELECT cyclone._low() $$;\n",  # noqa: E501 - a whole script on its line
        # high reaches low only through mid: not a direct requirement.
        "high.sql": "-- requires: mid\nCREATE FUNCTION cyclone.high() RETURNS int LANGUAGE plpgsql AS $$\n"
                    "BEGIN RETURN cyclone.mid() + _low(); END $$;\n",
    })
    assert missing_requirements(top, plan) == [
        "deploy/high.sql calls cyclone._low() of low, which high does not require"]


def test_calls_in_comments_strings_and_grants_are_not_calls(tmp_path: Path) -> None:
    top, plan = _project(tmp_path, f"low {STAMP}\nhigh {STAMP}\n", {
        "low.sql": LOW,
        "high.sql": "-- requires: (none)\n-- cyclone._low() is mentioned here only\n"
                    "CREATE FUNCTION cyclone.high() RETURNS text LANGUAGE sql AS $$ SELECT 'cyclone._low()' $$;\n"
                    "/* _low() */ COMMENT ON FUNCTION cyclone._low() IS 'x';\n"
                    "GRANT EXECUTE ON FUNCTION cyclone._low() TO someone;\n",
    })
    assert missing_requirements(top, plan) == []


def test_a_reworked_change_is_read_from_its_tagged_script(tmp_path: Path) -> None:
    plan_text = (
        f"low {STAMP}\nuser [low] {STAMP}\n@v0.2.0 {STAMP}\n"
        f"other {STAMP}\nuser [user@v0.2.0 other] {STAMP}\n"
    )
    top, plan = _project(tmp_path, plan_text, {
        "low.sql": LOW,
        "other.sql": "-- requires: (none)\nCREATE FUNCTION cyclone._other() RETURNS int LANGUAGE sql AS $$ SELECT 2 $$;\n",  # noqa: E501 - a whole script on its line
        # The released script calls low (which it required then) ...
        "user@v0.2.0.sql": "-- requires: low\nCREATE FUNCTION cyclone.u() RETURNS int LANGUAGE sql AS $$ SELECT cyclone._low() $$;\n",  # noqa: E501 - a whole script on its line
        # ... the rework calls other, and low, which it no longer requires.
        "user.sql": "-- requires: user@v0.2.0 other\n"
                    "CREATE FUNCTION cyclone.u() RETURNS int LANGUAGE sql AS $$ SELECT cyclone._other() + cyclone._low() $$;\n",  # noqa: E501 - a whole script on its line
    })
    entries = read_plan(plan)
    assert [(e.name, e.script(top).name) for e in entries] == [
        ("low", "low.sql"), ("user", "user@v0.2.0.sql"), ("other", "other.sql"), ("user", "user.sql")]
    assert entries[3].dep_names == {"user", "other"}
    assert missing_requirements(top, plan) == [
        "deploy/user.sql calls cyclone._low() of low, which user does not require"]
    assert header_mismatches(top, plan) == []


def test_a_header_that_disagrees_with_the_plan_is_reported(tmp_path: Path) -> None:
    top, plan = _project(tmp_path, f"low {STAMP}\nhigh [low] {STAMP}\n", {
        "low.sql": LOW, "high.sql": "-- Deploy high\n-- requires: (none)\nSELECT 1;\n"})
    assert header_mismatches(top, plan) == ["deploy/high.sql requires [], the plan says ['low']"]


@pytest.mark.parametrize("read", [
    "now()", "NOW ()", "pg_catalog.now()", "clock_timestamp()", "current_timestamp", "statement_timestamp()",
    "transaction_timestamp()", "localtimestamp", "'now'::timestamptz",
])
def test_every_way_to_read_the_clock_is_reported(tmp_path: Path, read: str) -> None:
    top, _ = _project(tmp_path, "", {"x.sql": f"SELECT {read};\n"})
    assert len(clock_reads(top)) == 1


def test_cyclone_now_and_mentions_in_comments_are_not_clock_reads(tmp_path: Path) -> None:
    top, _ = _project(tmp_path, "", {
        "clock.sql": "SELECT pg_catalog.now();\n",
        "x.sql": "-- now() is transaction time\nSELECT cyclone.now(), 'run deadline exceeded', s.known_at FROM t s;\n",
    })
    assert clock_reads(top) == []


def test_a_clock_read_in_an_engine_file_is_reported(tmp_path: Path) -> None:
    top, _ = _project(tmp_path, "", {})
    (top / "engine").mkdir()
    (top / "engine" / "02_clock.sql").write_text("SELECT pg_catalog.now();\n")
    (top / "engine" / "24_claim.sql").write_text("SELECT clock_timestamp();\n")
    assert clock_reads(top) == ["24_claim.sql: clock_timestamp( reads the clock; use cyclone.now()"]


# -- table changes deploy under load (issue 37) ------------------------------------------------

#: The tables every claim and report writes: a deploy must not hold them for longer than a catalog change.
HOT_TABLES = ("cyclone.cyclone_steps", "cyclone.cyclone_runs")
#: Table changes released before deploys under load were held to this (issue 37), left as they shipped.
_BEFORE_LOAD_RULES = "v0.21.0"


def load_unfriendly(top: Path, plan: Path) -> list[str]:
    """Table changes (hand-written deploy scripts, not copies of an engine file) planned after
    ``_BEFORE_LOAD_RULES``: an index on a hot table is built CONCURRENTLY, and a transaction that alters one
    sets lock_timeout, so that a deploy under load neither blocks claims for a table scan nor queues them
    behind a long transaction."""
    text = plan.read_text()
    after = text.split(f"@{_BEFORE_LOAD_RULES} ", 1)[1].split("\n", 1)[1]  # the lines after the tag's
    names = [line.split()[0] for line in after.splitlines() if line and not line.startswith(("@", "%", "#"))]
    problems = []
    for name in dict.fromkeys(names):
        script = top / "deploy" / f"{name}.sql"
        sql = script.read_text()
        if "A complete copy of sql/engine/" in sql:
            continue
        body = strip_comments(sql)
        for table in HOT_TABLES:
            for m in re.finditer(rf"CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?!CONCURRENTLY)[^;]*\bON\s+{re.escape(table)}\b",
                                 body, re.I):
                problems.append(f"{script.name}: an index on {table} not built CONCURRENTLY: {m.group()[:60]}")
        for block in re.findall(r"BEGIN;(.*?)COMMIT;", body, re.S):
            if re.search(rf"ALTER\s+TABLE\s+(?:ONLY\s+)?(?:{'|'.join(map(re.escape, HOT_TABLES))})\b", block, re.I) \
                    and "lock_timeout" not in block:
                problems.append(f"{script.name}: a transaction alters a hot table without lock_timeout")
    return problems


def test_table_changes_deploy_under_load() -> None:
    assert load_unfriendly(TOP, PLAN) == []


def test_the_load_guard_sees_a_blocking_index_and_an_unbounded_alter(tmp_path: Path) -> None:
    top = tmp_path / "sql"
    (top / "deploy").mkdir(parents=True)
    plan = tmp_path / "sqitch.plan"
    plan.write_text("%project=t\n\n@v0.21.0 2026-01-01T00:00:00Z A <a@b> # x\n"
                    "t_tables [] 2026-01-02T00:00:00Z A <a@b> # x\n")
    (top / "deploy" / "t_tables.sql").write_text(
        "BEGIN;\nALTER TABLE cyclone.cyclone_steps ADD COLUMN x int;\n"
        "CREATE INDEX x ON cyclone.cyclone_steps (x);\nCOMMIT;\n")
    assert len(load_unfriendly(top, plan)) == 2
    (top / "deploy" / "t_tables.sql").write_text(
        "BEGIN;\nSET LOCAL lock_timeout = '5s';\nALTER TABLE cyclone.cyclone_steps ADD COLUMN x int;\nCOMMIT;\n"
        "CREATE INDEX CONCURRENTLY x ON cyclone.cyclone_steps (x);\n")
    assert load_unfriendly(top, plan) == []
