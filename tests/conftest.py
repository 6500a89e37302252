"""Fixtures over the real embedded PostgreSQL (no mocks).

Session: the embedded cluster is started and a template database
``cyclone_tpl_<pid>`` is deployed once with sqitch.  Each test that asks for
``dsn`` gets its own copy, ``cyclone_t_<pid>_<uuid8>``, created from the
template and dropped (WITH (FORCE)) afterwards.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from cyclone_py import db


def _admin(cluster: db.EmbeddedCluster) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(cluster.url("postgres"), autocommit=True)


def _drop(cluster: db.EmbeddedCluster, name: str) -> None:
    with _admin(cluster) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _drop_stale(cluster: db.EmbeddedCluster) -> None:
    """Drop template/test databases left by pytest sessions that were killed."""
    with _admin(cluster) as c:
        names = [str(r[0]) for r in c.execute(
            "SELECT datname FROM pg_database WHERE datname ~ '^cyclone_(tpl|t)_[0-9]+'"
        )]
    for name in names:
        pid = int(name.split("_")[2])
        if pid != os.getpid() and not _pid_alive(pid):
            with contextlib.suppress(psycopg.Error):
                _drop(cluster, name)


@pytest.fixture(scope="session")
def embedded_db() -> db.EmbeddedCluster:
    """The checkout's embedded cluster, started (``restart()``/``stop()`` for chaos tests)."""
    cluster = db.embedded()
    cluster.start()
    return cluster


@pytest.fixture(scope="session")
def template_db(embedded_db: db.EmbeddedCluster) -> Iterator[str]:
    """Name of a database with the schema deployed by sqitch; tests copy it."""
    _drop_stale(embedded_db)
    name = f"cyclone_tpl_{os.getpid()}"
    _drop(embedded_db, name)
    with _admin(embedded_db) as c:
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        db.sqitch(["deploy"], embedded_db.url(name), quiet=True)
        with _admin(embedded_db) as c:
            # Nobody may connect to a template while it is being copied.
            c.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true")
                      .format(sql.Identifier(name)))
        yield name
    finally:
        with contextlib.suppress(psycopg.Error):
            with _admin(embedded_db) as c:
                c.execute(sql.SQL("ALTER DATABASE {} WITH IS_TEMPLATE false")
                          .format(sql.Identifier(name)))
        _drop(embedded_db, name)


@pytest.fixture
def dsn(embedded_db: db.EmbeddedCluster, template_db: str) -> Iterator[str]:
    """DSN of a fresh, fully deployed database private to this test."""
    name = f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with _admin(embedded_db) as c:
        c.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}")
                  .format(sql.Identifier(name), sql.Identifier(template_db)))
    try:
        yield embedded_db.url(name)
    finally:
        # The cluster may have been stopped by a chaos test; bring it back to clean up.
        if not embedded_db.status():
            embedded_db.start()
        _drop(embedded_db, name)


@pytest.fixture
def conn(dsn: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """An autocommit connection to this test's database."""
    with psycopg.connect(dsn, autocommit=True) as c:
        yield c
