"""The Python copy of the engine's vocabulary matches the schema's CHECK constraints."""

from __future__ import annotations

import re
from typing import Any

import psycopg
import pytest

from cyclone_py import vocabulary
from cyclone_py.client import Client


def constraint_literals(conn: psycopg.Connection[Any], name: str) -> list[str]:
    """The string literals of CHECK constraint ``name`` of schema cyclone, in order."""
    row = conn.execute(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE connamespace = 'cyclone'::regnamespace AND contype = 'c' AND conname = %s",
        (name,),
    ).fetchone()
    assert row is not None, f"no CHECK constraint {name} in schema cyclone"
    return re.findall(r"'((?:[^']|'')*)'::text", str(row[0]))


@pytest.mark.parametrize(
    ("constraint", "values"),
    [
        ("run_state_valid", vocabulary.RUN_STATES),
        ("run_finished_iff_terminal", vocabulary.TERMINAL_RUN_STATES),
        ("step_state_valid", vocabulary.STEP_STATES),
        ("step_finished_iff_terminal", vocabulary.TERMINAL_STEP_STATES),
        ("step_error_kind_valid", vocabulary.ERROR_KINDS),
        ("step_kind_valid", vocabulary.STEP_KINDS),
        ("schedule_overlap_valid", vocabulary.OVERLAP_POLICIES),
    ],
)
def test_vocabulary_matches_the_check_constraints(
    conn: psycopg.Connection[Any], constraint: str, values: tuple[str, ...]
) -> None:
    assert sorted(constraint_literals(conn, constraint)) == sorted(values)


def test_derived_kinds_are_error_kinds(conn: psycopg.Connection[Any]) -> None:
    # step_discarded_has_kind: state <> 'discarded' OR error_kind <> 'cancelled' (and not NULL).
    assert sorted(constraint_literals(conn, "step_discarded_has_kind")) == ["cancelled", "discarded"]
    assert set(vocabulary.DISCARD_KINDS) == set(vocabulary.ERROR_KINDS) - {"cancelled"}
    assert set(vocabulary.RETRYABLE_KINDS) < set(vocabulary.DISCARD_KINDS) - {"permanent"}
    assert set(vocabulary.TERMINAL_RUN_STATES) < set(vocabulary.RUN_STATES)
    assert set(vocabulary.TERMINAL_STEP_STATES) < set(vocabulary.STEP_STATES)


def test_the_live_states_are_those_metrics_counts(client: Client) -> None:
    """``cyclone top`` shows the live states: every one that is not terminal, as
    metrics() counts them for each workflow (SPEC 14), zeros included."""
    client.define_workflow("live", {"nodes": [{"name": "a"}]})
    rows = client.metrics()
    assert [r.labels["state"] for r in rows if r.name == "cyclone_runs"] != []
    assert {r.labels["state"] for r in rows if r.name == "cyclone_runs"} == set(vocabulary.LIVE_RUN_STATES)
    assert {r.labels["state"] for r in rows if r.name == "cyclone_steps"} == set(vocabulary.LIVE_STEP_STATES)
    assert set(vocabulary.LIVE_RUN_STATES) == set(vocabulary.RUN_STATES) - set(vocabulary.TERMINAL_RUN_STATES)
    assert set(vocabulary.LIVE_STEP_STATES) == set(vocabulary.STEP_STATES) - set(vocabulary.TERMINAL_STEP_STATES)
