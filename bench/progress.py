"""``python -m bench.progress [--smoke]``: what ``cyclone.progress`` (SPEC 16) costs a drain.

100 steps are leased and held by reporters that call ``progress()`` on each of them 5 times a second (at
most 500 calls a second, four processes of 25 steps; a worker sends at most 4 a step however often its
handlers call ``ctx.progress``), while one connection drains 40,000 single-step runs, a few seconds
(claim 100 + complete_many).
The same drain without the reporters, in the same run, is the baseline; five rounds alternate and the
median ratio is reported. Target: the drain with progress at least 0.95x the drain without.

Prints one JSON object; not a timed test.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import statistics
import sys
import time
from multiprocessing.synchronize import Event
from typing import Any

from bench import harness
from bench.maps import _drain
from cyclone_py import db

logger = logging.getLogger("bench.progress")


def _report_progress(dsn: str, leases: list[tuple[int, int]], rate: float, stop: Event, calls: Any,
                     started: Any) -> None:
    """Calls progress() on each lease ``rate`` times a second until ``stop``; adds its calls to ``calls``,
    and 1 to ``started`` after its first round. A process of its own, as a worker's would be: the drain's
    client shares no interpreter with it."""
    n = 0
    with harness.connect(dsn) as c:
        while not stop.is_set():
            began = time.monotonic()
            for step_id, generation in leases:
                c.execute("SELECT cyclone.progress(%s, 'holder', %s, %s::jsonb)", (step_id, generation, str(n)))
                n += 1
            if n == len(leases):
                with started.get_lock():
                    started.value += 1
            stop.wait(max(0.0, 1.0 / rate - (time.monotonic() - began)))
    with calls.get_lock():
        calls.value += n


def one_drain(dbs: harness.Databases, runs: int, held: int, rate: float, with_progress: bool) -> tuple[float, float]:
    """Steps a second of one drain of ``runs`` single-step runs, and progress calls a second meanwhile (an
    upper bound: the reporters' calls from their start to their stop, over the drain's time)."""
    dsn = dbs.fresh("progress_on" if with_progress else "progress_off")
    try:
        harness.define_workflows(dsn)
        with harness.connect(dsn) as c:
            # The held steps first, claimed by the holder with a long lease; then the runs to drain.
            harness.noop_runs(c, held)
            leases = [(r[0], r[1]) for r in c.execute(
                "SELECT step_id, lease_generation FROM cyclone.claim('holder', NULL, %s, '1 hour')", (held,))]
            harness.noop_runs(c, runs)
            harness.analyze(c, "cyclone.cyclone_steps", "cyclone.cyclone_runs")
            ctx = multiprocessing.get_context("spawn")
            stop, calls, started = ctx.Event(), ctx.Value("q", 0), ctx.Value("q", 0)
            procs = []
            if with_progress:
                # Four processes, 25 leases each: 500 calls a second in all at 100 leases and 5 a second.
                for part in range(4):
                    p = ctx.Process(target=_report_progress, args=(dsn, leases[part::4], rate, stop, calls, started))
                    p.start()
                    procs.append(p)
                # The reporters connected and under way: each has made its first round of calls (a fixed second
                # was too short on a busy machine, where a spawned process took longer to start, and a smoke
                # drain ended before any call).
                deadline = time.monotonic() + 60
                while started.value < len(procs) and time.monotonic() < deadline:
                    time.sleep(0.05)
            try:
                before = calls.value
                steps, seconds = _drain(c)
                during = calls.value - before  # the reporters add theirs as they stop: counted below
            finally:
                stop.set()
                for p in procs:
                    p.join()
            assert steps == runs, (steps, runs)
            return steps / seconds, int(calls.value if with_progress else during) / seconds
    finally:
        dbs.drop(dsn)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.progress", description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (the numbers mean nothing)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 3; 1 with --smoke)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s bench: %(message)s", datefmt="%H:%M:%S")
    runs, held, rate = (300, 8, 5.0) if args.smoke else (40_000, 100, 5.0)
    rounds = args.rounds or (1 if args.smoke else 5)
    cluster = db.embedded()
    cluster.start()
    dbs = harness.Databases(cluster)
    out: dict[str, Any] = {"machine": {"cpus": os.cpu_count()}, "runs": runs, "held": held, "rate": rate}
    try:
        dbs.drop_stale()
        dbs.deploy_template()
        ratios, plain, busy, calls_s = [], [], [], []
        for _ in range(rounds):
            off, _ = one_drain(dbs, runs, held, rate, False)
            on, per_s = one_drain(dbs, runs, held, rate, True)
            plain.append(off)
            busy.append(on)
            ratios.append(on / off)
            calls_s.append(per_s)
        out.update(drain_steps_s=round(statistics.median(plain)), drain_with_progress_steps_s=round(
            statistics.median(busy)), progress_calls_s=round(statistics.median(calls_s)),
            ratio=round(statistics.median(ratios), 3), ratios=[round(r, 3) for r in ratios])
    finally:
        dbs.drop_all()
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
