"""Access with real LOGIN roles (SPEC section 10), and search_path hardening.

Each test creates its own login roles (``IN ROLE cyclone_worker`` etc.),
connects as them over the embedded cluster's socket, and drops them at the
end (roles are cluster-wide, so the names are unique per test).

- a worker login runs the worker protocol and nothing else: no table reads or
  writes (it reads the views every role reads, cyclone_v_limits,
  cyclone_v_schedules and cyclone_v_workers), no operator actions, no client functions, no internal
  helpers;
- a client login submits, signals and reads the views and the run and step
  tables (the documented deadline queries run verbatim), and cannot work steps;
- an admin login operates and reads, and still writes no table;
- the functions take no SQL from their arguments: hostile text is data;
- SECURITY DEFINER functions pin search_path: hostile objects in ``public``
  (``now()``, ``pg_notify()``, ``gen_random_uuid()``, ``=`` operators, tables
  named like the engine's) and in ``pg_temp`` change nothing, even when the
  caller's search_path puts them first.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg import conninfo, sql
from psycopg import errors as pg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

Conn = psycopg.Connection[Any]
Query = str | sql.Composed

WORKER_FUNCTIONS = {"claim", "renew", "renew_many", "release", "snooze", "progress", "complete", "complete_many",
                    "fail", "tick",
                    "register_worker", "deregister_worker", "define_workflow", "backoff", "now", "next_fire",
                    "schedule", "unschedule", "pause_schedule", "resume_schedule", "backfill", "define_limit",
                    "drop_limit", "version"}
CLIENT_FUNCTIONS = {"submit", "submit_many", "get_run", "signal", "now", "next_fire", "metrics", "explain_step",
                    "list_runs", "list_steps", "list_dead_letters", "emit_event", "signal_with_start",
                    "version", "overview_gauges", "finished_per_minute", "finished_runs"}


@pytest.fixture
def db(dsn: str) -> Iterator[Conn]:
    with psycopg.connect(dsn, autocommit=True, row_factory=dict_row) as c:
        yield c


@pytest.fixture
def login(dsn: str, db: Conn) -> Iterator[Callable[[str], Conn]]:
    """``login('cyclone_worker')``: a connection as a fresh LOGIN role in that role."""
    made: list[str] = []
    conns: list[Conn] = []

    def connect(group: str) -> Conn:
        role = f"cyc_{group.removeprefix('cyclone_')}_{uuid.uuid4().hex[:8]}"
        db.execute(sql.SQL("CREATE ROLE {} LOGIN IN ROLE {}").format(sql.Identifier(role), sql.Identifier(group)))
        made.append(role)
        c = psycopg.connect(conninfo.make_conninfo(dsn, user=role), autocommit=True, row_factory=dict_row)
        conns.append(c)
        assert c.execute("SELECT current_user AS u, usesuper FROM pg_user WHERE usename = current_user").fetchone() == {
            "u": role, "usesuper": False}
        return c

    yield connect
    for c in conns:
        c.close()
    for role in made:
        db.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
        db.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        db.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def define(c: Conn, name: str, nodes: list[dict[str, Any]]) -> None:
    c.execute("SELECT cyclone.define_workflow(%s, %s)", (name, Jsonb({"max_attempts": 3, "nodes": nodes})))


def submit(c: Conn, workflow: str) -> Any:
    row = c.execute("SELECT cyclone.submit(%s) AS id", (workflow,)).fetchone()
    assert row is not None
    return row["id"]


def engine_relations(c: Conn) -> list[str]:
    return [r["name"] for r in c.execute(
        "SELECT format('%I.%I', n.nspname, k.relname) AS name"
        " FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace"
        " WHERE n.nspname = 'cyclone' AND k.relkind IN ('r', 'v', 'p') ORDER BY 1")]


def is_view(rel: str) -> bool:
    return rel.split(".")[1].startswith("cyclone_v_")


def functions(c: Conn) -> list[tuple[str, str, bool]]:
    """(name, call with NULL arguments, is internal) of every function in the schema
    (trigger functions aside: nobody can call them, privileges or not)."""
    rows = c.execute("""
        SELECT p.proname AS name, p.proname ~ '^_' AS internal,
               format('SELECT * FROM cyclone.%I(%s)', p.proname,
                      coalesce((SELECT string_agg(format('NULL::%s', format_type(t, NULL)), ', ')
                                  FROM unnest(p.proargtypes) t), '')) AS call
          FROM pg_proc p WHERE p.pronamespace = 'cyclone'::regnamespace AND p.prorettype <> 'trigger'::regtype
         ORDER BY 1, 3""").fetchall()
    return [(r["name"], r["call"], r["internal"]) for r in rows]


def executable(c: Conn, call: Query) -> bool:
    """False when the call is refused for privileges; any other outcome means
    the role may execute it."""
    try:
        c.execute(call).fetchall()
    except pg.InsufficientPrivilege:
        return False
    except psycopg.Error:
        return True
    return True


def refused(c: Conn, statement: Query, params: Any = None) -> bool:
    try:
        c.execute(statement, params)
    except pg.InsufficientPrivilege:
        return True
    return False


# -- the three roles ---------------------------------------------------------------------


def test_each_login_executes_exactly_its_roles_functions(db: Conn, login: Callable[[str], Conn]) -> None:
    worker, client, admin = login("cyclone_worker"), login("cyclone_client"), login("cyclone_admin")
    public = {name for name, _, internal in functions(db) if not internal}
    expected = {"worker": WORKER_FUNCTIONS, "client": CLIENT_FUNCTIONS, "admin": public}
    for who, c in (("worker", worker), ("client", client), ("admin", admin)):
        allowed = {name for name, call, internal in functions(db) if executable(c, call)}
        assert allowed == expected[who], who
    for name, call, internal in functions(db):
        if internal:
            assert not executable(admin, call), f"internal helper {name} is executable"


def test_a_worker_login_runs_the_protocol_but_cannot_touch_tables_or_operate(
    db: Conn, login: Callable[[str], Conn]
) -> None:
    define(db, "one", [{"name": "work"}])
    run_id = submit(db, "one")
    worker = login("cyclone_worker")

    claimed = worker.execute("SELECT * FROM cyclone.claim('w1', NULL, 1)").fetchone()
    assert claimed is not None and claimed["run_id"] == run_id
    sid, gen = claimed["step_id"], claimed["lease_generation"]
    assert worker.execute("SELECT cyclone.renew(%s, 'w1', %s) AS ok", (sid, gen)).fetchone() == {"ok": True}
    worker.execute("SELECT cyclone.tick()")
    worker.execute("SELECT cyclone.define_workflow('from_worker', %s)", (Jsonb({"nodes": [{"name": "a"}]}),))

    # Every role reads the schedules view (SPEC 13; the worker registers the app's
    # schedules) and cyclone_v_limits (SPEC 12; a worker process shows its limits).
    worker.execute("SELECT cyclone.schedule('from_worker', '@daily', 'from_worker')")
    assert worker.execute("SELECT name FROM cyclone.cyclone_v_schedules").fetchall() == [{"name": "from_worker"}]
    assert not refused(worker, "SELECT * FROM cyclone.cyclone_v_limits LIMIT 1")
    # The worker registry (SPEC 18): a worker registers, reads the view, deregisters.
    worker.execute("SELECT cyclone.register_worker('w1', '{}')")
    assert worker.execute("SELECT name FROM cyclone.cyclone_v_workers").fetchall() == [{"name": "w1"}]
    assert worker.execute("SELECT cyclone.deregister_worker('w1') AS ok").fetchone() == {"ok": True}
    for rel in engine_relations(db):
        name = sql.SQL(rel)
        if rel not in ("cyclone.cyclone_v_schedules", "cyclone.cyclone_v_limits", "cyclone.cyclone_v_workers"):
            assert refused(worker, sql.SQL("SELECT * FROM {} LIMIT 1").format(name)), f"SELECT {rel}"
        if not is_view(rel):  # a view's DELETE fails as not updatable before privileges are checked
            assert refused(worker, sql.SQL("DELETE FROM {}").format(name)), f"DELETE {rel}"
            assert refused(worker, sql.SQL("TRUNCATE {}").format(name)), f"TRUNCATE {rel}"
    assert refused(worker, "UPDATE cyclone.cyclone_steps SET state = 'completed' WHERE id = %s", (sid,))
    assert refused(worker, "INSERT INTO cyclone.cyclone_runs (workflow) VALUES ('one')")
    assert refused(worker, "UPDATE cyclone.clock SET time_offset = '1 day'")
    for call in ("SELECT cyclone.retry(%s, 'work')", "SELECT cyclone.retry_all(%s)", "SELECT cyclone.cancel(%s)",
                 "SELECT cyclone.pause(%s)", "SELECT cyclone.resume(%s)", "SELECT * FROM cyclone.get_run(%s)"):
        assert refused(worker, call, (run_id,)), call
    for call in ("SELECT cyclone.advance_time('1 hour')", "SELECT cyclone.reset_time()",
                 "SELECT cyclone.prune('0 seconds')", "SELECT * FROM cyclone.sweep()",
                 "SELECT cyclone.submit('one')", "SELECT cyclone._lock_run(NULL)"):
        assert refused(worker, call), call

    assert worker.execute("SELECT cyclone.complete(%s, 'w1', %s, '{}') AS ok", (sid, gen)).fetchone() == {"ok": True}
    row = db.execute("SELECT state FROM cyclone.cyclone_runs WHERE id = %s", (run_id,)).fetchone()
    assert row == {"state": "completed"}


def test_a_client_login_submits_signals_and_reads_views_but_cannot_work_steps(
    db: Conn, login: Callable[[str], Conn]
) -> None:
    define(db, "gate", [{"name": "approval", "kind": "wait"}, {"name": "ship", "deps": ["approval"]}])
    client = login("cyclone_client")
    run_id = submit(client, "gate")
    assert client.execute("SELECT cyclone.signal(%s, 'approval') AS ok", (run_id,)).fetchone() == {"ok": True}
    assert client.execute("SELECT state FROM cyclone.get_run(%s)", (run_id,)).fetchone() == {"state": "running"}
    assert len(client.execute("SELECT * FROM cyclone.cyclone_v_steps WHERE run_id = %s", (run_id,)).fetchall()) == 2
    client.execute("SELECT * FROM cyclone.cyclone_v_runs").fetchall()
    client.execute("SELECT * FROM cyclone.cyclone_v_dlq").fetchall()
    assert refused(client, "SELECT * FROM cyclone.claim('c')")
    assert refused(client, "SELECT cyclone.complete(1, 'c', 1)")
    assert refused(client, "SELECT cyclone.cancel(%s)", (run_id,))
    assert len(client.execute("SELECT * FROM cyclone.cyclone_steps WHERE run_id = %s", (run_id,)).fetchall()) == 2
    assert refused(client, "SELECT * FROM cyclone.cyclone_workflows")
    assert refused(client, "DELETE FROM cyclone.cyclone_runs")


# The two queries of the run-deadline note, verbatim.
DEADLINE_STEPS = """
SELECT run_id, node, kind, error, completed_at
  FROM cyclone_v_steps
 WHERE error_kind = 'deadline'
 ORDER BY completed_at DESC;
