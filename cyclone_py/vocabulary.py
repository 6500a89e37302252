"""The engine's vocabulary: the states and error kinds of runs and steps.

The SQL schema is the source of truth: each tuple here mirrors a named CHECK
constraint of ``sql/deploy/tables.sql`` or ``schedules.sql`` (``tests/test_vocabulary.py`` reads
them from ``pg_constraint`` and fails on drift). Python never decides a
transition with them; it only names states (CLI choices, "is this run over").
"""

from __future__ import annotations

__all__ = [
    "DISCARD_KINDS",
    "ERROR_KINDS",
    "LIVE_RUN_STATES",
    "LIVE_STEP_STATES",
    "OVERLAP_POLICIES",
    "RETRYABLE_KINDS",
    "RUN_STATES",
    "STEP_KINDS",
    "STEP_STATES",
    "TERMINAL_RUN_STATES",
    "TERMINAL_STEP_STATES",
]

#: ``run_state_valid``
RUN_STATES = ("running", "paused", "completed", "failed", "cancelled")
#: ``run_finished_iff_terminal``: a run in one of these has ``finished_at``.
TERMINAL_RUN_STATES = ("completed", "failed", "cancelled")
#: The states of a live run, every one that is not terminal: those
#: ``cyclone.metrics()`` counts in ``cyclone_runs`` (SPEC 14) and ``cyclone top`` shows.
LIVE_RUN_STATES = tuple(state for state in RUN_STATES if state not in TERMINAL_RUN_STATES)

#: ``step_state_valid``
STEP_STATES = ("pending", "available", "running", "waiting", "completed", "discarded", "cancelled", "skipped")
#: ``step_finished_iff_terminal``: a step in one of these has ``finished_at``.
TERMINAL_STEP_STATES = ("completed", "discarded", "cancelled", "skipped")
#: The states of a live step, every one that is not terminal: those
#: ``cyclone.metrics()`` counts in ``cyclone_steps`` and ``cyclone top`` shows.
LIVE_STEP_STATES = tuple(state for state in STEP_STATES if state not in TERMINAL_STEP_STATES)

#: ``step_kind_valid``: what completes a step (SPEC 4, 16, 17): a handler (task, and a map's item), a
#: signal (wait), a child run (child), the engine clock (sleep), its items (map), an emitted event
#: (event), the end of another run (await).
STEP_KINDS = ("task", "wait", "child", "sleep", "map", "item", "event", "await")

#: ``step_error_kind_valid``
ERROR_KINDS = (
    "error", "panic", "timeout", "permanent", "reclaim_limit", "deadline", "max_wait", "child_failed", "cancelled",
    "bad_input", "item_failed", "awaited_run_failed",
)
#: The kinds a discarded step can carry (``step_discarded_has_kind``: a
#: cancelled step is not a dead letter): ``cyclone dlq list --reason``.
DISCARD_KINDS = tuple(kind for kind in ERROR_KINDS if kind != "cancelled")
#: The kinds a worker reports through ``cyclone.fail`` that may be retried
#: (``permanent`` discards at once): the only ones its ``backoff`` is asked about.
RETRYABLE_KINDS = ("error", "panic", "timeout")

#: ``schedule_overlap_valid``: what a schedule's slot does while an earlier run
#: of it is unfinished (``cyclone schedules set --overlap``).
OVERLAP_POLICIES = ("skip", "allow", "cancel_other")
