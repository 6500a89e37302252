"""``python -m bench.history [--quick] [--runs N] [--history N]``: the targets
of issue #19 (finished runs in time-partitioned storage), measured on today's
engine: the baseline that change must beat.

1. prune  In a fresh database, the size of every table of schema cyclone
          (``pg_total_relation_size``: heap, TOAST and indexes); ``--runs``
          finished runs loaded (default 1,000,000); ``VACUUM ANALYZE``;
          ``prune(interval '1 day', --prune-limit)`` called until it returns
          0, each call timed from the client (its commit included); ``VACUUM``
          (not FULL); the size again, then after ``REINDEX TABLE`` of
          cyclone_runs and cyclone_steps (for reference only). Targets: the
          prune in under 1 s of statement time, the size after it within 1.2x
          of the size before the load, without REINDEX. Before the timed
          calls, one call at the limit and one at prune's default (1,000), each
          in a transaction rolled back, run under auto_explain: where a call's
          time goes (its plan, each foreign-key trigger).
2. claim  ``claim(worker, NULL, 1)`` then ``complete`` of due one-step runs,
          one connection, client round trips, in a database with no history
          and in one with ``--history`` finished steps (default 10,000,000),
          the two alternating in ``--rounds`` rounds. Target: the p50 of
          claim + complete with the history within 1.2x of the p50 without.

The third target, drain throughput at least 0.95x of today's, is the drain
section of ``python -m bench`` (``drain_steps_s``); it is not repeated here.

The history in both is one-step runs of ``bench_noop``, the drain's shape (and
the most runs for a number of steps): copies of one run that went through
submit, claim and complete, written with set-based INSERTs as the tables'
owner, as the other benches seed data. Every timestamp of the copy is shifted
so that the runs finished one after the other, evenly spread over the 30 days
that end 2 days ago, in that order (run ids random, step ids rising), each
finished run and its step in the indexes a finished run and step are in.

Full sizes take minutes (the history load most of it); ``--quick`` takes
seconds. Prints a table and writes bench/results/history.json.
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
CHUNK = 100_000  # runs a load statement
DEFAULT_LIMIT = 1_000  # prune's own p_limit
WARMUP = 20  # claim + complete round trips before the measured ones, on each side

TARGETS = (
    report.Target("prune_s", "prune, statement time", "< 1 s", lambda v: v < 1),
    report.Target("size_ratio_after_prune", "size after prune / before load", "<= 1.2", lambda v: v <= 1.2),
    report.Target("claim_history_ratio", "claim+complete p50, history / empty", "<= 1.2", lambda v: v <= 1.2),
)

SIZES = """
SELECT c.relname, pg_total_relation_size(c.oid), pg_indexes_size(c.oid)
  FROM pg_class c
 WHERE c.relnamespace = 'cyclone'::regnamespace AND c.relkind IN ('r', 'p')
 ORDER BY c.relname
"""

_TRIGGER = re.compile(r"Trigger for constraint (\S+) on (\S+): time=([0-9.]+) calls=([0-9]+)")
_DURATION = re.compile(r"duration: ([0-9.]+) ms")


def _connect(dsn: str) -> psycopg.Connection[Any]:
    return psycopg.connect(dsn, autocommit=True)


def _mb(n: int) -> float:
    return round(n / 1048576, 2)


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
    c.execute("INSERT INTO bench.tpl_runs SELECT * FROM cyclone.cyclone_runs WHERE id = %s", (run_id,))
    c.execute("INSERT INTO bench.tpl_steps SELECT * FROM cyclone.cyclone_steps WHERE run_id = %s", (run_id,))
    state = c.execute("SELECT state FROM bench.tpl_runs WHERE id = %s", (run_id,)).fetchone()
    if state != ("completed",):
        raise RuntimeError(f"history: the template run is {state}, not completed")
    c.execute("DELETE FROM cyclone.cyclone_runs WHERE id = %s", (run_id,))
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


def _load_statement(c: psycopg.Connection[Any]) -> sql.Composed:
    """One INSERT of the runs ``%(lo)s`` to ``%(hi)s`` of the history (copies of
    the template run ``%(tpl)s``, run i finished at ``%(oldest)s + i x
    %(every)s``) and of their steps, in the runs' order."""
    runs = _columns(c, "cyclone.cyclone_runs")
    steps = [col for col in _columns(c, "cyclone.cyclone_steps") if col[0] != "id"]  # GENERATED ALWAYS
    run_cols, run_exprs = _copy_list(runs, "t", sql.SQL("x.shift"), {"id": sql.SQL("gen_random_uuid()")})
    step_cols, step_exprs = _copy_list(steps, "s", sql.SQL("(r.created_at - t.created_at)"),
                                       {"run_id": sql.SQL("r.id")})
    return sql.SQL("""
WITH t AS (SELECT * FROM bench.tpl_runs WHERE id = %(tpl)s),
r AS (
    INSERT INTO cyclone.cyclone_runs ({run_cols})
    SELECT {run_exprs}
      FROM t CROSS JOIN generate_series(%(lo)s::bigint, %(hi)s::bigint) i
     CROSS JOIN LATERAL (SELECT %(oldest)s::timestamptz + i * %(every)s::interval - t.finished_at AS shift) x
    RETURNING id, created_at
)
INSERT INTO cyclone.cyclone_steps ({step_cols})
SELECT {step_exprs}
  FROM r CROSS JOIN t JOIN bench.tpl_steps s ON s.run_id = t.id
 ORDER BY r.created_at, s.id
""").format(run_cols=run_cols, run_exprs=run_exprs, step_cols=step_cols, step_exprs=step_exprs)


