"""The conformance kit (SPEC 18, docs/conformance.md): does a worker, in any language, follow the protocol?

:func:`run_kit` starts the worker under test (a command, given the scratch database in ``CYCLONE_DSN``) and
runs each scenario against it: a scenario submits runs of the kit's workflows
(:data:`cyclone_py.conformance_app.WORKFLOWS`), does to the worker what the scenario is about (cancels its
runs, moves the engine clock, SIGKILLs, SIGSTOPs or SIGTERMs it) and judges what follows from the engine's
tables alone, through :class:`~cyclone_py.client.Client`: the kit never reads the worker's output, so it
knows nothing of its language. A scenario fails with :class:`Failed` and a sentence saying what it saw.

Scenarios run one after the other on one worker process; one that kills the worker starts it again, and
each ends by cancelling the runs it left, so the next starts from an idle worker. ``cyclone conformance`` is
the command (:mod:`cyclone_py.cli.conformance`); making and dropping the scratch database is its part.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import IO, Any, TypeVar
from urllib.parse import quote

from cyclone_py import db
from cyclone_py.client import Client, Run, StepRow
from cyclone_py.conformance_app import WORKFLOWS

__all__ = ["SCENARIOS", "Failed", "Result", "run_kit", "worker_url"]

T = TypeVar("T")

#: How long a scenario waits for what must follow, unless it says otherwise (seconds, real time).
WAIT = 15.0
#: The longest lease TTL the kit works with (docs/conformance.md): the heartbeat scenario sleeps past it.
MAX_TTL = 3.0
#: How often the kit looks at the tables while it waits.
POLL = 0.05


class Failed(Exception):
    """A scenario's verdict: what the kit saw instead of what must follow."""


@dataclass(frozen=True)
class Result:
    name: str
    ok: bool
    detail: str
    seconds: float


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    run: Callable[[Kit], None]


SCENARIOS: list[Scenario] = []


def scenario(name: str, summary: str) -> Callable[[Callable[[Kit], None]], Callable[[Kit], None]]:
    def add(fn: Callable[[Kit], None]) -> Callable[[Kit], None]:
        SCENARIOS.append(Scenario(name, summary, fn))
        return fn

    return add


def worker_url(dsn: str) -> str:
    """``dsn`` as a ``postgresql://`` URL, the form every PostgreSQL driver reads (a socket directory goes in
    the query string: ``postgresql://user@/db?host=/run/pg&port=5432``)."""
    params = db.conninfo_params(dsn)
    user = quote(str(params.get("user", "")), safe="")
    password = params.get("password")
    auth = f"{user}:{quote(str(password), safe='')}@" if password else (f"{user}@" if user else "")
    name = quote(str(params.get("dbname", "")), safe="")
    host, port = str(params.get("host", "")), params.get("port")
    if host.startswith("/") or not host:
        query = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in (("host", host), ("port", port)) if v)
        return f"postgresql://{auth}/{name}" + (f"?{query}" if query else "")
    return f"postgresql://{auth}{host}{f':{port}' if port else ''}/{name}"


