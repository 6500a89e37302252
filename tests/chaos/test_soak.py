"""Chaos soak: real ``cyclone worker`` processes, SIGKILLed about once a second,
and crash-restarts of PostgreSQL, under a load that takes limits, child runs,
a schedule (``apps.soak``) and everything of SPEC 16-17 (``apps.soak_flow``:
a map with an item that fails once, conditions, a sleep, an event, an await;
debounced submits and reruns by the submitter).

The chaos lasts ``--soak-minutes`` (else 20 s x ``--scale``; scale 1 is what
``make test`` runs). During it a submitter keeps a backlog of runs (a quarter
of them parents whose child node runs the fan-out), one worker of three is
killed about every second and replaced (one, the survivor, is never killed, so
that its memory can be watched), PostgreSQL is crash-restarted once every five
minutes (at least once), the every-minute schedule fires by the workers' ticks,
and a past range of its slots is backfilled three times over, across a
restart. Then the chaos stops, everything drains, the schedule is paused.

What is proved at the end (see docs/reliability.md, "The chaos soak"):

- every run completed, with the output the data flowing through its DAG
  implies; each submitted key made one run, each parent one child run whose
  output is its child node's; each burst of debounced submits one run with
  the last input (two only if a submit was retried across a restart); each
  rerun the output of its original, its kept nodes their original outputs;
  every event emitted once per ``soak_flow`` run;
- every step completed exactly once: each task step went ``running ->
  completed`` once, under its final lease generation, and never left
  ``completed``; its executions (the ledger) are one per lease generation at
  most, the accepted one among them, and the extra ones explained by reclaims
  and failed attempts (map items alike); each child, map, sleep, event and
  await node went ``waiting -> completed`` once and was never claimed; a
  skipped step was never claimed, run or completed; a rerun's kept step was
  never claimed or run;
- no limit was exceeded: no bucket of a concurrency limit ever had more steps
  in ``running`` at once than its concurrency, and no bucket of a rate limit
  more claims within one period than its rate (``soak_checks`` says why this
  reading is sound); and each limit was reached, so the check was not idle;
- every slot of the schedule ran exactly once: the backfilled range and every
  minute the schedule passed while the workers ticked, none skipped;
- ``cyclone.check_invariants()`` is empty, before and after a prune of every
  run; the workers reconnected after each restart, none died on its own, each
  exits 0 on SIGTERM, and no log holds a traceback.

It prints a report (``--soak-report PATH`` also writes it as JSON): runs,
steps, kills, restarts, reclaims, the workers' RSS over time, the engine's
tables and indexes before the prune, after it (and a VACUUM), and after the
REINDEX that ``cyclone prune --reindex`` adds. On a soak of 10 minutes or more,
the survivor's RSS must be flat: the last tenth's median at most 1.2 x the
second tenth's.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest
from apps.soak import JOIN_RATE, LEAF, MINUTELY, TENANT, TENANTS, expected_sum
from apps.soak_flow import ITEMS, app, flow_output
from chaos import soak_checks
from chaos.soak_checks import OBSERVER, query
from helpers import assert_consistent

from cyclone_py import db as cyclone_db
from cyclone_py.client import Client

# Minutes at scale 1 and more, with PostgreSQL crash-restarted under load.
pytestmark = [pytest.mark.slow, pytest.mark.cluster, pytest.mark.alone]

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent
CYCLONE = ROOT / ".venv" / "bin" / "cyclone"
WIDTH = 4
LEASE_TTL = 1.5
POLL = 0.2
WORKERS = 3
CONCURRENCY = 4
BACKLOG = 60  # unfinished submitted runs the submitter keeps at most
RESTART_EVERY = 300.0  # seconds of chaos per database crash (at least one)
DEBOUNCED_N = 1_000_000  # the n of debounced runs: 1,000,000 + 10 i + k


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
                [*command, "--dsn", self.dsn, "worker", "--app", "apps.soak_flow:app",
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


def retrying(dsn: str, sql: str, params: Any = None, tries: int = 300) -> tuple[list[dict[str, Any]], int]:
    """One statement, retried through a database restart; its rows and how
    many times it was retried. Only for statements that are safe to repeat."""
    for attempt in range(tries):
        try:
            return query(dsn, sql, params, attempts=1), attempt
        except psycopg.OperationalError:
            if attempt == tries - 1:
                raise
            time.sleep(0.2)
    raise AssertionError("unreachable")


class Submitter(threading.Thread):
    """Submits runs 0, 1, 2, ... with idempotency keys ``soak-<i>`` until told
    to stop, keeping at most ``BACKLOG`` of them unfinished, retrying each
    through a database restart (a retried key must not make a second run).
    Run ``i`` is a ``soak_parent`` when ``i % 4 == 3``, a ``soak_flow`` when
    ``i % 4 == 1`` (awaiting run ``i - 1``, a ``soak_fan``; its event emitted
    right after), else a ``soak_fan``. Every eighth ``i`` also submits a burst
    of three debounced ``soak_fan`` runs of one debounce key, and every eighth
    (offset 4) reruns a finished ``soak_flow`` run from its map node, or, every
    sixteenth, a finished ``soak_fan`` run whole."""

    def __init__(self, dsn: str) -> None:
        super().__init__(daemon=True, name="soak-submitter")
        self.dsn = dsn
        self.submitted = 0
        self.retries = 0
        self.stopping = threading.Event()
        self.error: BaseException | None = None
        self.ids: dict[int, Any] = {}
        #: debounce key -> (the run ids the burst's submits returned, the last input's n, retries)
        self.debounced: dict[str, tuple[list[Any], int, int]] = {}
        #: original run -> (rerun ids, from node, retries): one id unless a retried call made two
        self.reruns: dict[Any, tuple[list[Any], str | None, int]] = {}
        self.emitted = 0

    def backlog(self) -> int:
        rows, retried = retrying(self.dsn, "SELECT count(*) AS n FROM cyclone.cyclone_runs"
                                           " WHERE state NOT IN ('completed', 'failed', 'cancelled')"
                                           " AND idempotency_key LIKE 'soak-%%'")
        self.retries += retried
        return int(rows[0]["n"])

    def call(self, sql: str, params: Any) -> tuple[Any, int]:
        rows, retried = retrying(self.dsn, sql, params)
        self.retries += retried
        return (rows[0]["v"] if rows else None), retried

    def submit_one(self, i: int) -> None:
        if i % 4 == 1 and i - 1 in self.ids:
            run_id, _ = self.call(
                "SELECT cyclone.submit('soak_flow', jsonb_build_object('n', %s::int, 'go', %s::boolean,"
                " 'other', %s::text), NULL, %s) AS v", (i, i % 8 == 1, str(self.ids[i - 1]), f"soak-{i}"))
            self.call("SELECT cyclone.emit_event(%s, jsonb_build_object('n', %s::int)) AS v",
                      (f"soak-paid:{i}", i))
            self.emitted += 1
        else:
            workflow = "soak_parent" if i % 4 == 3 else "soak_fan"
            run_id, _ = self.call(
                "SELECT cyclone.submit(%s, jsonb_build_object('n', %s::int, 'tenant', %s::text), NULL, %s) AS v",
                (workflow, i, f"t{i % TENANTS}", f"soak-{i}"))
        self.ids[i] = run_id
        if i % 8 == 0:  # a burst of three submits of one debounce key: one run, with the last input
            key, got, retries = f"deb-{i}", [], 0
            for k in range(3):
                run_id, retried = self.call(
                    "SELECT cyclone.submit('soak_fan', jsonb_build_object('n', %s::int, 'tenant', %s::text),"
                    " p_debounce_key => %s, p_debounce => '1 second') AS v",
                    (DEBOUNCED_N + 10 * i + k, f"t{i % TENANTS}", key))
                got.append(run_id)
                retries += retried
            self.debounced[key] = (got, DEBOUNCED_N + 10 * i + 2, retries)
        if i % 8 == 4:  # a rerun of a finished run: a flow from its map node, or every other time a fan whole
            workflow, from_node = ("soak_fan", None) if i % 16 == 4 else ("soak_flow", "each")
            original, _ = self.call(
                "SELECT r.id AS v FROM cyclone.cyclone_runs r WHERE r.workflow = %s AND r.state = 'completed'"
                " AND r.rerun_of IS NULL AND r.parent_run_id IS NULL AND r.idempotency_key LIKE 'soak-%%'"
                " AND NOT EXISTS (SELECT 1 FROM cyclone.cyclone_runs x WHERE x.rerun_of = r.id)"
                " ORDER BY r.created_at LIMIT 1", (workflow,))
            if original is not None:
                new_id, retried = self.call("SELECT cyclone.rerun(%s, %s, 'soak') AS v", (original, from_node))
                self.reruns[original] = ([new_id], from_node, retried)

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                room = BACKLOG - self.backlog()
                if room <= 0:
                    self.stopping.wait(0.1)
                    continue
                for _ in range(min(room, 20)):
                    self.submit_one(self.submitted)
                    self.submitted += 1
        except BaseException as exc:
            self.error = exc


class RssSampler(threading.Thread):
    """Every ``every`` seconds, each live worker's VmRSS and thread count
    (``/proc/<pid>/status``) and its open file descriptors (``/proc/<pid>/fd``):
    a leak of memory, threads or connections would show as growth."""

    def __init__(self, fleet: Fleet, every: float) -> None:
        super().__init__(daemon=True, name="soak-rss")
        self.fleet, self.every = fleet, every
        self.started = time.monotonic()
        self.samples: list[tuple[float, str, int, int, int]] = []  # (s since start, worker, kB, threads, fds)
        self.stopping = threading.Event()

    @staticmethod
    def probe(pid: int) -> tuple[int, int, int] | None:
        try:
            fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
            fds = len(os.listdir(f"/proc/{pid}/fd"))
            return int(fields["VmRSS"].split()[0]), int(fields["Threads"]), fds
        except (OSError, ValueError, KeyError):
            return None  # it died between live() and here

    def run(self) -> None:
        while not self.stopping.wait(self.every):
            for p in self.fleet.live():
                got = self.probe(p.popen.pid)
                if got is not None:
                    self.samples.append((round(time.monotonic() - self.started, 1), p.name, *got))

    def of(self, name: str) -> list[tuple[float, int]]:
        """``(seconds, kB)`` of one worker."""
        return [(t, kb) for t, n, kb, _, _ in self.samples if n == name]

    def threads_fds(self, name: str) -> dict[str, Any]:
        mine = [(threads, fds) for _, n, _, threads, fds in self.samples if n == name]
        if not mine:
            return {}
        return {"threads_first": mine[0][0], "threads_last": mine[-1][0], "threads_max": max(t for t, _ in mine),
                "fds_first": mine[0][1], "fds_last": mine[-1][1], "fds_max": max(f for _, f in mine)}


def register(dsn: str) -> datetime:
    """Register the app as its workers will (limits, workflows, the schedule)
    and return the schedule's first slot."""
    with Client(dsn, min_size=1, max_size=1) as c:
        for lim in app.limits:
            c.define_limit(**lim.arguments())
        for name, definition in app.definitions():
            c.define_workflow(name, definition)
        c.schedule(**MINUTELY.arguments())
        (row,) = c.schedules(MINUTELY.name)
    assert row.next_fire_at is not None
    return row.next_fire_at


