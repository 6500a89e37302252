"""Times, durations and ``explain_step``'s answers as the faces print them:
the CLI, ``cyclone top`` and the console.

One function per kind of value; where the faces differ, a parameter says how
(the CLI marks UTC with ``Z`` and prints ``-`` for no value; the console's
pages say UTC in their headings and leave a cell empty). A face picks its
arguments once, where it prints, and never formats a time, a duration or a
step's attempts (:func:`fmt_attempts`) of its own, nor words a reason of
``explain_step`` (:func:`explain_text`, the one wording of ``cyclone
explain``, ``cyclone run`` and the console's run page).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from uuid import UUID

from cyclone_py.durations import Duration, to_seconds

__all__ = ["CLAIM_GRACE", "explain_text", "fmt_attempts", "fmt_duration", "fmt_interval", "fmt_local", "fmt_step",
           "fmt_time"]


def fmt_time(value: datetime | None, *, empty: str = "-", zulu: bool = True) -> str:
    """A moment in UTC, to the second: ``2025-01-31 12:00:05Z`` (without the ``Z``
    unless ``zulu``); ``empty`` for none."""
    if value is None:
        return empty
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ" if zulu else "%Y-%m-%d %H:%M:%S")


def fmt_local(value: datetime | None, *, weekday: bool = False, empty: str = "-") -> str:
    """A moment on its own offset, to the second: ``2025-01-31 04:00:05+01:00``
    (``Fri 2025-01-31 ...`` with ``weekday``); ``empty`` for none."""
    if value is None:
        return empty
    text = value.isoformat(sep=" ", timespec="seconds")
    return f"{value.strftime('%a')} {text}" if weekday else text


def fmt_duration(value: Duration | None, *, empty: str = "-", full: bool = False) -> str:
    """A duration (a timedelta, or seconds); ``empty`` for none.

    At a glance by default: at most two units, ``0.42s``, ``12s``, ``4m05s``,
    ``2h10m``, ``3d04h`` (a negative one as zero). ``full``: every unit from
    the largest down to whole seconds, signed: ``3m 20s``, ``1d 0h 0m 5s``,
    ``-45s`` (the console's time left and periods).
    """
    if value is None:
        return empty
    if full:
        return _full(int(to_seconds(value)))
    seconds = max(to_seconds(value), 0.0)
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"


def _full(seconds: int) -> str:
    sign = "-" if seconds < 0 else ""
    days, rest = divmod(abs(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days}d"] if days else []
    if hours or days:
        parts.append(f"{hours}h")
    if minutes or hours or days:
        parts.append(f"{minutes}m")
    parts.append(f"{secs}s")
    return sign + " ".join(parts)


def fmt_interval(value: timedelta | None, *, empty: str = "-") -> str:
    """A period as the CLI's duration options spell it, exactly: ``1m``, ``30s``,
    ``1h30m``, ``500ms`` (what ``cyclone limits set --per`` takes back); ``empty``
    for none."""
    if value is None:
        return empty
    micros = value // timedelta(microseconds=1)
    if micros <= 0:
        return f"{value.total_seconds():g}s"
    parts = []
    for unit, size in (("d", 86_400_000_000), ("h", 3_600_000_000), ("m", 60_000_000), ("s", 1_000_000),
                       ("ms", 1_000)):
        n, micros = divmod(micros, size)
        if n:
            parts.append(f"{n}{unit}")
    return "".join(parts) or f"{value.total_seconds():g}s"


def fmt_step(node: str, item_index: int | None) -> str:
    """A step as the faces name it: its node, and a map item's index after it (``resize[3]``, SPEC 16)."""
    return node if item_index is None else f"{node}[{item_index}]"


def fmt_attempts(attempt: int, max_attempts: int) -> str:
    """A step's attempt of its maximum: ``2/5``. Past the maximum, ``6 of 5 (reopened)``: only an
    operator's retry without additional attempts (``retry_all``, or ``retry`` with 0) gives a step that
    used all its attempts one more execution, and the engine keeps its ``max_attempts``; ``6/5`` read like
    a bug."""
    if attempt > max_attempts:
        return f"{attempt} of {max_attempts} (reopened)"
    return f"{attempt}/{max_attempts}"


# -- explain_step in words ----------------------------------------------------------

#: A claimable step due this long (engine clock) and still not claimed: no worker is claiming it.
CLAIM_GRACE = timedelta(seconds=5)


class Explained(Protocol):
    """What :func:`explain_text` reads of an ``explain_step`` answer
    (``cyclone_py.client.Explanation``; this layer is below the client)."""

    @property
    def reason(self) -> str: ...
    @property
    def deps(self) -> Sequence[str]: ...
    @property
    def signal(self) -> str | None: ...
    @property
    def child_run_id(self) -> UUID | None: ...
    @property
    def run_state(self) -> str | None: ...
    @property
    def until(self) -> datetime | None: ...
    @property
    def limit(self) -> str | None: ...
    @property
    def bucket(self) -> str | None: ...
    @property
    def running(self) -> int | None: ...
    @property
    def max(self) -> int | None: ...
    @property
    def next_slot_at(self) -> datetime | None: ...
    @property
    def workers(self) -> int | None: ...
    @property
    def key(self) -> str | None: ...
    @property
    def run_id(self) -> UUID | None: ...
    @property
    def raw(self) -> Mapping[str, Any]: ...


class ExplainedStep(Protocol):
    """What :func:`explain_text` reads of the step's row, when it has one (the
    client's ``StepRow`` or ``StepDetail``): who holds it, what it retries,
    when it was due, its handler."""

    @property
    def lease_owner(self) -> str | None: ...
    @property
    def attempt(self) -> int: ...
    @property
    def error_kind(self) -> str | None: ...
    @property
    def scheduled_at(self) -> datetime | None: ...
    @property
    def handler(self) -> str: ...


def _at(when: datetime | None, now: datetime | None) -> str:
    if when is None:
        return "-"
    ahead = "" if now is None or when <= now else f" (in {fmt_duration(when - now)})"
    return fmt_time(when) + ahead


def explain_text(e: Explained, step: ExplainedStep | None = None, *, now: datetime | None = None,
                 workflow: str | None = None, commands: bool = True, grace: timedelta = CLAIM_GRACE) -> str:
    """An ``explain_step`` answer in words. The reason is SQL's; this only says it
    (with the step's row, when given, for who holds it, what it retries and
    since when it is claimable; ``workflow``, the step's, names it then).
    ``commands``: name the CLI command that acts on it (the CLI); the console,
    which offers the action on the same page, leaves it out. A claimable step
    due for ``grace`` and not claimed is said to be so."""
    reason = e.reason
    if reason == "running":
        owner = step.lease_owner if step is not None else None
        return "running" + (f" (worker {owner})" if owner else "")
    if reason == "discarded":
        return "discarded: a dead letter" + (" (cyclone retry RUN_ID NODE reopens it)" if commands else "")
    if reason in ("completed", "cancelled"):
        return reason
    if reason == "skipped":
        return "skipped: its condition did not hold, or a dependency was skipped"
    if reason == "sleeping":
        return f"sleeping until {_at(e.until, now)}"
    if reason == "waiting_items":
        return f"waiting for its items: {e.raw.get('done', 0):,} of {e.raw.get('total', 0):,} done"
    if reason == "waiting_signal":
        return f"waiting for signal {e.signal!r}"
    if reason == "waiting_event":  # SPEC 17: the key its template made
        key = e.key or ""
        return f"waits for an event of key {key!r}" + (f" (cyclone events emit {shlex.quote(key)})" if commands else "")
    if reason == "waiting_run":
        return f"waits for run {e.run_id or '-'} to end"
    if reason == "waiting_child":
        return "waiting for its child run" + (f" {e.child_run_id}" if e.child_run_id else "")
    if reason == "pending_deps":
        noun = "dependency" if len(e.deps) == 1 else "dependencies"
        return f"waiting for {noun} {', '.join(e.deps)}"
    if reason == "run_terminal":
        return f"its run is {e.run_state}"
    if reason == "run_paused":
        return "run paused" + (" (cyclone resume RUN_ID)" if commands else "")
    if reason == "not_due":
        if step is not None and step.attempt > 0 and step.error_kind is not None:
            return (f"backing off after attempt {step.attempt} failed ({step.error_kind}): "
                    f"not due until {_at(e.until, now)}")
        return f"not due until {_at(e.until, now)}"
    if reason == "concurrency_limit":
        return f"held back: bucket {e.bucket!r} of limit {e.limit} is full ({e.running}/{e.max} running)"
    if reason == "rate_limit":
        bucket = "" if not e.bucket else f" (bucket {e.bucket!r})"
        return f"rate limit {e.limit}{bucket}: next slot at {_at(e.next_slot_at, now)}"
    if reason == "claimable":
        due = step.scheduled_at if step is not None else None
        if step is not None and due is not None and now is not None and now - due >= grace:
            since = f"claimable since {fmt_time(due)} ({fmt_duration(now - due)} ago) but not claimed"
            # The registry (explain_step's workers) says whether anyone would claim it: 0, nobody alive does;
            # None, a database without the registry, where the wait itself is the only sign.
            if e.workers:  # registered workers claim it: they are busy, or held up
                noun = "worker claims" if e.workers == 1 else "workers claim"
                return f"{since}, though {e.workers} live {noun} its handler {step.handler!r}: busy?"
            return f"{since}: no worker is claiming handler {step.handler!r} of workflow {workflow!r}"
        return "claimable: the next worker that claims its handler takes it"
    return reason  # a reason this version does not word yet
