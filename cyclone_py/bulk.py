"""Operator actions over many dead letters at once: choose them, then retry each with one call.

:func:`dead_letters` reads the dead-letter queue page by page (``Client.dead_letters``, a keyset over
``cyclone_v_dlq``) by workflow, error kind and age, and folds a map's discarded items into their map:
an item is never retried alone (``cyclone.retry`` reopens a map with its items), so a map whose items
are dead letters is one :class:`Target`; :func:`chosen` makes targets of steps a person picked (the
console's checkboxes). :func:`retry_each` calls ``Client.retry`` once a target and collects each refusal
(a step retried meanwhile, a cancelled run) instead of stopping at it. Every rule is the engine's: this
module only chooses and counts. ``cyclone dlq retry`` and the console's "Retry selected" are its faces:
one loop for both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from cyclone_py import errors
from cyclone_py.client import PAGE_LIMIT, Client, Cursor

__all__ = ["Retried", "Target", "chosen", "dead_letters", "retry_each", "runs_of"]

#: Past every step id: a cursor at ``(t, LAST_ID)`` starts a page at the dead letters discarded at ``t`` or before.
LAST_ID = 2**63 - 1


@dataclass(frozen=True)
class Target:
    """A discarded step to retry: a run's node (a map's node for its items). ``workflow``,
    ``error_kind`` and ``discarded_at`` are what :func:`dead_letters` read (None for a step
    :func:`chosen` names: a person picked it)."""

    run_id: UUID
    node: str
    workflow: str | None = None
    error_kind: str | None = None
    discarded_at: datetime | None = None
    #: Dead letters among its map's items that chose it (0: the step itself was chosen).
    items: int = 0


@dataclass(frozen=True)
class Retried:
    """What retrying a :class:`Target` did: reopened, or refused with the engine's error."""

    target: Target
    error: errors.CycloneError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def dead_letters(client: Client, *, workflow: str | None = None, error_kind: str | None = None,
                 discarded_before: datetime | None = None) -> list[Target]:
    """The dead letters of ``workflow`` with ``error_kind`` discarded at ``discarded_before`` or
    earlier (each None: any), oldest first, as the steps to retry: one :class:`Target` a step, one a
    map for its discarded items (and itself)."""
    after: Cursor | None = None if discarded_before is None else (discarded_before, LAST_ID)
    rows = []
    while True:
        page = client.dead_letters(workflow=workflow, error_kind=error_kind, after=after, limit=PAGE_LIMIT)
        rows.extend(page.rows)
        if page.next is None:
            break
        after = page.next
    targets: dict[tuple[UUID, str], Target] = {}
    for row in reversed(rows):  # oldest first
        key = (row.run_id, row.node)
        seen = targets.get(key)
        item = row.item_index is not None
        if seen is None:
            targets[key] = Target(row.run_id, row.node, row.workflow, row.error_kind, row.completed_at, int(item))
        elif item:
            targets[key] = Target(seen.run_id, seen.node, seen.workflow, seen.error_kind, seen.discarded_at,
                                  seen.items + 1)
    return list(targets.values())


def chosen(steps: Iterable[tuple[UUID, str]]) -> list[Target]:
    """The steps a person picked, as (run, node), each once in the order given: two of a map's items
    (their node is the map's) are one retry of their map."""
    return [Target(run_id, node) for run_id, node in dict.fromkeys(steps)]


def runs_of(targets: Iterable[Target]) -> int:
    """How many runs ``targets`` are steps of."""
    return len({t.run_id for t in targets})


def retry_each(client: Client, targets: Sequence[Target], *, additional_attempts: int = 0,
               reason: str | None = None) -> list[Retried]:
    """``Client.retry`` of each target, in order, each in its own transaction: a refusal (not found,
    wrong state: retried meanwhile, a cancelled run) is kept with its target and the next one is
    tried. A database that stops answering, or a role without the grant, ends it at once: the same
    error would refuse every other."""
    done = []
    for target in targets:
        try:
            client.retry(target.run_id, target.node, additional_attempts, reason)
        except (errors.DatabaseUnavailable, errors.PermissionDenied):
            raise
        except errors.CycloneError as exc:
            done.append(Retried(target, exc))
        else:
            done.append(Retried(target))
    return done
