"""The Python worker of the conformance kit, broken on purpose: ``python broken_worker.py DEFECT``.

Each defect breaks one rule of the worker protocol (docs/sql-reference.md, "Writing a worker"), and the
kit's scenario for that rule must fail against it (tests/test_conformance.py). The worker is otherwise the
real one, on the kit's settings, with ``cyclone_py.conformance_app``'s handlers; the database comes from
``CYCLONE_DSN``, as the kit gives it.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from cyclone_py import errors
from cyclone_py.client import Client
from cyclone_py.conformance_app import app
from cyclone_py.worker import Worker


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


def _no_deps(self: Worker, shard: Any, steps: Any) -> None:
    _start_batch(self, shard, [dataclasses.replace(step, deps={}) for step in steps])


def _no_item(self: Worker, shard: Any, steps: Any) -> None:
    _start_batch(self, shard, [dataclasses.replace(step, item=None, item_index=None) for step in steps])


def _keep_running(self: Worker, active: Any, reason: str, shard: Any) -> None:
    active.lost = True  # and the handler is never told


def _exit_on_lost_lease(self: Worker, active: Any, reason: str, shard: Any) -> None:
    os._exit(3)


def _exit_on_refusal(self: Client, *args: Any, **kwargs: Any) -> Any:
    results = _complete_many(self, *args, **kwargs)
    if not all(r.accepted for r in results):
        os._exit(3)
    return results


_start_batch = Worker._start_batch
_complete_many = Client.complete_many
#: The worker's own retry delay, None: the engine's backoff.
BACKOFF: Callable[[int], timedelta] | None = None

def _patch(*changes: tuple[Any, str, Any]) -> Callable[[], None]:
    def apply() -> None:
        for owner, name, value in changes:
            setattr(owner, name, value)

    return apply


DEFECTS: dict[str, Callable[[], None]] = {
    # registry: never registers
    "no_registry": _patch((Worker, "_announce", _nothing)),
    # results, signal: hands handlers no dependency outputs
    "no_deps": _patch((Worker, "_start_batch", _no_deps)),
    # retries: retries at once, ignoring the engine's backoff
    "no_backoff": _patch((sys.modules[__name__], "BACKOFF", lambda attempt: timedelta(0))),
    # permanent: reports a permanent failure as an ordinary error
    "no_permanent": _patch((errors, "Permanent", type("NotPermanent", (Exception,), {}))),
    # heartbeats: never renews a lease
    "no_heartbeat": _patch((Worker, "_heartbeat", _nothing)),
    # timeout: neither stops a handler at its timeout nor ticks
    "no_timeout": _patch((Worker, "_time_out", _nothing), (Worker, "_tick", _nothing)),
    # cancel: a handler whose lease is refused keeps running
    "ignores_cancel": _patch((Worker, "_lose", _keep_running)),
    # deadline, sigkill: never ticks
    "no_tick": _patch((Worker, "_tick", _nothing)),
    # sigstop: exits when the engine refuses its lease or its result
    "dies_on_refusal": _patch((Worker, "_lose", _exit_on_lost_lease), (Client, "complete_many", _exit_on_refusal)),
    # sigterm: leaves the steps it abandons to their leases
    "no_release": _patch((Worker, "_release", lambda self, dropped: 0)),
    # map: hands a map's items no item (nor their index)
    "no_item": _patch((Worker, "_start_batch", _no_item)),
    # snooze: reports a snooze as an ordinary error
    "no_snooze": _patch((errors, "Snooze", type("NotSnooze", (Exception,), {"__init__": lambda self, d: None}))),
}

if __name__ == "__main__":
    DEFECTS[sys.argv[1]]()
    Worker(app, concurrency=2, lease_ttl=2, poll_interval=0.2, shutdown_grace=1, backoff=BACKOFF).run()
