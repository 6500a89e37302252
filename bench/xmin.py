"""``python -m bench.xmin [--quick] [--rate N] [--seconds S] [--runs N]``: the
engine under a held xmin horizon (issue #37, item 2), over the SQL API alone.

A transaction that holds a snapshot (a ``REPEATABLE READ`` reader, or a
session left idle in a transaction) keeps every row version deleted or
updated after it began from ``VACUUM``, and every index entry that points at
one from being marked dead by the scans that pass it. A step that is claimed
leaves its entry in the claim index (``cyclone_steps_claimable``, ordered by
priority, scheduled_at, id: claim order) at the front of the order, where
the next claim's scan starts; each claim then reads the heap page of every
such entry to learn that its row is gone.

1. steady  ``--rate`` single-step runs a second (``submit_many`` every 100 ms)
           for ``--seconds``, taken by ``CONSUMERS`` connections that each
           loop ``claim(8)`` + ``complete_many`` (and sleep 2 ms when a claim
           is empty), three phases in one database: clean, with a
           ``REPEATABLE READ`` transaction held open, with a session idle in
           transaction, and with four active ``REPEATABLE READ`` readers
           (transactions of 5 s that count the live steps every 50 ms). Every 2 s the buffers one empty claim's scan
           of queue 0 touches (``EXPLAIN (ANALYZE, BUFFERS)`` of claim's
           query, rolled back) and the dead tuples of the live tables; per
           phase the pickup p50/p99 (a step's started_at - scheduled_at, both
           the database's clock) and the claim call's p50/p99 at the client.
           Between phases the held transaction ends and the bench waits for
           the dead tuples of ``cyclone_steps`` to fall (autovacuum, no manual
           step), up to ``--recover`` seconds. ``claim_call_buffers``: the
           same for a whole ``claim(1)`` call, planned in the probe's session.
2. drain   ``--runs`` single-step runs submitted, then drained by two
           connections looping ``claim(100)`` +
           ``complete_many``; once clean, once with a ``REPEATABLE READ``
           transaction opened before the submit and held throughout; each in
           a fresh database. Steps a second, and the ratio.
3. vacuum  The held drain again, then after the transaction ends a VACUUM of
           the live tables timed under autovacuum's default cost delay (2 ms)
           and under none (the live tables' autovacuum_vacuum_cost_delay).
4. depth   Throughput at a held queue depth: a producer keeps ``--depth``
           single-step runs waiting (it tops the queue up whenever the
           consumers took 100 or more) while ``CONSUMERS`` connections loop
           ``claim(10)`` + ``complete_many`` as fast as they can, for
           ``--depth-seconds`` (5 minutes), ``tick()`` each second; no
           transaction is held, autovacuum as the server has it. Completions
           a second in each ``--window`` (a minute), the last window's rate
           over the first's, and per window the database CPU a completed run
           (the consumers' backends, from /proc: what other work on the
           machine moves least), the live tables' dead tuples and the
           archive queue's length.

Results are printed as JSON (and written to ``--out``, bench/results/xmin.json).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from bench import harness
from cyclone_py import db

CONSUMERS = 4
WORKFLOW = "xmin_one"
DEFINITION = '{"nodes": [{"name": "work"}]}'
LIVE = ("cyclone_steps", "cyclone_runs", "cyclone_archive_queue")

# claim's scan of queue 0, as claim runs it (24_claim.sql, the spelling without filters).
CLAIM_SCAN = """
EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
SELECT s.id FROM ONLY cyclone.cyclone_steps s
 WHERE s.queue_bucket = 0 AND s.state = 'available' AND s.scheduled_at <= cyclone.now()
   AND EXISTS (SELECT 1 FROM ONLY cyclone.cyclone_runs r WHERE r.id = s.run_id AND r.state = 'running')
 ORDER BY s.priority, s.scheduled_at, s.id LIMIT 1 FOR UPDATE OF s SKIP LOCKED"""


def setup(dsn: str) -> None:
    """The workflow of one task the bench submits."""
    with harness.connect(dsn) as c:
        c.execute("SELECT cyclone.define_workflow(%s, %s)", (WORKFLOW, DEFINITION))
        # Today's history tables, which a run of one step ends straight into (tick makes them ahead).
        c.execute("SELECT cyclone.tick()")


def _buffers(c: psycopg.Connection[Any], query: str) -> int:
    """Shared buffers (hit + read) ``query`` touches (nested statements included), in a transaction rolled
    back (a step it locks or claims is let go), planned as claim plans (24_claim.sql: the index walked in
    claim order, never a sequential or bitmap scan)."""
    c.execute("BEGIN")
    try:
        c.execute("SET LOCAL enable_seqscan = off")
        c.execute("SET LOCAL enable_bitmapscan = off")
        c.execute("SET LOCAL jit = off")
        row = c.execute(query).fetchone()
    finally:
        c.execute("ROLLBACK")
    assert row is not None
    plan = row[0][0]["Plan"]
    return int(plan["Shared Hit Blocks"]) + int(plan["Shared Read Blocks"])


def claim_buffers(c: psycopg.Connection[Any]) -> int:
    """Buffers one scan of claim's queue 0 touches."""
    return _buffers(c, CLAIM_SCAN)


