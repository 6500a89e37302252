"""``cyclone exporter`` and ``cyclone top`` over a real database.

The database is given a known state (runs in each live state, a dead letter, a
step past its lease, a limit without a key and one with, two schedules); the
exporter runs as a real ``cyclone exporter`` process, is scraped over HTTP and
parsed with ``prometheus_client``'s own parser; ``cyclone top --once`` runs as a
process too, and its frame is also drawn on rich's own recording console.
"""

from __future__ import annotations

import io
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

import psycopg
import pytest
from helpers import wait_for
from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console

from cyclone_py import db
from cyclone_py.client import Client
from cyclone_py.top import frame

TESTS = Path(__file__).resolve().parent
CYCLONE = TESTS.parent / ".venv" / "bin" / "cyclone"
WORKER = "w1"

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@dataclass
class State:
    """What :func:`known_state` made, for the expected values."""

    nightly_at: float  # the next slot of schedule 'nightly' (Unix time)
    overdue_at: float  # the next slot of 'minutely', behind the engine clock


def known_state(client: Client, conn: psycopg.Connection[Any]) -> State:
    """orders (limit api, 1 at a time; keyed limit tenant): 3 runs, one step
    running (lease expired), one run paused; fragile: 1 run failed, its step a
    dead letter (permanent); idle: no runs. Schedules nightly and minutely
    (paused: omitted), the engine clock then moved 90 s on."""
    conn.execute("SELECT cyclone.define_limit('api', 1)")
    conn.execute("SELECT cyclone.define_limit('tenant', 5)")
    client.define_workflow("orders", {"max_attempts": 3, "limits": [{"name": "api"}],
                                      "nodes": [{"name": "charge", "limits": [{"name": "tenant", "key": "tenant"}]}]})
    client.define_workflow("fragile", {"max_attempts": 1, "nodes": [{"name": "boom"}]})
    client.define_workflow("idle", {"nodes": [{"name": "work"}]})
    runs = [client.submit("orders", {"tenant": f"t{i}"}) for i in range(3)]
    doomed = client.submit("fragile")
    [claimed] = client.claim(WORKER, workflows=["orders"], limit=3, lease_ttl=30)
    [boom] = client.claim("w2", workflows=["fragile"])
    assert client.fail(boom.step_id, "w2", boom.lease_generation, "no", error_kind="permanent") == "discarded"
    assert client.get_run(doomed).state == "failed"
    paused = next(r for r in runs if r != claimed.run_id)
    assert client.pause(paused)
    client.schedule("nightly", "0 3 * * *", "idle")
    client.schedule("minutely", "* * * * *", "idle")
    client.schedule("off", "0 4 * * *", "idle")
    client.pause_schedule("off")
    client.advance_time(timedelta(seconds=90))  # past the lease and the minutely slot; nothing ticks
    by_name = {s.name: s.next_fire_at.timestamp() for s in client.schedules()}
    return State(nightly_at=by_name["nightly"], overdue_at=by_name["minutely"])


# -- the exporter process ------------------------------------------------------