class WorkerProcess:
    """The worker under test: the command in a session of its own (so a signal reaches its whole process
    group: a shell wrapper and what it started alike), its output appended to the log."""

    def __init__(self, command: Sequence[str], env: dict[str, str], log: IO[str]) -> None:
        self.command, self.env, self.log = list(command), env, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.log.write(f"--- cyclone conformance: starting {' '.join(self.command)}\n")
        self.log.flush()
        self.proc = subprocess.Popen(self.command, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send(self, sig: int) -> None:
        if self.proc is not None and self.alive:
            self.log.write(f"--- cyclone conformance: signal {signal.Signals(sig).name}\n")
            self.log.flush()
            os.killpg(self.proc.pid, sig)

    def wait(self, timeout: float) -> int | None:
        """The exit code, or None if it still runs after ``timeout`` seconds."""
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 5 seconds; also what a stopped (SIGSTOP) one gets, woken first."""
        if self.proc is None or not self.alive:
            return
        self.send(signal.SIGCONT)
        self.send(signal.SIGTERM)
        if self.wait(5) is None:
            self.send(signal.SIGKILL)
            self.wait(5)


class Kit:
    """What the scenarios share: the client of the scratch database (as its owner: it moves the clock and
    cancels runs), the worker under test, and the waits."""

    def __init__(self, client: Client, worker: WorkerProcess) -> None:
        self.c = client
        self.worker = worker
        self.concurrency: int | None = None  # from the worker's registry row
        self._seen_workers: set[str] = set()

    # -- waiting ------------------------------------------------------------

    def wait(self, what: str, check: Callable[[], T | None], timeout: float = WAIT) -> T:
        """``check()``'s first true answer within ``timeout`` seconds, else :class:`Failed` saying ``what``
        did not happen."""
        deadline = time.monotonic() + timeout
        while True:
            got = check()
            if got:
                return got
            if time.monotonic() >= deadline:
                raise Failed(f"{what} within {timeout:g} s")
            time.sleep(POLL)

    def finished(self, run_id: Any, timeout: float = WAIT) -> Run:
        return self.wait(f"run {run_id} did not end", lambda: _terminal(self.c.get_run(run_id)), timeout)

    def step(self, run_id: Any, node: str) -> StepRow:
        return next(s for s in self.c.steps(run_id) if s.node == node and s.item_index is None)

    def step_when(self, run_id: Any, node: str, what: str, ok: Callable[[StepRow], bool],
                  timeout: float = WAIT) -> StepRow:
        """The step once ``ok`` holds for it, else :class:`Failed` saying ``what`` did not happen."""
        def check() -> StepRow | None:
            s = self.step(run_id, node)
            return s if ok(s) else None

        return self.wait(what, check, timeout)

    def running(self, run_id: Any, node: str, timeout: float = WAIT) -> StepRow:
        """The step once a worker holds it."""
        return self.step_when(run_id, node, f"nobody claimed {node} of run {run_id}",
                              lambda s: s.state == "running", timeout)

    def lease_ttl(self, s: StepRow) -> float:
        """The TTL the worker leases with, read from a running step: its expiry less its last renewal (or its
        claim). Beyond :data:`MAX_TTL` the kit's timings do not hold."""
        since = s.heartbeat_at or s.started_at
        assert since is not None and s.lease_expiry is not None
        ttl = (s.lease_expiry - since).total_seconds()
        if ttl > MAX_TTL + 0.5:
            raise Failed(f"the worker leases for {ttl:.1f} s; the kit needs a lease TTL of at most {MAX_TTL:g} s")
        return ttl

    # -- the worker ---------------------------------------------------------

    def live_worker(self, *, new: bool = False, timeout: float = WAIT) -> str:
        """The name of a live registered worker (``new``: one the kit has not seen yet, after a restart)."""
        def found() -> str | None:
            for row in self.c.workers():
                if row.alive and not (new and row.name in self._seen_workers):
                    self._seen_workers.add(row.name)
                    return row.name
            return None

        return self.wait("no live worker registered" + (" after the restart" if new else ""), found, timeout)

    def restart(self) -> None:
        self.worker.stop()
        self.worker.start()
        self.live_worker(new=True)

    def fill(self, make_run: Callable[[], Any]) -> list[Any]:
        """As many runs of ``make_run`` as the worker runs handlers at once, each once it is running."""
        runs = [make_run() for _ in range(self.concurrency or 4)]
        for run_id in runs:
            self.running(run_id, "hang")
        return runs

    def cleanup(self) -> None:
        """Cancel the runs a scenario left, so that the next one starts from an idle worker."""
        for state in ("running", "paused"):
            for run in self.c.list_runs(state=state, limit=1000):
                self.c.cancel(run.id, "conformance: end of scenario")


def _terminal(run: Run) -> Run | None:
    return run if run.terminal else None


def _expect(ok: bool, message: str) -> None:
    if not ok:
        raise Failed(message)


# -- the scenarios, in the order they run -------------------------------------------------------------


@scenario("registry", "the worker registers, alive, with its concurrency")
def registry(kit: Kit) -> None:
    name = kit.live_worker()
    row = next(r for r in kit.c.workers() if r.name == name)
    concurrency = row.info.get("concurrency") if isinstance(row.info, dict) else None
    _expect(isinstance(concurrency, int) and 1 <= concurrency <= 4,
            f"worker {name!r} registered with info.concurrency {concurrency!r}; the kit needs 1 to 4")
    kit.concurrency = concurrency


RESULTS_INPUT = {"text": "héllo ✓ \"quoted\" \\ back", "n": 42, "x": -1.5, "big": 12345678901,
                 "none": None, "yes": True, "list": [1, [2, {"k": "v"}], None], "empty": {}}


@scenario("results", "an output reaches the run and the next step's deps unchanged")
def results(kit: Kit) -> None:
    run = kit.finished(kit.c.submit("conformance_echo", RESULTS_INPUT))
    _expect(run.state == "completed", f"the run {run.state} ({run.error_kind}: {run.error})")
    second = run.output.get("second") if isinstance(run.output, dict) else None
    _expect(isinstance(second, dict), f"the run's output is {run.output!r}, not {{'second': ...}}")
    assert isinstance(second, dict)
    _expect(second.get("input") == RESULTS_INPUT, f"second got input {second.get('input')!r}")
    first = (second.get("deps") or {}).get("first")
    _expect(isinstance(first, dict) and first.get("input") == RESULTS_INPUT and first.get("attempt") == 1,
            f"second got deps {second.get('deps')!r}, not first's output")
    _expect(second.get("attempt") == 1, f"second ran as attempt {second.get('attempt')!r}")


@scenario("retries", "a failed attempt is retried after the engine's backoff")
def retries(kit: Kit) -> None:
    run_id = kit.c.submit("conformance_flaky", {"fail_times": 2})
    run = kit.finished(run_id, 20)
    s = kit.step(run_id, "flaky")
    _expect(run.state == "completed" and s.attempt == 3,
            f"the run {run.state} on attempt {s.attempt} ({s.error_kind}: {s.error})")
    errors = [e for e in kit.c.step_errors(run_id) if e.step_id == s.id]
    _expect([(e.attempt, e.error_kind) for e in errors] == [(1, "error"), (2, "error")],
            f"the errors recorded are {[(e.attempt, e.error_kind) for e in errors]}, not attempts 1 and 2 as error")
    for e in errors:
        _expect(f"flaky: attempt {e.attempt} fails by design" in e.error, f"attempt {e.attempt}'s error is {e.error!r}")
    # backoff(2) is uniform in [1 s, 2 s]: attempt 3 is claimed no sooner than 1 s after the second failure.
    assert s.started_at is not None
    waited = (s.started_at - errors[1].at).total_seconds()
    _expect(waited >= 1.0, f"attempt 3 was claimed {waited:.2f} s after attempt 2 failed; the backoff is 1 to 2 s")


@scenario("permanent", "a permanent failure is discarded at once")
def permanent(kit: Kit) -> None:
    run_id = kit.c.submit("conformance_permanent")
    kit.finished(run_id)
    s = kit.step(run_id, "doomed")
    _expect((s.state, s.error_kind, s.attempt) == ("discarded", "permanent", 1),
            f"the step is {s.state} ({s.error_kind}) after attempt {s.attempt}, not discarded as permanent on 1")
    _expect("permanent by design" in (s.error or ""), f"its error is {s.error!r}")


MAP_ITEMS = [10, "twenty", {"thirty": 30}, None]


@scenario("map", "each item of a map runs with its item and item_index, and the map ends with their outputs")
def map_items(kit: Kit) -> None:
    run = kit.finished(kit.c.submit("conformance_map", {"items": MAP_ITEMS}))
    _expect(run.state == "completed", f"the run {run.state} ({run.error_kind}: {run.error})")
    outputs = run.output.get("each") if isinstance(run.output, dict) else None
    _expect(isinstance(outputs, list) and len(outputs) == len(MAP_ITEMS),
            f"the map's output is {outputs!r}, not one element per item")
    assert isinstance(outputs, list)
    for i, (item, out) in enumerate(zip(MAP_ITEMS, outputs, strict=True)):
        _expect(isinstance(out, dict) and out.get("item") == item and out.get("item_index") == i,
                f"item {i} ran with item {(out or {}).get('item')!r} and item_index "
                f"{(out or {}).get('item_index')!r}, not {item!r} and {i}")
        _expect(out.get("input") == {"items": MAP_ITEMS} and out.get("attempt") == 1,
                f"item {i} got input {out.get('input')!r} on attempt {out.get('attempt')!r}")


@scenario("snooze", "a snoozed step comes back after its delay on the same attempt, with no error")
def snoozed(kit: Kit) -> None:
    until = datetime.now(UTC) + timedelta(seconds=1.5)
    run_id = kit.c.submit("conformance_snooze", {"until": until.isoformat()})
    run = kit.finished(run_id)
    s = kit.step(run_id, "later")
    _expect(run.state == "completed", f"the run {run.state} ({run.error_kind}: {run.error})")
    _expect(s.snoozes >= 1, f"the step was snoozed {s.snoozes} times, not once or more")
    _expect(s.attempt == 1 and s.error is None and kit.c.step_errors(run_id) == [],
            f"it ended on attempt {s.attempt} with errors {[e.error for e in kit.c.step_errors(run_id)]}")


@scenario("heartbeats", "heartbeats keep the lease of a step that runs for several lease TTLs")
def heartbeats(kit: Kit) -> None:
    seconds = 3 * MAX_TTL
    run_id = kit.c.submit("conformance_sleep", {"seconds": seconds})
    ttl = kit.lease_ttl(kit.running(run_id, "nap"))
    deadline = time.monotonic() + seconds + WAIT
    while not kit.c.get_run(run_id).terminal:  # ticks meanwhile: a lease let go is reclaimed at once
        kit.c.tick()
        _expect(time.monotonic() < deadline, f"the run did not end within {seconds + WAIT:g} s")
        time.sleep(0.25)
    s = kit.step(run_id, "nap")
    _expect((s.state, s.reclaims, s.lease_generation) == ("completed", 0, 1),
            f"after {seconds:g} s under a {ttl:.1f} s lease the step is {s.state} with reclaims {s.reclaims} and "
            f"lease_generation {s.lease_generation}: its lease was not kept alive")
    _expect(s.heartbeat_at is not None and s.started_at is not None and s.heartbeat_at > s.started_at,
            "the step's heartbeat_at was never set: no renew")


@scenario("timeout", "an attempt past its timeout fails as timeout and the next one runs")
def timeout(kit: Kit) -> None:
    run_id = kit.c.submit("conformance_timeout", {"seconds": 30, "slow_attempts": 1})
    run = kit.finished(run_id, 20)
    s = kit.step(run_id, "nap")
    kinds = [(e.attempt, e.error_kind) for e in kit.c.step_errors(run_id)]
    _expect(kinds == [(1, "timeout")], f"the errors recorded are {kinds}, not attempt 1 as timeout")
    _expect(run.state == "completed" and s.attempt == 2, f"the run {run.state} on attempt {s.attempt}")


@scenario("signal", "a signal's payload reaches the step after the wait node")
def signal_payload(kit: Kit) -> None:
    run_id = kit.c.submit("conformance_signal")
    _expect(kit.c.signal(run_id, "approve", {"by": "the kit"}), "the signal was not taken")
    run = kit.finished(run_id)
    after = run.output.get("after") if isinstance(run.output, dict) else None
    got = after.get("deps", {}).get("approval") if isinstance(after, dict) else None
    _expect(run.state == "completed" and got == {"by": "the kit"}, f"the run {run.state}; after's deps.approval is "
                                                                    f"{got!r}")


@scenario("cancel", "cancelling runs stops their running handlers")
def cancel(kit: Kit) -> None:
    hung = kit.fill(lambda: kit.c.submit("conformance_hang"))
    for run_id in hung:
        kit.c.cancel(run_id, "conformance: cancel")
    echo = kit.c.submit("conformance_echo", {})
    run = kit.wait("the echo run submitted after the cancel did not complete: the cancelled handlers still hold "
                   "the worker's slots", lambda: _terminal(kit.c.get_run(echo)), 10)
    _expect(run.state == "completed", f"the echo run {run.state}")


@scenario("deadline", "a run deadline fails the runs and stops their handlers (the worker ticks)")
def deadline(kit: Kit) -> None:
    hung = kit.fill(lambda: kit.c.submit("conformance_hang", deadline=timedelta(seconds=2)))
    echo = kit.c.submit("conformance_echo", {})
    for run_id in hung:
        run = kit.finished(run_id)
        _expect((run.state, run.error_kind) == ("failed", "deadline"), f"run {run_id} {run.state} ({run.error_kind})")
    run = kit.wait("the echo run did not complete after the deadlines: the failed runs' handlers still hold the "
                   "worker's slots", lambda: _terminal(kit.c.get_run(echo)), 10)
    _expect(run.state == "completed", f"the echo run {run.state}")


@scenario("sigkill", "a killed worker's step is reclaimed by the next worker's tick and runs again")
def sigkill(kit: Kit) -> None:
    run_id = kit.c.submit("conformance_sleep", {"seconds": 60})
    ttl = kit.lease_ttl(kit.running(run_id, "nap"))
    kit.worker.send(signal.SIGKILL)
    _expect(kit.worker.wait(5) is not None, "the worker did not die on SIGKILL")
    kit.worker.start()
    kit.live_worker(new=True)
    kit.c.advance_time(timedelta(seconds=ttl + 1))  # past the dead worker's lease
    s = kit.step_when(run_id, "nap", "the step was not reclaimed and claimed again (the kit does not tick here: "
                      "the worker must)", lambda s: s.state == "running" and s.lease_generation == 2)
    _expect((s.reclaims, s.attempt) == (1, 1), f"reclaims {s.reclaims}, attempt {s.attempt}: a reclaim is no attempt")


@scenario("sigstop", "a stopped worker's late result is refused and the step runs again")
def sigstop(kit: Kit) -> None:
    run_id = kit.c.submit("conformance_sleep", {"seconds": 2})
    ttl = kit.lease_ttl(kit.running(run_id, "nap"))
    kit.worker.send(signal.SIGSTOP)
    try:
        kit.c.advance_time(timedelta(seconds=ttl + 1))
        kit.c.tick()
        s = kit.step(run_id, "nap")
        _expect((s.state, s.reclaims) == ("available", 1), f"the kit's tick left the step {s.state}")
        time.sleep(2.5)  # the handler's sleep is over when the worker wakes: its result is late
    finally:
        kit.worker.send(signal.SIGCONT)
    run = kit.finished(run_id, 20)
    s = kit.step(run_id, "nap")
    _expect(kit.worker.alive, "the worker exited after its late result was refused")
    _expect((run.state, s.lease_generation, s.reclaims) == ("completed", 2, 1),
            f"the run {run.state}, the step under lease_generation {s.lease_generation} with reclaims {s.reclaims}")


@scenario("sigterm", "SIGTERM hands the lease back and deregisters")
def sigterm(kit: Kit) -> None:
    run_id = kit.c.submit("conformance_sleep", {"seconds": 60})
    owner = kit.running(run_id, "nap").lease_owner
    kit.worker.send(signal.SIGTERM)
    code = kit.worker.wait(10)
    _expect(code == 0, "the worker did not exit within 10 s of SIGTERM" if code is None
            else f"the worker exited {code} on SIGTERM, not 0")
    s = kit.step(run_id, "nap")
    _expect((s.state, s.reclaims, s.attempt, s.lease_owner) == ("available", 0, 1, None),
            f"the step is {s.state} (reclaims {s.reclaims}, attempt {s.attempt}, lease owner {s.lease_owner!r}), "
            "not released")
    _expect(all(r.name != owner for r in kit.c.workers()), f"worker {owner!r} is still in the registry")
    kit.restart()


def run_kit(client: Client, command: Sequence[str], *, dsn: str, log: IO[str],
            only: Sequence[str] = ()) -> Iterator[Result]:
    """Define the kit's workflows on ``client``'s database, start ``command`` with ``CYCLONE_DSN`` = ``dsn``
    as a URL, and run the scenarios (those named in ``only``, else all), yielding each verdict as it comes."""
    for name, definition in WORKFLOWS.items():
        client.define_workflow(name, definition)
    env = {**os.environ, "CYCLONE_DSN": worker_url(dsn)}
    env.pop("DATABASE_URL", None)
    worker = WorkerProcess(command, env, log)
    kit = Kit(client, worker)
    worker.start()
    try:
        for sc in SCENARIOS:
            if only and sc.name not in only:
                if sc.name == "registry":  # the others need the worker's concurrency: learn it quietly
                    _quietly(kit, registry)
                continue
            started = time.monotonic()
            try:
                if not worker.alive:
                    kit.restart()
                sc.run(kit)
                yield Result(sc.name, True, sc.summary, time.monotonic() - started)
            except Failed as exc:
                yield Result(sc.name, False, str(exc), time.monotonic() - started)
            finally:
                kit.cleanup()
    finally:
        worker.stop()


def _quietly(kit: Kit, check: Callable[[Kit], None]) -> None:
    try:
        check(kit)
    except Failed:
        pass