def claim_call_buffers(c: psycopg.Connection[Any]) -> int:
    """Buffers one whole claim(1) call touches (its scan, the limited queues' probe, _claimed)."""
    return _buffers(c, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM cyclone.claim('xmin-probe')")


def dead_tuples(c: psycopg.Connection[Any]) -> dict[str, int]:
    """n_dead_tup of the live tables, as the statistics have it (flushed each second at most)."""
    rows = c.execute("SELECT relname, n_dead_tup FROM pg_stat_user_tables "
                     "WHERE schemaname = 'cyclone' AND relname = ANY (%s)", (list(LIVE),)).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def autovacuums(c: psycopg.Connection[Any]) -> int:
    row = c.execute("SELECT autovacuum_count FROM pg_stat_user_tables "
                    "WHERE schemaname = 'cyclone' AND relname = 'cyclone_steps'").fetchone()
    return int(row[0]) if row else 0


READERS = 4
READER_SECONDS = 5.0


def _reader(dsn: str, stop: threading.Event, offset: float) -> None:
    """An active REPEATABLE READ reader: transactions of READER_SECONDS each, counting the live steps every
    50 ms the whole time, one after the other; started ``offset`` seconds late."""
    with harness.connect(dsn) as c:
        if stop.wait(offset):
            return
        while not stop.is_set():
            c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            began = time.monotonic()
            while time.monotonic() - began < READER_SECONDS and not stop.is_set():
                c.execute("SELECT count(*) FROM ONLY cyclone.cyclone_steps")
                time.sleep(0.05)
            c.execute("COMMIT")


@contextmanager
def held_snapshot(dsn: str, how: str | None) -> Iterator[None]:
    """A transaction that holds the xmin horizon while the block runs: ``rr`` a ``REPEATABLE READ``
    transaction that has read a table (its snapshot), ``idle`` a READ COMMITTED one left idle in transaction
    with a transaction id (txid_current(); a READ COMMITTED transaction that has only read holds no snapshot
    between its statements), ``readers`` READERS active readers (_reader: the horizon held up to
    READER_SECONDS back, moving), None: nothing."""
    if how is None:
        yield
        return
    if how == "readers":
        stop = threading.Event()
        threads = [threading.Thread(target=_reader, args=(dsn, stop, i * READER_SECONDS / READERS), daemon=True)
                   for i in range(READERS)]
        for t in threads:
            t.start()
        try:
            yield
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=30)
        return
    c = psycopg.connect(dsn, autocommit=True, application_name=f"xmin-holder-{how}")
    try:
        if how == "rr":
            c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            c.execute("SELECT count(*) FROM cyclone.cyclone_workflows")
        else:
            c.execute("BEGIN")
            c.execute("SELECT txid_current()")
        yield
    finally:
        c.execute("ROLLBACK")
        c.close()