def load_history(c: psycopg.Connection[Any], runs: int) -> dict[str, Any]:
    """``runs`` finished one-step runs (``CHUNK`` a statement), then VACUUM
    ANALYZE; checked (their number, ``check_invariants()``); how long it took."""
    tpl = _template(c)
    statement = _load_statement(c)
    row = c.execute("SELECT cyclone.now()").fetchone()
    assert row is not None
    oldest = row[0] - NEWEST - SPREAD
    every = SPREAD / max(runs, 1)
    t = time.perf_counter()
    for lo in range(0, runs, CHUNK):
        hi = min(lo + CHUNK, runs) - 1
        c.execute(statement, {"tpl": tpl, "lo": lo, "hi": hi, "oldest": oldest, "every": every})
        if lo // CHUNK % 10 == 9:
            logger.info("history: %s of %s runs loaded", f"{hi + 1:,}", f"{runs:,}")
    insert_s = time.perf_counter() - t
    t = time.perf_counter()
    c.execute("VACUUM ANALYZE cyclone.cyclone_runs, cyclone.cyclone_steps")
    vacuum_s = time.perf_counter() - t
    row = c.execute("SELECT (SELECT count(*) FROM cyclone.cyclone_runs WHERE state = 'completed'), "
                    "(SELECT count(*) FROM cyclone.cyclone_steps WHERE state = 'completed')").fetchone()
    if row != (runs, runs):
        raise RuntimeError(f"history: loaded {row}, not {runs} completed runs and steps")
    broken = c.execute("SELECT invariant, detail::text FROM cyclone.check_invariants() LIMIT 3").fetchall()
    if broken:
        raise RuntimeError(f"history: the loaded rows break the engine's invariants: {broken}")
    logger.info("history: %s runs in %.1fs, VACUUM ANALYZE %.1fs", f"{runs:,}", insert_s, vacuum_s)
    return {"insert_s": round(insert_s, 1), "runs_s": round(runs / insert_s) if insert_s else None,
            "vacuum_analyze_s": round(vacuum_s, 1)}


def sizes(c: psycopg.Connection[Any]) -> dict[str, Any]:
    """Bytes of every table of schema cyclone (heap, TOAST and indexes), in
    total and for the runs and steps, and their indexes."""
    rows = [(str(n), int(t), int(i)) for n, t, i in c.execute(SIZES).fetchall()]
    by = {n: (t, i) for n, t, i in rows}
    return {
        "total": sum(t for _, t, _ in rows),
        "indexes": sum(i for _, _, i in rows),
        "runs": by["cyclone_runs"][0], "runs_indexes": by["cyclone_runs"][1],
        "steps": by["cyclone_steps"][0], "steps_indexes": by["cyclone_steps"][1],
        "tables": len(rows),
    }


def _in_mb(s: dict[str, Any]) -> dict[str, Any]:
    return {k: (v if k == "tables" else _mb(v)) for k, v in s.items()}


# -- 1. prune ------------------------------------------------------------------


def _prune_call(c: psycopg.Connection[Any], limit: int) -> tuple[int, float]:
    t = time.perf_counter()
    row = c.execute("SELECT cyclone.prune(interval '1 day', %s)", (limit,)).fetchone()
    elapsed = time.perf_counter() - t
    assert row is not None
    return int(row[0]), elapsed