def minutes(start: datetime, stop: datetime) -> list[datetime]:
    """Every whole minute in ``[start, stop)``; ``start`` is one."""
    out = []
    while start < stop:
        out.append(start)
        start += timedelta(minutes=1)
    return out


def slot_text(slot: datetime) -> str:
    """A slot as the engine writes it in ``scheduled_for``."""
    return slot.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rss_summary(series: list[tuple[float, int]]) -> dict[str, Any]:
    """One worker's samples (kB): the median of each tenth of them, in order, and the extremes."""
    if not series:
        return {}
    kbs = [kb for _, kb in series]
    n = len(kbs)
    tenths = [kbs[round(n * k / 10):round(n * (k + 1) / 10)] for k in range(10)]
    return {"samples": n, "tenth_medians_kb": [statistics.median(t) for t in tenths if t],
            "min_kb": min(kbs), "max_kb": max(kbs)}


def summary(report: dict[str, Any]) -> str:
    """The report in a few lines, for the terminal."""
    r, st, rss = report.get("runs", {}), report.get("steps", {}), report.get("rss", {}).get("survivor_summary", {})
    sizes = report.get("size_totals", {})
    return (f"soak: {report.get('chaos_took_s')} s of chaos + {report.get('drain_s')} s of drain;"
            f" runs {r}; steps {st}; {report.get('kills')} kills, {len(report.get('restarts', []))} database"
            f" crashes, {report.get('submit_retries')} submit retries;"
            f" survivor RSS by tenths {rss.get('tenth_medians_kb')} kB;"
            f" cyclone tables {sizes.get('sizes_before_prune')} B before prune,"
            f" {sizes.get('sizes_after_prune_and_vacuum')} B after prune + VACUUM,"
            f" {sizes.get('sizes_after_reindex')} B after REINDEX;"
            f" invariant violations {report.get('invariant_violations')}")


