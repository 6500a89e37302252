"""``python -m bench [--quick | --smoke] [--only drain,dag,...]``: run the benchmark.

Starts the embedded cluster if needed, deploys a template database with sqitch,
runs the sections in order in fresh databases, prints the table and writes
bench/results/latest.json. All databases it created are dropped at the end.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import harness, report, sections
from cyclone_py import db

logger = logging.getLogger("bench")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="same measurements at smaller sizes (< 2 minutes)")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, to check that every section runs (the numbers mean nothing)")
    parser.add_argument("--only", default=",".join(sections.SECTIONS),
                        help="comma-separated sections (default: all): " + ",".join(sections.SECTIONS))
    parser.add_argument("--out", type=Path, default=harness.BENCH_DIR / "results" / "latest.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s bench: %(message)s", datefmt="%H:%M:%S")
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in sections.SECTIONS]
    if unknown:
        parser.error(f"unknown section(s): {', '.join(unknown)}")

    cfg = sections.Config.make(args.quick, smoke=args.smoke)
    cluster = db.embedded()
    cluster.start()
    admin_dsn = cluster.url("postgres")
    dbs = harness.Databases(cluster)
    results: dict[str, Any] = {k: None for k in report.KEYS}
    results["quick"] = cfg.quick
    results["smoke"] = args.smoke
    results["started_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    results["sizes"] = {k: v for k, v in vars(cfg).items() if k != "quick"}
    results["machine"] = report.machine(admin_dsn)
    results["load_before"] = report.load_snapshot(admin_dsn, harness.PREFIX)
    results["details"] = {}
    errors: dict[str, str] = {}
    t0 = time.perf_counter()
    try:
        dbs.drop_stale()
        dbs.deploy_template()
        for name in only:
            logger.info("section %s", name)
            ts = time.perf_counter()
            try:
                out = sections.SECTIONS[name](dbs, cfg)
            except Exception as exc:
                logger.error("section %s failed: %s", name, exc)
                traceback.print_exc()
                errors[name] = f"{type(exc).__name__}: {exc}"
                continue
            results["details"][name] = out.pop("details", {})
            results["details"][name]["section_seconds"] = round(time.perf_counter() - ts, 1)
            results.update(out)
    finally:
        dbs.drop_all()
    if results.get("dag_steps_s") and results.get("drain_steps_s"):
        results["dag_ratio"] = round(results["dag_steps_s"] / results["drain_steps_s"], 3)
    results["load_after"] = report.load_snapshot(admin_dsn, harness.PREFIX)
    results["total_seconds"] = round(time.perf_counter() - t0, 1)
    results["verdicts"] = report.verdicts(results)
    if errors:
        results["errors"] = errors
    report.write(results, args.out)
    print()
    print(report.table(results))
    print(f"\n  load average before {results['load_before']['loadavg']}, after {results['load_after']['loadavg']}; "
          f"{results['total_seconds']:.0f}s total; written to {args.out}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
