"""Property-based tests of the SQL API (#21): a hypothesis state machine.

Each example is a fresh database (a copy of the session's template) and a
random sequence of SQL calls over random small DAGs: submit, claim, renew,
complete, fail, tick after moving the clock (sweep, reclaims, schedules),
retry, cancel, pause and resume, signal; with a concurrency limit and a keyed
one taken by some workflows, and an hourly schedule. A small model of the
engine predicts every call's result and every step's state, attempt, reclaims
and lease generation; after every call the database must match it,
``check_invariants()`` must be empty, and no limit bucket holds more running
steps than its concurrency.

Time is moved in jumps of two hours against a lease TTL of one hour and a
retry delay of half an hour, so the real time an example takes never decides
whether a lease has expired or a retry is due.

Size: 25 examples of up to 40 calls each in ``make test`` (about 20 s);
``CYCLONE_PROPERTY_EXAMPLES=500`` for a longer search. A failure shrinks to the
shortest call sequence hypothesis finds, printed as ``state.claim(...)``
lines; ``.hypothesis/`` keeps it, so the next run tries it first.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from uuid import UUID

import psycopg
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from cyclone_py import db, errors
from cyclone_py.client import Client

EXAMPLES = int(os.environ.get("CYCLONE_PROPERTY_EXAMPLES", "25"))
STEPS = 40

LEASE_TTL = timedelta(hours=1)
JUMP = timedelta(hours=2)       # every lease taken before a jump has expired after it
LATER = timedelta(minutes=30)   # a retry delay that is due after the next jump, not before
WORKERS = ("w1", "w2")
TENANTS = ("a", "b")
SIGNALS = ("go", "ok")
LIVE = ("pending", "available", "running", "waiting")
TERMINAL = ("completed", "discarded", "cancelled")


# -- the model ----------------------------------------------------------------


@dataclass
class NodeDef:
    name: str
    deps: list[str]
    kind: str           # task | wait
    signal: str | None
    on_dep_failure: str
    max_attempts: int


@dataclass
class WorkflowDef:
    name: str
    nodes: list[NodeDef]
    limits: list[str]   # "lim" (one bucket) and/or "per" (keyed by the input's tenant)

    def definition(self) -> dict[str, Any]:
        nodes = []
        for n in self.nodes:
            node: dict[str, Any] = {"name": n.name, "deps": n.deps, "kind": n.kind,
                                    "on_dep_failure": n.on_dep_failure, "max_attempts": n.max_attempts}
            if n.kind == "wait":
                node["signal"] = n.signal
                del node["max_attempts"]
            nodes.append(node)
        limits = [{"name": "lim"} if name == "lim" else {"name": "per", "key": "tenant"} for name in self.limits]
        return {"nodes": nodes, "limits": limits}


@dataclass
class MStep:
    id: int
    node: NodeDef
    state: str
    attempt: int = 0
    max_attempts: int = 1
    reclaims: int = 0
    generation: int = 0
    rerun: bool = False         # the next claim runs the same attempt (after a reclaim)
    contained: bool = False     # discarded, its failure contained by cancel_branch
    due_epoch: int = 0          # claimable from this clock epoch on
    lease_epoch: int = 0        # the lease expires with the jump after this epoch
    owner: str | None = None


@dataclass
class MRun:
    id: UUID
    workflow: WorkflowDef
    tenant: str
    state: str = "running"
    steps: dict[str, MStep] = field(default_factory=dict)
    signals: Counter[str] = field(default_factory=Counter)   # kept for wait nodes still to come
    scheduled: bool = False

    def dependents(self, node: str) -> list[MStep]:
        return [s for s in self.steps.values() if node in s.node.deps]

    def buckets(self, step: MStep) -> list[tuple[str, str]]:
        if step.node.kind != "task":
            return []
        return [("lim", "") if name == "lim" else ("per", self.tenant) for name in self.workflow.limits]


@dataclass(frozen=True)
class Lease:
    """One claim's lease, current or long lost: what a worker reports with."""

    step_id: int
    worker: str
    generation: int


