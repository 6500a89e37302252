"""What the worker's metrics cost: the drain with ``--metrics-listen`` on vs off.

    .venv/bin/python -m bench.metrics_cost [--rounds 5] [--quick | --smoke] [--scrape-every 0.5]

Each round drains single-step no-op runs (10,000; 2,000 with --quick) with
one worker process (concurrency 10) twice, in fresh databases of one
cluster: once without metrics, once with ``--metrics-listen`` and a scraper
that reads the endpoint every ``--scrape-every`` seconds while the worker
drains (30 times as often as a usual 15 s scrape interval). The order
alternates (off on, on off, ...) so that drift on a shared machine falls on
both sides. With metrics on, a last scrape checks that the worker counted
every step. Prints each drain, then the medians and their ratio (on / off;
the issue's criterion: at least 0.9).
"""

from __future__ import annotations

import argparse
import json
import logging
import socket
import statistics
import threading
import time
import urllib.error
import urllib.request
from typing import Any

from bench import harness
from bench.sections import _drain_with_worker, _submit_many
from cyclone_py import db

logger = logging.getLogger(__name__)

COMPLETED = "cyclone_worker_steps_completed_total"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


def _completed(text: str) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    return sum(s.value for f in text_string_to_metric_families(text) for s in f.samples if s.name == COMPLETED)


class Scraper(threading.Thread):
    """Scrapes ``url`` every ``every`` seconds until :meth:`finish`; the worker
    not listening yet is not an error."""

    def __init__(self, url: str, every: float) -> None:
        super().__init__(name="bench-scraper", daemon=True)
        self.url = url
        self.every = every
        self.scrapes = 0
        self.bytes = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            try:
                self.bytes = len(_scrape(self.url))
                self.scrapes += 1
            except (urllib.error.URLError, ConnectionError):
                pass
            self._done.wait(self.every)

    def finish(self, expected: int) -> None:
        """Stop scraping; check (for up to 5 s: the reporter counts a
        completion once complete_many has returned) that ``expected`` steps were counted."""
        self._done.set()
        self.join(10)
        deadline = time.monotonic() + 5
        while True:
            counted = _completed(_scrape(self.url))
            if counted == expected:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the worker's metrics counted {counted:.0f} completions of {expected}")
            time.sleep(0.05)


def _drain(dbs: harness.Databases, side: str, n: int, scrape_every: float) -> dict[str, Any]:
    dsn = dbs.fresh(f"metrics_{side}")
    try:
        harness.define_workflows(dsn)
        _submit_many(dsn, "bench_noop", n)
        if side == "off":
            res = _drain_with_worker(dsn, n, n, timeout=600)
            scrapes = 0
        else:
            port = _free_port()
            scraper = Scraper(f"http://127.0.0.1:{port}/metrics", scrape_every)
            scraper.start()
            res = _drain_with_worker(dsn, n, n, timeout=600, worker_args=["--metrics-listen", f"127.0.0.1:{port}"],
                                     before_stop=lambda: scraper.finish(n))
            scrapes = scraper.scrapes
        return {"steps_s": res["steps_s"], "worker_cpu_ms_per_step": res["worker_cpu_ms_per_step"],
                "scrapes": scrapes}
    finally:
        dbs.drop(dsn)


def _median(rounds: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rounds if r[key] is not None]
    return round(statistics.median(values), 3) if values else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.metrics_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="on/off pairs (default 5)")
    parser.add_argument("--quick", action="store_true", help="2,000 runs a drain instead of 10,000")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks the machinery (tests/test_bench.py)")
    parser.add_argument("--scrape-every", type=float, default=0.5, metavar="SECONDS")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    n = 100 if args.smoke else 2_000 if args.quick else 10_000
    cluster = db.embedded()
    cluster.start()
    dbs = harness.Databases(cluster)
    results: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
    try:
        dbs.drop_stale()
        dbs.deploy_template()
        for i in range(args.rounds):
            for side in ("off", "on") if i % 2 == 0 else ("on", "off"):
                r = _drain(dbs, side, n, args.scrape_every)
                results[side].append(r)
                print(f"round {i + 1} {side}: {r}", flush=True)
    finally:
        dbs.drop_all()
    off, on = _median(results["off"], "steps_s"), _median(results["on"], "steps_s")
    cpu_off = _median(results["off"], "worker_cpu_ms_per_step")
    cpu_on = _median(results["on"], "worker_cpu_ms_per_step")
    summary = {
        "rounds": args.rounds,
        "runs_per_drain": n,
        "scrape_every_s": args.scrape_every,
        "steps_s": {"off": [r["steps_s"] for r in results["off"]], "on": [r["steps_s"] for r in results["on"]],
                    "off_median": off, "on_median": on,
                    "on_over_off": round(on / off, 3) if on and off else None},
        "worker_cpu_ms_per_step": {"off_median": cpu_off, "on_median": cpu_on,
                                   "on_over_off": round(cpu_on / cpu_off, 3) if cpu_on and cpu_off else None},
        "scrapes_per_drain": [r["scrapes"] for r in results["on"]],
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
