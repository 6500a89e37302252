"""Every database call Cyclone's Python side makes: the only module with SQL.

One method per SQL function of schema ``cyclone`` (each call is one
statement, so one transaction, on an autocommit connection from a
``psycopg_pool.ConnectionPool``), plus read helpers over the public views for
the CLI. Nothing here writes an engine table: all writes are ``SELECT
cyclone.<function>(...)``, and every rule about states lives in SQL.

psycopg errors are translated to :mod:`cyclone_py.errors` exceptions
(:func:`from_psycopg`); no other module of the package imports psycopg but
:mod:`cyclone_py.db`, which manages the embedded cluster.

Every ``json`` and ``jsonb`` value read on a connection of this module is
decoded by :func:`load_json`: a value nested deeper than
:data:`MAX_JSON_DEPTH` (or that is not JSON) becomes an :class:`Undecodable`
in its row instead of an exception that would lose the whole result (or a
``RecursionError`` that would end the process). A claim keeps it in the
claimed step, whose execution then fails as ``permanent``
(:mod:`cyclone_py.execution`); every other read raises
:class:`~cyclone_py.errors.UndecodableValue`, naming the run or step and the
column, so the faces show that one error.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from datetime import timezone as fixed_offset
from typing import Any, Generic, Protocol, TypeVar
from uuid import UUID

import psycopg
import psycopg_pool
from psycopg import sql
from psycopg.rows import BaseRowFactory, RowMaker, class_row
from psycopg.types.json import Jsonb, set_json_loads

from cyclone_py import db, errors, tracing
from cyclone_py.durations import Duration, to_timedelta
from cyclone_py.vocabulary import ERROR_KINDS, RUN_STATES, TERMINAL_RUN_STATES

__all__ = [
    "CANCEL_CHANNEL",
    "DISCARD_CHANNEL",
    "WAKEUP_CHANNEL",
    "AuditRow",
    "ClaimedStep",
    "Client",
    "CompleteResult",
    "DiscardedStep",
    "EventRow",
    "Explanation",
    "FailedAttempt",
    "FireTime",
    "LimitRow",
    "ListenConnection",
    "LeaseHolder",
    "Metric",
    "MinuteCount",
    "Page",
    "Run",
    "RunFailure",
    "RunRow",
    "RunSummary",
    "ScheduleRow",
    "StepDetail",
    "StepRow",
    "SweepRow",
    "TickResult",
    "Undecodable",
    "can_create_databases",
    "check_reachable",
    "claim_on",
    "close_database",
    "create_database",
    "drop_database",
    "from_psycopg",
    "listen",
    "load_json",
    "renew_on",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class _Named(Protocol):
    @property
    def name(self) -> str: ...


WorkflowRef = str | _Named
RunId = UUID | str
Params = Sequence[Any] | Mapping[str, Any]


# -- decoding JSON ----------------------------------------------------------

#: The deepest nesting of arrays and objects inside one another that a JSON
#: value read from the database may have for Cyclone to decode it (``[]`` is
#: one level, ``[[1]]`` two). Python decodes and walks JSON recursively:
#: ``json.loads`` raises ``RecursionError`` near 1,000 levels, and code that
#: walks a decoded value (``dataclasses.asdict``, ``copy.deepcopy``, a pretty
#: ``json.dumps``, a handler) needs one or two frames a level besides its
#: caller's. 256 leaves that room, and is well above what the engine stores
#: today (at most 100 levels a value, plus the levels it wraps around one: a
#: claim's deps, a run's output, child runs); a deeper value can only have
#: been stored before that limit existed.
MAX_JSON_DEPTH = 256


@dataclass(frozen=True)
class Undecodable:
    """A JSON value read from the database that Cyclone does not decode: it
    stands in the value's place in its row, so that the value fails only its
    own step (a claim) or its own read (:class:`~cyclone_py.errors.UndecodableValue`).
    ``problem``: why; ``size``: the bytes of its JSON text."""

    problem: str
    size: int

    def __str__(self) -> str:
        return f"{self.problem} ({self.size:,} bytes of JSON)"


#: ``json.loads`` without its per-call work (keyword checks, guessing the
#: encoding of bytes): the database sends JSON as UTF-8 text.
_decode = json.JSONDecoder().decode


def load_json(data: str | bytes) -> Any:
    """Decode one ``json``/``jsonb`` value as the database sent it, or an
    :class:`Undecodable` when it nests deeper than :data:`MAX_JSON_DEPTH` or
    is not JSON. The depth is measured only when the text has more opening
    brackets than the limit (two ``str.count``: most values never pay)."""
    if data == b"{}" or data == "{}":  # most deps, and many inputs: a claimed step decodes two values
        return {}
    try:
        text = data if isinstance(data, str) else bytes(data).decode()
        value = _decode(text)
    except RecursionError:
        return Undecodable(_TOO_DEEP, len(data))
    except ValueError as exc:  # UnicodeDecodeError too
        return Undecodable(f"not JSON ({exc})", len(data))
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _deeper_than(value, MAX_JSON_DEPTH):
        return Undecodable(_TOO_DEEP, len(data))
    return value


_TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels of arrays and objects, more than Cyclone decodes"


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels in ``value``:
    level by level, without recursion, stopping at level ``limit + 1``."""
    level = [value] if isinstance(value, list | dict) else []
    for _ in range(limit):
        inner: list[Any] = []
        for container in level:
            items = container.values() if isinstance(container, dict) else container
            inner += [v for v in items if isinstance(v, list | dict)]
        if not inner:
            return False
        level = inner
    return True


#: The connections whose JSON values :func:`load_json` decodes (see :func:`_bound_json`).
_bounded: weakref.WeakSet[psycopg.Connection[Any]] = weakref.WeakSet()