def test_workers_killed_every_second_and_database_crashes_lose_nothing_do_nothing_twice_and_exceed_no_limit(
    dsn: str, embedded_db: cyclone_db.EmbeddedCluster, fleet: Fleet, chaos_seconds: float,
    soak_report: Path | None,
) -> None:
    report: dict[str, Any] = {"chaos_seconds": chaos_seconds, "lease_ttl": LEASE_TTL, "poll": POLL,
                              "workers": WORKERS, "concurrency": CONCURRENCY, "width": WIDTH}
    try:
        _soak(dsn, embedded_db, fleet, chaos_seconds, report)
    finally:
        text = json.dumps(report, indent=2, default=str)
        if soak_report is not None:
            soak_report.write_text(text + "\n")
        print("\nsoak report:", text)
        print(summary(report))


def _soak(dsn: str, embedded_db: cyclone_db.EmbeddedCluster, fleet: Fleet, chaos_seconds: float,
          report: dict[str, Any]) -> None:
    query(dsn, OBSERVER)
    first_slot = register(dsn)
    now = query(dsn, "SELECT date_trunc('minute', now()) AS m")[0]["m"]
    n_backfill = max(20, int(chaos_seconds / 2))
    backfill_from = now - timedelta(minutes=n_backfill + 1)
    backfill_to = now - timedelta(minutes=1)
    restarts_planned = max(1, int(chaos_seconds // RESTART_EVERY))
    restart_at = [(k + 1 / 3) * chaos_seconds / restarts_planned for k in range(restarts_planned)]
    backfill_at = [0.2 * chaos_seconds, 0.5 * chaos_seconds, 0.8 * chaos_seconds]
    if restarts_planned == 1:  # the second backfill right after the only restart
        backfill_at[1] = restart_at[0] + 1.0

    submitter = Submitter(dsn)
    submitter.start()
    survivor = fleet.start()
    for _ in range(WORKERS - 1):
        fleet.start()
    fleet.wait_started()
    rss = RssSampler(fleet, every=max(1.0, chaos_seconds / 180))
    rss.start()

    started = time.monotonic()
    kills = 0
    restarts: list[dict[str, Any]] = []
    live_at_restart: list[list[Proc]] = []
    backfills: list[dict[str, Any]] = []
    rng = random.Random(os.getpid())
    while time.monotonic() - started < chaos_seconds:
        time.sleep(rng.uniform(0.7, 1.3))
        assert fleet.unexpected_exits() == []
        assert submitter.error is None, submitter.error
        elapsed = time.monotonic() - started
        if restart_at and elapsed >= restart_at[0]:
            restart_at.pop(0)
            fleet.wait_started()
            live_at_restart.append(fleet.live())
            t = time.monotonic()
            embedded_db.restart(mode="immediate")  # a crash: WAL recovery on start; waits until it accepts
            restarts.append({"at_s": round(elapsed, 1), "took_s": round(time.monotonic() - t, 2)})
            continue
        if backfill_at and elapsed >= backfill_at[0]:
            backfill_at.pop(0)
            stop = backfill_from + timedelta(minutes=n_backfill // 2) if not backfills else backfill_to
            rows, retried = retrying(dsn, "SELECT cyclone.backfill(%s, %s, %s) AS n",
                                     (MINUTELY.name, backfill_from, stop))
            backfills.append({"at_s": round(elapsed, 1), "created": rows[0]["n"], "retries": retried})
        victim = rng.choice([p for p in fleet.live() if p is not survivor])
        fleet.kill(victim)
        kills += 1
        fleet.start()
    chaos_took = time.monotonic() - started
    submitter.stopping.set()
    submitter.join(60)
    assert not submitter.is_alive(), "the submitter did not stop"
    assert submitter.error is None, submitter.error
    report.update(kills=kills, workers_started=fleet.started, restarts=restarts, backfills=backfills,
                  submitted=submitter.submitted, submit_retries=submitter.retries)

    # -- the drain, then the schedule's end ------------------------------------------
    def unfinished() -> int:
        return int(query(dsn, "SELECT count(*) AS n FROM cyclone.cyclone_runs"
                              " WHERE state NOT IN ('completed', 'failed', 'cancelled')")[0]["n"])

    drain_timeout = 60.0 + chaos_seconds / 10
    end = time.monotonic() + drain_timeout
    while unfinished() and time.monotonic() < end:
        assert fleet.unexpected_exits() == []
        time.sleep(0.2)
    time.sleep(5 * POLL)  # a few ticks with the database up, then the schedule stops
    assert query(dsn, "SELECT cyclone.pause_schedule(%s) AS ok", (MINUTELY.name,)) == [{"ok": True}]
    row = query(dsn, "SELECT next_fire_at, now() AS at FROM cyclone.cyclone_schedules WHERE name = %s",
                (MINUTELY.name,))[0]
    next_fire_at, paused_at = row["next_fire_at"], row["at"]
    end = time.monotonic() + 30
    while unfinished() and time.monotonic() < end:
        time.sleep(0.2)
    drained = time.monotonic() - started - chaos_took
    rss.stopping.set()
    rss.join(10)
    died = fleet.unexpected_exits()
    codes = fleet.stop()
    report.update(chaos_took_s=round(chaos_took, 1), drain_s=round(drained, 1))

    # -- the runs -------------------------------------------------------------------
    runs = query(dsn, "SELECT id, workflow, state, input, output, parent_run_id, parent_step_id, idempotency_key,"
                      " debounce_key, rerun_of FROM cyclone.cyclone_runs")
    by_id = {r["id"]: r for r in runs}
    report["runs"] = dict(Counter(r["workflow"] for r in runs))
    report["runs"]["soak_fan_child_runs"] = sum(1 for r in runs if r["parent_run_id"] is not None)
    states = Counter(r["state"] for r in runs)
    assert states == {"completed": len(runs)}, f"after {chaos_took:.0f}s + {drained:.0f}s: {dict(states)}"
    submitted_keys = Counter(r["idempotency_key"] for r in runs if r["workflow"] != "soak_slot"
                             and r["parent_run_id"] is None and r["debounce_key"] is None and r["rerun_of"] is None)
    assert submitted_keys == {f"soak-{i}": 1 for i in range(submitter.submitted)}
    children = {r["parent_run_id"]: r for r in runs if r["parent_run_id"] is not None}
    assert len(children) == sum(1 for r in runs if r["parent_run_id"] is not None), "a parent with two child runs"
    for r in runs:
        if r["workflow"] == "soak_fan":
            assert r["output"] == {"join": {"sum": expected_sum(r["input"]["n"]), "leaves": WIDTH}}, r
        elif r["workflow"] == "soak_parent":
            assert r["output"] == {"finish": {"sum": expected_sum(r["input"]["n"]), "checked": True}}, r
            child = children.get(r["id"])
            assert child is not None and child["workflow"] == "soak_fan", f"parent {r['id']} has no child run"
            assert {k: child["input"][k] for k in ("n", "tenant")} == r["input"], (r, child)
        elif r["workflow"] == "soak_flow":
            # the map's items (one failed once), the condition taken, the sleep, the event, the awaited run
            assert r["output"] == flow_output(r["input"]["n"], r["input"]["go"]), r
            assert by_id[UUID(r["input"]["other"])]["input"]["n"] == r["input"]["n"] - 1, r
        else:
            assert r["workflow"] == "soak_slot", r
            assert r["output"] == {"slot": {"scheduled_for": r["input"]["scheduled_for"]}}, r
    assert {c["workflow"] for c in children.values()} <= {"soak_fan"}
    assert set(children) == {r["id"] for r in runs if r["workflow"] == "soak_parent"}

    # -- debounced submits: a burst of three made one run, with the last input ----------
    by_debounce: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        if r["debounce_key"] is not None:
            by_debounce.setdefault(r["debounce_key"], []).append(r)
    assert set(by_debounce) == set(submitter.debounced)
    merged = 0
    for key, (ids, last_n, retries) in submitter.debounced.items():
        mine = by_debounce[key]
        assert by_id[ids[-1]]["input"]["n"] == last_n, (key, ids)
        assert {r["id"] for r in mine} >= set(ids), (key, ids, mine)
        # a burst is one run; a submit retried across a restart may come after the run was claimed
        assert len(mine) == 1 or retries, (key, ids, mine)
        merged += len(mine) == 1
    # -- reruns: the same workflow and input, the same output; a flow's kept nodes keep theirs ----
    rerun_ids = {r["id"]: r["rerun_of"] for r in runs if r["rerun_of"] is not None}
    assert set(rerun_ids.values()) == set(submitter.reruns)
    for original, (ids, _, retried) in submitter.reruns.items():
        mine = [rid for rid, of in rerun_ids.items() if of == original]
        assert ids[0] in mine and (len(mine) == 1 or retried), (original, ids, mine)
        for rid in mine:
            assert {k: by_id[rid][k] for k in ("workflow", "input", "output")} == \
                {k: by_id[original][k] for k in ("workflow", "input", "output")}, (original, rid)
    events = query(dsn, "SELECT count(*) AS n, count(DISTINCT key) AS keys FROM cyclone.cyclone_v_events")[0]
    flows = [r for r in runs if r["workflow"] == "soak_flow" and r["rerun_of"] is None]
    assert events["keys"] == len(flows) and submitter.emitted == len(flows), (events, len(flows))
    report["coordination"] = {
        "flows": len(flows), "events": events["n"], "debounced_bursts": len(submitter.debounced),
        "bursts_one_run": merged, "debounced_runs": sum(len(v) for v in by_debounce.values()),
        "reruns_from_map": sum(1 for v in submitter.reruns.values() if v[1] == "each"),
        "reruns_whole": sum(1 for v in submitter.reruns.values() if v[1] is None)}
    assert flows and submitter.debounced and merged and report["coordination"]["reruns_from_map"] \
        and report["coordination"]["reruns_whole"], f"a kind of work never ran: {report['coordination']}"

    # -- the steps ------------------------------------------------------------------
    audit = soak_checks.step_audit(dsn)
    by_workflow = Counter(r["workflow"] for r in runs)
    assert len(audit) == by_workflow["soak_fan"] * (WIDTH + 2) + by_workflow["soak_parent"] * 3 \
        + by_workflow["soak_slot"] + by_workflow["soak_flow"] * (8 + ITEMS)
    kept_nodes = {"plan", "fast", "slow", "nap", "paid", "other"}  # a rerun from the map keeps these
    kept = {a.id for a in audit if a.run_id in rerun_ids and submitter.reruns[rerun_ids[a.run_id]][1] == "each"
            and a.node in kept_nodes and a.state == "completed"}
    problems = {a.id: p for a in audit if (p := soak_checks.step_problems(a, kept=a.id in kept))}
    assert problems == {}, f"{len(problems)} steps: {list(problems.items())[:10]}"
    step_outputs = {(r["run_id"], r["node"], r["item_index"]): r["output"] for r in query(
        dsn, "SELECT run_id, node, item_index, output FROM cyclone.cyclone_steps")}
    for a in audit:
        if a.id in kept:
            assert step_outputs[(a.run_id, a.node, None)] == step_outputs[(rerun_ids[a.run_id], a.node, None)], a
    skipped = Counter((a.node, a.state) for a in audit if a.node in ("fast", "slow"))
    assert skipped[("fast", "skipped")] + skipped[("slow", "skipped")] == by_workflow["soak_flow"], skipped
    child_steps = {a.run_id: a.child_run_id for a in audit if a.kind == "child"}
    assert child_steps == {pid: c["id"] for pid, c in children.items()}
    outputs = {(r["run_id"], r["node"]): r["output"] for r in query(
        dsn, "SELECT run_id, node, output FROM cyclone.cyclone_steps WHERE kind = 'child'")}
    for pid, child in children.items():
        assert outputs[(pid, "sub")] == child["output"], (pid, child)
    tasks = [a for a in audit if a.kind in ("task", "item") and a.state != "skipped" and a.id not in kept]
    report["steps"] = {"total": len(audit), "tasks": len(tasks), "child_nodes": len(child_steps),
                       "by_kind": dict(Counter(a.kind for a in audit)),
                       "skipped": sum(1 for a in audit if a.state == "skipped"), "kept": len(kept),
                       "items_failed_and_retried": sum(1 for a in audit if a.kind == "item" and a.failed),
                       "reclaims": sum(a.reclaimed for a in tasks), "failed_attempts": sum(a.failed for a in tasks),
                       "executions": sum(a.executions for a in tasks),
                       "extra_executions": sum(a.executions - 1 for a in tasks)}
    assert report["steps"]["reclaims"] > 0, "kills every second and not one reclaim?"

    # -- the limits -----------------------------------------------------------------
    peaks = soak_checks.concurrency_peaks(dsn)
    rates = soak_checks.rate_peaks(dsn)
    report["limits"] = {"concurrency": peaks, "rate": rates}
    over = [p for p in peaks if p["peak"] > p["concurrency"]] + [r for r in rates if r["peak"] > r["rate"]]
    assert over == [], f"a limit was exceeded: {over}"
    assert {p["limit"] for p in peaks} == {TENANT.name, LEAF.name}
    assert {p["bucket"] for p in peaks if p["limit"] == TENANT.name} == {f"t{i}" for i in range(TENANTS)}
    assert [r["limit"] for r in rates] == [JOIN_RATE.name]
    reached = {p["limit"] for p in peaks if p["peak"] == p["concurrency"]} | \
        {r["limit"] for r in rates if r["peak"] == r["rate"]}
    assert reached == {TENANT.name, LEAF.name, JOIN_RATE.name}, f"a limit never bound, so never tested: {report}"

    # -- the schedule ---------------------------------------------------------------
    assert paused_at - next_fire_at < timedelta(seconds=5), \
        f"the schedule fell behind: next slot {next_fire_at} at {paused_at}"
    backfilled = minutes(backfill_from, backfill_to)
    ticked = minutes(first_slot, next_fire_at)
    expected_slots = [slot_text(s) for s in backfilled + ticked]
    slot_runs = Counter(r["input"]["scheduled_for"] for r in runs if r["workflow"] == "soak_slot")
    assert slot_runs == dict.fromkeys(expected_slots, 1), \
        f"slots: {sorted(set(slot_runs) ^ set(expected_slots))}, twice: {[s for s, n in slot_runs.items() if n > 1]}"
    recorded = query(dsn, "SELECT slot, run_id FROM cyclone.cyclone_schedule_runs WHERE schedule = %s",
                     (MINUTELY.name,))
    run_slot = {r["id"]: r["input"]["scheduled_for"] for r in runs if r["workflow"] == "soak_slot"}
    assert sorted(slot_text(r["slot"]) for r in recorded) == sorted(expected_slots)
    assert all(run_slot[r["run_id"]] == slot_text(r["slot"]) for r in recorded)
    assert sum(b["created"] for b in backfills) <= len(backfilled)
    report["schedule"] = {"backfilled_slots": len(backfilled), "ticked_slots": len(ticked),
                          "first_slot": first_slot, "next_fire_at": next_fire_at}

    # -- the workers ----------------------------------------------------------------
    assert died == [], "a worker exited on its own"
    assert {n: c for n, c in codes.items() if c != 0} == {}, "a worker did not exit 0 on SIGTERM"
    logs = {p.name: p.text() for p in fleet.procs}
    assert [n for n, text in logs.items() if "Traceback" in text or "worker failed" in text] == []
    reconnect_words = ("connection lost", "database unavailable", "reconnecting", "retrying")
    for k, live in enumerate(live_at_restart):
        saw = [p.name for p in live if any(w in logs[p.name] for w in reconnect_words)]
        assert saw, f"no worker logged a reconnect after database restart {k + 1}"
    assert len(restarts) == restarts_planned
    outages = logs[survivor.name].count("database unavailable")
    assert outages >= 1, "the survivor never logged an outage"
    survivor_rss = rss.of(survivor.name)
    report["rss"] = {"survivor": survivor.name, "survivor_outages_logged": outages,
                     "survivor_summary": rss_summary(survivor_rss), "survivor_series": survivor_rss,
                     "survivor_threads_fds": rss.threads_fds(survivor.name),
                     "others_kb": {"min": min((s[2] for s in rss.samples if s[1] != survivor.name), default=None),
                                   "max": max((s[2] for s in rss.samples if s[1] != survivor.name), default=None)}}
    assert_consistent(dsn)
    report["invariant_violations"] = 0

    # -- retention: prune everything, and what it gives back --------------------------
    report["sizes_before_prune"] = soak_checks.relation_sizes(dsn)
    t = time.monotonic()
    pruned = 0
    while n := query(dsn, "SELECT cyclone.prune('0 seconds', 1000) AS n")[0]["n"]:
        pruned += n
    report["prune"] = {"runs_deleted": pruned, "seconds": round(time.monotonic() - t, 2)}
    query(dsn, "VACUUM (ANALYZE) " + ", ".join(f"cyclone.{name}" for name in report["sizes_before_prune"]))
    report["sizes_after_prune_and_vacuum"] = soak_checks.relation_sizes(dsn)
    with Client(dsn, min_size=1, max_size=1) as c:
        c.reindex()  # what `cyclone prune --reindex` does after the prune (docs/operations.md)
    report["sizes_after_reindex"] = soak_checks.relation_sizes(dsn)
    assert pruned == len(runs)
    left = query(dsn, "SELECT (SELECT count(*) FROM cyclone.cyclone_runs) AS runs,"
                      " (SELECT count(*) FROM cyclone.cyclone_steps) AS steps,"
                      " (SELECT count(*) FROM cyclone.cyclone_schedule_runs) AS slots")[0]
    assert left == {"runs": 0, "steps": 0, "slots": 0}, left
    assert_consistent(dsn)
    report["size_totals"] = {k: sum(v["total"] for v in report[k].values())
                             for k in ("sizes_before_prune", "sizes_after_prune_and_vacuum", "sizes_after_reindex")}

    # -- memory: flat, once warm (judged on a soak long enough to tell) ----------------
    medians = report["rss"]["survivor_summary"]["tenth_medians_kb"]
    if chaos_seconds >= 600:
        assert medians[-1] <= 1.2 * medians[1], f"the survivor's RSS grew: {medians} kB by tenths"
