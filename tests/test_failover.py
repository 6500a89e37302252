"""Failover (#21): a primary and a synchronous streaming standby (the embedded
tooling's db.replicated_pair), workers and submitters on a multi-host DSN
(target_session_attrs=read-write). Midway the primary is killed (pg_ctl stop
-m immediate) and the standby promoted. Every submitted run completes, every
step exactly once, nothing acknowledged is lost, the workers reconnect on
their own (one warning line each, no traceback) and pg_cron's tick runs on the
promoted standby. Then the same with an asynchronous standby: the commits it
had not received when the primary died are lost (docs/reliability.md#failover).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from apps.chaos import LEDGER_TABLE
from helpers import assert_consistent
from psycopg.rows import dict_row

from cyclone_py import db

# Two clusters of its own (a primary and its standby), the primary killed midway; about a minute.
pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CYCLONE = ROOT / ".venv" / "bin" / "cyclone"
RUNS = 120
WIDTH = 4  # the chaos app's default, which it takes when imported here
WORKERS = 2
LEASE_TTL = 1.5
POLL = 0.2

LEDGER = LEDGER_TABLE + """
CREATE TABLE public.failover_transitions (
    id bigserial PRIMARY KEY, step_id bigint NOT NULL, old_state text, new_state text,
    new_generation bigint);
CREATE FUNCTION public.failover_observe() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.failover_transitions (step_id, old_state, new_state, new_generation)
    VALUES (NEW.id, OLD.state, NEW.state, NEW.lease_generation);
    RETURN NULL;
