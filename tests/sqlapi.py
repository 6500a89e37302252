"""Helpers for tests that drive the SQL functions directly (no runtime in between)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
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


def run_state(c: Conn, run_id: UUID) -> str:
    row = c.execute("SELECT state FROM cyclone.cyclone_runs WHERE id = %s", (run_id,)).fetchone()
    assert row is not None
    return str(row["state"])


def wait_until_blocked(observer: Conn, pid: int, timeout: float = 10.0) -> None:
    """Wait until backend ``pid`` is waiting on a heavyweight lock."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        row = observer.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        if row is not None and row["wait_event_type"] == "Lock":
            return
        time.sleep(0.005)
    raise AssertionError(f"backend {pid} never blocked on a lock")


class Call(threading.Thread):
    """Run ``fn`` in a thread and keep its result or exception."""

    def __init__(self, fn: Callable[[], Any], barrier: threading.Barrier | None = None) -> None:
        super().__init__(daemon=True)
        self.fn = fn
        self.barrier = barrier
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            if self.barrier is not None:
                self.barrier.wait(10)
            self.result = self.fn()
        except BaseException as exc:  # re-raised by value()
            self.error = exc

    def value(self, timeout: float = 30.0) -> Any:
        self.join(timeout)
        assert not self.is_alive(), "the call did not return"
        if self.error is not None:
            raise self.error
        return self.result
