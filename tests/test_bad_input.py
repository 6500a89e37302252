"""Bad input everywhere: property-based tests (hypothesis) over the SQL API.

- ``define_workflow``: random DAGs are accepted and stored as given; random
  cycles and dangling deps are refused with 22023 and write nothing; any JSON
  at all is either accepted or refused with 22023 (never another error).
- ``submit``: odd JSON round-trips; an input over the 1 MiB limit is 22023
  with a message naming the limit; NUL characters are refused by PostgreSQL.
- intervals (deadlines, leases, retry delays, definition timeouts): accepted
  with their documented meaning or refused with a class-22 error.
- NULL in every argument of every public function (enumerated from pg_proc,
  so a new function cannot escape): 22004 naming the argument, or the
  documented meaning of NULL, never a silent NULL result.
- Hostile names (quotes, semicolons, unicode) travel end to end through
  parameterised SQL only; the CLI never shows a traceback whatever it is fed.
"""

from __future__ import annotations

import ast
import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal
from uuid import UUID

import psycopg
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import errors as pg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from cyclone_py import Client, Worker, Workflow, cli
from cyclone_py.context import StepContext

Conn = psycopg.Connection[Any]
Row = dict[str, Any]
ROOT = Path(__file__).resolve().parent.parent

SETTINGS = settings(max_examples=50, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture
def db(dsn: str) -> Iterator[Conn]:
    with psycopg.connect(dsn, autocommit=True, row_factory=dict_row) as c:
        yield c


def define(c: Conn, name: str, definition: Any) -> None:
    c.execute("SELECT cyclone.define_workflow(%s, %s)", (name, Jsonb(definition)))


def stored(c: Conn, name: str) -> Any:
    row = c.execute("SELECT definition FROM cyclone.cyclone_workflows WHERE name = %s", (name,)).fetchone()
    return None if row is None else row["definition"]


def unique(prefix: str = "wf") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


# -- strategies -------------------------------------------------------------------

# Any character PostgreSQL text can hold (no NUL, no lone surrogates).
NO_SURROGATES: list[Literal["Cs"]] = ["Cs"]
TEXT_CHARS = st.characters(blacklist_categories=NO_SURROGATES, blacklist_characters="\x00")
# Names (workflow, node, handler, signal): no control characters (category Cc).
NAME_CHARS = st.characters(blacklist_categories=["Cs", "Cc"])
NAMES = st.text(NAME_CHARS, min_size=1, max_size=12)
JSON_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(TEXT_CHARS, max_size=20))
JSON = st.recursive(
    JSON_SCALARS,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(TEXT_CHARS, max_size=8), children,
                                                                       max_size=5),
    max_leaves=20,
)


@st.composite
def dags(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Nodes with unique unicode names; each depends on some of the nodes drawn
    before it (so: acyclic), then shuffled."""
    names = draw(st.lists(NAMES, min_size=1, max_size=8, unique=True))
    nodes = []
    for i, name in enumerate(names):
        deps = draw(st.lists(st.sampled_from(names[:i]), unique=True, max_size=i)) if i else []
        nodes.append({"name": name, "deps": deps})
    return draw(st.permutations(nodes))


@st.composite
def cyclic_graphs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A DAG plus a ring v0 -> v1 -> ... -> v0 over some of its nodes (a
    self-dependency when the ring has one node)."""
    nodes = [dict(n, deps=list(n["deps"])) for n in draw(dags())]
    ring = draw(st.lists(st.sampled_from([n["name"] for n in nodes]), min_size=1, max_size=len(nodes), unique=True))
    by_name = {n["name"]: n for n in nodes}
    for i, name in enumerate(ring):
        after = by_name[ring[(i + 1) % len(ring)]]
        if name not in after["deps"]:
            after["deps"].append(name)
    return nodes


INTERVAL_TEXT = st.one_of(
    st.builds(lambda n, unit: f"{n} {unit}",
              st.integers(min_value=-(10**12), max_value=10**12),
              st.sampled_from(["microseconds", "ms", "seconds", "s", "minutes", "hours", "days", "weeks",
                               "months", "years", "centuries", "millennia", "fortnights"])),
    st.sampled_from(["", " ", "0", "1", "-1", "P1D", "PT0S", "1 day ago", "infinity", "-infinity", "epoch",
                     "1e400 seconds", "NaN", "30 seconds; DROP TABLE cyclone.cyclone_runs", "00:00:30",
                     "178000000 years", "1 year -365 days", "1 month -30 days"]),
    st.text(TEXT_CHARS, max_size=20),
)

NODE_KEYS = ["name", "kind", "handler", "deps", "on_dep_failure", "max_attempts", "priority", "timeout",
             "signal", "workflow", "max_wait", "bogus"]
PLAUSIBLE = {
    "kind": st.sampled_from(["task", "wait", "child", "Task", ""]),
    "on_dep_failure": st.sampled_from(["fail_run", "cancel_branch", "ignore"]),
    "max_attempts": st.integers(min_value=-3, max_value=2**40) | st.floats(allow_nan=False, allow_infinity=False),
    "priority": st.integers(min_value=-(2**40), max_value=2**40) | st.floats(allow_nan=False, allow_infinity=False),
    "timeout": INTERVAL_TEXT,
    "max_wait": INTERVAL_TEXT,
}


@st.composite
def fuzzed_definitions(draw: st.DrawFn) -> Any:
    """Definitions shaped roughly like SPEC section 4 with any value in any field."""
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON)
    names = draw(st.lists(NAMES, min_size=1, max_size=4))
    nodes = []
    for name in names:
        node: dict[str, Any] = {"name": name}
        for key in draw(st.lists(st.sampled_from(NODE_KEYS), unique=True, max_size=5)):
            if key == "deps":
                node[key] = draw(st.lists(st.sampled_from(names) | NAMES, max_size=3) | JSON)
            elif key in PLAUSIBLE and draw(st.booleans()):
                node[key] = draw(PLAUSIBLE[key])
            else:
                node[key] = draw(JSON)
        nodes.append(node)
    definition: dict[str, Any] = {"nodes": nodes if draw(st.integers(0, 9)) else draw(JSON)}
    if draw(st.booleans()):
        definition["max_attempts"] = draw(PLAUSIBLE["max_attempts"] | JSON)
    return definition


# -- define_workflow ------------------------------------------------------------------


@SETTINGS
@given(nodes=dags())
def test_any_dag_is_accepted_stored_as_given_and_submits_with_only_its_roots_available(
    db: Conn, nodes: list[dict[str, Any]]
) -> None:
    name = unique()
    define(db, name, {"nodes": nodes})
    saved = stored(db, name)
    assert [(n["name"], n["deps"]) for n in saved["nodes"]] == [(n["name"], n["deps"]) for n in nodes]
    row = db.execute("SELECT cyclone.submit(%s) AS id", (name,)).fetchone()
    assert row is not None
    states = {r["node"]: r["state"] for r in db.execute(
        "SELECT node, state FROM cyclone.cyclone_steps WHERE run_id = %s", (row["id"],))}
    assert states == {n["name"]: ("available" if not n["deps"] else "pending") for n in nodes}


@SETTINGS
@given(nodes=cyclic_graphs())
def test_any_cycle_is_refused_with_22023_and_writes_nothing(db: Conn, nodes: list[dict[str, Any]]) -> None:
    name = unique()
    with pytest.raises(pg.InvalidParameterValue, match="cycle"):
        define(db, name, {"nodes": nodes})
    assert stored(db, name) is None


@SETTINGS
@given(nodes=dags(), missing=NAMES, data=st.data())
def test_a_dangling_dep_is_refused_with_22023_and_keeps_the_old_definition(
    db: Conn, nodes: list[dict[str, Any]], missing: str, data: st.DataObject
) -> None:
    names = {n["name"] for n in nodes}
    while missing in names:
        missing += "\u2020"
    victim = data.draw(st.sampled_from(range(len(nodes))))
    bad = [dict(n, deps=[*n["deps"], missing]) if i == victim else n for i, n in enumerate(nodes)]
    name = unique()
    define(db, name, {"nodes": [{"name": "old"}]})
    with pytest.raises(pg.InvalidParameterValue, match="unknown dep"):
        define(db, name, {"nodes": bad})
    assert [n["name"] for n in stored(db, name)["nodes"]] == ["old"]


@SETTINGS
@given(definition=fuzzed_definitions())
def test_any_json_definition_is_either_accepted_or_refused_with_22023(db: Conn, definition: Any) -> None:
    name = unique()
    try:
        define(db, name, definition)
    except pg.InvalidParameterValue:
        assert stored(db, name) is None
        return
    saved = stored(db, name)
    assert saved is not None
    for node in saved["nodes"]:  # what was accepted was normalised, not passed through
        assert node["kind"] in ("task", "wait", "child")
        assert isinstance(node["max_attempts"], int) and node["max_attempts"] >= 1
        assert node["on_dep_failure"] in ("fail_run", "cancel_branch")


@SETTINGS
@given(field=st.sampled_from(["timeout", "max_wait"]), text=INTERVAL_TEXT)
def test_a_definition_interval_is_a_positive_interval_or_refused_with_22023(db: Conn, field: str, text: str) -> None:
    node = {"name": "n", field: text} if field == "timeout" else {"name": "n", "kind": "wait", field: text}
    name = unique()
    try:
        define(db, name, {"nodes": [node]})
    except pg.InvalidParameterValue:
        assert stored(db, name) is None
        return
    value = stored(db, name)["nodes"][0][field]
    row = db.execute("SELECT %s::interval > interval '0' AS positive", (value,)).fetchone()
    assert row is not None and row["positive"], f"{text!r} was stored as {value!r}"