def _bound_json(conn: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    """Have ``conn`` decode its ``json`` and ``jsonb`` values with
    :func:`load_json` (registered once a connection: a pool's, a borrowed
    pool's, a LISTEN connection); returns it."""
    if conn not in _bounded:
        set_json_loads(load_json, conn)
        _bounded.add(conn)
    return conn


def _decoded(rows: list[T]) -> list[T]:
    """``rows`` (dataclasses), unless one holds an :class:`Undecodable`:
    then :class:`~cyclone_py.errors.UndecodableValue` naming its row and column."""
    for row in rows:
        for column, value in vars(row).items():
            if type(value) is Undecodable:
                raise errors.UndecodableValue(f"cannot read the {column} of {_row_name(row)}: it is {value}")
    return rows


def _decoded_value(value: Any, what: str) -> Any:
    """``value``, unless it is an :class:`Undecodable` (then :class:`~cyclone_py.errors.UndecodableValue`)."""
    if type(value) is Undecodable:
        raise errors.UndecodableValue(f"cannot read {what}: it is {value}")
    return value


def _row_name(row: Any) -> str:
    """A row as an error message names it: ``step 42 of run …``, ``run …``, else its kind."""
    run_id, row_id = getattr(row, "run_id", None), getattr(row, "id", None)
    if isinstance(run_id, UUID) and isinstance(row_id, int):
        step_id = getattr(row, "step_id", row_id)
        return f"step {step_id} of run {run_id}"
    if isinstance(row_id, UUID):
        return f"run {row_id}"
    return f"a {type(row).__name__} row"


# -- rows -------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """``cyclone.get_run``: a run with the error that failed it (if any)."""

    id: UUID
    workflow: str
    state: str
    error_kind: str | None
    error: str | None
    input: Any
    output: Any
    created_at: datetime
    finished_at: datetime | None
    deadline_at: datetime | None

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_RUN_STATES


@dataclass(frozen=True)
class RunRow:
    """A row of ``cyclone.cyclone_v_runs``."""

    id: UUID
    workflow: str
    state: str
    input: Any
    output: Any
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    deadline_at: datetime | None
    paused_at: datetime | None
    parent_run_id: UUID | None
    #: Submit's priority, added to each node's (SPEC 16).
    priority: int = 0
    #: The run :meth:`Client.rerun` made this one from (SPEC 17).
    rerun_of: UUID | None = None


@dataclass(frozen=True)
class StepRow:
    """A row of ``cyclone.cyclone_v_steps`` (or of ``cyclone_v_dlq``)."""

    id: int
    run_id: UUID
    workflow: str
    node: str
    handler: str
    kind: str
    state: str
    attempt: int
    max_attempts: int
    reclaims: int
    error: str | None
    error_kind: str | None
    scheduled_at: datetime | None
    started_at: datetime | None
    completed_at: datetime | None
    lease_owner: str | None
    lease_expiry: datetime | None
    output: Any
    child_run_id: UUID | None
    #: Claims of the step so far (the fence its lease holder presents), and its last heartbeat.
    lease_generation: int = 0
    heartbeat_at: datetime | None = None
    #: Times a handler snoozed the step; the latest progress it reported, and when (SPEC 16).
    snoozes: int = 0
    progress: Any = None
    progress_at: datetime | None = None
    #: a map item's position in its list, from 0 (SPEC 16); None for a node's own step
    item_index: int | None = None
    #: What an event or await node waits on: the key its template made, the run its path named (SPEC 17).
    event_key: str | None = None
    awaited_run_id: UUID | None = None


@dataclass(frozen=True)
class EventRow:
    """A row of ``cyclone.cyclone_v_events`` (SPEC 17): an emitted event, kept until prune."""

    key: str
    payload: Any
    emitted_at: datetime


@dataclass(frozen=True)
class StepError:
    """A row of ``cyclone.cyclone_step_errors``: an error a step was given (a
    retried failure or a discard), with its attempt and the lease owner."""

    id: int
    run_id: UUID
    step_id: int
    node: str
    attempt: int
    error_kind: str
    error: str
    worker: str | None
    discarded: bool
    at: datetime
    #: Characters of the whole error when a read cut it (``error_history``); None: ``error`` is whole.
    length: int | None = None


@dataclass(frozen=True)
class StepOutline:
    """A ``cyclone_v_steps`` row without its payloads or error: what a run's
    picture and the index of its steps need, whatever the payloads weigh."""

    id: int
    node: str
    kind: str
    state: str
    deps: list[str]
    child_run_id: UUID | None
    #: a map item's position (SPEC 16); None for a node's own step
    item_index: int | None = None
    #: what the node decides when reached (SPEC 16, 17): its when/unless are drawn on its edges
    spec: Any = None


@dataclass(frozen=True)
class RunSummary:
    """A run as a list page shows it: a ``cyclone_v_runs`` row without its payloads."""

    id: UUID
    workflow: str
    state: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    deadline_at: datetime | None
    paused_at: datetime | None
    parent_run_id: UUID | None
    idempotency_key: str | None


@dataclass(frozen=True)
class StepDetail:
    """A ``cyclone_v_steps`` row with everything a run's page shows: the
    node's kind and dependencies (its edges), its lease, its wait and its
    payloads."""

    id: int
    run_id: UUID
    node: str
    handler: str
    kind: str
    state: str
    deps: list[str]
    attempt: int
    max_attempts: int
    reclaims: int
    error: str | None
    error_kind: str | None
    scheduled_at: datetime | None
    started_at: datetime | None
    completed_at: datetime | None
    timeout: timedelta | None
    lease_owner: str | None
    lease_expiry: datetime | None
    heartbeat_at: datetime | None
    signal: str | None
    max_wait: timedelta | None
    wait_expires_at: datetime | None
    child_run_id: UUID | None
    input: Any
    output: Any
    #: SPEC 16: the latest progress and when, the snoozes, a map item's position (None otherwise)
    progress: Any = None
    progress_at: datetime | None = None
    snoozes: int = 0
    item_index: int | None = None
    #: SPEC 17: what an event or await node waits on; what the node decides when reached (its
    #: condition, a sleep's time, a map's list, an event's key template, an await's run path)
    event_key: str | None = None
    awaited_run_id: UUID | None = None
    spec: Any = None


@dataclass(frozen=True)
class AuditRow:
    """A row of ``cyclone.cyclone_v_audit``: an operator action or a signal on
    a run, its reason, and who acted (``'alice via role'``, or the role)."""

    id: int
    at: datetime
    run_id: UUID
    node: str | None
    action: str
    reason: str | None
    actor: str
    #: what else the action names: a signal's ``{"payload_bytes": n}``, a rerun's ``{"rerun_of": id}``
    detail: Any = None


@dataclass(frozen=True)
class LeaseHolder:
    """A worker holding leases: how many running steps, its earliest lease
    expiry and its last heartbeat (``cyclone_v_steps``)."""

    owner: str
    steps: int
    earliest_expiry: datetime
    last_heartbeat: datetime | None


@dataclass(frozen=True)
class MinuteCount:
    """How many runs of one workflow in one state within one minute: those
    created then and in that state now (:meth:`Client.created_per_minute`), or
    those that finished then in that state (:meth:`Client.finished_per_minute`,
    a bar of the console's sparklines)."""

    workflow: str
    state: str
    #: the minute's start (minutes counted from the ``since`` asked for)
    minute: datetime
    runs: int


@dataclass(frozen=True)
class RunFailure:
    """The step that failed a run (:meth:`Client.run_failures`): its node, its
    error's kind, the error's last characters and the whole error's length."""

    run_id: UUID
    node: str
    error_kind: str | None
    error: str
    length: int


@dataclass(frozen=True)
class FailedAttempt:
    """An error a step was given (``cyclone_step_errors``) without its text:
    which attempt, when, of what kind, whether it discarded the step, and the
    lease owner that reported it."""

    id: int
    step_id: int
    attempt: int
    error_kind: str
    discarded: bool
    at: datetime
    worker: str | None


#: A keyset cursor: the (time, id) of the last row of a page; the next page is
#: the rows strictly after it in the page's order (newest first).
Cursor = tuple[datetime, Any]


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: its rows, and the cursor of the next page (None
    when this is the last one)."""

    rows: list[T]
    next: Cursor | None


_RUN_COLUMNS = (
    "id, workflow, state, input, output, created_at, started_at, finished_at, "
    "deadline_at, paused_at, parent_run_id, priority, rerun_of"
)
_STEP_COLUMNS = (
    "id, run_id, workflow, node, handler, kind, state, attempt, max_attempts, reclaims, "
    "error, error_kind, scheduled_at, started_at, completed_at, lease_owner, lease_expiry, "
    "output, child_run_id, lease_generation, heartbeat_at, snoozes, progress, progress_at, item_index, "
    "event_key, awaited_run_id"
)


_SUMMARY_COLUMNS = (
    "id, workflow, state, created_at, started_at, finished_at, deadline_at, paused_at, parent_run_id, "
    "idempotency_key"
)
_DETAIL_COLUMNS = (
    "id, run_id, node, handler, kind, state, deps, attempt, max_attempts, reclaims, error, error_kind, "
    "scheduled_at, started_at, completed_at, timeout, lease_owner, lease_expiry, heartbeat_at, signal, "
    "max_wait, wait_expires_at, child_run_id, input, output, progress, progress_at, snoozes, item_index, "
    "event_key, awaited_run_id, spec"
)
#: submit's named arguments past p_traceparent, each passed only when given (Client.submit).
_SUBMIT_NAMED = {name: f", {name} => %s" for name in (
    "p_priority", "p_debounce_key", "p_debounce", "p_debounce_max", "p_idempotency_window")}
#: Characters of each dead letter's error a page of them carries (the step's page has it whole).
PAGE_ERROR_CHARS = 1000
_DLQ_PAGE_COLUMNS = _STEP_COLUMNS.replace("error, ", f"left(error, {PAGE_ERROR_CHARS}) AS error, ", 1)
#: The most rows one page call returns.
PAGE_LIMIT = 500


def _zoned(at: datetime, wall: datetime) -> datetime:
    """``at`` shown in its zone: the wall-clock time PostgreSQL gave for it
    (``at AT TIME ZONE zone``), with the offset that makes it the same instant."""
    offset = wall - at.astimezone(UTC).replace(tzinfo=None)
    return wall.replace(tzinfo=fixed_offset(offset))


@dataclass(frozen=True)
class ScheduleRow:
    """A row of ``cyclone.cyclone_v_schedules``, with the state of its last run
    (``cyclone_v_runs``; None when there is none, or it was pruned) and the next
    slot on the schedule's wall clock (``next_fire_at AT TIME ZONE timezone``)."""

    name: str
    cron: str
    timezone: str
    workflow: str
    overlap: str
    catchup: timedelta
    paused: bool
    next_fire_at: datetime
    last_slot: datetime | None
    last_run_id: UUID | None
    last_run_state: str | None
    next_fire_wall: datetime

    @property
    def next_fire_local(self) -> datetime:
        """``next_fire_at`` in the schedule's time zone (an aware datetime with its offset)."""
        return _zoned(self.next_fire_at, self.next_fire_wall)


@dataclass(frozen=True)
class FireTime:
    """One fire time of a cron (``cyclone.next_fire``): the instant, and its wall
    clock in the time zone it was asked in."""

    at: datetime
    wall: datetime

    @property
    def local(self) -> datetime:
        """``at`` in the time zone (an aware datetime with its offset)."""
        return _zoned(self.at, self.wall)


@dataclass(frozen=True)
class Metric:
    """A row of ``cyclone.metrics()``: one gauge (SPEC 14) with its labels and value."""

    name: str
    labels: dict[str, Any]
    value: float


@dataclass(frozen=True)
class Violation:
    """A row of ``cyclone.check_invariants()``: a consistency rule of the engine
    and what breaks it."""

    invariant: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class ShardConfig:
    """A shard's row of ``cyclone.cyclone_shard`` (SPEC 15): its name, the
    router's partition count and the partitions it holds."""

    name: str
    partition_count: int
    partitions: list[int]


@dataclass(frozen=True)
class RouterPartition:
    """A router's partition and the shard (name, DSN) that holds it."""

    partition: int
    shard: str
    dsn: str


_SCHEDULE_COLUMNS = (
    "s.name, s.cron, s.timezone, s.workflow, s.overlap, s.catchup, s.paused, s.next_fire_at, s.last_slot, "
    "s.last_run_id, r.state AS last_run_state, s.next_fire_at AT TIME ZONE s.timezone AS next_fire_wall"
)


@dataclass(frozen=True)
class LimitRow:
    """A row of ``cyclone.cyclone_v_limits``: one limit and one of its buckets
    (``''`` without a key), with its running steps, its claims in the current
    period (None without a rate) and its due available steps."""

    name: str
    bucket: str
    concurrency: int | None
    running: int
    rate: int | None
    period: timedelta | None
    claims_in_period: int | None
    available: int


@dataclass(frozen=True)
class WorkerRow:
    """A row of ``cyclone.cyclone_v_workers`` (SPEC 18): a registered worker,
    what it said about itself (``info``: handlers, workflows, host, pid...),
    whether it was seen within the last 60 seconds, and the steps it holds."""

    name: str
    info: Mapping[str, Any]
    started_at: datetime
    last_seen_at: datetime
    alive: bool
    running: int


def _moment(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


@dataclass(frozen=True)
class Explanation:
    """``cyclone.explain_step``: why a step is not running. ``reason`` is the
    first that applies (SPEC 12, 16: a terminal state (``skipped`` among them),
    ``running``, ``sleeping`` (with ``until``), ``waiting_signal``,
    ``waiting_event`` (with ``key``, SPEC 17), ``waiting_run`` (with
    ``run_id``, SPEC 17), ``waiting_child``, ``pending_deps``, ``run_terminal``,
    ``run_paused``, ``not_due``, ``concurrency_limit``, ``rate_limit``,
    ``claimable``, with ``workers``: how many live registered workers would
    claim it); the details it comes with are fields (None when the reason has
    none), and ``raw`` is the answer as SQL gave it."""

    step_id: int
    reason: str
    deps: tuple[str, ...] = ()
    signal: str | None = None
    child_run_id: UUID | None = None
    run_state: str | None = None
    until: datetime | None = None
    limit: str | None = None
    bucket: str | None = None
    running: int | None = None
    max: int | None = None
    next_slot_at: datetime | None = None
    workers: int | None = None
    key: str | None = None
    run_id: UUID | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, step_id: int, data: Mapping[str, Any]) -> Explanation:
        child = data.get("child_run_id")
        return cls(
            step_id=step_id,
            reason=str(data["reason"]),
            deps=tuple(str(d) for d in data.get("deps") or ()),
            signal=data.get("signal"),
            child_run_id=None if child is None else UUID(str(child)),
            run_state=data.get("run_state"),
            until=_moment(data.get("until")),
            limit=data.get("limit"),
            bucket=data.get("bucket"),
            running=data.get("running"),
            max=data.get("max"),
            next_slot_at=_moment(data.get("next_slot_at")),
            workers=data.get("workers"),
            key=data.get("key"),
            run_id=None if data.get("run_id") is None else UUID(str(data["run_id"])),
            raw=dict(data),
        )


@dataclass(frozen=True)
class ClaimedStep:
    """A row of ``cyclone.claim``: one leased execution."""

    step_id: int
    run_id: UUID
    workflow: str
    node: str
    handler: str
    kind: str
    attempt: int
    max_attempts: int
    lease_generation: int
    timeout: timedelta | None
    input: Any
    deps: Any
    #: the run's W3C trace context (SPEC 14), the parent of the execution's span; None: no trace
    traceparent: str | None = None
    #: the span of the step's last failed execution (a W3C traceparent, as the worker gave it to
    #: ``fail``), which this execution's span links to (SPEC 14); None: none kept
    previous_span: str | None = None
    #: when the lease runs out unless renewed (claim's now + lease TTL, on the database's clock; SPEC 18)
    lease_expiry: datetime | None = None
    #: a map item's element of its list and its position from 0 (SPEC 16); None for any other step
    item: Any = None
    item_index: int | None = None

    @property
    def execution(self) -> tuple[int, int]:
        """Which execution of its step this is: (step id, lease generation). A worker may claim a step
        again (after a reclaim) while its earlier execution is still being reported; the two differ here."""
        return (self.step_id, self.lease_generation)


@dataclass(frozen=True)
class CompleteResult:
    """A row of ``cyclone.complete_many``."""

    step_id: int
    accepted: bool


@dataclass(frozen=True)
class SweepRow:
    """A row of ``cyclone.sweep``."""

    step_id: int
    run_id: UUID
    node: str
    action: str


@dataclass(frozen=True)
class DiscardedStep:
    """A discard reported by ``cyclone.tick``."""

    step_id: int
    run_id: UUID
    node: str
    workflow: str | None
    error_kind: str | None
    error: str | None

    def exception(self) -> errors.StepFailed:
        """The :class:`errors.StepFailed` given to a worker's error hook."""
        return errors.step_failed(
            step_id=self.step_id,
            run_id=self.run_id,
            node=self.node,
            workflow=self.workflow,
            error_kind=self.error_kind,
            error=self.error,
        )


@dataclass(frozen=True)
class TickResult:
    """The counts returned by ``cyclone.tick``."""

    reclaimed: int = 0
    retried: int = 0
    discarded: int = 0
    deadlines: int = 0
    max_wait: int = 0
    #: sleep nodes woken (SPEC 16)
    slept: int = 0
    scheduled: int = 0
    skipped_slots: int = 0
    archived: int = 0
    discarded_steps: list[DiscardedStep] = field(default_factory=list)
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> TickResult:
        data = data or {}
        steps = [
            DiscardedStep(
                step_id=int(d["step_id"]),
                run_id=UUID(str(d["run_id"])),
                node=str(d.get("node")),
                workflow=d.get("workflow"),
                error_kind=d.get("error_kind"),
                error=d.get("error"),
            )
            for d in data.get("discarded_steps") or []
        ]
        return cls(
            reclaimed=int(data.get("reclaimed", 0)),
            retried=int(data.get("retried", 0)),
            discarded=int(data.get("discarded", 0)),
            deadlines=int(data.get("deadlines", 0)),
            max_wait=int(data.get("max_wait", 0)),
            slept=int(data.get("slept", 0)),
            scheduled=int(data.get("scheduled", 0)),
            skipped_slots=int(data.get("skipped_slots", 0)),
            archived=int(data.get("archived", 0)),
            discarded_steps=steps,
            raw=dict(data),
        )


# -- helpers ----------------------------------------------------------------


def _workflow_name(workflow: WorkflowRef) -> str:
    return workflow if isinstance(workflow, str) else workflow.name


def _uuid(value: RunId) -> UUID:
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except ValueError:
        raise errors.InvalidArgument(f"not a run id: {value!r}") from None


def _interval(value: Duration | None) -> timedelta | None:
    return None if value is None else to_timedelta(value)


def _bigint_array(values: Sequence[int]) -> str:
    """A ``bigint[]`` literal of integers; anything else is refused here, not
    left to the server to parse."""
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise errors.InvalidArgument(f"not an integer: {v!r}")
    return "{" + ",".join(map(str, map(int, values))) + "}"


def _text_array(texts: Sequence[str | None]) -> str:
    """An array literal of texts (None: NULL), each quoted and escaped."""
    return "{" + ",".join(
        "NULL" if t is None else '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in texts
    ) + "}"


def _json_or_null(value: Any) -> Jsonb | None:
    return None if value is None else Jsonb(value)


def _page_limit(limit: int) -> int:
    if not isinstance(limit, int) or not 1 <= limit <= PAGE_LIMIT:
        raise errors.InvalidArgument(f"a page has 1 to {PAGE_LIMIT} rows, not {limit!r}")
    return limit


def _id_range(prefix: str) -> tuple[UUID, UUID]:
    """The run ids that start with ``prefix`` (hex digits, dashes ignored), as
    the range [low, high] of the primary key: UUIDs sort by their bytes, so
    by their hex text."""
    digits = prefix.replace("-", "").strip().lower()
    if not digits or len(digits) > 32 or any(c not in "0123456789abcdef" for c in digits):
        raise errors.InvalidArgument(f"a run id search is 1 to 32 hex digits, not {prefix[:40]!r}")
    return UUID(digits.ljust(32, "0")), UUID(digits.ljust(32, "f"))


def _dataclass_row(cls: type[T]) -> BaseRowFactory[T]:
    """psycopg's ``class_row``, but positional when the columns are the
    dataclass's fields in their order: ``class_row`` builds a dict of keyword
    arguments a row, which costs a claimed step more than its object.

    When the columns are all of the fields, the object's ``__dict__`` is
    filled in one update, without ``__init__``: a frozen dataclass's
    ``__init__`` sets each field through ``object.__setattr__``, 1.9 µs for a
    claimed step's seventeen against 0.8, on the claim loop's thread (a
    tenth of the worker's time under the GIL went to building them). Only for
    the row classes here, which have no ``__post_init__`` and no slots; the
    object is the same, frozen as before."""
    names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
    by_name = class_row(cls)
    whole = not hasattr(cls, "__post_init__") and not hasattr(cls, "__slots__")
    new = object.__new__

    def filled(values: Sequence[Any]) -> T:
        row = new(cls)
        row.__dict__.update(zip(names, values))  # noqa: B905 (the columns are the names)
        return row

    def factory(cursor: Any) -> RowMaker[T]:
        columns = tuple(c.name for c in cursor.description or ())
        if whole and columns == names:
            return filled
        if columns and columns == names[: len(columns)]:
            return lambda values: cls(*values)
        return by_name(cursor)

    return factory


#: Seconds a connection may sit back in the pool and be handed out again
#: without the pool's check, a round trip (``Client._check``). A worker uses
#: each of its connections every few milliseconds; the check was one round
#: trip more for each claim and each batch of completions.
CHECK_AFTER_IDLE = 1.0

#: When each pooled connection last came back from a call (``Client._conn``).
_released: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = weakref.WeakKeyDictionary()


# -- the client -------------------------------------------------------------


class Client:
    """A pool of autocommit connections and one method per ``cyclone`` function.

    ``Client(dsn)`` opens its own pool (``close()`` it, or use it as a context
    manager); ``Client(pool=...)`` borrows a pool the caller owns. Without a
    DSN, :func:`cyclone_py.db.resolve_dsn` picks one (``CYCLONE_DSN``,
    ``DATABASE_URL`` or the embedded database). ``statement_timeout``
    (seconds) cancels any statement of its pool's connections that runs
    longer (SQLSTATE 57014): the exporter's bound on a scrape.
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        pool: psycopg_pool.ConnectionPool | None = None,
        min_size: int = 1,
        max_size: int = 4,
        timeout: float = 10.0,
        application_name: str = "cyclone",
        statement_timeout: float | None = None,
    ) -> None:
        self._actor: str | None = None
        if pool is not None:
            self._pool = pool
            self._owns_pool = False
            self.dsn = pool.conninfo
        else:
            if dsn is None:
                dsn = db.resolve_dsn()
            self.dsn = dsn
            self._pool = psycopg_pool.ConnectionPool(
                dsn,
                min_size=min_size,
                max_size=max(max_size, min_size),
                kwargs={"autocommit": True, "application_name": application_name},
                timeout=timeout,
                # A connection the pool cannot make (the server refuses it: too
                # many clients, a restart) is given up after one checkout's
                # wait, and the next checkout tries afresh at once. The pool's
                # own retries back off from 1 s, doubling, for 5 minutes: after
                # a minute without a slot its next try came up to a minute
                # after the slots were back, and every checkout meanwhile
                # waited for it (docs/operations.md#connections).
                reconnect_timeout=timeout,
                name="cyclone",
                # The pool library's own check before each checkout: a
                # connection the server closed while it sat idle in the pool
                # (an idle timeout, a proxy, pg_terminate_backend) is replaced
                # instead of failing the caller's call (_check).
                check=self._check,
                configure=None if statement_timeout is None else _statement_timeout(statement_timeout),
                open=True,
            )
            self._owns_pool = True

    # -- plumbing ---------------------------------------------------------

    def _check(self, conn: psycopg.Connection[Any]) -> None:
        """The pool's check of a connection it is about to hand out: a round
        trip, unless the connection came back less than ``CHECK_AFTER_IDLE``
        ago (then a call that finds it closed replaces the pool's broken ones:
        ``_conn``). When a check fails, the others idle in the pool were most
        likely closed with it (a proxy, an idle timeout, a server restart,
        ``pg_terminate_backend``): the pool's own ``check()`` replaces every
        broken one at once. Without it the pool retries the checkout after a
        back-off that starts at 1 s and doubles, and would find them one by
        one: 1 + 2 + 4 s for three."""
        released = _released.get(conn)
        if released is not None and time.monotonic() - released < CHECK_AFTER_IDLE:
            return
        try:
            psycopg_pool.ConnectionPool.check_connection(conn)
        except Exception:
            self._pool.check()
            raise

    @property
    def pool(self) -> psycopg_pool.ConnectionPool:
        return self._pool

    def acting_as(self, actor: str | None) -> Client:
        """A client on the same pool whose calls name ``actor`` to the audit
        trail: each runs in a transaction that first sets ``cyclone.actor``
        (transaction-local), so a retry, cancel, pause or resume records
        ``'actor via <role>'`` (audit.sql). ``None``: the role alone."""
        other = Client(pool=self._pool)
        other._actor = actor
        return other

    def close(self) -> None:
        """Close the pool (when this client opened it)."""
        if self._owns_pool:
            self._pool.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        lost = False
        try:
            with self._pool.connection() as conn:
                try:
                    yield _bound_json(conn)
                except psycopg.OperationalError:
                    lost = conn.broken
                    raise
                finally:
                    _released[conn] = time.monotonic()
        except (psycopg.Error, psycopg_pool.PoolTimeout, psycopg_pool.PoolClosed) as exc:
            if lost:
                # Closed by the server while it sat in the pool, unchecked: the
                # others idle there most likely went with it (see _check).
                with contextlib.suppress(Exception):
                    self._pool.check()
            raise from_psycopg(exc) from exc

    def _value(self, query: str, params: Params = ()) -> Any:
        with self._conn() as conn:
            if self._actor is None:
                row = conn.execute(query, params).fetchone()
            else:
                with conn.transaction():
                    conn.execute("SELECT set_config('cyclone.actor', %s, true)", (self._actor,))
                    row = conn.execute(query, params).fetchone()
        if row is None:
            return None
        if type(row[0]) is Undecodable:
            called = re.search(r"cyclone\.\w+", query)
            _decoded_value(row[0], f"what {called.group() if called else 'the query'} returned")
        return row[0]

    def _rows(self, cls: type[T], query: str, params: Params = ()) -> list[T]:
        with self._conn() as conn:
            with conn.cursor(row_factory=_dataclass_row(cls)) as cur:
                cur.execute(query, params)
                return _decoded(cur.fetchall())

    # -- definitions ------------------------------------------------------

    def define_workflow(self, name: str, definition: Mapping[str, Any]) -> None:
        """``cyclone.define_workflow``: insert or replace a workflow definition."""
        self._value("SELECT cyclone.define_workflow(%s, %s)", (name, Jsonb(dict(definition))))

    # -- limits -----------------------------------------------------------

    def define_limit(
        self,
        name: str,
        concurrency: int | None = None,
        rate: int | None = None,
        period: Duration | None = None,
    ) -> None:
        """``cyclone.define_limit``: insert or replace a limit (every value anew;
        one not given is no bound). Applies to the next claim."""
        self._value("SELECT cyclone.define_limit(%s, %s, %s, %s)", (name, concurrency, rate, _interval(period)))

    def drop_limit(self, name: str) -> bool:
        """``cyclone.drop_limit``: false when there is no such limit; ``WrongState``
        while a workflow names it or an unfinished step takes it."""
        return bool(self._value("SELECT cyclone.drop_limit(%s)", (name,)))

    def limits(self, name: str | None = None) -> list[LimitRow]:
        """Rows of ``cyclone_v_limits`` (of one limit with ``name``), by name then bucket."""
        return self._rows(
            LimitRow,
            "SELECT name, bucket, concurrency, running, rate, period, claims_in_period, available "
            "FROM cyclone.cyclone_v_limits WHERE %(name)s::text IS NULL OR name = %(name)s ORDER BY name, bucket",
            {"name": name},
        )

    def explain_step(self, step_id: int) -> Explanation:
        """``cyclone.explain_step``: why a step is not running (``NotFound`` for an unknown id)."""
        return Explanation.from_json(step_id, self._value("SELECT cyclone.explain_step(%s)", (step_id,)))

    def explain_steps(self, step_ids: Sequence[int]) -> dict[int, Explanation]:
        """``cyclone.explain_step`` for each step, in one statement (a run's
        page explains all its waiting steps in one round trip)."""
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT i, cyclone.explain_step(i) FROM unnest(%s::bigint[]) AS i", (list(step_ids),)
            ).fetchall()
        return {int(r[0]): Explanation.from_json(int(r[0]), _decoded_value(r[1], f"the explanation of step {r[0]}"))
                for r in rows}

    # -- runs -------------------------------------------------------------

    def submit(
        self,
        workflow: WorkflowRef,
        input: Any = None,
        *,
        deadline: Duration | None = None,
        idempotency_key: str | None = None,
        run_at: datetime | None = None,
        traceparent: str | None = None,
        priority: int = 0,
        debounce_key: str | None = None,
        debounce: Duration | None = None,
        debounce_max: Duration | None = None,
        idempotency_window: Duration | None = None,
    ) -> UUID:
        """``cyclone.submit``: start a run; returns its id (the existing one for a
        repeated idempotency key). The run joins ``traceparent`` (a W3C trace
        context), else the trace of the active OpenTelemetry span, if any
        (:mod:`cyclone_py.tracing`). ``priority`` (-1000..1000) is added to each
        node's priority: smaller is claimed first.

        SPEC 17: with ``debounce_key`` and ``debounce``, a burst of submits of
        the key makes one run, with the last input, that starts once the burst
        has been quiet for ``debounce`` (or ``debounce_max`` after the first);
        with ``idempotency_window``, ``idempotency_key`` dedupes only against a
        run created within it."""
        args = (
            _workflow_name(workflow),
            Jsonb({} if input is None else input),
            _interval(deadline),
            idempotency_key,
            run_at,
            traceparent if traceparent is not None else tracing.current_traceparent(),
        )
        # Only the arguments given are named, and the defaults are left to the
        # database, so that a call without them also suits a database (or a
        # router) older than them.
        named = {"p_priority": priority or None, "p_debounce_key": debounce_key, "p_debounce": _interval(debounce),
                 "p_debounce_max": _interval(debounce_max), "p_idempotency_window": _interval(idempotency_window)}
        given = {k: v for k, v in named.items() if v is not None}
        # Constant pieces only (_SUBMIT_NAMED); every value goes as a parameter.
        query = "SELECT cyclone.submit(%s, %s, %s, %s, %s, %s" + "".join(_SUBMIT_NAMED[k] for k in given) + ")"
        run_id = self._value(query, (*args, *given.values()))
        return UUID(str(run_id))

    def submit_many(
        self,
        workflow: WorkflowRef,
        inputs: Sequence[Any],
        *,
        deadline: Duration | None = None,
        priority: int = 0,
    ) -> list[UUID]:
        """``cyclone.submit_many``: one run per input, in order, all or nothing,
        each with ``priority`` (as :meth:`submit`)."""
        args = (
            _workflow_name(workflow),
            [json.dumps({} if i is None else i) for i in inputs],
            _interval(deadline),
        )
        with self._conn() as conn:
            if priority:
                rows = conn.execute("SELECT cyclone.submit_many(%s, %s::jsonb[], %s, %s)", (*args, priority)).fetchall()
            else:
                rows = conn.execute("SELECT cyclone.submit_many(%s, %s::jsonb[], %s)", args).fetchall()
        return [UUID(str(r[0])) for r in rows]

    def get_run(self, run_id: RunId) -> Run:
        """``cyclone.get_run``: the run and the error that failed it."""
        rows = self._rows(
            Run,
            "SELECT id, workflow, state, error_kind, error, input, output, created_at, "
            "finished_at, deadline_at FROM cyclone.get_run(%s)",
            (_uuid(run_id),),
        )
        if not rows or rows[0].id is None:
            raise errors.NotFound(f"run {run_id} not found")
        return rows[0]

    def signal(self, run_id: RunId, name: str, payload: Any = None) -> bool:
        """``cyclone.signal``: complete the wait node waiting for ``name``."""
        return bool(self._value("SELECT cyclone.signal(%s, %s, %s)", (_uuid(run_id), name, _json_or_null(payload))))

    # -- coordination (SPEC 17) -------------------------------------------

    def emit_event(self, key: str, payload: Any = None) -> int:
        """``cyclone.emit_event``: record an event of ``key`` and complete every
        event node waiting on it with ``payload``; returns how many it completed."""
        return int(self._value("SELECT cyclone.emit_event(%s, %s)", (key, _json_or_null(payload))))

    def signal_with_start(self, workflow: WorkflowRef, idempotency_key: str, signal: str, payload: Any = None,
                          input: Any = None) -> UUID:
        """``cyclone.signal_with_start``: the run of ``workflow`` and
        ``idempotency_key`` (submitted with ``input`` when there is none), then
        ``signal`` on it, in one transaction; returns the run's id.
        :class:`~cyclone_py.errors.WrongState` when that run has ended."""
        run_id = self._value("SELECT cyclone.signal_with_start(%s, %s, %s, %s, %s)",
                             (_workflow_name(workflow), idempotency_key, signal, _json_or_null(payload),
                              Jsonb({} if input is None else input)))
        return UUID(str(run_id))

    def events(self, key: str | None = None, *, limit: int = 100) -> list[EventRow]:
        """Kept events (``cyclone_v_events``), newest first; only ``key``'s
        when given."""
        return self._rows(
            EventRow,
            "SELECT key, payload, emitted_at FROM cyclone.cyclone_v_events "
            "WHERE %(key)s::text IS NULL OR key = %(key)s ORDER BY emitted_at DESC LIMIT %(limit)s",
            {"key": key, "limit": _page_limit(limit)},
        )

    def rerun(self, run_id: RunId, from_node: str | None = None, reason: str | None = None) -> UUID:
        """``cyclone.rerun``: a new run of a finished run's workflow and input;
        with ``from_node``, the nodes upstream of it that completed keep their
        outputs. Returns the new run's id."""
        new_id = self._value("SELECT cyclone.rerun(%s, %s, %s)", (_uuid(run_id), from_node, reason))
        return UUID(str(new_id))

    # -- operator actions -------------------------------------------------

    def retry(self, run_id: RunId, node: str, additional_attempts: int = 0, reason: str | None = None) -> None:
        """``cyclone.retry``: reopen a discarded step."""
        self._value("SELECT cyclone.retry(%s, %s, %s, %s)", (_uuid(run_id), node, additional_attempts, reason))

    def retry_all(self, run_id: RunId, reason: str | None = None) -> int:
        """``cyclone.retry_all``: reopen every discarded step of a run; returns how many."""
        return int(self._value("SELECT cyclone.retry_all(%s, %s)", (_uuid(run_id), reason)) or 0)

    def cancel(self, run_id: RunId, reason: str | None = None) -> bool:
        """``cyclone.cancel``: cancel a running or paused run."""
        return bool(self._value("SELECT cyclone.cancel(%s, %s)", (_uuid(run_id), reason)))

    def pause(self, run_id: RunId) -> bool:
        """``cyclone.pause``: stop new claims of a running run."""
        return bool(self._value("SELECT cyclone.pause(%s)", (_uuid(run_id),)))

    def resume(self, run_id: RunId) -> bool:
        """``cyclone.resume``: resume a paused run."""
        return bool(self._value("SELECT cyclone.resume(%s)", (_uuid(run_id),)))

    # -- the worker protocol ----------------------------------------------

    def claim(
        self,
        worker: str,
        handlers: Sequence[str] | None = None,
        limit: int = 1,
        lease_ttl: Duration = 30.0,
        workflows: Sequence[str] | None = None,
    ) -> list[ClaimedStep]:
        """``cyclone.claim``: lease up to ``limit`` due steps of those handlers and
        workflows (None: any)."""
        with self._conn() as conn:
            return claim_on(conn, worker, handlers, limit, lease_ttl, workflows)

    def renew(self, step_id: int, worker: str, lease_generation: int, lease_ttl: Duration = 30.0) -> bool:
        """``cyclone.renew``: the heartbeat; false means the lease is lost."""
        return bool(
            self._value(
                "SELECT cyclone.renew(%s, %s, %s, %s)",
                (step_id, worker, lease_generation, _interval(lease_ttl)),
            )
        )

    def release(self, step_id: int, worker: str, lease_generation: int) -> bool:
        """``cyclone.release``: hand a lease back (a worker shutting down with a
        step it will not finish): the step is available again at once, with no
        attempt charged. False when the lease is no longer ``worker``'s."""
        return bool(self._value("SELECT cyclone.release(%s, %s, %s)", (step_id, worker, lease_generation)))

    def snooze(self, step_id: int, worker: str, lease_generation: int, delay: Duration) -> bool:
        """``cyclone.snooze``: hand a leased step back to be claimed again after
        ``delay`` (0 to 365 days), with no attempt charged. False when the lease
        is no longer ``worker``'s (or the step's timeout passed)."""
        return bool(self._value("SELECT cyclone.snooze(%s, %s, %s, %s)",
                                (step_id, worker, lease_generation, _interval(delay))))

    def progress(self, step_id: int, worker: str, lease_generation: int, value: Any) -> bool:
        """``cyclone.progress``: keep ``value`` (JSON, at most 64 KiB) as the
        running step's latest progress and announce it (``NOTIFY
        cyclone_progress``). False when the lease is no longer ``worker``'s."""
        return bool(self._value("SELECT cyclone.progress(%s, %s, %s, %s)",
                                (step_id, worker, lease_generation, Jsonb(value))))

    def register_worker(self, worker: str, info: Mapping[str, Any] | None = None) -> None:
        """``cyclone.register_worker``: insert or refresh this worker's registry
        row (SPEC 18): ``info`` replaced, last seen now."""
        self._value("SELECT cyclone.register_worker(%s, %s)", (worker, Jsonb(dict(info or {}))))

    def deregister_worker(self, worker: str) -> bool:
        """``cyclone.deregister_worker``: remove the row at a clean exit; false
        when there is none."""
        return bool(self._value("SELECT cyclone.deregister_worker(%s)", (worker,)))

    def workers(self) -> list[WorkerRow]:
        """Rows of ``cyclone_v_workers``: the live ones first, then by name."""
        return self._rows(
            WorkerRow,
            "SELECT name, info, started_at, last_seen_at, alive, running FROM cyclone.cyclone_v_workers "
            "ORDER BY alive DESC, name",
        )

    def renew_many(
        self, worker: str, step_ids: Sequence[int], lease_generations: Sequence[int], lease_ttl: Duration = 30.0
    ) -> dict[int, bool | None]:
        """``cyclone.renew_many``: the heartbeats of several steps in one
        statement (:func:`renew_on`). Step id -> True (renewed), False (no
        longer ``worker``'s), None (another transaction held its row)."""
        with self._conn() as conn:
            return renew_on(conn, worker, step_ids, lease_generations, lease_ttl)

    def complete(self, step_id: int, worker: str, lease_generation: int, output: Any = None) -> bool:
        """``cyclone.complete``: CAS on the lease; false when it was lost."""
        return bool(
            self._value(
                "SELECT cyclone.complete(%s, %s, %s, %s)",
                (step_id, worker, lease_generation, _json_or_null(output)),
            )
        )

    def complete_many(
        self,
        worker: str,
        step_ids: Sequence[int],
        lease_generations: Sequence[int],
        outputs: Sequence[Any],
        *,
        serialized: bool = False,
    ) -> list[CompleteResult]:
        """``cyclone.complete_many``: one CAS per element, in one transaction.

        ``outputs`` are JSON-able values, or JSON texts when ``serialized``
        (``None`` is SQL NULL either way).
        """
        if not (len(step_ids) == len(lease_generations) == len(outputs)):
            raise errors.InvalidArgument("step_ids, lease_generations and outputs differ in length")
        texts = [
            None if o is None else (o if serialized else json.dumps(o)) for o in outputs
        ]
        # The arrays go as text literals, made in one join each: psycopg's list
        # dumping costs about 3 µs an element of a worker's batch.
        return self._rows(
            CompleteResult,
            "SELECT step_id, accepted FROM cyclone.complete_many(%s, %s::bigint[], %s::bigint[], %s::jsonb[])",
            (worker, _bigint_array(step_ids), _bigint_array(lease_generations), _text_array(texts)),
        )

    def fail(
        self,
        step_id: int,
        worker: str,
        lease_generation: int,
        error: str,
        error_kind: str = "error",
        retry_in: Duration | None = None,
        span: str | None = None,
    ) -> str | None:
        """``cyclone.fail``: returns ``'available'``, ``'discarded'`` or ``None``
        (the lease was lost). ``span``: the failed execution's span as a W3C
        ``traceparent``, which the next attempt's span links to."""
        value = self._value(
            "SELECT cyclone.fail(%s, %s, %s, %s, %s, %s, %s)",
            (step_id, worker, lease_generation, error, error_kind, _interval(retry_in), span),
        )
        return None if value is None else str(value)

    def backoff(self, attempt: int) -> timedelta:
        """``cyclone.backoff``: the default retry delay after ``attempt``."""
        value = self._value("SELECT cyclone.backoff(%s)", (attempt,))
        assert isinstance(value, timedelta)
        return value

    # -- time-driven work -------------------------------------------------

    def tick(self, max_reclaims: int = 0) -> TickResult:
        """``cyclone.tick``: sweep, deadlines, max_wait, due schedule slots;
        returns the counts."""
        return TickResult.from_json(self._value("SELECT cyclone.tick(%s)", (max_reclaims,)))

    def sweep(self, max_reclaims: int = 0, limit: int = 100) -> list[SweepRow]:
        """``cyclone.sweep``: timed-out steps and expired leases."""
        return self._rows(
            SweepRow,
            "SELECT step_id, run_id, node, action FROM cyclone.sweep(%s, %s)",
            (max_reclaims, limit),
        )

    def enforce_deadlines(self, limit: int = 100) -> list[UUID]:
        """``cyclone.enforce_deadlines``: fail runs past their deadline; their ids."""
        with self._conn() as conn:
            rows = conn.execute("SELECT cyclone.enforce_deadlines(%s)", (limit,)).fetchall()
        return [UUID(str(r[0])) for r in rows]

    # -- schedules --------------------------------------------------------

    def schedule(
        self,
        name: str,
        cron: str,
        workflow: WorkflowRef,
        input: Mapping[str, Any] | None = None,
        timezone: str = "UTC",
        overlap: str = "skip",
        catchup: Duration = timedelta(hours=1),
        deadline: Duration | None = None,
    ) -> None:
        """``cyclone.schedule``: insert or replace a schedule (replacing keeps its
        fired slots and its paused state)."""
        self._value(
            "SELECT cyclone.schedule(%s, %s, %s, %s, %s, %s, %s, %s)",
            (
                name,
                cron,
                _workflow_name(workflow),
                Jsonb({} if input is None else input),
                timezone,
                overlap,
                _interval(catchup),
                _interval(deadline),
            ),
        )

    def unschedule(self, name: str) -> bool:
        """``cyclone.unschedule``: remove a schedule (its runs stay); false when
        there is none."""
        return bool(self._value("SELECT cyclone.unschedule(%s)", (name,)))

    def pause_schedule(self, name: str) -> bool:
        """``cyclone.pause_schedule``: false when missing or already paused."""
        return bool(self._value("SELECT cyclone.pause_schedule(%s)", (name,)))

    def resume_schedule(self, name: str) -> bool:
        """``cyclone.resume_schedule``: false when missing or not paused."""
        return bool(self._value("SELECT cyclone.resume_schedule(%s)", (name,)))

    def backfill(self, name: str, start: datetime, end: datetime) -> int:
        """``cyclone.backfill``: submit every slot in ``[start, end)`` that has no
        run yet; how many runs it created."""
        return int(self._value("SELECT cyclone.backfill(%s, %s, %s)", (name, start, end)))

    def schedules(self, name: str | None = None) -> list[ScheduleRow]:
        """Rows of ``cyclone_v_schedules`` by name (one, or none, with ``name``),
        with their last run's state."""
        return self._rows(
            ScheduleRow,
            f"SELECT {_SCHEDULE_COLUMNS} FROM cyclone.cyclone_v_schedules s "
            "LEFT JOIN cyclone.cyclone_v_runs r ON r.id = s.last_run_id "
            "WHERE %(name)s::text IS NULL OR s.name = %(name)s ORDER BY s.name",
            {"name": name},
        )

    def next_fire(self, cron: str, after: datetime, timezone: str = "UTC") -> datetime:
        """``cyclone.next_fire``: the first fire time of ``cron`` strictly after ``after``."""
        value = self._value("SELECT cyclone.next_fire(%s, %s, %s)", (cron, after, timezone))
        assert isinstance(value, datetime)
        return value

    def next_fires(self, cron: str, after: datetime, timezone: str = "UTC", n: int = 5) -> list[FireTime]:
        """The next ``n`` fire times of ``cron`` after ``after``: ``cyclone.next_fire``
        called again from each one (on one connection), with each one's wall
        clock in ``timezone``."""
        out: list[FireTime] = []
        with self._conn() as conn:
            with conn.cursor(row_factory=_dataclass_row(FireTime)) as cur:
                for _ in range(n):
                    cur.execute(
                        "SELECT f AS at, f AT TIME ZONE %(tz)s AS wall "
                        "FROM cyclone.next_fire(%(cron)s, %(after)s, %(tz)s) f",
                        {"cron": cron, "after": after, "tz": timezone},
                    )
                    row = cur.fetchone()
                    assert row is not None
                    out.append(row)
                    after = row.at
        return out

    # -- retention --------------------------------------------------------

    def metrics(self) -> list[Metric]:
        """``cyclone.metrics()``: the engine's gauges, one row per name and label set."""
        return self._rows(Metric, "SELECT name, labels, value FROM cyclone.metrics()")

    def check_invariants(self) -> list[Violation]:
        """``cyclone.check_invariants()``: the rows that break the engine's
        consistency rules, read in one snapshot; empty when the state is
        consistent (cyclone_admin)."""
        return self._rows(Violation, "SELECT invariant, detail FROM cyclone.check_invariants()")

    # -- shards (SPEC 15, docs/scaling.md) ---------------------------------

    def configure_shard(self, name: str, partition_count: int, partitions: Sequence[int]) -> None:
        """``cyclone.configure_shard``: make this database shard ``name`` of a
        router with ``partition_count`` partitions, holding ``partitions``."""
        self._value("SELECT cyclone.configure_shard(%s, %s, %s)", (name, partition_count, list(partitions)))

    def try_configure_shard(self, name: str, partition_count: int, partitions: Sequence[int]) -> None:
        """``configure_shard`` in a transaction that is rolled back: raises what
        it would raise (the engine's rules decide), writes nothing."""
        with self._conn() as conn, conn.transaction(force_rollback=True):
            conn.execute("SELECT cyclone.configure_shard(%s, %s, %s)", (name, partition_count, list(partitions)))

    def shard(self) -> ShardConfig | None:
        """This database's shard configuration; None for a database of its own."""
        rows = self._rows(ShardConfig, "SELECT name, partition_count, partitions FROM cyclone.cyclone_shard")
        return rows[0] if rows else None

    def configure_router(self, shards: Sequence[tuple[str, str]], partition_shards: Sequence[str]) -> None:
        """``cyclone.configure_router`` on a router: its shards as (name, DSN)
        and the shard of each partition, in partition order."""
        self._value("SELECT cyclone.configure_router(%s, %s, %s)",
                    ([n for n, _ in shards], [d for _, d in shards], list(partition_shards)))

    def router_partitions(self) -> list[RouterPartition]:
        """A router's partitions in order, each with its shard's name and DSN."""
        return self._rows(
            RouterPartition,
            "SELECT p.partition, p.shard, s.dsn FROM cyclone.cyclone_partitions p "
            "JOIN cyclone.cyclone_shards s ON s.name = p.shard ORDER BY p.partition",
        )

    def prune(self, older_than: Duration, limit: int = 1000) -> int:
        """``cyclone.prune``: delete up to ``limit`` runs finished more than
        ``older_than`` ago (with their steps); how many it deleted."""
        return int(self._value("SELECT cyclone.prune(%s, %s)", (_interval(older_than), limit)))

    def archive(self, limit: int = 10000) -> int:
        """``cyclone.archive``: move up to ``limit`` finished runs out of the live
        tables into their day's history tables (``tick`` does this too); how many."""
        return int(self._value("SELECT cyclone.archive(%s)", (limit,)))

    def reindex(self) -> None:
        """Rebuild the engine's indexes without blocking it (``REINDEX TABLE
        CONCURRENTLY``): after a large prune, PostgreSQL keeps their peak size.
        Needs the tables' owner; each statement runs in its own transaction."""
        with self._conn() as conn:
            conn.execute("REINDEX TABLE CONCURRENTLY cyclone.cyclone_steps")
            conn.execute("REINDEX TABLE CONCURRENTLY cyclone.cyclone_runs")

    def engine_version(self) -> str | None:
        """``cyclone.version()``: the engine release the database holds; None
        for an engine older than 0.22.0, which has no such function."""
        try:
            return str(self._value("SELECT cyclone.version()"))
        except errors.CycloneError as exc:
            if exc.sqlstate == "42883":  # undefined_function
                return None
            raise

    # -- the engine clock -------------------------------------------------

    def now(self) -> datetime:
        """``cyclone.now``: the engine clock."""
        value = self._value("SELECT cyclone.now()")
        assert isinstance(value, datetime)
        return value

    def advance_time(self, by: Duration) -> datetime:
        """``cyclone.advance_time``: move the engine clock forward; the new now."""
        value = self._value("SELECT cyclone.advance_time(%s)", (_interval(by),))
        assert isinstance(value, datetime)
        return value

    def reset_time(self) -> None:
        """``cyclone.reset_time``: back to real time."""
        self._value("SELECT cyclone.reset_time()")

    # -- reads over the views (CLI, harness, demo) ------------------------

    def list_runs(
        self,
        *,
        workflow: str | None = None,
        state: str | None = None,
        limit: int = 50,
    ) -> list[RunRow]:
        """Rows of ``cyclone_v_runs``, newest first (``cyclone.list_runs``: on a
        router, every shard's)."""
        return self._rows(
            RunRow,
            f"SELECT {_RUN_COLUMNS} FROM cyclone.list_runs(%s, %s, %s)",
            (workflow, state, limit),
        )

    def get_run_row(self, run_id: RunId) -> RunRow:
        """The ``cyclone_v_runs`` row of a run."""
        rows = self._rows(RunRow, f"SELECT {_RUN_COLUMNS} FROM cyclone.cyclone_v_runs WHERE id = %s", (_uuid(run_id),))
        if not rows:
            raise errors.NotFound(f"run {run_id} not found")
        return rows[0]

    def step(self, step_id: int) -> StepRow:
        """The ``cyclone_v_steps`` row of one step."""
        rows = self._rows(StepRow, f"SELECT {_STEP_COLUMNS} FROM cyclone.cyclone_v_steps WHERE id = %s", (step_id,))
        if not rows:
            raise errors.NotFound(f"step {step_id} not found")
        return rows[0]

    def steps(self, run_id: RunId) -> list[StepRow]:
        """The ``cyclone_v_steps`` rows of a run, in node order of creation
        (``cyclone.list_steps``, which a router sends to the run's shard)."""
        return self._rows(StepRow, f"SELECT {_STEP_COLUMNS} FROM cyclone.list_steps(%s)", (_uuid(run_id),))

    def step_errors(self, run_id: RunId) -> list[StepError]:
        """Every error the run's steps were given, oldest first (``cyclone_step_errors``)."""
        return self._rows(
            StepError,
            "SELECT id, run_id, step_id, node, attempt, error_kind, error, worker, discarded, at "
            "FROM cyclone.cyclone_step_errors WHERE run_id = %s ORDER BY step_id, id",
            (_uuid(run_id),),
        )

    def dlq(
        self,
        *,
        error_kind: str | None = None,
        workflow: str | None = None,
        limit: int = 100,
    ) -> list[StepRow]:
        """Rows of ``cyclone_v_dlq`` (discarded steps), newest first
        (``cyclone.list_dead_letters``: on a router, every shard's)."""
        return self._rows(
            StepRow,
            f"SELECT {_STEP_COLUMNS} FROM cyclone.list_dead_letters(%s, %s, %s)",
            (workflow, error_kind, limit),
        )

    # -- list pages and a run's details (the web console) ------------------

    def runs_page(
        self,
        *,
        workflow: str | None = None,
        state: str | None = None,
        created_from: datetime | None = None,
        created_until: datetime | None = None,
        idempotency_key: str | None = None,
        id_prefix: str | None = None,
        after: Cursor | None = None,
        limit: int = 50,
    ) -> Page[RunSummary]:
        """A page of runs (``cyclone_v_runs``), newest first (``created_at``,
        then id, descending), filtered by workflow, state, creation time
        (``created_from <= created_at < created_until``), idempotency key and
        the start of the run id; ``after`` is the previous page's ``next``.
        Each filter and the cursor are one index range (list_pages.sql), so
        the page after any cursor costs what the first one does."""
        if state is not None and state not in RUN_STATES:
            raise errors.InvalidArgument(f"unknown run state {state[:40]!r} (one of {', '.join(RUN_STATES)})")
        low, high = _id_range(id_prefix) if id_prefix else (None, None)
        n = _page_limit(limit)
        rows = self._rows(
            RunSummary,
            f"SELECT {_SUMMARY_COLUMNS} FROM cyclone.cyclone_v_runs "
            "WHERE (%(wf)s::text IS NULL OR workflow = %(wf)s) "
            "AND (%(st)s::text IS NULL OR state = %(st)s) "
            "AND (%(from)s::timestamptz IS NULL OR created_at >= %(from)s) "
            "AND (%(until)s::timestamptz IS NULL OR created_at < %(until)s) "
            "AND (%(key)s::text IS NULL OR idempotency_key = %(key)s) "
            "AND (%(low)s::uuid IS NULL OR id BETWEEN %(low)s AND %(high)s) "
            "AND (%(at)s::timestamptz IS NULL OR (created_at, id) < (%(at)s, %(id)s::uuid)) "
            "ORDER BY created_at DESC, id DESC LIMIT %(lim)s",
            {"wf": workflow, "st": state, "from": created_from, "until": created_until, "key": idempotency_key,
             "low": low, "high": high, "at": after[0] if after else None,
             "id": _uuid(after[1]) if after else None, "lim": n + 1},
        )
        more = len(rows) > n
        rows = rows[:n]
        return Page(rows, (rows[-1].created_at, rows[-1].id) if more else None)

    def dead_letters(
        self,
        *,
        workflow: str | None = None,
        error_kind: str | None = None,
        after: Cursor | None = None,
        limit: int = 50,
    ) -> Page[StepRow]:
        """A page of dead letters (``cyclone_v_dlq``), newest first
        (``completed_at``, then step id, descending), of one workflow and one
        error kind; each error cut to ``PAGE_ERROR_CHARS`` characters."""
        if error_kind is not None and error_kind not in ERROR_KINDS:
            raise errors.InvalidArgument(f"unknown error kind {error_kind[:40]!r} (one of {', '.join(ERROR_KINDS)})")
        n = _page_limit(limit)
        rows = self._rows(
            StepRow,
            f"SELECT {_DLQ_PAGE_COLUMNS} FROM cyclone.cyclone_v_dlq "
            "WHERE (%(wf)s::text IS NULL OR workflow = %(wf)s) "
            "AND (%(kind)s::text IS NULL OR error_kind = %(kind)s) "
            "AND (%(at)s::timestamptz IS NULL OR (completed_at, id) < (%(at)s, %(id)s::bigint)) "
            "ORDER BY completed_at DESC, id DESC LIMIT %(lim)s",
            {"wf": workflow, "kind": error_kind, "at": after[0] if after else None,
             "id": int(after[1]) if after else None, "lim": n + 1},
        )
        more = len(rows) > n
        rows = rows[:n]
        last = rows[-1] if rows else None
        return Page(rows, (last.completed_at, last.id) if more and last and last.completed_at else None)

    def run_steps(self, run_id: RunId, ids: Sequence[int] | None = None) -> list[StepDetail]:
        """Every step of a run with its edges, lease, wait and payloads, in
        order of creation (``cyclone_v_steps``); only the steps ``ids`` when
        given (a page of a run's steps)."""
        return self._rows(
            StepDetail,
            f"SELECT {_DETAIL_COLUMNS} FROM cyclone.cyclone_v_steps WHERE run_id = %(run)s "
            "AND (%(ids)s::bigint[] IS NULL OR id = ANY (%(ids)s)) ORDER BY id",
            {"run": _uuid(run_id), "ids": None if ids is None else list(ids)},
        )

    def step_outline(self, run_id: RunId) -> list[StepOutline]:
        """Every step of a run without its payloads or error, in order of
        creation (``cyclone_v_steps``): a run's picture and its pages of steps."""
        return self._rows(
            StepOutline,
            "SELECT id, node, kind, state, deps, child_run_id, item_index, spec FROM cyclone.cyclone_v_steps "
            "WHERE run_id = %s ORDER BY id",
            (_uuid(run_id),),
        )

    def error_history(self, run_id: RunId, *, before: Cursor | None = None, limit: int = 50,
                      chars: int = 2000) -> Page[StepError]:
        """A page of the errors a run's steps were given (``cyclone_step_errors``),
        newest first (by id, the order they were written); ``before`` is the
        previous page's ``next``. Each error is its last ``chars`` characters,
        with its whole ``length``: a page weighs the same whatever the errors
        do (the ids are chosen first, and only the page's errors are read)."""
        n = _page_limit(limit)
        rows = self._rows(
            StepError,
            "SELECT e.id, e.run_id, e.step_id, e.node, e.attempt, e.error_kind, right(e.error, %(chars)s) AS error, "
            "e.worker, e.discarded, e.at, length(e.error) AS length FROM ("
            "  SELECT id FROM cyclone.cyclone_step_errors WHERE run_id = %(run)s "
            "  AND (%(id)s::bigint IS NULL OR id < %(id)s) ORDER BY id DESC LIMIT %(lim)s"
            ") page JOIN cyclone.cyclone_step_errors e ON e.id = page.id ORDER BY e.id DESC",
            {"run": _uuid(run_id), "id": None if before is None else int(before[1]), "lim": n + 1,
             "chars": max(0, int(chars))},
        )
        more = len(rows) > n
        rows = rows[:n]
        return Page(rows, (rows[-1].at, rows[-1].id) if more else None)

    def audit(self, run_id: RunId) -> list[AuditRow]:
        """The audit trail of a run, oldest first (``cyclone_v_audit``)."""
        return self._rows(
            AuditRow,
            "SELECT id, at, run_id, node, action, reason, actor, detail FROM cyclone.cyclone_v_audit "
            "WHERE run_id = %s ORDER BY id",
            (_uuid(run_id),),
        )

    def created_per_minute(self, since: datetime, until: datetime) -> list[MinuteCount]:
        """The runs created in ``[since, until)`` (``cyclone_v_runs``), counted by
        workflow, state now and minute of creation (minutes from ``since``):
        the console's sparklines. One range of the ``(created_at, id)`` index
        of the live table and of each day of history, so it costs what the
        window holds, whatever the history."""
        return self._rows(
            MinuteCount,
            "SELECT workflow, state, date_bin('1 minute', created_at, %(since)s) AS minute, count(*)::int AS runs "
            "FROM cyclone.cyclone_v_runs WHERE created_at >= %(since)s AND created_at < %(until)s "
            "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
            {"since": since, "until": until},
        )

    def finished_per_minute(self, since: datetime, until: datetime) -> list[MinuteCount]:
        """The runs that finished in ``[since, until)`` (at most a day), counted by
        workflow, state and minute of finishing (minutes from ``since``):
        ``cyclone.finished_per_minute``, the console's sparklines. It reads the
        live table's finished runs through ``cyclone_archive_queue`` and the
        archived ones through their day tables' ``finished_at`` index, so it
        costs what the window holds, whatever the history."""
        return self._rows(
            MinuteCount,
            "SELECT workflow, state, minute, runs::int AS runs FROM cyclone.finished_per_minute(%s, %s)",
            (since, until),
        )

    def finished_runs_page(
        self,
        since: datetime,
        until: datetime,
        *,
        workflow: str | None = None,
        state: str | None = None,
        after: Cursor | None = None,
        limit: int = 50,
    ) -> Page[RunSummary]:
        """A page of the runs that finished in ``[since, until)`` (at most a
        day), of a workflow and a state (completed, failed or cancelled) when
        given, newest finish first; ``after`` is the previous page's ``next``, a
        ``(finished_at, id)`` cursor (``cyclone.finished_runs``): the list behind
        each number of :meth:`finished_per_minute`."""
        n = _page_limit(limit)
        rows = self._rows(
            RunSummary,
            f"SELECT {_SUMMARY_COLUMNS} FROM cyclone.finished_runs(%s, %s, %s, %s, %s, %s, %s)",
            (since, until, workflow, state, n + 1, after[0] if after else None,
             _uuid(after[1]) if after else None),
        )
        more = len(rows) > n
        rows = rows[:n]
        last = rows[-1] if more else None
        return Page(rows, (last.finished_at, last.id) if last is not None and last.finished_at else None)

    def overview_gauges(self, cap: int = 100) -> list[Metric]:
        """The console overview's numbers, named as :meth:`metrics` names them
        (``cyclone.overview_gauges``): each workflow's running and paused runs
        counted among its first ``cap`` live ones (a ``cyclone_runs_capped`` row
        when it has more: the counts are then of those ``cap``), its ready steps
        and their lag, its dead letters by kind, and the expired leases. Each a
        bounded read through indexes, where ``metrics()`` reads the live runs
        table whole."""
        return self._rows(Metric, "SELECT name, labels, value FROM cyclone.overview_gauges(%s)", (cap,))

    def run_failures(self, run_ids: Sequence[RunId], *, chars: int = 2000) -> dict[UUID, RunFailure]:
        """The failing step of each of these runs that has one, with its error's
        last ``chars`` characters, in one statement: the step ``cyclone.get_run``
        names, its earliest discarded step that is not a map's item (its map
        is the failing step) and whose discard was not ``contained`` by
        ``cancel_branch`` dependents (it did not fail the run). Read from
        ``cyclone_steps`` (granted to clients as the view is), which has the
        ``contained`` column ``cyclone_v_steps`` leaves out."""
        ids = [_uuid(r) for r in run_ids]
        if not ids:
            return {}
        rows = self._rows(
            RunFailure,
            "SELECT DISTINCT ON (run_id) run_id, node, error_kind, right(error, %(chars)s) AS error, "
            "coalesce(length(error), 0) AS length FROM cyclone.cyclone_steps "
            "WHERE run_id = ANY (%(ids)s::uuid[]) AND state = 'discarded' AND item_index IS NULL "
            "AND NOT contained ORDER BY run_id, finished_at, id",
            {"ids": ids, "chars": max(0, int(chars))},
        )
        return {r.run_id: r for r in rows}

    def failed_attempts(self, run_id: RunId, step_ids: Sequence[int], *, per_step: int = 100) -> list[FailedAttempt]:
        """The errors the given steps of a run were given, without their text:
        each step's newest ``per_step`` (``cyclone_step_errors``, by its
        index on run, step and id), by step then oldest first."""
        if not step_ids:
            return []
        return self._rows(
            FailedAttempt,
            "SELECT e.id, e.step_id, e.attempt, e.error_kind, e.discarded, e.at, e.worker "
            "FROM unnest(%(ids)s::bigint[]) AS s(id) CROSS JOIN LATERAL ("
            "  SELECT x.id, x.step_id, x.attempt, x.error_kind, x.discarded, x.at, x.worker "
            "  FROM cyclone.cyclone_step_errors x WHERE x.run_id = %(run)s AND x.step_id = s.id "
            "  ORDER BY x.id DESC LIMIT %(per)s) e ORDER BY e.step_id, e.id",
            {"ids": list(step_ids), "run": _uuid(run_id), "per": max(1, int(per_step))},
        )

    def awaited_signals(self, run_id: RunId) -> list[str]:
        """The signals a run's wait nodes wait for, or will when reached
        (``cyclone_v_steps``: wait nodes waiting or pending): the ones
        ``cyclone.signal`` would deliver or keep, by name."""
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT DISTINCT signal FROM cyclone.cyclone_v_steps WHERE run_id = %s AND kind = 'wait' "
                "AND state IN ('waiting', 'pending') AND signal IS NOT NULL ORDER BY 1",
                (_uuid(run_id),),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def lease_holders(self) -> list[LeaseHolder]:
        """The workers holding leases now (running steps, by lease owner)."""
        return self._rows(
            LeaseHolder,
            "SELECT lease_owner AS owner, count(*)::int AS steps, min(lease_expiry) AS earliest_expiry, "
            "max(heartbeat_at) AS last_heartbeat FROM cyclone.cyclone_v_steps WHERE state = 'running' "
            "GROUP BY lease_owner ORDER BY lease_owner",
        )

    def executable(self, functions: Sequence[str]) -> set[str]:
        """Which of the ``cyclone`` functions named the connected role may
        execute (``has_function_privilege``): what a face offers to do."""
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT p.proname FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = 'cyclone' AND p.proname = ANY (%s) "
                "GROUP BY p.proname HAVING bool_or(has_function_privilege(p.oid, 'EXECUTE'))",
                (list(functions),),
            ).fetchall()
        return {str(r[0]) for r in rows}

    def workflows(self) -> dict[str, Any]:
        """Registered workflow definitions by name (``cyclone_v_workflows``)."""
        with self._conn() as conn:
            rows = conn.execute("SELECT name, definition FROM cyclone.cyclone_v_workflows ORDER BY name").fetchall()
        return {str(r[0]): _decoded_value(r[1], f"the definition of workflow {r[0]}") for r in rows}

    def step_counts(self, run_id: RunId) -> dict[str, int]:
        """How many ``cyclone_v_steps`` rows of a run are in each state (the CLI's
        progress bar); an unknown run has none."""
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT state, count(*) FROM cyclone.cyclone_v_steps WHERE run_id = %s GROUP BY state",
                (_uuid(run_id),),
            ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}


