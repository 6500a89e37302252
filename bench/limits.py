"""``python -m bench.limits [--quick | --smoke] [--only held_back,buckets,drain]``: what limits (SPEC 12) cost.

1. held_back  claim latency (claim 1, then complete it, client round trip) with
              100,000 available steps held back by a saturated limit ahead of
              the claimable ones in claim order, vs the same claims with no
              held-back step. Target: at most 2x.
2. buckets    claim latency (claim 1 or 10, then complete them) under a keyed
              limit with 100,000 buckets, a step waiting in each, vs the same
              backlog in 10 buckets (issue 32: claim cost with 100,000 buckets
              of a keyed limit within 1.2x of the small case).
3. drain      10,000 single-step runs drained by one worker process
              (concurrency 10): no limit (the baseline, same run), a
              non-binding limit (concurrency 1,000; target: at least 0.8x), and
              a per-key limit (100 keys, concurrency 2 each); --rounds rounds
              (default 3), the cases in turn, the median ratio reported.

Steps' buckets are fixed at submit, so the runs are submitted while the
workflow names the limit; the worker then registers its own (unlimited)
definition, which changes nothing for them. Rates come from the steps' own
timestamps, as in bench/sections.py. Prints one JSON object; not a timed test.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
from typing import Any

from psycopg.types.json import Jsonb

from bench import harness
from bench.sections import _claim_latencies, _drain_with_worker
from cyclone_py import db

logger = logging.getLogger("bench.limits")

HELD_DEF = {"nodes": [{"name": "noop", "limits": [{"name": "held"}]}]}


def held_back(dbs: harness.Databases, held: int, free: int, samples: int) -> dict[str, Any]:
    out: dict[str, Any] = {"held_back": held, "samples": samples}
    for side in ("none", "held"):
        dsn = dbs.fresh(f"held_{side}")
        try:
            harness.define_workflows(dsn)
            with harness.connect(dsn) as c:
                if side == "held":
                    c.execute("SELECT cyclone.define_limit('held', 1)")
                    c.execute("SELECT cyclone.define_workflow('bench_held', %s)", (Jsonb(HELD_DEF),))
                    row = c.execute("SELECT cyclone.submit('bench_held', '{\"n\": 0}')").fetchone()
                    assert row is not None
                    harness.clone_runs(c, str(row[0]), held)
                    # Saturate: one step takes the one slot and keeps it.
                    taken = c.execute(
                        "SELECT count(*) FROM cyclone.claim('bench-holder', NULL, 1, '1 hour')").fetchone()
                    assert taken == (1,)
                # The claimable steps come after the held-back ones in claim order.
                harness.noop_runs(c, free)
                c.execute("VACUUM ANALYZE cyclone.cyclone_runs")
                c.execute("VACUUM ANALYZE cyclone.cyclone_steps")
                _claim_latencies(c, 20)  # warm the plan caches
                claim_ms, _ = _claim_latencies(c, samples)
                if side == "held":
                    left = c.execute("SELECT count(*) FROM cyclone.cyclone_steps WHERE state = 'available' "
                                     "AND queue_bucket <> 0").fetchone()
                    assert left is not None and left[0] == held, "the held-back steps stayed available"
            out[f"claim_ms_{side}"] = round(statistics.median(claim_ms), 3)
            out[f"claim_p95_ms_{side}"] = round(harness.percentile(claim_ms, 95), 3)
        finally:
            dbs.drop(dsn)
    out["ratio"] = round(out["claim_ms_held"] / out["claim_ms_none"], 3)
    logger.info("held_back: %.3f ms with %d held back vs %.3f ms with none: %.2fx",
                out["claim_ms_held"], held, out["claim_ms_none"], out["ratio"])
    return out


def buckets(dbs: harness.Databases, many: int, samples: int) -> dict[str, Any]:
    """Claims under one keyed limit (concurrency 5 a bucket) with ``many`` steps waiting, in ``many``
    buckets (one each) and in 10 (the small case)."""
    out: dict[str, Any] = {"steps": many, "samples": samples}
    definition = {"nodes": [{"name": "noop", "limits": [{"name": "tenant", "key": "t"}]}]}
    for side, keys in (("few", 10), ("many", many)):
        dsn = dbs.fresh(f"buckets_{side}")
        try:
            harness.define_workflows(dsn)
            with harness.connect(dsn) as c:
                c.execute("SELECT cyclone.define_limit('tenant', 5)")
                c.execute("SELECT cyclone.define_workflow('bench_noop', %s)", (Jsonb(definition),))
                for start in range(0, many, 10_000):
                    inputs = [Jsonb({"n": i, "t": f"t{i % keys}"}) for i in range(start, min(many, start + 10_000))]
                    c.execute("SELECT count(*) FROM cyclone.submit_many('bench_noop', %s)", (inputs,))
                c.execute("VACUUM ANALYZE cyclone.cyclone_runs")
                c.execute("VACUUM ANALYZE cyclone.cyclone_steps")
                c.execute("VACUUM ANALYZE cyclone.cyclone_buckets")
                _claim_latencies(c, 20)  # warm the plan caches
                one, _ = _claim_latencies(c, samples)
                ten, _ = _claim_latencies(c, max(1, samples // 10), limit=10)
            out[f"claim_ms_{side}"] = round(statistics.median(one), 3)
            out[f"claim10_ms_{side}"] = round(statistics.median(ten), 3)
        finally:
            dbs.drop(dsn)
    out["ratio"] = round(out["claim_ms_many"] / out["claim_ms_few"], 3)
    out["claim10_ratio"] = round(out["claim10_ms_many"] / out["claim10_ms_few"], 3)
    logger.info("buckets: claim(1) %.3f ms in %d buckets vs %.3f ms in 10: %.2fx; claim(10) %.2fx",
                out["claim_ms_many"], many, out["claim_ms_few"], out["ratio"], out["claim10_ratio"])
    return out


def _drain_once(dbs: harness.Databases, case: str, runs: int, timeout: float) -> float:
    limit_sql, make_input = _DRAIN_CASES[case]
    dsn = dbs.fresh(f"ldrain_{case}")
    try:
        harness.define_workflows(dsn)
        with harness.connect(dsn) as c:
            if limit_sql is not None:
                c.execute(limit_sql)
                c.execute("SELECT cyclone.define_workflow('bench_noop', %s)",
                          (Jsonb({"nodes": [{"name": "noop", "limits": _DRAIN_LIMITS[case]}]}),))
            for start in range(0, runs, 1000):
                c.execute("SELECT count(*) FROM cyclone.submit_many('bench_noop', %s)",
                          ([Jsonb(make_input(i)) for i in range(start, min(runs, start + 1000))],))
            if limit_sql is not None:
                limited = c.execute("SELECT count(*) FROM cyclone.cyclone_steps WHERE buckets <> '{}'").fetchone()
                assert limited == (runs,)
        res = _drain_with_worker(dsn, runs, runs, timeout)
        logger.info("drain %s: %.0f steps/s", case, res["steps_s"])
        return float(res["steps_s"])
    finally:
        dbs.drop(dsn)


_DRAIN_CASES: dict[str, tuple[str | None, Any]] = {
    "unlimited": (None, lambda i: {"n": i}),
    "non_binding": ("SELECT cyclone.define_limit('wide', 1000)", lambda i: {"n": i}),
    "per_key": ("SELECT cyclone.define_limit('tenant', 2)", lambda i: {"n": i, "tenant": f"t{i % 100}"}),
}
_DRAIN_LIMITS = {"non_binding": [{"name": "wide"}], "per_key": [{"name": "tenant", "key": "tenant"}]}


def drain(dbs: harness.Databases, runs: int, timeout: float, rounds: int) -> dict[str, Any]:
    """Each round drains every case once, in turn, so that a machine busy for a
    while slows all of them; a ratio is the median of the rounds' ratios."""
    out: dict[str, Any] = {"runs": runs, "rounds": rounds}
    rates: dict[str, list[float]] = {case: [] for case in _DRAIN_CASES}
    for _ in range(rounds):
        for case in _DRAIN_CASES:
            rates[case].append(_drain_once(dbs, case, runs, timeout))
    for case, values in rates.items():
        out[f"{case}_steps_s"] = round(statistics.median(values), 1)
    for case in ("non_binding", "per_key"):
        ratios = [limited / base for limited, base in zip(rates[case], rates["unlimited"], strict=True)]
        out[f"{case}_ratio"] = round(statistics.median(ratios), 3)
        out[f"{case}_ratios"] = [round(r, 3) for r in ratios]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.limits", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (the numbers mean nothing)")
    parser.add_argument("--only", default="held_back,buckets,drain")
    parser.add_argument("--rounds", type=int, default=None, help="drain rounds (default 3; 1 with --smoke)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s bench: %(message)s", datefmt="%H:%M:%S")
    held, free, samples, runs, many = ((200, 200, 50, 300, 200) if args.smoke else
                                       (100_000, 2_000, 300, 3_000, 10_000) if args.quick else
                                       (100_000, 5_000, 1_000, 10_000, 100_000))
    cluster = db.embedded()
    cluster.start()
    dbs = harness.Databases(cluster)
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count()}}
    try:
        dbs.drop_stale()
        dbs.deploy_template()
        only = args.only.split(",")
        if "held_back" in only:
            results["held_back"] = held_back(dbs, held, free, samples)
        if "buckets" in only:
            results["buckets"] = buckets(dbs, many, min(samples, many // 4))
        if "drain" in only:
            rounds = args.rounds or (1 if args.smoke else 3)
            results["drain"] = drain(dbs, runs, timeout=600, rounds=rounds)
    finally:
        dbs.drop_all()
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