# -- submit ---------------------------------------------------------------------------------


@pytest.fixture
def one(db: Conn) -> str:
    define(db, "one", {"nodes": [{"name": "work"}]})
    return "one"


# A run input is a JSON object (issue 30): any JSON inside one round-trips.
JSON_OBJECTS = st.dictionaries(st.text(TEXT_CHARS, max_size=8), JSON, max_size=5)


@SETTINGS
@given(value=JSON_OBJECTS)
def test_any_json_input_round_trips_through_submit_get_run_and_claim(db: Conn, one: str, value: Any) -> None:
    row = db.execute("SELECT cyclone.submit(%s, %s) AS id", (one, Jsonb(value))).fetchone()
    assert row is not None
    run = db.execute("SELECT input FROM cyclone.get_run(%s)", (row["id"],)).fetchone()
    assert run is not None and exact(run["input"]) == exact(value)
    claimed = db.execute("SELECT c.input FROM cyclone.claim('w', ARRAY['work'], 1000) c WHERE c.run_id = %s",
                         (row["id"],)).fetchone()
    assert claimed is not None and exact(claimed["input"]) == exact(value)


@SETTINGS
@given(value=JSON.filter(lambda v: not isinstance(v, dict)))
def test_an_input_that_is_not_a_json_object_is_refused_with_22023_and_nothing_written(
        db: Conn, one: str, value: Any) -> None:
    before = count_runs(db)
    with pytest.raises(pg.InvalidParameterValue, match="p_input must be a JSON object"):
        db.execute("SELECT cyclone.submit(%s, %s)", (one, Jsonb(value)))
    with pytest.raises(pg.InvalidParameterValue, match="input 2 must be a JSON object"):
        db.execute("SELECT cyclone.submit_many(%s, ARRAY[%s, %s]::jsonb[])", (one, Jsonb({}), Jsonb(value)))
    assert count_runs(db) == before


def exact(value: Any) -> Any:
    """JSON as jsonb holds it: numbers are exact decimals (1e16 and 10000000000000000
    are the same number), so compare through Decimal."""
    return json.loads(json.dumps(value), parse_float=Decimal, parse_int=Decimal)


def count_runs(c: Conn) -> int:
    row = c.execute("SELECT count(*) AS n FROM cyclone.cyclone_runs").fetchone()
    assert row is not None
    return int(row["n"])


