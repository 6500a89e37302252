"""``python -m bench.maps [--quick | --smoke]``: what map nodes (SPEC 16) cost, in SQL.

1. reach    the submit of a run whose root map fans out over n items (10,000 and
            100,000): the insert of the items in the submitting transaction.
            Target: at most 1 s for 100,000.
2. drain    one connection claims 100 steps and completes them with one
            complete_many, until nothing is left: 10,000 single-step runs (the
            baseline, same run), a map of 10,000 items, a map of 100,000 items.
            Targets: the 10,000-item map at least 0.8x the baseline's steps/s; the
            100,000-item map's time an item within 1.2x the 10,000-item map's.
3. fan_in   the complete() of a 10,000-item map's last item (it ends the map and
            builds its output) against the median complete() of its other items.
            Target: at most 50 ms.
4. completers  8 threads, each claiming one step and completing it alone, over one
            map of 2,000 items, and over 2,000 unrelated single-step runs: the
            p95 of the complete() calls. Target: the map's at most 2x the runs'.
5. chain    the same drain over runs of a 1,000-node chain, against runs of a
            1->8->1 DAG, the same number of steps: the time a step. Target: the
            chain's at most 1.2x the DAG's.

Prints one JSON object; not a timed test. The SQL path only: a worker's own costs
(decoding, handler threads) are bench/sections.py's.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import threading
import time
from typing import Any

from psycopg.types.json import Jsonb

from bench import harness
from cyclone_py import db

logger = logging.getLogger("bench.maps")

MAP_DEF = {"nodes": [{"name": "each", "kind": "map", "over": "input.items", "max_items": 100_000}]}


def _define(dsn: str) -> None:
    harness.define_workflows(dsn)
    with harness.connect(dsn) as c:
        c.execute("SELECT cyclone.define_workflow('bench_map', %s)", (Jsonb(MAP_DEF),))


def _submit_map(c: Any, n: int) -> float:
    """Submits one run of bench_map over n items; the seconds the submit took."""
    began = time.perf_counter()
    # true, not numbers: a list of 100,000 numbers is over the 1 MiB an input may be (4 bytes an element here).
    c.execute("SELECT cyclone.submit('bench_map', %s)", (Jsonb({"items": [True] * n}),))
    return time.perf_counter() - began


def _drain(c: Any, batch: int = 100) -> tuple[int, float]:
    """Claims and completes until nothing is claimable: (steps, seconds)."""
    steps, began = 0, time.perf_counter()
    while True:
        rows = c.execute("SELECT step_id, lease_generation FROM cyclone.claim('bench', NULL, %s)", (batch,)).fetchall()
        if not rows:
            return steps, time.perf_counter() - began
        c.execute("SELECT count(*) FROM cyclone.complete_many('bench', %s::bigint[], %s::bigint[], %s::jsonb[])",
                  ([r[0] for r in rows], [r[1] for r in rows], ["1"] * len(rows)))
        steps += len(rows)


def reach(dbs: harness.Databases, sizes: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in sizes:
        dsn = dbs.fresh(f"reach_{n}")
        try:
            _define(dsn)
            with harness.connect(dsn) as c:
                out[f"submit_s_{n}"] = round(_submit_map(c, n), 3)
        finally:
            dbs.drop(dsn)
    return out


def drain(dbs: harness.Databases, small: int, large: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    cases = (("runs", small), ("map", small), ("map", large))
    for kind, n in cases:
        dsn = dbs.fresh(f"drain_{kind}_{n}")
        try:
            _define(dsn)
            with harness.connect(dsn) as c:
                if kind == "runs":
                    harness.noop_runs(c, n)
                else:
                    _submit_map(c, n)
                harness.analyze(c, "cyclone.cyclone_steps", "cyclone.cyclone_runs")
                steps, seconds = _drain(c)
                assert steps == n, (kind, n, steps)
                out[f"{kind}_{n}_steps_per_s"] = round(steps / seconds)
                out[f"{kind}_{n}_us_per_step"] = round(seconds / steps * 1e6, 1)
        finally:
            dbs.drop(dsn)
    out["map_vs_runs"] = round(out[f"map_{small}_steps_per_s"] / out[f"runs_{small}_steps_per_s"], 2)
    out["map_large_vs_small_per_item"] = round(out[f"map_{large}_us_per_step"] / out[f"map_{small}_us_per_step"], 2)
    return out


def fan_in(dbs: harness.Databases, n: int) -> dict[str, Any]:
    dsn = dbs.fresh("fan_in")
    try:
        _define(dsn)
        with harness.connect(dsn) as c:
            _submit_map(c, n)
            rows = c.execute("SELECT step_id, lease_generation FROM cyclone.claim('bench', NULL, %s)", (n,)).fetchall()
            times = []
            for step_id, generation in rows:
                began = time.perf_counter()
                c.execute("SELECT cyclone.complete(%s, 'bench', %s, '1')", (step_id, generation))
                times.append(time.perf_counter() - began)
            state = c.execute("SELECT state FROM cyclone.cyclone_steps WHERE item_index IS NULL AND node = 'each'"
                              ).fetchone()
            assert state == ("completed",), state
        return {"items": n, "last_item_complete_ms": round(times[-1] * 1000, 2),
                "item_complete_median_ms": round(statistics.median(times[:-1]) * 1000, 3)}
    finally:
        dbs.drop(dsn)


def completers(dbs: harness.Databases, n: int, threads: int = 8) -> dict[str, Any]:
    out: dict[str, Any] = {"steps": n, "threads": threads}
    for kind in ("runs", "map"):
        dsn = dbs.fresh(f"completers_{kind}")
        try:
            _define(dsn)
            with harness.connect(dsn) as c:
                if kind == "runs":
                    harness.noop_runs(c, n)
                else:
                    _submit_map(c, n)
                harness.analyze(c, "cyclone.cyclone_steps", "cyclone.cyclone_runs")
            latencies = _complete_concurrently(dsn, threads)
            out[f"{kind}_complete_p95_ms"] = round(harness.percentile(latencies, 95) * 1000, 3)
        finally:
            dbs.drop(dsn)
    out["map_vs_runs_p95"] = round(out["map_complete_p95_ms"] / out["runs_complete_p95_ms"], 2)
    return out


def _complete_concurrently(dsn: str, threads: int) -> list[float]:
    """``threads`` connections, each claiming one step and completing it alone until none is left: the
    seconds of every complete() call."""
    latencies: list[float] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        mine: list[float] = []
        with harness.connect(dsn) as conn:
            while True:
                row = conn.execute("SELECT step_id, lease_generation FROM cyclone.claim(%s)", (name,)).fetchone()
                if row is None:
                    break
                began = time.perf_counter()
                conn.execute("SELECT cyclone.complete(%s, %s, %s, '1')", (row[0], name, row[1]))
                mine.append(time.perf_counter() - began)
        with lock:
            latencies.extend(mine)

    pool = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return latencies


def chain(dbs: harness.Databases, length: int, steps: int) -> dict[str, Any]:
    """Drains runs of a chain of ``length`` nodes and runs of a 1->8->1 DAG, ``steps`` steps each way."""
    out: dict[str, Any] = {"chain_nodes": length, "steps": steps}
    shapes: dict[str, list[dict[str, Any]]] = {
        "chain": [{"name": f"n{i}", "deps": [f"n{i - 1}"] if i else []} for i in range(length)],
        "dag": ([{"name": "head"}] + [{"name": f"m{i}", "deps": ["head"]} for i in range(8)]
                + [{"name": "tail", "deps": [f"m{i}" for i in range(8)]}]),
    }
    for kind, nodes in shapes.items():
        dsn = dbs.fresh(f"chain_{kind}")
        try:
            _define(dsn)
            with harness.connect(dsn) as c:
                c.execute("SELECT cyclone.define_workflow(%s, %s)", (f"bench_{kind}", Jsonb({"nodes": nodes})))
                c.execute("SELECT cyclone.submit_many(%s, array_fill('{}'::jsonb, ARRAY[%s]))",
                          (f"bench_{kind}", max(1, steps // len(nodes))))
                harness.analyze(c, "cyclone.cyclone_steps", "cyclone.cyclone_runs")
                done, seconds = _drain(c)
                out[f"{kind}_us_per_step"] = round(seconds / done * 1e6, 1)
        finally:
            dbs.drop(dsn)
    out["chain_vs_dag"] = round(out["chain_us_per_step"] / out["dag_us_per_step"], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.maps", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (the numbers mean nothing)")
    parser.add_argument("--only", default="reach,drain,fan_in,completers,chain")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s bench: %(message)s", datefmt="%H:%M:%S")
    small, large, completed = ((100, 1_000, 200) if args.smoke else
                               (10_000, 30_000, 2_000) if args.quick else
                               (10_000, 100_000, 2_000))
    cluster = db.embedded()
    cluster.start()
    dbs = harness.Databases(cluster)
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count()}}
    try:
        dbs.drop_stale()
        dbs.deploy_template()
        only = args.only.split(",")
        if "reach" in only:
            results["reach"] = reach(dbs, [small, large])
        if "drain" in only:
            results["drain"] = drain(dbs, small, large)
        if "fan_in" in only:
            results["fan_in"] = fan_in(dbs, small)
        if "completers" in only:
            results["completers"] = completers(dbs, completed)
        if "chain" in only:
            results["chain"] = chain(dbs, 100 if args.smoke else 1_000, 200 if args.smoke else 5_000)
    finally:
        dbs.drop_all()
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
