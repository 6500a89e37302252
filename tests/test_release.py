"""SPEC 18 in the Python runtime: claim's rows say when the lease runs out, a
lease can be handed back (``Client.release``), and a worker that shuts down
hands back the leases of the steps it will not finish."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any

import pytest
from helpers import assert_consistent, start, step_of, wait_for

from cyclone_py import StepContext, Worker, Workflow
from cyclone_py.client import Client


def test_claim_rows_carry_the_lease_expiry_and_release_hands_the_lease_back(client: Client) -> None:
    wf = Workflow("handed_back")

    @wf.step()
    def work(ctx: StepContext) -> Any:
        return None

    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf, {})
    before = client.now()
    (step,) = client.claim("w1", ["work"], 1, timedelta(seconds=45))
    after = client.now()
    assert step.lease_expiry is not None
    assert before + timedelta(seconds=45) <= step.lease_expiry <= after + timedelta(seconds=45)
    assert step.lease_expiry == step_of(client, run_id, "work").lease_expiry
    assert not client.release(step.step_id, "w2", step.lease_generation), "another worker's lease"
    assert client.release(step.step_id, "w1", step.lease_generation)
    row = step_of(client, run_id, "work")
    assert (row.state, row.attempt, row.reclaims, row.lease_owner) == ("available", 1, 0, None)
    (again,) = client.claim("w2", ["work"], 1)
    assert again.attempt == 1, "no attempt charged"
    assert not client.complete(step.step_id, "w1", step.lease_generation, {}), "the released execution is fenced"


def test_a_worker_shutting_down_releases_the_steps_it_will_not_finish(
    dsn: str, client: Client, workers: list[Worker], caplog: pytest.LogCaptureFixture
) -> None:
    # One handler thread and a prefetched step: at the end of the grace period the
    # running handler is cancelled (it ends: abandoned) and the queued step never
    # started (dropped). Both leases go back at once, on the same attempt.
    wf = Workflow("shutting_down")
    started = threading.Event()

    @wf.step()
    def linger(ctx: StepContext) -> Any:
        started.set()
        ctx.sleep(60)  # ends when cancelled
        return None

    w = start(workers, wf, dsn, concurrency=1, prefetch=1, shutdown_grace=1.0)
    runs = [client.submit(wf, {}) for _ in range(2)]
    assert started.wait(20)
    wait_for(lambda: all(step_of(client, r, "linger").state == "running" for r in runs), what="both leased")
    with caplog.at_level(logging.INFO, logger="cyclone_py.worker"):
        w.stop(wait=True, timeout=20)
    rows = [step_of(client, r, "linger") for r in runs]
    for run_id in runs:
        row = step_of(client, run_id, "linger")
        assert (row.state, row.attempt, row.reclaims, row.lease_owner) == ("available", 1, 0, None), [
            (r.getMessage(), r.__dict__.get("released"), r.__dict__.get("abandoned")) for r in caplog.records] + [
            (x.id, x.state, x.attempt, x.lease_owner, x.started_at) for x in rows]
    stopped = [r for r in caplog.records if r.getMessage() == "worker stopped"]
    assert stopped and getattr(stopped[-1], "released", None) == 2
    assert_consistent(dsn)