class Load:
    """Consumers that claim and complete; a producer at a steady rate (or none)."""

    def __init__(self, dsn: str, *, batch: int, consumers: int = CONSUMERS) -> None:
        self.dsn, self.batch, self.consumers = dsn, batch, consumers
        self.stop = threading.Event()
        self.claim_ms: list[float] = []
        self.done = 0
        self.claims = 0
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []
        self.pids: list[int] = []

    def _consume(self, i: int) -> None:
        with harness.connect(self.dsn) as c:
            c.execute("SET synchronous_commit = off")
            with self.lock:
                self.pids.append(c.info.backend_pid)
            worker = f"xmin-{i}"
            while not self.stop.is_set():
                began = time.perf_counter()
                rows = c.execute("SELECT step_id, lease_generation FROM cyclone.claim(%s, NULL, %s)",
                                 (worker, self.batch)).fetchall()
                took = (time.perf_counter() - began) * 1000
                if rows:
                    c.execute("SELECT count(*) FROM cyclone.complete_many(%s, %s, %s, %s)",
                              (worker, [r[0] for r in rows], [r[1] for r in rows],
                               [json.dumps({"ok": True})] * len(rows)))
                with self.lock:
                    self.claim_ms.append(took)
                    self.claims += 1
                    self.done += len(rows)
                if not rows:
                    time.sleep(0.002)

    def _produce(self, rate: float) -> None:
        per_tick = max(1, round(rate / 10))
        with harness.connect(self.dsn) as c:
            c.execute("SET synchronous_commit = off")
            next_at = time.monotonic()
            while not self.stop.is_set():
                c.execute("SELECT count(*) FROM cyclone.submit_many(%s, %s::jsonb[])",
                          (WORKFLOW, ['{}'] * per_tick))
                next_at += per_tick / rate
                time.sleep(max(0.0, next_at - time.monotonic()))

    def _top_up(self, depth: int) -> None:
        """Keeps ``depth`` runs waiting: tops the queue up whenever the consumers took 100 or more (``depth``
        are there when it starts)."""
        submitted = depth
        with harness.connect(self.dsn) as c:
            c.execute("SET synchronous_commit = off")
            while not self.stop.is_set():
                with self.lock:
                    short = depth - (submitted - self.done)
                if short < 100:
                    time.sleep(0.002)
                    continue
                c.execute("SELECT count(*) FROM cyclone.submit_many(%s, %s::jsonb[])", (WORKFLOW, ['{}'] * short))
                submitted += short

    def _tick(self) -> None:
        """tick() once a second, as a worker does (it archives the runs that did not end in complete_many)."""
        with harness.connect(self.dsn) as c:
            while not self.stop.wait(1.0):
                c.execute("SELECT cyclone.tick()")

    def start(self, rate: float | None = None, *, depth: int | None = None) -> None:
        self.threads = [threading.Thread(target=self._consume, args=(i,), daemon=True)
                        for i in range(self.consumers)]
        self.threads.append(threading.Thread(target=self._tick, daemon=True))
        if rate:
            self.threads.append(threading.Thread(target=self._produce, args=(rate,), daemon=True))
        if depth:
            self.threads.append(threading.Thread(target=self._top_up, args=(depth,), daemon=True))
        for t in self.threads:
            t.start()

    def end(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=30)


def _pct(values: list[float], p: float) -> float:
    return round(harness.percentile(values, p), 2) if values else 0.0


def pickup(c: psycopg.Connection[Any], since: Any, until: Any) -> dict[str, float]:
    """Pickup p50/p99 in ms of the steps started in [since, until): started_at - scheduled_at."""
    row = c.execute(
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x), percentile_cont(0.99) WITHIN GROUP (ORDER BY x),"
        " count(*) FROM (SELECT extract(epoch FROM started_at - scheduled_at) * 1000 AS x"
        " FROM cyclone.cyclone_steps WHERE started_at >= %s AND started_at < %s) s", (since, until)).fetchone()
    assert row is not None
    return {"p50_ms": round(float(row[0] or 0), 2), "p99_ms": round(float(row[1] or 0), 2), "steps": int(row[2])}


