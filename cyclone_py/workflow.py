"""Workflow definitions in Python: nodes, handlers, and the App that holds them.

A :class:`Workflow` collects nodes and produces the JSON definition of SPEC
section 4 (``wf.definition()``), which ``cyclone.define_workflow`` validates
and stores; Python checks nothing about the DAG itself (unknown deps, cycles,
bad policies are the SQL's to reject). What Python owns is the mapping from a
handler name to a function, so registering two functions under one name is
refused here.

An :class:`App` holds several workflows and the policy its workers (and the
test harness) apply to them: a custom ``backoff``, the ``on_error`` hook and
``max_reclaims``; its limits (:class:`~cyclone_py.limit.Limit`: those its
workflows take, and any more it declares) and its schedules
(:class:`~cyclone_py.schedule.Schedule`), which its workers register at start.
``cyclone worker --app MODULE:ATTR``
points at an App or a single Workflow (:mod:`cyclone_py.loader` imports it).
Nothing here talks to the database: :meth:`App.definitions` gives the
definitions in the order ``define_workflow`` needs them, and the worker or
the harness stores them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any, overload

from cyclone_py.context import StepContext
from cyclone_py.durations import Duration, to_timedelta
from cyclone_py.errors import StepFailed
from cyclone_py.limit import Limit, LimitUse, as_use
from cyclone_py.schedule import Schedule

__all__ = [
    "App",
    "LimitRef",
    "Backoff",
    "ErrorHook",
    "Handler",
    "Node",
    "Workflow",
    "as_app",
    "format_interval",
]

Interval = Duration | str
Handler = Callable[[StepContext], Any]
# A custom retry delay: attempt -> timedelta or seconds (passed to fail() as p_retry_in).
Backoff = Callable[[int], Duration]
# Called with every discard a worker or the harness sees.
ErrorHook = Callable[[StepFailed], Any]
DepRef = str | Callable[..., Any]
#: What ``limits=[...]`` takes: a Limit (its one bucket) or ``limit.by(key)``.
LimitRef = Limit | LimitUse

_UNITS = (("day", 86_400), ("hour", 3_600), ("minute", 60), ("second", 1))


def format_interval(value: Interval) -> str:
    """A PostgreSQL interval literal: ``timedelta(seconds=30)`` -> ``'30 seconds'``,
    ``3600`` -> ``'1 hour'``, ``0.25`` -> ``'0.25 seconds'``; strings pass through."""
    if isinstance(value, str):
        return value
    td = to_timedelta(value)
    micros = td // timedelta(microseconds=1)
    if micros == 0:
        return "0 seconds"
    for unit, seconds in _UNITS:
        step = seconds * 1_000_000
        if micros % step == 0:
            n = micros // step
            return f"{n} {unit}{'' if abs(n) == 1 else 's'}"
    secs = format(Decimal(micros) / Decimal(1_000_000), "f").rstrip("0").rstrip(".")
    return f"{secs} seconds"


def _limit_uses(owner: str, limits: Iterable[LimitRef]) -> tuple[LimitUse, ...]:
    if isinstance(limits, Limit | LimitUse | str):
        raise TypeError(f"{owner}: limits is a list of Limit or limit.by(key), got {limits!r}")
    return tuple(as_use(x) for x in limits)


def _no_limits(kind: str, name: str, limits: Iterable[LimitRef] | None) -> None:
    if limits is not None and list(limits):
        raise ValueError(f"{kind} node {name!r} cannot take limits: limits apply to task nodes only")


def _dep_name(dep: DepRef) -> str:
    if isinstance(dep, str):
        return dep
    node = getattr(dep, "__cyclone_node__", None)
    if isinstance(node, str):
        return node
    raise TypeError(f"a dependency is a node name or a registered step function, not {dep!r}")


# -- nodes ------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """One node of a workflow's DAG."""

    name: str
    kind: str = "task"
    handler: str | None = None
    deps: tuple[str, ...] = ()
    max_attempts: int | None = None
    timeout: str | None = None
    on_dep_failure: str = "fail_run"
    priority: int = 0
    signal: str | None = None
    workflow: str | None = None
    max_wait: str | None = None
    limits: tuple[LimitUse, ...] = ()
    #: SPEC 16: run only if {"input", "deps"} contains ``when`` and does not contain ``unless``;
    #: ``on_dep_skipped="run"`` runs it after a skipped dependency; a sleep's ``duration`` or ``until``.
    when: Mapping[str, Any] | None = None
    unless: Mapping[str, Any] | None = None
    on_dep_skipped: str = "skip"
    duration: str | None = None
    until: str | None = None
    #: a map node's list (a path), its bound and what a discarded item does (SPEC 16)
    over: str | None = None
    max_items: int | None = None
    on_item_failure: str = "fail"
    #: an event node's key template, an await node's run path (SPEC 17)
    key: str | None = None
    run: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The node as SPEC section 4 spells it."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind in ("task", "map"):
            out["handler"] = self.handler or self.name
        out["deps"] = list(self.deps)
        if self.kind == "map":
            out["over"] = self.over
            if self.max_items is not None:
                out["max_items"] = self.max_items
            if self.on_item_failure != "fail":
                out["on_item_failure"] = self.on_item_failure
        if self.kind in ("task", "map"):
            if self.max_attempts is not None:
                out["max_attempts"] = self.max_attempts
            if self.timeout is not None:
                out["timeout"] = self.timeout
            if self.priority:
                out["priority"] = self.priority
            if self.limits:
                out["limits"] = [u.to_json() for u in self.limits]
        if self.kind == "wait":
            out["signal"] = self.signal or self.name
        if self.kind == "child":
            out["workflow"] = self.workflow
        if self.kind == "event":
            out["key"] = self.key
        if self.kind == "await":
            out["run"] = self.run
        if self.max_wait is not None:
            out["max_wait"] = self.max_wait
        if self.on_dep_failure != "fail_run":
            out["on_dep_failure"] = self.on_dep_failure
        if self.kind == "sleep":
            if self.duration is not None:
                out["duration"] = self.duration
            if self.until is not None:
                out["until"] = self.until
        if self.when is not None:
            out["when"] = dict(self.when)
        if self.unless is not None:
            out["unless"] = dict(self.unless)
        if self.on_dep_skipped != "skip":
            out["on_dep_skipped"] = self.on_dep_skipped
        return out


