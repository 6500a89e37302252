"""The sqitch project itself: deploy, revert and deploy again on an empty database."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from cyclone_py import db

# Each deploys and reverts the whole plan with sqitch: 10 to 25 s a test.
pytestmark = pytest.mark.slow


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


def test_an_upgrade_gives_existing_steps_their_runs_workflow(empty_db: str, template_db: str) -> None:
    # step_workflow (after v0.12.0) adds cyclone_steps.workflow NOT NULL: a
    # database with runs of the release before keeps every step, each with its
    # run's workflow, and the views read it.
    db.sqitch(["deploy", "--to", "@v0.12.0"], empty_db, quiet=True)
    with psycopg.connect(empty_db, autocommit=True) as c:
        c.execute("""SELECT cyclone.define_workflow('parent', '{"nodes": [{"name": "a"},
                     {"name": "c", "kind": "child", "workflow": "kid", "deps": ["a"]}]}')""")
        c.execute("""SELECT cyclone.define_workflow('kid', '{"nodes": [{"name": "k"}]}')""")
        c.execute("SELECT cyclone.submit('parent') FROM generate_series(1, 3)")
        c.execute("SELECT cyclone.submit_many('kid', ARRAY['{}', '{}']::jsonb[])")
    db.sqitch(["deploy"], empty_db, quiet=True)
    with psycopg.connect(empty_db) as c:
        rows = c.execute(
            "SELECT s.workflow, count(*)::int FROM cyclone.cyclone_steps s JOIN cyclone.cyclone_runs r"
            " ON r.id = s.run_id AND r.workflow = s.workflow GROUP BY 1 ORDER BY 1").fetchall()
        steps = c.execute("SELECT count(*)::int FROM cyclone.cyclone_steps").fetchone()
        by_view = c.execute(
            "SELECT workflow, count(*)::int FROM cyclone.cyclone_v_steps GROUP BY 1 ORDER BY 1").fetchall()
    assert rows == [("kid", 2), ("parent", 6)]
    assert steps == (8,)
    assert by_view == rows


def test_an_upgrade_keeps_idempotency_keys_and_a_revert_brings_archived_runs_back(empty_db: str) -> None:
    # history (after v0.15.0) moves the keys of existing runs into
    # cyclone_run_keys; reverting it puts every archived run and step back into
    # the live tables, where the release before expects them.
    db.sqitch(["deploy", "--to", "@v0.15.0"], empty_db, quiet=True)
    with psycopg.connect(empty_db, autocommit=True) as c:
        c.execute("""SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a"}, {"name": "b", "deps": ["a"]}]}')""")
        old = c.execute("SELECT cyclone.submit('w', '{}', NULL, 'k-old')").fetchone()
    db.sqitch(["deploy"], empty_db, quiet=True)
    with psycopg.connect(empty_db, autocommit=True) as c:
        assert c.execute("SELECT cyclone.submit('w', '{}', NULL, 'k-old')").fetchone() == old
        for _ in range(2):
            c.execute("SELECT cyclone.complete(c.step_id, 'w1', c.lease_generation)"
                      " FROM cyclone.claim('w1', NULL, 10) c")
        c.execute("SELECT cyclone.submit('w', '{}', NULL, 'k-new')")
        assert c.execute("SELECT cyclone.archive()").fetchone() == (1,)
        assert c.execute("SELECT count(*)::int FROM cyclone.cyclone_history").fetchone() == (1,)
    db.sqitch(["revert", "-y", "--to", "@v0.15.0"], empty_db, quiet=True)
    with psycopg.connect(empty_db, autocommit=True) as c:
        live = c.execute("SELECT count(*)::int FROM ONLY cyclone.cyclone_runs").fetchone()
        steps = c.execute("SELECT count(*)::int FROM ONLY cyclone.cyclone_steps").fetchone()
        children = c.execute(
            "SELECT count(*)::int FROM pg_inherits WHERE inhparent = 'cyclone.cyclone_runs'::regclass").fetchone()
        again = c.execute("SELECT cyclone.submit('w', '{}', NULL, 'k-old')").fetchone()
    assert (live, steps, children) == ((2,), (4,), (0,))
    assert again == old
    db.sqitch(["deploy"], empty_db, quiet=True)


def test_an_upgrade_queues_the_finished_live_runs_and_a_revert_gives_back_their_indexes(empty_db: str) -> None:
    # live_runs (after v0.16.0) queues the finished runs of the live table for
    # archive() when it is deployed; reverting it makes the live table's
    # indexes on state and finish time again, which the release before reads.
    db.sqitch(["deploy", "--to", "@v0.16.0"], empty_db, quiet=True)
    with psycopg.connect(empty_db, autocommit=True) as c:
        c.execute("""SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a"}]}')""")
        finished = c.execute("SELECT cyclone.submit('w')").fetchone()
        assert finished is not None
        c.execute("SELECT cyclone.complete(c.step_id, 'w1', c.lease_generation) FROM cyclone.claim('w1', NULL, 10) c")
        c.execute("SELECT cyclone.submit('w')")
    db.sqitch(["deploy"], empty_db, quiet=True)
    with psycopg.connect(empty_db, autocommit=True) as c:
        assert c.execute("SELECT array_agg(run_id) FROM cyclone.cyclone_archive_queue").fetchone() == ([finished[0]],)
        assert c.execute("SELECT count(*)::int FROM cyclone.check_invariants()").fetchone() == (0,)
        assert c.execute("SELECT cyclone.archive()").fetchone() == (1,)
    db.sqitch(["revert", "-y", "--to", "@v0.16.0"], empty_db, quiet=True)
    with psycopg.connect(empty_db, autocommit=True) as c:
        indexes = {r[0] for r in c.execute(
            "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = 'cyclone.cyclone_runs'::regclass")}
    assert {"cyclone.cyclone_runs_state_created", "cyclone.cyclone_runs_finished",
            "cyclone.cyclone_runs_live"} <= indexes
    db.sqitch(["deploy"], empty_db, quiet=True)


def test_the_upgrade_to_0_18_0_recreates_functions_and_changes_only_comments(empty_db: str) -> None:
    # 0.18.0 deploys every change again as a complete copy of its engine file (sql/engine/): the bodies,
    # settings, grants, tables and views stay what 0.17.0 made; only COMMENT ONs are new. A 0.17.0 database
    # with a run in it keeps the run and works on.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import engine_guard

    db.sqitch(["deploy", "--to", "@v0.17.0"], empty_db, quiet=True)
    with psycopg.connect(empty_db, autocommit=True) as c:
        c.execute("""SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a"}, {"name": "b", "deps": ["a"]}]}')""")
        run = c.execute("SELECT cyclone.submit('w')").fetchone()
        c.execute("SELECT cyclone.complete(c.step_id, 'w1', c.lease_generation) FROM cyclone.claim('w1') c")
    before = engine_guard.snapshot(empty_db)
    db.sqitch(["deploy", "--to", "@v0.18.0"], empty_db, quiet=True)
    after = engine_guard.snapshot(empty_db)
    changed = [key for key in before.keys() | after.keys() if before.get(key) != after.get(key)]
    assert changed and all(key.endswith(" · comment") for key in changed), sorted(changed)
    with psycopg.connect(empty_db, autocommit=True) as c:
        c.execute("SELECT cyclone.complete(c.step_id, 'w1', c.lease_generation) FROM cyclone.claim('w1') c")
        assert c.execute("SELECT state FROM cyclone.cyclone_runs WHERE id = %s", run).fetchone() == ("completed",)
        assert c.execute("SELECT count(*)::int FROM cyclone.check_invariants()").fetchone() == (0,)
