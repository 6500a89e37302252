"""The sqitch project itself: deploy, revert and deploy again on an empty database."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from cyclone_py import db


@pytest.fixture
def empty_db(embedded_db: db.EmbeddedCluster) -> Iterator[str]:
    name = f"cyclone_sqitch_{uuid.uuid4().hex[:8]}"
    try:
        yield embedded_db.create_database(name)
    finally:
        embedded_db.drop_database(name)


def schema_objects(dsn: str) -> tuple[bool, int]:
    with psycopg.connect(dsn) as c:
        row = c.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'cyclone'),"
            "       (SELECT count(*)::int FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            "         WHERE n.nspname = 'cyclone')"
        ).fetchone()
    assert row is not None
    return bool(row[0]), int(row[1])


def test_deploy_revert_deploy_verify_on_an_empty_database(empty_db: str, template_db: str) -> None:
    # template_db: another database of the cluster with the schema (and so the roles) in use.
    db.sqitch(["deploy"], empty_db, quiet=True)
    present, functions = schema_objects(empty_db)
    assert present and functions > 30

    db.sqitch(["revert", "-y"], empty_db, quiet=True)
    assert schema_objects(empty_db) == (False, 0)
    with psycopg.connect(empty_db) as c:
        # Roles are cluster-wide and template_db still uses them, so revert keeps
        # them (it drops a role only when nothing else uses it).
        roles = c.execute(
            "SELECT count(*) FROM pg_roles WHERE rolname IN ('cyclone_worker', 'cyclone_client', 'cyclone_admin')"
        ).fetchone()
    assert roles == (3,)

    db.sqitch(["deploy"], empty_db, quiet=True)
    db.sqitch(["verify"], empty_db, quiet=True)
    assert schema_objects(empty_db)[0]
