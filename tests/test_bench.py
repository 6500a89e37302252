"""The benchmark's machinery, not its numbers: every section of ``python -m
bench`` runs, and the results file carries every key the performance issue
asks for (docs/performance.md). Tiny sizes (``--smoke``): about 15 seconds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Every bench section, and the comparisons against a release: 10 to 40 s a test.
pytestmark = pytest.mark.slow

# The keys the performance issue requires of bench/results/latest.json.
KEYS = (
    "drain_steps_s", "raw_jobs_s", "drain_ratio_vs_raw", "dag_steps_s", "dag_ratio",
    "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "sql_tps", "pgbench_tps",
    "sql_ratio_vs_pgbench", "claim_ms_10k", "claim_ms_1m", "claim_1m_vs_10k", "claim_filter_vs_unfiltered",
    "size_ratio_after_prune", "tick_ms_no_schedules", "tick_ms_1000_schedules", "tick_1000_schedules_vs_none",
    "metrics_ms", "metrics_history_ratio", "metrics_dead_letters_ratio",
    "submit_runs_s", "submit_ratio_vs_raw", "submit_many_runs_s", "submit_many_ratio_vs_raw",
    "drain_async_steps_s", "drain_async_ratio_vs_raw", "cpu_ms_per_step",
    "xmin_clean_steps_s", "xmin_held_steps_s", "xmin_held_ratio",
)
# The figures of ``python -m bench.history`` (issue #19's targets, and archive).
HISTORY_KEYS = (
    "prune_s", "prune_calls", "prune_first_call_s", "prune_max_call_s", "prune_runs_s", "mb_before_load",
    "mb_after_load", "mb_after_prune", "size_ratio_after_prune", "vacuum_after_prune_s",
    "archive_s", "archive_calls", "archive_max_call_s", "archive_runs_s", "mb_live_before_load",
    "mb_live_after_load", "mb_live_after_archive", "live_size_ratio_after_archive", "vacuum_after_archive_s",
    "claim_complete_p50_ms_empty", "claim_complete_p95_ms_empty", "claim_complete_p50_ms_history",
    "claim_complete_p95_ms_history", "claim_history_ratio", "claim_history_ratio_p95",
)
TARGETS = (
    "drain_ratio_vs_raw", "drain_async_ratio_vs_raw", "cpu_ms_per_step", "dag_ratio", "latency_p50_ms",
    "latency_p95_ms", "sql_ratio_vs_pgbench",
    "claim_1m_vs_10k", "claim_filter_vs_unfiltered", "size_ratio_after_prune", "tick_ms_1000_schedules", "metrics_ms",
    "submit_ratio_vs_raw", "submit_many_ratio_vs_raw", "xmin_held_ratio",
)


def test_every_section_runs_and_the_results_carry_every_key(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    results = json.loads(out.read_text())
    assert "errors" not in results
    for key in KEYS:
        assert isinstance(results[key], (int, float)) and results[key] > 0, key
    assert results["quick"] is True and results["smoke"] is True
    assert results["verdicts"].keys() == set(TARGETS)
    assert set(results["verdicts"].values()) <= {"pass", "MISS"}
    assert "smoke" in proc.stdout  # the printed table says its numbers mean nothing


def test_the_release_comparison_runs_both_sides() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.ab", "--ref", "HEAD", "--rounds", "1", "--smoke", "--drain", "60"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    summary = json.loads(proc.stdout[proc.stdout.index("\n{\n") + 1:])  # after the rounds
    assert (summary["A"], summary["B"]) == ("HEAD", "working tree")
    assert summary["sizes"]["drain"] == 60  # --drain sets the drain's size
    for key in ("submit_runs_s", "submit_many_runs_s", "drain_steps_s"):
        assert summary[key]["A_median"] > 0 and summary[key]["B_median"] > 0, key
    # The runs a drain leaves live are archived and their CPU counted (one round: the medians are its values).
    for side in ("A_median", "B_median"):
        assert summary["runs_live_after_drain"][side] >= 0
        assert summary["server_cpu_ms_per_step_with_archive"][side] >= summary["server_cpu_ms_per_step"][side] > 0
        assert 0 < summary["drain_to_history_steps_s"][side] <= summary["drain_steps_s"][side]


def test_the_metrics_cost_comparison_runs_both_sides() -> None:
    """``bench.metrics_cost``: a drain without and one with the worker's metrics
    (whose last scrape must have counted every step); about 6 seconds."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench.metrics_cost", "--rounds", "1", "--smoke"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    summary = json.loads(proc.stdout[proc.stdout.index("\n{\n") + 1:])  # after the rounds
    assert summary["steps_s"]["off_median"] > 0 and summary["steps_s"]["on_median"] > 0
    assert summary["steps_s"]["on_over_off"] > 0