def _statement_timeout(seconds: float) -> Callable[[psycopg.Connection[Any]], None]:
    """A pool's ``configure``: each new connection's statements are cancelled
    (SQLSTATE 57014) after ``seconds``."""
    milliseconds = max(1, round(seconds * 1000))

    def configure(conn: psycopg.Connection[Any]) -> None:
        conn.execute("SELECT set_config('statement_timeout', %s, false)", (f"{milliseconds}ms",))

    return configure


def claim_on(
    conn: psycopg.Connection[Any],
    worker: str,
    handlers: Sequence[str] | None = None,
    limit: int = 1,
    lease_ttl: Duration = 30.0,
    workflows: Sequence[str] | None = None,
) -> list[ClaimedStep]:
    """``cyclone.claim`` on a connection of the caller's: the worker's listener
    claims on its LISTEN connection, whose backend has just delivered the
    wake-up (a pooled connection's backend would first have to be woken).
    A value it cannot decode (:func:`load_json`) stays in its step as an
    :class:`Undecodable`, for the step's execution to fail: the claim has
    leased every step it returns."""
    try:
        with _bound_json(conn).cursor(row_factory=_dataclass_row(ClaimedStep)) as cur:
            cur.execute(
                "SELECT step_id, run_id, workflow, node, handler, kind, attempt, max_attempts, lease_generation, "
                "timeout, input, deps, traceparent, previous_span, lease_expiry, item, item_index "
                "FROM cyclone.claim(%s, %s::text[], %s, %s, %s::text[])",
                (worker, None if handlers is None else list(handlers), limit, _interval(lease_ttl),
                 None if workflows is None else list(workflows)),
            )
            return cur.fetchall()
    except psycopg.Error as exc:
        raise from_psycopg(exc) from exc