END $$;
CREATE TRIGGER failover_observe AFTER UPDATE ON cyclone.cyclone_steps
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION public.failover_observe();
"""


def query(dsn: str, sql: str, params: Any = None) -> list[dict[str, Any]]:
    with psycopg.connect(dsn, autocommit=True, connect_timeout=5, row_factory=dict_row) as c:
        cur = c.execute(sql, params)
        return cur.fetchall() if cur.description is not None else []


@pytest.fixture
def pair_home() -> Iterator[Path]:
    """A folder the postgres OS user can use (pytest's tmp_path is root's own
    when we run as root), removed with both clusters at the end."""
    home = Path("/var/tmp") / f"cyclone-failover-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        yield home
    finally:
        for sub in ("primary", "standby"):
            db.EmbeddedCluster(home=home / sub, port=5432).destroy()
        shutil.rmtree(home, ignore_errors=True)


class Submitter(threading.Thread):
    """Submits runs with idempotency keys through the failover, retrying each
    until it is acknowledged; ``acked`` holds the keys whose commit returned."""

    def __init__(self, dsn: str, keys: list[str], pace: float) -> None:
        super().__init__(daemon=True, name="failover-submitter")
        self.dsn, self.keys, self.pace = dsn, keys, pace
        self.acked: list[str] = []
        self.retries = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for key in self.keys:
                for attempt in range(600):
                    try:
                        query(self.dsn, "SELECT cyclone.submit('chaos_fan', jsonb_build_object('n', %s::int),"
                                        " NULL, %s)", (int(key.split("-")[1]), key))
                        self.acked.append(key)
                        break
                    except psycopg.OperationalError:
                        if attempt == 599:
                            raise
                        self.retries += 1
                        time.sleep(0.1)
                time.sleep(self.pace)
        except BaseException as exc:
            self.error = exc


def start_worker(dsn: str, name: str, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
    env["CYCLONE_CHAOS_DSN"] = dsn
    env["CYCLONE_CHAOS_WIDTH"] = str(WIDTH)
    command = [str(CYCLONE)] if CYCLONE.exists() else [sys.executable, "-m", "cyclone_py.cli"]
    with open(log, "wb") as fh:
        return subprocess.Popen(
            [*command, "--dsn", dsn, "worker", "--app", "apps.chaos:app", "--concurrency", "4",
             "--lease-ttl", str(LEASE_TTL), "--poll-interval", str(POLL), "--shutdown-grace", "5",
             "--name", name, "--log-level", "info"],
            cwd=str(ROOT), env=env, stdout=fh, stderr=subprocess.STDOUT,
        )


def wait_until(pred: Any, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_failover_to_a_synchronous_standby_loses_nothing_and_does_nothing_twice(
        pair_home: Path, tmp_path: Path) -> None:
    primary, standby = db.replicated_pair(pair_home, synchronous=True)
    dsn = db.multi_host_url([primary, standby])
    db.sqitch(["deploy"], primary.url(), quiet=True)
    query(dsn, LEDGER)
    from apps.chaos import chaos  # noqa: PLC0415  (tests/ is on sys.path)

    query(dsn, "SELECT cyclone.define_workflow('chaos_fan', %s::jsonb)", (json.dumps(chaos.definition()),))
    query(dsn, "CREATE EXTENSION pg_cron")
    query(dsn, "SELECT cyclone.schedule_tick('* * * * *')")
    keys = [f"failover-{i}" for i in range(RUNS)]
    early = Submitter(dsn, keys[: RUNS // 2], pace=0.0)
    early.run()
    late = Submitter(dsn, keys[RUNS // 2:], pace=0.05)  # spans the failover

    logs = {f"w{i}": tmp_path / f"w{i}.log" for i in range(WORKERS)}
    procs = {name: start_worker(dsn, name, log) for name, log in logs.items()}
    try:
        wait_until(lambda: all("worker started" in log.read_text() for log in logs.values()), 30, "workers up")
        late.start()

        def completed() -> int:
            return int(query(dsn, "SELECT count(*) AS n FROM cyclone.cyclone_runs WHERE state = 'completed'")[0]["n"])

        wait_until(lambda: completed() >= RUNS // 4, 60, "a quarter of the runs")
        primary.stop("immediate")  # the primary dies: no checkpoint, no goodbye to the standby
        killed_at = time.monotonic()
        standby.promote()
        promoted_at = datetime.now().astimezone()
        outage = time.monotonic() - killed_at
        wait_until(lambda: not late.is_alive(), 120, "the submitter")
        wait_until(lambda: completed() == RUNS, 120, "every run completed")
        drained = time.monotonic() - killed_at
        # pg_cron's launcher runs on the promoted standby: its next minute's tick.
        wait_until(lambda: query(dsn, "SELECT count(*) AS n FROM cron.job_run_details"
                                      " WHERE command LIKE 'SELECT cyclone.tick%%' AND status = 'succeeded'"
                                      " AND start_time > %s", (promoted_at,))[0]["n"] > 0,
                   75, "a pg_cron tick after the promotion")
        assert all(p.poll() is None for p in procs.values()), "a worker exited on its own"
    finally:
        codes = {}
        for p in procs.values():
            p.send_signal(signal.SIGTERM)
        for name, p in procs.items():
            try:
                codes[name] = p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                codes[name] = p.wait(10)

    # Nothing acknowledged was lost, and each run was created once.
    assert late.error is None, late.error
    runs = query(dsn, "SELECT idempotency_key, state, output, (input ->> 'n')::int AS n FROM cyclone.cyclone_runs")
    assert sorted(r["idempotency_key"] for r in runs) == sorted(keys)
    assert set(early.acked + late.acked) == set(keys)
    for r in runs:
        assert r["state"] == "completed"
        assert r["output"] == {"join": {"sum": WIDTH * 10 * r["n"] + WIDTH * (WIDTH - 1) // 2, "leaves": WIDTH}}

    # Every step completed exactly once, under its final lease, and never left completed.
    steps = {s["id"]: s for s in query(dsn, "SELECT id, state, lease_generation FROM cyclone.cyclone_steps")}
    assert Counter(s["state"] for s in steps.values()) == {"completed": RUNS * (WIDTH + 2)}
    transitions: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for t in query(dsn, "SELECT * FROM public.failover_transitions ORDER BY id"):
        transitions[t["step_id"]].append(t)
    ledger = Counter((e["step_id"], e["lease_generation"]) for e in query(dsn, "SELECT * FROM public.chaos_ledger"))
    for sid, s in steps.items():
        done = [t for t in transitions[sid] if t["new_state"] == "completed"]
        assert len(done) == 1 and done[0]["new_generation"] == s["lease_generation"], transitions[sid]
        assert not [t for t in transitions[sid] if t["old_state"] == "completed"], transitions[sid]
        assert ledger[(sid, s["lease_generation"])] == 1, f"step {sid}: the accepted execution is not in the ledger"
    assert max(ledger.values()) == 1, "a lease generation executed twice"
    assert_consistent(dsn)

    # The workers rode it out on their own: one warning each, no traceback, exit 0.
    assert codes == {name: 0 for name in procs}, codes
    texts = {name: log.read_text(errors="replace") for name, log in logs.items()}
    for name, text in texts.items():
        assert "Traceback" not in text and "worker failed" not in text, text
        warnings = [ln for ln in text.splitlines() if "WARNING" in ln or "ERROR" in ln]
        assert len(warnings) == 1 and "database unavailable" in warnings[0], f"{name}:\n" + "\n".join(warnings)
        assert "database reachable again" in text, text
    print(f"\nfailover: {RUNS} runs, outage (kill to promoted) {outage:.1f}s, all done {drained:.1f}s after the kill;"
          f" {late.retries} submit retries; {sum(ledger.values()) - len(steps)} extra executions")


def test_an_asynchronous_standby_loses_the_commits_it_had_not_received(pair_home: Path) -> None:
    """The loss an asynchronous standby allows, made deterministic: the standby
    is stopped (far behind), a run is submitted and acknowledged on the
    primary, the primary dies, and the standby is promoted without it."""
    primary, standby = db.replicated_pair(pair_home, synchronous=False)
    dsn = db.multi_host_url([primary, standby])
    db.sqitch(["deploy"], primary.url(), quiet=True)
    query(dsn, "SELECT cyclone.define_workflow('w', '{\"nodes\": [{\"name\": \"a\"}]}')")
    kept = query(dsn, "SELECT cyclone.submit('w') AS id")[0]["id"]
    wait_until(lambda: query(standby.url(), "SELECT count(*) AS n FROM cyclone.cyclone_runs")[0]["n"] == 1,
               30, "the standby to replay the first run")
    standby.stop("fast")
    lost = query(dsn, "SELECT cyclone.submit('w') AS id")[0]["id"]  # acknowledged: the primary did not wait
    primary.stop("immediate")
    standby.start()
    standby.promote()
    ids = {r["id"] for r in query(dsn, "SELECT id FROM cyclone.cyclone_runs")}
    assert ids == {kept}, f"the standby has {ids}; the lost run was {lost}"
    assert_consistent(dsn)
