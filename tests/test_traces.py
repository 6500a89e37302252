"""Traces (SPEC 14): a run submitted inside a span is executed in that trace.

A real worker in a thread drains a two-step run (``a`` a plain handler that
fails its first attempt, ``b`` an ``async def`` one), each handler opening a
span of its own; the SDK's in-memory exporter collects what the process
exports. The retry's span links to the failed attempt's (the worker gives
that span to ``fail``, ``claim`` returns it with the retry). Without
OpenTelemetry importable, :mod:`cyclone_py.tracing` is a no-op (the import
hidden through ``sys.modules``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any, cast

import psycopg
import pytest
from helpers import start, terminal, wait_for
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from cyclone_py import App, Worker, Workflow, tracing
from cyclone_py.client import Client
from cyclone_py.context import StepContext

traced = Workflow("traced")
tracer = trace.get_tracer("tests.test_traces")


@traced.step()
def a(ctx: StepContext) -> Any:
    with tracer.start_as_current_span("inside a"):
        if ctx.attempt == 1:
            raise RuntimeError("failing the first attempt on purpose")
    return {"a": ctx.attempt}


@traced.step(deps=[a])
async def b(ctx: StepContext) -> Any:
    with tracer.start_as_current_span("inside b"):
        return {"b": ctx.deps["a"]}


app = App(traced, backoff=lambda attempt: 0)

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    """The process's TracerProvider (set once: the API allows no second one),
    exporting to memory; stops collecting after this module."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)
    yield _EXPORTER
    _EXPORTER.clear()
    _EXPORTER.shutdown()


def _failed_span(conn: psycopg.Connection[Any], step_id: int) -> Any:
    """The span the engine keeps for a step's next attempt."""
    row = conn.execute("SELECT failed_span FROM cyclone.cyclone_steps WHERE id = %s", (step_id,)).fetchone()
    assert row is not None
    return row[0]


def step_spans(spans: tuple[ReadableSpan, ...]) -> list[ReadableSpan]:
    def order(s: ReadableSpan) -> int:
        attributes = s.attributes or {}
        return cast(int, attributes["cyclone.step_id"]) * 100 + cast(int, attributes["cyclone.attempt"])

    return sorted((s for s in spans if s.name.startswith("cyclone.step ")), key=order)


def test_each_execution_is_a_consumer_span_in_the_submitters_trace_with_the_handlers_spans_inside(
    dsn: str, client: Client, conn: psycopg.Connection[Any], workers: list[Worker], exporter: InMemorySpanExporter
) -> None:
    exporter.clear()
    client.define_workflow("traced", traced.definition())
    with tracer.start_as_current_span("submitter") as submitter:
        run_id = client.submit(traced, {"x": 1})
    parent = submitter.get_span_context()

    start(workers, app, dsn)
    assert wait_for(lambda: terminal(client, run_id)).state == "completed"
    wait_for(lambda: len(step_spans(exporter.get_finished_spans())) == 3, what="three step spans")
    spans = exporter.get_finished_spans()
    steps = step_spans(spans)

    assert [s.name for s in steps] == ["cyclone.step traced.a", "cyclone.step traced.a", "cyclone.step traced.b"]
    for s in steps:
        assert s.kind is SpanKind.CONSUMER
        assert s.context is not None and s.context.trace_id == parent.trace_id
        assert s.parent is not None and s.parent.span_id == parent.span_id
    first, second, last = (dict(s.attributes or {}) for s in steps)
    step_a = next(x for x in client.steps(run_id) if x.node == "a")
    assert first == {
        "cyclone.run_id": str(run_id), "cyclone.step_id": step_a.id, "cyclone.attempt": 1,
        "cyclone.lease_generation": 1, "cyclone.workflow": "traced", "cyclone.node": "a",
        "cyclone.outcome": "failed", "cyclone.error_kind": "error",
    }
    assert steps[0].status.status_code is StatusCode.ERROR
    assert "failing the first attempt on purpose" in (steps[0].status.description or "")
    assert second["cyclone.attempt"] == 2 and second["cyclone.lease_generation"] == 2
    assert second["cyclone.outcome"] == "completed" and "cyclone.error_kind" not in second
    assert last["cyclone.node"] == "b" and last["cyclone.outcome"] == "completed"
    assert steps[1].status.status_code is StatusCode.UNSET

    # SPEC 14: the retry's span links to the failed attempt's; first attempts link to nothing.
    assert not steps[0].links and not steps[2].links
    assert [(link.context.trace_id, link.context.span_id, dict(link.attributes or {})) for link in steps[1].links] == [
        (parent.trace_id, steps[0].context.span_id, {"cyclone.link": "previous_attempt"})]
    # The engine kept the failed attempt's span, in the traceparent format, and the retry did not clear it.
    failed = steps[0].context
    assert _failed_span(conn, step_a.id) == (
        f"00-{failed.trace_id:032x}-{failed.span_id:016x}-{int(failed.trace_flags):02x}")

    # The handlers' own spans (a thread handler, an async one) are children of their execution's.
    inside = {s.name: [x for x in spans if x.name == s.name] for s in spans if s.name.startswith("inside")}
    assert sorted((n, len(v)) for n, v in inside.items()) == [("inside a", 2), ("inside b", 1)]
    for span in inside["inside a"] + inside["inside b"]:
        assert span.parent is not None
        assert span.parent.span_id in {s.context.span_id for s in steps if s.context is not None}
        assert span.context is not None and span.context.trace_id == parent.trace_id


