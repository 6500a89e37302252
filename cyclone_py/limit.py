"""Limit declarations: how much of some work runs at once and how fast it starts.

A :class:`Limit` is plain data that an :class:`~cyclone_py.workflow.App`
holds and its worker registers at start with ``cyclone.define_limit`` (SPEC
12), before the app's workflows (``define_workflow`` refuses a limit it does
not know)::

    stripe = Limit("stripe", concurrency=5)
    per_tenant = Limit("per_tenant", concurrency=2)
    mail = Limit("mail", rate=100, per=timedelta(minutes=1))

    Workflow("charge", limits=[stripe, per_tenant.by("tenant.id")])

A workflow or a task node takes a limit as is (one bucket, ``''``) or with a
key (:meth:`Limit.by`: a dot path into the run input whose value names the
bucket). Nothing is checked here but the types: the values (positive, a rate
with its period, at least one bound) and the key's path are the SQL's to
refuse, at registration, with a message that names them. Nothing here talks
to the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from cyclone_py.durations import Duration, to_timedelta

__all__ = ["Limit", "LimitUse"]


def _optional_int(owner: str, label: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{owner}: {label} is an int, got {type(value).__name__}")
    return value


@dataclass(frozen=True, init=False)
class Limit:
    """At most ``concurrency`` running steps per bucket, and/or at most ``rate``
    claims per bucket in any window of length ``per`` (a ``timedelta`` or
    seconds). Two limits are equal when their name and values are."""

    name: str
    concurrency: int | None
    rate: int | None
    per: timedelta | None

    def __init__(
        self,
        name: str,
        concurrency: int | None = None,
        *,
        rate: int | None = None,
        per: Duration | None = None,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"a limit's name is a str, got {type(name).__name__}")
        if not name:
            raise ValueError("a limit needs a name")
        owner = f"limit {name!r}"
        if per is not None and (isinstance(per, bool) or not isinstance(per, timedelta | int | float)):
            raise TypeError(f"{owner}: per is a timedelta or seconds, got {type(per).__name__}")
        setattr_ = object.__setattr__
        setattr_(self, "name", name)
        setattr_(self, "concurrency", _optional_int(owner, "concurrency", concurrency))
        setattr_(self, "rate", _optional_int(owner, "rate", rate))
        setattr_(self, "per", None if per is None else to_timedelta(per))

    def __repr__(self) -> str:
        given = [f"concurrency={self.concurrency}"] if self.concurrency is not None else []
        if self.rate is not None:
            given.append(f"rate={self.rate}")
        if self.per is not None:
            given.append(f"per={self.per!r}")
        return f"Limit({', '.join([repr(self.name), *given])})"

    def by(self, key: str) -> LimitUse:
        """This limit with one bucket per value of ``key``, a dot path into the
        run input (``"tenant.id"``; a missing or null value is the bucket ``''``)."""
        if not isinstance(key, str):
            raise TypeError(f"limit {self.name!r}: the key is a dot path (a str), got {type(key).__name__}")
        if not key:
            raise ValueError(f"limit {self.name!r}: the key is a dot path into the input such as 'tenant.id'")
        return LimitUse(self, key)

    def use(self) -> LimitUse:
        """This limit without a key: its one bucket ``''``."""
        return LimitUse(self, None)

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of :meth:`cyclone_py.client.Client.define_limit`
        (``cyclone.define_limit``'s parameters) that register this limit."""
        return {"name": self.name, "concurrency": self.concurrency, "rate": self.rate, "period": self.per}


@dataclass(frozen=True)
class LimitUse:
    """A limit as a workflow or a task node takes it: with a key, or without."""

    limit: Limit
    key: str | None = None

    @property
    def name(self) -> str:
        return self.limit.name

    def to_json(self) -> dict[str, Any]:
        """The entry of a definition's ``"limits"`` (SPEC 12)."""
        return {"name": self.limit.name} if self.key is None else {"name": self.limit.name, "key": self.key}


def as_use(value: object) -> LimitUse:
    """A :class:`LimitUse` for a ``Limit`` or a ``limit.by(key)``."""
    if isinstance(value, LimitUse):
        return value
    if isinstance(value, Limit):
        return value.use()
    raise TypeError(f"expected a cyclone Limit or limit.by(key), got {value!r}")
