"""Chaos soak: real ``cyclone worker`` processes, SIGKILLed about once a second,
and one crash-restart of PostgreSQL in the middle, under a fan-out/fan-in load.

What is proved at the end (see docs/reliability.md):

- every run completed, with the output the data flowing through its DAG
  implies (the join adds up what every leaf returned);
- every step completed exactly once: an observer trigger (on this test's
  private database only) records every state change of every step, and each
  step went ``running -> completed`` once, under its final lease generation,
  and never left ``completed``;
- each execution is in the app's ledger (a row per started execution), at
  most one per lease generation; every step executed at least once, and the
  extra executions are explained: executions <= claims = 1 + reclaims + failed
  attempts;
- nothing is left running, available or pending; idempotent submission under
  the restart created each run once;
- the workers reconnected after the restart (their logs say so), no worker
  died on its own, every worker still alive exits 0 on SIGTERM, and no log
  holds a traceback.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from helpers import assert_consistent
from psycopg.rows import dict_row

from cyclone_py import db as cyclone_db

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent
CYCLONE = ROOT / ".venv" / "bin" / "cyclone"
WIDTH = 4
LEASE_TTL = 1.5
POLL = 0.2
WORKERS = 3
CONCURRENCY = 4

OBSERVER = """
CREATE TABLE public.chaos_ledger (
    id bigserial PRIMARY KEY, step_id bigint NOT NULL, run_id uuid NOT NULL, node text NOT NULL,
    attempt int NOT NULL, lease_generation bigint NOT NULL, worker text, pid int,
    at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE public.chaos_transitions (
    id bigserial PRIMARY KEY, step_id bigint NOT NULL, old_state text, new_state text,
    old_generation bigint, new_generation bigint, old_reclaims int, new_reclaims int,
    attempt int, error text, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE FUNCTION public.chaos_observe() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.chaos_transitions (step_id, old_state, new_state, old_generation, new_generation,
                                          old_reclaims, new_reclaims, attempt, error)
    VALUES (NEW.id, OLD.state, NEW.state, OLD.lease_generation, NEW.lease_generation,
            OLD.reclaims, NEW.reclaims, NEW.attempt, NEW.error);
    RETURN NULL;
END $$;
CREATE TRIGGER chaos_observe AFTER UPDATE ON cyclone.cyclone_steps
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION public.chaos_observe();
"""


def query(dsn: str, sql: str, params: Any = None, *, attempts: int = 100) -> list[dict[str, Any]]:
    """Run one query on a fresh connection, riding out the database restart."""
    for n in range(attempts):
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=5, row_factory=dict_row) as c:
                cur = c.execute(sql, params)
                return cur.fetchall() if cur.description is not None else []
        except psycopg.OperationalError:
            if n == attempts - 1:
                raise
            time.sleep(0.2)
    raise AssertionError("unreachable")


@dataclass
class Proc:
    """One ``cyclone worker`` process and its log."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    killed: bool = False

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def text(self) -> str:
        return self.log.read_text(errors="replace")


@dataclass
class Fleet:
    dsn: str
    logdir: Path
    procs: list[Proc] = field(default_factory=list)
    started: int = 0

    def start(self) -> Proc:
        self.started += 1
        name = f"chaos-{self.started}"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
        env["CYCLONE_CHAOS_DSN"] = self.dsn
        env["CYCLONE_CHAOS_WIDTH"] = str(WIDTH)
        log = self.logdir / f"{name}.log"
        command = [str(CYCLONE)] if CYCLONE.exists() else [sys.executable, "-m", "cyclone_py.cli"]
        with open(log, "wb") as fh:
            popen = subprocess.Popen(
                [*command, "--dsn", self.dsn, "worker", "--app", "apps.chaos:app",
                 "--concurrency", str(CONCURRENCY), "--lease-ttl", str(LEASE_TTL), "--poll-interval", str(POLL),
                 "--shutdown-grace", "5", "--name", name, "--log-level", "info"],
                cwd=str(ROOT), env=env, stdout=fh, stderr=subprocess.STDOUT,
            )
        proc = Proc(name, popen, log)
        self.procs.append(proc)
        return proc

    def live(self) -> list[Proc]:
        return [p for p in self.procs if p.alive]

    def kill(self, proc: Proc) -> None:
        proc.killed = True
        proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait(10)

    def wait_started(self, timeout: float = 30.0) -> None:
        """Until every live worker has logged that it is up (past its start-up
        connection check, which a restarting database would fail)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if all("worker started" in p.text() for p in self.live()):
                return
            time.sleep(0.05)
        raise AssertionError("workers did not start: " + " | ".join(p.text()[-300:] for p in self.live()))

    def unexpected_exits(self) -> list[str]:
        return [f"{p.name} exited {p.popen.returncode}: {p.text()[-500:]}"
                for p in self.procs if not p.alive and not p.killed]

    def stop(self) -> dict[str, int | None]:
        codes: dict[str, int | None] = {}
        for p in self.live():
            p.popen.send_signal(signal.SIGTERM)
        for p in self.procs:
            if not p.killed:
                try:
                    codes[p.name] = p.popen.wait(20)
                except subprocess.TimeoutExpired:
                    p.popen.kill()
                    codes[p.name] = p.popen.wait(10)
        return codes


@pytest.fixture
def fleet(dsn: str, tmp_path: Path) -> Iterator[Fleet]:
    f = Fleet(dsn, tmp_path)
    yield f
    for p in f.live():
        p.popen.kill()
        p.popen.wait(10)


class Submitter(threading.Thread):
    """Submits runs ``first .. last-1`` with idempotency keys, retrying each
    through the database restart (a retried key must not make a second run)."""

    def __init__(self, dsn: str, first: int, last: int, pace: float = 0.0) -> None:
        super().__init__(daemon=True, name="chaos-submitter")
        self.dsn, self.first, self.last, self.pace = dsn, first, last, pace
        self.retries = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for i in range(self.first, self.last):
                for attempt in range(300):
                    try:
                        query(self.dsn, "SELECT cyclone.submit('chaos_fan', jsonb_build_object('n', %s::int),"
                                        " NULL, %s)", (i, f"chaos-{i}"), attempts=1)
                        break
                    except psycopg.OperationalError:
                        if attempt == 299:
                            raise
                        self.retries += 1
                        time.sleep(0.2)
                time.sleep(self.pace)
        except BaseException as exc:
            self.error = exc


def test_workers_killed_every_second_and_a_database_crash_lose_nothing_and_do_nothing_twice(
    dsn: str, embedded_db: cyclone_db.EmbeddedCluster, fleet: Fleet, chaos_scale: float
) -> None:
    runs = max(20, int(200 * chaos_scale))
    budget = 100.0 * chaos_scale + 20.0
    query(dsn, OBSERVER)
    from apps.chaos import chaos  # noqa: PLC0415  (tests/ is on sys.path)

    query(dsn, "SELECT cyclone.define_workflow('chaos_fan', %s::jsonb)", (json.dumps(chaos.definition()),))
    Submitter(dsn, 0, runs // 2).run()  # half up front, the rest during the chaos
    late = Submitter(dsn, runs // 2, runs, pace=0.1)  # spans the restart

    for _ in range(WORKERS):
        fleet.start()
    fleet.wait_started()
    late.start()

    started = time.monotonic()
    kills = 0
    restarted_at: float | None = None
    live_at_restart: list[Proc] = []
    rng = random.Random(os.getpid())
    done = 0
    while time.monotonic() - started < budget:
        time.sleep(rng.uniform(0.7, 1.3))
        assert fleet.unexpected_exits() == []
        done = query(dsn, "SELECT count(*) AS n FROM cyclone.cyclone_runs WHERE state = 'completed'")[0]["n"]
        if done >= runs and not late.is_alive():
            break
        if restarted_at is None and done >= runs // 3:
            fleet.wait_started()
            live_at_restart = fleet.live()
            embedded_db.restart(mode="immediate")  # a crash: WAL recovery on start; waits until it accepts connections
            restarted_at = time.monotonic()
            continue
        victim = rng.choice(fleet.live())
        fleet.kill(victim)
        kills += 1
        fleet.start()
    elapsed = time.monotonic() - started
    late.join(30)
    died = fleet.unexpected_exits()
    codes = fleet.stop()

    # -- the runs -------------------------------------------------------------------
    assert late.error is None, late.error
    assert restarted_at is not None, "the database was never restarted"
    assert kills >= 5, f"only {kills} kills"
    counts = query(dsn, "SELECT state, count(*) AS n FROM cyclone.cyclone_runs GROUP BY 1")
    states = {r["state"]: r["n"] for r in counts}
    assert states == {"completed": runs}, f"after {elapsed:.0f}s: {states}"
    expected_sum = {r["id"]: WIDTH * 10 * r["n"] + WIDTH * (WIDTH - 1) // 2 for r in query(
        dsn, "SELECT id, (input ->> 'n')::int AS n FROM cyclone.cyclone_runs")}
    for r in query(dsn, "SELECT id, output FROM cyclone.cyclone_runs"):
        assert r["output"] == {"join": {"sum": expected_sum[r["id"]], "leaves": WIDTH}}, r

    # -- the steps ------------------------------------------------------------------
    steps = {s["id"]: s for s in query(dsn, "SELECT * FROM cyclone.cyclone_steps")}
    assert len(steps) == runs * (WIDTH + 2)
    assert Counter(s["state"] for s in steps.values()) == {"completed": len(steps)}
    assert all(s["lease_owner"] is None and s["lease_expiry"] is None for s in steps.values())

    transitions: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for t in query(dsn, "SELECT * FROM public.chaos_transitions ORDER BY id"):
        transitions[t["step_id"]].append(t)
    executions: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for e in query(dsn, "SELECT * FROM public.chaos_ledger ORDER BY id"):
        executions[e["step_id"]].append(e)

    total_reclaims = total_failed = total_extra = 0
    for sid, s in steps.items():
        ts = transitions[sid]
        completions = [t for t in ts if t["new_state"] == "completed"]
        assert len(completions) == 1, f"step {sid} completed {len(completions)} times: {ts}"
        assert completions[0]["old_state"] == "running"
        assert completions[0]["new_generation"] == s["lease_generation"]
        assert not [t for t in ts if t["old_state"] == "completed"], f"step {sid} left completed: {ts}"
        claims = sum(1 for t in ts if t["new_state"] == "running")
        reclaims = sum(1 for t in ts if t["old_state"] == "running" and t["new_state"] == "available"
                       and t["new_reclaims"] == t["old_reclaims"] + 1)
        failed = sum(1 for t in ts if t["old_state"] == "running" and t["new_state"] == "available"
                     and t["new_reclaims"] == t["old_reclaims"])
        assert reclaims == s["reclaims"] and failed == s["attempt"] - 1, (sid, ts, s)
        assert claims == s["lease_generation"] == 1 + reclaims + failed, (sid, ts, s)

        ran = executions[sid]
        generations = Counter(e["lease_generation"] for e in ran)
        assert ran, f"step {sid} completed without ever executing"
        assert max(generations.values()) == 1, f"step {sid}: a lease generation executed twice: {ran}"
        assert s["lease_generation"] in generations, f"step {sid}: the accepted execution is not in the ledger"
        assert s["output"] is not None
        assert len(ran) - 1 <= reclaims + failed, f"step {sid}: {len(ran)} executions, {reclaims}+{failed}: {ran}"
        total_reclaims += reclaims
        total_failed += failed
        total_extra += len(ran) - 1
    assert total_reclaims > 0, "kills every second and not one reclaim?"

    # -- the workers ----------------------------------------------------------------
    assert died == [], "a worker exited on its own"
    assert {n: c for n, c in codes.items() if c != 0} == {}, "a worker did not exit 0 on SIGTERM"
    logs = {p.name: p.text() for p in fleet.procs}
    assert [n for n, text in logs.items() if "Traceback" in text or "worker failed" in text] == []
    reconnect_words = ("connection lost", "database unavailable", "reconnecting", "retrying")
    saw = [p.name for p in live_at_restart if any(w in logs[p.name] for w in reconnect_words)]
    assert saw, "no worker logged a reconnect after the database restart"
    assert_consistent(dsn)
    print(f"\nchaos: {runs} runs x {WIDTH + 2} steps in {elapsed:.0f}s; {kills} kills, {fleet.started} workers, "
          f"1 database crash; {total_reclaims} reclaims, {total_failed} failed attempts, "
          f"{total_extra} extra executions; {late.retries} submit retries; reconnect logged by {saw}")