def test_an_input_over_one_mib_is_refused_with_22023_naming_the_limit(db: Conn, one: str) -> None:
    huge = {"blob": uuid.uuid4().hex * (1_100_000 // 32)}
    with pytest.raises(pg.InvalidParameterValue, match="the limit is 1 MiB"):
        db.execute("SELECT cyclone.submit(%s, %s)", (one, Jsonb(huge)))
    with pytest.raises(pg.InvalidParameterValue, match="the limit is 1 MiB"):
        db.execute("SELECT cyclone.submit_many(%s, ARRAY[%s, %s]::jsonb[])", (one, Jsonb({}), Jsonb(huge)))
    assert count_runs(db) == 0, "a refused batch wrote nothing"
    row = db.execute("SELECT cyclone.submit(%s) AS id", (one,)).fetchone()
    assert row is not None
    with pytest.raises(pg.InvalidParameterValue, match="the limit is 1 MiB"):
        db.execute("SELECT cyclone.signal(%s, 'x', %s)", (row["id"], Jsonb(huge)))
    just_under = {"blob": "x" * 1_000_000}
    db.execute("SELECT cyclone.submit(%s, %s)", (one, Jsonb(just_under)))
    assert count_runs(db) == 2


def test_a_nul_character_in_json_is_refused_by_postgresql(db: Conn, one: str) -> None:
    with pytest.raises(pg.UntranslatableCharacter):
        db.execute("SELECT cyclone.submit(%s, %s)", (one, Jsonb({"a": "nul\x00here"})))
    assert count_runs(db) == 0


DELTAS = st.timedeltas(min_value=timedelta(days=-10**6), max_value=timedelta(days=10**8))


@SETTINGS
@given(deadline=DELTAS)
def test_a_deadline_is_set_when_positive_ignored_otherwise_or_refused_out_of_range(
    db: Conn, one: str, deadline: timedelta
) -> None:
    before = count_runs(db)
    try:
        run_id = db.execute("SELECT cyclone.submit(%s, '{}', %s) AS id", (one, deadline)).fetchone()
    except psycopg.DataError as exc:  # class 22 (pg.DataException is 22000 alone): over 1,000,000 days
        assert exc.sqlstate in ("22008", "22023"), exc.sqlstate
        assert deadline > timedelta(days=10**6)
        assert count_runs(db) == before
        return
    assert run_id is not None
    row = db.execute("SELECT deadline_at - created_at AS d FROM cyclone.cyclone_runs WHERE id = %s",
                     (run_id["id"],)).fetchone()
    assert row is not None
    assert row["d"] == (deadline if deadline > timedelta(0) else None)


@SETTINGS
@given(ttl=DELTAS)
def test_a_lease_ttl_must_be_positive(db: Conn, one: str, ttl: timedelta) -> None:
    db.execute("SELECT cyclone.submit(%s)", (one,))
    try:
        rows = db.execute("SELECT step_id, lease_generation FROM cyclone.claim('w', NULL, 1, %s)", (ttl,)).fetchall()
    except pg.InvalidParameterValue:  # not positive, or over 1 day (issue 30: 1,000 years was accepted)
        assert ttl <= timedelta(0) or ttl > timedelta(days=1)
        return
    assert timedelta(0) < ttl <= timedelta(days=1) and len(rows) == 1
    renewed = db.execute("SELECT cyclone.renew(%s, 'w', %s, %s) AS ok",
                         (rows[0]["step_id"], rows[0]["lease_generation"], ttl)).fetchone()
    assert renewed == {"ok": True}


@SETTINGS
@given(delay=DELTAS)
def test_a_retry_delay_must_not_be_negative(db: Conn, one: str, delay: timedelta) -> None:
    db.execute("SELECT cyclone.submit(%s)", (one,))
    c = db.execute("SELECT step_id, lease_generation FROM cyclone.claim('w', NULL, 1)").fetchone()
    assert c is not None
    try:
        row = db.execute("SELECT cyclone.fail(%s, 'w', %s, 'boom', 'error', %s) AS s",
                         (c["step_id"], c["lease_generation"], delay)).fetchone()
    except pg.InvalidParameterValue:  # negative, or over 1,000,000 days (issue 30: was a raw 22008)
        assert delay < timedelta(0) or delay > timedelta(days=10**6)
    else:
        assert delay >= timedelta(0) and row == {"s": "available"}
    db.execute("UPDATE cyclone.cyclone_steps SET state = 'cancelled', error_kind = 'cancelled', error = 'test',"
               " finished_at = now(), lease_owner = NULL, lease_expiry = NULL WHERE id = %s", (c["step_id"],))


# -- the limits and schedules (SPEC 12, 13) ------------------------------------------------

INTS = st.one_of(st.none(), st.integers(min_value=-(2**31), max_value=2**31 - 1))
PERIODS = st.one_of(st.none(), DELTAS)


@SETTINGS
@given(concurrency=INTS, rate=INTS, period=PERIODS)
def test_a_limit_is_stored_as_given_or_refused_with_22023_and_nothing_written(
        db: Conn, concurrency: int | None, rate: int | None, period: timedelta | None) -> None:
    db.execute("SELECT cyclone.define_limit('probe', 1)")
    valid = ((concurrency is not None or rate is not None)
             and (rate is None) == (period is None)
             and (concurrency is None or concurrency > 0)
             and (rate is None or rate > 0)
             and (period is None or timedelta(0) < period <= timedelta(days=366)))  # issue 30: at most 366 days
    try:
        db.execute("SELECT cyclone.define_limit('probe', %s, %s, %s)", (concurrency, rate, period))
    except pg.InvalidParameterValue:
        assert not valid
        row = db.execute("SELECT concurrency, rate, period FROM cyclone.cyclone_limits WHERE name = 'probe'").fetchone()
        assert row == {"concurrency": 1, "rate": None, "period": None}, "a refused call writes nothing"
        return
    except pg.DataException as exc:  # class 22: an interval past what PostgreSQL holds
        assert exc.sqlstate == "22008", exc.sqlstate
        return
    assert valid
    row = db.execute("SELECT concurrency, rate, period FROM cyclone.cyclone_limits WHERE name = 'probe'").fetchone()
    assert row == {"concurrency": concurrency, "rate": rate, "period": period}


CRON_FIELD = st.one_of(st.just("*"), st.integers(-5, 70).map(str), st.just("*/0"), st.just("1-"),
                       st.text(alphabet="0123456789*/,-LW#?", min_size=1, max_size=6))


@SETTINGS
@given(fields=st.lists(CRON_FIELD, min_size=0, max_size=7), timezone=st.sampled_from(
    ["UTC", "Europe/Paris", "Mars/Olympus", "", "America/New_York"]))
def test_a_schedule_is_accepted_or_refused_with_22023_and_nothing_written(
        db: Conn, one: str, fields: list[str], timezone: str) -> None:
    cron = " ".join(fields)
    try:
        db.execute("SELECT cyclone.schedule('probe', %s, %s, '{}', %s)", (cron, one, timezone))
    except pg.InvalidParameterValue as exc:
        assert exc.diag.message_primary, "a refusal says what is wrong"
        assert db.execute("SELECT count(*) AS n FROM cyclone.cyclone_schedules WHERE name = 'probe'").fetchone() \
            == {"n": 0}, "a refused schedule writes nothing"
        return
    row = db.execute("SELECT next_fire_at FROM cyclone.cyclone_schedules WHERE name = 'probe'").fetchone()
    assert row is not None
    db.execute("SELECT cyclone.unschedule('probe')")


def test_the_clock_refuses_to_move_backwards(db: Conn) -> None:
    with pytest.raises(pg.InvalidParameterValue):
        db.execute("SELECT cyclone.advance_time('-1 second')")


# -- NULL in every argument of every public function -------------------------------------


@dataclass
class Fixtures:
    """Fresh objects for one call: each NULL case gets its own run or step."""

    c: Conn

    def workflow(self) -> str:
        define(self.c, "nul", {"max_attempts": 3, "nodes": [
            {"name": "work"}, {"name": "gate", "kind": "wait", "signal": "go", "deps": ["work"]}]})
        return "nul"

    def run(self) -> UUID:
        self.workflow()
        row = self.c.execute("SELECT cyclone.submit('nul') AS id").fetchone()
        assert row is not None
        return UUID(str(row["id"]))

    def now(self) -> datetime:
        """The engine's clock (the windows of the console's reads of finished runs are around it)."""
        row: Row | None = self.c.execute("SELECT cyclone.now() AS now").fetchone()
        assert row is not None
        return row["now"]  # type: ignore[no-any-return]

    def claimed(self) -> Row:
        run_id = self.run()
        row: Row | None = self.c.execute("SELECT * FROM cyclone.claim('w', NULL, 1)").fetchone()
        assert row is not None and row["run_id"] == run_id
        return row

    def discarded(self) -> UUID:
        c = self.claimed()
        self.c.execute("SELECT cyclone.fail(%s, 'w', %s, 'boom', 'permanent')", (c["step_id"], c["lease_generation"]))
        return UUID(str(c["run_id"]))

    def schedule(self) -> str:
        self.workflow()
        self.c.execute("SELECT cyclone.schedule('nul-s', '@daily', 'nul')")
        return "nul-s"

    def paused_schedule(self) -> str:
        self.c.execute("SELECT cyclone.pause_schedule(%s)", (self.schedule(),))
        return "nul-s"

    def limit(self) -> str:
        self.c.execute("SELECT cyclone.define_limit('spare', 1)")
        return "spare"

    def paused(self) -> UUID:
        run_id = self.run()
        self.c.execute("SELECT cyclone.pause(%s)", (run_id,))
        return run_id


Args = Callable[[Fixtures], list[Any]]

FINISHED_RUNS = ("finished_runs(timestamp with time zone,timestamp with time zone,text,text,integer,"
                 "timestamp with time zone,uuid)")
SUBMIT = "submit(text,jsonb,interval,text,timestamp with time zone,text,integer,text,interval,interval,interval)"

# Valid arguments for every public function, in order (defaults spelled out).
VALID: dict[str, Args] = {
    "advance_time(interval)": lambda f: [timedelta(seconds=1)],
    "archive(integer)": lambda f: [10],
    "backfill(text,timestamp with time zone,timestamp with time zone)": lambda f: [
        f.schedule(), datetime(2020, 1, 1, tzinfo=UTC), datetime(2020, 1, 3, tzinfo=UTC)],
    "backoff(integer)": lambda f: [1],
    "cancel(uuid,text)": lambda f: [f.run(), "why"],
    "check_invariants()": lambda f: [],
    "claim(text,text[],integer,interval,text[])": lambda f: (
        f.run(), ["w", ["work"], 1, timedelta(seconds=30), ["nul"]])[1],
    "configure_shard(text,integer,integer[])": lambda f: ["nul-shard", 1, [0]],
    "complete(bigint,text,bigint,jsonb)": lambda f: (
        lambda c: [c["step_id"], "w", c["lease_generation"], Jsonb({"ok": True})])(f.claimed()),
    "complete_many(text,bigint[],bigint[],jsonb[])": lambda f: (
        lambda c: ["w", [c["step_id"]], [c["lease_generation"]], [Jsonb({})]])(f.claimed()),
    "define_limit(text,integer,integer,interval)": lambda f: ["lim", 3, 10, timedelta(minutes=1)],
    "define_workflow(text,jsonb)": lambda f: ["defined", Jsonb({"nodes": [{"name": "a"}]})],
    "drop_limit(text)": lambda f: [f.limit()],
    "enforce_deadlines(integer)": lambda f: [100],
    "explain_step(bigint)": lambda f: [f.claimed()["step_id"]],
    "fail(bigint,text,bigint,text,text,interval,text)": lambda f: (
        lambda c: [c["step_id"], "w", c["lease_generation"], "boom", "error", timedelta(seconds=1),
                   "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"])(f.claimed()),
    "get_run(uuid)": lambda f: [f.run()],
    "key_partition(text,text)": lambda f: ["nul", "key"],
    "list_dead_letters(text,text,integer)": lambda f: (f.discarded(), ["nul", "permanent", 10])[1],
    "list_runs(text,text,integer,timestamp with time zone)": lambda f: (
        f.run(), ["nul", "running", 10, datetime(2100, 1, 1, tzinfo=UTC)])[1],
    "list_steps(uuid)": lambda f: [f.run()],
    "metrics()": lambda f: [],
    "overview_gauges(integer)": lambda f: [100],
    "finished_per_minute(timestamp with time zone,timestamp with time zone)": lambda f: (
        lambda now: [now - timedelta(hours=1), now + timedelta(minutes=1)])(f.now()),
    FINISHED_RUNS: lambda f: (
        lambda run, now: [now - timedelta(hours=1), now + timedelta(hours=1), "nul", "failed", 10,
                          now + timedelta(hours=1), UUID(int=2**128 - 1)])(f.discarded(), f.now()),
    "next_fire(text,timestamp with time zone,text)": lambda f: ["@daily", datetime(2026, 1, 1, tzinfo=UTC), "UTC"],
    "now()": lambda f: [],
    "pause(uuid)": lambda f: [f.run()],
    "pause_schedule(text)": lambda f: [f.schedule()],
    "prune(interval,integer)": lambda f: [timedelta(days=1), 10],
    "register_worker(text,jsonb)": lambda f: ["nul-w", Jsonb({"handlers": ["work"]})],
    "deregister_worker(text)": lambda f: ["nul-w"],
    "release(bigint,text,bigint)": lambda f: (lambda c: [c["step_id"], "w", c["lease_generation"]])(f.claimed()),
    "renew(bigint,text,bigint,interval)": lambda f: (
        lambda c: [c["step_id"], "w", c["lease_generation"], timedelta(seconds=30)])(f.claimed()),
    "renew_many(text,bigint[],bigint[],interval)": lambda f: (
        lambda c: ["w", [c["step_id"]], [c["lease_generation"]], timedelta(seconds=30)])(f.claimed()),
    "reset_time()": lambda f: [],
    "resume(uuid)": lambda f: [f.paused()],
    "resume_schedule(text)": lambda f: [f.paused_schedule()],
    "retry(uuid,text,integer,text)": lambda f: [f.discarded(), "work", 1, "why"],
    "retry_all(uuid,text)": lambda f: [f.discarded(), "why"],
    "run_partition(uuid)": lambda f: [f.run()],
    "schedule(text,text,text,jsonb,text,text,interval,interval)": lambda f: [
        "nul-s", "0 3 * * *", f.workflow(), Jsonb({"a": 1}), "Europe/Berlin", "skip", timedelta(hours=1),
        timedelta(hours=1)],
    "schedule_partition(text)": lambda f: ["nul-s"],
    "schedule_tick(text,integer)": lambda f: ["* * * * *", 0],
    "signal(uuid,text,jsonb)": lambda f: [f.run(), "go", Jsonb({"p": 1})],
    SUBMIT: lambda f: [
        f.workflow(), Jsonb({}), timedelta(hours=1), unique("key"), None,
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", 5, None, None, None, None],
    "emit_event(text,jsonb)": lambda f: [unique("event"), Jsonb({"paid": 1})],
    "signal_with_start(text,text,text,jsonb,jsonb)": lambda f: [
        f.workflow(), unique("swst"), "go", Jsonb({"p": 1}), Jsonb({"n": 1})],
    "rerun(uuid,text,text)": lambda f: [f.discarded(), "work", "why"],
    "submit_many(text,jsonb[],interval,integer)": lambda f: [
        f.workflow(), [Jsonb({}), Jsonb({})], timedelta(hours=1), -5],
    "snooze(bigint,text,bigint,interval)": lambda f: (
        lambda c: [c["step_id"], "w", c["lease_generation"], timedelta(minutes=1)])(f.claimed()),
    "progress(bigint,text,bigint,jsonb)": lambda f: (
        lambda c: [c["step_id"], "w", c["lease_generation"], Jsonb({"done": 1})])(f.claimed()),
    "step_partition(bigint)": lambda f: [f.claimed()["step_id"]],
    "sweep(integer,integer)": lambda f: [0, 100],
    "tick(integer)": lambda f: [0],
    "unschedule(text)": lambda f: [f.schedule()],
    "unschedule_tick()": lambda f: [],
    "version()": lambda f: [],
}

Check = Callable[[Conn, list[Any], list[Row]], bool]


def _step(c: Conn, step_id: int) -> Row:
    row: Row | None = c.execute("SELECT * FROM cyclone.cyclone_steps WHERE id = %s", (step_id,)).fetchone()
    assert row is not None
    return row


def _audit_reasons(c: Conn, run_id: UUID) -> list[Any]:
    return [r["reason"] for r in c.execute("SELECT reason FROM cyclone.cyclone_audit WHERE run_id = %s", (run_id,))]


def _run(c: Conn, run_id: Any) -> Row:
    row: Row | None = c.execute("SELECT * FROM cyclone.cyclone_runs WHERE id = %s", (run_id,)).fetchone()
    assert row is not None
    return row


def _limit(c: Conn, name: str) -> Row | None:
    return c.execute("SELECT concurrency, rate, period FROM cyclone.cyclone_limits WHERE name = %s", (name,)).fetchone()


# Arguments whose NULL is refused as a bad value (22023), with what the message says: SPEC 12's p_rate
# and p_period come together; SPEC 17's signal_with_start needs a key.
NULL_IS_BAD: dict[tuple[str, str], str] = {
    ("define_limit(text,integer,integer,interval)", "p_rate"): "come together",
    ("define_limit(text,integer,integer,interval)", "p_period"): "come together",
    ("signal_with_start(text,text,text,jsonb,jsonb)", "p_idempotency_key"): "p_idempotency_key must be a non-empty key",
    (FINISHED_RUNS, "p_after_at"): "go together",
    (FINISHED_RUNS, "p_after_id"): "go together",
}


# Arguments where SQL NULL has a documented meaning (SPEC and COMMENT ON), and
# what the call must then have done.
NULL_MEANS: dict[tuple[str, str], Check] = {
    ("cancel(uuid,text)", "p_reason"): lambda c, a, r: (
        _run(c, a[0])["state"] == "cancelled" and _audit_reasons(c, a[0]) == [None]),
    ("retry(uuid,text,integer,text)", "p_reason"): lambda c, a, r: _audit_reasons(c, a[0]) == [None],
    ("retry_all(uuid,text)", "p_reason"): lambda c, a, r: r == [{"retry_all": 1}],
    # NULL handlers: any handler.
    ("claim(text,text[],integer,interval,text[])", "p_handlers"): lambda c, a, r: (
        len(r) == 1 and r[0]["node"] == "work"),
    # NULL workflows: any workflow.
    ("claim(text,text[],integer,interval,text[])", "p_workflows"): lambda c, a, r: (
        len(r) == 1 and r[0]["node"] == "work"),
    # NULL output: completed with no output.
    ("complete(bigint,text,bigint,jsonb)", "p_output"): lambda c, a, r: (
        r == [{"complete": True}] and _step(c, a[0])["state"] == "completed" and _step(c, a[0])["output"] is None),
    # NULL retry_in: the engine's default backoff.
    ("fail(bigint,text,bigint,text,text,interval,text)", "p_retry_in"): lambda c, a, r: (
        r == [{"fail": "available"}] and _step(c, a[0])["scheduled_at"] > _step(c, a[0])["started_at"]),
    # NULL span: the failure keeps none (the next attempt's span links to nothing).
    ("fail(bigint,text,bigint,text,text,interval,text)", "p_span"): lambda c, a, r: (
        r == [{"fail": "available"}] and _step(c, a[0])["failed_span"] is None),
    ("signal(uuid,text,jsonb)", "p_payload"): lambda c, a, r: r == [{"signal": True}],
    # SPEC 12: a NULL concurrency is no concurrency bound (the rate still applies).
    ("define_limit(text,integer,integer,interval)", "p_concurrency"): lambda c, a, r: (
        _limit(c, a[0]) == {"concurrency": None, "rate": 10, "period": timedelta(minutes=1)}),
    (SUBMIT, "p_deadline"): lambda c, a, r: _run(c, r[0]["submit"])["deadline_at"] is None,
    (SUBMIT, "p_idempotency_key"): lambda c, a, r: _run(c, r[0]["submit"])["idempotency_key"] is None,
    (SUBMIT, "p_run_at"): lambda c, a, r: _run(c, r[0]["submit"])["state"] == "running",
    # NULL traceparent: the run is in no trace.
    (SUBMIT, "p_traceparent"): lambda c, a, r: _run(c, r[0]["submit"])["traceparent"] is None,
    # SPEC 17: no debounce (key, interval, bound), and a key that dedupes against any kept run of it.
    (SUBMIT, "p_debounce_key"): lambda c, a, r: _run(c, r[0]["submit"])["debounce_key"] is None,
    (SUBMIT, "p_debounce"): lambda c, a, r: _run(c, r[0]["submit"])["debounce_key"] is None,
    (SUBMIT, "p_debounce_max"): lambda c, a, r: _run(c, r[0]["submit"])["debounce_key"] is None,
    (SUBMIT, "p_idempotency_window"): lambda c, a, r: _run(c, r[0]["submit"])["idempotency_key"] == a[3],
    # NULL payload: an event without one, still recorded.
    ("emit_event(text,jsonb)", "p_payload"): lambda c, a, r: (
        r == [{"emit_event": 0}] and c.execute("SELECT payload FROM cyclone.cyclone_events WHERE key = %s",
                                               (a[0],)).fetchall() == [{"payload": None}]),
    ("signal_with_start(text,text,text,jsonb,jsonb)", "p_payload"): lambda c, a, r: (
        _run(c, r[0]["signal_with_start"])["idempotency_key"] == a[1]),
    # NULL node: every node runs again; NULL reason: audited without one.
    ("rerun(uuid,text,text)", "p_from_node"): lambda c, a, r: _run(c, r[0]["rerun"])["rerun_of"] == a[0],
    ("rerun(uuid,text,text)", "p_reason"): lambda c, a, r: _audit_reasons(c, r[0]["rerun"]) == [None],
    # NULL deadline: the schedule's runs have none.
    ("schedule(text,text,text,jsonb,text,text,interval,interval)", "p_deadline"): lambda c, a, r: (
        c.execute("SELECT deadline FROM cyclone.cyclone_schedules WHERE name = 'nul-s'").fetchone() == {
            "deadline": None}),
    # The partition helpers: NULL in, NULL out (sql-reference.md#shards).
    ("run_partition(uuid)", "p_run_id"): lambda c, a, r: r == [{"run_partition": None}],
    ("step_partition(bigint)", "p_step_id"): lambda c, a, r: r == [{"step_partition": None}],
    ("key_partition(text,text)", "p_workflow"): lambda c, a, r: r == [{"key_partition": None}],
    ("key_partition(text,text)", "p_idempotency_key"): lambda c, a, r: r == [{"key_partition": None}],
    ("schedule_partition(text)", "p_name"): lambda c, a, r: r == [{"schedule_partition": None}],
    # The listings' filters: NULL is no filter.
    ("list_runs(text,text,integer,timestamp with time zone)", "p_workflow"): lambda c, a, r: len(r) > 0,
    # The console's finished runs: NULL workflow or state is no filter.
    (FINISHED_RUNS, "p_workflow"): lambda c, a, r: len(r) > 0,
    (FINISHED_RUNS, "p_state"): lambda c, a, r: len(r) > 0,
    ("list_runs(text,text,integer,timestamp with time zone)", "p_state"): lambda c, a, r: len(r) > 0,
    ("list_runs(text,text,integer,timestamp with time zone)", "p_before"): lambda c, a, r: len(r) > 0,
    ("list_dead_letters(text,text,integer)", "p_workflow"): lambda c, a, r: len(r) > 0,
    ("list_dead_letters(text,text,integer)", "p_error_kind"): lambda c, a, r: len(r) > 0,
    # NULL progress: the step's progress is cleared.
    ("progress(bigint,text,bigint,jsonb)", "p_progress"): lambda c, a, r: (
        r == [{"progress": True}] and _step(c, a[0])["progress"] is None),
    ("submit_many(text,jsonb[],interval,integer)", "p_deadline"): lambda c, a, r: (
        len(r) == 2 and all(_run(c, x["submit_many"])["deadline_at"] is None for x in r)),
}


@dataclass(frozen=True)
class Signature:
    key: str  # name(argtypes), as in VALID
    name: str
    arg_names: list[str]
    arg_types: list[str]


def public_functions(c: Conn) -> list[Signature]:
    rows = c.execute("""
        SELECT p.proname AS name,
               p.proname || '(' || coalesce((SELECT string_agg(format_type(t, NULL), ',' ORDER BY i)
                                              FROM unnest(p.proargtypes) WITH ORDINALITY AS a(t, i)), '') || ')' AS key,
               coalesce(p.proargnames, '{}') AS arg_names,
               coalesce((SELECT array_agg(format_type(t, NULL) ORDER BY i)
                           FROM unnest(p.proargtypes) WITH ORDINALITY AS a(t, i)), '{}') AS arg_types
          FROM pg_proc p
         WHERE p.pronamespace = 'cyclone'::regnamespace AND p.proname !~ '^_'
         ORDER BY 2""").fetchall()
    return [Signature(r["key"], r["name"], list(r["arg_names"])[: len(r["arg_types"])], list(r["arg_types"]))
            for r in rows]


def test_every_public_function_is_covered_by_the_null_tests(db: Conn) -> None:
    """A function added to the schema must be added to VALID (and so to the NULL tests)."""
    assert sorted(s.key for s in public_functions(db)) == sorted(VALID)


def test_null_in_any_argument_is_22004_naming_it_or_its_documented_meaning(db: Conn) -> None:
    f = Fixtures(db)
    cases = 0
    for sig in public_functions(db):
        for i, arg in enumerate(sig.arg_names):
            args = VALID[sig.key](f)
            args[i] = None
            placeholders = ", ".join(f"%s::{t}" for t in sig.arg_types)
            query = f"SELECT * FROM cyclone.{sig.name}({placeholders})"
            check = NULL_MEANS.get((sig.key, arg))
            cases += 1
            if (sig.key, arg) in NULL_IS_BAD:
                with pytest.raises(pg.InvalidParameterValue, match=NULL_IS_BAD[sig.key, arg]):
                    db.execute(query, args)
            elif check is None:
                with pytest.raises(pg.NullValueNotAllowed) as raised:
                    db.execute(query, args)
                message = raised.value.diag.message_primary or ""
                assert arg in message or sig.name in message, f"{sig.key} {arg}: unclear message {message!r}"
            else:
                rows = db.execute(query, args).fetchall()
                assert check(db, args, rows), f"{sig.key} {arg}: NULL did not have its documented meaning"
            # Out of the way of the next case's claim.
            db.execute("SELECT cyclone.cancel(id) FROM cyclone.cyclone_runs WHERE state IN ('running', 'paused')")
    assert cases >= 50


def test_null_elements_of_array_arguments_are_refused(db: Conn) -> None:
    """A NULL step id or generation inside complete_many's arrays is 22023 (as its
    pgTAP test pins), a NULL input inside submit_many's is 22004; a NULL output is
    no output."""
    f = Fixtures(db)
    c = f.claimed()
    for ids, gens in (([None], [c["lease_generation"]]), ([c["step_id"]], [None])):
        with pytest.raises(pg.InvalidParameterValue, match="must not contain NULL"):
            db.execute("SELECT * FROM cyclone.complete_many('w', %s::bigint[], %s::bigint[], ARRAY[NULL]::jsonb[])",
                       (ids, gens))
    with pytest.raises(pg.NullValueNotAllowed):
        db.execute("SELECT cyclone.submit_many('nul', ARRAY['{}', NULL]::jsonb[])")
    accepted = db.execute("SELECT * FROM cyclone.complete_many('w', %s::bigint[], %s::bigint[], ARRAY[NULL]::jsonb[])",
                          ([c["step_id"]], [c["lease_generation"]])).fetchall()
    assert accepted == [{"step_id": c["step_id"], "accepted": True}], "a NULL output is no output"


# -- hostile names, end to end --------------------------------------------------------------

EVIL = "x'; DROP TABLE cyclone.cyclone_runs; --"
HAN = "工作流"
QUOTED = 'qu"o\'te\\d $$ %s {}'


def test_hostile_and_unicode_names_travel_end_to_end_through_parameters(dsn: str, db: Conn) -> None:
    wf = Workflow(EVIL)

    @wf.step(name=HAN)
    def first(ctx: StepContext) -> Any:
        return {"from": ctx.node, "input": ctx.input}

    @wf.step(name=QUOTED, deps=[HAN])
    def second(ctx: StepContext) -> Any:
        return {"deps": ctx.deps}

    wf.wait(EVIL, signal=EVIL, deps=[QUOTED])

    worker = Worker(wf, dsn, lease_ttl=5.0, poll_interval=0.1, shutdown_grace=2.0, name=EVIL)
    worker.run_in_thread()
    try:
        with Client(dsn) as client:
            run_id = client.submit(EVIL, {EVIL: HAN})
            end = time.monotonic() + 20
            while client.step_counts(run_id).get("waiting") != 1 and time.monotonic() < end:
                time.sleep(0.05)
            assert client.signal(run_id, EVIL, {HAN: EVIL})
            while not client.get_run(run_id).terminal and time.monotonic() < end:
                time.sleep(0.05)
            run = client.get_run(run_id)
    finally:
        worker.stop(timeout=10)
    assert run.state == "completed"
    assert run.output == {EVIL: {HAN: EVIL}}
    steps = {r["node"]: r for r in db.execute("SELECT * FROM cyclone.cyclone_steps WHERE run_id = %s", (run_id,))}
    assert steps[HAN]["output"] == {"from": HAN, "input": {EVIL: HAN}}
    assert steps[QUOTED]["output"] == {"deps": {HAN: {"from": HAN, "input": {EVIL: HAN}}}}
    assert steps[HAN]["handler"] == HAN
    assert db.execute("SELECT to_regclass('cyclone.cyclone_runs') IS NOT NULL AS ok").fetchone() == {"ok": True}


def test_hostile_names_through_the_cli(dsn: str, db: Conn) -> None:
    define(db, EVIL, {"nodes": [{"name": HAN, "kind": "wait", "signal": EVIL}]})
    runner = CliRunner()
    result = runner.invoke(cli.main, ["--dsn", dsn, "submit", EVIL, "--input", json.dumps({HAN: EVIL})])
    assert result.exit_code == 0, result.output
    run_id = UUID(result.stdout.strip())
    result = runner.invoke(cli.main, ["--dsn", dsn, "signal", str(run_id), EVIL, "--payload", json.dumps(HAN)])
    assert result.exit_code == 0, result.output
    row = db.execute("SELECT state, output FROM cyclone.get_run(%s)", (run_id,)).fetchone()
    assert row == {"state": "completed", "output": {HAN: HAN}}


CLI_TEXT = st.text(TEXT_CHARS, max_size=30)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.one_of(
    st.tuples(st.just("submit"), CLI_TEXT, st.just("--input"), CLI_TEXT),
    st.tuples(st.just("submit"), st.just("one"), st.just("--deadline"), CLI_TEXT),
    st.tuples(st.just("run"), CLI_TEXT),
    st.tuples(st.just("signal"), st.uuids().map(str) | CLI_TEXT, CLI_TEXT, st.just("--payload"), CLI_TEXT),
    st.tuples(st.just("retry"), st.uuids().map(str) | CLI_TEXT, CLI_TEXT, st.just("--additional-attempts"), CLI_TEXT),
    st.tuples(st.just("schedules"), st.just("set"), CLI_TEXT, CLI_TEXT, st.just("one"), st.just("--timezone"),
              CLI_TEXT),
    st.tuples(st.just("schedules"), st.just("backfill"), CLI_TEXT, st.just("--from"), CLI_TEXT, st.just("--to"),
              CLI_TEXT),
    st.tuples(st.just("cron-next"), CLI_TEXT, st.just("--tz"), CLI_TEXT, st.just("--after"), CLI_TEXT),
))
def test_the_cli_never_shows_a_traceback_whatever_it_is_given(dsn: str, one: str, args: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli.main, ["--dsn", dsn, *args])
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output)
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    if result.exit_code == 1:
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# -- no SQL assembled from values in the runtime ----------------------------------------------

QUERY_METHODS = {"execute", "_value", "_rows", "executemany"}


def test_the_runtime_never_formats_values_into_sql() -> None:
    """Every query the runtime sends is a literal, or an f-string over module
    constants (column lists); values always go as parameters."""
    offenders = []
    for path in sorted((ROOT / "cyclone_py").rglob("*.py")):  # the console's package too
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in QUERY_METHODS and node.args):
                continue
            query = node.args[1] if node.func.attr == "_rows" and len(node.args) > 1 else node.args[0]
            if isinstance(query, ast.Constant) or isinstance(query, ast.Name):
                continue
            if isinstance(query, ast.JoinedStr) and all(
                isinstance(v, ast.Constant)
                or (isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name)
                    and v.value.id.lstrip("_").isupper())  # a module constant such as _STEP_COLUMNS
                for v in query.values
            ):
                continue
            if (isinstance(query, ast.Call) and isinstance(query.func, ast.Attribute)
                    and query.func.attr == "format" and isinstance(query.func.value, ast.Call)
                    and getattr(query.func.value.func, "attr", None) == "SQL"):
                continue  # psycopg.sql composition with Identifier/Literal
            offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


