"""Skewed clocks (issue 37): workers whose wall clock runs 10 minutes ahead of
or behind the database's (libfaketime, ``faketime`` in scripts/bootstrap.sh).

Two ``cyclone worker`` processes, both skewed the same way, run the
``skewed`` app. Everything is timed on the database's clock, from an observer
trigger's ``clock_timestamp()``: leases, heartbeats, timeouts and backoff
follow it (a heartbeat sets the lease to its TTL past the database's now; a
step held three TTLs by its heartbeats is never reclaimed; a failed attempt
is due again after the backoff), the worker's own per-step timeout cancels
its handler on time, and a worker killed mid-step has its step reclaimed by
the other no earlier than its lease's expiry and within a poll interval of it
(docs/reliability.md#skewed-clocks). The worker keeps time only as
durations on its monotonic clock, which a wrong wall clock does not move.
"""

from __future__ import annotations

import shutil
import signal
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import psycopg
import pytest
from apps.skewed import BACKOFF, TIMEOUT
from helpers import WorkerProcess, assert_consistent, wait_for
from psycopg.rows import dict_row

# Two worker processes under libfaketime for each direction of skew: about 15 s each.
pytestmark = pytest.mark.slow

LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
SKEW = 600.0  # seconds
LEASE_TTL = 1.5
POLL = 0.2
LONG = 3 * LEASE_TTL
SLACK = 0.6  # seconds: a claim, a report and a tick on two shared cores

OBSERVER = """
CREATE TABLE public.observed (
    id bigserial PRIMARY KEY, step_id bigint NOT NULL, node text NOT NULL, old_state text, new_state text,
    attempt int, reclaims int, lease_owner text, heartbeat_at timestamptz, lease_expiry timestamptz,
    scheduled_at timestamptz, started_at timestamptz, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE FUNCTION public.observe() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.observed (step_id, node, old_state, new_state, attempt, reclaims, lease_owner,
                                 heartbeat_at, lease_expiry, scheduled_at, started_at)
    VALUES (NEW.id, NEW.node, OLD.state, NEW.state, NEW.attempt, NEW.reclaims, NEW.lease_owner,
            NEW.heartbeat_at, NEW.lease_expiry, NEW.scheduled_at, NEW.started_at);
    RETURN NULL;
END $$;
CREATE TRIGGER observe AFTER UPDATE ON cyclone.cyclone_steps
    FOR EACH ROW EXECUTE FUNCTION public.observe();
"""


def rows(dsn: str, query: str, params: Any = None) -> list[dict[str, Any]]:
    with psycopg.connect(dsn, autocommit=True, row_factory=dict_row) as c:
        cur = c.execute(query, params)
        return cur.fetchall() if cur.description is not None else []


def seconds(a: Any, b: Any) -> float:
    return float((b - a).total_seconds())


