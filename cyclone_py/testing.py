"""A test harness that drives the real engine without waiting.

``Env`` runs handlers in-process against a real database, through exactly the
SQL functions a worker uses (``claim``, ``complete``, ``fail``, ``tick``); it
has no engine of its own. Time moves only when the test says so
(``advance_time`` moves the engine clock and ticks), so backoffs, timeouts,
``max_wait`` and run deadlines are tested in milliseconds. ``async def``
handlers run on the harness's own event loop (one for its life, like a
worker's), plain ones in the calling thread::

    env = Env(dsn, app)
    run_id = env.submit("orders", {"order": 1}, deadline=timedelta(hours=1))
    env.run_until_idle()                   # the run parks on its wait node
    env.advance_time(timedelta(hours=2))   # past the deadline
    run = env.run_until_complete(run_id)
    assert (run.state, run.error_kind) == ("failed", "deadline")

``Env(dsn, app)`` drives that whole database: it runs every due step of the
app's workflows there and moves its clock (put back on real time by
``close()``). To touch nothing but its own runs, a harness takes a database of
its own: :meth:`Env.scratch` copies a :class:`Template` (the engine deployed
once, by sqitch, plus the user's own schema) and drops the copy at close. The
pytest plugin (:mod:`cyclone_py.pytest_plugin`, the ``cyclone_env`` fixture)
does that for every test.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from cyclone_py import client as clients
from cyclone_py import db, errors
from cyclone_py.aio import EventLoop, is_async_handler
from cyclone_py.client import ClaimedStep, Client, Run, RunId, StepRow, TickResult, WorkflowRef
from cyclone_py.durations import Duration, to_seconds, to_timedelta
from cyclone_py.errors import RunStuck
from cyclone_py.execution import Backoff, ErrorHook, Outcome, execute, execute_async, make_context
from cyclone_py.vocabulary import TERMINAL_RUN_STATES
from cyclone_py.workflow import App, Workflow, as_app

__all__ = ["Env", "RunStuck", "Template"]  # RunStuck: what run_until_complete raises (errors.py's), beside Env


class Template:
    """A database with the engine deployed, to copy one scratch database per
    harness from; :meth:`deploy` makes one, :meth:`drop` removes it.

    ``dsn`` is the server (and the role) it lives on; the role must be allowed
    to create databases. The template is closed to connections once deployed
    (a database is copied only while nobody is connected to it)."""

    def __init__(self, dsn: str, name: str) -> None:
        self.dsn = dsn
        self.name = name

    def __repr__(self) -> str:
        return f"Template({self.name!r})"

    @classmethod
    def deploy(
        cls, dsn: str | None = None, *, setup: Callable[[str], object] | None = None, prefix: str = "cyclone_tpl"
    ) -> Template:
        """Create ``<prefix>_<pid>_<random>`` on ``dsn``'s server (``None``:
        resolved like the CLI's), deploy the engine into it with sqitch, then
        call ``setup(template_dsn)`` to load the application's own schema.

        Raises :class:`~cyclone_py.errors.CycloneError` with one line when
        the role cannot create databases, sqitch is missing or the deploy
        fails: it never falls back to the database ``dsn`` names."""
        dsn = db.resolve_dsn(dsn, start=True)
        role, allowed = clients.can_create_databases(dsn)
        if not allowed:
            raise errors.CycloneError(
                f"role {role!r} cannot create databases, and a scratch database per test needs that: "
                f"ALTER ROLE {role} CREATEDB, or point --cyclone-dsn/CYCLONE_DSN at a server where it can"
            )
        try:
            db.sqitch_executable()  # before making a database it could not deploy into
        except db.EmbeddedDBError as exc:
            raise errors.CycloneError(str(exc)) from None
        template = cls(dsn, f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}")
        url = clients.create_database(dsn, template.name)
        try:
            try:
                db.sqitch(["deploy"], url, quiet=True)
            except db.EmbeddedDBError as exc:
                raise errors.CycloneError(f"deploying the test template {template.name}: {exc}") from None
            if setup is not None:
                setup(url)
            clients.close_database(dsn, template.name)
        except BaseException:
            template.drop()
            raise
        return template

    def copy(self, prefix: str = "cyclone_env") -> tuple[str, str]:
        """A new database copied from the template: (its name, its DSN)."""
        name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        return name, clients.create_database(self.dsn, name, template=self.name)

    def drop_copy(self, name: str) -> None:
        clients.drop_database(self.dsn, name)

    def drop(self) -> None:
        clients.drop_database(self.dsn, self.name)


class Env:
    """Drive an App's workflows on a real database, one step at a time.

    ``backoff``, ``on_error`` and ``max_reclaims`` default to the App's; given
    here, they win."""

    def __init__(
        self,
        dsn: str | None,
        app: App | Workflow,
        *,
        worker: str = "cyclone-testing",
        lease_ttl: Duration = timedelta(minutes=5),
        max_reclaims: int | None = None,
        backoff: Backoff | None = None,
        on_error: ErrorHook | None = None,
        register: bool = True,
    ) -> None:
        self.app = as_app(app)
        self.client = Client(dsn, min_size=1, max_size=2, application_name="cyclone-testing")
        self.dsn = self.client.dsn
        self.worker = worker
        self.lease_ttl = to_timedelta(lease_ttl)
        self.max_reclaims = max_reclaims if max_reclaims is not None else self.app.max_reclaims or 0
        self.backoff = backoff if backoff is not None else self.app.backoff
        self.on_error = on_error if on_error is not None else self.app.on_error
        self._aio = EventLoop(name="cyclone-testing-aio")  # started by the first async step
        self._moved_clock = False
        self._drop: Callable[[], None] | None = None  # drops a scratch database (Env.scratch)
        self.handlers = self.app.handler_names()
        self.workflows = self.app.workflow_names()
        self.discards: list[errors.StepFailed] = []
        if register:
            # As a worker does at start: the limits, the workflows, then the schedules.
            for lim in self.app.limits:
                self.client.define_limit(**lim.arguments())
            for name, definition in self.app.definitions():
                self.client.define_workflow(name, definition)
            for sched in self.app.schedules:
                self.client.schedule(**sched.arguments())

    @classmethod
    def scratch(cls, template: Template, app: App | Workflow, **kwargs: Any) -> Env:
        """An Env on a database of its own, copied from ``template`` and
        dropped by :meth:`close`: it sees no other test's runs, and its clock
        is its own. ``kwargs`` are :class:`Env`'s."""
        name, dsn = template.copy()
        try:
            env = cls(dsn, app, **kwargs)
        except BaseException:
            template.drop_copy(name)
            raise
        env._drop = lambda: template.drop_copy(name)
        return env

    def close(self) -> None:
        """Close the connections; put the engine clock back on real time if
        this harness moved it; drop a scratch database."""
        self._aio.close()
        try:
            if self._moved_clock and self._drop is None:
                self.client.reset_time()
        finally:
            self.client.close()
            drop, self._drop = self._drop, None
            if drop is not None:
                drop()

    def __enter__(self) -> Env:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- pass-throughs ----------------------------------------------------

    def submit(
        self,
        workflow: WorkflowRef,
        input: Any = None,
        *,
        deadline: Duration | None = None,
        idempotency_key: str | None = None,
        run_at: datetime | None = None,
        priority: int = 0,
        debounce_key: str | None = None,
        debounce: Duration | None = None,
        debounce_max: Duration | None = None,
        idempotency_window: Duration | None = None,
    ) -> UUID:
        return self.client.submit(workflow, input, deadline=deadline, idempotency_key=idempotency_key, run_at=run_at,
                                  priority=priority, debounce_key=debounce_key, debounce=debounce,
                                  debounce_max=debounce_max, idempotency_window=idempotency_window)

    def signal(self, run_id: RunId, name: str, payload: Any = None) -> bool:
        return self.client.signal(run_id, name, payload)

    def emit_event(self, key: str, payload: Any = None) -> int:
        return self.client.emit_event(key, payload)

    def signal_with_start(self, workflow: WorkflowRef, idempotency_key: str, signal: str, payload: Any = None,
                          input: Any = None) -> UUID:
        return self.client.signal_with_start(workflow, idempotency_key, signal, payload, input)

    def rerun(self, run_id: RunId, from_node: str | None = None, reason: str | None = None) -> UUID:
        return self.client.rerun(run_id, from_node, reason)

    def get_run(self, run_id: RunId) -> Run:
        return self.client.get_run(run_id)

    def steps(self, run_id: RunId) -> list[StepRow]:
        return self.client.steps(run_id)

    def step(self, run_id: RunId, node: str) -> StepRow:
        for row in self.client.steps(run_id):
            if row.node == node and row.item_index is None:  # the node's own step, not a map's item
                return row
        raise errors.NotFound(f"run {run_id} has no node {node!r}")

    def now(self) -> datetime:
        return self.client.now()

    # -- time -------------------------------------------------------------

    def tick(self) -> TickResult:
        """``cyclone.tick`` (reclaims, timeouts, deadlines, max_wait, due schedule slots)."""
        result = self.client.tick(self.max_reclaims)
        for discarded in result.discarded_steps:
            self._discarded(discarded.exception())
        return result

    def advance_time(self, by: Duration) -> datetime:
        """Move the engine clock forward, then tick; returns the new engine time.
        :meth:`close` puts it back on real time."""
        self._moved_clock = True
        now = self.client.advance_time(by)
        self.tick()
        return now

    # -- running ----------------------------------------------------------

    def run_once(self) -> ClaimedStep | None:
        """Claim one due step and run it; None when nothing is claimable."""
        claimed = (self.client.claim(self.worker, self.handlers, 1, self.lease_ttl, self.workflows)
                   if self.handlers else [])
        if not claimed:
            return None
        step = claimed[0]
        self._report(self._execute(step))
        return step

    def run_until_idle(self, max_steps: int = 10_000) -> int:
        """Tick, then claim and run every step due now (including the ones the
        DAG makes due meanwhile) until none is claimable; returns how many ran."""
        self.tick()
        executed = 0
        while self.run_once() is not None:
            executed += 1
            if executed >= max_steps:
                raise errors.CycloneError(f"run_until_idle: more than {max_steps} steps; a loop?")
        return executed

    def run_until_complete(
        self,
        run_id: RunId,
        *,
        max_rounds: int = 1_000,
        timeout: Duration = 30.0,
        advance: bool = False,
    ) -> Run:
        """Run until ``run_id`` is terminal; returns ``get_run``.

        Raises :class:`~cyclone_py.errors.RunStuck` when the run can only make
        progress by moving time or by a signal (nothing claimable, nothing
        running, still not terminal). With ``advance=True``, time is moved
        to the next retry of this run, or the wake time of its sleep node,
        instead. Steps leased by another
        worker are waited for, up to ``timeout``.
        """
        limit = to_seconds(timeout)
        started = time.monotonic()
        for _ in range(max_rounds):
            run = self.client.get_run(run_id)
            if run.state in TERMINAL_RUN_STATES:
                return run
            if self.run_until_idle():
                continue
            run = self.client.get_run(run_id)
            if run.state in TERMINAL_RUN_STATES:
                return run
            steps = self._steps_tree(run.id)
            if any(s.state == "running" for s in steps):
                if time.monotonic() - started > limit:
                    raise RunStuck(f"run {run.id}: steps still running elsewhere after {limit:.0f}s")
                time.sleep(0.02)
                continue
            if advance and run.state == "running" and self._advance_to_next_retry(steps):
                continue
            raise RunStuck(self._stuck_message(run, steps))
        raise RunStuck(f"run {run_id} not terminal after {max_rounds} rounds")

    # -- internals --------------------------------------------------------

    def _execute(self, step: ClaimedStep) -> Outcome:
        # Every ctx.progress call reaches SQL at once: the harness runs one step at a time and needs no throttle.
        ctx = make_context(step, self.worker,
                           lambda value: self.client.progress(step.step_id, self.worker, step.lease_generation, value))
        timer: threading.Timer | None = None
        if step.timeout is not None:
            timer = threading.Timer(step.timeout.total_seconds(), ctx.cancel, ("timeout",))
            timer.daemon = True
            timer.start()
        try:
            fn = self.app.lookup(step.workflow, step.handler)
            if fn is not None and is_async_handler(fn):
                return self._aio.submit(execute_async(self.app, step, ctx, self.backoff)).result()
            return execute(self.app, step, ctx, self.backoff)
        finally:
            if timer is not None:
                timer.cancel()

    def _report(self, outcome: Outcome) -> None:
        step = outcome.step
        if outcome.snooze is not None:
            self.client.snooze(step.step_id, self.worker, step.lease_generation, outcome.snooze)
            return
        if outcome.ok:
            self.client.complete_many(
                self.worker, [step.step_id], [step.lease_generation], [outcome.output_json], serialized=True
            )
            return
        state = self.client.fail(
            step.step_id,
            self.worker,
            step.lease_generation,
            outcome.error or "",
            outcome.error_kind,
            outcome.retry_in,
        )
        if state == "discarded":
            self._discarded(outcome.discard().exception())

    def _discarded(self, exc: errors.StepFailed) -> None:
        self.discards.append(exc)
        if self.on_error is not None:
            self.on_error(exc)

    def _steps_tree(self, run_id: UUID) -> list[StepRow]:
        """The steps of a run and of the runs it waits on: its waiting child
        runs, and the runs its await nodes await (SPEC 17)."""
        out: list[StepRow] = []
        todo: list[UUID] = [run_id]
        seen: set[UUID] = set()
        while todo:
            rid = todo.pop()
            if rid in seen:
                continue
            seen.add(rid)
            for row in self.client.steps(rid):
                out.append(row)
                if row.kind == "child" and row.state == "waiting" and row.child_run_id is not None:
                    todo.append(row.child_run_id)
                if row.kind == "await" and row.state == "waiting" and row.awaited_run_id is not None:
                    todo.append(row.awaited_run_id)
        return out

    def _advance_to_next_retry(self, steps: Sequence[StepRow]) -> bool:
        """Move the clock to the first moment a step can move on: an available
        step's retry ``scheduled_at`` or its rate limit's next slot (both as
        ``explain_step`` says), a sleep node's wake time (the tick of
        :meth:`advance_time` wakes it). False when no step waits on time."""
        moments: list[datetime] = []
        for s in steps:
            if s.state == "waiting" and s.kind == "sleep" and s.scheduled_at is not None:
                moments.append(s.scheduled_at)  # a sleep wakes at its scheduled_at (SPEC 16)
                continue
            if s.state != "available":
                continue
            e = self.client.explain_step(s.id)
            if e.reason == "not_due" and e.until is not None:
                moments.append(e.until)
            elif e.reason == "rate_limit" and e.next_slot_at is not None:
                moments.append(e.next_slot_at)
        if not moments:
            return False
        gap = min(moments) - self.client.now()
        self.advance_time(max(gap, timedelta(0)) + timedelta(milliseconds=1))
        return True

    def _held_back(self, step_id: int) -> str:
        """Why an available, due step was not claimed, as ``explain_step`` says."""
        e = self.client.explain_step(step_id)
        if e.reason == "concurrency_limit":
            return f"is held back: bucket {e.bucket!r} of limit {e.limit} is full ({e.running}/{e.max} running)"
        if e.reason == "rate_limit" and e.next_slot_at is not None:
            return (f"waits for limit {e.limit}'s next slot at {e.next_slot_at.isoformat()} "
                    "(advance_time, or run_until_complete(..., advance=True))")
        return "is available but was not claimed"

    def _waits_for_signal(self, step: StepRow, where: str, *, own: bool) -> str:
        """A waiting wait node, with the signal it waits for (``explain_step``'s) and the call that sends it."""
        name = self.client.explain_step(step.id).signal
        if name is None:
            return f"node {step.node!r}{where} waits for a signal"
        target = "run" if own else f"'{step.run_id}'"
        return f"node {step.node!r}{where} waits for signal {name!r} (env.signal({target}, {name!r}, ...))"

    def _stuck_message(self, run: Run, steps: Sequence[StepRow]) -> str:
        reasons: list[str] = []
        if run.state == "paused":
            reasons.append("the run is paused (resume it)")
        now = self.client.now()
        for s in steps:
            where = "" if s.run_id == run.id else f" of child run {s.run_id}"
            if s.state == "waiting" and s.kind == "wait":
                reasons.append(self._waits_for_signal(s, where, own=s.run_id == run.id))
            elif s.state == "waiting" and s.kind == "event":
                reasons.append(f"node {s.node!r}{where} waits for an event of key {s.event_key!r} (emit_event)")
            elif s.state == "waiting" and s.kind == "await":
                reasons.append(f"node {s.node!r}{where} waits for run {s.awaited_run_id} to end")
            elif s.state == "waiting" and s.kind == "sleep" and s.scheduled_at is not None:
                reasons.append(f"node {s.node!r}{where} sleeps until {s.scheduled_at.isoformat()} "
                               f"(advance_time, or run_until_complete(..., advance=True))")
            elif s.state == "waiting" and s.kind == "child" and s.child_run_id is None:
                reasons.append(f"node {s.node!r}{where} waits for its child run")
            elif s.state == "available":
                if s.scheduled_at is not None and s.scheduled_at > now:
                    reasons.append(
                        f"node {s.node!r}{where} is scheduled at {s.scheduled_at.isoformat()} "
                        f"({(s.scheduled_at - now).total_seconds():.3f}s ahead: advance_time)"
                    )
                elif s.handler not in self.handlers:
                    reasons.append(f"node {s.node!r}{where} needs handler {s.handler!r}, not in this app")
                elif run.state != "paused":
                    reasons.append(f"node {s.node!r}{where} {self._held_back(s.id)}")
        detail = "; ".join(reasons) or "no step is claimable or running"
        return f"run {run.id} ({run.workflow}) is {run.state} and cannot progress on its own: {detail}"