def renew_on(
    conn: psycopg.Connection[Any],
    worker: str,
    step_ids: Sequence[int],
    lease_generations: Sequence[int],
    lease_ttl: Duration = 30.0,
) -> dict[int, bool | None]:
    """``cyclone.renew_many`` on a connection of the caller's: each step's
    heartbeat, in one statement and one commit. Step id -> True (the lease is
    renewed), False (the step is no longer ``worker``'s to run: its run was
    cancelled or failed, or the step was reclaimed, finished or timed out),
    None (another transaction held the step's row, its completion or a
    cancel; renew_many never waits for one: ask again later). The worker
    sends its heartbeats due together in it, and its listener asks it on its
    LISTEN connection when a notification names runs it holds steps of (a
    notification is only a hint)."""
    if len(step_ids) != len(lease_generations):
        raise errors.InvalidArgument("step_ids and lease_generations differ in length")
    if not step_ids:
        return {}
    try:
        rows = _bound_json(conn).execute(
            "SELECT step_id, renewed FROM cyclone.renew_many(%s, %s::bigint[], %s::bigint[], %s)",
            (worker, _bigint_array(step_ids), _bigint_array(lease_generations), _interval(lease_ttl)),
        ).fetchall()
    except psycopg.Error as exc:
        raise from_psycopg(exc) from exc
    return {int(r[0]): None if r[1] is None else bool(r[1]) for r in rows}