def test_a_run_submitted_outside_a_span_has_no_traceparent_and_its_steps_are_root_spans(
    dsn: str, client: Client, workers: list[Worker], exporter: InMemorySpanExporter
) -> None:
    exporter.clear()
    client.define_workflow("traced", traced.definition())
    run_id = client.submit(traced)
    assert client.get_run(run_id).state == "running"
    start(workers, app, dsn)
    assert wait_for(lambda: terminal(client, run_id)).state == "completed"
    wait_for(lambda: len(step_spans(exporter.get_finished_spans())) == 3, what="three step spans")
    steps = step_spans(exporter.get_finished_spans())
    assert all(s.parent is None for s in steps)
    assert len({s.context.trace_id for s in steps if s.context is not None}) == 3
    # The retry, a root span of its own trace, still links to the first attempt's (in another trace).
    first = steps[0].context
    assert [(link.context.trace_id, link.context.span_id) for link in steps[1].links] == [
        (first.trace_id, first.span_id)]


def test_submit_passes_the_active_spans_traceparent_and_an_explicit_one_wins(
    client: Client, exporter: InMemorySpanExporter
) -> None:
    client.define_workflow("traced", traced.definition())
    with tracer.start_as_current_span("submitter") as span:
        ctx = span.get_span_context()
        run_id = client.submit(traced)
        explicit = client.submit(traced, traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    claimed = {c.run_id: c.traceparent for c in client.claim("w", limit=10)}
    assert claimed[run_id] == f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"
    assert claimed[explicit] == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.fixture
def without_opentelemetry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``import opentelemetry...`` raises ImportError (a None in sys.modules does)."""
    for name in ("opentelemetry", "opentelemetry.trace", "opentelemetry.propagate", "opentelemetry.context"):
        monkeypatch.setitem(sys.modules, name, None)
    tracing._reset()
    yield
    monkeypatch.undo()
    tracing._reset()


def test_without_opentelemetry_tracing_is_a_no_op(without_opentelemetry: None) -> None:
    assert not tracing.enabled()
    assert tracing.current_traceparent() is None
    with tracing.step_span("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "w", "n", {}) as span:
        span.end("failed", "error", "boom")


def test_without_opentelemetry_a_worker_runs_its_steps_and_submit_passes_no_traceparent(
    without_opentelemetry: None, dsn: str, client: Client, conn: psycopg.Connection[Any], workers: list[Worker]
) -> None:
    client.define_workflow("traced", traced.definition())
    run_id = client.submit(traced)
    assert client.claim("w")[0].traceparent is None
    client.cancel(run_id)
    start(workers, app, dsn)
    run_id = client.submit(traced)
    assert wait_for(lambda: terminal(client, run_id)).state == "completed"
    # Its failed first attempt reported no span, and its retry was claimed with none.
    step_a = next(x for x in client.steps(run_id) if x.node == "a")
    assert step_a.attempt == 2 and _failed_span(conn, step_a.id) is None


def test_with_the_api_but_no_provider_no_span_is_made() -> None:
    # A fresh interpreter: opentelemetry-api installed, no TracerProvider set
    # (this module sets one for the whole process). Every span would record
    # nothing, so step_span makes none (what it cost: a tenth of a drain).
    code = (
        "from cyclone_py import tracing\n"
        "assert tracing.enabled()\n"
        "with tracing.step_span('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'w', 'n', {}) as s:\n"
        "    assert s is tracing._NO_SPAN and s.traceparent is None\n"
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "trace.set_tracer_provider(TracerProvider())\n"
        "with tracing.step_span(None, 'w', 'n', {}) as s:\n"
        "    assert s is not tracing._NO_SPAN and s.traceparent is not None\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
