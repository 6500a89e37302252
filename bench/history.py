"""``python -m bench.history [--quick] [--runs N] [--archive-runs N] [--history N]``:
the targets of issue #19 (finished runs in storage of their own), measured on
the history storage of sql/deploy/history.sql: finished runs and their steps
in per-UTC-day tables ``cyclone_runs_YYYY_MM_DD`` / ``cyclone_steps_YYYY_MM_DD``
(inheritance children of cyclone_runs and cyclone_steps, listed in
cyclone_history), which ``prune()`` drops whole.

1. prune    In a fresh database: the template run made (below; what it
            leaves in the live tables' indexes is the bench's, not the
            history's); ``tick()`` once, which makes today's and tomorrow's
            history tables (empty; they are in every size below); ``VACUUM
            ANALYZE``; the size of every table of schema cyclone
            (``pg_total_relation_size``: heap, TOAST and indexes; the day
            tables are tables of the schema, so they count, and a parent's
            size is its own rows only); ``--runs`` finished runs (default
            1,000,000) loaded into the tables of the days they finished on;
            ``VACUUM ANALYZE`` of the live and day tables;
            ``prune(interval '1 day', --prune-limit)`` called on a new
            connection until it returns 0, each call timed from the client
            (its commit included): each call drops up to 10 of the loaded
            days (prune's cap), the last finds nothing;
            ``VACUUM`` (not FULL) of every table of schema cyclone; the size
            again. Targets: the prune in under 1 s of statement time, the size
            after it within 1.2x of the size before the load, without REINDEX
            (none is measured: the history never was in the live tables'
            indexes). Before the timed calls, the first call once more in a
            transaction rolled back, under auto_explain (every statement,
            nested ones included) and track_functions: where its time goes,
            by function and by statement. Instrumented, and in the session
            that loaded the history (its caches warm): compare its parts, not
            its total with the timed call's.
2. archive  In a fresh database: the template run; ``tick()`` once; ``VACUUM
            ANALYZE``; the size of the live tables (``ONLY`` cyclone_runs and
            cyclone_steps); ``--archive-runs`` finished runs (default 100,000)
            loaded into the live tables, where runs finish; ``VACUUM
            ANALYZE``; the tables of the days they finished on made with
            ``_history_day()``, timed apart (in steady state tick() has made a
            day's tables the day before); ``archive(--archive-limit)`` called
            until it returns 0, each call timed from the client; ``VACUUM`` of
            the live tables; their size again, and its ratio to the size
            before the load. No target: issue #19 asks only that the drain
            keep 0.95x of today's throughput (tick() archives 5,000 runs a
            pass).
3. claim    ``claim(worker, NULL, 1)`` then ``complete`` of due one-step runs,
            one connection, client round trips, in a database with no history
            and in one with ``--history`` finished steps in day tables
            (default 10,000,000), the two alternating in ``--rounds`` rounds.
            Target: the p50 of claim + complete with the history within 1.2x
            of the p50 without.

The fourth target, drain throughput at least 0.95x of today's, is the drain
section of ``python -m bench`` (``drain_steps_s``); it is not repeated here.

The history in all three is one-step runs of ``bench_noop``, the drain's shape
(and the most runs for a number of steps): copies of one run that went through
submit, claim and complete, written with set-based INSERTs as the tables'
owner, as the other benches seed data. Every timestamp of the copy is shifted
so that the runs finished one after the other, evenly spread over the 30 days
that end 2 days ago, in that order (run ids random, step ids rising, from the
live table's identity). For prune and claim, each day's copies go straight
into that day's two tables (made by ``_history_day()``), one INSERT ... SELECT
per day and chunk, where ``archive()`` would have put them; for archive they go
into the live tables.

Full sizes take minutes (the history load most of it); ``--quick`` (20,000
runs to prune, 2,000 to archive, 200,000 steps of history) takes seconds.
Prints a table and writes bench/results/history.json.
"""

from __future__ import annotations

import argparse
import logging
import re
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from bench import harness, report
from bench.sections import _claim_latencies
from cyclone_py import db

logger = logging.getLogger("bench.history")

WORKFLOW = "bench_noop"
WORKER = "bench-history"
SPREAD = timedelta(days=30)  # the history's finish times, evenly spaced over this
NEWEST = timedelta(days=2)  # the last run of the history finished this long ago
CHUNK = 100_000  # runs a load statement (at most)
WARMUP = 20  # claim + complete round trips before the measured ones, on each side
TOP_STATEMENTS = 6  # statements of the profiled prune call printed

TARGETS = (
    report.Target("prune_s", "prune, statement time", "< 1 s", lambda v: v < 1),
    report.Target("size_ratio_after_prune", "size after prune / before load", "<= 1.2", lambda v: v <= 1.2),
    report.Target("claim_history_ratio", "claim+complete p50, history / empty", "<= 1.2", lambda v: v <= 1.2),
)

