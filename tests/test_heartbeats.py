"""Heartbeats due together go in one call (issue 32): renew_many, and the
worker's coalescing of the heartbeats of one database that fall due within
HEARTBEAT_WINDOW of each other. Each step keeps its own schedule (SPEC 6)."""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
import pytest
from helpers import start, step_of, terminal, wait_for

from cyclone_py import Worker, Workflow
from cyclone_py.client import Client
from cyclone_py.context import StepContext


def _claimed(client: Client, n: int) -> list[Any]:
    wf = Workflow("beats")

    @wf.step()
    def job(ctx: StepContext) -> Any:
        return None

    client.define_workflow(wf.name, wf.definition())
    client.submit_many(wf, [{} for _ in range(n)])
    return sorted(client.claim("w", None, n, 60.0), key=lambda s: s.step_id)


def test_renew_many_skips_a_row_another_transaction_holds_and_waits_for_nothing(dsn: str, client: Client) -> None:
    a, b = _claimed(client, 2)
    with psycopg.connect(dsn) as holder:  # a transaction holding b's row (as a completion would)
        holder.execute("SELECT 1 FROM cyclone.cyclone_steps WHERE id = %s FOR UPDATE", (b.step_id,))
        began = time.monotonic()
        answers = client.renew_many("w", [a.step_id, b.step_id], [a.lease_generation, b.lease_generation])
        assert time.monotonic() - began < 2  # renew alone would wait for the holder's commit
        assert answers == {a.step_id: True, b.step_id: None}
        holder.rollback()
    assert client.renew_many("w", [b.step_id], [b.lease_generation]) == {b.step_id: True}


def test_a_worker_renews_the_heartbeats_due_together_in_one_call(
    dsn: str, client: Client, workers: list[Worker], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []  # steps per heartbeat call, renew or renew_many
    lock = threading.Lock()
    renew, renew_many = Client.renew, Client.renew_many

    def counted_renew(self: Client, *args: Any, **kw: Any) -> bool:
        with lock:
            calls.append(1)
        return renew(self, *args, **kw)

    def counted_renew_many(self: Client, worker: str, step_ids: Any, *args: Any, **kw: Any) -> Any:
        with lock:
            calls.append(len(step_ids))
        return renew_many(self, worker, step_ids, *args, **kw)

    monkeypatch.setattr(Client, "renew", counted_renew)
    monkeypatch.setattr(Client, "renew_many", counted_renew_many)

    wf = Workflow("long")

    @wf.step()
    def nap(ctx: StepContext) -> Any:
        time.sleep(2.5)  # five heartbeats or so at a 1.5 s lease
        return None

    start(workers, wf, dsn, concurrency=20, lease_ttl=1.5)
    runs = client.submit_many(wf, [{} for _ in range(20)])
    for run_id in runs:
        assert wait_for(lambda r=run_id: terminal(client, r), what="run to finish").state == "completed"
    renewed, sent = sum(calls), len(calls)
    assert renewed >= 60, calls  # every step renewed its lease several times
    assert sent <= renewed * 0.6, calls  # one call carried several steps' heartbeats
    for run_id in runs:  # and no lease was lost on the way: each ran once
        s = step_of(client, run_id, "nap")
        assert (s.attempt, s.reclaims) == (1, 0)