"""
DEADLINE_RUNS = """
SELECT DISTINCT r.id, r.workflow, r.finished_at
  FROM cyclone_runs r
  JOIN cyclone_steps s ON s.run_id = r.id
 WHERE s.error_kind = 'deadline'
 ORDER BY r.finished_at DESC;
"""


def test_the_documented_deadline_queries_run_verbatim_for_a_client(db: Conn, login: Callable[[str], Conn]) -> None:
    define(db, "slow", [{"name": "work"}])
    submitted = db.execute("SELECT cyclone.submit('slow', '{}', interval '1 minute') AS id").fetchone()
    assert submitted is not None
    run_id = submitted["id"]
    db.execute("SELECT cyclone.advance_time('2 minutes')")
    db.execute("SELECT cyclone.enforce_deadlines()")
    client = login("cyclone_client")
    client.execute("SET search_path = cyclone, public")
    steps = client.execute(DEADLINE_STEPS).fetchall()
    assert [(r["run_id"], r["node"], r["error"]) for r in steps] == [(run_id, "work", "run deadline exceeded")]
    runs = client.execute(DEADLINE_RUNS).fetchall()
    assert [(r["id"], r["workflow"]) for r in runs] == [(run_id, "slow")]


def test_an_admin_login_operates_and_reads_but_writes_no_table(db: Conn, login: Callable[[str], Conn]) -> None:
    define(db, "one", [{"name": "work"}])
    run_id = submit(db, "one")
    admin = login("cyclone_admin")
    assert admin.execute("SELECT cyclone.pause(%s) AS ok", (run_id,)).fetchone() == {"ok": True}
    assert admin.execute("SELECT cyclone.cancel(%s, 'admin test') AS ok", (run_id,)).fetchone() == {"ok": True}
    admin.execute("SELECT cyclone.advance_time('1 minute')")
    assert admin.execute("SELECT count(*) AS n FROM cyclone.cyclone_audit").fetchone() == {"n": 2}
    assert admin.execute("SELECT actor FROM cyclone.cyclone_audit LIMIT 1").fetchone() == {
        "actor": admin.info.user}, "the audit trail names the login, not the function owner"
    for rel in engine_relations(db):
        if not is_view(rel):
            assert refused(admin, sql.SQL("DELETE FROM {}").format(sql.SQL(rel))), rel
    assert refused(admin, "UPDATE cyclone.cyclone_runs SET state = 'running'")


# -- no SQL from arguments ----------------------------------------------------------------


def test_the_functions_take_no_sql_from_their_arguments(db: Conn, login: Callable[[str], Conn]) -> None:
    """A worker cannot read another schema through the functions: text that
    looks like SQL is stored and returned as data, never run."""
    db.execute("CREATE SCHEMA secret")
    db.execute("CREATE TABLE secret.data (v text)")
    db.execute("INSERT INTO secret.data VALUES ('the crown jewels')")
    worker = login("cyclone_worker")
    assert refused(worker, "SELECT * FROM secret.data")

    steal = "x'); SELECT v FROM secret.data; --"
    nodes = [{"name": steal, "handler": "(SELECT v FROM secret.data)"},
             {"name": "$$ || (SELECT v FROM secret.data) || $$", "deps": [steal]}]
    worker.execute("SELECT cyclone.define_workflow(%s, %s)", (steal, Jsonb({"nodes": nodes})))
    run_id = submit(db, steal)
    rows = worker.execute("SELECT * FROM cyclone.claim(%s, %s::text[], 10, '30 seconds')",
                          (steal, ["(SELECT v FROM secret.data)", steal])).fetchall()
    assert [(r["node"], r["handler"]) for r in rows] == [(steal, "(SELECT v FROM secret.data)")]
    done = worker.execute("SELECT cyclone.complete(%s, %s, %s, %s) AS ok",
                          (rows[0]["step_id"], steal, rows[0]["lease_generation"], Jsonb(steal))).fetchone()
    assert done == {"ok": True}
    everything = db.execute("SELECT (SELECT jsonb_agg(s) FROM cyclone.cyclone_steps s)::text AS s,"
                            " (SELECT jsonb_agg(w) FROM cyclone.cyclone_workflows w)::text AS w").fetchone()
    assert everything is not None and "crown jewels" not in everything["s"] + everything["w"]
    row = db.execute("SELECT lease_owner FROM cyclone.cyclone_steps WHERE run_id = %s AND state = 'available'",
                     (run_id,)).fetchone()
    assert row == {"lease_owner": None}
    assert db.execute("SELECT count(*) AS n FROM secret.data").fetchone() == {"n": 1}


# -- pinned search_path ---------------------------------------------------------------------

HOSTILE = """
CREATE TABLE public.hits (what text, at timestamptz DEFAULT clock_timestamp());
GRANT ALL ON public.hits TO PUBLIC;
CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE sql VOLATILE AS
  $$ INSERT INTO public.hits (what) VALUES ('now'); SELECT timestamptz '2000-01-01' $$;