# Every table of schema cyclone, the day tables included (plain tables, relkind
# 'r'); pg_total_relation_size of a parent counts its own rows only.
SIZES = """
SELECT c.relname, pg_total_relation_size(c.oid), pg_indexes_size(c.oid),
       c.oid IN (SELECT h.runs FROM cyclone.cyclone_history h UNION ALL SELECT h.steps FROM cyclone.cyclone_history h)
  FROM pg_class c
 WHERE c.relnamespace = 'cyclone'::regnamespace AND c.relkind IN ('r', 'p')
 ORDER BY c.relname
"""

# The UTC days the runs lo to hi of the history finish on (the load
# statement's own expression for finished_at), and the first and last run of
# each: finish times rise with the run's number.
DAYS = """
SELECT cyclone._history_day_of(t.finished_at + (%(oldest)s::timestamptz + i * %(every)s::interval - t.finished_at)),
       min(i), max(i)
  FROM bench.tpl_runs t CROSS JOIN generate_series(%(lo)s::bigint, %(hi)s::bigint) i
 WHERE t.id = %(tpl)s
 GROUP BY 1 ORDER BY 1
"""

_DURATION = re.compile(r"duration: ([0-9.]+) ms")
_QUERY = re.compile(r"Query Text: (.*?)\n(?=[A-Z])", re.S)
_DAY_TABLE = re.compile(r"_\d{4}_\d{2}_\d{2}\b")


def _one(c: psycopg.Connection[Any], query: str, params: tuple[Any, ...] = ()) -> Any:
    row = c.execute(query, params).fetchone()
    assert row is not None
    return row[0]


# -- the history ----------------------------------------------------------------


def _template(c: psycopg.Connection[Any]) -> str:
    """One run of bench_noop through submit, claim and complete, copied into
    bench.tpl_runs and bench.tpl_steps (bench/sql/helpers.sql), then deleted
    from the engine's tables; its id."""
    run_id = harness.noop_runs(c, 1)
    rows = c.execute("SELECT step_id, lease_generation FROM cyclone.claim(%s, NULL, 1)", (WORKER,)).fetchall()
    if len(rows) != 1:
        raise RuntimeError(f"history: claimed {len(rows)} steps of the template run, not 1")
    c.execute("SELECT cyclone.complete(%s, %s, %s, '{\"n\": 0}')", (rows[0][0], WORKER, rows[0][1]))
    c.execute("INSERT INTO bench.tpl_runs SELECT * FROM ONLY cyclone.cyclone_runs WHERE id = %s", (run_id,))
    c.execute("INSERT INTO bench.tpl_steps SELECT * FROM ONLY cyclone.cyclone_steps WHERE run_id = %s", (run_id,))
    state = c.execute("SELECT state FROM bench.tpl_runs WHERE id = %s", (run_id,)).fetchone()
    if state != ("completed",):
        raise RuntimeError(f"history: the template run is {state}, not completed")
    c.execute("DELETE FROM ONLY cyclone.cyclone_steps WHERE run_id = %s", (run_id,))
    c.execute("DELETE FROM ONLY cyclone.cyclone_runs WHERE id = %s", (run_id,))
    c.execute("DELETE FROM cyclone.cyclone_archive_queue WHERE run_id = %s", (run_id,))
    return run_id


def _columns(c: psycopg.Connection[Any], table: str) -> list[tuple[str, bool]]:
    """The columns of ``table`` in order, and whether each is a timestamptz."""
    rows = c.execute(
        "SELECT attname, atttypid = 'timestamptz'::regtype FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (table,)).fetchall()
    return [(str(n), bool(t)) for n, t in rows]


def _copy_list(cols: list[tuple[str, bool]], alias: str, shift: sql.Composable,
               fixed: dict[str, sql.Composable]) -> tuple[sql.Composable, sql.Composable]:
    """The target columns and the select list of a copy of row ``alias``: the
    columns of ``fixed`` set to their expression, every timestamptz moved by
    ``shift`` (NULL stays NULL), the rest copied."""
    names = [sql.Identifier(n) for n, _ in cols]
    exprs: list[sql.Composable] = []
    for n, is_ts in cols:
        src = sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(n))
        exprs.append(fixed[n] if n in fixed else sql.SQL("{} + {}").format(src, shift) if is_ts else src)
    return sql.SQL(", ").join(names), sql.SQL(", ").join(exprs)