#: The NOTIFY channels the engine sends on (see docs/concepts.md).
WAKEUP_CHANNEL = "cyclone_wakeup"
CANCEL_CHANNEL = "cyclone_cancel"
DISCARD_CHANNEL = "cyclone_discard"


#: The dedicated connection :func:`listen` yields.
ListenConnection = psycopg.Connection[Any]


@contextmanager
def listen(
    dsn: str, channels: Sequence[str], *, application_name: str = "cyclone-listener"
) -> Iterator[ListenConnection]:
    """A dedicated autocommit connection that LISTENs on ``channels``; iterate
    ``conn.notifies(timeout=...)`` to receive. Closed on exit. psycopg errors,
    of the connection or raised while it is in use, are translated as
    :meth:`Client._conn` does."""
    try:
        with psycopg.connect(dsn, autocommit=True, application_name=application_name) as conn:
            _bound_json(conn)
            for channel in channels:
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            yield conn
    except psycopg.Error as exc:
        raise from_psycopg(exc) from exc


def check_reachable(dsn: str, *, connect_timeout: int = 10) -> None:
    """Connect once, so that an unreachable database is reported at once and with
    libpq's reason (a pool would retry in the background, then time out):
    :class:`~cyclone_py.errors.InvalidArgument` for a malformed DSN,
    :class:`~cyclone_py.errors.DatabaseUnavailable` for any other failure."""
    try:
        with psycopg.connect(dsn, connect_timeout=connect_timeout, autocommit=True):
            pass
    except psycopg.ProgrammingError as exc:  # a malformed conninfo string or URL
        raise errors.InvalidArgument(f"bad DSN: {exc}") from None
    except psycopg.Error as exc:
        raise errors.DatabaseUnavailable(str(exc)) from None