# -- workflows --------------------------------------------------------------


@dataclass
class _Registration:
    nodes: dict[str, Node] = field(default_factory=dict)
    handlers: dict[str, Handler] = field(default_factory=dict)


class Workflow:
    """A named DAG of task, wait and child nodes with their Python handlers.

    ``limits``: the limits every task node of the workflow takes (a
    :class:`~cyclone_py.limit.Limit` or ``limit.by(key)``); a step adds its own
    with ``@wf.step(limits=[...])``.
    """

    def __init__(self, name: str, max_attempts: int | None = None, *, limits: Iterable[LimitRef] = ()) -> None:
        if not name:
            raise ValueError("a workflow needs a name")
        self.name = name
        self.max_attempts = max_attempts
        self.limits = _limit_uses(f"workflow {name!r}", limits)
        self._reg = _Registration()
        self._children: dict[str, Workflow] = {}

    def __repr__(self) -> str:
        return f"Workflow({self.name!r}, nodes={list(self._reg.nodes)})"

    # -- reading ----------------------------------------------------------

    @property
    def nodes(self) -> Mapping[str, Node]:
        return dict(self._reg.nodes)

    @property
    def handlers(self) -> Mapping[str, Handler]:
        """Handler name -> function."""
        return dict(self._reg.handlers)

    @property
    def child_workflows(self) -> Mapping[str, Workflow]:
        """Workflows given as objects to :meth:`child`, by name."""
        return dict(self._children)

    def declared_limits(self) -> list[Limit]:
        """Every :class:`~cyclone_py.limit.Limit` object the workflow and its
        task nodes take, in the order they are named (repeats included: the
        App checks that one name means one limit)."""
        uses = list(self.limits)
        for node in self._reg.nodes.values():
            uses.extend(node.limits)
        return [u.limit for u in uses]

    def handler_for(self, handler: str) -> Handler | None:
        return self._reg.handlers.get(handler)

    def definition(self) -> dict[str, Any]:
        """The JSON definition ``cyclone.define_workflow`` takes (SPEC section 4)."""
        out: dict[str, Any] = {}
        if self.max_attempts is not None:
            out["max_attempts"] = self.max_attempts
        if self.limits:
            out["limits"] = [u.to_json() for u in self.limits]
        out["nodes"] = [n.to_json() for n in self._reg.nodes.values()]
        return out

    def definitions(self) -> list[tuple[str, dict[str, Any]]]:
        """``(name, definition)`` of this workflow and of its object children,
        children first: the order ``define_workflow`` needs them in."""
        return as_app(self).definitions()

    # -- declaring --------------------------------------------------------

    def _add(self, node: Node) -> None:
        if node.name in self._reg.nodes:
            raise ValueError(f"workflow {self.name!r} already has a node named {node.name!r}")
        self._reg.nodes[node.name] = node

    @overload
    def step(self, fn: Handler, /) -> Handler: ...

    @overload
    def step(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        deps: Iterable[DepRef] = (),
        max_attempts: int | None = None,
        timeout: Interval | None = None,
        on_dep_failure: str = "fail_run",
        priority: int = 0,
        handler: str | None = None,
        limits: Iterable[LimitRef] = (),
        when: Mapping[str, Any] | None = None,
        unless: Mapping[str, Any] | None = None,
        on_dep_skipped: str = "skip",
    ) -> Callable[[Handler], Handler]: ...

    def step(
        self,
        fn: Handler | None = None,
        /,
        *,
        name: str | None = None,
        deps: Iterable[DepRef] = (),
        max_attempts: int | None = None,
        timeout: Interval | None = None,
        on_dep_failure: str = "fail_run",
        priority: int = 0,
        handler: str | None = None,
        limits: Iterable[LimitRef] = (),
        when: Mapping[str, Any] | None = None,
        unless: Mapping[str, Any] | None = None,
        on_dep_skipped: str = "skip",
    ) -> Handler | Callable[[Handler], Handler]:
        """Declare a task node run by the decorated function.

        ``name`` defaults to the function's name and ``handler`` (the name
        workers claim by) to the node name. One handler name maps to one
        function: a second, different function under the same name is refused.
        ``limits``: the limits this node takes besides the workflow's (a name
        at both levels is taken once, with the node's key). ``when`` /
        ``unless``: the node runs only if ``{"input": ..., "deps": {...}}``
        contains ``when`` and does not contain ``unless`` (JSON containment),
        else it is skipped; ``on_dep_skipped="run"`` runs it after a skipped
        dependency (docs/dynamic.md).
        """
        decorate = self._task_node("task", name=name, deps=deps, max_attempts=max_attempts, timeout=timeout,
                                   on_dep_failure=on_dep_failure, priority=priority, handler=handler,
                                   limits=limits, when=when, unless=unless, on_dep_skipped=on_dep_skipped)
        if fn is not None:
            return decorate(fn)
        return decorate

    def _task_node(
        self,
        kind: str,
        *,
        name: str | None,
        deps: Iterable[DepRef],
        max_attempts: int | None,
        timeout: Interval | None,
        on_dep_failure: str,
        priority: int,
        handler: str | None,
        limits: Iterable[LimitRef],
        when: Mapping[str, Any] | None,
        unless: Mapping[str, Any] | None,
        on_dep_skipped: str,
        over: str | None = None,
        max_items: int | None = None,
        on_item_failure: str = "fail",
    ) -> Callable[[Handler], Handler]:
        """The decorator of a node a handler runs: a task (:meth:`step`) or a map's items (:meth:`map`)."""
        dep_names = tuple(_dep_name(d) for d in deps)
        uses = _limit_uses(f"workflow {self.name!r}", limits)

        def decorate(func: Handler) -> Handler:
            node_name = name or getattr(func, "__name__", None)
            if not node_name:
                raise ValueError("a step needs a name")
            handler_name = handler or node_name
            existing = self._reg.handlers.get(handler_name)
            if existing is not None and existing is not func:
                raise ValueError(
                    f"workflow {self.name!r} already has a handler named {handler_name!r} ({existing!r})"
                )
            self._add(
                Node(
                    name=node_name,
                    kind=kind,
                    handler=handler_name,
                    deps=dep_names,
                    max_attempts=max_attempts,
                    timeout=None if timeout is None else format_interval(timeout),
                    on_dep_failure=on_dep_failure,
                    priority=priority,
                    limits=uses,
                    when=when,
                    unless=unless,
                    on_dep_skipped=on_dep_skipped,
                    over=over,
                    max_items=max_items,
                    on_item_failure=on_item_failure,
                )
            )
            self._reg.handlers[handler_name] = func
            try:
                func.__cyclone_node__ = node_name  # type: ignore[attr-defined]
            except (AttributeError, TypeError):
                pass
            return func

        return decorate

    def map(
        self,
        *,
        over: str,
        name: str | None = None,
        deps: Iterable[DepRef] = (),
        max_items: int | None = None,
        on_item_failure: str = "fail",
        max_attempts: int | None = None,
        timeout: Interval | None = None,
        on_dep_failure: str = "fail_run",
        priority: int = 0,
        handler: str | None = None,
        limits: Iterable[LimitRef] = (),
        when: Mapping[str, Any] | None = None,
        unless: Mapping[str, Any] | None = None,
        on_dep_skipped: str = "skip",
    ) -> Callable[[Handler], Handler]:
        """Declare a map node (SPEC 16) run by the decorated function once per
        element of the list at the path ``over`` (``"deps.list.images"``,
        ``"input.orders"``): each run is an item step, whose context has
        ``ctx.item`` (the element) and ``ctx.item_index`` (from 0). The map's
        output is the list of the items' outputs, in order. ``max_items``
        bounds the list (engine default 10,000, at most 100,000);
        ``on_item_failure`` is ``"fail"`` (the first discarded item fails the
        map) or ``"collect"`` (its element of the output is ``{"error": ...,
        "error_kind": ...}``). The other options are :meth:`step`'s, for each
        item."""
        return self._task_node("map", name=name, deps=deps, max_attempts=max_attempts, timeout=timeout,
                               on_dep_failure=on_dep_failure, priority=priority, handler=handler, limits=limits,
                               when=when, unless=unless, on_dep_skipped=on_dep_skipped, over=over,
                               max_items=max_items, on_item_failure=on_item_failure)

    def wait(
        self,
        name: str,
        signal: str | None = None,
        deps: Iterable[DepRef] = (),
        max_wait: Interval | None = None,
        on_dep_failure: str = "fail_run",
        limits: Iterable[LimitRef] | None = None,
        when: Mapping[str, Any] | None = None,
        unless: Mapping[str, Any] | None = None,
        on_dep_skipped: str = "skip",
    ) -> Node:
        """Declare a wait node, completed by ``cyclone.signal(run, signal)``
        (``signal`` defaults to the node name). A wait node takes no limits:
        ``limits`` is refused (``ValueError``). ``when``, ``unless`` and
        ``on_dep_skipped`` as for :meth:`step`."""
        _no_limits("wait", name, limits)
        return self._waiting_node("wait", name, deps, max_wait, on_dep_failure, when, unless, on_dep_skipped,
                                  signal=signal or name)

    def child(
        self,
        name: str,
        workflow: Workflow | str,
        deps: Iterable[DepRef] = (),
        max_wait: Interval | None = None,
        on_dep_failure: str = "fail_run",
        limits: Iterable[LimitRef] | None = None,
        when: Mapping[str, Any] | None = None,
        unless: Mapping[str, Any] | None = None,
        on_dep_skipped: str = "skip",
    ) -> Node:
        """Declare a child node: when reached, a run of ``workflow`` is submitted
        with this run's input, and its output becomes the node's. A child node
        takes no limits (its child run's steps may): ``limits`` is refused.
        ``when``, ``unless`` and ``on_dep_skipped`` as for :meth:`step`."""
        _no_limits("child", name, limits)
        wf_name = workflow if isinstance(workflow, str) else workflow.name
        node = self._waiting_node("child", name, deps, max_wait, on_dep_failure, when, unless, on_dep_skipped,
                                  workflow=wf_name)
        if isinstance(workflow, Workflow):
            self._children[workflow.name] = workflow
        return node

    def sleep(
        self,
        name: str,
        *,
        duration: Interval | None = None,
        until: str | None = None,
        deps: Iterable[DepRef] = (),
        on_dep_failure: str = "fail_run",
        when: Mapping[str, Any] | None = None,
        unless: Mapping[str, Any] | None = None,
        on_dep_skipped: str = "skip",
    ) -> Node:
        """Declare a sleep node (SPEC 16): when reached it waits on the engine
        clock, for ``duration`` (a timedelta, seconds or an interval string) or
        until the ISO 8601 timestamp at the path ``until`` (``"input.send_at"``,
        ``"deps.plan.at"``), exactly one of the two; then it completes with
        ``{"woke_at": ...}`` and the DAG goes on. A pause freezes it."""
        if (duration is None) == (until is None):
            raise ValueError(f"sleep node {name!r} needs exactly one of duration and until")
        node = Node(
            name=name,
            kind="sleep",
            deps=tuple(_dep_name(d) for d in deps),
            duration=None if duration is None else format_interval(duration),
            until=until,
            on_dep_failure=on_dep_failure,
            when=when,
            unless=unless,
            on_dep_skipped=on_dep_skipped,
        )
        self._add(node)
        return node

    def event(
        self,
        name: str,
        key: str,
        deps: Iterable[DepRef] = (),
        max_wait: Interval | None = None,
        on_dep_failure: str = "fail_run",
        when: Mapping[str, Any] | None = None,
        unless: Mapping[str, Any] | None = None,
        on_dep_skipped: str = "skip",
    ) -> Node:
        """Declare an event node (SPEC 17): when reached it makes its key from
        the template ``key`` (``"payment:{input.order_id}"``: each ``{path}``
        replaced by that value's text) and completes with the payload of the
        earliest event of that key emitted since its run began
        (:meth:`Client.emit_event <cyclone_py.client.Client.emit_event>`), at
        once or when it comes. ``max_wait`` bounds the wait."""
        return self._waiting_node("event", name, deps, max_wait, on_dep_failure, when, unless, on_dep_skipped,
                                  key=key)

    def await_run(
        self,
        name: str,
        run: str,
        deps: Iterable[DepRef] = (),
        max_wait: Interval | None = None,
        on_dep_failure: str = "fail_run",
        when: Mapping[str, Any] | None = None,
        unless: Mapping[str, Any] | None = None,
        on_dep_skipped: str = "skip",
    ) -> Node:
        """Declare an await node (SPEC 17): when reached it reads a run id at
        the path ``run`` (``"deps.start_export.run_id"``) and ends with that
        run: its output when it completes, discarded (``awaited_run_failed``)
        when it fails or is cancelled. ``max_wait`` bounds the wait."""
        return self._waiting_node("await", name, deps, max_wait, on_dep_failure, when, unless, on_dep_skipped,
                                  run=run)

    def _waiting_node(self, kind: str, name: str, deps: Iterable[DepRef], max_wait: Interval | None,
                      on_dep_failure: str, when: Mapping[str, Any] | None, unless: Mapping[str, Any] | None,
                      on_dep_skipped: str, *, signal: str | None = None, workflow: str | None = None,
                      key: str | None = None, run: str | None = None) -> Node:
        """Add a node that waits for something outside its run: a signal
        (wait), a child run (child), an event (event) or another run (await),
        with the options they share."""
        node = Node(
            name=name,
            kind=kind,
            deps=tuple(_dep_name(d) for d in deps),
            signal=signal,
            workflow=workflow,
            key=key,
            run=run,
            max_wait=None if max_wait is None else format_interval(max_wait),
            on_dep_failure=on_dep_failure,
            when=when,
            unless=unless,
            on_dep_skipped=on_dep_skipped,
        )
        self._add(node)
        return node


