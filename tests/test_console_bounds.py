"""Every console page is bounded, whatever the run behind it (issue 30,
finding 7), against a real ``cyclone ui`` process on a real database.

- A run with 1,500 errors of 32,000 characters was a 15 MB page (the
  console's memory went from 50 to 245 MB): the error history is now the
  newest 50, each cut to its last 2,000 characters with a link to its own
  page, and "older errors" pages through the rest.
- A run of 1,000 nodes (the most the engine allows) lists its steps 50 a page,
  and draws no picture (past 300 nodes or 600 edges).
- ``dot`` never holds a page: it runs on a background thread, and a page waits
  for it at most a second, then says the picture is being laid out.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
from ui import UI, start_ui  # noqa: F401  (the fixture)

from cyclone_py.client import Client

Conn = psycopg.Connection[tuple[object, ...]]


def http(ui: UI) -> httpx.Client:
    return httpx.Client(base_url=ui.url, follow_redirects=False, timeout=30)


def rss_mb(ui: UI) -> float:
    for line in Path(f"/proc/{ui.p.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def layered(n: int, width: int) -> dict[str, Any]:
    """``n`` nodes in layers of ``width``, each after two of the layer before."""
    nodes = []
    for i in range(n):
        layer, k = divmod(i, width)
        deps = sorted({f"n{(layer - 1) * width + k}", f"n{(layer - 1) * width + (k * 7 + 3) % width}"}) if layer else []
        nodes.append({"name": f"n{i}", **({"deps": deps} if deps else {})})
    return {"nodes": nodes}


def test_a_run_with_1500_errors_of_32000_characters_is_a_bounded_page_that_pages_through_them(
        dsn: str, client: Client, conn: Conn, start_ui: type[UI]) -> None:
    client.define_workflow("flaky", {"nodes": [{"name": "a"}]})
    run = client.submit("flaky", {})
    [step] = client.claim("w1", None, 1, 30.0)
    # As the tables' owner (the engine writes one a failed attempt; 1,500 attempts is slow to make).
    conn.execute(
        "INSERT INTO cyclone.cyclone_step_errors (run_id, step_id, node, attempt, error_kind, error, worker, "
        "discarded, at) SELECT %s, %s, 'a', i, 'error', 'Traceback <b>' || i || '</b>' || repeat('E', 31960) "
        "|| E'\\nRuntimeError: attempt ' || i, 'w1', false, cyclone.now() FROM generate_series(1, 1500) i",
        (run, step.step_id))
    ui = start_ui(dsn)
    with http(ui) as h:
        before = rss_mb(ui)
        start = time.monotonic()
        page = h.get(f"/runs/{run}")
        took = time.monotonic() - start
        assert page.status_code == 200 and len(page.content) < 200_000, len(page.content)
        assert took < 5, took
        seen: list[int] = []
        attempts: list[int] = []
        url: str | None = f"/runs/{run}"
        while url is not None:
            text = h.get(url).text
            rows = re.findall(r'<tr id="error-(\d+)">.*?</tr>', text, re.DOTALL)
            assert 0 < len(rows) <= 50
            seen += [int(r) for r in rows]
            attempts += [int(a) for a in re.findall(r"RuntimeError: attempt (\d+)</pre>", text)]
            assert text.count("earlier characters not shown (<a class=\"whole\"") == len(rows)
            more = re.search(r'<a rel="next" href="([^"]+)">older errors</a>', text)
            url = more[1].replace("&amp;", "&") if more else None
        assert len(seen) == len(set(seen)) == 1500 and seen == sorted(seen, reverse=True)
        assert attempts == list(range(1500, 0, -1))  # newest first, every one once
        assert "(older ones)" in text and "newest errors" in text
        whole = h.get(f"/runs/{run}/errors/{seen[-1]}")
        assert whole.status_code == 200 and "E" * 31960 in whole.text and "Traceback &lt;b&gt;1&lt;/b&gt;" in whole.text
        grown = rss_mb(ui) - before
    assert grown < 40, f"the console grew by {grown:.0f} MB"


def test_a_run_of_1000_nodes_lists_its_steps_in_pages_without_a_picture(
        dsn: str, client: Client, start_ui: type[UI]) -> None:
    client.define_workflow("wide", layered(1000, 100))
    run = client.submit("wide", {"x": 1})
    claimed = [s for s in client.claim("w1", None, 100, 30.0) if s.run_id == run]
    for s in claimed[1:]:
        client.complete(s.step_id, "w1", s.lease_generation, {"ok": True})
    ui = start_ui(dsn)
    with http(ui) as h:
        h.get(f"/runs/{run}")
        start = time.monotonic()
        page = h.get(f"/runs/{run}")
        took = time.monotonic() - start
        assert page.status_code == 200 and took < 2, took
        assert len(page.content) < 150_000, len(page.content)
        assert re.findall(r'<tr id="step-(\d+)"', page.text) == [str(i) for i in range(50)]
        assert "steps 1–50 of 1000" in page.text and f'href="/runs/{run}?steps=20#steps"' in page.text
        assert 'data-why="too-large"' in page.text and "1,000 nodes and 1,800 edges" in page.text
        assert "<figure class=\"dag\"" not in page.text  # no picture (the timeline is SVG of its own)
        last = h.get(f"/runs/{run}?steps=20")
        assert re.findall(r'<tr id="step-(\d+)"', last.text) == [str(i) for i in range(950, 1000)]
        assert 'data-node="n999"' in last.text and "steps 951–1000 of 1000" in last.text
        assert h.get(f"/runs/{run}?steps=21").status_code == 400
        assert h.get(f"/runs/{run}?steps=0").status_code == 400


def test_a_picture_links_each_node_to_its_step_on_its_page(dsn: str, client: Client, start_ui: type[UI]) -> None:
    client.define_workflow("chain", {"nodes": [{"name": f"s{i}", **({"deps": [f"s{i - 1}"]} if i else {})}
                                               for i in range(120)]})
    run = client.submit("chain", {})
    ui = start_ui(dsn)
    with http(ui) as h:
        page = h.get(f"/runs/{run}?steps=2")
        assert page.status_code == 200 and "<svg" in page.text
        links = re.findall(r'xlink:href="([^"]+)"', page.text)
    assert links[0] == f"/runs/{run}?steps=1#step-0" and links[50] == "#step-50" and links[99] == "#step-99"
    assert links[100] == f"/runs/{run}?steps=3#step-100" and len(links) == 120


def test_a_page_does_not_wait_for_a_slow_dot(dsn: str, client: Client, start_ui: type[UI], tmp_path: Path) -> None:
    """A ``dot`` that takes 4 s (a 500-node graph took 9.8 s here, and was
    drawn while the page waited): the page answers within about a second,
    saying the picture is being laid out; once made, the picture is there."""
    real = shutil.which("dot")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    slow = bin_dir / "dot"
    slow.write_text(f"#!/bin/sh\nsleep 4\nexec {real} \"$@\"\n")
    slow.chmod(slow.stat().st_mode | stat.S_IXUSR)
    client.define_workflow("small", {"nodes": [{"name": "a"}, {"name": "b", "deps": ["a"]}]})
    run = client.submit("small", {})
    ui = start_ui(dsn, env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    with http(ui) as h:
        start = time.monotonic()
        page = h.get(f"/runs/{run}")
        assert time.monotonic() - start < 3
        assert page.status_code == 200 and 'data-why="pending"' in page.text and "being laid out" in page.text
        assert 'data-node="b"' in page.text  # the steps are listed meanwhile
        time.sleep(4.5)
        assert '<g id="n1" class="node step-pending"' in h.get(f"/runs/{run}").text


def test_the_overview_counts_a_workflows_live_runs_up_to_its_cap_and_says_so(
        dsn: str, client: Client, start_ui: type[UI]) -> None:
    """Issue 36: the overview read metrics(), which reads the live runs table whole; it counts each workflow's
    oldest LIVE_CAP live runs through its index (cyclone.overview_gauges) and writes "100+" past them, the
    running and paused numbers then being of those 100. Under the cap the numbers are exact."""
    from cyclone_py.console.overview import LIVE_CAP

    client.define_workflow("busy", {"nodes": [{"name": "work"}]})
    client.define_workflow("calm", {"nodes": [{"name": "work"}]})
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SELECT cyclone.submit_many('busy', array_fill('{}'::jsonb, ARRAY[%s]))", (LIVE_CAP + 1,))
    first = client.runs_page(workflow="busy", limit=LIVE_CAP + 1).rows[-1]  # the oldest
    client.acting_as("ops").pause(first.id)
    for _ in range(3):
        client.submit("calm")
    ui = start_ui(dsn)
    with http(ui) as h:
        page = h.get("/").text
    busy = page[page.index('<tr data-workflow="busy">'):]
    busy = busy[:busy.index("</tr>")]
    assert f'data-col="running"><a href="/runs?workflow=busy&amp;state=running">{LIVE_CAP - 1}+</a>' in busy
    assert 'data-col="paused"><a href="/runs?workflow=busy&amp;state=paused">1+</a>' in busy
    calm = page[page.index('<tr data-workflow="calm">'):]
    assert 'data-col="running"><a href="/runs?workflow=calm&amp;state=running">3</a>' in calm[:calm.index("</tr>")]
    assert f"{LIVE_CAP}+: the overview counts the oldest {LIVE_CAP} live runs of a workflow" in page
    assert f'data-total="running" href="/runs?state=running"><strong>{LIVE_CAP - 1 + 3}+</strong>' in page