# -- bad values for everything new: limits, schedules, cron, traces, explain (#21) ----------

HUGE = "x" * 100_000
SPAN = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
HOUR = timedelta(hours=1)


def snapshot(c: Conn) -> dict[str, str]:
    """Every row of every engine table, hashed table by table: what a refused
    call must leave exactly as it was (the clock included)."""
    tables = [r["relname"] for r in c.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'cyclone'::regnamespace AND relkind IN ('r', 'p')"
        " ORDER BY 1")]
    return {t: c.execute(sql.SQL("SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS h"
                                 " FROM cyclone.{} x").format(sql.Identifier(t))).fetchone()["h"]  # type: ignore[index]
            for t in tables}


@pytest.fixture
def world(db: Conn) -> Row:
    """A workflow, one that names the limit lim, a schedule, a run whose step
    is running (its lease in the row) and a run whose step is a dead letter."""
    define(db, "one", {"max_attempts": 3, "nodes": [{"name": "a"}]})
    db.execute("SELECT cyclone.define_limit('lim', 2)")
    define(db, "uses", {"limits": [{"name": "lim"}], "nodes": [{"name": "a"}]})
    db.execute("SELECT cyclone.schedule('s1', '@daily', 'one')")
    db.execute("SELECT cyclone.submit('one')")
    lease = db.execute("SELECT step_id, run_id, lease_generation FROM cyclone.claim('w', NULL, 1, '1 hour',"
                       " ARRAY['one'])").fetchone()
    assert lease is not None
    dead = db.execute("SELECT cyclone.submit('uses') AS id").fetchone()
    c = db.execute("SELECT step_id, lease_generation FROM cyclone.claim('w', NULL, 1, '1 hour', ARRAY['uses'])"
                   ).fetchone()
    assert dead is not None and c is not None
    db.execute("SELECT cyclone.fail(%s, 'w', %s, 'boom', 'permanent')", (c["step_id"], c["lease_generation"]))
    return {**lease, "dead": dead["id"]}