# -- the app ----------------------------------------------------------------


class App:
    """The workflows one worker serves, and the policy it serves them with.

    ``backoff(attempt)`` (a timedelta or seconds) replaces the engine's
    default retry delay, ``on_error(exc)`` is called with every discard, and
    ``max_reclaims`` (0 = unbounded) is passed to ``tick``: a
    :class:`~cyclone_py.worker.Worker` or :class:`~cyclone_py.testing.Env`
    uses them unless given its own (``cyclone worker --app`` likewise, unless
    ``--max-reclaims`` is given).

    ``limits`` (or :meth:`add_limit`): :class:`~cyclone_py.limit.Limit`
    objects its workers register at start besides those its workflows take
    (:attr:`limits` lists both), before its workflows. One name is one limit:
    two limits of one name with different values are refused (``ValueError``).

    ``schedules`` (or :meth:`schedule`, :meth:`add_schedule`): the
    :class:`~cyclone_py.schedule.Schedule` objects its workers register at
    start, after its workflows; each must run a workflow of this app.
    """

    def __init__(
        self,
        *workflows: Workflow,
        name: str | None = None,
        backoff: Backoff | None = None,
        on_error: ErrorHook | None = None,
        max_reclaims: int | None = None,
        schedules: Iterable[Schedule] = (),
        limits: Iterable[Limit] = (),
    ) -> None:
        if backoff is not None and not callable(backoff):
            raise TypeError(f"backoff must be callable, got {type(backoff).__name__}")
        if on_error is not None and not callable(on_error):
            raise TypeError(f"on_error must be callable, got {type(on_error).__name__}")
        if max_reclaims is not None and (
            isinstance(max_reclaims, bool) or not isinstance(max_reclaims, int) or max_reclaims < 0
        ):
            raise ValueError(f"max_reclaims must be an int >= 0, got {max_reclaims!r}")
        self.name = name
        self.backoff = backoff
        self.on_error = on_error
        self.max_reclaims = max_reclaims
        self._workflows: dict[str, Workflow] = {}
        self._schedules: dict[str, Schedule] = {}
        self._limits: dict[str, Limit] = {}
        for lim in limits:
            self.add_limit(lim)
        for wf in workflows:
            self.add(wf)
        for sched in schedules:
            self.add_schedule(sched)

    def __repr__(self) -> str:
        return f"App({list(self._workflows)})"

    def __iter__(self) -> Iterator[Workflow]:
        return iter(self._workflows.values())

    def __contains__(self, name: object) -> bool:
        return name in self._workflows

    def __getitem__(self, name: str) -> Workflow:
        return self._workflows[name]

    @property
    def workflows(self) -> Mapping[str, Workflow]:
        return dict(self._workflows)

    def add(self, workflow: Workflow) -> Workflow:
        """Add a workflow (and the workflows its child nodes were given as objects)."""
        existing = self._workflows.get(workflow.name)
        if existing is not None and existing is not workflow:
            raise ValueError(f"app already has a different workflow named {workflow.name!r}")
        self._check_limits([*self.limits, *workflow.declared_limits()])
        self._workflows[workflow.name] = workflow
        for child in workflow.child_workflows.values():
            if child.name not in self._workflows:
                self.add(child)
        return workflow

    def workflow(self, name: str, max_attempts: int | None = None, *, limits: Iterable[LimitRef] = ()) -> Workflow:
        """Create a workflow and add it."""
        return self.add(Workflow(name, max_attempts=max_attempts, limits=limits))

    @property
    def limits(self) -> list[Limit]:
        """Every limit the app declares and its workflows take (steps declared
        after the workflow was added included), once each, in the order first
        named: what its workers register, before its workflows. Raises
        ``ValueError`` when two limits of one name differ."""
        declared = list(self._limits.values())
        for wf in self._workflows.values():
            declared.extend(wf.declared_limits())
        return self._check_limits(declared)

    @staticmethod
    def _check_limits(declared: Iterable[Limit]) -> list[Limit]:
        by_name: dict[str, Limit] = {}
        for lim in declared:
            existing = by_name.setdefault(lim.name, lim)
            if existing != lim:
                raise ValueError(f"app has two different limits named {lim.name!r}: {existing!r} and {lim!r}")
        return list(by_name.values())

    def add_limit(self, limit: Limit) -> Limit:
        """Declare a limit its workers register even if no workflow of the app takes it."""
        if not isinstance(limit, Limit):
            raise TypeError(f"expected a cyclone Limit, got {type(limit).__name__}")
        self._check_limits([*self.limits, limit])
        self._limits.setdefault(limit.name, limit)
        return limit

    @property
    def schedules(self) -> list[Schedule]:
        """The schedules, in the order they were declared (the order of registration)."""
        return list(self._schedules.values())

    def add_schedule(self, schedule: Schedule) -> Schedule:
        """Declare a schedule; its workflow must be one of this app's."""
        if not isinstance(schedule, Schedule):
            raise TypeError(f"expected a cyclone Schedule, got {type(schedule).__name__}")
        existing = self._schedules.get(schedule.name)
        if existing is not None and existing is not schedule:
            raise ValueError(f"app already has a different schedule named {schedule.name!r}")
        wf = self._workflows.get(schedule.workflow)
        if wf is None:
            raise ValueError(
                f"schedule {schedule.name!r} runs workflow {schedule.workflow!r}, which this app does not declare "
                f"(its workflows: {', '.join(self.workflow_names()) or 'none'})"
            )
        if schedule.workflow_object is not None and schedule.workflow_object is not wf:
            raise ValueError(
                f"schedule {schedule.name!r} was given another workflow object named {schedule.workflow!r} "
                "than the one this app declares"
            )
        self._schedules[schedule.name] = schedule
        return schedule

    def schedule(
        self,
        name: str,
        cron: str,
        workflow: Workflow | str,
        *,
        input: Mapping[str, Any] | None = None,
        timezone: str = "UTC",
        overlap: str = "skip",
        catchup: Duration = timedelta(hours=1),
        deadline: Duration | None = None,
    ) -> Schedule:
        """Create a :class:`~cyclone_py.schedule.Schedule` and declare it."""
        return self.add_schedule(
            Schedule(name, cron, workflow, input=input, timezone=timezone, overlap=overlap, catchup=catchup,
                     deadline=deadline)
        )

    def workflow_names(self) -> list[str]:
        """Every workflow the app declares, child workflows included: the only
        workflows its worker claims steps of."""
        return sorted(self._workflows)

    def handler_names(self) -> list[str]:
        """Every handler name of every workflow: what the worker claims."""
        names: set[str] = set()
        for wf in self._workflows.values():
            names.update(wf.handlers)
        return sorted(names)

    def lookup(self, workflow: str, handler: str) -> Handler | None:
        wf = self._workflows.get(workflow)
        return None if wf is None else wf.handler_for(handler)

    def definitions(self) -> list[tuple[str, dict[str, Any]]]:
        """``(name, definition)`` of every workflow, children before their
        parents: the order ``define_workflow`` needs them in (a child node's
        workflow must exist; a cycle of child nodes is the SQL's to refuse)."""
        out: list[tuple[str, dict[str, Any]]] = []
        done: set[str] = set()

        def visit(wf: Workflow, path: tuple[str, ...]) -> None:
            if wf.name in done or wf.name in path:
                return
            for node in wf.nodes.values():
                child = self._workflows.get(node.workflow or "") if node.kind == "child" else None
                if child is not None:
                    visit(child, (*path, wf.name))
            out.append((wf.name, wf.definition()))
            done.add(wf.name)

        for wf in list(self._workflows.values()):
            visit(wf, ())
        return out


def as_app(obj: App | Workflow) -> App:
    """An App for an App or a single Workflow."""
    if isinstance(obj, App):
        return obj
    if isinstance(obj, Workflow):
        return App(obj)
    raise TypeError(f"expected a cyclone App or Workflow, got {type(obj).__name__}")

