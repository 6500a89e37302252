"""Targets, the printed table, the machine description and latest.json."""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

KEYS = (
    "drain_steps_s", "raw_jobs_s", "drain_ratio_vs_raw", "dag_steps_s", "dag_ratio",
    "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "sql_tps", "pgbench_tps",
    "sql_ratio_vs_pgbench", "claim_ms_10k", "claim_ms_1m", "claim_1m_vs_10k", "claim_filter_vs_unfiltered",
    "size_ratio_after_prune", "tick_ms_dead_letters", "tick_ms_no_schedules", "tick_ms_1000_schedules",
    "tick_1000_schedules_vs_none",
    "metrics_ms", "metrics_history_ratio", "metrics_dead_letters_ratio",
    "submit_runs_s", "submit_ratio_vs_raw", "submit_many_runs_s", "submit_many_ratio_vs_raw",
    "drain_async_steps_s", "drain_async_ratio_vs_raw", "cpu_ms_per_step",
    "xmin_clean_steps_s", "xmin_held_steps_s", "xmin_held_ratio",
)

SETTINGS = (
    "server_version", "shared_buffers", "work_mem", "effective_cache_size", "max_connections",
    "synchronous_commit", "fsync", "full_page_writes", "wal_level", "wal_buffers", "max_wal_size",
    "checkpoint_timeout", "autovacuum", "autovacuum_naptime", "jit", "random_page_cost",
    "shared_preload_libraries",
)


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    text: str
    ok: Callable[[float], bool]


TARGETS = (
    # The second performance round's targets (docs/performance.md).
    Target("drain_ratio_vs_raw", "drain / raw", ">= 6x", lambda v: v >= 6),
    Target("drain_async_ratio_vs_raw", "drain, async handlers / raw", ">= 5x", lambda v: v >= 5),
    Target("dag_ratio", "dag / drain", ">= 0.8", lambda v: v >= 0.8),
    Target("latency_p50_ms", "latency p50", "<= 2.5 ms", lambda v: v <= 2.5),
    Target("latency_p95_ms", "latency p95", "<= 4 ms", lambda v: v <= 4),
    Target("sql_ratio_vs_pgbench", "sql / pgbench -N", ">= 0.4", lambda v: v >= 0.4),
    Target("cpu_ms_per_step", "CPU a drained step", "<= 0.06 ms", lambda v: v <= 0.06),
    Target("claim_1m_vs_10k", "claim big / small", "<= 1.2", lambda v: v <= 1.2),
    Target("claim_filter_vs_unfiltered", "claim, workers' filters / none", "<= 1.2", lambda v: v <= 1.2),
    Target("size_ratio_after_prune", "size after prune", "<= 1.2 (within 20%)", lambda v: v <= 1.2),
    Target("tick_ms_1000_schedules", "tick, 1,000 schedules", "<= 20 ms", lambda v: v <= 20),
    Target("metrics_ms", "metrics() scrape", "<= 50 ms", lambda v: v <= 50),
    Target("submit_ratio_vs_raw", "submit / raw insert", ">= 0.9", lambda v: v >= 0.9),
    Target("submit_many_ratio_vs_raw", "submit_many / raw insert", ">= 0.8", lambda v: v >= 0.8),
    Target("xmin_held_ratio", "drain, xmin held / clean", ">= 0.7", lambda v: v >= 0.7),
)


def machine(dsn: str) -> dict[str, Any]:
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    with psycopg.connect(dsn, autocommit=True) as c:
        rows = c.execute("SELECT name, setting, unit FROM pg_settings WHERE name = ANY (%s)",
                         (list(SETTINGS),)).fetchall()
        version = c.execute("SELECT version()").fetchone()
    settings = {str(n): (f"{s} {u}" if u else str(s)) for n, s, u in rows}
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory_gb": round(mem_kb / 1048576, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "postgres": version[0] if version else None,
        "settings": settings,
    }


def load_snapshot(dsn: str, own_prefix: str) -> dict[str, Any]:
    """How busy the machine is: load average and the other sessions' activity."""
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute(
            "SELECT count(*) FILTER (WHERE state = 'active'), count(*) FROM pg_stat_activity "
            "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() "
            "AND coalesce(datname, '') NOT LIKE %s", (own_prefix + "%",)).fetchone()
    return {
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "other_sessions_active": int(row[0]) if row else None,
        "other_sessions": int(row[1]) if row else None,
    }


