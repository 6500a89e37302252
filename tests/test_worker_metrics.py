"""The worker's own metrics, scraped over HTTP, and its JSON logs.

A real worker (in a thread, and as a ``cyclone worker`` process) drains a few
runs of ``apps.metered`` (one failing once); the tests scrape its endpoint
with urllib and parse the text with ``prometheus_client``'s own parser.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from apps.metered import app, metered
from helpers import expire_and_reclaim, start, terminal, wait_for
from prometheus_client.parser import text_string_to_metric_families

from cyclone_py import Worker, Workflow
from cyclone_py.client import Client
from cyclone_py.context import StepContext
from cyclone_py.logs import JsonFormatter

TESTS = Path(__file__).resolve().parent
CYCLONE = TESTS.parent / ".venv" / "bin" / "cyclone"
SECRET = "s3cr3t-payload-7f1c"  # in every input and echoed in outputs: must never be logged
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
# Every label a worker metric may carry (le: histogram buckets; worker, version: the info metric).
LABELS = {"workflow", "node", "error_kind", "outcome", "connection", "le", "worker", "version"}

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(url: str) -> tuple[str, Samples]:
    with urllib.request.urlopen(url, timeout=5) as response:
        text = response.read().decode()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return text, samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def step_counts(samples: Samples, name: str) -> dict[str, float]:
    return {n: value(samples, name, workflow="metered", node=n) or 0.0 for n in ("a", "b")}


def drained(url: str) -> Samples | None:
    """The samples once all three runs' completions are counted (the reporter
    counts one once complete_many has returned: just after its run ended)."""
    _, samples = scrape(url)
    return samples if step_counts(samples, "cyclone_worker_steps_completed_total") == {"a": 3, "b": 3} else None


def submit_three(client: Client) -> list[Any]:
    client.define_workflow("metered", metered.definition())
    return client.submit_many("metered", [{"secret": SECRET, "fail_once": i == 0} for i in range(3)])


def assert_bounded_labels(text: str, samples: Samples, run_ids: list[Any], step_ids: set[str]) -> None:
    runs = {str(r) for r in run_ids}
    for (name, labels) in samples:
        assert name.startswith(("cyclone_worker", "process_")), name
        for label, v in labels:
            assert label in LABELS, (name, label)
            assert v not in runs and not UUID_RE.search(v), (name, label, v)
            if label in ("workflow", "node"):
                assert v in {"metered", "a", "b"}, (name, label, v)
            if label != "le":
                assert v not in step_ids, (name, label, v)
    assert SECRET not in text


def test_a_worker_counts_its_steps_and_serves_them_over_http(
    dsn: str, client: Client, workers: list[Worker]
) -> None:
    run_ids = submit_three(client)
    w = start(workers, app, dsn, concurrency=2, metrics_listen="127.0.0.1:0")
    assert w.metrics is not None and w.metrics.url is not None
    url = w.metrics.url
    for run_id in run_ids:
        assert wait_for(lambda r=run_id: terminal(client, r)).state == "completed"

    wait_for(lambda: drained(url), what="the completions to be counted")
    text, samples = scrape(url)
    assert step_counts(samples, "cyclone_worker_steps_started_total") == {"a": 4, "b": 3}
    assert value(samples, "cyclone_worker_steps_failed_total", workflow="metered", node="a",
                 error_kind="error", outcome="retried") == 1
    assert not any(n == "cyclone_worker_steps_failed_total" and dict(lb).get("outcome") == "discarded"
                   for n, lb in samples)
    assert step_counts(samples, "cyclone_worker_handler_duration_seconds_count") == {"a": 4, "b": 3}
    assert value(samples, "cyclone_worker_steps_claimed_total") == 7
    assert (value(samples, "cyclone_worker_claim_duration_seconds_count") or 0) >= 1
    assert (value(samples, "cyclone_worker_complete_duration_seconds_count") or 0) >= 1
    assert value(samples, "cyclone_worker_steps_in_flight") == 0
    assert value(samples, "cyclone_worker_steps_prefetched") == 0
    assert value(samples, "cyclone_worker_reconnects_total", connection="listener") == 0
    assert value(samples, "cyclone_worker_info", worker=w.name, version=dict(
        next(lb for n, lb in samples if n == "cyclone_worker_info"))["version"]) == 1
    assert not any(n == "cyclone_worker_results_dropped_total" for n, _ in samples)
    step_ids = {str(s.id) for r in run_ids for s in client.steps(r)}
    assert_bounded_labels(text, samples, run_ids, step_ids)

    w.stop()
    with pytest.raises(urllib.error.URLError):  # the endpoint stops with the worker
        scrape(url)


def test_a_lost_lease_counts_a_refused_renewal_and_a_refused_result(
    dsn: str, conn: Any, client: Client, workers: list[Worker]
) -> None:
    wf = Workflow("metered_lease")
    first = threading.Event()

    @wf.step()
    def job(ctx: StepContext) -> Any:
        if not first.is_set():
            first.set()
            ctx.cancelled.wait(10)  # cancelled by the refused renewal; returns anyway
            return "late"
        return "fresh"

    w = start(workers, wf, dsn, lease_ttl=1.5, concurrency=2, metrics_listen="127.0.0.1:0")
    assert w.metrics is not None and w.metrics.url is not None
    run_id = client.submit(wf)
    wait_for(first.is_set, what="the handler to start")
    assert expire_and_reclaim(conn) == 1  # past the lease on the engine's clock; another client's tick
    assert wait_for(lambda: terminal(client, run_id)).output == {"job": "fresh"}
    labels = {"workflow": "metered_lease", "node": "job"}

    def counted() -> Samples | None:
        _, s = scrape(w.metrics.url)  # type: ignore[union-attr, arg-type]
        return s if value(s, "cyclone_worker_results_dropped_total", **labels, outcome="refused") else None

    samples = wait_for(counted, what="the refused completion to be counted")
    assert value(samples, "cyclone_worker_renewals_total", **labels, outcome="refused") == 1
    assert value(samples, "cyclone_worker_results_dropped_total", **labels, outcome="refused") == 1
    assert value(samples, "cyclone_worker_steps_completed_total", **labels) == 1
    assert value(samples, "cyclone_worker_steps_started_total", **labels) == 2


def test_the_worker_command_logs_json_and_serves_metrics(dsn: str, client: Client, tmp_path: Path) -> None:
    """``cyclone worker --log-format json --metrics-listen 127.0.0.1:0``: every
    line is one JSON event; step events carry run_id, step_id and attempt; no
    payload is logged (at DEBUG either); the endpoint the start event names
    serves the process's counters."""
    run_ids = submit_three(client)
    log = tmp_path / "worker.log"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CYCLONE_DSN", "DATABASE_URL")}
    env.update(CYCLONE_DSN=dsn, CYCLONE_POLL_INTERVAL="100ms", CYCLONE_SHUTDOWN_GRACE="5s")
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [str(CYCLONE), "worker", "--app", "apps.metered:app", "--concurrency", "2", "--log-level", "debug",
             "--log-format", "json", "--metrics-listen", "127.0.0.1:0"],
            cwd=TESTS, env=env, stdout=fh, stderr=subprocess.STDOUT,
        )
        try:
            def started() -> str | None:
                for line in log.read_text().splitlines():
                    if '"worker started"' in line:
                        return str(json.loads(line)["metrics"])
                assert proc.poll() is None, log.read_text()
                return None

            url = wait_for(started, what="the worker to start")
            for run_id in run_ids:
                assert wait_for(lambda r=run_id: terminal(client, r)).state == "completed"
            samples = wait_for(lambda: drained(url), what="the completions to be counted")
            assert step_counts(samples, "cyclone_worker_steps_started_total") == {"a": 4, "b": 3}
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    text = log.read_text()
    events = [json.loads(line) for line in text.splitlines()]  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= e.keys() for e in events)
    assert SECRET not in text and "Traceback" not in text
    steps = [e for e in events if e["message"].startswith("step ")]
    messages = {e["message"] for e in steps}
    assert {"step claimed", "step completed", "step failed (error); will retry"} <= messages, messages
    for e in steps:
        assert {"run_id", "step_id", "attempt", "worker"} <= e.keys(), e
        assert e["run_id"] in {str(r) for r in run_ids}
    [failed] = [e for e in steps if e["message"] == "step failed (error); will retry"]
    assert (failed["level"], failed["attempt"], failed["run_id"]) == ("INFO", 1, str(run_ids[0]))
    assert {e["message"] for e in events} >= {"worker started", "worker stopped"}


def test_a_json_log_event_is_one_line_with_its_fields_and_its_traceback() -> None:
    run_id = uuid.uuid4()
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        record = logging.getLogger("cyclone_py.worker").makeRecord(
            "cyclone_py.worker", logging.ERROR, __file__, 1, "step %s failed", ("a",), sys.exc_info(),
            extra={"run_id": run_id, "attempt": 2, "level": "not the level", "delay": timedelta(seconds=1)},
        )
    line = JsonFormatter().format(record)
    assert "\n" not in line
    event = json.loads(line)
    assert (event["level"], event["logger"], event["message"]) == ("ERROR", "cyclone_py.worker", "step a failed")
    assert (event["run_id"], event["attempt"], event["delay"]) == (str(run_id), 2, "0:00:01")
    assert "ValueError: boom\nsecond line" in event["exc_info"]
