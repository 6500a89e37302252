"""Helpers for tests that drive the SQL functions directly (no runtime in between)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

Conn = psycopg.Connection[Any]
Row = dict[str, Any]


def connect(dsn: str) -> Conn:
    return psycopg.connect(dsn, autocommit=True, row_factory=dict_row)


@pytest.fixture
def db(dsn: str) -> Iterator[Conn]:
    """An autocommit connection to the test's database, rows as dicts."""
    with connect(dsn) as c:
        yield c


def define(c: Conn, name: str, nodes: list[dict[str, Any]], max_attempts: int = 3) -> str:
    c.execute("SELECT cyclone.define_workflow(%s, %s)",
              (name, Jsonb({"max_attempts": max_attempts, "nodes": nodes})))
    return name


def submit(c: Conn, workflow: str, payload: Any = None, deadline: str | None = None) -> UUID:
    row = c.execute("SELECT cyclone.submit(%s, %s, %s::interval) AS id",
                    (workflow, Jsonb(payload or {}), deadline)).fetchone()
    assert row is not None
    return UUID(str(row["id"]))