class Exporter:
    """A ``cyclone exporter`` process; its stderr read in a thread."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([str(CYCLONE), "exporter", *args], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        self.lines: list[str] = []
        assert self.proc.stderr is not None
        self._reader = threading.Thread(target=self._read, args=(self.proc.stderr,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def log(self) -> str:
        return "\n".join(self.lines)

    def saw(self, text: str, timeout: float = 5.0) -> bool:
        """Whether ``text`` reaches the log within ``timeout``: the reader thread
        may not have taken in a line the process already wrote."""
        end = time.monotonic() + timeout
        while text not in self.log():
            if time.monotonic() > end:
                return False
            time.sleep(0.02)
        return True

    def url(self) -> str:
        def started() -> str | None:
            assert self.proc.poll() is None, f"the exporter exited: {self.log()}"
            m = next((re.search(r"exporter started url=(\S+)", ln) for ln in self.lines if "started" in ln), None)
            return m[1] if m else None
        return str(wait_for(started, timeout=15, what="the exporter to start"))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(10)
        self.close()
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@pytest.fixture
def exporters() -> Iterator[list[Exporter]]:
    started: list[Exporter] = []
    yield started
    for e in started:
        e.close()


def scrape(url: str) -> tuple[dict[str, Any], Samples]:
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    samples: Samples = {}
    for family in families.values():
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return families, samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def series(samples: Samples, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {labels: v for (n, labels), v in samples.items() if n == name}


def test_the_exporter_serves_the_engines_gauges_with_their_labels(
    dsn: str, client: Client, conn: psycopg.Connection[Any], exporters: list[Exporter]
) -> None:
    state = known_state(client, conn)
    exporter = Exporter("--dsn", dsn, "--listen", "127.0.0.1:0")
    exporters.append(exporter)
    families, s = scrape(exporter.url())

    assert value(s, "cyclone_exporter_up") == 1
    assert 0 < (value(s, "cyclone_exporter_scrape_duration_seconds") or 0) < 5
    for name in ("cyclone_runs", "cyclone_steps", "cyclone_ready_lag_seconds", "cyclone_dlq_steps",
                 "cyclone_expired_leases", "cyclone_workers", "cyclone_workers_alive", "cyclone_limit_running",
                 "cyclone_limit_saturated_buckets", "cyclone_schedule_next_fire_timestamp_seconds"):
        assert families[name].type == "gauge", name
        assert families[name].documentation, name

    runs = {(dict(lb)["workflow"], dict(lb)["state"]): v for lb, v in series(s, "cyclone_runs").items()}
    assert runs == {("orders", "running"): 2, ("orders", "paused"): 1, ("fragile", "running"): 0,
                    ("fragile", "paused"): 0, ("idle", "running"): 0, ("idle", "paused"): 0}
    assert value(s, "cyclone_steps", workflow="orders", state="running") == 1
    assert value(s, "cyclone_steps", workflow="orders", state="available") == 2
    assert value(s, "cyclone_steps", workflow="idle", state="pending") == 0
    lag = value(s, "cyclone_ready_lag_seconds", workflow="orders")
    assert lag is not None and 90 <= lag < 150  # submitted 90 s of engine time ago (and the test's own seconds)
    assert value(s, "cyclone_ready_lag_seconds", workflow="idle") == 0
    assert series(s, "cyclone_dlq_steps") == {(("error_kind", "permanent"), ("workflow", "fragile")): 1}
    assert value(s, "cyclone_expired_leases") == 1
    assert value(s, "cyclone_workers") == 1
    assert value(s, "cyclone_workers_alive") == 0  # the lease holder never registered (SPEC 18)
    # One family, two label sets (SPEC 14): the keyed limit's total has no bucket.
    assert series(s, "cyclone_limit_running") == {(("bucket", ""), ("limit", "api")): 1,
                                                  (("limit", "tenant"),): 1}
    assert value(s, "cyclone_limit_saturated_buckets", limit="api") == 1
    assert value(s, "cyclone_limit_saturated_buckets", limit="tenant") == 0
    assert series(s, "cyclone_schedule_next_fire_timestamp_seconds") == {
        (("schedule", "minutely"),): state.overdue_at, (("schedule", "nightly"),): state.nightly_at}
    assert any(n.startswith("process_") for n, _ in s)  # prometheus_client's process collector

    # A connection the server closed (as a restart does) costs no failed scrape.
    assert conn.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        "WHERE application_name = 'cyclone-exporter'").fetchone() == (1,)
    _, after = scrape(exporter.url())
    assert value(after, "cyclone_exporter_up") == 1

    # Each scrape reads the database again: nothing is cached.
    client.cancel(next(iter(r.id for r in client.list_runs(workflow="orders", state="paused"))))
    _, again = scrape(exporter.url())
    assert value(again, "cyclone_runs", workflow="orders", state="paused") == 0

    assert exporter.stop() == 0
    assert exporter.saw("exporter stopped")
    assert "Traceback" not in exporter.log()


def test_an_unreachable_database_is_up_0_and_the_exporter_reconnects(
    embedded_db: db.EmbeddedCluster, template_db: str, exporters: list[Exporter]
) -> None:
    name = f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    target = embedded_db.url(name)  # does not exist yet
    try:
        exporter = Exporter("--dsn", target, "--listen", "127.0.0.1:0", "--scrape-timeout", "2s")
        exporters.append(exporter)
        url = exporter.url()
        families, s = scrape(url)
        assert value(s, "cyclone_exporter_up") == 0
        assert not any(n.startswith("cyclone_") and not n.startswith("cyclone_exporter") for n, _ in s)
        assert exporter.saw("does not exist")

        embedded_db.create_database(name, template=template_db)  # the database comes (back)
        _, s = scrape(url)
        assert value(s, "cyclone_exporter_up") == 1
        assert value(s, "cyclone_workers") == 0

        embedded_db.drop_database(name)  # and goes away under an open connection
        _, s = scrape(url)
        assert value(s, "cyclone_exporter_up") == 0
        assert exporter.proc.poll() is None
        _, s = scrape(url)  # still answering, still 0
        assert value(s, "cyclone_exporter_up") == 0
        assert exporter.stop() == 0
        assert "Traceback" not in exporter.log()
    finally:
        embedded_db.drop_database(name)


@pytest.mark.slow
def test_a_slow_database_is_up_0_within_the_scrape_timeout(
    dsn: str, client: Client, conn: psycopg.Connection[Any], exporters: list[Exporter]
) -> None:
    """metrics() blocked (here by a lock on a table it reads, held far longer
    than the timeout) is cancelled by the exporter's statement timeout: the
    scrape answers up 0 instead of hanging, and the next one is up again."""
    client.define_workflow("idle", {"nodes": [{"name": "work"}]})
    exporter = Exporter("--dsn", dsn, "--listen", "127.0.0.1:0", "--scrape-timeout", "1s")
    exporters.append(exporter)
    url = exporter.url()
    _, s = scrape(url)
    assert value(s, "cyclone_exporter_up") == 1
    with psycopg.connect(dsn) as locker:  # a transaction, open until the block ends
        locker.execute("LOCK TABLE cyclone.cyclone_schedules IN ACCESS EXCLUSIVE MODE")
        _, s = scrape(url)  # urlopen's own timeout is 10 s: a hung scrape fails the test
        assert value(s, "cyclone_exporter_up") == 0
        assert 1 <= (value(s, "cyclone_exporter_scrape_duration_seconds") or 0) < 5
        assert not any(n == "cyclone_runs" for n, _ in s)
        assert exporter.saw("statement timeout")
        locker.rollback()
    _, s = scrape(url)
    assert value(s, "cyclone_exporter_up") == 1
    assert value(s, "cyclone_runs", workflow="idle", state="running") == 0
    assert exporter.stop() == 0
    assert "Traceback" not in exporter.log()


def test_sigint_stops_the_exporter_cleanly(dsn: str, exporters: list[Exporter]) -> None:
    exporter = Exporter("--dsn", dsn, "--listen", "127.0.0.1:0")
    exporters.append(exporter)
    url = exporter.url()
    exporter.proc.send_signal(signal.SIGINT)
    assert exporter.proc.wait(10) == 0
    exporter.close()
    assert exporter.saw("exporter stopped")
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)


@pytest.mark.parametrize("listen, message", [
    ("nonsense", "'nonsense' is not HOST:PORT"),
    ("127.0.0.1:65536", "is not HOST:PORT"),
])
def test_a_bad_listen_address_is_one_line(dsn: str, listen: str, message: str) -> None:
    result = subprocess.run([str(CYCLONE), "exporter", "--dsn", dsn, "--listen", listen],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_a_port_in_use_is_one_line(dsn: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([str(CYCLONE), "exporter", "--dsn", dsn, "--listen", f"127.0.0.1:{port}"],
                                capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"cyclone: cannot serve metrics on 127.0.0.1:{port}: Address already in use"), result.stderr
    assert "Traceback" not in result.stderr


def test_a_malformed_dsn_is_one_line() -> None:
    result = subprocess.run([str(CYCLONE), "exporter", "--dsn", "nonsense=1", "--listen", "127.0.0.1:0"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "bad DSN" in result.stderr, result.stderr


# -- cyclone top -----------------------------------------------------------------


def test_top_once_prints_the_gauges(dsn: str, client: Client, conn: psycopg.Connection[Any]) -> None:
    known_state(client, conn)
    result = subprocess.run([str(CYCLONE), "top", "--once", "--dsn", dsn], capture_output=True, text=True,
                            timeout=30, env={**os.environ, "COLUMNS": "160"})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "\x1b[" not in out  # no terminal: no escape codes
    # alive: registered workers (none here); busy: lease holders (SPEC 18)
    assert re.search(r"workers alive 0\s+busy 1\s+expired leases 1", out), out
    cells = [line.split() for line in out.splitlines()]
    rows = {c[0]: c[1:] for c in cells if len(c) == 9}  # the workflows table's rows
    # runs running, paused; steps pending, available, running, waiting; ready lag; dead letters
    assert rows["orders"][:6] == ["2", "1", "0", "2", "1", "0"], out
    assert rows["fragile"][:6] == ["0"] * 6 and rows["fragile"][7] == "1", out
    assert re.match(r"1m3\ds|1m[4-9]\ds|2m\d\ds", rows["orders"][6]), out
    assert re.search(r"fragile\W+permanent\W+1\b", out), out
    assert re.search(r"api\W+-\W+1\W+1\b", out), out
    assert re.search(r"tenant\W+\(every key\)\W+1\W+0\b", out), out
    assert re.search(r"minutely\W+\d{4}-\d\d-\d\d \d\d:\d\d:00Z\W+overdue", out), out
    assert "nightly" in out and "off" not in out


def test_top_frame_on_a_recording_console(dsn: str, client: Client, conn: psycopg.Connection[Any]) -> None:
    state = known_state(client, conn)
    console = Console(file=io.StringIO(), width=140, record=True)
    console.print(frame(client.metrics(), client.now(), scrape_seconds=0.012))
    text = console.export_text()
    assert "scrape 12 ms" in text
    assert "dead letters" in text and "limits" in text and "next schedules" in text
    nightly = next(line for line in text.splitlines() if "nightly" in line)
    from datetime import UTC, datetime
    assert datetime.fromtimestamp(state.nightly_at, UTC).strftime("%Y-%m-%d 03:00:00Z") in nightly


def test_top_on_an_empty_engine_says_so(dsn: str) -> None:
    result = subprocess.run([str(CYCLONE), "top", "--once", "--dsn", dsn], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 0, result.stderr
    for line in ("no workflows defined", "no dead letters", "no limits", "no active schedules"):
        assert line in result.stdout


def test_top_bad_input_is_one_line(dsn: str) -> None:
    result = subprocess.run([str(CYCLONE), "top", "--interval", "soon", "--dsn", dsn],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "is not a duration" in result.stderr, result.stderr


# -- hostile input -----------------------------------------------------------------

HOSTILE = ['<script>alert("wf")</script>', 'back\\slash "quoted" \\n', "工作流 ‮rtl", "a{b=\"c\"} 1"]


def test_hostile_names_are_label_values_exactly_as_given(
    dsn: str, client: Client, exporters: list[Exporter]
) -> None:
    """Workflow, schedule and limit names with HTML, quotes, backslashes, a
    written-out newline, exposition syntax and unicode come back from the
    scrape (prometheus_client's own parser) exactly as the engine stores them."""
    for name in HOSTILE:
        client.define_limit(f"lim {name}", concurrency=1)
        client.define_workflow(name, {"limits": [{"name": f"lim {name}"}], "nodes": [{"name": "work"}]})
        client.submit(name)
        client.schedule(f"s {name}", "0 3 * * *", name)
    client.define_workflow("fragile", {"max_attempts": 1, "nodes": [{"name": "boom"}]})
    client.submit("fragile")
    [c] = client.claim(WORKER, workflows=["fragile"])
    client.fail(c.step_id, WORKER, c.lease_generation, "<b>no</b>", error_kind="permanent")
    exporter = Exporter("--dsn", dsn, "--listen", "127.0.0.1:0")
    exporters.append(exporter)
    _, s = scrape(exporter.url())
    assert value(s, "cyclone_exporter_up") == 1
    for name in HOSTILE:
        assert value(s, "cyclone_runs", workflow=name, state="running") == 1, name
        assert value(s, "cyclone_steps", workflow=name, state="available") == 1, name
        assert value(s, "cyclone_limit_running", limit=f"lim {name}", bucket="") == 0, name
        assert value(s, "cyclone_schedule_next_fire_timestamp_seconds", schedule=f"s {name}") is not None, name
    assert value(s, "cyclone_dlq_steps", workflow="fragile", error_kind="permanent") == 1
    assert exporter.stop() == 0
    assert "Traceback" not in exporter.log()


@pytest.mark.parametrize("path", [
    "/metrics?name[]=<script>alert(1)</script>", "/metrics?name[]=cyclone_runs&name[]=%ff%fe",
    "/?" + "a=b&" * 2000, "/%ff%fe", "/metrics/../../etc/passwd", "/metrics?%00=%00",
])
def test_malformed_requests_get_an_answer_and_the_exporter_goes_on(
    dsn: str, exporters: list[Exporter], path: str
) -> None:
    """What an exporter's port may be sent: a name filter with HTML or bytes
    that are not UTF-8, a long query, a path that climbs. Each is answered
    (never a 5xx, nothing echoed as HTML), and the next scrape is up."""
    exporter = Exporter("--dsn", dsn, "--listen", "127.0.0.1:0")
    exporters.append(exporter)
    base = exporter.url().rsplit("/", 1)[0]
    try:
        with urllib.request.urlopen(base + path, timeout=10) as response:
            status, body = response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read().decode("utf-8", "replace")
    assert status < 500, (status, body[:300])
    assert "<script" not in body
    _, s = scrape(exporter.url())
    assert value(s, "cyclone_exporter_up") == 1
    assert exporter.stop() == 0
    assert "Traceback" not in exporter.log()
