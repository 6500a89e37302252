"""``make demo``: one order through Cyclone on the embedded database.

Registers the example workflows, submits a run with plain SQL, runs an
in-process worker until the run is done (sending the approval signal when the
run reaches its wait node), and prints the run and its steps: the map's items
(``pack[0]``...) and the skipped ``gift_wrap`` among them.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from orders import app  # noqa: E402

from cyclone_py import Client, Worker, db  # noqa: E402


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(out)


def short(text: str | None, width: int = 48) -> str | None:
    if text is None:
        return None
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    first = lines[-1] if lines and lines[0].startswith("Traceback") else (lines[0] if lines else "")
    return first if len(first) <= width else first[: width - 1] + "…"


def print_steps(conn: psycopg.Connection[Any], run_id: Any, title: str) -> None:
    rows = conn.execute(
        "SELECT node || coalesce('[' || item_index || ']', ''), kind, state, attempt, max_attempts, reclaims, "
        "error_kind, error, child_run_id FROM cyclone.cyclone_v_steps WHERE run_id = %s ORDER BY id",
        (run_id,),
    ).fetchall()
    print(f"\n{title}")
    print(table(
        ["node", "kind", "state", "attempt", "max", "reclaims", "error_kind", "error"],
        [(r[0], r[1], r[2], r[3], r[4], r[5], r[6], short(r[7])) for r in rows],
    ))
    for r in rows:
        if r[8] is not None:
            print_steps(conn, r[8], f"child run {r[8]} ({r[0]}):")


def main() -> int:
    logging.basicConfig(level=logging.ERROR, format="  [%(levelname)s %(name)s] %(message)s")
    dsn = db.resolve_dsn()
    with Client(dsn) as client:
        for name, definition in app.definitions():
            client.define_workflow(name, definition)

    worker = Worker(
        app, dsn, concurrency=4, lease_ttl=5.0, poll_interval=0.2, name="demo-worker",
        backoff=lambda attempt: timedelta(seconds=0.5 * attempt),
        on_error=lambda exc: print(f"error hook: step {exc.node!r} discarded ({exc.error_kind}): {exc.error}"),
    )
    worker.run_in_thread()
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            order = {"order_id": 1042, "amount": 99.5, "email": "ada@example.com", "loyalty_account": False,
                     "lines": [{"sku": "tea-200g", "qty": 8}, {"sku": "mug", "qty": 2}, {"sku": "spoon", "qty": 6}]}
            row = conn.execute(
                "SELECT cyclone.submit('order_fulfilment', %s::jsonb, interval '10 minutes')",
                (json.dumps(order),),
            ).fetchone()
            assert row is not None
            run_id = row[0]
            print(f"submitted run {run_id} of order_fulfilment")

            signalled = False
            deadline = time.monotonic() + 60
            state = "running"
            while time.monotonic() < deadline:
                state = conn.execute("SELECT state FROM cyclone.get_run(%s)", (run_id,)).fetchone()[0]  # type: ignore[index]
                if state in ("completed", "failed", "cancelled"):
                    break
                waiting = conn.execute(
                    "SELECT 1 FROM cyclone.cyclone_v_steps"
                    " WHERE run_id = %s AND node = 'approval' AND state = 'waiting'",
                    (run_id,),
                ).fetchone()
                if waiting and not signalled:
                    conn.execute(
                        "SELECT cyclone.signal(%s, 'approved', %s::jsonb)", (run_id, json.dumps({"by": "demo"}))
                    )
                    signalled = True
                    print("approval reached: sent signal 'approved'")
                time.sleep(0.1)
            else:
                print("the run did not finish within 60 s", file=sys.stderr)

            run = conn.execute(
                "SELECT id, workflow, state, error_kind, error, output, created_at, finished_at "
                "FROM cyclone.get_run(%s)",
                (run_id,),
            ).fetchone()
            assert run is not None
            took = (run[7] - run[6]).total_seconds() if run[7] else None
            print("\nrun")
            print(table(
                ["id", "workflow", "state", "error_kind", "seconds"],
                [(run[0], run[1], run[2], run[3], f"{took:.2f}" if took is not None else None)],
            ))
            print(f"output: {json.dumps(run[5], sort_keys=True)}")
            print_steps(conn, run_id, "steps (cyclone.cyclone_v_steps):")
            return 0 if state == "completed" else 1
    finally:
        worker.stop(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
