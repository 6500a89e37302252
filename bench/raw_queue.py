"""The raw baseline: a minimal one-job-per-round-trip SKIP LOCKED queue.

This is the "raw" queue the issue's reference numbers describe: psycopg 3,
N threads each with its own autocommit connection, and per job exactly two
statements (two commits): the claim

    UPDATE bench_raw_jobs SET ... WHERE id = (SELECT id ... FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING

then, after running the same no-op handler Cyclone's drain runs
(``bench.apps.work``) on the same payload, the completion UPDATE that stores
its output. Its table lives in the same database as the Cyclone drain
(bench/sql/helpers.sql). Run as its own process by the drain section:

    python -m bench.raw_queue --dsn DSN --threads 10
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any

import psycopg

from bench.apps import work

CLAIM = """
UPDATE bench_raw_jobs SET state = 'running', claimed_at = now()
 WHERE id = (SELECT id FROM bench_raw_jobs WHERE state = 'available'
              ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
RETURNING id, payload
"""
COMPLETE = "UPDATE bench_raw_jobs SET state = 'done', output = %s::jsonb, done_at = now() WHERE id = %s"


def seed(conn: psycopg.Connection[Any], n: int) -> None:
    """``n`` jobs with the drain's payloads ``{"n": i}``."""
    conn.execute(
        "INSERT INTO bench_raw_jobs (payload) SELECT jsonb_build_object('n', g) FROM generate_series(1, %s) g",
        (n,),
    )


def _drain(dsn: str, errors: list[BaseException]) -> None:
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            while True:
                row = conn.execute(CLAIM).fetchone()
                if row is None:
                    return
                job_id, payload = row
                conn.execute(COMPLETE, (json.dumps(work(payload)), job_id))
    except BaseException as exc:  # reported by main()
        errors.append(exc)


def drain(dsn: str, threads: int) -> None:
    """Drain the queue with ``threads`` threads; returns when it is empty."""
    errors: list[BaseException] = []
    pool = [threading.Thread(target=_drain, args=(dsn, errors)) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.raw_queue")
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--threads", type=int, default=10)
    args = parser.parse_args(argv)
    drain(args.dsn, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