def wait_recovered(c: psycopg.Connection[Any], peak: int, timeout: float) -> dict[str, Any]:
    """After the holder ends: seconds until the dead tuples of cyclone_steps fall below a tenth of
    their peak (autovacuum's work: nothing is run by hand), or None when they did not within ``timeout``."""
    began = time.monotonic()
    runs = autovacuums(c)
    while time.monotonic() - began < timeout:
        dead = dead_tuples(c).get("cyclone_steps", 0)
        if dead <= max(peak // 10, 100) and autovacuums(c) > runs:
            return {"seconds": round(time.monotonic() - began, 1), "dead_after": dead}
        time.sleep(1)
    return {"seconds": None, "dead_after": dead_tuples(c).get("cyclone_steps", 0)}


def steady_phase(dsn: str, *, rate: float, seconds: float, hold: str | None) -> dict[str, Any]:
    """One phase of ``rate`` runs a second for ``seconds``, with ``hold`` (None, ``rr``, ``idle``)."""
    with harness.connect(dsn) as c, held_snapshot(dsn, hold):
        load = Load(dsn, batch=8)
        since = c.execute("SELECT cyclone.now()").fetchone()[0]  # type: ignore[index]
        load.start(rate)
        samples: list[dict[str, Any]] = []
        began = time.monotonic()
        try:
            while time.monotonic() - began < seconds:
                time.sleep(2)
                samples.append({"t": round(time.monotonic() - began), "claim_buffers": claim_buffers(c),
                                "claim_call_buffers": claim_call_buffers(c), "dead": dead_tuples(c)})
        finally:
            load.end()
        until = c.execute("SELECT cyclone.now()").fetchone()[0]  # type: ignore[index]
        elapsed = time.monotonic() - began
        result = {"hold": hold or "none", "jobs_per_s": round(load.done / elapsed, 1),
                  "pickup": pickup(c, since, until),
                  "claim_call_p50_ms": _pct(load.claim_ms, 50), "claim_call_p99_ms": _pct(load.claim_ms, 99),
                  "claim_buffers_first": samples[0]["claim_buffers"] if samples else None,
                  "claim_buffers_last": samples[-1]["claim_buffers"] if samples else None,
                  "claim_call_buffers_last": samples[-1]["claim_call_buffers"] if samples else None,
                  "dead_last": samples[-1]["dead"] if samples else {}, "samples": samples}
    return result


def steady(dsn: str, *, rate: float, seconds: float, recover: float) -> dict[str, Any]:
    setup(dsn)
    phases = []
    for hold in (None, "rr", "idle", "readers"):
        phase = steady_phase(dsn, rate=rate, seconds=seconds, hold=hold)
        if hold is not None:
            with harness.connect(dsn) as c:
                peak = max(s["dead"].get("cyclone_steps", 0) for s in phase["samples"])
                phase["recovered"] = wait_recovered(c, peak, recover)
        phases.append(phase)
    return {"rate": rate, "seconds": seconds, "phases": phases}


def drain_once(dsn: str, *, runs: int, hold: bool, consumers: int = 2,
               vacuum_delay_ms: float | None = None) -> dict[str, Any]:
    """``runs`` single-step runs submitted, then drained; steps a second. With ``hold``, a REPEATABLE READ
    transaction is opened before the submit and held until the drain ends; then, after it ends, the buffers
    of two empty claim scans (the first passes the entries of the steps it finds gone and marks them dead in
    the index, the second skips them) and, with ``vacuum_delay_ms``, a VACUUM of the live tables timed under
    that cost delay (2 ms: what autovacuum does by default; 0: the live tables' option)."""
    setup(dsn)
    with harness.connect(dsn) as c:
        with held_snapshot(dsn, "rr" if hold else None):
            for i in range(0, runs, 5000):
                c.execute("SELECT count(*) FROM cyclone.submit_many(%s, %s::jsonb[])",
                          (WORKFLOW, ['{}'] * min(5000, runs - i)))
            c.execute("ANALYZE cyclone.cyclone_steps, cyclone.cyclone_runs")
            load = Load(dsn, batch=100, consumers=consumers)
            began = time.monotonic()
            load.start()
            try:
                while load.done < runs:
                    time.sleep(0.05)
            finally:
                load.end()
            took = time.monotonic() - began
            result: dict[str, Any] = {
                "hold": "rr" if hold else "none", "runs": runs, "seconds": round(took, 2),
                "steps_per_s": round(runs / took, 1), "claim_buffers_at_end": claim_buffers(c),
                "claim_call_p50_ms": _pct(load.claim_ms, 50), "claim_call_p99_ms": _pct(load.claim_ms, 99),
                "dead": dead_tuples(c)}
        if hold:
            result["claim_buffers_after_release"] = [claim_buffers(c), claim_buffers(c)]
        if vacuum_delay_ms is not None:
            c.execute(f"SET vacuum_cost_delay = '{vacuum_delay_ms}ms'")
            c.execute("SET vacuum_cost_limit = 200")
            began = time.monotonic()
            # A VACUUM of an inheritance parent leaves its children (the day tables) alone.
            c.execute("VACUUM cyclone.cyclone_steps, cyclone.cyclone_runs")
            result["vacuum"] = {"cost_delay_ms": vacuum_delay_ms,
                                "seconds": round(time.monotonic() - began, 2), "dead_after": dead_tuples(c)}
        return result


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of these (local) backends so far (a backend gone counts nothing)."""
    return sum(harness.proc_cpu_s(pid) or 0.0 for pid in pids)


def archive_queue(c: psycopg.Connection[Any]) -> int:
    """The finished runs archive() has still to move: a queue that grows is one it cannot keep up with."""
    row = c.execute("SELECT count(*) FROM cyclone.cyclone_archive_queue").fetchone()
    return int(row[0]) if row else 0


def depth_phase(dsn: str, *, depth: int = 2000, seconds: float = 300.0, window: float = 60.0,
                consumers: int = CONSUMERS, batch: int = 10) -> dict[str, Any]:
    """Throughput with ``depth`` runs kept waiting, for ``seconds``: completions a second and database CPU a
    completed run in each ``window``, and the last window's rate over the first's."""
    setup(dsn)
    with harness.connect(dsn) as c:
        c.execute("SELECT count(*) FROM cyclone.submit_many(%s, %s::jsonb[])", (WORKFLOW, ['{}'] * depth))
        c.execute("ANALYZE cyclone.cyclone_steps, cyclone.cyclone_runs")
        load = Load(dsn, batch=batch, consumers=consumers)
        load.start(depth=depth)
        windows: list[dict[str, Any]] = []
        try:
            while len(load.pids) < consumers:
                time.sleep(0.01)
            began = time.monotonic()
            done, cpu = load.done, _cpu_seconds(load.pids)
            while time.monotonic() - began < seconds - 1e-6:
                time.sleep(max(0.0, began + window * (len(windows) + 1) - time.monotonic()))
                now_done, now_cpu = load.done, _cpu_seconds(load.pids)
                jobs = now_done - done
                windows.append({"t": round(time.monotonic() - began), "jobs_per_s": round(jobs / window, 1),
                                "db_cpu_ms_a_run": round((now_cpu - cpu) * 1000 / max(jobs, 1), 4),
                                "dead": dead_tuples(c), "claim_buffers": claim_buffers(c),
                                "claim_call_buffers": claim_call_buffers(c), "archive_queue": archive_queue(c)})
                done, cpu = now_done, now_cpu
        finally:
            load.end()
        first, last = windows[0], windows[-1]
        # Every run a consumer completed has ended (live or in history), and the engine's invariants hold.
        completed = c.execute("SELECT count(*) FROM cyclone.cyclone_runs WHERE state = 'completed'").fetchone()
        broken = c.execute("SELECT count(*) FROM cyclone.check_invariants()").fetchone()
        return {"depth": depth, "seconds": seconds, "window": window, "consumers": consumers, "batch": batch,
                "done": load.done, "runs_completed": completed[0] if completed else None,
                "invariants_broken": broken[0] if broken else None,
                "autovacuums": autovacuums(c), "windows": windows,
                "ratio": round(last["jobs_per_s"] / max(first["jobs_per_s"], 1e-9), 2),
                "cpu_ratio": round(last["db_cpu_ms_a_run"] / max(first["db_cpu_ms_a_run"], 1e-9), 2),
                "claim_call_p50_ms": _pct(load.claim_ms, 50), "claim_call_p99_ms": _pct(load.claim_ms, 99)}


def held_horizon(dbs: harness.Databases, cfg: Any) -> dict[str, Any]:
    """``python -m bench`` section ``xmin`` (issue #32's target: the held drain at >= 0.7x the clean one, in
    the same run): the drain of section 2 at twice the bench's drain size (20,000 runs at full size), clean
    and held, two rounds a side interleaved (clean, held, held, clean), each in a fresh database; the best
    round of each side compared, since a round is a few seconds and one stall of the machine halves it."""
    runs = 2 * cfg.drain_runs
    rounds: dict[bool, list[float]] = {False: [], True: []}
    dead: dict[str, int] = {}
    for hold in (False, True, True, False):
        dsn = dbs.fresh("xmin")
        try:
            out = drain_once(dsn, runs=runs, hold=hold)
        finally:
            dbs.drop(dsn)
        rounds[hold].append(out["steps_per_s"])
        if hold:
            dead = out["dead"]
    clean, held = max(rounds[False]), max(rounds[True])
    return {"xmin_clean_steps_s": clean, "xmin_held_steps_s": held, "xmin_held_ratio": round(held / clean, 3),
            "details": {"runs": runs, "clean_steps_s": rounds[False], "held_steps_s": rounds[True],
                        "dead_at_end_of_held_drain": dead}}


def vacuum_cost(dbs: harness.Databases, runs: int) -> dict[str, Any]:
    """The VACUUM that follows a held snapshot, under autovacuum's default cost delay and under none."""
    return {f"{d}ms": drain_once(dbs.fresh(f"vacuum_{d}"), runs=runs, hold=True, vacuum_delay_ms=d)
            for d in (2, 0)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.xmin")
    parser.add_argument("--quick", action="store_true", help="10 s phases, 10,000 runs")
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--recover", type=float, default=180.0)
    parser.add_argument("--runs", type=int, default=50_000)
    parser.add_argument("--depth", type=int, default=2000)
    parser.add_argument("--depth-seconds", type=float, default=300.0)
    parser.add_argument("--window", type=float, default=60.0)
    parser.add_argument("--only", choices=("steady", "drain", "vacuum", "depth"))
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "xmin.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.runs, args.recover = 10.0, 10_000, 60.0
        args.depth_seconds, args.window = 60.0, 15.0
    cluster = db.embedded()
    cluster.start()
    dbs = harness.Databases(cluster)
    dbs.drop_stale()
    out: dict[str, Any] = {}
    try:
        dbs.deploy_template()
        if args.only in (None, "steady"):
            out["steady"] = steady(dbs.fresh("steady"), rate=args.rate, seconds=args.seconds,
                                   recover=args.recover)
        if args.only in (None, "drain"):
            clean = drain_once(dbs.fresh("drain_clean"), runs=args.runs, hold=False)
            held = drain_once(dbs.fresh("drain_held"), runs=args.runs, hold=True)
            out["drain"] = {"clean": clean, "held": held,
                            "ratio": round(held["steps_per_s"] / clean["steps_per_s"], 2)}
        if args.only in (None, "vacuum"):
            out["vacuum"] = vacuum_cost(dbs, args.runs)
        if args.only in (None, "depth"):
            out["depth"] = depth_phase(dbs.fresh("depth"), depth=args.depth, seconds=args.depth_seconds,
                                       window=args.window)
    finally:
        dbs.drop_all()
    text = json.dumps(out, indent=1, default=str)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
