"""Property-based tests of the SQL API (#21): a hypothesis state machine.

Each example is a fresh database (a copy of the session's template) and a
random sequence of SQL calls over random small DAGs of task, wait, child, sleep,
map, event and await nodes (a child node starts a run of a later workflow, so runs
nest up to two levels), some with a condition (when or unless, on the run input's
flag "go" or on a dependency's output) and an on_dep_skipped (SPEC 16): submit (an
input with "go", a list of 0..3 "items" for the maps, or none, and the id of a run
of the model, live or ended, or none, in "awaits" for the await nodes; now and then
debounced by one of two keys, SPEC 17), claim (task
steps and map items), renew, complete, fail, snooze, progress, tick after
moving the clock (sweep, reclaims, max_wait, sleeps, schedules), retry, cancel,
pause and resume (of parent and child runs alike), signal, emit_event (of the
key "ev:{input.tenant}" or "ev:c" that event nodes wait on), rerun (from a node
or not), explain_step, and changing a limit; with a concurrency limit, a keyed one and a rate limit (keyed
or not, a window of one or two clock jumps) taken by some workflows (and so by
their maps' items), and an hourly schedule (its runs' input is {}: no flag, no
list). A small model of the engine predicts every call's result and every
step's state, attempt, reclaims, lease generation, output and error kind, each
map's items and output, and each completed run's output (SPEC 17: the events
emitted and the order of their times against the runs' created_at, the await
nodes that every end of a run ends, a debounced run's start); after every call the
database must match it, ``check_invariants()`` must be empty, and no limit
bucket holds more running steps than its concurrency.

Time is moved in jumps of two days against a lease TTL and a max_wait of one
day, a retry delay and a debounce of half a day, a rate period of one or three days and a sleep
of one or three days, so the real time an example takes (checked: under six
hours) never decides whether a lease has expired, a wait has run out, a sleep is
due, a retry is due or a claim has left its rate window.

Size: 25 examples of up to 40 calls each in ``make test`` (about 30 s);
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
from hypothesis import HealthCheck, event, settings
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

# The clock's jumps are days, so that the real time an example takes (seconds;
# hours when the machine is suspended or its clock is stepped) cannot expire a
# lease, run out a wait or make a retry due between two jumps.
LEASE_TTL = timedelta(days=1)
JUMP = timedelta(days=2)        # every lease taken before a jump has expired after it
LATER = timedelta(hours=12)     # a retry delay that is due after the next jump, not before
MAX_WAIT = "1 day"              # a wait that has run out after one jump of its run's clock
REAL_TIME = timedelta(hours=6)  # the real time an example may take before the model's clock is wrong
WORKERS = ("w1", "w2")
TENANTS = ("a", "b")
SIGNALS = ("go", "ok")
LIVE = ("pending", "available", "running", "waiting")
TERMINAL = ("completed", "discarded", "cancelled", "skipped")
DONE = ("completed", "skipped")  # what a dependency must be for its dependents to be reached
LIMITS = ("lim", "per", "rl")   # concurrency; concurrency keyed by tenant; rate (keyed or not)
KINDS = ("task", "task", "task", "wait", "child", "child", "sleep", "map", "map", "map",
         "event", "event", "event", "await", "await")   # a DAG's nodes, drawn
# SPEC 17: an event node's key, per tenant or one for all; the keys emit_event emits; an await node's run.
EVENT_KEYS = ("ev:{input.tenant}", "ev:c")
EMITTED = ("ev:a", "ev:b", "ev:c")
AWAITS = "input.awaits"
# A sleep of one day is due after one jump of its run's clock, one of three days after two.
SLEEPS = {1: "1 day", 2: "3 days"}
# Conditions (SPEC 16) on the run input's flag, or on a dependency's output being an object
# (a map's is a list; a skipped dependency is absent from "deps").
CONDITIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "go": ("when", {"input": {"go": True}}),
    "no_go": ("when", {"input": {"go": False}}),
    "unless_go": ("unless", {"input": {"go": True}}),
}
MISSING = object()  # what a path finds where the run has no value


# -- the model ----------------------------------------------------------------


@dataclass
class NodeDef:
    name: str
    deps: list[str]
    kind: str           # task | wait | child | sleep | map
    signal: str | None
    on_dep_failure: str
    max_attempts: int           # task nodes, and a map's items
    max_wait: bool = False      # wait and child nodes: max_wait MAX_WAIT
    child: int = 0              # child nodes: an offset to a later workflow (resolved in define)
    workflow: str | None = None
    when: dict[str, Any] | None = None
    unless: dict[str, Any] | None = None
    on_dep_skipped: str | None = None   # "skip" (the default when not given) or "run"
    sleep: int = 0              # sleep nodes: the jumps of its run's clock it sleeps (SLEEPS)
    over: str = ""              # map nodes: "input.items" or "deps.<dep>"
    on_item_failure: str = "fail"
    key: str = ""               # event nodes: the key's template (EVENT_KEYS)


@dataclass
class WorkflowDef:
    name: str
    nodes: list[NodeDef]
    limits: list[str]   # in the definition's order, which is explain_step's
    rl_keyed: bool

    def definition(self) -> dict[str, Any]:
        nodes = []
        for n in self.nodes:
            node: dict[str, Any] = {"name": n.name, "deps": n.deps, "kind": n.kind,
                                    "on_dep_failure": n.on_dep_failure, "max_attempts": n.max_attempts}
            if n.kind not in ("task", "map"):
                del node["max_attempts"]
                if n.max_wait:
                    node["max_wait"] = MAX_WAIT
            if n.kind == "wait":
                node["signal"] = n.signal
            if n.kind == "child":
                node["workflow"] = n.workflow
            if n.kind == "sleep":
                node["duration"] = SLEEPS[n.sleep]
            if n.kind == "map":
                node["over"], node["on_item_failure"] = n.over, n.on_item_failure
            if n.kind == "event":
                node["key"] = n.key
            if n.kind == "await":
                node["run"] = AWAITS
            for key in ("when", "unless", "on_dep_skipped"):
                if getattr(n, key) is not None:
                    node[key] = getattr(n, key)
            nodes.append(node)
        return {"nodes": nodes, "limits": [self.limit_json(name) for name in self.limits]}

    def limit_json(self, name: str) -> dict[str, Any]:
        keyed = name == "per" or (name == "rl" and self.rl_keyed)
        return {"name": name, "key": "tenant"} if keyed else {"name": name}


@dataclass(eq=False)
class MStep:
    id: int                     # 0 until read back (the steps of a child run, a map's items)
    node: NodeDef               # an item's is its map's
    state: str
    attempt: int = 0
    max_attempts: int = 1
    reclaims: int = 0
    generation: int = 0
    rerun: bool = False         # the next claim runs the same attempt (after a reclaim)
    contained: bool = False     # discarded, its failure contained by cancel_branch (or an item: by its map)
    due_epoch: int = 0          # claimable from this clock epoch on
    lease_epoch: int = 0        # the lease expires with the jump after this epoch
    owner: str | None = None
    waited: int = 0             # jumps of its run's clock (not paused) while waiting
    child: MRun | None = None   # a child node's current child run
    output: Any = None          # when completed (a sleep's woke_at as None: see _norm)
    error_kind: str | None = None   # when discarded
    error: str | None = None        # when discarded: an item's, which a "collect" map's output shows
    item_index: int | None = None   # a map's item: its position, its element and its map
    item: Any = None
    map: MStep | None = field(default=None, repr=False)
    items: list[MStep] = field(default_factory=list, repr=False)  # a map reached with a non-empty list
    event_key: str | None = None    # an event node reached: its key
    awaits: MRun | None = field(default=None, repr=False)   # an await node reached: the run it awaits

    @property
    def kind(self) -> str:
        return "item" if self.map is not None else self.node.kind


@dataclass(eq=False)
class MRun:
    id: UUID | None             # None until the run a call made is read back (a child run)
    workflow: WorkflowDef
    tenant: str
    input: dict[str, Any]
    state: str = "running"
    steps: dict[str, MStep] = field(default_factory=dict)   # its own steps, by node (no items)
    signals: Counter[str] = field(default_factory=Counter)   # kept for wait nodes still to come
    output: Any = None          # when completed: its completed leaves' outputs
    scheduled: bool = False
    parent: tuple[MRun, MStep] | None = None
    since: int = 0              # the first of the model's events emitted at or after its created_at
    debounce_key: str | None = None
    not_before: int = 0         # a debounced run: its tasks are not due before this clock epoch (its start)

    def dependents(self, node: str) -> list[MStep]:
        return [s for s in self.steps.values() if node in s.node.deps]

    def all_steps(self) -> list[MStep]:
        """Its own steps and its maps' items."""
        return [t for s in self.steps.values() for t in (s, *s.items)]

    def buckets(self, step: MStep) -> list[tuple[str, str]]:
        """The step's buckets, in its limits' order (a map's items take the map's)."""
        if step.kind not in ("task", "item"):
            return []
        return [(name, self.tenant if "key" in self.workflow.limit_json(name) else "")
                for name in self.workflow.limits]

    def root(self) -> MRun:
        return self if self.parent is None else self.parent[0].root()

    @property
    def live(self) -> bool:
        return self.state in ("running", "paused")


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
            kind = draw(st.sampled_from(KINDS))
            node = NodeDef(
                name=f"n{i}", deps=sorted(deps), kind=kind,
                signal=draw(st.sampled_from(SIGNALS)) if kind == "wait" else None,
                on_dep_failure=draw(st.sampled_from(["fail_run", "cancel_branch"])),
                max_attempts=draw(st.integers(1, 3)),
                max_wait=kind in ("wait", "child") and draw(st.booleans()),
                child=draw(st.integers(0, 1)) if kind == "child" else 0,
                on_dep_skipped=draw(st.sampled_from([None, None, "skip", "run"])) if deps else None,
                sleep=draw(st.integers(1, 2)) if kind == "sleep" else 0,
                # Over the run's list; or over a dependency's output: a map's is a list, any other's a bad_input.
                over=draw(st.sampled_from(["input.items"] * 3 + [f"deps.{d}" for d in deps]))
                if kind == "map" else "",
                on_item_failure=draw(st.sampled_from(["fail", "collect"])) if kind == "map" else "fail",
                key=draw(st.sampled_from(EVENT_KEYS)) if kind == "event" else "")
            condition = draw(st.sampled_from([None] * 5 + [*CONDITIONS, *(["dep"] if deps else [])]))
            if condition == "dep":
                node.when = {"deps": {draw(st.sampled_from(node.deps)): {}}}
            elif condition is not None:
                key, value = CONDITIONS[condition]
                setattr(node, key, value)
            nodes.append(node)
        if all(n.kind != "task" for n in nodes):
            nodes[0].kind, nodes[0].signal, nodes[0].max_wait, nodes[0].sleep = "task", None, False, 0
        return nodes

    return build()


