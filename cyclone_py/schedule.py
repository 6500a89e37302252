"""Schedule declarations: a cron, a time zone and a workflow, as plain data.

A :class:`Schedule` is what an :class:`~cyclone_py.workflow.App` declares and
its worker registers at start with ``cyclone.schedule(...)`` (SPEC 13)::

    Schedule("nightly-report", "0 3 * * *", report, input={"format": "pdf"},
             timezone="Europe/Berlin", overlap="skip", catchup=timedelta(hours=1))

Nothing is checked here but the shape of the arguments: the cron, the time
zone, the overlap policy, the catch-up and the input are the SQL's to refuse,
at registration, with a message that names the field. Nothing here talks to
the database.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from cyclone_py.durations import Duration, to_timedelta

__all__ = ["Schedule"]


class _Named(Protocol):
    @property
    def name(self) -> str: ...


@dataclass(frozen=True, init=False)
class Schedule:
    """Submit ``workflow`` at every fire time of ``cron`` in ``timezone``.

    ``workflow`` is a :class:`~cyclone_py.workflow.Workflow` or its name; the
    App that declares the schedule must declare that workflow. ``input`` is
    the runs' input (``scheduled_for``, the slot in UTC, is added by the
    engine); ``overlap`` is ``skip``, ``allow`` or ``cancel_other``;
    ``catchup`` and ``deadline`` are a ``timedelta`` or seconds.
    """

    name: str
    cron: str
    workflow: str
    input: Mapping[str, Any]
    timezone: str
    overlap: str
    catchup: timedelta
    deadline: timedelta | None
    #: The Workflow object given (None for a name): the App checks it is its own.
    workflow_object: _Named | None = field(compare=False, repr=False)

    def __init__(
        self,
        name: str,
        cron: str,
        workflow: _Named | str,
        *,
        input: Mapping[str, Any] | None = None,
        timezone: str = "UTC",
        overlap: str = "skip",
        catchup: Duration = timedelta(hours=1),
        deadline: Duration | None = None,
    ) -> None:
        for label, value in (("name", name), ("cron", cron), ("timezone", timezone), ("overlap", overlap)):
            if not isinstance(value, str):
                raise TypeError(f"a schedule's {label} is a str, got {type(value).__name__}")
        if not name:
            raise ValueError("a schedule needs a name")
        workflow_name = workflow if isinstance(workflow, str) else getattr(workflow, "name", None)
        if not isinstance(workflow_name, str) or not workflow_name:
            raise TypeError(f"schedule {name!r}: workflow is a Workflow or its name, got {workflow!r}")
        if input is not None and not isinstance(input, Mapping):
            raise TypeError(f"schedule {name!r}: input is a mapping (a JSON object), got {type(input).__name__}")
        setattr_ = object.__setattr__
        setattr_(self, "name", name)
        setattr_(self, "cron", cron)
        setattr_(self, "workflow", workflow_name)
        setattr_(self, "input", dict(input or {}))
        setattr_(self, "timezone", timezone)
        setattr_(self, "overlap", overlap)
        setattr_(self, "catchup", to_timedelta(catchup))
        setattr_(self, "deadline", None if deadline is None else to_timedelta(deadline))
        setattr_(self, "workflow_object", None if isinstance(workflow, str) else workflow)

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of :meth:`cyclone_py.client.Client.schedule`
        (``cyclone.schedule``'s parameters) that register this schedule."""
        return {
            "name": self.name,
            "cron": self.cron,
            "workflow": self.workflow,
            "input": dict(self.input),
            "timezone": self.timezone,
            "overlap": self.overlap,
            "catchup": self.catchup,
            "deadline": self.deadline,
        }
