"""``make demo-shards``: orders through a router and two shards.

Sets up the embedded cluster's sharded mode (``cyclone dev-db start --shards
2``: a PL/Proxy router and two shard databases), registers the example
workflows through the router (it defines them on every shard), runs a worker
on both shards, and submits six orders with plain SQL on the router. Each run
lives on the shard its id names; the approvals are signalled through the
router too. It prints where each run lived and how it ended, and the router's
gauges by shard.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from datetime import timedelta
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from demo import table  # noqa: E402
from orders import app  # noqa: E402

from cyclone_py import Client, Worker, shards  # noqa: E402

ORDERS = 6


def main() -> int:
    logging.basicConfig(level=logging.ERROR, format="  [%(levelname)s %(name)s] %(message)s")
    router, shard_dsns = shards.start_embedded(2)
    print(f"router  {router}")
    for i, dsn in enumerate(shard_dsns):
        print(f"shard-{i} {dsn}")
    with Client(router) as client:
        for name, definition in app.definitions():
            client.define_workflow(name, definition)

    worker = Worker(
        app, shard_dsns, concurrency=4, lease_ttl=5.0, poll_interval=0.2, name="demo-shards-worker",
        backoff=lambda attempt: timedelta(seconds=0.5 * attempt),
    )
    worker.run_in_thread()
    try:
        with psycopg.connect(router, autocommit=True) as conn:
            runs = []
            for n in range(ORDERS):
                order = {"order_id": 2000 + n, "amount": 10.0 * (n + 1), "loyalty_account": n % 2 == 0}
                row = conn.execute("SELECT cyclone.submit('order_fulfilment', %s::jsonb, interval '10 minutes')",
                                   (json.dumps(order),)).fetchone()
                assert row is not None
                runs.append(row[0])
            print(f"\nsubmitted {ORDERS} runs of order_fulfilment through the router")

            signalled: set[object] = set()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                states = {r: conn.execute("SELECT state FROM cyclone.get_run(%s)", (r,)).fetchone()[0]  # type: ignore[index]
                          for r in runs}
                if all(s in ("completed", "failed", "cancelled") for s in states.values()):
                    break
                for r in runs:
                    if r in signalled:
                        continue
                    waiting = conn.execute("SELECT 1 FROM cyclone.list_steps(%s) WHERE node = 'approval' "
                                           "AND state = 'waiting'", (r,)).fetchone()
                    if waiting:
                        conn.execute("SELECT cyclone.signal(%s, 'approved', '{\"by\": \"demo\"}')", (r,))
                        signalled.add(r)
                time.sleep(0.1)
            else:
                print("the runs did not finish within 60 s", file=sys.stderr)

            rows = conn.execute(
                "SELECT r.id, l.shard, l.partition, r.state, (SELECT count(*) FROM cyclone.list_steps(r.id)) "
                "FROM unnest(%s::uuid[]) AS i(id), cyclone.get_run(i.id) r, cyclone.locate_run(i.id) l "
                "ORDER BY l.shard, l.partition",
                (runs,),
            ).fetchall()
            print("\nruns (cyclone.get_run, cyclone.locate_run and cyclone.list_steps on the router):")
            print(table(["id", "shard", "partition", "state", "steps"], rows))
            gauges = conn.execute(
                "SELECT labels ->> 'shard', labels ->> 'state', value FROM cyclone.metrics() "
                "WHERE name = 'cyclone_runs' AND labels ->> 'workflow' = 'order_fulfilment' ORDER BY 1, 2"
            ).fetchall()
            print("\ncyclone_runs gauges (cyclone.metrics() on the router, one row per shard):")
            print(table(["shard", "state", "value"], gauges))
            return 0 if all(r[3] == "completed" for r in rows) else 1
    finally:
        worker.stop(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
