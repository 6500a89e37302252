"""Section 8: what one scrape of ``cyclone.metrics()`` costs (SPEC 14).

In one fresh database, rows written directly (the states a real load leaves
behind, without running it; the finished runs then archived into their days,
as tick() does): 10 workflows, finished runs with one completed
step each, dead letters in failed runs, and live runs with one available or
running step and one pending step each. ``metrics()`` is timed (median) with the live
steps only, then with the finished history added (the ratio says whether a
scrape grows with history: it must not), then with the dead letters too (what
a scrape costs at the issue's scale: 1,000,000 finished and 100,000 live
steps, 10,000 dead letters; target under 50 ms; the second ratio says what
the dead letters add: their gauge reads their index and the failed runs'
index, never a run row a dead letter).
"""

from __future__ import annotations

from typing import Any

import psycopg

from bench import harness
from bench.harness import Databases

WORKFLOWS = 10

FINISHED = """
INSERT INTO cyclone.cyclone_runs (id, workflow, state, finished_at)
SELECT gen_random_uuid(), 'w' || (1 + i %% 10), 'completed', now() FROM generate_series(1, %(n)s) i;
INSERT INTO cyclone.cyclone_steps (run_id, workflow, node, handler, state, finished_at)
SELECT r.id, r.workflow, 'a', 'a', 'completed', now() FROM cyclone.cyclone_runs r WHERE r.state = 'completed';
"""

DEAD = """
WITH r AS (INSERT INTO cyclone.cyclone_runs (id, workflow, state, finished_at)
           SELECT gen_random_uuid(), 'w' || (1 + i %% 10), 'failed', now() FROM generate_series(1, %(n)s) i
           RETURNING id, workflow)
INSERT INTO cyclone.cyclone_steps (run_id, workflow, node, handler, state, finished_at, error, error_kind)
SELECT r.id, r.workflow, 'a', 'a', 'discarded', now(), 'boom',
       (ARRAY['error', 'timeout', 'panic'])[1 + abs(hashtext(r.id::text)) %% 3]
  FROM r;
"""

# Live runs: a available (one in five running, under one of eight workers), b pending.
LIVE = """
WITH r AS (INSERT INTO cyclone.cyclone_runs (id, workflow, state)
           SELECT gen_random_uuid(), 'w' || (1 + i %% 10), 'running' FROM generate_series(1, %(n)s) i
           RETURNING id, workflow)
INSERT INTO cyclone.cyclone_steps (run_id, workflow, node, handler, state)
SELECT r.id, r.workflow, v.n, v.n, CASE WHEN v.n = 'a' THEN 'available' ELSE 'pending' END
  FROM r CROSS JOIN (VALUES ('a'), ('b')) v(n);
UPDATE cyclone.cyclone_steps SET state = 'running', lease_owner = 'worker-' || (id %% 8),
       lease_expiry = now() + interval '30 seconds', started_at = now()
 WHERE state = 'available' AND id %% 5 = 0;
"""


def _run(c: psycopg.Connection[Any], script: str, n: int) -> None:
    for statement in script.split(";\n"):
        if statement.strip():
            c.execute(statement, {"n": n})


def _scrape_ms(c: psycopg.Connection[Any], samples: int) -> float:
    return harness.median_ms(c, "SELECT count(*) FROM cyclone.metrics()", samples, digits=2)


def metrics(dbs: Databases, cfg: Any) -> dict[str, Any]:
    # Full sizes (10,000 drain runs): 1,000,000 finished, 100,000 live steps, 10,000 dead letters.
    finished, live_runs, dead = cfg.drain_runs * 100, cfg.drain_runs * 5, cfg.drain_runs
    samples = 10 if cfg.quick else 20
    dsn = dbs.fresh("metrics")
    try:
        with psycopg.connect(dsn, autocommit=True) as c:
            for i in range(1, WORKFLOWS + 1):
                c.execute("SELECT cyclone.define_workflow(%s, %s)",
                          (f"w{i}", '{"nodes": [{"name": "a"}, {"name": "b", "deps": ["a"]}]}'))
            _run(c, LIVE, live_runs)
            c.execute("VACUUM ANALYZE cyclone.cyclone_runs, cyclone.cyclone_steps")
            live_only = _scrape_ms(c, samples)
            _run(c, FINISHED, finished)
            harness.archive_finished(c)
            c.execute("VACUUM ANALYZE cyclone.cyclone_runs, cyclone.cyclone_steps")
            history = _scrape_ms(c, samples)
            _run(c, DEAD, dead)
            harness.archive_finished(c)
            c.execute("VACUUM ANALYZE cyclone.cyclone_runs, cyclone.cyclone_steps")
            full = _scrape_ms(c, samples)
            rows = c.execute("SELECT count(*) FROM cyclone.metrics()").fetchone()
    finally:
        dbs.drop(dsn)
    return {
        "metrics_ms": full,
        "metrics_history_ratio": round(history / live_only, 2) if live_only else None,
        "metrics_dead_letters_ratio": round(full / history, 2) if history else None,
        "details": {"metrics": {
            "finished_steps": finished, "live_steps": 2 * live_runs, "dead_letters": dead,
            "metrics_ms_live_only": live_only, "metrics_ms_with_finished": history, "metrics_ms": full,
            "rows": rows[0] if rows else None,
        }},
    }