CREATE FUNCTION public.pg_notify(text, text) RETURNS void LANGUAGE sql VOLATILE AS
  $$ INSERT INTO public.hits (what) VALUES ('pg_notify') $$;
CREATE FUNCTION public.gen_random_uuid() RETURNS uuid LANGUAGE sql VOLATILE AS
  $$ INSERT INTO public.hits (what) VALUES ('gen_random_uuid');
     SELECT uuid '00000000-0000-0000-0000-000000000000' $$;
CREATE FUNCTION public.text_eq_hit(text, text) RETURNS boolean LANGUAGE sql VOLATILE AS
  $$ INSERT INTO public.hits (what) VALUES ('= text'); SELECT true $$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.text_eq_hit);
CREATE FUNCTION public.bigint_hit(bigint, bigint) RETURNS boolean LANGUAGE sql VOLATILE AS
  $$ INSERT INTO public.hits (what) VALUES ('= bigint'); SELECT true $$;
CREATE OPERATOR public.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.bigint_hit);
CREATE FUNCTION public.uuid_hit(uuid, uuid) RETURNS boolean LANGUAGE sql VOLATILE AS
  $$ INSERT INTO public.hits (what) VALUES ('= uuid'); SELECT true $$;
CREATE OPERATOR public.= (LEFTARG = uuid, RIGHTARG = uuid, FUNCTION = public.uuid_hit);
CREATE TABLE public.cyclone_steps (LIKE cyclone.cyclone_steps);
CREATE TABLE public.cyclone_runs (LIKE cyclone.cyclone_runs);
CREATE TABLE public.cyclone_workflows (LIKE cyclone.cyclone_workflows);
CREATE TABLE public.clock (LIKE cyclone.clock);
INSERT INTO public.clock VALUES (true, '-20 years');
GRANT ALL ON public.cyclone_steps, public.cyclone_runs, public.cyclone_workflows, public.clock TO PUBLIC;
"""


def hits(db: Conn) -> list[str]:
    return [r["what"] for r in db.execute("SELECT what FROM public.hits ORDER BY at")]


def test_hostile_objects_in_public_change_nothing_when_the_caller_puts_public_first(
    db: Conn, login: Callable[[str], Conn]
) -> None:
    db.execute(HOSTILE)
    define(db, "one", [{"name": "work"}, {"name": "gate", "kind": "wait", "deps": ["work"]}])
    worker, client, admin = login("cyclone_worker"), login("cyclone_client"), login("cyclone_admin")
    for c in (worker, client, admin):
        c.execute("SET search_path = public, pg_catalog, cyclone")

    # The trap is live: the caller's own unqualified SQL falls into it.
    assert worker.execute("SELECT now() AS t").fetchone() == {"t": db.execute(
        "SELECT timestamptz '2000-01-01' AS t").fetchone()["t"]}  # type: ignore[index]
    assert worker.execute("SELECT 'a'::text = 'b'::text AS eq").fetchone() == {"eq": True}
    assert hits(db) == ["now", "= text"]
    db.execute("TRUNCATE public.hits")
    db.execute("INSERT INTO public.cyclone_steps SELECT * FROM cyclone.cyclone_steps")  # nothing yet

    run_id = client.execute("SELECT cyclone.submit('one', '{\"k\": 1}', '1 hour') AS id").fetchone()["id"]  # type: ignore[index]
    assert run_id != uuid.UUID(int=0)
    claimed = worker.execute("SELECT * FROM cyclone.claim('w', NULL, 10, '30 seconds')").fetchall()
    assert [(r["run_id"], r["node"]) for r in claimed] == [(run_id, "work")]
    sid, gen = claimed[0]["step_id"], claimed[0]["lease_generation"]
    assert worker.execute("SELECT cyclone.renew(%s, 'w', %s + 1) AS ok", (sid, gen)).fetchone() == {"ok": False}
    assert worker.execute("SELECT cyclone.complete(%s, 'someone else', %s, '{}') AS ok",
                          (sid, gen)).fetchone() == {"ok": False}
    assert worker.execute("SELECT cyclone.complete(%s, 'w', %s, '{}') AS ok", (sid, gen)).fetchone() == {"ok": True}
    assert client.execute("SELECT cyclone.signal(%s, 'gate') AS ok", (run_id,)).fetchone() == {"ok": True}
    worker.execute("SELECT cyclone.tick()")
    worker.execute("SELECT cyclone.define_workflow('two', '{\"nodes\": [{\"name\": \"a\"}]}')")
    other = client.execute("SELECT cyclone.submit('two') AS id").fetchone()["id"]  # type: ignore[index]
    assert admin.execute("SELECT cyclone.cancel(%s, 'x') AS ok", (other,)).fetchone() == {"ok": True}
    assert admin.execute("SELECT cyclone.retry_all(%s) AS n", (other,)).fetchone() == {"n": 0}
    admin.execute("SELECT cyclone.advance_time('1 second')")

    assert hits(db) == [], "a SECURITY DEFINER function resolved a name in public"
    run = db.execute("SELECT state, created_at > pg_catalog.now() - interval '1 hour' AS recent,"
                     " deadline_at - created_at AS deadline FROM cyclone.cyclone_runs WHERE id = %s",
                     (run_id,)).fetchone()
    assert run is not None and (run["state"], run["recent"]) == ("completed", True)
    assert str(run["deadline"]) == "1:00:00"
    assert db.execute("SELECT count(*) AS n FROM public.cyclone_runs").fetchone() == {"n": 0}
    assert db.execute("SELECT time_offset FROM public.clock").fetchone()["time_offset"].days < 0  # type: ignore[index]


def test_temp_objects_of_the_caller_change_nothing(db: Conn, login: Callable[[str], Conn]) -> None:
    define(db, "one", [{"name": "work"}])
    run_id = submit(db, "one")
    worker = login("cyclone_worker")
    worker.execute("CREATE TEMP TABLE cyclone_steps (id bigint, run_id uuid, state text, handler text)")
    worker.execute("INSERT INTO pg_temp.cyclone_steps VALUES (999, gen_random_uuid(), 'available', 'work')")
    worker.execute("CREATE TEMP TABLE cyclone_runs (id uuid, state text)")
    worker.execute("CREATE TEMP TABLE clock (singleton boolean, time_offset interval)")
    worker.execute("INSERT INTO pg_temp.clock VALUES (true, '100 years')")
    worker.execute("SET search_path = pg_temp, cyclone, public")
    rows = worker.execute("SELECT * FROM cyclone.claim('w', NULL, 10)").fetchall()
    assert [(r["run_id"], r["node"]) for r in rows] == [(run_id, "work")]
    now = worker.execute("SELECT cyclone.now() - pg_catalog.now() AS skew").fetchone()
    assert now == {"skew": db.execute("SELECT interval '0' AS i").fetchone()["i"]}  # type: ignore[index]