@dataclass(frozen=True)
class Bad:
    """One call with a bad value: refused with ``sqlstate`` and a message holding
    ``words`` (or, with ``returns``, answered with that value), writing nothing."""

    query: str
    args: Callable[[Row], list[Any]]
    sqlstate: str = "22023"
    words: str = ""
    returns: Any = None


FAIL = "SELECT cyclone.fail(%s, 'w', %s, 'boom', %s, '0', %s)"
SCHEDULE = "SELECT cyclone.schedule(%s, %s, 'one', %s, %s, %s, %s, %s)"
TRACED = "SELECT cyclone.submit('one', '{}', NULL, NULL, NULL, %s)"


def sched(name: str = "s2", cron: str = "@daily", input: Any = None, tz: str = "UTC", overlap: str = "skip",
          catchup: Any = HOUR, deadline: Any = None) -> Callable[[Row], list[Any]]:
    return lambda w: [name, cron, Jsonb({} if input is None else input), tz, overlap, catchup, deadline]


BAD: dict[str, Bad] = {
    # define_limit, drop_limit
    "limit: empty name": Bad("SELECT cyclone.define_limit(%s, %s)", lambda w: ["", 1], words="is empty"),
    "limit: huge name": Bad("SELECT cyclone.define_limit(%s, %s)", lambda w: [HUGE, 1], words="at most 200"),
    "limit: control character": Bad("SELECT cyclone.define_limit(%s, %s)", lambda w: ["a\tb", 1],
                                    words="control character"),
    "limit: zero concurrency": Bad("SELECT cyclone.define_limit(%s, %s)", lambda w: ["x", 0],
                                   words="p_concurrency must be positive"),
    "limit: negative concurrency": Bad("SELECT cyclone.define_limit(%s, %s)", lambda w: ["lim", -5],
                                       words="p_concurrency must be positive"),
    "limit: concurrency past int": Bad("SELECT cyclone.define_limit(%s, %s)", lambda w: ["x", 2**31],
                                       sqlstate="42883", words="does not exist"),
    "limit: concurrency not a number": Bad("SELECT cyclone.define_limit(%s, %s)", lambda w: ["x", "many"],
                                           sqlstate="22P02", words="invalid input syntax for type integer"),
    "limit: zero rate": Bad("SELECT cyclone.define_limit(%s, NULL, %s, %s)", lambda w: ["x", 0, HOUR],
                            words="p_rate must be positive"),
    "limit: negative period": Bad("SELECT cyclone.define_limit(%s, NULL, %s, %s)", lambda w: ["x", 1, -HOUR],
                                  words="p_period must be positive"),
    "limit: period not an interval": Bad("SELECT cyclone.define_limit(%s, NULL, %s, %s)",
                                         lambda w: ["x", 1, "hourly"], sqlstate="22007", words="interval"),
    "limit: nothing bounded": Bad("SELECT cyclone.define_limit(%s)", lambda w: ["x"], words="give p_concurrency"),
    "drop_limit: named by a workflow": Bad("SELECT cyclone.drop_limit(%s)", lambda w: ["lim"], sqlstate="55000",
                                           words='named by workflow "uses"'),
    "drop_limit: empty name": Bad("SELECT cyclone.drop_limit(%s) AS r", lambda w: [""], returns=False),
    "drop_limit: huge name": Bad("SELECT cyclone.drop_limit(%s) AS r", lambda w: [HUGE], returns=False),
    # explain_step
    "explain: negative id": Bad("SELECT cyclone.explain_step(%s)", lambda w: [-1], sqlstate="P0002",
                                words="step -1 not found"),
    "explain: zero id": Bad("SELECT cyclone.explain_step(%s)", lambda w: [0], sqlstate="P0002", words="not found"),
    "explain: largest id": Bad("SELECT cyclone.explain_step(%s)", lambda w: [2**63 - 1], sqlstate="P0002",
                               words="not found"),
    "explain: not a number": Bad("SELECT cyclone.explain_step(%s)", lambda w: ["7; DROP TABLE x"],
                                 sqlstate="22P02", words="bigint"),
    # schedule, unschedule, pause_schedule, resume_schedule
    "schedule: empty name": Bad(SCHEDULE, sched(name=""), words="is empty"),
    "schedule: huge name": Bad(SCHEDULE, sched(name=HUGE), words="at most 200"),
    "schedule: control character": Bad(SCHEDULE, sched(name="s\n2"), words="control character"),
    "schedule: empty cron": Bad(SCHEDULE, sched(cron=""), words="five fields"),
    "schedule: unknown shorthand": Bad(SCHEDULE, sched(cron="@reboot"), words="five fields"),
    "schedule: minute out of range": Bad(SCHEDULE, sched(cron="60 * * * *"), words="out of range"),
    "schedule: zero step": Bad(SCHEDULE, sched(cron="*/0 * * * *"), words="step must be"),
    "schedule: never fires": Bad(SCHEDULE, sched(cron="0 0 30 2 *"), words="never fires"),
    "schedule: unknown time zone": Bad(SCHEDULE, sched(tz="Mars/Olympus"), words="pg_timezone_names"),
    "schedule: unknown overlap": Bad(SCHEDULE, sched(overlap="sometimes"), words="p_overlap must be"),
    "schedule: negative catch-up": Bad(SCHEDULE, sched(catchup=-HOUR), words="p_catchup must not be negative"),
    "schedule: catch-up not an interval": Bad(SCHEDULE, sched(catchup="soon"), sqlstate="22007", words="interval"),
    "schedule: input an array": Bad(SCHEDULE, sched(input=[1, 2]), words="must be a JSON object (got array)"),
    "schedule: input JSON null": Bad(SCHEDULE, lambda w: ["s2", "@daily", Jsonb(None), "UTC", "skip", HOUR, None],
                                     words="must be a JSON object (got null)"),
    "schedule: input over 1 MiB": Bad(SCHEDULE, sched(input={"b": "y" * 1_100_000}), words="the limit is 1 MiB"),
    "schedule: negative deadline": Bad(SCHEDULE, sched(deadline=-HOUR), words="p_deadline must be positive"),
    "schedule: unknown workflow": Bad("SELECT cyclone.schedule('s2', '@daily', %s)", lambda w: ["nope"],
                                      sqlstate="P0002", words='workflow "nope" not found'),
    "unschedule: empty name": Bad("SELECT cyclone.unschedule(%s) AS r", lambda w: [""], returns=False),
    "unschedule: huge name": Bad("SELECT cyclone.unschedule(%s) AS r", lambda w: [HUGE], returns=False),
    "pause_schedule: huge name": Bad("SELECT cyclone.pause_schedule(%s) AS r", lambda w: [HUGE], returns=False),
    "resume_schedule: empty name": Bad("SELECT cyclone.resume_schedule(%s) AS r", lambda w: [""], returns=False),
    # backfill
    "backfill: reversed": Bad("SELECT cyclone.backfill('s1', now() - interval '1 day', now() - interval '2 days')",
                              lambda w: [], words="p_from < p_to <= now"),
    "backfill: empty range": Bad("SELECT cyclone.backfill('s1', now() - interval '1 day', now() - interval '1 day')",
                                 lambda w: [], words="p_from < p_to <= now"),
    "backfill: into the future": Bad("SELECT cyclone.backfill('s1', now() - interval '1 day', %s)",
                                     lambda w: ["infinity"], words="p_from < p_to <= now"),
    "backfill: a thousand years": Bad(
        "SELECT cyclone.backfill('s1', now() - interval '1000 years', now() - interval '1 day')", lambda w: [],
        words="more than 10000 slots"),
    "backfill: unknown schedule": Bad(
        "SELECT cyclone.backfill(%s, now() - interval '2 days', now() - interval '1 day')", lambda w: ["nope"],
        sqlstate="P0002", words='schedule "nope" not found'),
    "backfill: not a time": Bad("SELECT cyclone.backfill('s1', %s, now())", lambda w: ["soonish"],
                                sqlstate="22007", words="timestamp with time zone"),
    # next_fire (the cron evaluator)
    "next_fire: not a cron": Bad("SELECT cyclone.next_fire(%s, now())", lambda w: ["every day"], words="five fields"),
    "next_fire: after infinity": Bad("SELECT cyclone.next_fire('@daily', %s)", lambda w: ["infinity"],
                                     words="p_after must be finite"),
    "next_fire: after -infinity": Bad("SELECT cyclone.next_fire('@daily', %s)", lambda w: ["-infinity"],
                                      words="p_after must be finite"),
    "next_fire: unknown time zone": Bad("SELECT cyclone.next_fire('@daily', now(), %s)", lambda w: ["Nowhere/Land"],
                                        words="pg_timezone_names"),
    "next_fire: never fires": Bad("SELECT cyclone.next_fire(%s, now())", lambda w: ["0 0 30 2 *"],
                                  words="never fires"),
    # Issue 30, finding 11: near the last timestamptz this was PostgreSQL's raw 22008.
    "next_fire: at the end of time": Bad("SELECT cyclone.next_fire('@daily', %s)",
                                         lambda w: ["294276-12-31 00:00:00+00"],
                                         words="p_after must be within the years 1 to 9999"),
    "next_fire: an answer past 9999": Bad("SELECT cyclone.next_fire('@yearly', %s)",
                                          lambda w: ["9999-06-01 00:00:00+00"],
                                          words="does not fire again before the year 10000"),
    "backfill: from 4713 BC": Bad("SELECT cyclone.backfill('s1', %s, now() - interval '1 day')",
                                  lambda w: ["4713-01-01 00:00:00+00 BC"],
                                  words="p_from must be within the years 1 to 9999"),
    # submit's p_traceparent
    "traceparent: garbage": Bad(TRACED, lambda w: ["garbage"], words="is not version-traceid-parentid-flags"),
    "traceparent: empty": Bad(TRACED, lambda w: [""], words="is not version-traceid-parentid-flags"),
    "traceparent: all-zero trace id": Bad(TRACED, lambda w: ["00-" + "0" * 32 + "-b7ad6b7169203331-01"],
                                          words="all-zero trace id"),
    "traceparent: version ff": Bad(TRACED, lambda w: ["ff" + SPAN[2:]], words="invalid version ff"),
    "traceparent: upper case": Bad(TRACED, lambda w: [SPAN.upper()], words="lower-case hex"),
    "traceparent: huge": Bad(TRACED, lambda w: [HUGE], words="is not version-traceid-parentid-flags"),
    # fail's p_span and p_error_kind, on a running step (it stays running, its lease intact)
    "span: garbage": Bad(FAIL, lambda w: [w["step_id"], w["lease_generation"], "error", "garbage"],
                         words="p_span"),
    "span: empty": Bad(FAIL, lambda w: [w["step_id"], w["lease_generation"], "error", ""], words="p_span"),
    "span: huge": Bad(FAIL, lambda w: [w["step_id"], w["lease_generation"], "error", HUGE], words="p_span"),
    "span: all-zero span id": Bad(FAIL, lambda w: [w["step_id"], w["lease_generation"], "error",
                                                   SPAN[:36] + "0" * 16 + "-01"], words="p_span"),
    "error kind: unknown": Bad(FAIL, lambda w: [w["step_id"], w["lease_generation"], "nonsense", None],
                               words="p_error_kind must be"),
    "error kind: an engine's own": Bad(FAIL, lambda w: [w["step_id"], w["lease_generation"], "reclaim_limit", None],
                                       words="p_error_kind must be"),
    "error kind: empty": Bad(FAIL, lambda w: [w["step_id"], w["lease_generation"], "", None],
                             words="p_error_kind must be"),
    # metrics, check_invariants: no arguments
    "metrics: an argument": Bad("SELECT * FROM cyclone.metrics(%s)", lambda w: ["x"], sqlstate="42883",
                                words="does not exist"),
    "check_invariants: an argument": Bad("SELECT * FROM cyclone.check_invariants(%s)", lambda w: [1],
                                         sqlstate="42883", words="does not exist"),
    # the pg_cron helper and tick (pg_cron is not in a test's database)
    "schedule_tick: empty cron": Bad("SELECT cyclone.schedule_tick(%s, 0)", lambda w: [""],
                                     words="p_schedule must be a cron schedule"),
    "schedule_tick: negative reclaims": Bad("SELECT cyclone.schedule_tick('* * * * *', %s)", lambda w: [-1],
                                            words="p_max_reclaims >= 0"),
    "schedule_tick: no pg_cron": Bad("SELECT cyclone.schedule_tick('* * * * *', 0)", lambda w: [],
                                     sqlstate="55000", words="pg_cron is not installed"),
    "tick: negative reclaims": Bad("SELECT cyclone.tick(%s)", lambda w: [-1], words="p_max_reclaims"),
    "retry: negative attempts": Bad("SELECT cyclone.retry(%s, 'a', %s)", lambda w: [w["dead"], -1],
                                    words="p_additional_attempts must not be negative"),
}