def verdicts(results: dict[str, Any], targets: Sequence[Target] = TARGETS) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in targets:
        v = results.get(t.key)
        out[t.key] = "n/a" if v is None else ("pass" if t.ok(float(v)) else "MISS")
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def table(results: dict[str, Any]) -> str:
    """The printed table: measurements, then targets with pass/miss."""
    size = "smoke: sizes too small to mean anything" if results.get("smoke") else (
        "quick" if results.get("quick") else "full")
    sizes = results.get("sizes", {})
    lines = [f"Cyclone bench ({size}; absolute numbers are noisy, ratios less so)", ""]
    rows = [
        ("drain (cyclone, 1 worker x10)", "drain_steps_s", "steps/s", f"{sizes.get('drain_runs')} single-step runs"),
        ("drain (raw SKIP LOCKED, 10 thr)", "raw_jobs_s", "jobs/s", "same db, same payload"),
        ("drain, async def handlers", "drain_async_steps_s", "steps/s", "same runs, same worker"),
        ("CPU a drained step", "cpu_ms_per_step", "ms", "worker + database, from /proc"),
        ("dag 1->8->1", "dag_steps_s", "steps/s", f"{sizes.get('dag_runs')} runs"),
        ("latency p50", "latency_p50_ms", "ms", "submit -> handler start"),
        ("latency p95", "latency_p95_ms", "ms", ""),
        ("latency p99", "latency_p99_ms", "ms", ""),
        ("sql claim+complete (pgbench)", "sql_tps", "tps", "10 clients, no Python"),
        ("pgbench -N", "pgbench_tps", "tps", "10 clients, same duration"),
        ("claim, small backlog", "claim_ms_10k", "ms", f"{sizes.get('scale_small')} available"),
        ("claim, big backlog", "claim_ms_1m", "ms", f"{sizes.get('scale_big')} available"),
        ("tick, dead-letter queue", "tick_ms_dead_letters", "ms", f"{sizes.get('dead_letters')} dead letters"),
        ("tick, no schedule", "tick_ms_no_schedules", "ms", ""),
        ("tick, 1,000 schedules", "tick_ms_1000_schedules", "ms", "none due"),
        ("metrics() scrape", "metrics_ms", "ms", f"{(sizes.get('drain_runs') or 0) * 100} finished steps"),
        ("submit (pgbench)", "submit_runs_s", "runs/s", "10 clients, one a transaction"),
        ("submit_many of 1,000 (pgbench)", "submit_many_runs_s", "runs/s", "2 clients"),
        ("drain, SQL, clean", "xmin_clean_steps_s", "steps/s",
         f"{(sizes.get('drain_runs') or 0) * 2} runs, 2 connections, best of 2"),
        ("drain, SQL, xmin held", "xmin_held_steps_s", "steps/s", "a REPEATABLE READ held throughout"),
    ]
    w = max(len(r[0]) for r in rows)
    for label, key, unit, note in rows:
        lines.append(f"  {label:<{w}}  {_fmt(results.get(key)):>10} {unit:<8} {note}")
    lines.append("")
    v = verdicts(results)
    w2 = max(len(t.label) for t in TARGETS)
    for t in TARGETS:
        lines.append(f"  {t.label:<{w2}}  {_fmt(results.get(t.key)):>8}   target {t.text:<22} {v[t.key]}")
    prof = results.get("details", {}).get("profile", {})
    if prof.get("loops"):
        lines.append("")
        lines.append("  hot path alone (one connection, no handler): us per step")
        for r in prof["loops"]:
            lines.append(f"    claim({r['batch']:>3}) + {r['complete']:<13} {r['steps_s']:>8,.0f} steps/s   "
                         f"claim {r['claim_us_per_step']:>7.1f}  complete {r['complete_us_per_step']:>7.1f}  "
                         f"commits/step {r['commits_per_step']:.2f}")
        for key, when in (("raw", "before"), ("raw_after", "after")):
            raw = prof.get(key)
            if raw:
                lines.append(f"    raw claim + complete ({when:<6}) {raw['jobs_s']:>8,.0f} jobs/s    "
                             f"claim {raw['claim_us_per_job']:>7.1f}  complete {raw['complete_us_per_job']:>7.1f}  "
                             f"commits/step 2.00")
    if results.get("errors"):
        lines.append("")
        for name, err in results["errors"].items():
            lines.append(f"  section {name} FAILED: {err}")
    return "\n".join(lines)


def write(results: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, sort_keys=False, default=str) + "\n")
