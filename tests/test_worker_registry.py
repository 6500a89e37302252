"""SPEC 18, the worker registry, in the Python runtime: a worker registers at
start and on every poll and deregisters at a clean exit; ``cyclone workers``
lists the registry; ``cyclone explain`` says whether a live worker claims a
step; a registration the engine refuses never stops a worker."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from click.testing import Result
from helpers import start, step_of, terminal, wait_for

from cyclone_py import StepContext, Worker, Workflow, __version__
from cyclone_py.client import Client, WorkerRow


def one_step(name: str) -> Workflow:
    wf = Workflow(name)

    @wf.step()
    def work(ctx: StepContext) -> Any:
        return "done"

    return wf


def row_of(client: Client, name: str) -> WorkerRow | None:
    return next((r for r in client.workers() if r.name == name), None)


def test_a_worker_registers_at_start_and_deregisters_at_a_clean_exit(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    wf = one_step("registered")
    w = start(workers, wf, dsn, concurrency=3)
    row = wait_for(lambda: row_of(client, w.name), what="the worker's registry row")
    assert row.alive and row.running == 0, "an idle worker is listed"
    assert row.info["handlers"] == ["work"] and row.info["workflows"] == ["registered"]
    assert (row.info["language"], row.info["pid"], row.info["version"], row.info["concurrency"]) == (
        "python", os.getpid(), __version__, 3)
    w.stop(timeout=10)
    assert row_of(client, w.name) is None, "a clean exit removes the row"


def test_a_worker_refreshes_its_row_on_every_poll(dsn: str, client: Client, workers: list[Worker]) -> None:
    w = start(workers, one_step("refreshed"), dsn, poll_interval=0.2)
    first = wait_for(lambda: row_of(client, w.name), what="the worker's registry row")
    client.advance_time(timedelta(minutes=2))  # past the 60 s of alive on the engine clock
    again = wait_for(lambda: (r := row_of(client, w.name)) is not None and r.alive and r, what="a refresh")
    assert again.last_seen_at >= first.last_seen_at + timedelta(minutes=2)
    assert again.started_at == first.started_at


def test_cyclone_workers_lists_the_registry(
    dsn: str, client: Client, workers: list[Worker], invoke: Callable[..., Result]
) -> None:
    assert invoke("workers").exit_code == 0
    client.register_worker("gone", {"handlers": ["x"], "host": "h1", "pid": 7})
    client.advance_time(timedelta(minutes=5))
    w = start(workers, one_step("listed"), dsn)
    wait_for(lambda: row_of(client, w.name), what="the worker's registry row")
    out = invoke("workers")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].split() == ["NAME", "ALIVE", "LAST", "SEEN", "RUNNING", "HANDLERS", "WORKFLOWS", "WHERE"]
    assert lines[1].startswith(w.name) and " yes " in lines[1] and "work" in lines[1], "the live one first"
    assert lines[2].startswith("gone") and " no " in lines[2] and "5m" in lines[2] and "h1:7" in lines[2]
    assert "any" in lines[2], "a worker that names no workflows claims any"
    rows = json.loads(invoke("workers", "--json").output)
    assert [(r["name"], r["alive"]) for r in rows] == [(w.name, True), ("gone", False)]


def test_explain_says_whether_a_live_worker_claims_a_waiting_step(
    dsn: str, client: Client, invoke: Callable[..., Result]
) -> None:
    wf = one_step("unserved")
    client.define_workflow(wf.name, wf.definition())
    run_id = client.submit(wf)
    step = step_of(client, run_id, "work")
    assert client.explain_step(step.id).workers == 0
    assert "claimable: the next worker that claims its handler takes it" in invoke("explain", str(step.id)).output
    client.advance_time(timedelta(minutes=1))  # due for a while, and nobody took it
    out = invoke("explain", str(step.id))
    assert "but not claimed: no worker is claiming handler 'work' of workflow 'unserved'" in out.output, out.output
    client.register_worker("elsewhere", {"handlers": ["work"], "workflows": ["unserved"]})
    assert client.explain_step(step.id).workers == 1
    out = invoke("explain", str(step.id))
    assert "but not claimed, though 1 live worker claims its handler 'work': busy?" in out.output, out.output


def test_a_refused_registration_is_logged_once_and_the_worker_claims_anyway(
    dsn: str, client: Client, workers: list[Worker], caplog: pytest.LogCaptureFixture
) -> None:
    # A name the registry refuses (over 200 characters) is one claim accepts.
    wf = one_step("unregistered")
    with caplog.at_level(logging.WARNING, logger="cyclone_py.worker"):
        start(workers, wf, dsn, name="w" * 201, poll_interval=0.05)
        run_id = client.submit(wf)
        run = wait_for(lambda: terminal(client, run_id), what="run to finish")
        time.sleep(0.3)  # several more polls: the refusal is still logged once
        workers[0].stop(timeout=10)
    assert run.output == {"work": "done"}
    refused = [r for r in caplog.records if "could not register" in r.getMessage()]
    assert len(refused) == 1, [r.getMessage() for r in caplog.records]
    assert "200" in refused[0].getMessage()
    assert client.workers() == []