def _load_statement(c: psycopg.Connection[Any], runs_table: sql.Composable, steps_table: sql.Composable,
                    *, day: bool) -> sql.Composed:
    """One INSERT of the runs ``%(lo)s`` to ``%(hi)s`` of the history (copies of
    the template run ``%(tpl)s``, run i finished at ``%(oldest)s + i x
    %(every)s``) into ``runs_table``, and of their steps, in the runs' order,
    into ``steps_table``. Into a day's tables (``day``), the step ids are taken
    from the live table's identity, as archive() moves them; into the live
    table, the identity gives them."""
    runs = _columns(c, "cyclone.cyclone_runs")
    steps = _columns(c, "cyclone.cyclone_steps")
    fixed: dict[str, sql.Composable] = {"run_id": sql.SQL("r.id")}
    if day:
        seq = _one(c, "SELECT pg_get_serial_sequence('cyclone.cyclone_steps', 'id')")
        fixed["id"] = sql.SQL("nextval({}::regclass)").format(sql.Literal(seq))
    else:
        steps = [col for col in steps if col[0] != "id"]  # GENERATED ALWAYS
    run_cols, run_exprs = _copy_list(runs, "t", sql.SQL("x.shift"), {"id": sql.SQL("gen_random_uuid()")})
    step_cols, step_exprs = _copy_list(steps, "s", sql.SQL("(r.created_at - t.created_at)"), fixed)
    return sql.SQL("""
WITH t AS (SELECT * FROM bench.tpl_runs WHERE id = %(tpl)s),
r AS (
    INSERT INTO {runs_table} ({run_cols})
    SELECT {run_exprs}
      FROM t CROSS JOIN generate_series(%(lo)s::bigint, %(hi)s::bigint) i
     CROSS JOIN LATERAL (SELECT %(oldest)s::timestamptz + i * %(every)s::interval - t.finished_at AS shift) x
    RETURNING id, created_at
)
INSERT INTO {steps_table} ({step_cols})
SELECT {step_exprs}
  FROM r CROSS JOIN t JOIN bench.tpl_steps s ON s.run_id = t.id
 ORDER BY r.created_at, s.id
""").format(runs_table=runs_table, steps_table=steps_table, run_cols=run_cols, run_exprs=run_exprs,
            step_cols=step_cols, step_exprs=step_exprs)


def _day_tables(c: psycopg.Connection[Any], days: str, params: tuple[Any, ...] = ()) -> list[sql.Composable]:
    """The runs and steps tables (``cyclone._history_table()``'s names) of the
    days that ``days`` returns (SQL returning rows with a ``day`` column), in
    day order."""
    return [sql.SQL(str(n)) for (n,) in c.execute(
        f"SELECT cyclone._history_table(k, d.day) FROM {days} d, unnest(ARRAY['runs', 'steps']) k ORDER BY d.day, k",
        params).fetchall()]


def _history_tables(c: psycopg.Connection[Any]) -> list[sql.Composable]:
    """Every day's tables, runs and steps, as cyclone_history lists them."""
    return _day_tables(c, "cyclone.cyclone_history")


def load_history(c: psycopg.Connection[Any], runs: int, *, live: bool = False,
                 tpl: str | None = None) -> dict[str, Any]:
    """``runs`` finished one-step runs (copies of the template run ``tpl``,
    made here when None), at most ``CHUNK`` a statement: each day's into that
    day's tables (made by ``cyclone._history_day()``), or all into the live
    tables when ``live``. Then VACUUM ANALYZE of the live tables and every day
    table; checked (their number, where they are, ``check_invariants()``); how
    long it took."""
    if tpl is None:
        tpl = _template(c)
    live_runs, live_steps = sql.Identifier("cyclone", "cyclone_runs"), sql.Identifier("cyclone", "cyclone_steps")
    live_statement = _load_statement(c, live_runs, live_steps, day=False) if live else None
    day_statements: dict[Any, sql.Composed] = {}
    oldest = _one(c, "SELECT cyclone.now()") - NEWEST - SPREAD
    every = SPREAD / max(runs, 1)
    statements = 0
    t = time.perf_counter()
    for lo in range(0, runs, CHUNK):
        hi = min(lo + CHUNK, runs) - 1
        params = {"tpl": tpl, "lo": lo, "hi": hi, "oldest": oldest, "every": every}
        if live_statement is not None:
            c.execute(live_statement, params)
            statements += 1
        else:
            for day, day_lo, day_hi in c.execute(DAYS, params).fetchall():
                if day not in day_statements:
                    c.execute("SELECT cyclone._history_day(%s)", (day,))
                    day_runs, day_steps = _day_tables(c, "(SELECT %s::date AS day)", (day,))
                    day_statements[day] = _load_statement(c, day_runs, day_steps, day=True)
                c.execute(day_statements[day], {**params, "lo": day_lo, "hi": day_hi})
                statements += 1
        if lo // CHUNK % 10 == 9:
            logger.info("history: %s of %s runs loaded", f"{hi + 1:,}", f"{runs:,}")
    if live:  # queued for archive(), as ending them would have
        c.execute("INSERT INTO cyclone.cyclone_archive_queue (run_id, finished_at) "
                  "SELECT r.id, r.finished_at FROM ONLY cyclone.cyclone_runs r")
    insert_s = time.perf_counter() - t
    t = time.perf_counter()
    c.execute(sql.SQL("VACUUM ANALYZE {}").format(sql.SQL(", ").join([live_runs, live_steps, *_history_tables(c)])))
    vacuum_s = time.perf_counter() - t
    row = c.execute("SELECT (SELECT count(*) FROM cyclone.cyclone_runs WHERE state = 'completed'), "
                    "(SELECT count(*) FROM cyclone.cyclone_steps WHERE state = 'completed'), "
                    "(SELECT count(*) FROM ONLY cyclone.cyclone_runs), "
                    "(SELECT count(*) FROM ONLY cyclone.cyclone_steps)").fetchone()
    where = (runs, runs) if live else (0, 0)
    if row != (runs, runs, *where):
        raise RuntimeError(f"history: loaded {row}: not {runs} completed runs and steps, {where} of them live")
    broken = c.execute("SELECT invariant, detail::text FROM cyclone.check_invariants() LIMIT 3").fetchall()
    if broken:
        raise RuntimeError(f"history: the loaded rows break the engine's invariants: {broken}")
    logger.info("history: %s runs in %.1fs (%d INSERTs, %s), VACUUM ANALYZE %.1fs", f"{runs:,}", insert_s,
                statements, "live tables" if live else f"{len(day_statements)} days", vacuum_s)
    return {"into": "live tables" if live else "day tables", "days": len(day_statements), "statements": statements,
            "insert_s": round(insert_s, 1), "runs_s": round(runs / insert_s) if insert_s else None,
            "vacuum_analyze_s": round(vacuum_s, 1)}


