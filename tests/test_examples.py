"""The shipped examples: the order-fulfilment App under the harness, and the demo script."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from cyclone_py import errors
from cyclone_py.testing import Env

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

from orders import app  # noqa: E402

# The demos deploy databases of their own and run their workers.
pytestmark = pytest.mark.slow


def test_order_completes_after_a_retry_and_the_approval(dsn: str) -> None:
    with Env(dsn, app) as env:
        run_id = env.submit("order_fulfilment", {"order_id": 7, "amount": 10, "loyalty_account": True})
        env.run_until_idle()
        assert env.step(run_id, "charge").state == "available"  # the first charge failed
        env.advance_time(timedelta(minutes=5))  # past any backoff
        env.run_until_idle()
        assert env.step(run_id, "approval").state == "waiting"
        env.signal(run_id, "approved", {"by": "ops"})
        run = env.run_until_complete(run_id)
        assert run.state == "completed"
        assert run.output["ship"] == {"order_id": 7, "approved_by": "ops", "invoice": "INV-7"}
        assert run.output["points_email"] == {"sent_to": None}
        assert env.step(run_id, "charge").attempt == 2
        assert env.step(run_id, "gift_wrap").state == "skipped"  # not a gift
        assert env.step(run_id, "pack").output == []  # no lines: an empty map


def test_a_gift_order_packs_each_line_and_is_wrapped(dsn: str) -> None:
    with Env(dsn, app) as env:
        order = {"order_id": 9, "amount": 5, "gift": True, "flaky_processor": False,
                 "lines": [{"sku": "a", "qty": 13}, {"sku": "b", "qty": 1}]}
        run_id = env.submit("order_fulfilment", order)
        env.run_until_idle()
        env.signal(run_id, "approved", {"by": "ops"})
        run = env.run_until_complete(run_id)
        assert run.state == "completed"
        assert run.output["ship"] == {"order_id": 9, "approved_by": "ops", "invoice": "INV-9", "boxes": 4,
                                      "gift_wrapped": True}
        assert env.step(run_id, "pack").output == [{"line": 0, "sku": "a", "boxes": 3},
                                                   {"line": 1, "sku": "b", "boxes": 1}]


def test_order_past_its_deadline_fails_with_deadline(dsn: str) -> None:
    with Env(dsn, app) as env:
        run_id = env.submit("order_fulfilment", {"order_id": 8, "amount": 1}, deadline=timedelta(hours=1))
        env.run_until_idle()
        env.advance_time(timedelta(hours=2))
        run = env.run_until_complete(run_id)
        assert (run.state, run.error_kind) == ("failed", "deadline")
        assert any(isinstance(d, errors.DeadlineExceeded) for d in env.discards)


def test_demo_script_runs_an_order_to_completion(dsn: str) -> None:
    env = {**os.environ, "CYCLONE_DSN": dsn}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        env=env, capture_output=True, text=True, timeout=120, cwd=str(ROOT),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "sent signal 'approved'" in proc.stdout
    assert "order_fulfilment  completed" in proc.stdout
    assert "points_email  task   cancelled" in proc.stdout
    assert "pack[2]" in proc.stdout and "gift_wrap     task   skipped" in proc.stdout
    assert '"boxes": 4' in proc.stdout, "ship counted the boxes of the three packed lines"


def test_demo_shards_runs_orders_across_two_shards(embedded_db: object) -> None:
    """make demo-shards: the embedded cluster's router and two shards (made or
    reused), six orders through the router, each on the shard its id names."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo_shards.py")],
        capture_output=True, text=True, timeout=180, cwd=str(ROOT),
        env={k: v for k, v in os.environ.items() if k not in ("CYCLONE_DSN", "DATABASE_URL")},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if re.match(r"[0-9a-f]{8}-", line)]
    assert len(rows) == 6 and all(r[3] == "completed" for r in rows), proc.stdout
    assert all(int(r[2]) % 2 == int(r[1].removeprefix("shard-")) for r in rows), "partition p lives on shard p mod 2"
