"""The worker's reporter thread: outcomes to ``complete_many``, ``fail`` and ``snooze``.

Handler threads queue their :class:`~cyclone_py.execution.Outcome`; the
reporter takes whatever is queued (up to ``max_batch``), sends the steps'
pending progress, and reports the completions in one ``complete_many`` call,
then each failure with ``fail`` and each snooze with ``snooze``.
When the engine refuses the batch for an output it does not store (22023:
over its size or depth limit; nothing was written), each completion is sent
again alone, and the one refused becomes a ``permanent`` failure with the
engine's message: one bad output never holds back the others, nor comes back
on every attempt.
A database error is retried for up to a lease TTL (or until a forced stop);
after that the results are left to the lease, which the engine reclaims.
The SQL compare-and-set decides whether a report is taken: a refusal here
only means the lease was lost meanwhile. With the worker's metrics on, what
the engine took or refused is counted here (:mod:`cyclone_py.metrics`).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cyclone_py import errors
from cyclone_py.client import ClaimedStep, Client, CompleteResult
from cyclone_py.execution import Outcome, failure
from cyclone_py.metrics import REFUSED, UNREPORTED, WorkerMetrics
from cyclone_py.runtime import DatabaseOutage, log_extra

__all__ = ["Reporter"]

# The worker's threads log as the worker (docs/python.md).
logger = logging.getLogger("cyclone_py.worker")


class Reporter(threading.Thread):
    """Reports the outcomes :meth:`put` queues, in batches, until :meth:`close`.

    ``finish(step)`` is called once a step's outcome was reported (or given
    up on); ``on_discard(exc, step)`` for every failure the engine discarded.
    ``metrics``, when given, counts what the engine took and refused.
    ``extra``: fields on every log line (the database, when the worker serves several).
    ``flush_progress(step)`` sends a step's pending progress before its outcome.
    """

    def __init__(
        self,
        client: Client,
        worker: str,
        *,
        max_batch: int,
        lease_ttl: float,
        force: threading.Event,
        finish: Callable[[ClaimedStep], None],
        on_discard: Callable[[errors.StepFailed, ClaimedStep], None],
        outage: DatabaseOutage | None = None,
        metrics: WorkerMetrics | None = None,
        extra: Mapping[str, Any] | None = None,
        flush_progress: Callable[[ClaimedStep], None] | None = None,
    ) -> None:
        super().__init__(name="cyclone-reporter", daemon=True)
        self.client = client
        self.worker = worker
        self.max_batch = max_batch
        self.lease_ttl = lease_ttl
        self._force = force
        self._finish = finish
        self._on_discard = on_discard
        self._metrics = metrics
        self._outage = outage or DatabaseOutage(worker)
        self._extra = dict(extra or {})  # on every log line: the database, when the worker serves several
        self._flush_progress = flush_progress
        self._queue: queue.SimpleQueue[Outcome | None] = queue.SimpleQueue()  # None: stop

    def _log_extra(self, step: ClaimedStep | None = None, **more: Any) -> dict[str, Any]:
        return log_extra(self.worker, step, **self._extra, **more)

    def put(self, outcome: Outcome) -> None:
        """Queue an outcome for the next batch."""
        self._queue.put(outcome)

    def close(self, timeout: float) -> None:
        """Report what was queued before this call, then stop; wait up to ``timeout`` seconds."""
        self._queue.put(None)
        if self.is_alive():
            self.join(timeout)

    def run(self) -> None:
        stop = False
        while not stop:
            first = self._queue.get()
            if first is None:
                break
            batch: list[Outcome] = [first]
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            try:
                self._report(batch)
            except Exception:
                logger.exception("reporter failed; results left to the lease", extra=self._log_extra())
                for outcome in batch:
                    self._dropped(outcome, UNREPORTED)
                    self._finish(outcome.step)

    def _with_retry(self, what: str, fn: Callable[[], Any], *, refused: bool = False) -> tuple[bool, Any]:
        """Call ``fn`` until it succeeds; give up (False) after a lease TTL of
        database errors or at a forced stop. With ``refused``, an argument the
        engine refuses (:class:`~cyclone_py.errors.InvalidArgument`) is raised
        to the caller instead."""
        give_up = time.monotonic() + self.lease_ttl
        delay = 0.05
        while True:
            try:
                started = time.monotonic()
                result = fn()
                self._outage.answered(started)
                return True, result
            except errors.DatabaseUnavailable as exc:
                if self._metrics is not None:
                    self._metrics.reconnects.labels("pool").inc()
                self._outage.failed(what, exc)
                if time.monotonic() + delay > give_up or self._force.is_set():
                    # Expected in an outage longer than a lease: the engine
                    # reclaims the steps and they run again.
                    logger.info("%s failed for a lease TTL (%s); results left to the lease", what, exc,
                                extra=self._log_extra())
                    return False, None
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
            except errors.CycloneError as exc:
                if refused and isinstance(exc, errors.InvalidArgument):
                    raise
                logger.error("%s failed (%s); results left to the lease", what, exc, extra=self._log_extra())
                return False, None

    def _report(self, batch: Sequence[Outcome]) -> None:
        if self._flush_progress is not None:
            # The last progress value goes first: the engine refuses it once the step has ended.
            for o in batch:
                self._flush_progress(o.step)
        completes = [o for o in batch if o.ok]
        snoozes = [o for o in batch if o.snooze is not None]
        failures = [o for o in batch if not o.ok and o.snooze is None]
        if completes:
            # step id -> accepted by the compare-and-set; missing: no answer (database down)
            answers: dict[int, bool] = {}
            try:
                ok, results = self._with_retry("complete_many", lambda: self._complete_many(completes), refused=True)
                answers = {r.step_id: r.accepted for r in results} if ok else {}
            except errors.InvalidArgument as exc:
                logger.warning("complete_many refused (%s): completing each step alone", exc, extra=self._log_extra())
                for o in completes:
                    refusal = self._complete_alone(o, answers)
                    if refusal is not None:
                        failures.append(refusal)
                refused = {o.step.step_id for o in failures}
                completes = [o for o in completes if o.step.step_id not in refused]
            metrics = self._metrics
            for o in completes:
                answer = answers.get(o.step.step_id)
                if answer is None:
                    self._dropped(o, UNREPORTED)
                elif answer:
                    if metrics is not None:
                        metrics.step(o.step.workflow, o.step.node).completed.inc()
                    if logger.isEnabledFor(logging.DEBUG):
                        logger.debug("step completed", extra=self._log_extra(o.step))
                else:
                    self._dropped(o, REFUSED)
                    logger.debug(
                        "completion refused: the lease was lost (%s)",
                        o.cancel_reason or "reclaimed, timed out or cancelled",
                        extra=self._log_extra(o.step),
                    )
                self._finish(o.step)
        for o in failures:
            self._report_failure(o)
        for o in snoozes:
            self._report_snooze(o)

    def _report_snooze(self, o: Outcome) -> None:
        step = o.step
        assert o.snooze is not None
        delay = o.snooze
        ok, taken = self._with_retry(
            "snooze", lambda: self.client.snooze(step.step_id, self.worker, step.lease_generation, delay)
        )
        if not ok:
            self._dropped(o, UNREPORTED)
        elif not taken:
            self._dropped(o, REFUSED)
            logger.debug("snooze refused: the lease was lost", extra=self._log_extra(step))
        else:
            logger.info("step snoozed for %s", delay, extra=self._log_extra(step))
        self._finish(step)

    def _complete_alone(self, o: Outcome, answers: dict[int, bool]) -> Outcome | None:
        """Report one completion by itself (after the engine refused its batch),
        its answer into ``answers``; when the engine refuses its output, the
        ``permanent`` failure to report instead."""
        try:
            ok, results = self._with_retry("complete_many", lambda: self._complete_many([o]), refused=True)
        except errors.InvalidArgument as exc:
            return failure(o.step, f"the engine refused the handler's output: {exc.message}", "permanent",
                           cancel_reason=o.cancel_reason)
        if ok:
            answers.update((r.step_id, r.accepted) for r in results)
        return None

    def _complete_many(self, completes: Sequence[Outcome]) -> list[CompleteResult]:
        began = time.perf_counter()
        results = self.client.complete_many(
            self.worker,
            [o.step.step_id for o in completes],
            [o.step.lease_generation for o in completes],
            [o.output_json for o in completes],
            serialized=True,
        )
        if self._metrics is not None:
            self._metrics.complete_seconds.observe(time.perf_counter() - began)
        return results

    def _dropped(self, o: Outcome, outcome: str) -> None:
        if self._metrics is not None:
            self._metrics.dropped.labels(o.step.workflow, o.step.node, outcome).inc()

    def _report_failure(self, o: Outcome) -> None:
        step = o.step
        ok, state = self._with_retry(
            "fail",
            lambda: self.client.fail(
                step.step_id, self.worker, step.lease_generation, o.error or "", o.error_kind, o.retry_in, o.span
            ),
        )
        if ok:
            self._after_fail(o, state)
        else:
            self._dropped(o, UNREPORTED)
        self._finish(step)

    def _after_fail(self, o: Outcome, state: str | None) -> None:
        step = o.step
        if state is None:
            self._dropped(o, REFUSED)
            logger.debug(
                "failure refused: the lease was lost (%s)",
                o.cancel_reason or "reclaimed, timed out or cancelled",
                extra=self._log_extra(step, error_kind=o.error_kind),
            )
            return
        if self._metrics is not None:
            outcome = "discarded" if state == "discarded" else "retried"
            self._metrics.failed.labels(step.workflow, step.node, o.error_kind, outcome).inc()
        if state == "discarded":
            self._on_discard(o.discard().exception(), step)
        else:
            logger.info(
                "step failed (%s); will retry", o.error_kind, extra=self._log_extra(step, error_kind=o.error_kind)
            )