def sizes(c: psycopg.Connection[Any]) -> dict[str, Any]:
    """Bytes of every table of schema cyclone (heap, TOAST and indexes), in
    total; of the live runs and steps (the parents' own rows) and their
    indexes; of the day tables."""
    rows = [(str(n), int(t), int(i), bool(h)) for n, t, i, h in c.execute(SIZES).fetchall()]
    by = {n: (t, i) for n, t, i, _ in rows}
    return {
        "total": sum(t for _, t, _, _ in rows),
        "indexes": sum(i for _, _, i, _ in rows),
        "runs": by["cyclone_runs"][0], "runs_indexes": by["cyclone_runs"][1],
        "steps": by["cyclone_steps"][0], "steps_indexes": by["cyclone_steps"][1],
        "live": by["cyclone_runs"][0] + by["cyclone_steps"][0],
        "history": sum(t for _, t, _, h in rows if h),
        "history_indexes": sum(i for _, _, i, h in rows if h),
        "history_tables": sum(1 for *_, h in rows if h),
        "tables": len(rows),
    }


def _in_mb(s: dict[str, Any]) -> dict[str, Any]:
    return {k: (v if k.endswith("tables") else harness.mb(v)) for k, v in s.items()}


def _before_load(c: psycopg.Connection[Any]) -> tuple[str, dict[str, Any]]:
    """The template run (``_template``: what it leaves in the live tables'
    indexes is the bench's, not the history's), tick() once (today's and
    tomorrow's history tables), VACUUM ANALYZE; the template's id, the sizes."""
    tpl = _template(c)
    c.execute("SELECT cyclone.tick()")
    c.execute("VACUUM ANALYZE")
    return tpl, sizes(c)


def _timed_until_zero(c: psycopg.Connection[Any], query: str, limit: int, bound: int) -> tuple[int, list[float]]:
    """``query`` (one int parameter, returns an int) called until it returns 0,
    each call timed from the client; the sum of what it returned, the times."""
    done = 0
    calls: list[float] = []
    while True:
        t = time.perf_counter()
        n = int(_one(c, query, (limit,)))
        calls.append(time.perf_counter() - t)
        done += n
        if n == 0:
            return done, calls
        if len(calls) > bound:
            raise RuntimeError(f"{query}: still returning rows after {len(calls)} calls ({done:,} in all)")


# -- 1. prune ------------------------------------------------------------------


PRUNE = "SELECT cyclone.prune(interval '1 day', %s)"


