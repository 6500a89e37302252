"""Cyclone's exceptions, and the SQLSTATE -> exception mapping.

Each class's docstring is its default message. The SQL engine reports bad input
and refused transitions with standard SQLSTATEs (SPEC section 5-9):

==========  =====================
SQLSTATE    exception
==========  =====================
``P0002``   :class:`NotFound`
``55000``   :class:`WrongState`
``22023``   :class:`InvalidArgument`
``22004``   :class:`InvalidArgument`
``22xxx``   :class:`InvalidArgument` (any data exception: a value PostgreSQL cannot take)
``42501``   :class:`PermissionDenied`
==========  =====================

A value read from the database that the client does not decode (JSON nested
too deeply: ``client.MAX_JSON_DEPTH``) is :class:`UndecodableValue`. A lost
or unreachable database is :class:`DatabaseUnavailable`; any other
database error is a plain :class:`CycloneError` carrying its SQLSTATE.
:func:`from_sqlstate` makes the exception; the client, the only module that
talks to the driver, gives it the SQLSTATE (``client.from_psycopg``).

Handlers use :class:`Permanent` (discard at once, no more attempts) and see
:class:`Cancelled` when their step was cancelled. The worker's error hook is
given a :class:`StepFailed` (or one of its subclasses, such as
:class:`ReclaimLimitExceeded`) for every discard it observes.
"""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

__all__ = [
    "Cancelled",
    "ChildFailed",
    "CycloneError",
    "DatabaseUnavailable",
    "DeadlineExceeded",
    "EngineTooOld",
    "InvalidArgument",
    "MaxWaitExceeded",
    "NotFound",
    "Permanent",
    "PermissionDenied",
    "ReclaimLimitExceeded",
    "RunStuck",
    "Snooze",
    "StepFailed",
    "StepTimedOut",
    "UndecodableValue",
    "WrongState",
    "from_sqlstate",
    "step_failed",
]


class CycloneError(Exception):
    """Cyclone error."""

    def __init__(self, message: str | None = None, *, sqlstate: str | None = None) -> None:
        self.message = message or (self.__doc__ or type(self).__name__).strip()
        self.sqlstate = sqlstate
        super().__init__(self.message)


class NotFound(CycloneError):
    """Not found (no such workflow, run or node)."""


class WrongState(CycloneError):
    """The object is not in a state this action applies to."""


class InvalidArgument(CycloneError):
    """Invalid argument."""


class EngineTooOld(CycloneError):
    """The database holds an older release of the engine than this runtime needs: deploy the schema first."""


class PermissionDenied(CycloneError):
    """Permission denied: this database role may not call that function."""


class DatabaseUnavailable(CycloneError):
    """The database is unreachable, the connection was lost, or the transaction was
    rolled back for a transient reason (deadlock, serialisation failure, timeout)."""


class UndecodableValue(CycloneError):
    """A value read from the database cannot be decoded (JSON nested too deeply).

    The read fails with a message naming the run or step, the column and why;
    nothing else is lost. (A worker that claims a step whose input or deps it
    cannot decode fails that step as ``permanent`` instead.)"""


class RunStuck(CycloneError):
    """The run cannot make progress without moving time or sending a signal."""


class Cancelled(CycloneError):
    """The step was cancelled (lease lost, run cancelled, deadline, timeout or shutdown)."""

    def __init__(self, message: str | None = None, *, reason: str | None = None) -> None:
        super().__init__(message or (f"step cancelled: {reason}" if reason else None))
        self.reason = reason


class Permanent(Exception):
    """Permanent failure: the step is discarded at once, without further attempts.

    Raise it from a handler when another attempt would fail the same way
    (invalid input, a 4xx answer, a business rule). ``Permanent(exc)`` wraps
    another exception; its message becomes the step's ``error``.
    """

    def __init__(self, error: BaseException | str | None = None) -> None:
        self.error = error
        message = str(error) if error is not None else (self.__doc__ or "").splitlines()[0]
        super().__init__(message)
        if isinstance(error, BaseException):
            self.__cause__ = error