def from_psycopg(exc: BaseException) -> errors.CycloneError:
    """Translate a psycopg (or pool) exception into a :class:`~cyclone_py.errors.CycloneError`."""
    if isinstance(exc, errors.CycloneError):
        return exc
    if isinstance(exc, psycopg_pool.PoolTimeout | psycopg_pool.PoolClosed):
        return errors.DatabaseUnavailable(str(exc) or None)
    if isinstance(exc, psycopg.Error):
        sqlstate: str | None = getattr(exc, "sqlstate", None)
        diag: Any = getattr(exc, "diag", None)
        primary = getattr(diag, "message_primary", None) if diag is not None else None
        message = primary or str(exc).strip() or None
        transient = isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
        return errors.from_sqlstate(sqlstate, message, transient=transient)
    return errors.CycloneError(str(exc) or type(exc).__name__)


# -- scratch databases (the test harness: cyclone_py.testing.Template) ----------
# Not engine calls: the server-level statements that copy a deployed database
# for one test and drop it afterwards.


def _admin(dsn: str) -> psycopg.Connection[tuple[Any, ...]]:
    try:
        return psycopg.connect(dsn, autocommit=True, connect_timeout=10)
    except psycopg.ProgrammingError as exc:
        raise errors.InvalidArgument(f"bad DSN: {exc}") from None
    except psycopg.Error as exc:
        raise errors.DatabaseUnavailable(str(exc)) from None


