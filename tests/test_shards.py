"""A sharded deployment (SPEC 15, docs/scaling.md): a PL/Proxy router and two
shards of four partitions in the embedded cluster, set up by shards.init (what
``cyclone shards init`` runs), with one real worker process serving both
(``cyclone worker --dsn A --dsn B``).

Everything goes through the router: submits (single, keyed, batches), signals,
operator actions, listings, metrics, definitions and schedules; then each run
and step is checked to live on the shard its id names. The last test runs the
two shards as separate clusters and stops one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from apps.sharded import expected_sum
from click.testing import CliRunner
from helpers import WorkerProcess, one_line_error, wait_for
from psycopg.rows import dict_row

from cyclone_py import Client, cli, db, errors, shards

# A router and shards deployed with sqitch, thousands of runs through them.
pytestmark = pytest.mark.slow

PARTITIONS = 4
RUNS = 2000


def query(dsn: str, sql: str, params: Any = None) -> list[dict[str, Any]]:
    with psycopg.connect(dsn, autocommit=True, connect_timeout=5, row_factory=dict_row) as c:
        cur = c.execute(sql, params)
        return cur.fetchall() if cur.description is not None else []


def start_worker(dsns: list[str], log: Path) -> WorkerProcess:
    """One ``cyclone worker`` serving every shard given (``--dsn A --dsn B``)."""
    return WorkerProcess(["worker", *(a for d in dsns for a in ("--dsn", d)), "--app", "apps.sharded:app",
                          "--concurrency", "8", "--poll-interval", "0.2", "--lease-ttl", "5",
                          "--shutdown-grace", "5"], log)


@dataclass
class Deployment:
    router: str
    shards: list[str]  # shard-0, shard-1

    def shard_of(self, run_id: Any) -> int:
        """The shard a run lives on, by the partition its id names (partition p on shard p mod 2)."""
        return (uuid.UUID(str(run_id)).int & 0xFFFF) % PARTITIONS % len(self.shards)

    def unfinished(self) -> int:
        return sum(int(query(s, "SELECT count(*) AS n FROM cyclone.cyclone_runs "
                                "WHERE state IN ('running', 'paused')")[0]["n"]) for s in self.shards)


@pytest.fixture(scope="module")
def sharded(embedded_db: db.EmbeddedCluster, template_db: str, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Deployment]:
    """Router + two shards (copies of the test template) in the embedded
    cluster, initialised, and one worker process of apps.sharded on both."""
    stem = f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    names = [f"{stem}_s0", f"{stem}_s1"]
    dsns = [embedded_db.create_database(n, template=template_db) for n in names]
    router = embedded_db.create_database(f"{stem}_router")
    logs = tmp_path_factory.mktemp("shard-workers")
    procs: list[WorkerProcess] = []
    try:
        shards.init(router, dsns, PARTITIONS)
        procs = [start_worker(dsns, logs / "w.log")]
        wait_for(lambda: "worker started" in procs[0].text(), 30, "the worker up")
        yield Deployment(router, dsns)
    finally:
        for p in procs:
            p.stop()
            p.close()
        for n in [*names, f"{stem}_router"]:
            embedded_db.drop_database(n)


def test_init_records_the_layout_on_the_router_and_each_shard(sharded: Deployment) -> None:
    assert [(s.name, s.partitions, s.reachable, s.agrees) for s in shards.status(sharded.router)] == [
        ("shard-0", [0, 2], True, True), ("shard-1", [1, 3], True, True)]
    shards.init(sharded.router, sharded.shards, PARTITIONS)  # again: nothing changes
    with Client(sharded.shards[1]) as c:
        config = c.shard()
    assert config is not None and (config.name, config.partition_count, config.partitions) == ("shard-1", 4, [1, 3])
    with pytest.raises(errors.InvalidArgument, match="power of two"):
        shards.init(sharded.router, sharded.shards, 6)
    # Another layout for shards that have one is refused before anything is written.
    swapped = r"is already shard-1 of 4 partitions holding \[1, 3\], not shard-0 holding \[0, 2\]"
    with pytest.raises(errors.WrongState, match=swapped):
        shards.init(sharded.router, sharded.shards[::-1], PARTITIONS)
    with pytest.raises(errors.WrongState, match="is already shard-0 of 4 partitions"):
        shards.init(sharded.router, sharded.shards, 8)
    assert [(s.name, s.partitions, s.agrees) for s in shards.status(sharded.router)] == [
        ("shard-0", [0, 2], True), ("shard-1", [1, 3], True)]


def test_the_shards_commands_show_the_layout_and_refuse_a_bad_one_in_one_line(sharded: Deployment) -> None:
    status = CliRunner().invoke(cli.main, ["shards", "status", "--router", sharded.router])
    assert status.exit_code == 0, status.output
    assert [line.split()[:4] for line in status.output.splitlines()[1:]] == [
        ["shard-0", "0,2", "yes", "yes"], ["shard-1", "1,3", "yes", "yes"]]
    bad = CliRunner().invoke(cli.main, ["shards", "init", "--router", sharded.router, "--shard", sharded.shards[0],
                                        "--shard", sharded.shards[1], "--partitions", "3"])
    assert "power of two" in one_line_error(bad)
    few = CliRunner().invoke(cli.main, ["shards", "init", "--router", sharded.router, "--shard", sharded.shards[0],
                                        "--shard", sharded.shards[1], "--partitions", "1"])
    assert "leaves some of the 2 shards without a partition" in one_line_error(few)
    assert [(s.name, s.partitions) for s in shards.status(sharded.router)] == [("shard-0", [0, 2]), ("shard-1", [1, 3])]


def test_init_refuses_a_database_whose_runs_would_not_fit_and_configures_nothing(
        embedded_db: db.EmbeddedCluster, template_db: str, dsn: str) -> None:
    with Client(dsn) as c:
        c.define_workflow("kept", {"nodes": [{"name": "a"}]})
        c.submit("kept")
    stem = f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    empty = embedded_db.create_database(f"{stem}_empty", template=template_db)
    router = embedded_db.create_database(f"{stem}_router")
    try:
        with pytest.raises(errors.WrongState, match="holds runs made for 1 partition"):
            shards.init(router, [empty, dsn], PARTITIONS)
        for d in (empty, dsn):
            with Client(d) as c:
                assert c.shard() is None
    finally:
        for n in (f"{stem}_empty", f"{stem}_router"):
            embedded_db.drop_database(n)


def test_a_router_without_shards_says_so(embedded_db: db.EmbeddedCluster) -> None:
    router = embedded_db.create_database(f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}_bare")
    try:
        db.sqitch(["deploy"], router, quiet=True, project=db.router_project())
        with Client(router) as client:
            for call in (lambda: client.submit("any"), lambda: client.get_run(uuid.uuid4()), client.list_runs):
                with pytest.raises(errors.WrongState, match="^this router has no shards yet$"):
                    call()
    finally:
        embedded_db.drop_database(db.dbname_of(router))


def test_runs_through_the_router_complete_on_the_shard_their_ids_name(sharded: Deployment) -> None:
    """2,000 runs of a DAG with a child run, submitted through the router one by
    one, with idempotency keys and in batches, all complete; every run, step
    and child run lives on the shard and partition its id names."""
    with Client(sharded.router) as router:
        ids = [router.submit("shard_dag", {"n": n}) for n in range(500)]
        ids += [router.submit("shard_dag", {"n": n}, idempotency_key=f"key-{n}") for n in range(500, 1000)]
        for start in range(1000, RUNS, 100):
            ids += router.submit_many("shard_dag", [{"n": n} for n in range(start, start + 100)])
    assert len(set(ids)) == RUNS
    wait_for(lambda: sharded.unfinished() == 0, 180, "every run to finish")

    placed = {0: 0, 1: 0}
    for i, dsn in enumerate(sharded.shards):
        runs = query(dsn, "SELECT id, state, output, (input ->> 'n')::int AS n, parent_run_id "
                          "FROM cyclone.cyclone_runs")
        roots = [r for r in runs if r["parent_run_id"] is None]
        placed[i] = len(roots)
        assert all(sharded.shard_of(r["id"]) == i for r in runs), "a run on a shard its id does not name"
        assert all(r["state"] == "completed" for r in runs)
        assert all(r["output"]["join"]["sum"] == expected_sum(r["n"]) for r in roots)
        assert len(runs) == 2 * len(roots), "each root run has its child on the same shard"
        assert query(dsn, "SELECT count(*) AS n FROM cyclone.cyclone_steps s JOIN cyclone.cyclone_runs r "
                          "ON r.id = s.run_id WHERE cyclone.step_partition(s.id) <> cyclone.run_partition(r.id) "
                          "OR NOT cyclone.run_partition(r.id) "
                          "= ANY ((SELECT partitions FROM cyclone.cyclone_shard)::int[])"
                     )[0]["n"] == 0
        assert query(dsn, "SELECT count(*) AS n FROM cyclone.cyclone_runs c JOIN cyclone.cyclone_runs p "
                          "ON p.id = c.parent_run_id WHERE cyclone.run_partition(c.id) <> cyclone.run_partition(p.id)"
                     )[0]["n"] == 0
        assert query(dsn, "SELECT count(*) AS n FROM cyclone.check_invariants()")[0]["n"] == 0
    assert sum(placed.values()) == RUNS
    assert min(placed.values()) > RUNS / 4, placed  # both shards took their share


def test_an_idempotency_key_through_the_router_returns_the_same_run(sharded: Deployment) -> None:
    with Client(sharded.router) as router:
        first = [router.submit("shard_leaf", {"n": n}, idempotency_key=f"same-{n}") for n in range(40)]
        again = [router.submit("shard_leaf", {"n": -n}, idempotency_key=f"same-{n}") for n in range(40)]
    assert first == again
    assert {sharded.shard_of(r) for r in first} == {0, 1}
    for i, dsn in enumerate(sharded.shards):
        keys = query(dsn, "SELECT idempotency_key, id FROM cyclone.cyclone_runs WHERE idempotency_key LIKE 'same-%%'")
        assert all(sharded.shard_of(k["id"]) == i for k in keys)
    assert sum(len(query(d, "SELECT 1 FROM cyclone.cyclone_runs WHERE idempotency_key LIKE 'same-%%'"))
               for d in sharded.shards) == 40


def test_signals_operator_actions_and_listings_through_the_router(sharded: Deployment) -> None:
    with Client(sharded.router) as router:
        # Keyed, so that where each run lives is fixed (a key names its partition): eight runs placed at
        # random all landed on one shard about once in 128 runs of this test.
        gated = [router.submit("shard_gated", idempotency_key=f"gated-{n}") for n in range(8)]
        broken = [router.submit("shard_broken") for _ in range(8)]
        assert {sharded.shard_of(r) for r in gated} == {0, 1}
        wait_for(lambda: len(router.dlq(workflow="shard_broken", limit=100)) == 8, 30, "eight dead letters")
        dead = router.dlq(workflow="shard_broken", limit=5)
        # A dead letter's completed_at is set (step_finished_iff_terminal); its type says datetime | None.
        assert len(dead) == 5 and [d.completed_at for d in dead] == sorted((d.completed_at for d in dead), reverse=True)  # type: ignore[type-var]
        assert router.explain_step(dead[0].id).reason == "discarded"

        assert all(router.signal(r, "go", {"by": "router"}) for r in gated[:4])
        assert all(router.pause(r) for r in gated[4:6])
        assert all(router.cancel(r, "not needed") for r in gated[6:])
        for r in broken[:4]:
            router.retry(r, "boom", 1, "try again")
        assert sum(router.retry_all(r) for r in broken[4:]) == 4
        wait_for(lambda: all(router.get_run(r).state == "completed" for r in [*gated[:4], *broken]), 30,
                   "the signalled and retried runs")
        assert [router.get_run(r).state for r in gated[4:]] == ["paused"] * 2 + ["cancelled"] * 2
        assert all(router.resume(r) for r in gated[4:6])
        assert {s.node: s.state for s in router.steps(gated[0])} == {"go": "completed", "after": "completed"}
        assert router.steps(gated[0])[1].output == {"got": {"by": "router"}}

        listed = router.list_runs(workflow="shard_gated", limit=100)
        assert sorted(r.id for r in listed) == sorted(gated)
        newest = router.list_runs(workflow="shard_gated", limit=3)
        assert [r.id for r in newest] == [r.id for r in listed[:3]]
        assert [r.id for r in router.list_runs(workflow="shard_gated", state="cancelled")] != []

        gauges = [m for m in router.metrics() if m.name == "cyclone_runs" and m.labels["workflow"] == "shard_gated"]
        assert {m.labels["shard"] for m in gauges} == {"shard-0", "shard-1"}

        # A shard's error comes back as the shard raised it.
        missing = "00000000-0000-4000-8000-000000000001"
        with pytest.raises(errors.NotFound) as via_router:
            router.get_run(missing)
        with Client(sharded.shards[1]) as direct, pytest.raises(errors.NotFound) as direct_error:
            direct.get_run(missing)
        assert via_router.value.message == direct_error.value.message
        with pytest.raises(errors.NotFound, match='workflow "nope" not found'):
            router.submit("nope")
    audit = [a for d in sharded.shards for a in query(d, "SELECT action, reason FROM cyclone.cyclone_audit")]
    assert sorted(a["action"] for a in audit).count("retry") == 8


def test_definitions_and_limits_go_to_every_shard_and_a_schedule_to_its_name(sharded: Deployment) -> None:
    with Client(sharded.router) as router:
        router.define_workflow("shard_only_defined", {"nodes": [{"name": "a", "handler": "nobody"}]})
        router.define_limit("shard_lim", concurrency=3)
        router.schedule("nightly-report", "0 3 * * *", "shard_leaf", {"n": 1})
    for dsn in sharded.shards:
        assert query(dsn, "SELECT name FROM cyclone.cyclone_workflows WHERE name = 'shard_only_defined'")
        assert query(dsn, "SELECT concurrency FROM cyclone.cyclone_limits WHERE name = 'shard_lim'") == [
            {"concurrency": 3}]
    partition = query(sharded.shards[0], "SELECT hashtext('nightly-report') & 3 AS p")[0]["p"]
    holders = [i for i, d in enumerate(sharded.shards)
               if query(d, "SELECT 1 FROM cyclone.cyclone_schedules WHERE name = 'nightly-report'")]
    assert holders == [partition % 2]
    with Client(sharded.router) as router, Client(sharded.shards[0]) as direct:
        assert router.unschedule("nightly-report")
        assert router.drop_limit("shard_lim")
        after = datetime(2030, 3, 30, 12, tzinfo=UTC)
        assert router.next_fire("30 2 * * *", after, "Europe/Paris") == direct.next_fire(
            "30 2 * * *", after, "Europe/Paris")


@pytest.fixture
def two_clusters() -> Iterator[list[db.EmbeddedCluster]]:
    """Two clusters of their own (unix sockets only), each to hold one shard."""
    home = Path("/var/tmp") / f"cyclone-shards-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    clusters = [db.EmbeddedCluster(home=home / f"s{i}", port=5432 + i) for i in range(2)]
    try:
        yield clusters
    finally:
        for c in clusters:
            c.destroy()
        shutil.rmtree(home, ignore_errors=True)


def _timed(call: Any) -> tuple[float, BaseException | None]:
    """How long ``call()`` took, and what it raised."""
    began = time.monotonic()
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the caller checks what it was
        return time.monotonic() - began, exc
    return time.monotonic() - began, None


def _unreachable(exc: BaseException | None, shard: str) -> bool:
    return isinstance(exc, errors.DatabaseUnavailable) and exc.sqlstate == "08006" \
        and str(exc).startswith(f"shard {shard} ")


@pytest.mark.cluster
def test_a_stopped_shard_fails_only_its_own_calls_and_loses_nothing(
        embedded_db: db.EmbeddedCluster, two_clusters: list[db.EmbeddedCluster], tmp_path: Path) -> None:
    """Issue 37: with one shard stopped, submits with keys of the other, reads of its runs and its worker carry
    on; every call for the stopped shard fails fast (within 1 s: its socket refuses the router's connection at
    once) with one error naming it; when it is back, its runs resume with nothing lost. (The client's
    statement_timeout keeps a hang from hanging the test.)"""
    for c in two_clusters:
        c.start()
    dsns = [c.url() for c in two_clusters]
    router = embedded_db.create_database(f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}_router")
    deployment = Deployment(router, dsns)
    procs: list[WorkerProcess] = []
    try:
        shards.init(router, dsns, PARTITIONS)
        procs = [start_worker(dsns, tmp_path / "w.log")]
        wait_for(lambda: "worker started" in procs[0].text(), 30, "the worker up")
        with Client(router, statement_timeout=3 * shards.CONNECT_TIMEOUT) as client:
            before = [client.submit("shard_dag", {"n": n}) for n in range(40)]
            live = [r for r in before if deployment.shard_of(r) == 0]
            lost = [r for r in before if deployment.shard_of(r) == 1]
            assert live and lost
            two_clusters[1].stop("immediate")
            on_a, on_b, failed = 0, 0, []
            for n in range(40, 100):
                key = f"outage-{n}"
                partition = query(dsns[0], "SELECT cyclone.key_partition('shard_dag', %s) AS p", (key,))[0]["p"]
                if partition % 2 == 0:
                    client.submit("shard_dag", {"n": n}, idempotency_key=key)
                    on_a += 1
                else:
                    took, exc = _timed(lambda n=n, key=key: client.submit("shard_dag", {"n": n}, idempotency_key=key))
                    assert _unreachable(exc, "shard-1"), exc
                    assert str(exc).startswith(f"shard shard-1 (partition {partition}) is unreachable: ")
                    failed.append(took)
                    on_b += 1
            assert on_a and on_b
            # Reads of the live shard's runs carry on; reads of the stopped shard's fail fast, naming it.
            for r in live:
                assert client.get_run(r).id == r
                assert client.steps(r)
            for r in lost:
                took, exc = _timed(lambda r=r: client.get_run(r))
                assert _unreachable(exc, "shard-1"), exc
                failed.append(took)
            wait_for(lambda: query(dsns[0], "SELECT count(*) AS n FROM cyclone.cyclone_runs "
                                              "WHERE state = 'running'")[0]["n"] == 0, 60,
                       "the runs of shard-0 to complete while shard-1 is down")
            assert {client.get_run(r).state for r in live} == {"completed"}
            took, exc = _timed(client.list_runs)
            assert _unreachable(exc, "shard-1"), exc
            failed.append(took)
            stopped_fail = max(failed)
            assert stopped_fail < 1.0, f"a call for the stopped shard took {stopped_fail:.2f} s to fail"
            down = CliRunner().invoke(cli.main, ["shards", "status", "--router", router])
            assert down.exit_code == 3, down.output
            assert [line.split()[2] for line in down.output.splitlines()[1:]] == ["yes", "no:"]
            two_clusters[1].start()
            wait_for(lambda: deployment.unfinished() == 0, 90, "every run after the restart")
            states = [client.get_run(r).state for r in before]
        assert states == ["completed"] * len(before)
        total = sum(len(query(d, "SELECT 1 FROM cyclone.cyclone_runs WHERE parent_run_id IS NULL")) for d in dsns)
        assert total == len(before) + on_a

        print(f"\na call for the stopped shard failed within {stopped_fail * 1000:.0f} ms ({len(failed)} calls)")
        assert all(p.p.poll() is None for p in procs), "the worker exited"
    finally:
        for p in procs:
            p.stop()
            p.close()
        embedded_db.drop_database(db.dbname_of(router))


@pytest.fixture
def silent_host() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that answers no connection request, as a host that is down or whose packets are
    dropped: a listener that never accepts, its backlog full, so the kernel drops each SYN."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    queued = [socket.socket() for _ in range(3)]
    for s in queued:
        s.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            s.connect(("127.0.0.1", port))
    time.sleep(0.2)  # the queue is full once these are in it
    try:
        yield port
    finally:
        for s in [*queued, server]:
            s.close()


def test_a_shard_whose_host_does_not_answer_fails_its_calls_within_tcp_user_timeout(
        embedded_db: db.EmbeddedCluster, silent_host: int) -> None:
    """Issue 37: PL/Proxy connects without blocking, so libpq's connect_timeout does not bound it; the
    tcp_user_timeout that shards.router_dsn adds (5 s) does: a call for a shard whose host never answers fails
    with the 08006 error naming it within that, not after the client's statement_timeout (15 s here)."""
    router = embedded_db.create_database(f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}_router")
    try:
        db.sqitch(["deploy"], router, quiet=True, project=db.router_project())
        silent = f"host=127.0.0.1 port={silent_host} dbname=cyclone user=postgres"
        names = shards.shard_names(2)
        with Client(router, min_size=1, max_size=1) as admin:
            admin.configure_router([(names[0], shards.router_dsn(embedded_db.url())),
                                    (names[1], shards.router_dsn(silent))], shards.layout(names, PARTITIONS))
        with Client(router, statement_timeout=3 * shards.CONNECT_TIMEOUT) as client:
            took, exc = _timed(lambda: client.get_run(uuid.UUID(int=1)))  # partition 1: shard-1
        assert _unreachable(exc, "shard-1"), exc
        assert "timed out" in str(exc), exc
        assert took < shards.CONNECT_TIMEOUT + 1.5, f"the call took {took:.2f} s to fail"
        print(f"\na call for a shard whose host does not answer failed after {took:.2f} s")
    finally:
        embedded_db.drop_database(db.dbname_of(router))