@pytest.mark.parametrize("skew", [SKEW, -SKEW], ids=["ahead", "behind"])
def test_workers_with_a_skewed_clock_follow_the_database_clock(dsn: str, tmp_path: Path, skew: float) -> None:
    assert LIBFAKETIME.exists() and shutil.which("faketime"), "libfaketime is missing: run scripts/bootstrap.sh"
    rows(dsn, OBSERVER)
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    env = {
        "LD_PRELOAD": str(LIBFAKETIME),
        "FAKETIME": f"{skew:+.0f}s",
        # A wrong wall clock; the monotonic clock is the machine's. (Faked too,
        # it would be the fake wall clock, and Python's timed waits, on the real
        # monotonic clock, would wait for decades.)
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        "CYCLONE_LEDGER_DIR": str(ledger),
        "CYCLONE_SKEW_LONG": str(LONG),
    }
    procs = [WorkerProcess(["--dsn", dsn, "worker", "--app", "apps.skewed:app", "--name", f"skewed-{i}",
                            "--concurrency", "4", "--lease-ttl", str(LEASE_TTL), "--poll-interval", str(POLL),
                            "--shutdown-grace", "5", "--log-level", "info"], tmp_path / f"w{i}.log", env)
             for i in range(2)]
    try:
        wait_for(lambda: all("worker started" in p.text() for p in procs), 30, "the workers up")
        # The workers' clocks are off, the database's is not.
        text = procs[0].text()
        logged = time.strptime(text[: text.index(",")], "%Y-%m-%d %H:%M:%S")
        assert abs(time.mktime(logged) - time.time() - skew) < 30, text.splitlines()[0]

        run = rows(dsn, "SELECT cyclone.submit('skewed') AS id")[0]["id"]
        wait_for(lambda: rows(dsn, "SELECT state FROM cyclone.cyclone_runs WHERE id = %s", (run,))[0]["state"]
                 == "completed", 30, "the skewed run to complete")
        # Seen alive by the registry, whose clock is the database's.
        alive = rows(dsn, "SELECT name FROM cyclone.cyclone_v_workers WHERE alive ORDER BY name")
        assert [r["name"] for r in alive] == ["skewed-0", "skewed-1"]

        held = rows(dsn, "SELECT cyclone.submit('held') AS id")[0]["id"]
        owner = wait_for(lambda: rows(dsn, "SELECT lease_owner FROM cyclone.cyclone_steps WHERE run_id = %s"
                                           " AND state = 'running'", (held,)), 10, "the held step running")
        victim = next(p for i, p in enumerate(procs) if owner[0]["lease_owner"] == f"skewed-{i}")
        time.sleep(LEASE_TTL)  # a heartbeat or two first
        victim.p.send_signal(signal.SIGKILL)
        wait_for(lambda: rows(dsn, "SELECT state FROM cyclone.cyclone_runs WHERE id = %s", (held,))[0]["state"]
                 == "completed", 30, "the held run to complete on the other worker")
    finally:
        codes = [p.stop() for p in procs]
        for p in procs:
            p.close()

    observed: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows(dsn, "SELECT * FROM public.observed ORDER BY id"):
        observed[r["node"]].append(r)

    # Heartbeats: each sets the lease to one TTL past the database's now.
    beats = [r for rs in observed.values() for r in rs if r["old_state"] == r["new_state"] == "running"]
    assert len(beats) >= 2 * 3, f"{len(beats)} heartbeats"
    for b in beats:
        assert abs(seconds(b["heartbeat_at"], b["at"])) < SLACK, b
        assert seconds(b["heartbeat_at"], b["lease_expiry"]) == pytest.approx(LEASE_TTL), b

    # Leases: the step held three TTLs by its heartbeats alone was never reclaimed.
    long = observed["long"]
    assert [(r["old_state"], r["new_state"]) for r in long if r["old_state"] != r["new_state"]] == [
        ("available", "running"), ("running", "completed")], long
    assert long[-1]["reclaims"] == 0
    assert seconds(long[0]["at"], long[-1]["at"]) >= LONG

    # Timeouts: the worker's own timer cancelled the handler on time, and the
    # attempt failed a timeout after it started, on the database's clock.
    timed = [r for r in observed["timed"] if r["old_state"] != r["new_state"]]
    started, failed = timed[0], timed[1]
    assert (started["new_state"], failed["old_state"], failed["new_state"]) == ("running", "running", "available")
    # Timed from the attempt's start as the engine records it (the claim's now(), which the sweep times out
    # from; the observer's clock_timestamp() in the claim's row trigger is later by the claim statement, once
    # 8 ms on a busy machine). 5 ms below: the worker's timer runs on its own monotonic clock (under
    # faketime), the timestamps on the database's. A clock followed wrongly is minutes off.
    assert TIMEOUT - 0.005 <= seconds(started["started_at"], failed["at"]) <= TIMEOUT + SLACK, timed
    cancels = [line.split() for f in ledger.glob("*.timed") for line in f.read_text().splitlines()]
    assert len(cancels) == 1 and cancels[0][2] == "timeout", cancels
    # (The timer runs from the claim; the handler starts a little after it.)
    assert TIMEOUT - 0.2 <= float(cancels[0][1]) <= TIMEOUT + 0.3, cancels
    assert [r["error_kind"] for r in rows(dsn, "SELECT error_kind FROM cyclone.cyclone_step_errors"
                                               " WHERE node = 'timed'")] == ["timeout"]

    # Backoff: the failed attempt was due BACKOFF seconds after it failed, and
    # claimed then (within a poll interval), not ten minutes off.
    flaky = [r for r in observed["flaky"] if r["old_state"] != r["new_state"]]
    assert [(r["old_state"], r["new_state"]) for r in flaky] == [
        ("available", "running"), ("running", "available"), ("available", "running"), ("running", "completed")]
    assert seconds(flaky[1]["at"], flaky[1]["scheduled_at"]) == pytest.approx(BACKOFF, abs=0.05)
    assert BACKOFF <= seconds(flaky[1]["at"], flaky[2]["at"]) <= BACKOFF + POLL + SLACK, flaky

    # A killed worker's step: reclaimed by the other worker's tick no earlier
    # than its lease's expiry, and within a poll interval of it.
    hold = observed["hold"]
    reclaim = next(i for i, r in enumerate(hold) if (r["old_state"], r["new_state"]) == ("running", "available"))
    expiry = hold[reclaim - 1]["lease_expiry"]
    late = seconds(expiry, hold[reclaim]["at"])
    assert hold[reclaim]["reclaims"] == 1
    assert 0 <= late <= POLL + SLACK, f"reclaimed {late:+.2f}s after the lease expired"
    # (A run of one step may be completed and archived in one statement, which
    # updates no live row: its final state is read from the step itself.)
    final = rows(dsn, "SELECT state, attempt, reclaims FROM cyclone.cyclone_steps WHERE run_id = %s", (held,))
    assert final == [{"state": "completed", "attempt": 1, "reclaims": 1}], final
    assert_consistent(dsn)

    survivors = [c for p, c in zip(procs, codes, strict=True) if p is not victim]
    assert survivors == [0], codes
    print(f"\nskew {skew:+.0f}s: {len(beats)} heartbeats, timeout after {float(cancels[0][1]):.3f}s"
          f" (engine {seconds(started['at'], failed['at']):.3f}s), retried"
          f" {seconds(flaky[1]['at'], flaky[2]['at']):.3f}s after a {BACKOFF:g}s backoff, reclaimed {late:.3f}s"
          f" after the lease expired")
