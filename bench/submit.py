"""Section 9: what submitting costs against inserting the same rows raw.

In one fresh database, ``bench.raw_runs`` and ``bench.raw_steps`` are copies of
``cyclone_runs`` and ``cyclone_steps`` with everything a row insert pays for:
``LIKE … INCLUDING ALL`` (defaults, CHECK constraints, every index, partial
ones included) and the engine tables' foreign keys, as the catalog has them
(none since 0.23.0's hot_path_keys; before, to the workflows, and steps to
their runs). The raw side inserts exactly the rows ``submit`` wrote for a template
run of ``bench_noop`` (every column, as literals), the run and its step in one
statement: the cheapest way to write them, so the ratio is an upper bound on
what the engine's work adds (the definition's lookup, checks, the wake-up).

Both sides run under pgbench with prepared statements, alternating
cyclone, raw, raw, cyclone (each ``seconds`` long), so that the tables grow
alike and a change in the machine's load hits both:

- single: ``cyclone.submit('bench_noop', '{"n": 1}')`` per transaction, 10
  clients, against the raw statement per transaction;
- many: ``cyclone.submit_many`` of 1,000 inputs per transaction, 2 clients,
  against one raw statement inserting the same 1,000 runs and their steps.

The ratios are of rows per second (cyclone ÷ raw), medians of the two rounds.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

import psycopg

from bench import harness
from bench.harness import Databases

CLIENTS_SINGLE = 10
CLIENTS_MANY = 2
BATCH = 1_000

RAW_TABLES = """
CREATE TABLE bench.raw_runs (LIKE cyclone.cyclone_runs INCLUDING ALL);
CREATE TABLE bench.raw_steps (LIKE cyclone.cyclone_steps INCLUDING ALL);
"""


def _copy_foreign_keys(c: psycopg.Connection[Any]) -> None:
    """The engine tables' foreign keys on the copies, a reference to runs
    pointing at the raw runs."""
    rows = c.execute(
        "SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE contype = 'f' AND conrelid IN ('cyclone.cyclone_runs'::regclass, 'cyclone.cyclone_steps'::regclass)"
    ).fetchall()
    for table, definition in rows:
        copy = "bench.raw_runs" if table.endswith("cyclone_runs") else "bench.raw_steps"
        c.execute(f"ALTER TABLE {copy} ADD {definition.replace('cyclone.cyclone_runs(', 'bench.raw_runs(')}")


def _columns(c: psycopg.Connection[Any], table: str, skip: tuple[str, ...]) -> list[tuple[str, str]]:
    rows = c.execute(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped AND attname <> ALL (%s) "
        "ORDER BY attnum", (table, list(skip))).fetchall()
    return [(str(n), str(t)) for n, t in rows]


def _literals(c: psycopg.Connection[Any], table: str, cols: list[tuple[str, str]], where: str) -> list[str]:
    """Each column of the row as an SQL literal with its type."""
    select = ", ".join(f"quote_nullable({n}) || '::{t}'" for n, t in cols)
    row = c.execute(f"SELECT {select} FROM {table} WHERE {where}").fetchone()  # noqa: S608 (our own names)
    assert row is not None
    return [str(v) for v in row]


def _raw_scripts(c: psycopg.Connection[Any]) -> tuple[str, str]:
    """The raw statements: one run and its step as submit wrote them; 1,000
    runs and their steps as submit_many writes them (input {"n": i})."""
    run_id = c.execute("SELECT cyclone.submit('bench_noop', '{\"n\": 1}')").fetchone()
    assert run_id is not None
    run_cols = _columns(c, "cyclone.cyclone_runs", ("id",))
    step_cols = _columns(c, "cyclone.cyclone_steps", ("id", "run_id"))
    run_vals = _literals(c, "cyclone.cyclone_runs", run_cols, f"id = '{run_id[0]}'")
    step_vals = _literals(c, "cyclone.cyclone_steps", step_cols, f"run_id = '{run_id[0]}'")
    rc = ", ".join(n for n, _ in run_cols)
    sc = ", ".join(n for n, _ in step_cols)
    single = (f"WITH r AS (INSERT INTO bench.raw_runs (id, {rc}) VALUES (gen_random_uuid(), {', '.join(run_vals)}) "
              f"RETURNING id) INSERT INTO bench.raw_steps (run_id, {sc}) SELECT r.id, {', '.join(step_vals)} FROM r;")
    run_many = [("i.input" if n == "input" else v) for (n, _), v in zip(run_cols, run_vals, strict=True)]
    step_many = [("r.input" if n == "input" else v) for (n, _), v in zip(step_cols, step_vals, strict=True)]
    many = (f"WITH i AS (SELECT jsonb_build_object('n', g) AS input FROM generate_series(1, {BATCH}) g), "
            f"r AS (INSERT INTO bench.raw_runs (id, {rc}) SELECT gen_random_uuid(), {', '.join(run_many)} FROM i "
            f"RETURNING id, input) INSERT INTO bench.raw_steps (run_id, {sc}) "
            f"SELECT r.id, {', '.join(step_many)} FROM r;")
    return single, many


def _rows_per_second(dsn: str, script: str, clients: int, seconds: int, rows_per_xact: int) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".pgbench", delete=False) as f:
        f.write(script + "\n")
        path = Path(f.name)
    try:
        res = harness.pgbench(dsn, ["-n", "-f", str(path), "-c", str(clients), "-j", "2", "-T", str(seconds),
                             "-M", "prepared"])
    finally:
        path.unlink()
    return float(res["tps"]) * rows_per_xact


def submit(dbs: Databases, cfg: Any) -> dict[str, Any]:
    seconds = max(1, cfg.sql_seconds // 3)
    dsn = dbs.fresh("submit")
    try:
        harness.define_workflows(dsn)
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(RAW_TABLES)
            _copy_foreign_keys(c)
            raw_single, raw_many = _raw_scripts(c)
        ours_single = "SELECT cyclone.submit('bench_noop', '{\"n\": 1}');"
        ours_many = (f"SELECT count(*) FROM cyclone.submit_many('bench_noop', "
                     f"ARRAY(SELECT jsonb_build_object('n', g) FROM generate_series(1, {BATCH}) g));")
        cases = {"single": (ours_single, raw_single, CLIENTS_SINGLE, 1),
                 "many": (ours_many, raw_many, CLIENTS_MANY, BATCH)}
        rates: dict[str, dict[str, list[float]]] = {k: {"cyclone": [], "raw": []} for k in cases}
        for case, (ours, raw, clients, rows) in cases.items():
            for side in ("cyclone", "raw", "raw", "cyclone"):
                script = ours if side == "cyclone" else raw
                rates[case][side].append(_rows_per_second(dsn, script, clients, seconds, rows))
    finally:
        dbs.drop(dsn)
    med = {case: {side: statistics.median(v) for side, v in sides.items()} for case, sides in rates.items()}
    return {
        "submit_runs_s": round(med["single"]["cyclone"], 1),
        "submit_ratio_vs_raw": round(med["single"]["cyclone"] / med["single"]["raw"], 3),
        "submit_many_runs_s": round(med["many"]["cyclone"], 1),
        "submit_many_ratio_vs_raw": round(med["many"]["cyclone"] / med["many"]["raw"], 3),
        "details": {"submit": {"seconds_each": seconds, "clients_single": CLIENTS_SINGLE,
                               "clients_many": CLIENTS_MANY, "batch": BATCH, "rows_per_s": rates}},
    }