def _on_server(call: Callable[[], T]) -> T:
    """A server-level call of db.py, its driver errors translated."""
    try:
        return call()
    except psycopg.ProgrammingError as exc:
        if getattr(exc, "sqlstate", None) is None:  # the DSN itself
            raise errors.InvalidArgument(f"bad DSN: {exc}") from None
        raise from_psycopg(exc) from None
    except psycopg.Error as exc:
        raise from_psycopg(exc) from None


def can_create_databases(dsn: str) -> tuple[str, bool]:
    """(the role ``dsn`` connects as, whether it may ``CREATE DATABASE``)."""
    with _admin(dsn) as conn:
        row = conn.execute(
            "SELECT current_user::text, rolcreatedb OR rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user"
        ).fetchone()
    assert row is not None
    return str(row[0]), bool(row[1])


def create_database(dsn: str, name: str, *, template: str | None = None) -> str:
    """``CREATE DATABASE name [TEMPLATE template]`` on ``dsn``'s server; the new database's DSN."""
    return _on_server(lambda: db.create_database(dsn, name, template=template))


def close_database(dsn: str, name: str) -> None:
    """Forbid new connections to ``name`` (a template must be idle to be copied)."""
    _on_server(lambda: db.close_database(dsn, name))


def drop_database(dsn: str, name: str) -> None:
    """``DROP DATABASE IF EXISTS name WITH (FORCE)`` on ``dsn``'s server."""
    _on_server(lambda: db.drop_database(dsn, name))