def prune_profile(c: psycopg.Connection[Any], limit: int) -> dict[str, Any]:
    """One prune call under auto_explain (this session only), in a transaction
    rolled back: the time of its DELETE and of each foreign-key trigger it
    fires (the cascades to steps and the other tables), and its plan.
    Instrumented, so slower than a plain call."""
    notes: list[str] = []

    def note(d: psycopg.errors.Diagnostic) -> None:
        notes.append(d.message_primary or "")

    c.add_notice_handler(note)
    c.execute("LOAD 'auto_explain'")
    for k, v in (("log_min_duration", "10"), ("log_analyze", "on"), ("log_timing", "on"), ("log_triggers", "on"),
                 ("log_nested_statements", "on"), ("log_level", "notice")):
        c.execute(sql.SQL("SET auto_explain.{} = {}").format(sql.Identifier(k), sql.Literal(v)))
    try:
        with c.transaction(force_rollback=True):
            pruned, elapsed = _prune_call(c, limit)
    finally:
        c.execute("SET auto_explain.log_min_duration = -1")
        c.remove_notice_handler(note)
    out: dict[str, Any] = {"runs": pruned, "call_ms": round(elapsed * 1000, 1), "delete_ms": None, "triggers": [],
                           "plan": [], "delete_reads_every_run": None}
    for text in notes:
        if "Delete on cyclone_runs" not in text:
            continue
        m = _DURATION.search(text)
        out["delete_ms"] = round(float(m.group(1)), 1) if m else None
        out["triggers"] = [{"constraint": name, "on": table, "ms": round(float(ms), 1), "calls": int(calls)}
                           for name, table, ms, calls in _TRIGGER.findall(text)]
        plan = text.split("\n")
        out["plan"] = plan[next((i for i, line in enumerate(plan) if line.startswith("Aggregate")), 0):]
        out["delete_reads_every_run"] = any("Seq Scan on cyclone_runs" in line for line in plan)
    return out


def prune(dbs: harness.Databases, runs: int, limit: int) -> dict[str, Any]:
    dsn = dbs.fresh("hprune")
    try:
        harness.define_workflows(dsn)
        with _connect(dsn) as c:
            c.execute("VACUUM ANALYZE")
            before = sizes(c)
            load = load_history(c, runs)
            loaded = sizes(c)
            profiles = {lim: prune_profile(c, lim) for lim in dict.fromkeys((limit, DEFAULT_LIMIT))}
            calls: list[float] = []
            pruned = 0
            while True:
                n, elapsed = _prune_call(c, limit)
                calls.append(elapsed)
                pruned += n
                if n == 0:
                    break
            logger.info("prune: %s runs in %d calls, %.1fs", f"{pruned:,}", len(calls), sum(calls))
            left = c.execute("SELECT (SELECT count(*) FROM cyclone.cyclone_runs), "
                             "(SELECT count(*) FROM cyclone.cyclone_steps)").fetchone()
            if pruned != runs or left != (0, 0):
                raise RuntimeError(f"prune: {pruned} of {runs} runs pruned, {left} runs and steps left")
            t = time.perf_counter()
            c.execute("VACUUM cyclone.cyclone_runs, cyclone.cyclone_steps")
            vacuum_s = time.perf_counter() - t
            after = sizes(c)
            c.execute("REINDEX TABLE cyclone.cyclone_runs")
            c.execute("REINDEX TABLE cyclone.cyclone_steps")
            reindexed = sizes(c)
    finally:
        dbs.drop(dsn)
    prune_s = sum(calls)
    return {
        "prune_runs": runs,
        "prune_limit": limit,
        "prune_s": round(prune_s, 3),
        "prune_calls": len(calls),
        "prune_max_call_s": round(max(calls), 3),
        "prune_runs_s": round(runs / prune_s) if prune_s else None,
        "mb_before_load": _mb(before["total"]),
        "mb_after_load": _mb(loaded["total"]),
        "mb_after_prune": _mb(after["total"]),
        "size_ratio_after_prune": round(after["total"] / before["total"], 2),
        "mb_after_reindex": _mb(reindexed["total"]),
        "size_ratio_after_reindex": round(reindexed["total"] / before["total"], 2),
        "vacuum_after_prune_s": round(vacuum_s, 3),
        "details": {
            "load": load,
            "prune_call_s": {"first": round(calls[0], 3), "median": round(statistics.median(calls), 3),
                             "last_nonempty": round(calls[-2], 3) if len(calls) > 1 else None},
            "mb": {"before_load": _in_mb(before), "after_load": _in_mb(loaded), "after_prune_vacuum": _in_mb(after),
                   "after_reindex": _in_mb(reindexed)},
            "one_call_under_auto_explain": profiles[limit],
            "one_call_at_the_default_limit_under_auto_explain": profiles[DEFAULT_LIMIT],
        },
    }


# -- 2. claim latency ----------------------------------------------------------


