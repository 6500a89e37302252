"""Traces (SPEC 14): OpenTelemetry, when it is installed (the ``otel`` extra).

The engine keeps a run's W3C ``traceparent`` (``cyclone.submit``'s
``p_traceparent``; a child run takes its parent's) and ``cyclone.claim``
returns it with each step. This module only propagates it: the
``traceparent`` of the caller's active span for ``Client.submit``
(:func:`current_traceparent`), and one span per execution of a step whose
parent is the run's ``traceparent`` (:func:`step_span`), made current while
the handler runs so that the handler's own spans are its children. A failed
execution's span is handed to ``cyclone.fail`` (:attr:`StepSpan.traceparent`),
the engine keeps it with the step, and the next attempt's span links to it.

Without ``opentelemetry-api`` both are no-ops: the import is tried once, on
first use, and nothing else is imported here. What the spans are exported to
is the application's choice (a ``TracerProvider`` of the SDK and an
exporter, configured in the process); with none configured the API's spans
would record nothing, so :func:`step_span` makes none until one is set.

An execution that reported no failure (a crash, then a reclaim; a timeout the
sweep found) leaves nothing to link to: the next attempt links to the last
execution that did, or to none.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

__all__ = ["StepSpan", "current_traceparent", "enabled", "recording", "step_span"]

TRACER_NAME = "cyclone_py"
#: The W3C header (and carrier key) the engine keeps.
TRACEPARENT = "traceparent"


@dataclass(frozen=True)
class _Otel:
    """The parts of ``opentelemetry-api`` this module uses."""

    trace: ModuleType
    propagate: ModuleType
    context: ModuleType


_UNSET: Any = object()
_otel: _Otel | None = _UNSET


def _load() -> _Otel | None:
    """The API's modules, or None when ``opentelemetry`` cannot be imported
    (tried once; ``_reset`` makes the next call try again)."""
    global _otel
    if _otel is _UNSET:
        try:
            _otel = _Otel(
                trace=importlib.import_module("opentelemetry.trace"),
                propagate=importlib.import_module("opentelemetry.propagate"),
                context=importlib.import_module("opentelemetry.context"),
            )
        except ImportError:
            _otel = None
    return _otel


def _reset() -> None:
    """Forget the import attempt (for tests that hide or restore the package)."""
    global _otel
    _otel = _UNSET


def enabled() -> bool:
    """Whether ``opentelemetry-api`` is importable (spans are then made)."""
    return _load() is not None


def current_traceparent() -> str | None:
    """The W3C ``traceparent`` of the active span, or None when there is none
    (or OpenTelemetry is not installed)."""
    otel = _load()
    if otel is None or not otel.trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    otel.propagate.inject(carrier)
    return carrier.get(TRACEPARENT)


class StepSpan:
    """One execution's span; :meth:`end` sets its outcome. The no-op form
    (OpenTelemetry not installed) does nothing."""

    def __init__(self, span: Any = None, status: Any = None) -> None:
        self._span = span
        self._status = status  # opentelemetry.trace.Status and StatusCode, when there is a span

    @property
    def traceparent(self) -> str | None:
        """This span as a W3C ``traceparent`` (what ``fail`` keeps for the next
        attempt's link); None for the no-op form or a span that records nothing."""
        if self._span is None:
            return None
        context = self._span.get_span_context()
        if not context.is_valid:
            return None
        return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"

    def end(self, outcome: str, error_kind: str | None = None, error: str | None = None,
            cancel_reason: str | None = None) -> None:
        """Record how the execution ended: ``cyclone.outcome`` (completed,
        failed, cancelled), ``cyclone.error_kind``, and status ERROR unless
        it completed."""
        span = self._span
        if span is None:
            return
        span.set_attribute("cyclone.outcome", outcome)
        if error_kind is not None:
            span.set_attribute("cyclone.error_kind", error_kind)
        if cancel_reason is not None:
            span.set_attribute("cyclone.cancel_reason", cancel_reason)
        if outcome != "completed":
            status, code = self._status
            span.set_status(status(code.ERROR, _last_line(error) or error_kind))


_NO_SPAN = StepSpan()
_NO_SPAN_CONTEXT = contextlib.nullcontext(_NO_SPAN)


def _last_line(text: str | None) -> str | None:
    """A traceback's last line (the exception), cut to 200 characters."""
    if not text:
        return None
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else None


def recording() -> bool:
    """Whether :func:`step_span` makes spans now: OpenTelemetry is importable
    and a provider is set (the API alone, with no SDK set up, gives spans that
    record nothing, and making one cost a tenth of the worker's time on a
    drain of no-op steps). The API's answer reads the environment each time
    (7% of the worker's time on that drain): the worker asks once a claim,
    not once a step."""
    otel = _load()
    return otel is not None and not isinstance(otel.trace.get_tracer_provider(), otel.trace.ProxyTracerProvider)


def step_span(traceparent: str | None, workflow: str, node: str,
              attributes: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
              previous_span: str | None = None, *, record: bool | None = None,
              ) -> contextlib.AbstractContextManager[StepSpan]:
    """A CONSUMER span ``cyclone.step <workflow>.<node>``, child of
    ``traceparent`` (a root span when None), linked to ``previous_span`` (the
    previous attempt's, a traceparent) when given, current in this thread or
    task for the body and ended when it exits. ``attributes``: the span's
    first attributes, or a function that makes them, called only when a span
    is made. ``record``: :func:`recording`'s answer when the caller has it
    (None: ask it); when false, no span is made."""
    if not (recording() if record is None else record):
        # A shared context that does nothing: a generator's context manager
        # a step cost 1 µs more.
        return _NO_SPAN_CONTEXT
    otel = _load()
    assert otel is not None  # recording() said so
    return _recording_span(otel, traceparent, workflow, node,
                           attributes() if callable(attributes) else attributes, previous_span)


@contextlib.contextmanager
def _recording_span(otel: Any, traceparent: str | None, workflow: str, node: str, attributes: Mapping[str, Any],
                    previous_span: str | None) -> Iterator[StepSpan]:
    trace = otel.trace
    # An explicit parent: an empty context when the run has none, so that
    # whatever span happens to be current here never becomes the parent.
    parent = otel.propagate.extract({TRACEPARENT: traceparent} if traceparent else {}, context=otel.context.Context())
    links = None
    if previous_span:
        previous = trace.get_current_span(
            otel.propagate.extract({TRACEPARENT: previous_span}, context=otel.context.Context())
        ).get_span_context()
        if previous.is_valid:
            links = [trace.Link(previous, {"cyclone.link": "previous_attempt"})]
    tracer = trace.get_tracer(TRACER_NAME)
    with tracer.start_as_current_span(
        f"cyclone.step {workflow}.{node}",
        context=parent,
        kind=trace.SpanKind.CONSUMER,
        attributes=attributes,
        links=links,
        record_exception=False,
        set_status_on_exception=True,
    ) as span:
        yield StepSpan(span, (trace.Status, trace.StatusCode))