class Snooze(Exception):
    """Not now: hand the step back, to be run again after ``delay``.

    Raise it from a handler when what the step needs is not ready yet (a
    file not uploaded, a rate-limited API that said "retry after"): the step
    is available again ``delay`` from now (a timedelta, or seconds; 0 to 365
    days), the attempt is not charged and no error is recorded
    (``cyclone.snooze``, SPEC 16). Its ``snoozes`` count grows by one.
    """

    def __init__(self, delay: timedelta | float) -> None:
        self.delay = delay
        super().__init__(f"snoozed for {delay}")


class StepFailed(CycloneError):
    """A step was discarded (dead-lettered)."""

    def __init__(
        self,
        message: str | None = None,
        *,
        step_id: int | None = None,
        run_id: UUID | None = None,
        node: str | None = None,
        workflow: str | None = None,
        error_kind: str | None = None,
        error: str | None = None,
    ) -> None:
        if message is None and node is not None:
            message = f"step {node!r} (id {step_id}) of run {run_id} discarded ({error_kind}): {error}"
        super().__init__(message)
        self.step_id = step_id
        self.run_id = run_id
        self.node = node
        self.workflow = workflow
        self.error_kind = error_kind
        self.error = error


class ReclaimLimitExceeded(StepFailed):
    """A step's lease expired more often than max_reclaims allows; it was discarded."""


class StepTimedOut(StepFailed):
    """A step ran past its timeout on its last attempt and was discarded."""


class DeadlineExceeded(StepFailed):
    """The run's deadline passed; the step was discarded."""


class MaxWaitExceeded(StepFailed):
    """A wait or child node waited longer than its max_wait; it was discarded."""


class ChildFailed(StepFailed):
    """A child node's run failed or was cancelled; the node was discarded."""


_KIND_CLASSES: dict[str, type[StepFailed]] = {
    "reclaim_limit": ReclaimLimitExceeded,
    "timeout": StepTimedOut,
    "deadline": DeadlineExceeded,
    "max_wait": MaxWaitExceeded,
    "child_failed": ChildFailed,
}


def step_failed(
    *,
    step_id: int | None,
    run_id: UUID | str | None,
    node: str | None,
    workflow: str | None,
    error_kind: str | None,
    error: str | None,
) -> StepFailed:
    """The :class:`StepFailed` (subclass chosen by ``error_kind``) describing a discard."""
    cls = _KIND_CLASSES.get(error_kind or "", StepFailed)
    rid = UUID(str(run_id)) if run_id is not None else None
    return cls(step_id=step_id, run_id=rid, node=node, workflow=workflow, error_kind=error_kind, error=error)


_SQLSTATE_CLASSES: dict[str, type[CycloneError]] = {
    "P0002": NotFound,
    "55000": WrongState,
    "22023": InvalidArgument,
    "22004": InvalidArgument,
    "22P02": InvalidArgument,  # invalid text representation (a bad uuid, interval, json)
    "22007": InvalidArgument,  # invalid datetime format
    "22008": InvalidArgument,  # datetime field overflow
    "42501": PermissionDenied,
}


def from_sqlstate(sqlstate: str | None, message: str | None, *, transient: bool = False) -> CycloneError:
    """The exception for a database error: the class of its SQLSTATE (the table
    above; any other of class 22 is :class:`InvalidArgument`); else
    :class:`DatabaseUnavailable` when ``transient`` (a lost connection, a
    shutdown, too many clients, a deadlock, a serialisation failure, a
    statement timeout: nothing was done, the call may be retried); else a plain
    :class:`CycloneError`."""
    cls = _SQLSTATE_CLASSES.get(sqlstate or "")
    if cls is None and (sqlstate or "").startswith("22"):
        # Class 22, data exception: a value the database cannot take (a NUL in
        # JSON text, a number out of range), refused as bad input like 22023.
        cls = InvalidArgument
    if cls is not None:
        return cls(message, sqlstate=sqlstate)
    if transient:
        return DatabaseUnavailable(message, sqlstate=sqlstate)
    return CycloneError(message, sqlstate=sqlstate)