def test_bad_values_for_the_new_functions_are_a_named_sqlstate_and_write_nothing(db: Conn, world: Row) -> None:
    """Each case of BAD on one database: the refusal's SQLSTATE and words (or the
    documented answer), a one-line message, and every engine table as it was."""
    wrong = []
    for label, bad in BAD.items():
        before = snapshot(db)
        args = bad.args(world)
        try:
            rows = db.execute(bad.query, args).fetchall()
        except psycopg.Error as exc:
            message = exc.diag.message_primary or ""
            if bad.returns is not None or exc.sqlstate != bad.sqlstate or bad.words not in message:
                wrong.append(f"{label}: {exc.sqlstate} {message[:200]!r}")
            elif "\n" in message:
                wrong.append(f"{label}: a message of several lines {message[:200]!r}")
        else:
            if bad.returns is None or rows != [{"r": bad.returns}]:
                wrong.append(f"{label}: accepted, answered {str(rows)[:200]}")
        if snapshot(db) != before:
            wrong.append(f"{label}: wrote to {[t for t, h in snapshot(db).items() if before.get(t) != h]}")
    assert wrong == []
    assert len(BAD) >= 60


def test_a_backfill_or_retry_out_of_range_is_22023_naming_its_argument(db: Conn, world: Row) -> None:
    """Values a parameter's type holds but the engine's arithmetic does not: a
    backfill from -infinity (it was 0A000 "cannot convert infinity to integer")
    and a retry with 2^31 - 1 more attempts (it was 22003 "integer out of
    range") say which argument is wrong, as every other refusal does."""
    before = snapshot(db)
    wrong = []
    for query, args, words in [
        ("SELECT cyclone.backfill('s1', %s, now() - interval '1 day')", ["-infinity"], "p_from"),
        ("SELECT cyclone.retry(%s, 'a', %s)", [world["dead"], 2**31 - 1], "p_additional_attempts"),
    ]:
        try:
            db.execute(query, args)
        except psycopg.Error as exc:
            if exc.sqlstate != "22023" or words not in (exc.diag.message_primary or ""):
                wrong.append(f"{query}: {exc.sqlstate} {exc.diag.message_primary!r}")
        else:
            wrong.append(f"{query}: accepted")
    assert snapshot(db) == before
    assert wrong == []


