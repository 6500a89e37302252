"""``python -m bench.coordination [--quick | --smoke]``: what coordination (SPEC 17) costs, in SQL.

1. emit      one emit_event() whose key 10,000 waiting event nodes (one a run) wait on: the
             statement's time, and its time a node. Target: well under a second.
2. awaited   the complete() that ends a run awaited by 1,000 await nodes (one a run): its
             time, against the median complete() of an unawaited single-step run in the same
             database. Target: well under a second.
3. debounce  submits through one connection: plain submit() against submit() with a debounce
             key, half of them folding into a run of their key (500 keys, 2 submits a key),
             interleaved in rounds. Target: a debounced submit at most 2x a plain one.

Prints one JSON object; not a timed test.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from typing import Any

from psycopg.types.json import Jsonb

from bench import harness
from cyclone_py import db

logger = logging.getLogger("bench.coordination")

WAITER = {"nodes": [{"name": "paid", "kind": "event", "key": "bench:{input.k}"}]}
EXPORT = {"nodes": [{"name": "dump", "handler": "bench_dump"}]}
AWAITER = {"nodes": [{"name": "done", "kind": "await", "run": "input.run"}]}
PLAIN = {"nodes": [{"name": "work", "handler": "bench_plain"}]}


def _define(dsn: str) -> None:
    with harness.connect(dsn) as c:
        for name, definition in (("bench_waiter", WAITER), ("bench_export", EXPORT), ("bench_awaiter", AWAITER),
                                 ("bench_plain", PLAIN)):
            c.execute("SELECT cyclone.define_workflow(%s, %s)", (name, Jsonb(definition)))


def emit(dbs: harness.Databases, n: int) -> dict[str, Any]:
    dsn = dbs.fresh("emit")
    _define(dsn)
    with harness.connect(dsn) as c:
        c.execute("SELECT cyclone.submit_many('bench_waiter', array_fill('{\"k\": 1}'::jsonb, ARRAY[%s]))", (n,))
        began = time.perf_counter()
        row = c.execute("SELECT cyclone.emit_event('bench:1', '{\"paid\": true}')").fetchone()
        took = time.perf_counter() - began
    assert row is not None and row[0] == n, row
    return {"nodes": n, "emit_s": round(took, 3), "per_node_us": round(took / n * 1e6, 1)}


def _complete_one(c: Any, handler: str) -> float:
    row = c.execute("SELECT step_id, lease_generation FROM cyclone.claim('bench', ARRAY[%s], 1)", (handler,)).fetchone()
    assert row is not None
    began = time.perf_counter()
    c.execute("SELECT cyclone.complete(%s, 'bench', %s, '{}')", (row[0], row[1]))
    return time.perf_counter() - began


def awaited(dbs: harness.Databases, n: int) -> dict[str, Any]:
    dsn = dbs.fresh("awaited")
    _define(dsn)
    with harness.connect(dsn) as c:
        plain = []
        for _ in range(21):
            c.execute("SELECT cyclone.submit('bench_plain')")
            plain.append(_complete_one(c, "bench_plain"))
        run = c.execute("SELECT cyclone.submit('bench_export')").fetchone()
        assert run is not None
        c.execute("SELECT cyclone.submit_many('bench_awaiter', array_fill(%s::jsonb, ARRAY[%s]))",
                  (Jsonb({"run": str(run[0])}), n))
        took = _complete_one(c, "bench_dump")
        done = c.execute("SELECT count(*) FROM cyclone.cyclone_steps WHERE kind = 'await' AND state = 'completed'")
        completed = done.fetchone()
    assert completed is not None and completed[0] == n, completed
    base = statistics.median(plain)
    return {"awaiters": n, "end_s": round(took, 3), "plain_complete_ms": round(base * 1e3, 3),
            "end_vs_plain": round(took / base, 1)}


def debounce(dbs: harness.Databases, keys: int, rounds: int = 5) -> dict[str, Any]:
    dsn = dbs.fresh("debounce")
    _define(dsn)
    plain: list[float] = []
    debounced: list[float] = []
    with harness.connect(dsn) as c:
        for r in range(rounds):
            began = time.perf_counter()
            for _ in range(2 * keys):
                c.execute("SELECT cyclone.submit('bench_plain', '{\"v\": 1}')")
            plain.append((time.perf_counter() - began) / (2 * keys))
            began = time.perf_counter()
            for i in range(2 * keys):
                c.execute("SELECT cyclone.submit('bench_plain', '{\"v\": 1}', p_debounce_key => %s,"
                          " p_debounce => '1 hour')", (f"r{r}:{i % keys}",))
            debounced.append((time.perf_counter() - began) / (2 * keys))
    p, d = statistics.median(plain), statistics.median(debounced)
    return {"submits_a_round": 2 * keys, "plain_us": round(p * 1e6, 1), "debounced_us": round(d * 1e6, 1),
            "debounced_vs_plain": round(d / p, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.coordination", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (the numbers mean nothing)")
    parser.add_argument("--only", default="emit,awaited,debounce")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s bench: %(message)s", datefmt="%H:%M:%S")
    waiters, awaiters, keys = ((100, 20, 20) if args.smoke else
                               (2_000, 200, 200) if args.quick else
                               (10_000, 1_000, 500))
    cluster = db.embedded()
    cluster.start()
    dbs = harness.Databases(cluster)
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count()}}
    try:
        dbs.drop_stale()
        dbs.deploy_template()
        only = args.only.split(",")
        if "emit" in only:
            results["emit"] = emit(dbs, waiters)
        if "awaited" in only:
            results["awaited"] = awaited(dbs, awaiters)
        if "debounce" in only:
            results["debounce"] = debounce(dbs, keys)
    finally:
        dbs.drop_all()
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
