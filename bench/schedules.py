"""Section 7: what schedules cost the tick (SPEC 13).

On one connection, in one fresh database:

- tick() with no schedule, then with 1,000 schedules none of which is due (the
  cost every worker pays on its poll interval; target: under 20 ms, and the
  ratio to no schedules);
- one tick() that fires 100 due slots (100 runs submitted);
- one tick() that skips 1,000 slots an outage left older than the catch-up
  window (the most slots one call looks at).
"""

from __future__ import annotations

import time
from typing import Any

import psycopg

from bench import harness
from bench.harness import Databases

SCHEDULES = 1_000


def _ms(c: psycopg.Connection[Any], query: str) -> float:
    t = time.perf_counter()
    c.execute(query)
    return (time.perf_counter() - t) * 1000


def _tick_ms(c: psycopg.Connection[Any], samples: int) -> float:
    return harness.median_ms(c, "SELECT cyclone.tick()", samples)


def schedules(dbs: Databases, cfg: Any) -> dict[str, Any]:
    dsn = dbs.fresh("schedules")
    samples = 20 if cfg.quick else 100
    try:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("""SELECT cyclone.define_workflow('nightly', '{"nodes": [{"name": "report"}]}')""")
            # Far from any slot: the clock at 00:00:30 UTC, every schedule fires
            # at hh:mm with hh >= 1 (UTC) or in Berlin's afternoon.
            c.execute("SELECT cyclone.advance_time(date_trunc('day', cyclone.now()) + interval '1 day 30 seconds'"
                      " - cyclone.now())")
            none = _tick_ms(c, samples)
            c.execute("""SELECT cyclone.schedule('s' || i, (i %% 60) || ' ' || (1 + i %% 10) || ' * * *', 'nightly',
                                                 '{}', CASE WHEN i %% 2 = 0 THEN 'Europe/Berlin' ELSE 'UTC' END)
                           FROM generate_series(1, %s) i""", (SCHEDULES,))
            c.execute("ANALYZE cyclone.cyclone_schedules")
            idle = _tick_ms(c, samples)
            assert c.execute("SELECT cyclone.tick() -> 'scheduled'").fetchone() == (0,), "nothing may be due"

            c.execute("SELECT cyclone.pause_schedule(name) FROM cyclone.cyclone_schedules")
            c.execute("""SELECT cyclone.schedule('m' || i, '* * * * *', 'nightly', '{}', 'UTC', 'allow')
                           FROM generate_series(1, 100) i""")
            c.execute("SELECT cyclone.advance_time('1 minute')")
            fire = _ms(c, "SELECT cyclone.tick()")
            fired = c.execute("SELECT count(*) FROM cyclone.cyclone_runs").fetchone()

            c.execute("SELECT cyclone.pause_schedule(name) FROM cyclone.cyclone_schedules")
            c.execute("SELECT cyclone.schedule('outage', '* * * * *', 'nightly', '{}', 'UTC', 'skip', '0')")
            c.execute("SELECT cyclone.advance_time('2 days')")
            t = time.perf_counter()
            row = c.execute("SELECT cyclone.tick() -> 'skipped_slots'").fetchone()
            skip = (time.perf_counter() - t) * 1000
    finally:
        dbs.drop(dsn)
    return {
        "tick_ms_no_schedules": none,
        "tick_ms_1000_schedules": idle,
        "tick_1000_schedules_vs_none": round(idle / none, 2) if none else None,
        "details": {"schedules": {
            "samples": samples,
            "tick_ms_firing_100_slots": round(fire, 2),
            "runs_fired": fired[0] if fired else None,
            "tick_ms_skipping_1000_slots": round(skip, 2),
            "slots_skipped": row[0] if row else None,
        }},
    }