def dags() -> st.SearchStrategy[list[NodeDef]]:
    @st.composite
    def build(draw: st.DrawFn) -> list[NodeDef]:
        count = draw(st.integers(1, 4))
        nodes: list[NodeDef] = []
        for i in range(count):
            earlier = [n.name for n in nodes]
            deps = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=2)) if earlier else []
            kind = draw(st.sampled_from(["task", "task", "task", "wait"]))
            nodes.append(NodeDef(
                name=f"n{i}", deps=sorted(deps), kind=kind,
                signal=draw(st.sampled_from(SIGNALS)) if kind == "wait" else None,
                on_dep_failure=draw(st.sampled_from(["fail_run", "cancel_branch"])),
                max_attempts=draw(st.integers(1, 3))))
        if all(n.kind == "wait" for n in nodes):
            nodes[0].kind, nodes[0].signal = "task", None
        return nodes

    return build()


class EngineMachine(RuleBasedStateMachine):
    """The engine, driven through Client, against the model above."""

    cluster: db.EmbeddedCluster
    template: str

    runs = Bundle("runs")
    leases = Bundle("leases")

    def __init__(self) -> None:
        super().__init__()
        self.db_name = f"cyclone_t_{os.getpid()}_sm{uuid.uuid4().hex[:8]}"
        dsn = self.cluster.create_database(self.db_name, template=self.template)
        self.client = Client(dsn, min_size=1, max_size=1)
        self.reader = psycopg.connect(dsn, autocommit=True)
        self.workflows: list[WorkflowDef] = []
        self.model: dict[UUID, MRun] = {}
        self.by_step: dict[int, tuple[MRun, MStep]] = {}
        self.concurrency = {"lim": 1, "per": 1}
        self.epoch = 0
        self.schedule_paused = False

    def teardown(self) -> None:
        self.client.close()
        self.reader.close()
        self.cluster.drop_database(self.db_name)

    # -- set-up --------------------------------------------------------------

    @initialize(dags=st.lists(dags(), min_size=1, max_size=3),
                limits=st.lists(st.sampled_from([[], ["lim"], ["per"], ["lim", "per"]]), min_size=3, max_size=3),
                lim=st.integers(1, 3), per=st.integers(1, 2))
    def define(self, dags: list[list[NodeDef]], limits: list[list[str]], lim: int, per: int) -> None:
        self.concurrency = {"lim": lim, "per": per}
        self.client.define_limit("lim", concurrency=lim)
        self.client.define_limit("per", concurrency=per)
        for i, nodes in enumerate(dags):
            wf = WorkflowDef(f"wf{i}", nodes, limits[i])
            self.client.define_workflow(wf.name, wf.definition())
            self.workflows.append(wf)
        self.client.schedule("hourly", "0 * * * *", self.workflows[0].name)

    # -- the model's transitions -------------------------------------------

    def _add_run(self, run_id: UUID, wf: WorkflowDef, tenant: str, scheduled: bool = False) -> MRun:
        run = MRun(run_id, wf, tenant, scheduled=scheduled)
        rows = {r[1]: r for r in self._step_rows(run_id)}
        for n in wf.nodes:
            # A wait node's max_attempts is the workflow's default: read, not modelled.
            step = MStep(rows[n.name][0], n, "pending", max_attempts=rows[n.name][6])
            run.steps[n.name] = step
            self.by_step[step.id] = (run, step)
        self.model[run_id] = run
        self._advance(run)
        return run

    def _advance(self, run: MRun) -> None:
        again = True
        while again:
            again = False
            for step in run.steps.values():
                if step.state != "pending" or any(run.steps[d].state != "completed" for d in step.node.deps):
                    continue
                if step.node.kind == "task":
                    step.state, step.due_epoch = "available", self.epoch
                else:
                    step.state = "waiting"
                    assert step.node.signal is not None
                    if run.signals[step.node.signal] > 0:
                        run.signals[step.node.signal] -= 1
                        step.state = "completed"
                        again = True
        self._finish(run)

    def _finish(self, run: MRun) -> None:
        if run.state not in ("running", "paused") or any(s.state in LIVE for s in run.steps.values()):
            return
        failed = any(s.state == "discarded" and not s.contained for s in run.steps.values())
        run.state = "failed" if failed else "completed"

    def _end(self, run: MRun, state: str) -> None:
        for s in run.steps.values():
            if s.state in LIVE:
                s.state, s.owner = "cancelled", None
        run.state = state

    def _discard(self, run: MRun, step: MStep) -> None:
        step.state, step.owner = "discarded", None
        dependents = run.dependents(step.node.name)
        if dependents and all(d.node.on_dep_failure == "cancel_branch" for d in dependents):
            step.contained = True
            branch, todo = set(), [d.node.name for d in dependents]
            while todo:
                name = todo.pop()
                if name not in branch:
                    branch.add(name)
                    todo.extend(d.node.name for d in run.dependents(name))
            for name in branch:
                s = run.steps[name]
                if s.state in LIVE:
                    s.state, s.owner = "cancelled", None
            self._finish(run)
        else:
            self._end(run, "failed")

    def _current(self, lease: Lease) -> MStep | None:
        _, step = self.by_step[lease.step_id]
        if step.state == "running" and step.owner == lease.worker and step.generation == lease.generation:
            return step
        return None

    def _claimable(self, running: Counter[tuple[str, str]]) -> list[tuple[MRun, MStep]]:
        out = []
        for run in self.model.values():
            if run.state != "running":
                continue
            for s in run.steps.values():
                if s.state == "available" and s.due_epoch <= self.epoch \
                        and all(running[b] < self.concurrency[b[0]] for b in run.buckets(s)):
                    out.append((run, s))
        return out

    def _running_per_bucket(self) -> Counter[tuple[str, str]]:
        held: Counter[tuple[str, str]] = Counter()
        for run in self.model.values():
            for s in run.steps.values():
                if s.state == "running":
                    held.update(run.buckets(s))
        return held

    # -- rules ---------------------------------------------------------------

    @rule(target=runs, data=st.data(), tenant=st.sampled_from(TENANTS))
    def submit(self, data: st.DataObject, tenant: str) -> UUID:
        wf = data.draw(st.sampled_from(self.workflows), label="workflow")
        run_id = self.client.submit(wf.name, {"tenant": tenant})
        self._add_run(run_id, wf, tenant)
        return run_id

    def _has_available(self) -> bool:
        return any(s.state == "available" for _, s in self.by_step.values())

    @precondition(_has_available)
    @rule(target=leases, worker=st.sampled_from(WORKERS), limit=st.integers(1, 3))
    def claim(self, worker: str, limit: int) -> Any:
        before = self._running_per_bucket()
        eligible = {s.id for _, s in self._claimable(before)}
        claimed = self.client.claim(worker, limit=limit, lease_ttl=LEASE_TTL)
        assert len(claimed) <= limit
        out = []
        for row in claimed:
            assert row.step_id in eligible, f"claimed step {row.step_id}, which the model holds not claimable"
            run, step = self.by_step[row.step_id]
            expected_attempt = max(step.attempt, 1) if step.rerun else step.attempt + 1
            assert (row.attempt, row.lease_generation) == (expected_attempt, step.generation + 1), row
            step.state, step.owner, step.attempt, step.rerun = "running", worker, expected_attempt, False
            step.generation += 1
            step.lease_epoch = self.epoch
            out.append(Lease(row.step_id, worker, row.lease_generation))
        # No head-of-line blocking: a claim short of its limit left nothing
        # claimable that its buckets had room for.
        if len(claimed) < limit:
            after = self._running_per_bucket()
            left = list(self._claimable(after))
            assert not left, f"claim took {len(claimed)} of {limit} and left {[s.id for _, s in left]} claimable"
        return multiple(*out)

    def _held(self) -> list[Lease]:
        """The current leases, by step id."""
        return [Lease(s.id, s.owner, s.generation) for _, s in sorted(self.by_step.values(), key=lambda p: p[1].id)
                if s.state == "running" and s.owner is not None]

    def _has_lease(self) -> bool:
        return bool(self._held())

    @precondition(_has_lease)
    @rule(data=st.data(), other_worker=st.booleans())
    def renew(self, data: st.DataObject, other_worker: bool) -> None:
        lease = data.draw(st.sampled_from(self._held()), label="lease")
        self._renew(lease, other_worker)

    @precondition(_has_lease)
    @rule(data=st.data())
    def complete(self, data: st.DataObject) -> None:
        self._complete(data.draw(st.sampled_from(self._held()), label="lease"))

    @precondition(_has_lease)
    @rule(data=st.data(), permanent=st.booleans(), later=st.booleans())
    def fail(self, data: st.DataObject, permanent: bool, later: bool) -> None:
        self._fail(data.draw(st.sampled_from(self._held()), label="lease"), permanent, later)

    @rule(lease=leases, call=st.sampled_from(["renew", "complete", "fail"]), other_worker=st.booleans())
    def report_any_lease(self, lease: Lease, call: str, other_worker: bool) -> None:
        """A report with a lease that may be long lost (or another worker's name)."""
        if other_worker:
            lease = Lease(lease.step_id, next(w for w in WORKERS if w != lease.worker), lease.generation)
        if call == "renew":
            self._renew(lease, False)
        elif call == "complete":
            self._complete(lease)
        else:
            self._fail(lease, False, False)

    def _renew(self, lease: Lease, other_worker: bool) -> None:
        worker = next(w for w in WORKERS if w != lease.worker) if other_worker else lease.worker
        step = self._current(Lease(lease.step_id, worker, lease.generation))
        assert self.client.renew(lease.step_id, worker, lease.generation, LEASE_TTL) is (step is not None)
        if step is not None:
            step.lease_epoch = self.epoch

    def _complete(self, lease: Lease) -> None:
        step = self._current(lease)
        assert self.client.complete(lease.step_id, lease.worker, lease.generation, {"step": lease.step_id}) \
            is (step is not None)
        if step is not None:
            run, _ = self.by_step[lease.step_id]
            step.state, step.owner = "completed", None
            self._advance(run)

    def _fail(self, lease: Lease, permanent: bool, later: bool) -> None:
        step = self._current(lease)
        kind = "permanent" if permanent else "error"
        result = self.client.fail(lease.step_id, lease.worker, lease.generation, "boom", kind,
                                  retry_in=LATER if later else timedelta(0))
        if step is None:
            assert result is None
            return
        run, _ = self.by_step[lease.step_id]
        if permanent or step.attempt >= step.max_attempts:
            assert result == "discarded"
            self._discard(run, step)
        else:
            assert result == "available"
            step.state, step.owner = "available", None
            step.due_epoch = self.epoch + 1 if later else self.epoch

    @rule(target=runs, jump=st.booleans(), max_reclaims=st.sampled_from([0, 1, 2]))
    def tick(self, jump: bool, max_reclaims: int) -> Any:
        if jump:
            self.client.advance_time(JUMP)
            self.epoch += 1
        sched = self.client.schedules("hourly")[0]
        before = self.client.now()
        # The sweep: every lease taken before the last jump has expired, in the
        # order of its run, then step.
        reclaimed = discarded = 0
        expired = sorted((s for r in self.model.values() for s in r.steps.values()
                          if s.state == "running" and s.lease_epoch < self.epoch),
                         key=lambda s: (self.by_step[s.id][0].id, s.id))
        for step in expired:
            if step.state != "running":  # cancelled by an earlier discard of its run
                continue
            run, _ = self.by_step[step.id]
            if max_reclaims > 0 and step.reclaims >= max_reclaims:
                self._discard(run, step)
                discarded += 1
            else:
                step.state, step.owner, step.rerun = "available", None, True
                step.reclaims += 1
                reclaimed += 1
        live_scheduled = any(r.scheduled and r.state in ("running", "paused") for r in self.model.values())
        known = set(self.model)
        result = self.client.tick(max_reclaims)
        after = self.client.now()
        assert (result.reclaimed, result.discarded, result.retried) == (reclaimed, discarded, 0), result.raw
        # The schedule (overlap skip): at most one run a tick, none while one
        # of its runs is live or while paused; a due slot fires.
        assert result.scheduled <= 1, result.raw
        if self.schedule_paused or live_scheduled or sched.next_fire_at > after:
            assert result.scheduled == 0, result.raw
        elif sched.next_fire_at <= before:
            assert result.scheduled == 1, result.raw
        new = [r[0] for r in self.reader.execute("SELECT id FROM cyclone.cyclone_runs ORDER BY id").fetchall()
               if r[0] not in known]
        assert len(new) == result.scheduled
        for run_id in new:
            self._add_run(run_id, self.workflows[0], "", scheduled=True)
        return multiple(*new)

    @rule(run=runs, data=st.data(),
          action=st.sampled_from(["cancel", "pause", "resume", "retry", "retry", "retry_all"]))
    def operate(self, run: UUID, action: str, data: st.DataObject) -> None:
        """An operator's call on a run: cancel, pause, resume, retry a node, retry_all."""
        if action == "retry":
            self._retry(run, data, data.draw(st.integers(0, 2), label="additional_attempts"))
        else:
            getattr(self, f"_{action}")(run)

    def _cancel(self, run: UUID) -> None:
        m = self.model[run]
        live = m.state in ("running", "paused")
        assert self.client.cancel(run, "test") is live
        if live:
            self._end(m, "cancelled")

    def _pause(self, run: UUID) -> None:
        m = self.model[run]
        assert self.client.pause(run) is (m.state == "running")
        if m.state == "running":
            m.state = "paused"

    def _resume(self, run: UUID) -> None:
        m = self.model[run]
        assert self.client.resume(run) is (m.state == "paused")
        if m.state == "paused":
            m.state = "running"

    @rule(run=runs, name=st.sampled_from(SIGNALS))
    def signal(self, run: UUID, name: str) -> None:
        m = self.model[run]
        waiting = [s for s in m.steps.values() if s.node.signal == name and s.state == "waiting"]
        to_come = [s for s in m.steps.values() if s.node.signal == name and s.state == "pending"]
        expected = m.state in ("running", "paused") and bool(waiting or to_come)
        assert self.client.signal(run, name, {"signal": name}) is expected
        if not expected:
            return
        if waiting:
            for s in waiting:
                s.state = "completed"
            self._advance(m)
        else:
            m.signals[name] += 1

    def _retry(self, run: UUID, data: st.DataObject, more: int) -> None:
        m = self.model[run]
        discarded = sorted(n for n, s in m.steps.items() if s.state == "discarded")
        node = data.draw(st.sampled_from(discarded or sorted(m.steps)) if discarded and data.draw(st.booleans())
                         else st.sampled_from(sorted(m.steps)), label="node")
        step = m.steps[node]
        if step.state != "discarded" or m.state == "cancelled":
            with pytest.raises(errors.WrongState):
                self.client.retry(run, node, more)
            return
        self.client.retry(run, node, more)
        self._reopen(m, [step], more)

    def _retry_all(self, run: UUID) -> None:
        m = self.model[run]
        discarded = [s for s in m.steps.values() if s.state == "discarded"]
        if discarded and m.state == "cancelled":
            with pytest.raises(errors.WrongState):
                self.client.retry_all(run)
            return
        assert self.client.retry_all(run) == len(discarded)
        if discarded:
            self._reopen(m, discarded, 0)

    def _reopen(self, m: MRun, steps: list[MStep], more: int) -> None:
        for step in steps:
            step.state, step.contained, step.rerun, step.reclaims = "pending", False, False, 0
            step.max_attempts = max(step.max_attempts, step.attempt + more)
        if m.state in ("failed", "completed"):
            m.state = "running"
        changed = True
        while changed:
            changed = False
            for s in m.steps.values():
                if s.state == "cancelled" and not any(
                        m.steps[d].state in ("discarded", "cancelled") for d in s.node.deps):
                    s.state, changed = "pending", True
        self._advance(m)

    @rule(pause=st.booleans())
    def pause_schedule(self, pause: bool) -> None:
        if pause:
            assert self.client.pause_schedule("hourly") is not self.schedule_paused
        else:
            assert self.client.resume_schedule("hourly") is self.schedule_paused
        self.schedule_paused = pause

    def _step_rows(self, run_id: UUID) -> list[tuple[Any, ...]]:
        return self.reader.execute(
            "SELECT id, node, state, attempt, reclaims, lease_generation, max_attempts"
            " FROM cyclone.cyclone_steps WHERE run_id = %s ORDER BY id", (run_id,)).fetchall()

    # -- after every call ----------------------------------------------------

    @invariant()
    def consistent_and_as_modelled(self) -> None:
        """After every call: no broken invariant, no bucket over its concurrency,
        every run and step as the model says."""
        assert self.client.check_invariants() == []
        for row in self.client.limits():
            assert row.concurrency is None or row.running <= row.concurrency, row
        for (name, _), n in self._running_per_bucket().items():
            assert n <= self.concurrency[name]
        states = dict(self.reader.execute("SELECT id, state FROM cyclone.cyclone_runs").fetchall())
        assert set(states) == set(self.model)
        for run_id, m in self.model.items():
            assert states[run_id] == m.state, f"run {run_id} is {states[run_id]}, the model says {m.state}"
        for row in self.reader.execute("SELECT id, state, attempt, reclaims, lease_generation, max_attempts"
                                       " FROM cyclone.cyclone_steps").fetchall():
            run, step = self.by_step[row[0]]
            got = tuple(row[1:])
            want = (step.state, step.attempt, step.reclaims, step.generation, step.max_attempts)
            assert got == want, f"step {row[0]} ({step.node.name}) of run {run.id}: (state, attempt," \
                                f" reclaims, generation, max_attempts) is {got}, the model says {want}"


def test_random_call_sequences_keep_the_engine_consistent_and_as_modelled(
        embedded_db: db.EmbeddedCluster, template_db: str) -> None:
    EngineMachine.cluster = embedded_db
    EngineMachine.template = template_db
    run_state_machine_as_test(EngineMachine, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