def _contains(doc: Any, pattern: Any) -> bool:
    """jsonb's @> over the JSON values the model holds: objects and arrays
    partially, scalars exactly (true is not 1)."""
    if isinstance(pattern, dict):
        return isinstance(doc, dict) and all(k in doc and _contains(doc[k], v) for k, v in pattern.items())
    if isinstance(pattern, list):
        return isinstance(doc, list) and all(any(_contains(d, p) for d in doc) for p in pattern)
    return type(doc) is type(pattern) and doc == pattern


def _at(doc: Any, path: str) -> Any:
    """The value at a dot path (SPEC 16), or MISSING."""
    for key in path.split("."):
        if not isinstance(doc, dict) or key not in doc:
            return MISSING
        doc = doc[key]
    return doc


def _norm(value: Any) -> Any:
    """A value read from the database as the model holds it: a sleep's woke_at
    (the engine clock's time, which the model does not know) as None."""
    if isinstance(value, dict):
        return {k: None if k == "woke_at" else _norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


def _window(epochs: int) -> timedelta:
    """A rate period that holds the claims of the current clock epoch (1) or of
    the last two (2): a day, or three."""
    return timedelta(days=1 if epochs == 1 else 3)


class EngineMachine(RuleBasedStateMachine):
    """The engine, driven through Client, against the model above."""

    cluster: db.EmbeddedCluster
    template: str

    leases = Bundle("leases")

    def __init__(self) -> None:
        super().__init__()
        self.db_name = f"cyclone_t_{os.getpid()}_sm{uuid.uuid4().hex[:8]}"
        dsn = self.cluster.create_database(self.db_name, template=self.template)
        self.client = Client(dsn, min_size=1, max_size=1)
        self.reader = psycopg.connect(dsn, autocommit=True)
        self.started = self._real_now()
        self.workflows: list[WorkflowDef] = []
        self.model: dict[UUID, MRun] = {}
        self.order: list[UUID] = []                 # runs in the order the model learnt of them
        self.unbound: list[MRun] = []               # child runs a call made, read back after it
        self.unbound_items: list[tuple[MRun, MStep]] = []   # maps a call reached: their items, read back after it
        self.by_step: dict[int, tuple[MRun, MStep]] = {}
        self.concurrency = {"lim": 1, "per": 1}
        self.rate = 1
        self.rate_epochs = 1
        self.claims: dict[tuple[str, str], list[int]] = {}   # rate buckets: the epoch of every claim
        self.epoch = 0
        self.schedule_paused = False
        self.events: list[tuple[str, Any]] = []    # emitted (key, payload), in the order of their times
        self.emitting = False                       # within emit_event: a run made now sees its event

    def _real_now(self) -> Any:
        row = self.reader.execute("SELECT pg_catalog.now()").fetchone()
        assert row is not None
        return row[0]

    def teardown(self) -> None:
        self.client.close()
        self.reader.close()
        self.cluster.drop_database(self.db_name)

    # -- set-up --------------------------------------------------------------

    @initialize(dags=st.lists(dags(), min_size=2, max_size=3),
                limits=st.lists(st.lists(st.sampled_from(LIMITS), unique=True, max_size=3), min_size=3, max_size=3),
                rl_keyed=st.booleans(), lim=st.integers(1, 3), per=st.integers(1, 2), rate=st.integers(1, 2),
                rate_epochs=st.sampled_from([1, 2]))
    def define(self, dags: list[list[NodeDef]], limits: list[list[str]], rl_keyed: bool,
               lim: int, per: int, rate: int, rate_epochs: int) -> None:
        self.concurrency = {"lim": lim, "per": per}
        self.rate, self.rate_epochs = rate, rate_epochs
        self.client.define_limit("lim", concurrency=lim)
        self.client.define_limit("per", concurrency=per)
        self.client.define_limit("rl", rate=rate, period=_window(rate_epochs))
        names = [f"wf{i}" for i in range(len(dags))]
        for i, nodes in enumerate(dags):
            for n in nodes:  # a child node starts a run of a later workflow: no cycle of workflows
                if n.kind == "child" and i + 1 < len(dags):
                    n.workflow = names[i + 1 + n.child % (len(dags) - i - 1)]
                elif n.kind == "child":
                    n.kind, n.max_wait = "task", False
            self.workflows.append(WorkflowDef(names[i], nodes, limits[i], rl_keyed))
        for wf in reversed(self.workflows):  # a child workflow is defined before its parent
            self.client.define_workflow(wf.name, wf.definition())
        self.client.schedule("hourly", "0 * * * *", self.workflows[0].name)

    # -- the model's transitions -------------------------------------------

    def _new_run(self, wf: WorkflowDef, tenant: str, input: dict[str, Any],
                 parent: tuple[MRun, MStep] | None = None, scheduled: bool = False) -> MRun:
        run = MRun(None, wf, tenant, input, scheduled=scheduled, parent=parent,
                   since=len(self.events) - (1 if self.emitting else 0))
        for n in wf.nodes:
            run.steps[n.name] = MStep(0, n, "pending", max_attempts=n.max_attempts)
        return run

    def _bind(self, run: MRun, run_id: UUID) -> None:
        """Gives a run of the model its id and its steps theirs, as the database has them."""
        run.id = run_id
        rows = self.reader.execute("SELECT id, node, max_attempts FROM cyclone.cyclone_steps"
                                   " WHERE run_id = %s AND item_index IS NULL ORDER BY id", (run_id,)).fetchall()
        # The steps are made in the definition's order: an advance's pass goes through them in it.
        assert [r[1] for r in rows] == list(run.steps), rows
        for step_id, node, max_attempts in rows:
            step = run.steps[node]
            step.id = step_id
            if step.node.kind not in ("task", "map"):  # the workflow's default: read, not modelled
                step.max_attempts = max_attempts
            self.by_step[step_id] = (run, step)
        self.model[run_id] = run
        self.order.append(run_id)

    def _add_run(self, run_id: UUID, wf: WorkflowDef, tenant: str, input: dict[str, Any],
                 scheduled: bool = False) -> MRun:
        run = self._new_run(wf, tenant, input, scheduled=scheduled)
        self._bind(run, run_id)
        self._advance(run)
        return run

    def _bind_children(self) -> None:
        """Reads back the child runs the last call started (parents first), then
        the items of the maps it reached."""
        for run in self.unbound:
            assert run.parent is not None
            _, node = run.parent
            found = [r[0] for r in self.reader.execute(
                "SELECT id FROM cyclone.cyclone_runs WHERE parent_step_id = %s ORDER BY id", (node.id,))
                if r[0] not in self.model]
            assert len(found) == 1, f"step {node.id} ({node.node.name}) started {len(found)} new child runs, not 1"
            self._bind(run, found[0])
        self.unbound = []
        for run, m in self.unbound_items:
            rows = self.reader.execute(
                "SELECT id, item_index, item, kind FROM cyclone.cyclone_steps"
                " WHERE run_id = %s AND node = %s AND item_index IS NOT NULL ORDER BY item_index",
                (run.id, m.node.name)).fetchall()
            assert [(r[1], r[2], r[3]) for r in rows] == [(i.item_index, i.item, "item") for i in m.items], \
                f"map {m.id} ({m.node.name}) of run {run.id} made the items {rows}, the model says {m.items}"
            for (item_id, *_), item in zip(rows, m.items, strict=True):
                item.id = item_id
                self.by_step[item_id] = (run, item)
        self.unbound_items = []

    def _advance(self, run: MRun) -> None:
        """The DAG advance (22_advance.sql's _advance): passes, each over the
        pending steps whose dependencies were all completed or skipped when it
        began, in step order (one that an earlier one of the pass ended is left
        alone), until a pass has completed, skipped or discarded nothing; then
        the run finishes if it can."""
        again = True
        while again:
            ready = [s for s in run.steps.values()
                     if s.state == "pending" and all(run.steps[d].state in DONE for d in s.node.deps)]
            again = False
            for step in ready:
                if step.state == "pending":
                    again = self._reach(run, step) or again
        self._finish(run)

    def _reach(self, run: MRun, step: MStep) -> bool:
        """A ready step reached; whether it ended at once (another pass follows)."""
        n = step.node
        doc = {"input": run.input,
               "deps": {d: run.steps[d].output for d in n.deps if run.steps[d].state == "completed"}}
        if (any(run.steps[d].state == "skipped" for d in n.deps) and n.on_dep_skipped != "run") \
                or (n.when is not None and not _contains(doc, n.when)) \
                or (n.unless is not None and _contains(doc, n.unless)):
            step.state = "skipped"  # terminal: no error, no output
            return True
        if n.kind == "task":
            step.state, step.due_epoch = "available", max(self.epoch, run.not_before)
            return False
        if n.kind == "map":
            return self._reach_map(run, step, _at(doc, n.over))
        if n.kind == "event":
            return self._reach_event(run, step, doc)
        if n.kind == "await":
            return self._reach_await(run, step, doc)
        step.state, step.waited = "waiting", 0
        if n.kind == "sleep":
            return False
        if n.kind == "child":
            wf = next(w for w in self.workflows if w.name == n.workflow)
            child = self._new_run(wf, run.tenant, run.input, parent=(run, step))
            step.child = child
            self.unbound.append(child)
            self._advance(child)  # a child that ends at once tells its node (_finish)
            return not child.live
        assert n.signal is not None
        if run.signals[n.signal] > 0:
            run.signals[n.signal] -= 1
            step.state, step.output = "completed", {"signal": n.signal}
            return True
        return False

    def _reach_event(self, run: MRun, step: MStep, doc: dict[str, Any]) -> bool:
        """SPEC 17: the key from its template (a path that finds nothing: bad_input); completes at once with
        the earliest event of the key emitted at or after its run's created_at, else waits on the key."""
        key, rest = "", step.node.key
        while "{" in rest:
            head, _, tail = rest.partition("{")
            path, _, rest = tail.partition("}")
            value = _at(doc, path)
            if value is MISSING or value is None:
                self._discard(run, step, "bad_input")
                return True
            key += head + (value if isinstance(value, str) else str(value))
        key += rest
        step.event_key = key
        event("event node reached")
        payload = next((p for k, p in self.events[run.since:] if k == key), MISSING)
        if payload is not MISSING:
            event("event node: an event already emitted")
            step.state, step.output = "completed", payload
            return True
        step.state, step.waited = "waiting", 0
        return False

    def _reach_await(self, run: MRun, step: MStep, doc: dict[str, Any]) -> bool:
        """SPEC 17: the run at "run" (not a run id, no such run, its own run: bad_input); completed: the node
        completes with its output; failed or cancelled: discarded (awaited_run_failed); live: it waits."""
        value = _at(doc, AWAITS)
        target = self.model.get(UUID(value)) if isinstance(value, str) else None
        if target is None or target is run:
            self._discard(run, step, "bad_input")
            return True
        event(f"await node reached: the awaited run {target.state}")
        if target.state == "completed":
            step.state, step.output = "completed", target.output
            return True
        if not target.live:
            self._discard(run, step, "awaited_run_failed")
            return True
        step.state, step.waited, step.awaits = "waiting", 0, target
        return False

    def _notify_awaiters(self, ended: MRun) -> None:
        """SPEC 17 (_notify_awaiters): a run that ended ends the await nodes waiting on it: completed, they
        complete with its output and their runs advance (in run-id order); failed or cancelled, each is
        discarded (awaited_run_failed) in step order, unless an earlier discard has ended it meanwhile."""
        waiting = [(r, s) for r in list(self.model.values()) + self.unbound for s in r.steps.values()
                   if s.kind == "await" and s.state == "waiting" and s.awaits is ended]
        if waiting:
            event(f"await node ended by its run: {ended.state}")
        if ended.state == "completed":
            for _, s in waiting:
                s.state, s.output = "completed", ended.output
            for r in self._by_id({r for r, _ in waiting}):
                self._advance(r)
            return
        for r, s in sorted(waiting, key=lambda p: p[1].id):
            if s.state == "waiting":
                self._discard(r, s, "awaited_run_failed")

    @staticmethod
    def _by_id(runs: set[MRun]) -> list[MRun]:
        return sorted(runs, key=lambda r: (r.id is None, r.id.int if r.id is not None else 0))

    def _reach_map(self, run: MRun, step: MStep, value: Any) -> bool:
        """SPEC 16: one available item per element and the map waits; an empty
        list completes it with [], anything else discards it (bad_input)."""
        if not isinstance(value, list):
            self._discard(run, step, "bad_input")
            return True
        if not value:
            step.state, step.output = "completed", []
            return True
        step.state = "waiting"
        step.items = [MStep(0, step.node, "available", max_attempts=step.max_attempts, due_epoch=self.epoch,
                            item_index=i, item=v, map=step) for i, v in enumerate(value)]
        self.unbound_items.append((run, step))
        return False

    def _end_map(self, m: MStep) -> bool:
        """A waiting map whose items have all ended completes with their outputs
        in order (a discarded item's error, under "collect"); whether it did."""
        if m.kind != "map" or m.state != "waiting" or any(i.state not in TERMINAL for i in m.items):
            return False
        m.state = "completed"
        m.output = [i.output if i.state == "completed" else {"error": i.error, "error_kind": i.error_kind}
                    for i in m.items]
        return True

    def _finish(self, run: MRun) -> None:
        if not run.live or any(s.state in LIVE for s in run.steps.values()):
            return
        failed = any(s.state == "discarded" and not s.contained for s in run.steps.values())
        run.state = "failed" if failed else "completed"
        if failed:  # _end_run: the runs awaiting it, then its parent
            self._notify_awaiters(run)
            self._tell_parent(run)
            return
        # Its leaves (no node depends on them) that completed; a skipped one is absent.
        inner = {d for s in run.steps.values() for d in s.node.deps}
        run.output = {n: s.output for n, s in run.steps.items() if n not in inner and s.state == "completed"}
        self._tell_parent(run)  # _finish_runs: its parent, then the runs awaiting it
        self._notify_awaiters(run)

    def _tell_parent(self, child: MRun) -> None:
        """A child run ended from below: its node completes, or is discarded (child_failed)."""
        if child.parent is None:
            return
        run, node = child.parent
        if node.state != "waiting" or node.child is not child:
            return  # the parent moved on: a newer child run, a cancel, a max_wait
        if child.state == "completed":
            node.state, node.output = "completed", child.output
            self._advance(run)
        else:
            self._discard(run, node, "child_failed")

    def _cancel_step(self, step: MStep) -> None:
        was_waiting = step.state == "waiting"
        step.state, step.owner, step.error_kind = "cancelled", None, "cancelled"
        if was_waiting and step.child is not None:
            self._end(step.child, "cancelled")
        for item in step.items:  # a map's unfinished items go with it
            if item.state in LIVE:
                self._cancel_step(item)

    def _end(self, run: MRun, state: str) -> None:
        """Ends a live run and everything live in it (child runs included); the
        caller tells its parent when it ended from below."""
        if not run.live:
            return
        run.state = state
        for s in run.all_steps():
            if s.state in LIVE:
                self._cancel_step(s)
        self._notify_awaiters(run)

    def _discard(self, run: MRun, step: MStep, kind: str, error: str | None = None) -> None:
        step.state, step.owner, step.error_kind, step.error = "discarded", None, kind, error
        if step.map is not None:
            # An item never fails its run: its map decides (SPEC 16). "collect"
            # keeps its error for the map's output; "fail" cancels the map's
            # unfinished items and discards the map, whose own policy applies.
            step.contained = True
            m = step.map
            if m.state != "waiting":
                return
            if m.node.on_item_failure == "collect":
                if self._end_map(m):
                    self._advance(run)
                return
            for item in m.items:
                if item.state in LIVE:
                    self._cancel_step(item)
            self._discard(run, m, "item_failed")
            return
        if step.child is not None:
            self._end(step.child, "cancelled")
        dependents = run.dependents(step.node.name)
        if dependents and all(d.node.on_dep_failure == "cancel_branch" for d in dependents):
            step.contained = True
            branch, todo = set(), [d.node.name for d in dependents]
            while todo:
                name = todo.pop()
                if name not in branch:
                    branch.add(name)
                    todo.extend(d.node.name for d in run.dependents(name))
            for name in sorted(branch):
                s = run.steps[name]
                if s.state in LIVE:
                    self._cancel_step(s)
            self._finish(run)
        elif run.live:
            self._end(run, "failed")
            self._tell_parent(run)

    def _current(self, lease: Lease) -> MStep | None:
        _, step = self.by_step[lease.step_id]
        if step.state == "running" and step.owner == lease.worker and step.generation == lease.generation:
            return step
        return None

    def _in_window(self, bucket: tuple[str, str]) -> int:
        return sum(1 for e in self.claims.get(bucket, []) if e > self.epoch - self.rate_epochs)

    def _room(self, run: MRun, step: MStep, running: Counter[tuple[str, str]]) -> bool:
        for b in run.buckets(step):
            if b[0] == "rl":
                if self._in_window(b) >= self.rate:
                    return False
            elif running[b] >= self.concurrency[b[0]]:
                return False
        return True

    def _claimable(self, running: Counter[tuple[str, str]], workflow: str | None = None) -> list[tuple[MRun, MStep]]:
        out = []
        for run in self.model.values():
            if run.state != "running" or workflow not in (None, run.workflow.name):
                continue
            for s in run.all_steps():
                if s.state == "available" and s.due_epoch <= self.epoch and self._room(run, s, running):
                    out.append((run, s))
        return out

    def _running_per_bucket(self) -> Counter[tuple[str, str]]:
        held: Counter[tuple[str, str]] = Counter()
        for run in self.model.values():
            for s in run.all_steps():
                if s.state == "running":
                    held.update(b for b in run.buckets(s) if b[0] != "rl")
        return held

    def _runs(self) -> list[UUID]:
        return list(self.order)

    # -- rules ---------------------------------------------------------------

    @rule(data=st.data(), tenant=st.sampled_from(TENANTS), go=st.booleans(),
          items=st.one_of(*(st.lists(st.integers(0, 9), min_size=k, max_size=k) for k in (1, 2, 3, 0)), st.none()),
          debounce=st.sampled_from([None, None, None, "d1", "d2"]))
    def submit(self, data: st.DataObject, tenant: str, go: bool, items: list[int] | None,
               debounce: str | None) -> None:
        """A run whose input has the flag the conditions test and, or not, the list its maps go over and,
        or not, the id of a run of the model (live or ended) its await nodes await."""
        # Those with an event or await node first (hypothesis's simplest draw): the schedule's runs, whose
        # input is {}, only ever discard them (bad_input).
        wf = data.draw(st.sampled_from(sorted(self.workflows, key=lambda w: all(
            n.kind not in ("event", "await") for n in w.nodes))), label="workflow")
        input: dict[str, Any] = {"tenant": tenant, "go": go}
        if items is not None:
            input["items"] = items
        # Most often (hypothesis's simplest draw) the newest run, which is likeliest to be live.
        if self.model and not data.draw(st.booleans(), label="no awaits"):
            input["awaits"] = str(data.draw(st.sampled_from(self._runs()[::-1]), label="awaits"))
        if debounce is not None:
            self._debounced(wf, tenant, input, debounce)
            return
        run_id = self.client.submit(wf.name, input)
        self._add_run(run_id, wf, tenant, input)

    def _debounced(self, wf: WorkflowDef, tenant: str, input: dict[str, Any], key: str) -> None:
        """SPEC 17: the newest running run of the workflow and key, when none of its steps has been claimed,
        takes the input (what it reached at its submit stays, its buckets too) and its available root tasks
        are due a debounce (LATER) from now; otherwise a new run whose tasks are due a debounce from now."""
        newest = [self.model[r] for r in self.order if self.model[r].workflow is wf
                  and self.model[r].debounce_key == key and self.model[r].state == "running"][-1:]
        if newest:  # the same tenant: the limit buckets (and a child run's) are not what this test asks
            tenant = input["tenant"] = newest[0].tenant
        run_id = self.client.submit(wf.name, input, debounce_key=key, debounce=LATER)
        if newest and not any(s.attempt > 0 or s.state == "running" for s in newest[0].all_steps()):
            event("debounced submit folded")
            m = newest[0]
            assert run_id == m.id, f"a debounced submit made run {run_id}, the model says it folds into {m.id}"
            m.input = input
            for s in m.steps.values():
                if s.state == "available" and not s.node.deps:
                    s.due_epoch = self.epoch + 1
            return
        run = self._new_run(wf, tenant, input)
        run.debounce_key, run.not_before = key, self.epoch + 1
        self._bind(run, run_id)
        self._advance(run)

    def _has_available(self) -> bool:
        return any(s.state == "available" for _, s in self.by_step.values())

    @precondition(_has_available)
    @rule(target=leases, worker=st.sampled_from(WORKERS), limit=st.integers(1, 3))
    def claim(self, worker: str, limit: int) -> Any:
        return multiple(*self._claim(worker, limit))

    @precondition(_has_available)
    @rule(worker=st.sampled_from(WORKERS), workflow=st.sampled_from([None, 0, 1, 2]), limit=st.integers(1, 3),
          fail_last=st.sampled_from([False, False, False, True]))
    def claim_and_complete(self, worker: str, workflow: int | None, limit: int, fail_last: bool) -> None:
        """A worker that finishes what it claims, of one workflow or any (claim's
        p_workflows), now and then failing the last one for good: runs reach
        their ends (and child runs their parents, maps their last items or their
        failed ones) in fewer calls."""
        name = None if workflow is None else self.workflows[workflow % len(self.workflows)].name
        leases = self._claim(worker, limit, name)
        for i, lease in enumerate(leases):
            if fail_last and i == len(leases) - 1:
                self._fail(lease, permanent=True, later=False)
            else:
                self._complete(lease)

    def _claim(self, worker: str, limit: int, workflow: str | None = None) -> list[Lease]:
        running = self._running_per_bucket()
        eligible = {s.id for _, s in self._claimable(running, workflow)}
        claimed = self.client.claim(worker, limit=limit, lease_ttl=LEASE_TTL,
                                    workflows=None if workflow is None else [workflow])
        assert len(claimed) <= limit
        out = []
        for row in claimed:
            assert row.step_id in eligible, f"claimed step {row.step_id}, which the model holds not claimable"
            run, step = self.by_step[row.step_id]
            # Each row of the batch had room in each of its buckets, counting
            # the rows before it: concurrency and the rate window.
            assert self._room(run, step, running), f"claimed step {row.step_id} past a limit of its buckets"
            for b in run.buckets(step):
                if b[0] == "rl":
                    self.claims.setdefault(b, []).append(self.epoch)
                else:
                    running[b] += 1
            expected_attempt = max(step.attempt, 1) if step.rerun else step.attempt + 1
            assert (row.attempt, row.lease_generation) == (expected_attempt, step.generation + 1), row
            # What the handler is given: its kind, the run input, its completed dependencies' outputs (a
            # skipped one absent; an item: its map's), and an item's element and position.
            deps = {d: run.steps[d].output for d in step.node.deps if run.steps[d].state == "completed"}
            assert (row.kind, row.input, _norm(row.deps), row.item, row.item_index) \
                == (step.kind, run.input, deps, step.item, step.item_index), row
            step.state, step.owner, step.attempt, step.rerun = "running", worker, expected_attempt, False
            step.generation += 1
            step.lease_epoch = self.epoch
            out.append(Lease(row.step_id, worker, row.lease_generation))
        # No head-of-line blocking: a claim short of its limit left nothing
        # claimable that its buckets had room for.
        if len(claimed) < limit:
            left = list(self._claimable(self._running_per_bucket(), workflow))
            assert not left, f"claim took {len(claimed)} of {limit} and left {[s.id for _, s in left]} claimable"
        return out

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

    @precondition(_has_lease)
    @rule(data=st.data(), later=st.booleans())
    def snooze(self, data: st.DataObject, later: bool) -> None:
        self._snooze(data.draw(st.sampled_from(self._held()), label="lease"), later)

    @precondition(_has_lease)
    @rule(data=st.data(), value=st.sampled_from([0.5, {"done": 1, "total": 3}, "half", None]))
    def progress(self, data: st.DataObject, value: Any) -> None:
        self._progress(data.draw(st.sampled_from(self._held()), label="lease"), value)

    @rule(lease=leases, call=st.sampled_from(["renew", "complete", "fail", "snooze", "progress"]),
          other_worker=st.booleans())
    def report_any_lease(self, lease: Lease, call: str, other_worker: bool) -> None:
        """A report with a lease that may be long lost (or another worker's name)."""
        if other_worker:
            lease = Lease(lease.step_id, next(w for w in WORKERS if w != lease.worker), lease.generation)
        if call == "renew":
            self._renew(lease, False)
        elif call == "complete":
            self._complete(lease)
        elif call == "snooze":
            self._snooze(lease, False)
        elif call == "progress":
            self._progress(lease, 1)
        else:
            self._fail(lease, False, False)

    def _snooze(self, lease: Lease, later: bool) -> None:
        """SPEC 16: the step goes back to available after the delay, on the same attempt (like a reclaim)."""
        step = self._current(lease)
        taken = self.client.snooze(lease.step_id, lease.worker, lease.generation, LATER if later else timedelta(0))
        assert taken is (step is not None)
        if step is not None:
            step.state, step.owner, step.rerun = "available", None, True
            step.due_epoch = self.epoch + 1 if later else self.epoch

    def _progress(self, lease: Lease, value: Any) -> None:
        """SPEC 16: kept on a step whose lease is current, refused otherwise; no transition."""
        step = self._current(lease)
        assert self.client.progress(lease.step_id, lease.worker, lease.generation, value) is (step is not None)
        if step is not None:
            assert self.client.step(lease.step_id).progress == value

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
            step.state, step.owner, step.output = "completed", None, {"step": lease.step_id}
            for m in run.steps.values():  # a map whose last item this was completes
                self._end_map(m)
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
            self._discard(run, step, kind, "boom")
        else:
            assert result == "available"
            step.state, step.owner = "available", None
            step.due_epoch = self.epoch + 1 if later else self.epoch

    def _order(self, step: MStep) -> tuple[Any, ...]:
        """The order in which a pass of tick acts on steps: root run, run, step."""
        run, _ = self.by_step[step.id]
        return (run.root().id, run.id, step.id)

    def _jump(self) -> None:
        self.client.advance_time(JUMP)
        self.epoch += 1
        # A wait's clock, and a sleep's, runs only while its run is not paused.
        for run in self.model.values():
            for s in run.steps.values():
                if s.state == "waiting" and (s.node.max_wait or s.kind == "sleep") and run.state == "running":
                    s.waited += 1

    @staticmethod
    def _due(step: MStep) -> bool:
        """A waiting step tick acts on: a sleep whose time has come, a wait or
        child node past its max_wait."""
        if step.kind == "sleep":
            return step.waited >= step.node.sleep
        return step.node.max_wait and step.waited > 0

    @rule(jump=st.booleans(), max_reclaims=st.sampled_from([0, 1, 2]))
    def tick(self, jump: bool, max_reclaims: int) -> None:
        if jump:
            self._jump()
        sched = self.client.schedules("hourly")[0]
        before = self.client.now()
        # The sweep: every lease taken before the last jump has expired.
        reclaimed = discarded = 0
        expired = sorted((s for r in self.model.values() for s in r.all_steps()
                          if s.state == "running" and s.lease_epoch < self.epoch), key=self._order)
        for step in expired:
            if step.state != "running":  # cancelled by an earlier discard in its run tree
                continue
            run, _ = self.by_step[step.id]
            if max_reclaims > 0 and step.reclaims >= max_reclaims:
                self._discard(run, step, "reclaim_limit",
                              f"lease expired again after {step.reclaims} reclaims (max reclaims {max_reclaims})")
                discarded += 1
            else:
                step.state, step.owner, step.rerun = "available", None, True
                step.reclaims += 1
                reclaimed += 1
        # Then, in one pass in the same order: max_wait, the wait and child
        # nodes of running runs that waited through a jump of their run's clock;
        # and the sleeps of running runs that slept through theirs wake
        # (output {"woke_at": now}) and their runs advance.
        waits = slept = 0
        for step in sorted((s for r in self.model.values() for s in r.steps.values()
                            if s.state == "waiting" and self._due(s) and r.state == "running"), key=self._order):
            run, _ = self.by_step[step.id]
            if step.state != "waiting" or run.state != "running":
                continue
            if step.kind == "sleep":
                step.state, step.output = "completed", {"woke_at": None}
                self._advance(run)
                slept += 1
            else:
                self._discard(run, step, "max_wait")
                waits += 1
        live_scheduled = any(r.scheduled and r.live for r in self.model.values())
        known = set(self.model)
        result = self.client.tick(max_reclaims)
        after = self.client.now()
        assert (result.reclaimed, result.discarded, result.retried, result.max_wait, result.slept) \
            == (reclaimed, discarded, 0, waits, slept), result.raw
        # The schedule (overlap skip): at most one run a tick, none while one
        # of its runs is live or while paused; a due slot fires.
        assert result.scheduled <= 1, result.raw
        if self.schedule_paused or live_scheduled or sched.next_fire_at > after:
            assert result.scheduled == 0, result.raw
        elif sched.next_fire_at <= before:
            assert result.scheduled == 1, result.raw
        self._bind_children()  # those a child run's end started in its parent
        new = [r[0] for r in self.reader.execute(
            "SELECT id FROM cyclone.cyclone_runs WHERE parent_run_id IS NULL ORDER BY id").fetchall()
            if r[0] not in known]
        assert len(new) == result.scheduled
        for run_id in new:
            # Its input is the schedule's ({}) with the slot it fired for (read: the slot is the schedule's).
            row = self.reader.execute("SELECT input FROM cyclone.cyclone_runs WHERE id = %s", (run_id,)).fetchone()
            assert row is not None and set(row[0]) == {"scheduled_for"}, row
            self._add_run(run_id, self.workflows[0], "", row[0], scheduled=True)

    @rule()
    def archive(self) -> None:
        # History (docs/history.md): moving finished runs out of the live tables
        # changes nothing a caller sees; every later rule and check must agree.
        self.client.archive()

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data(), action=st.sampled_from(["cancel", "pause", "resume", "retry", "retry", "retry_all"]))
    def operate(self, data: st.DataObject, action: str) -> None:
        """An operator's call on a run, a child run or not: cancel, pause, resume,
        retry a node, retry_all."""
        run = data.draw(st.sampled_from(self._runs()), label="run")
        if action == "retry":
            self._retry(run, data, data.draw(st.integers(0, 2), label="additional_attempts"))
        else:
            {"cancel": self._cancel_run, "pause": self._pause, "resume": self._resume,
             "retry_all": self._retry_all}[action](run)

    def _cancel_run(self, run: UUID) -> None:
        m = self.model[run]
        live = m.live
        assert self.client.cancel(run, "test") is live
        if live:
            self._end(m, "cancelled")
            self._tell_parent(m)

    @precondition(lambda self: any(r.state == "running" for r in self.model.values()))
    @rule(data=st.data(), then_tick=st.booleans())
    def pause_over_a_jump(self, data: st.DataObject, then_tick: bool) -> None:
        """A run paused while the clock jumps (one with a wait that has a
        max_wait or a sleep, when there is one): its waits' max_wait does not
        elapse and its sleeps do not come nearer (resume moves their times
        forward by the pause), its leases do; then a tick, or not."""
        running = [r for r in self._runs() if self.model[r].state == "running"]
        waiting = [r for r in running if any(s.state == "waiting" and (s.node.max_wait or s.kind == "sleep")
                                             for s in self.model[r].steps.values())]
        run = data.draw(st.sampled_from(waiting or running), label="run")
        self._pause(run)
        self._jump()
        self._resume(run)
        if then_tick:
            self.tick(jump=False, max_reclaims=0)

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

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data(), name=st.sampled_from(SIGNALS))
    def signal(self, data: st.DataObject, name: str) -> None:
        run = data.draw(st.sampled_from(self._runs()), label="run")
        m = self.model[run]
        waiting = [s for s in m.steps.values() if s.node.signal == name and s.state == "waiting"]
        to_come = [s for s in m.steps.values() if s.node.signal == name and s.state == "pending"]
        expected = m.live and bool(waiting or to_come)
        assert self.client.signal(run, name, {"signal": name}) is expected
        if not expected:
            return
        if waiting:
            for s in waiting:
                s.state, s.output = "completed", {"signal": name}
            self._advance(m)
        else:
            m.signals[name] += 1

    @rule(data=st.data(), as_list=st.booleans())
    def emit_event(self, data: st.DataObject, as_list: bool) -> None:
        """SPEC 17: every event node waiting on the key (one that some node waits on, often) completes with
        the payload (a list, or not: a map over it makes items) and their runs advance, in run-id order; a
        node reached later sees it if its run was made no later."""
        awaited = sorted({s.event_key for r in self.model.values() for s in r.steps.values()
                          if s.kind == "event" and s.state == "waiting" and s.event_key is not None})
        any_key: bool = data.draw(st.booleans(), label="any key")
        keys = awaited if awaited and not any_key else list(EMITTED)
        key = data.draw(st.sampled_from(keys), label="key")
        payload: Any = [len(self.events)] if as_list else {"ev": len(self.events)}
        waiting = [(r, s) for r in self.model.values() for s in r.steps.values()
                   if s.kind == "event" and s.state == "waiting" and s.event_key == key]
        assert self.client.emit_event(key, payload) == len(waiting)
        event(f"emit_event completed {min(len(waiting), 2)}+ nodes")
        self.events.append((key, payload))
        self.emitting = True
        try:
            for _, s in waiting:
                s.state, s.output = "completed", payload
            for r in self._by_id({r for r, _ in waiting}):
                self._advance(r)
        finally:
            self.emitting = False

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data())
    def rerun(self, data: st.DataObject) -> None:
        """SPEC 17: a new run of an ended run's workflow and input; with a node, those neither it nor
        downstream of it that completed start completed with their outputs. A live run: 55000."""
        run = data.draw(st.sampled_from(self._runs()), label="run")
        m = self.model[run]
        node = data.draw(st.sampled_from([None, *m.steps]), label="from_node")
        if m.live:
            with pytest.raises(errors.WrongState):
                self.client.rerun(run, node)
            return
        new_id = self.client.rerun(run, node, "test")
        event(f"rerun of a {m.state} run, from a node: {node is not None}")
        new = self._new_run(m.workflow, m.tenant, m.input)
        if node is not None:
            again, todo = set(), [node]
            while todo:
                name = todo.pop()
                if name not in again:
                    again.add(name)
                    todo.extend(d.node.name for d in new.dependents(name))
            for name, s in new.steps.items():
                if name not in again and m.steps[name].state == "completed":
                    s.state, s.output = "completed", m.steps[name].output
        self._bind(new, new_id)
        self._advance(new)

    def _retry(self, run: UUID, data: st.DataObject, more: int) -> None:
        m = self.model[run]
        discarded = sorted(n for n, s in m.steps.items() if s.state == "discarded")
        a_discarded_one = bool(discarded) and data.draw(st.booleans())
        node = data.draw(st.sampled_from(discarded or sorted(m.steps)) if a_discarded_one
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

    @staticmethod
    def _revived(m: MRun, reopened: list[MStep]) -> list[MStep]:
        """The cancelled steps a retry of these brings back to pending: those
        with no dependency still discarded or cancelled, in dependency order."""
        dead = {n for n, s in m.steps.items() if s.state in ("discarded", "cancelled") and s not in reopened}
        back: list[MStep] = []
        changed = True
        while changed:
            changed = False
            for n, s in m.steps.items():
                if s.state == "cancelled" and n in dead and not any(d in dead for d in s.node.deps):
                    dead.discard(n)
                    back.append(s)
                    changed = True
        return back

    def _reopen(self, m: MRun, steps: list[MStep], more: int) -> None:
        """retry and retry_all: the steps back to pending; a map that had made
        its items back to waiting, its discarded and cancelled items available
        again (its completed ones keep their outputs), and ended when none is
        left to run; the run running; the cancelled steps whose dependencies
        are no longer discarded or cancelled back to pending; then an advance."""
        for step in steps:
            step.state, step.contained, step.rerun, step.reclaims = "pending", False, False, 0
            step.max_attempts = max(step.max_attempts, step.attempt + more)
            step.error_kind = step.error = None
            for item in step.items:
                if item.state in ("discarded", "cancelled"):
                    item.state, item.contained, item.rerun, item.reclaims = "available", False, False, 0
                    item.max_attempts = max(item.max_attempts, item.attempt + more)
                    item.due_epoch, item.error_kind, item.error = self.epoch, None, None
            if step.items:
                step.state = "waiting"
        for step in steps:
            self._end_map(step)
        if m.state in ("failed", "completed"):
            m.state, m.output = "running", None
        for s in self._revived(m, []):
            # A map that had made its items before it was cancelled comes back waiting, with its cancelled
            # items available again; its completed and collected ones keep their ends.
            s.state = "waiting" if s.items else "pending"
            for item in s.items:
                if item.state == "cancelled":
                    item.state, item.contained, item.rerun, item.reclaims = "available", False, False, 0
                    item.due_epoch, item.error_kind, item.error = self.epoch, None, None
        self._advance(m)

    @rule(pause=st.booleans())
    def pause_schedule(self, pause: bool) -> None:
        if pause:
            assert self.client.pause_schedule("hourly") is not self.schedule_paused
        else:
            assert self.client.resume_schedule("hourly") is self.schedule_paused
        self.schedule_paused = pause

    @rule(which=st.sampled_from(["lim", "rl"]), value=st.integers(1, 3))
    def redefine_limit(self, which: str, value: int) -> None:
        """Changing a limit applies to the next claim; lowering one stops claims
        and cancels nothing."""
        if which == "lim":
            self.concurrency["lim"] = value
            self.client.define_limit("lim", concurrency=value)
            return
        self.rate = value
        self.client.define_limit("rl", rate=value, period=_window(self.rate_epochs))

    @precondition(lambda self: bool(self.by_step))
    @rule(data=st.data())
    def explain(self, data: st.DataObject) -> None:
        """explain_step: the first reason that applies (SPEC 12)."""
        step_id = data.draw(st.sampled_from(sorted(self.by_step)), label="step")
        run, step = self.by_step[step_id]
        got = self.client.explain_step(step_id)
        want: dict[str, Any]
        if step.state in TERMINAL or step.state == "running":
            want = {"reason": step.state}
        elif step.state == "waiting" and step.kind == "map":
            want = {"reason": "waiting_items", "done": sum(1 for i in step.items if i.state in TERMINAL),
                    "total": len(step.items)}
        elif step.state == "waiting" and step.kind == "sleep":
            want = {"reason": "sleeping"}
        elif step.state == "waiting" and step.kind == "wait":
            want = {"reason": "waiting_signal", "signal": step.node.signal}
        elif step.state == "waiting" and step.kind == "event":
            want = {"reason": "waiting_event", "key": step.event_key}
        elif step.state == "waiting" and step.kind == "await":
            assert step.awaits is not None
            want = {"reason": "waiting_run", "run_id": str(step.awaits.id)}
        elif step.state == "waiting":
            assert step.child is not None
            want = {"reason": "waiting_child", "child_run_id": str(step.child.id)}
        elif step.state == "pending":
            want = {"reason": "pending_deps",
                    "deps": sorted(d for d in step.node.deps if run.steps[d].state not in DONE)}
        elif not run.live:
            want = {"reason": "run_terminal", "run_state": run.state}
        elif run.state == "paused":
            want = {"reason": "run_paused"}
        elif step.due_epoch > self.epoch:
            want = {"reason": "not_due"}
        else:
            running = self._running_per_bucket()
            buckets = run.buckets(step)
            full = [b for b in buckets if b[0] != "rl" and running[b] >= self.concurrency[b[0]]]
            spent = [b for b in buckets if b[0] == "rl" and self._in_window(b) >= self.rate]
            if full:
                want = {"reason": "concurrency_limit", "limit": full[0][0], "bucket": full[0][1],
                        "running": running[full[0]], "max": self.concurrency[full[0][0]]}
            elif spent:
                want = {"reason": "rate_limit", "limit": "rl", "bucket": spent[0][1]}
            else:
                want = {"reason": "claimable"}
        shown = {k: v for k, v in got.raw.items() if k in want}
        assert shown == want, f"explain_step({step_id}) is {got.raw}, the model says {want}"
        if want["reason"] == "rate_limit":
            assert got.next_slot_at is not None and got.next_slot_at > self.client.now()
        if want["reason"] == "sleeping" and run.state == "running":  # the wake time: to come unless due
            assert got.until is not None and (got.until > self.client.now()) is not self._due(step), got.raw

    # -- after every call ----------------------------------------------------

    @invariant()
    def consistent_and_as_modelled(self) -> None:
        """After every call: no broken invariant, every bucket's running count
        and every run and step as the model says."""
        self._bind_children()
        # The model's clock is the jumps: real time must stay well inside one.
        real = self._real_now() - self.started
        assert real < REAL_TIME, f"the real clock moved {real} during one example: the model holds for {REAL_TIME}"
        assert self.client.check_invariants() == []
        # Each bucket's running count (its slots: a rate holds none) and the
        # claims in its rate window are the model's (a claim never took a step
        # into a full bucket: claim checks that; a lowered bound may leave more
        # than it allows).
        held = self._running_per_bucket()
        for row in self.client.limits():
            assert row.running == held[(row.name, row.bucket)], row
            if row.rate is not None:
                assert row.claims_in_period == self._in_window((row.name, row.bucket)), row
        runs = {r[0]: r[1:] for r in self.reader.execute("SELECT id, state, output FROM cyclone.cyclone_runs")}
        assert set(runs) == set(self.model)
        for run_id, m in self.model.items():
            state, output = runs[run_id]
            assert state == m.state, f"run {run_id} is {state}, the model says {m.state}"
            if state == "completed":  # its completed leaves' outputs; a skipped leaf is absent
                assert _norm(output) == m.output, f"run {run_id}'s output is {output}, the model says {m.output}"
        for row in self.reader.execute("SELECT id, state, attempt, reclaims, lease_generation, max_attempts,"
                                       " item_index, child_run_id, output, error_kind"
                                       " FROM cyclone.cyclone_steps").fetchall():
            run, step = self.by_step[row[0]]
            got = tuple(row[1:7])
            want = (step.state, step.attempt, step.reclaims, step.generation, step.max_attempts, step.item_index)
            assert got == want, f"step {row[0]} ({step.node.name}) of run {run.id}: (state, attempt, reclaims," \
                                f" generation, max_attempts, item_index) is {got}, the model says {want}"
            if step.kind == "child" and step.state == "waiting":
                assert step.child is not None and row[7] == step.child.id, row
            if step.state == "completed":
                assert _norm(row[8]) == step.output, f"step {row[0]} ({step.node.name}) of run {run.id}:" \
                                                     f" output {row[8]}, the model says {step.output}"
            if step.state in ("discarded", "cancelled"):
                assert row[9] == step.error_kind, f"step {row[0]} ({step.node.name}) of run {run.id}:" \
                                                  f" error_kind {row[9]}, the model says {step.error_kind}"


@pytest.mark.slow
def test_random_call_sequences_keep_the_engine_consistent_and_as_modelled(
        embedded_db: db.EmbeddedCluster, template_db: str) -> None:
    EngineMachine.cluster = embedded_db
    EngineMachine.template = template_db
    run_state_machine_as_test(EngineMachine, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