def test_a_refusal_quotes_at_most_a_bounded_part_of_a_huge_value(db: Conn, world: Row) -> None:
    """Refusals show a bad value cut at 40 characters ("xxxx..."). These three
    quoted all of it, so a 100,000-character value made a message (and a log
    line) of 100,000 characters."""
    before = snapshot(db)
    long = []
    for query, args in [
        ("SELECT cyclone.schedule('s2', '@daily', 'one', '{}', %s)", [HUGE]),
        (FAIL, [world["step_id"], world["lease_generation"], HUGE, None]),
        ("SELECT cyclone.retry(%s, %s)", [world["dead"], HUGE]),
    ]:
        with pytest.raises(psycopg.Error) as raised:
            db.execute(query, args)
        message = raised.value.diag.message_primary or ""
        if len(message) > 500:
            long.append(f"{query}: {raised.value.sqlstate}, {len(message)} characters")
    assert snapshot(db) == before
    assert long == []


# -- bad values for the functions added since 0.20.0 (SPEC 16-17, workers, the overview) ----------

DEEP = "[" * 100_000 + "]" * 100_000  # 100,000 nested arrays: past PostgreSQL's stack, not a value
SUBMIT_NEW = "SELECT cyclone.submit('one', '{}', p_priority => %s)"
DEBOUNCED = "SELECT cyclone.submit('one', '{}', p_debounce_key => %s, p_debounce => %s, p_debounce_max => %s)"
WINDOWED = "SELECT cyclone.submit('one', '{}', p_idempotency_key => 'k', p_idempotency_window => %s)"
SWS = "SELECT cyclone.signal_with_start(%s, %s, %s, %s, %s)"
SNOOZE = "SELECT cyclone.snooze(%s, 'w', %s, %s)"
PROGRESS = "SELECT cyclone.progress(%s, 'w', %s, %s)"


def sws(workflow: str = "one", key: str = "k", signal: str = "go", payload: Any = None,
        input: Any = None) -> Callable[[Row], list[Any]]:
    return lambda w: [workflow, key, signal, Jsonb(payload), Jsonb({} if input is None else input)]


WINDOW = "must be finite, not empty and at most a day"