def claim(dbs: harness.Databases, history: int, samples: int, rounds: int) -> dict[str, Any]:
    """claim(1) + complete round trips with no history and with ``history``
    finished steps; the sides alternate, each round in the other order."""
    dsns = {"empty": dbs.fresh("hclaim_empty"), "history": dbs.fresh("hclaim_history")}
    per_round = max(1, samples // rounds)
    measured: dict[str, dict[str, list[float]]] = {side: {"claim": [], "complete": []} for side in dsns}
    out: dict[str, Any] = {}
    try:
        conns = {side: _connect(dsn) for side, dsn in dsns.items()}
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
    vacuum = f"VACUUM took {report._fmt(results.get('vacuum_after_prune_s'))} s"
    return [
        ("prune, statement time", "prune_s", "s", f"{s['runs']:,} one-step runs, limit {s['prune_limit']:,}"),
        ("prune calls", "prune_calls", "", "the last one finds nothing"),
        ("prune, largest call", "prune_max_call_s", "s", ""),
        ("prune rate", "prune_runs_s", "runs/s", ""),
        ("size before the load", "mb_before_load", "MB", "every table of schema cyclone, indexes included"),
        ("size after the load", "mb_after_load", "MB", "after VACUUM ANALYZE"),
        ("size after prune + VACUUM", "mb_after_prune", "MB", vacuum),
        ("  / before the load", "size_ratio_after_prune", "x", ""),
        ("size after REINDEX TABLE", "mb_after_reindex", "MB", "runs and steps; for reference"),
        ("  / before the load", "size_ratio_after_reindex", "x", ""),
        ("claim+complete p50, no history", "claim_complete_p50_ms_empty", "ms",
         f"{results.get('claim_samples')} round trips a side, one connection"),
        ("claim+complete p50, history", "claim_complete_p50_ms_history", "ms", f"{s['history']:,} finished steps"),
        ("claim+complete p95, no history", "claim_complete_p95_ms_empty", "ms", ""),
        ("claim+complete p95, history", "claim_complete_p95_ms_history", "ms", ""),
        ("  p95 history / no history", "claim_history_ratio_p95", "x", ""),
    ]


def _profile_lines(prof: dict[str, Any], default: dict[str, Any] | None) -> list[str]:
    triggers = sum(t["ms"] for t in prof["triggers"])
    seq = "a sequential scan of every run" if prof["delete_reads_every_run"] else "no sequential scan"
    lines = [f"  one prune call of {prof['runs']:,} runs under auto_explain (instrumented: compare the parts)",
             f"    its DELETE {prof['delete_ms']:,.1f} ms: the plan {prof['delete_ms'] - triggers:,.1f} ms "
             f"({seq}), foreign-key triggers {triggers:,.1f} ms:"]
    for t in prof["triggers"]:
        lines.append(f"    {t['constraint']:<36} on {t['on']:<14} {t['ms']:>9,.1f} ms {t['calls']:>9,} calls")
    if default is not None and default is not prof and default.get("delete_ms") is not None:
        seq = "a sequential scan of every run" if default["delete_reads_every_run"] else "no sequential scan"
        lines.append(f"  at prune's default p_limit ({default['runs']:,} runs): {default['call_ms']:,.1f} ms, {seq}")
    return lines


def table(results: dict[str, Any]) -> str:
    """The printed table: measurements, then targets with pass/miss, then the
    profile of one prune call."""
    mode = "quick: sizes too small to mean much" if results["quick"] else "full"
    lines = [f"Cyclone history bench, issue #19's targets on today's engine ({mode})", ""]
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
    details = results.get("details", {}).get("prune", {})
    prof = details.get("one_call_under_auto_explain")
    if prof and prof.get("delete_ms") is not None:
        lines += ["", *_profile_lines(prof, details.get("one_call_at_the_default_limit_under_auto_explain"))]
    if results.get("errors"):
        lines.append("")
        for name, err in results["errors"].items():
            lines.append(f"  section {name} FAILED: {err}")
    return "\n".join(lines)


SECTIONS = ("prune", "claim")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.history", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (seconds; the smoke test's): 20,000 runs, 200,000 steps of history")
    parser.add_argument("--runs", type=int, help="finished runs to prune (default 1,000,000; minutes)")
    parser.add_argument("--prune-limit", type=int, default=10_000, help="prune's p_limit (default 10,000)")
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
    history = args.history or (200_000 if args.quick else 10_000_000)
    samples = args.samples or (300 if args.quick else 2_000)
    cluster = db.embedded()
    cluster.start()
    admin_dsn = cluster.url("postgres")
    dbs = harness.Databases(cluster)
    results: dict[str, Any] = {
        "quick": args.quick,
        "sizes": {"runs": runs, "prune_limit": args.prune_limit, "history": history, "samples": samples,
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
