"""``python -m bench.console [--runs N]``: what the web console's pages cost
with a million runs in the database (docs/console.md; target: every page
under 100 ms).

In one fresh database, rows written directly (the states a real load leaves
behind, without running it; the finished runs then archived into their days,
as tick() does): 10 workflows; ``--runs`` runs (default
1,000,000) created two seconds apart over about 23 days, in runs of 100 per
workflow, 1 % failed with a dead letter each (in every workflow), 1 % running,
1 % cancelled, the rest completed, each with an idempotency key; an eleventh
workflow has none (a filter that matches nothing: the dead letters' worst
case, every one of them read). Each page is asked for over HTTP from the console served by
uvicorn in this process (the whole path: the socket, routing, the client's
calls, the templates), median of ``--samples`` requests after one warm-up. Page 1,000 of the runs is the
page after the cursor of row 49,950; its ratio to page 1 says whether a
keyset page costs the same wherever it starts (it must: about 1).

Prints a table and writes bench/results/console.json.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psycopg
import uvicorn

from bench import harness
from cyclone_py import db
from cyclone_py.client import Client
from cyclone_py.console.app import Settings, create_app, encode_cursor
from cyclone_py.console.server import bind, url_of

logger = logging.getLogger("bench.console")

TARGET_MS = 100.0

RUNS = """
INSERT INTO cyclone.cyclone_runs (id, workflow, state, created_at, started_at, finished_at, idempotency_key)
SELECT gen_random_uuid(), 'w' || (1 + (i / 100) %% 10), s.state, t.at, t.at,
       CASE WHEN s.state = 'running' THEN NULL ELSE t.at + interval '1 second' END, 'key-' || i
  FROM generate_series(%(lo)s::int, %(hi)s::int) i
 CROSS JOIN LATERAL (SELECT timestamptz '2026-11-01 00:00+00' + i * interval '2 seconds' AS at) t
 CROSS JOIN LATERAL (SELECT CASE i %% 100 WHEN 0 THEN 'failed' WHEN 1 THEN 'running' WHEN 2 THEN 'cancelled'
                                 ELSE 'completed' END AS state) s
"""

STEPS = """
INSERT INTO cyclone.cyclone_steps (run_id, workflow, node, handler, state, attempt, max_attempts, error,
                                   error_kind, started_at, finished_at)
SELECT r.id, r.workflow, 'a', 'a', 'discarded', 3, 3, 'Traceback (most recent call last):' || repeat(E'\\n  line', 20)
       || E'\\nRuntimeError: boom', (ARRAY['error', 'timeout', 'panic'])[1 + abs(hashtext(r.id::text)) % 3],
       r.finished_at, r.finished_at
  FROM cyclone.cyclone_runs r WHERE r.state = 'failed';
INSERT INTO cyclone.cyclone_steps (run_id, workflow, node, handler, state, deps, started_at, finished_at, error,
                                   error_kind)
SELECT r.id, r.workflow, 'b', 'b', 'cancelled', '{a}', NULL, r.finished_at, 'run failed', 'cancelled'
  FROM cyclone.cyclone_runs r WHERE r.state = 'failed';