def prune_profile(c: psycopg.Connection[Any], limit: int) -> dict[str, Any]:
    """One prune call in a transaction rolled back, under auto_explain (every
    statement, nested ones included; this session only) and track_functions
    (the database's, ``harness.Databases.fresh(profile=True)``): the days it
    dropped, the time in each function (total and self), and each statement
    (day table names folded), slowest first. Statements auto_explain does
    not log (LOCK TABLE, DROP TABLE) are in the self time of their function."""
    notes: list[str] = []

    def note(d: psycopg.errors.Diagnostic) -> None:
        notes.append(d.message_primary or "")

    funcs = ("SELECT funcname, calls, total_time, self_time FROM pg_stat_xact_user_functions "
             "WHERE schemaname = 'cyclone'")
    c.add_notice_handler(note)
    c.execute("LOAD 'auto_explain'")
    for k, v in (("log_analyze", "on"), ("log_timing", "on"), ("log_nested_statements", "on"),
                 ("log_level", "notice")):
        c.execute(sql.SQL("SET auto_explain.{} = {}").format(sql.Identifier(k), sql.Literal(v)))
    c.execute("SET client_min_messages = notice")  # PGOPTIONS may say warning
    try:
        with c.transaction(force_rollback=True):
            days = _one(c, "SELECT count(*) FROM cyclone.cyclone_history")
            before = {str(r[0]): r[1:] for r in c.execute(funcs).fetchall()}
            c.execute("SET LOCAL auto_explain.log_min_duration = 0")
            t = time.perf_counter()
            pruned = int(_one(c, PRUNE, (limit,)))
            elapsed = time.perf_counter() - t
            c.execute("SET LOCAL auto_explain.log_min_duration = -1")
            after = c.execute(funcs).fetchall()
            days -= _one(c, "SELECT count(*) FROM cyclone.cyclone_history")
    finally:
        c.execute("SET auto_explain.log_min_duration = -1")
        c.execute("RESET client_min_messages")
        c.remove_notice_handler(note)
    functions: list[dict[str, Any]] = []
    for name, calls, total, self_ in after:
        b = before.get(str(name), (0, 0.0, 0.0))
        if calls - b[0] > 0:
            functions.append({"function": str(name), "calls": int(calls - b[0]),
                              "total_ms": round(float(total - b[1]), 1), "self_ms": round(float(self_ - b[2]), 1)})
    functions.sort(key=lambda f: -f["total_ms"])
    grouped: dict[str, list[float]] = {}
    for text in notes:
        m, q = _DURATION.search(text), _QUERY.search(text)
        if not m or not q:
            continue
        key = " ".join(_DAY_TABLE.sub("_<day>", q.group(1)).split())
        g = grouped.setdefault(key, [0, 0.0])
        g[0] += 1
        g[1] += float(m.group(1))
    statements = [{"statement": k, "calls": int(n), "ms": round(ms, 1)}
                  for k, (n, ms) in sorted(grouped.items(), key=lambda kv: -kv[1][1])]
    return {"runs": pruned, "days_dropped": int(days), "call_ms": round(elapsed * 1000, 1),
            "functions": functions, "statements": statements}


