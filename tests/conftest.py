"""Fixtures over the real embedded PostgreSQL (no mocks).

Session: the embedded cluster is started and a template database
``cyclone_tpl_<pid>`` is deployed once with sqitch.  Each test that asks for
``dsn`` gets its own copy, ``cyclone_t_<pid>_<uuid8>``, created from the
template and dropped (WITH (FORCE)) afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from click.testing import CliRunner, Result

from cyclone_py import Worker, cli, db
from cyclone_py.client import Client


@pytest.fixture(scope="session")
def embedded_db() -> db.EmbeddedCluster:
    """The checkout's embedded cluster, started (``restart()``/``stop()`` for chaos tests)."""
    cluster = db.embedded()
    cluster.start()
    return cluster


@pytest.fixture(scope="session")
def template_db(embedded_db: db.EmbeddedCluster) -> Iterator[str]:
    """Name of a database with the schema deployed by sqitch; tests copy it."""
    # Left by pytest sessions that were killed.
    embedded_db.drop_stale_databases(r"^cyclone_(?:tpl|t)_([0-9]+)")
    name = f"cyclone_tpl_{os.getpid()}"
    try:
        embedded_db.deploy_template(name)
        yield name
    finally:
        embedded_db.drop_database(name)


@pytest.fixture
def dsn(embedded_db: db.EmbeddedCluster, template_db: str) -> Iterator[str]:
    """DSN of a fresh, fully deployed database private to this test."""
    name = f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    url = embedded_db.create_database(name, template=template_db)
    try:
        yield url
    finally:
        # The cluster may have been stopped by a chaos test; bring it back to clean up.
        if not embedded_db.status():
            embedded_db.start()
        embedded_db.drop_database(name)


@pytest.fixture
def conn(dsn: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """An autocommit connection to this test's database."""
    with psycopg.connect(dsn, autocommit=True) as c:
        yield c


@pytest.fixture
def client(dsn: str) -> Iterator[Client]:
    """A Client on this test's database."""
    with Client(dsn) as c:
        yield c


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    """Workers a test starts (``helpers.start``), stopped at its end."""
    started: list[Worker] = []
    yield started
    for w in started:
        w.stop(force=True, timeout=10)


@pytest.fixture
def invoke(dsn: str) -> Callable[..., Result]:
    """``invoke("runs", "--json")``: the CLI on this test's database, in process."""
    def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
        return CliRunner().invoke(cli.main, ["--dsn", dsn, *args], input=input, env=env)

    return run