INSERT INTO cyclone.cyclone_steps (run_id, workflow, node, handler, state)
SELECT r.id, r.workflow, 'a', 'a', 'available' FROM cyclone.cyclone_runs r WHERE r.state = 'running';
"""


def populate(dsn: str, runs: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        for i in range(1, 12):  # w11 has no runs: a filter that matches nothing
            c.execute("SELECT cyclone.define_workflow(%s, %s)",
                      (f"w{i}", '{"nodes": [{"name": "a"}, {"name": "b", "deps": ["a"]}]}'))
        chunk = 200_000
        for lo in range(1, runs + 1, chunk):
            with harness.timed(f"runs {lo:,}..{min(lo + chunk - 1, runs):,}"):
                c.execute(RUNS, {"lo": lo, "hi": min(lo + chunk - 1, runs)})
        for statement in STEPS.split(";\n"):
            if statement.strip():
                c.execute(statement)
        with harness.timed("archive the finished runs"):
            harness.archive_finished(c)
        with harness.timed("vacuum analyze"):
            c.execute("VACUUM ANALYZE cyclone.cyclone_runs, cyclone.cyclone_steps")


def cursor_at(dsn: str, query: str, offset: int) -> str:
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute(query + " OFFSET %s LIMIT 1", (offset,)).fetchone()
    assert row is not None, f"fewer than {offset + 1} rows: use more --runs"
    return quote(str(encode_cursor((row[0], row[1]))))


def pages(dsn: str) -> dict[str, str]:
    runs_order = "SELECT created_at, id FROM cyclone.cyclone_runs {} ORDER BY created_at DESC, id DESC"
    dlq_order = ("SELECT finished_at, id FROM cyclone.cyclone_steps WHERE state = 'discarded' {} "
                 "ORDER BY finished_at DESC, id DESC")
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute("SELECT id::text FROM cyclone.cyclone_runs WHERE state = 'failed' LIMIT 1").fetchone()
        assert row is not None
        failed = row[0]
        row = c.execute("SELECT id::text FROM ONLY cyclone.cyclone_runs WHERE state = 'running' LIMIT 1").fetchone()
        assert row is not None
        running = row[0]
    deep = 49_950  # the first row of page 1,000 of 50 rows
    return {
        "overview": "/",
        "runs page 1": "/runs",
        "runs page 1000": f"/runs?after={cursor_at(dsn, runs_order.format(''), deep - 1)}",
        "runs workflow=w3": "/runs?workflow=w3",
        "runs workflow=w3 page 1000": "/runs?workflow=w3&after="
        + cursor_at(dsn, runs_order.format("WHERE workflow = 'w3'"), deep - 1),
        "runs state=failed": "/runs?state=failed",
        "runs state=failed page 100": "/runs?state=failed&after="
        + cursor_at(dsn, runs_order.format("WHERE state = 'failed'"), 4_949),
        "runs workflow=w3 state=running": "/runs?workflow=w3&state=running",
        "runs created range": "/runs?from=2026-11-10T00:00&until=2026-11-11T00:00",
        "runs idempotency key": "/runs?key=key-123456",
        "runs id starts with ab": "/runs?id=ab",
        "runs id starts with abcdef": "/runs?id=abcdef",
        "dead letters page 1": "/dead-letters",
        "dead letters page 100": "/dead-letters?after=" + cursor_at(dsn, dlq_order.format(""), 4_949),
        "dead letters kind=timeout": "/dead-letters?kind=timeout",
        "dead letters workflow=w3": "/dead-letters?workflow=w3",
        "dead letters workflow=w11 (none)": "/dead-letters?workflow=w11",
        "a failed run": f"/runs/{failed}",
        "a running run": f"/runs/{running}",
        "schedules": "/schedules",
        "limits": "/limits",
    }


def measure(dsn: str, samples: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with Client(dsn, min_size=1, max_size=4) as client:
        app = create_app(client, Settings(allow_actions=True))
        sock = bind("127.0.0.1", 0)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            while not server.started:
                time.sleep(0.05)
            with httpx.Client(base_url=url_of(sock).rstrip("/"), timeout=60) as http:
                for name, path in pages(dsn).items():
                    first = http.get(path)
                    assert first.status_code == 200, (name, path, first.status_code, first.text[:300])
                    times = []
                    for _ in range(samples):
                        t = time.perf_counter()
                        response = http.get(path)
                        times.append((time.perf_counter() - t) * 1000)
                        assert response.status_code == 200
                    out[name] = round(statistics.median(times), 1)
                    logger.info("%-32s %7.1f ms", name, out[name])
        finally:
            server.should_exit = True
            thread.join(10)
            sock.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.console", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="keep the database (its DSN is printed) to look into")
    parser.add_argument("--out", type=Path, default=harness.BENCH_DIR / "results" / "console.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s bench: %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    cluster = db.embedded()
    cluster.start()
    dbs = harness.Databases(cluster)
    try:
        dbs.drop_stale()
        dbs.deploy_template()
        dsn = dbs.fresh("console")
        populate(dsn, args.runs)
        times = measure(dsn, args.samples)
        if args.keep:
            dbs.created.remove(dsn.rsplit("dbname=", 1)[-1].split()[0])
            print(f"kept: {dsn}")
    finally:
        dbs.drop_all()
    slowest = max(times.values())
    result: dict[str, Any] = {
        "runs": args.runs, "samples": args.samples, "pages_ms": times, "slowest_ms": slowest,
        "runs_page_1000_vs_1": round(times["runs page 1000"] / times["runs page 1"], 2),
        "verdict": "pass" if slowest < TARGET_MS else "MISS",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    width = max(len(k) for k in times)
    print(f"console pages at {args.runs:,} runs (median of {args.samples}, ms; target < {TARGET_MS:g})")
    for name, ms in times.items():
        print(f"  {name:<{width}}  {ms:7.1f}")
    print(f"  runs page 1000 / page 1: {result['runs_page_1000_vs_1']}; slowest {slowest} ms: {result['verdict']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