def prune(dbs: harness.Databases, runs: int, limit: int) -> dict[str, Any]:
    """``runs`` finished runs loaded into their days' tables, then prune(limit)
    until it returns 0; the size of schema cyclone before the load and after
    the prune and a VACUUM."""
    dsn = dbs.fresh("hprune", profile=True)
    try:
        harness.define_workflows(dsn)
        with harness.connect(dsn) as c:
            tpl, before = _before_load(c)
            load = load_history(c, runs, tpl=tpl)
            loaded = sizes(c)
            if loaded["history"] == 0:
                raise RuntimeError("prune: the day tables are not in the sizes")
            profile = prune_profile(c, limit)
            days_before = _one(c, "SELECT count(*) FROM cyclone.cyclone_history")
            with harness.connect(dsn) as timed:  # a new session: none of the profile's caches
                t = time.perf_counter()
                first = int(_one(timed, PRUNE, (limit,)))
                calls = [time.perf_counter() - t]
                days_left = _one(c, "SELECT count(*) FROM cyclone.cyclone_history") - days_before + load["days"]
                rest, more = _timed_until_zero(timed, PRUNE, limit, runs // limit + 10)
            calls += more
            pruned = first + rest
            logger.info("prune: %s runs in %d calls, %.3fs (the first %.3fs, %d of %d days left after it)",
                        f"{pruned:,}", len(calls), sum(calls), calls[0], days_left, load["days"])
            left = c.execute("SELECT (SELECT count(*) FROM cyclone.cyclone_runs), "
                             "(SELECT count(*) FROM cyclone.cyclone_steps), "
                             "(SELECT count(*) FROM cyclone.cyclone_history)").fetchone()
            if pruned != runs or left != (0, 0, days_before - load["days"]):
                days = [str(d) for (d,) in c.execute("SELECT day FROM cyclone.cyclone_history ORDER BY day")]
                raise RuntimeError(f"prune: {pruned} of {runs} runs pruned; {left} runs, steps and history days "
                                   f"left ({', '.join(days)}), not (0, 0, {days_before - load['days']})")
            tables = [sql.Identifier("cyclone", str(n)) for (n,) in c.execute(
                "SELECT relname FROM pg_class WHERE relnamespace = 'cyclone'::regnamespace AND relkind = 'r'")]
            t = time.perf_counter()
            c.execute(sql.SQL("VACUUM {}").format(sql.SQL(", ").join(tables)))
            vacuum_s = time.perf_counter() - t
            after = sizes(c)
    finally:
        dbs.drop(dsn)
    prune_s = sum(calls)
    return {
        "prune_runs": runs,
        "prune_limit": limit,
        "prune_days": load["days"],
        "prune_s": round(prune_s, 3),
        "prune_calls": len(calls),
        "prune_first_call_s": round(calls[0], 3),
        "prune_max_call_s": round(max(calls), 3),
        "prune_runs_s": round(runs / prune_s) if prune_s else None,
        "mb_before_load": harness.mb(before["total"]),
        "mb_after_load": harness.mb(loaded["total"]),
        "mb_after_prune": harness.mb(after["total"]),
        "size_ratio_after_prune": round(after["total"] / before["total"], 2),
        "vacuum_after_prune_s": round(vacuum_s, 3),
        "details": {
            "load": load,
            "prune_call_s": {"first": round(calls[0], 3), "median": round(statistics.median(calls), 3),
                             "last": round(calls[-1], 3)},
            "days_left_after_first_call": days_left,
            "mb": {"before_load": _in_mb(before), "after_load": _in_mb(loaded), "after_prune_vacuum": _in_mb(after)},
            "first_call_under_auto_explain": profile,
        },
    }


# -- 2. archive ----------------------------------------------------------------


ARCHIVE = "SELECT cyclone.archive(%s)"


def archive(dbs: harness.Databases, runs: int, limit: int) -> dict[str, Any]:
    """``runs`` finished runs loaded into the live tables, their days' tables
    made, then archive(limit) until it returns 0; the live tables' size before
    the load and after the archive and a VACUUM."""
    dsn = dbs.fresh("harchive")
    try:
        harness.define_workflows(dsn)
        with harness.connect(dsn) as c:
            tpl, before = _before_load(c)
            load = load_history(c, runs, live=True, tpl=tpl)
            loaded = sizes(c)
            t = time.perf_counter()
            days = _one(c, "SELECT count(cyclone._history_day(x.day)) FROM (SELECT DISTINCT "
                           "cyclone._history_day_of(r.finished_at) AS day FROM ONLY cyclone.cyclone_runs r) x")
            days_s = time.perf_counter() - t
            archived, calls = _timed_until_zero(c, ARCHIVE, limit, runs // limit + 10)
            logger.info("archive: %s runs in %d calls, %.3fs", f"{archived:,}", len(calls), sum(calls))
            left = c.execute("SELECT (SELECT count(*) FROM ONLY cyclone.cyclone_runs), "
                             "(SELECT count(*) FROM ONLY cyclone.cyclone_steps), "
                             "(SELECT count(*) FROM cyclone.cyclone_runs), "
                             "(SELECT count(*) FROM cyclone.cyclone_steps)").fetchone()
            if archived != runs or left != (0, 0, runs, runs):
                raise RuntimeError(f"archive: {archived} of {runs} runs archived; {left} live runs and steps, "
                                   f"and runs and steps in all, not (0, 0, {runs}, {runs})")
            broken = c.execute("SELECT invariant, detail::text FROM cyclone.check_invariants() LIMIT 3").fetchall()
            if broken:
                raise RuntimeError(f"archive: the archived rows break the engine's invariants: {broken}")
            t = time.perf_counter()
            c.execute("VACUUM cyclone.cyclone_runs, cyclone.cyclone_steps")
            vacuum_s = time.perf_counter() - t
            after = sizes(c)
    finally:
        dbs.drop(dsn)
    archive_s = sum(calls)
    return {
        "archive_runs": runs,
        "archive_limit": limit,
        "archive_s": round(archive_s, 3),
        "archive_calls": len(calls),
        "archive_max_call_s": round(max(calls), 3),
        "archive_runs_s": round(runs / archive_s) if archive_s else None,
        "mb_live_before_load": harness.mb(before["live"]),
        "mb_live_after_load": harness.mb(loaded["live"]),
        "mb_live_after_archive": harness.mb(after["live"]),
        "live_size_ratio_after_archive": round(after["live"] / before["live"], 2),
        "vacuum_after_archive_s": round(vacuum_s, 3),
        "details": {
            "load": load,
            "days": days,
            "days_made_s": round(days_s, 3),
            "archive_call_s": {"first": round(calls[0], 3), "median": round(statistics.median(calls), 3),
                               "last": round(calls[-1], 3)},
            "mb": {"before_load": _in_mb(before), "after_load": _in_mb(loaded), "after_archive_vacuum": _in_mb(after)},
        },
    }


# -- 3. claim latency ----------------------------------------------------------


def claim(dbs: harness.Databases, history: int, samples: int, rounds: int) -> dict[str, Any]:
    """claim(1) + complete round trips with no history and with ``history``
    finished steps; the sides alternate, each round in the other order."""
    dsns = {"empty": dbs.fresh("hclaim_empty"), "history": dbs.fresh("hclaim_history")}
    per_round = max(1, samples // rounds)
    measured: dict[str, dict[str, list[float]]] = {side: {"claim": [], "complete": []} for side in dsns}
    out: dict[str, Any] = {}
    try:
        conns = {side: harness.connect(dsn) for side, dsn in dsns.items()}
        try:
            for side, c in conns.items():
                harness.define_workflows(dsns[side])
                if side == "history":
                    out["load"] = load_history(c, history)
                    out["mb"] = _in_mb(sizes(c))
                harness.noop_runs(c, WARMUP + per_round * rounds)
                c.execute("VACUUM ANALYZE cyclone.cyclone_runs, cyclone.cyclone_steps")
                _claim_latencies(c, WARMUP)
            for r in range(rounds):
                for side in (("empty", "history") if r % 2 == 0 else ("history", "empty")):
                    claim_ms, complete_ms = _claim_latencies(conns[side], per_round)
                    measured[side]["claim"] += claim_ms
                    measured[side]["complete"] += complete_ms
        finally:
            for c in conns.values():
                c.close()
    finally:
        for dsn in dsns.values():
            dbs.drop(dsn)
    res: dict[str, Any] = {"history_steps": history, "claim_samples": per_round * rounds, "claim_rounds": rounds}
    for side, m in measured.items():
        both = [a + b for a, b in zip(m["claim"], m["complete"], strict=True)]
        res[f"claim_complete_p50_ms_{side}"] = round(harness.percentile(both, 50), 3)
        res[f"claim_complete_p95_ms_{side}"] = round(harness.percentile(both, 95), 3)
        out[f"claim_p50_ms_{side}"] = round(harness.percentile(m["claim"], 50), 3)
        out[f"complete_p50_ms_{side}"] = round(harness.percentile(m["complete"], 50), 3)
    res["claim_history_ratio"] = round(res["claim_complete_p50_ms_history"] / res["claim_complete_p50_ms_empty"], 3)
    res["claim_history_ratio_p95"] = round(res["claim_complete_p95_ms_history"] / res["claim_complete_p95_ms_empty"], 3)
    logger.info("claim + complete p50: %.3f ms empty, %.3f ms with %s finished steps (%.2fx)",
                res["claim_complete_p50_ms_empty"], res["claim_complete_p50_ms_history"], f"{history:,}",
                res["claim_history_ratio"])
    res["details"] = out
    return res


# -- the report ----------------------------------------------------------------


def _rows(results: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    s = results["sizes"]
    left = results.get("details", {}).get("prune", {}).get("days_left_after_first_call")
    days = f"leaves {left} of the {results.get('prune_days')} days loaded (10 a call)"
    return [
        ("prune, statement time", "prune_s", "s",
         f"{s['runs']:,} one-step runs in day tables, limit {s['prune_limit']:,}"),
        ("prune calls", "prune_calls", "", "the last one finds nothing"),
        ("prune, first call", "prune_first_call_s", "s", days),
        ("prune, largest call", "prune_max_call_s", "s", ""),
        ("prune rate", "prune_runs_s", "runs/s", ""),
        ("size before the load", "mb_before_load", "MB", "every table of schema cyclone, day tables and indexes "
         "included; after tick()"),
        ("size after the load", "mb_after_load", "MB", "after VACUUM ANALYZE"),
        ("size after prune + VACUUM", "mb_after_prune", "MB",
         f"VACUUM took {report._fmt(results.get('vacuum_after_prune_s'))} s"),
        ("  / before the load", "size_ratio_after_prune", "x", ""),
        ("archive, statement time", "archive_s", "s",
         f"{s['archive_runs']:,} finished runs in the live tables, limit {s['archive_limit']:,}"),
        ("archive calls", "archive_calls", "", "the last one finds nothing"),
        ("archive, largest call", "archive_max_call_s", "s", ""),
        ("archive rate", "archive_runs_s", "runs/s", "their days' tables made beforehand"),
        ("live tables before the load", "mb_live_before_load", "MB", "ONLY cyclone_runs and cyclone_steps"),
        ("live tables after the load", "mb_live_after_load", "MB", "after VACUUM ANALYZE"),
        ("live tables after archive + VACUUM", "mb_live_after_archive", "MB",
         f"VACUUM took {report._fmt(results.get('vacuum_after_archive_s'))} s"),
        ("  / before the load", "live_size_ratio_after_archive", "x", ""),
        ("claim+complete p50, no history", "claim_complete_p50_ms_empty", "ms",
         f"{results.get('claim_samples')} round trips a side, one connection"),
        ("claim+complete p50, history", "claim_complete_p50_ms_history", "ms",
         f"{s['history']:,} finished steps in day tables"),
        ("claim+complete p95, no history", "claim_complete_p95_ms_empty", "ms", ""),
        ("claim+complete p95, history", "claim_complete_p95_ms_history", "ms", ""),
        ("  p95 history / no history", "claim_history_ratio_p95", "x", ""),
    ]


def _profile_lines(prof: dict[str, Any]) -> list[str]:
    lines = [f"  prune's first call once more, rolled back, instrumented (compare the parts): "
             f"{prof['call_ms']:,.1f} ms, {prof['runs']:,} runs, {prof['days_dropped']} days dropped",
             f"    {'function':<28} {'calls':>6} {'total ms':>10} {'self ms':>10}"]
    for f in prof["functions"]:
        lines.append(f"    {f['function']:<28} {f['calls']:>6,} {f['total_ms']:>10,.1f} {f['self_ms']:>10,.1f}")
    lines.append("    (LOCK TABLE and DROP TABLE are in _drop_history_day's self time; auto_explain does not log them)")
    lines.append(f"    {'statement (slowest, nested ones included)':<80} {'calls':>6} {'ms':>10}")
    for st in prof["statements"][:TOP_STATEMENTS]:
        text = st["statement"] if len(st["statement"]) <= 80 else st["statement"][:77] + "..."
        lines.append(f"    {text:<80} {st['calls']:>6,} {st['ms']:>10,.1f}")
    return lines


def table(results: dict[str, Any]) -> str:
    """The printed table: measurements, then targets with pass/miss, then the
    profile of prune's first call."""
    mode = "quick: sizes too small to mean much" if results["quick"] else "full"
    lines = [f"Cyclone history bench, issue #19's targets on the history day tables ({mode})", ""]
    rows = _rows(results)
    w = max(len(r[0]) for r in rows)
    for label, key, unit, note in rows:
        if key not in results:  # a section not run
            continue
        lines.append(f"  {label:<{w}}  {report._fmt(results.get(key)):>10} {unit:<6} {note}")
    lines.append("")
    verdicts = report.verdicts(results, TARGETS)
    w2 = max(len(t.label) for t in TARGETS)
    for t in TARGETS:
        lines.append(f"  {t.label:<{w2}}  {report._fmt(results.get(t.key)):>8}   target {t.text:<8} {verdicts[t.key]}")
    lines.append("  drain throughput >= 0.95x today's: python -m bench --only drain (drain_steps_s)")
    prof = results.get("details", {}).get("prune", {}).get("first_call_under_auto_explain")
    if prof:
        lines += ["", *_profile_lines(prof)]
    if results.get("errors"):
        lines.append("")
        for name, err in results["errors"].items():
            lines.append(f"  section {name} FAILED: {err}")
    return "\n".join(lines)


SECTIONS = ("prune", "archive", "claim")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.history", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (seconds): 20,000 runs to prune, 2,000 to archive, 200,000 steps "
                             "of history")
    parser.add_argument("--runs", type=int, help="finished runs to prune (default 1,000,000; minutes)")
    parser.add_argument("--prune-limit", type=int, default=10_000, help="prune's p_limit (default 10,000)")
    parser.add_argument("--archive-runs", type=int, help="finished runs to archive (default 100,000)")
    parser.add_argument("--archive-limit", type=int, default=10_000, help="archive's p_limit (default 10,000)")
    parser.add_argument("--history", type=int, help="finished steps of history (default 10,000,000; minutes)")
    parser.add_argument("--samples", type=int, help="claim + complete round trips a side (default 2,000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds the two sides alternate in (default 5)")
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated: " + ",".join(SECTIONS))
    parser.add_argument("--out", type=Path, default=harness.BENCH_DIR / "results" / "history.json")
    args = parser.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    if unknown := [s for s in only if s not in SECTIONS]:
        parser.error(f"unknown section(s): {', '.join(unknown)}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s bench: %(message)s", datefmt="%H:%M:%S")
    runs = args.runs or (20_000 if args.quick else 1_000_000)
    archive_runs = args.archive_runs or (2_000 if args.quick else 100_000)
    history = args.history or (200_000 if args.quick else 10_000_000)
    samples = args.samples or (300 if args.quick else 2_000)
    cluster = db.embedded()
    cluster.start()
    admin_dsn = cluster.url("postgres")
    dbs = harness.Databases(cluster)
    results: dict[str, Any] = {
        "quick": args.quick,
        "sizes": {"runs": runs, "prune_limit": args.prune_limit, "archive_runs": archive_runs,
                  "archive_limit": args.archive_limit, "history": history, "samples": samples,
                  "rounds": args.rounds, "shape": f"one-step runs of {WORKFLOW}"},
        "machine": report.machine(admin_dsn),
        "load": {},
        "details": {},
    }
    errors: dict[str, str] = {}
    t0 = time.perf_counter()
    try:
        dbs.drop_stale()
        dbs.deploy_template()
        for name in only:
            before = report.load_snapshot(admin_dsn, harness.PREFIX)
            ts = time.perf_counter()
            try:
                out = (prune(dbs, runs, args.prune_limit) if name == "prune" else
                       archive(dbs, archive_runs, args.archive_limit) if name == "archive" else
                       claim(dbs, history, samples, args.rounds))
            except Exception as exc:
                logger.exception("section %s failed", name)
                errors[name] = f"{type(exc).__name__}: {exc}"
                continue
            results["details"][name] = out.pop("details", {})
            results["details"][name]["section_seconds"] = round(time.perf_counter() - ts, 1)
            results["load"][name] = {"before": before, "after": report.load_snapshot(admin_dsn, harness.PREFIX)}
            results.update(out)
    finally:
        dbs.drop_all()
    results["total_seconds"] = round(time.perf_counter() - t0, 1)
    results["verdicts"] = report.verdicts(results, TARGETS)
    if errors:
        results["errors"] = errors
    report.write(results, args.out)
    print()
    print(table(results))
    loads = "; ".join(f"{name} {v['before']['loadavg']} -> {v['after']['loadavg']}"
                      for name, v in results["load"].items())
    print(f"\n  load average {loads}; {results['total_seconds']:.0f}s total; written to {args.out}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