def test_the_history_bench_reports_every_figure(tmp_path: Path) -> None:
    """``bench.history`` (issue #19's targets) at tiny sizes: every figure of
    the three sections is there, the history is in day tables that prune's
    first call drops, and the profile of that call names its functions."""
    out = tmp_path / "history.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.history", "--quick", "--runs", "3000", "--prune-limit", "1500",
         "--archive-runs", "500", "--archive-limit", "200", "--history", "5000", "--samples", "60",
         "--rounds", "2", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    results = json.loads(out.read_text())
    assert "errors" not in results
    for key in HISTORY_KEYS:
        assert isinstance(results[key], (int, float)) and results[key] > 0, key
    prune = results["details"]["prune"]
    assert results["prune_runs"] == 3000 and results["prune_days"] > 1
    days = results["prune_days"]  # 10 days a call, then a call that finds nothing
    assert results["prune_calls"] == -(-days // 10) + 1 and prune["days_left_after_first_call"] == max(days - 10, 0)
    assert prune["mb"]["after_load"]["history_tables"] == prune["mb"]["before_load"]["history_tables"] + 2 * (
        results["prune_days"])  # sizes() counts the day tables
    assert results["archive_runs"] == 500 and results["archive_calls"] == 4  # 200, 200, 100, then none left
    assert results["history_steps"] == 5000 and results["claim_samples"] == 60
    assert results["details"]["claim"]["load"]["into"] == "day tables"
    assert results["verdicts"].keys() == {"prune_s", "size_ratio_after_prune", "claim_history_ratio"}
    assert set(results["verdicts"].values()) <= {"pass", "MISS"}
    functions = {f["function"]: f for f in prune["first_call_under_auto_explain"]["functions"]}
    assert functions["_drop_history_day"]["calls"] == min(results["prune_days"], 10)
    assert "claim+complete p50, history / empty" in proc.stdout



def test_the_maps_bench_runs_every_section() -> None:
    """``python -m bench.maps --smoke``: SPEC 16's map measurements (issue 33), each with its ratio."""
    proc = subprocess.run([sys.executable, "-m", "bench.maps", "--smoke"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(proc.stdout)
    assert {"submit_s_100", "submit_s_1000"} <= set(results["reach"])
    assert {"map_vs_runs", "map_large_vs_small_per_item"} <= set(results["drain"])
    assert results["fan_in"]["last_item_complete_ms"] > 0
    assert results["completers"]["map_vs_runs_p95"] > 0
    assert results["chain"]["chain_vs_dag"] > 0


def test_the_limits_bench_measures_claims_in_many_keyed_buckets() -> None:
    """``python -m bench.limits --smoke --only buckets``: claim cost with many buckets of a keyed limit
    against the same backlog in 10 (issue 32's scale target)."""
    proc = subprocess.run([sys.executable, "-m", "bench.limits", "--smoke", "--only", "buckets"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(proc.stdout)["buckets"]
    assert results["steps"] == 200
    for key in ("claim_ms_few", "claim_ms_many", "claim10_ms_few", "claim10_ms_many", "ratio", "claim10_ratio"):
        assert results[key] > 0, key


def test_the_coordination_bench_runs_every_section() -> None:
    """``python -m bench.coordination --smoke``: SPEC 17's targets (issue 34), each measured in one run."""
    proc = subprocess.run([sys.executable, "-m", "bench.coordination", "--smoke"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(proc.stdout)
    assert results["emit"]["nodes"] == 100 and results["emit"]["emit_s"] > 0
    assert results["awaited"]["awaiters"] == 20 and results["awaited"]["end_vs_plain"] > 0
    assert results["debounce"]["debounced_vs_plain"] > 0


def test_the_progress_bench_compares_a_drain_with_and_without_progress() -> None:
    """``python -m bench.progress --smoke``: SPEC 16's progress target, a ratio of two drains."""
    proc = subprocess.run([sys.executable, "-m", "bench.progress", "--smoke"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(proc.stdout)
    assert results["ratio"] > 0 and results["drain_steps_s"] > 0 and results["progress_calls_s"] > 0