BAD_NEW: dict[str, Bad] = {
    # emit_event
    "emit_event: empty key": Bad("SELECT cyclone.emit_event(%s)", lambda w: [""], words="non-empty event key"),
    "emit_event: huge key": Bad("SELECT cyclone.emit_event(%s)", lambda w: [HUGE],
                                 words="the limit is 1000 bytes"),
    "emit_event: payload over 1 MiB": Bad("SELECT cyclone.emit_event('k', %s)",
                                          lambda w: [Jsonb({"b": "y" * 1_100_000})], words="1 MiB"),
    "emit_event: deep payload": Bad("SELECT cyclone.emit_event('k', %s::jsonb)", lambda w: [DEEP],
                                    sqlstate="54001", words="stack depth"),
    "emit_event: payload not JSON": Bad("SELECT cyclone.emit_event('k', %s::jsonb)", lambda w: ["paid"],
                                        sqlstate="22P02", words="json"),
    # signal_with_start
    "signal_with_start: empty key": Bad(SWS, sws(key=""), words="non-empty key"),
    "signal_with_start: huge key": Bad(SWS, sws(key=HUGE), words="the limit is 1000 bytes"),
    "signal_with_start: empty signal": Bad(SWS, sws(signal=""), words="non-empty signal name"),
    "signal_with_start: unknown workflow": Bad(SWS, sws(workflow="nope"), sqlstate="P0002", words="not found"),
    "signal_with_start: input an array": Bad(SWS, sws(input=[1]), words="must be a JSON object"),
    "signal_with_start: input over 1 MiB": Bad(SWS, sws(input={"b": "y" * 1_100_000}), words="1 MiB"),
    "signal_with_start: payload over 1 MiB": Bad(SWS, sws(payload={"b": "y" * 1_100_000}), words="1 MiB"),
    # rerun
    "rerun: a run still running": Bad("SELECT cyclone.rerun(%s)", lambda w: [w["run_id"]], sqlstate="55000"),
    "rerun: unknown run": Bad("SELECT cyclone.rerun(%s)", lambda w: [uuid.uuid4()], sqlstate="P0002",
                              words="not found"),
    "rerun: unknown node": Bad("SELECT cyclone.rerun(%s, 'nope')", lambda w: [w["dead"]], sqlstate="P0002"),
    "rerun: empty node": Bad("SELECT cyclone.rerun(%s, '')", lambda w: [w["dead"]], sqlstate="P0002"),
    "rerun: huge node": Bad("SELECT cyclone.rerun(%s, %s)", lambda w: [w["dead"], HUGE], sqlstate="P0002"),
    "rerun: not a uuid": Bad("SELECT cyclone.rerun(%s::uuid)", lambda w: ["run-1"], sqlstate="22P02",
                             words="uuid"),
    # submit's priority, debounce and dedupe window
    "priority: above 1000": Bad(SUBMIT_NEW, lambda w: [1001], words="p_priority"),
    "priority: below -1000": Bad(SUBMIT_NEW, lambda w: [-1001], words="p_priority"),
    "priority: past int": Bad(SUBMIT_NEW, lambda w: [2**31], sqlstate="42883", words="does not exist"),
    "priority: not a number": Bad("SELECT cyclone.submit('one', '{}', p_priority => %s::int)", lambda w: ["high"],
                                  sqlstate="22P02", words="integer"),
    "debounce: a key without an interval": Bad(DEBOUNCED, lambda w: ["d", None, None], words="p_debounce"),
    "debounce: an interval without a key": Bad(DEBOUNCED, lambda w: [None, HOUR, None], words="p_debounce"),
    "debounce: zero": Bad(DEBOUNCED, lambda w: ["d", timedelta(0), None], words="p_debounce"),
    "debounce: negative": Bad(DEBOUNCED, lambda w: ["d", -HOUR, None], words="p_debounce"),
    "debounce: not an interval": Bad(DEBOUNCED, lambda w: ["d", "soon", None], sqlstate="22007",
                                     words="interval"),
    "debounce: empty key": Bad(DEBOUNCED, lambda w: ["", HOUR, None], words="go together"),
    "debounce: huge key": Bad(DEBOUNCED, lambda w: [HUGE, HOUR, None],
                                 words="the limit is 1000 bytes"),
    "debounce: negative bound": Bad(DEBOUNCED, lambda w: ["d", HOUR, -HOUR], words="p_debounce_max"),
    "dedupe window: zero": Bad(WINDOWED, lambda w: [timedelta(0)], words="p_idempotency_window"),
    "dedupe window: negative": Bad(WINDOWED, lambda w: [-HOUR], words="p_idempotency_window"),
    # snooze and progress, on the running step (it stays running, its lease intact)
    "snooze: negative delay": Bad(SNOOZE, lambda w: [w["step_id"], w["lease_generation"], -HOUR],
                                  words="p_delay"),
    "snooze: over 365 days": Bad(SNOOZE, lambda w: [w["step_id"], w["lease_generation"], timedelta(days=366)],
                                 words="p_delay"),
    "snooze: a million years": Bad(SNOOZE, lambda w: [w["step_id"], w["lease_generation"], "1000000 years"],
                                   words="p_delay"),
    "snooze: not an interval": Bad(SNOOZE, lambda w: [w["step_id"], w["lease_generation"], "later"],
                                   sqlstate="22007", words="interval"),
    "progress: over 64 KiB": Bad(PROGRESS, lambda w: [w["step_id"], w["lease_generation"],
                                                      Jsonb({"b": "y" * 70_000})], words="64 KiB"),
    "progress: deep": Bad("SELECT cyclone.progress(%s, 'w', %s, %s::jsonb)",
                          lambda w: [w["step_id"], w["lease_generation"], DEEP], sqlstate="54001",
                          words="stack depth"),
    "progress: not JSON": Bad("SELECT cyclone.progress(%s, 'w', %s, %s::jsonb)",
                              lambda w: [w["step_id"], w["lease_generation"], "half"], sqlstate="22P02",
                              words="json"),
    # release: a lease that is not the step's is refused as complete's is, by answering false
    "release: another generation": Bad("SELECT cyclone.release(%s, 'w', %s) AS r",
                                       lambda w: [w["step_id"], w["lease_generation"] + 1], returns=False),
    "release: unknown step": Bad("SELECT cyclone.release(%s, 'w', 1) AS r", lambda w: [2**63 - 1], returns=False),
    # register_worker
    "register_worker: empty name": Bad("SELECT cyclone.register_worker(%s, '{}')", lambda w: [""],
                                       words="is empty"),
    "register_worker: huge name": Bad("SELECT cyclone.register_worker(%s, '{}')", lambda w: [HUGE],
                                      words="at most"),
    "register_worker: info an array": Bad("SELECT cyclone.register_worker('w2', %s)", lambda w: [Jsonb([1])],
                                          words="JSON object"),
    "register_worker: info over 64 KiB": Bad("SELECT cyclone.register_worker('w2', %s)",
                                             lambda w: [Jsonb({"b": "y" * 1_100_000})], words="KiB"),
    "register_worker: deep info": Bad("SELECT cyclone.register_worker('w2', %s::jsonb)", lambda w: [DEEP],
                                      sqlstate="54001", words="stack depth"),
    # the overview's reads
    "overview_gauges: negative": Bad("SELECT * FROM cyclone.overview_gauges(%s)", lambda w: [-1],
                                     words="p_"),
    "overview_gauges: not a number": Bad("SELECT * FROM cyclone.overview_gauges(%s::int)", lambda w: ["many"],
                                         sqlstate="22P02", words="integer"),
    "finished_per_minute: from -infinity": Bad("SELECT * FROM cyclone.finished_per_minute(%s, now())",
                                               lambda w: ["-infinity"], words=WINDOW),
    "finished_per_minute: to infinity": Bad("SELECT * FROM cyclone.finished_per_minute(now(), %s)",
                                            lambda w: ["infinity"], words=WINDOW),
    "finished_per_minute: reversed": Bad("SELECT * FROM cyclone.finished_per_minute(now(), now() - %s)",
                                         lambda w: [HOUR], words=WINDOW),
    "finished_per_minute: a thousand years": Bad(
        "SELECT * FROM cyclone.finished_per_minute(now() - interval '1000 years', now())", lambda w: [],
        words=WINDOW),
    "finished_per_minute: not a time": Bad("SELECT * FROM cyclone.finished_per_minute(%s, now())",
                                           lambda w: ["yesterday-ish"], sqlstate="22007", words="timestamp"),
    "finished_runs: negative limit": Bad("SELECT * FROM cyclone.finished_runs(now() - interval '1 day', now(),"
                                         " NULL, NULL, %s)", lambda w: [-1], words="p_limit"),
    "finished_runs: from -infinity": Bad("SELECT * FROM cyclone.finished_runs(%s, now())", lambda w: ["-infinity"],
                                         words=WINDOW),
    "finished_runs: unknown state": Bad("SELECT * FROM cyclone.finished_runs(now() - interval '1 day', now(),"
                                        " NULL, %s)", lambda w: ["sleeping"], words="p_state"),
    "version: an argument": Bad("SELECT cyclone.version(%s)", lambda w: [1], sqlstate="42883",
                                words="does not exist"),
}


def test_bad_values_for_the_functions_since_0_20_are_a_named_sqlstate_and_write_nothing(
    db: Conn, world: Row,
) -> None:
    """BAD_NEW as BAD: empty, huge, control characters, deep or oversized JSON,
    infinite or out-of-range times and intervals, values of the wrong type."""
    wrong = []
    for label, bad in BAD_NEW.items():
        before = snapshot(db)
        try:
            rows = db.execute(bad.query, bad.args(world)).fetchall()
        except psycopg.Error as exc:
            message = exc.diag.message_primary or ""
            if bad.returns is not None or exc.sqlstate != bad.sqlstate or bad.words not in message:
                wrong.append(f"{label}: {exc.sqlstate} {message[:200]!r}")
            elif "\n" in message or len(message) > 500:
                wrong.append(f"{label}: a message of several lines or {len(message)} characters")
        else:
            if bad.returns is None or rows != [{"r": bad.returns}]:
                wrong.append(f"{label}: accepted, answered {str(rows)[:200]}")
        if snapshot(db) != before:
            wrong.append(f"{label}: wrote to {[t for t, h in snapshot(db).items() if before.get(t) != h]}")
    assert wrong == []
    assert len(BAD_NEW) >= 50


def test_signal_with_start_refuses_a_huge_signal_name_and_writes_nothing(db: Conn, world: Row) -> None:
    before = snapshot(db)
    with pytest.raises(psycopg.Error) as raised:
        db.execute(SWS, sws(signal=HUGE)(world))
    assert raised.value.sqlstate == "22023"
    assert snapshot(db) == before
