"""The web console in a real browser: Playwright driving headless Chromium
(Debian's, /usr/bin/chromium, installed by scripts/bootstrap.sh) against a
real ``cyclone ui`` on a real database, with a real worker.

Open the overview, filter the runs, open a run with a failed step, see its
DAG (one SVG node per step, coloured by state), retry the step from the page
with a reason, and see the run complete once the worker picks it up; watch a
waiting run's page follow it to its end without a reload; a run
whose node name and error hold ``<script>`` shows them as text.

Issue 36: the overview's numbers against SQL, each a link to its list, and
its next schedule slots in the browser's time zone; a running run's page
following a step that completes (its row, its node in the picture, its
timeline lane, the actions offered) without a reload; the timeline of a
step's failed attempts; a signal in the audit trail in words; no action
offered that cannot apply. The tests save screenshots of the overview, a
live run with its timeline and the dead letters into
``.cyclone/screenshots/`` (ignored); ``make screenshots`` copies them to
``docs/console/``.

And the attack of issue 30 (finding 4): a page served from another port of
127.0.0.1 sets the console's CSRF cookie with ``document.cookie`` and posts
the cancel form with the same value; the run must keep running, and the
console's own form still cancels it.
"""

from __future__ import annotations

import getpass
import re
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
import pytest
from apps.console import HOSTILE_ERROR, HOSTILE_NODE, app
from helpers import start, terminal, wait_for
from playwright.sync_api import Browser, Page, expect, sync_playwright
from ui import UI, start_ui  # noqa: F401  (the fixture)

from cyclone_py import Worker
from cyclone_py.client import ClaimedStep, Client

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / ".cyclone" / "screenshots"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                  "--disable-background-networking", "--disable-component-update"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(chromium).exists(), "Chromium is missing: run scripts/bootstrap.sh (it installs Debian's chromium)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    p = context.new_page()
    alerts: list[str] = []

    def on_dialog(dialog: Any) -> None:
        if dialog.type == "confirm":  # the console's confirm dialogs: accepted, as a person would
            dialog.accept()
        else:
            alerts.append(dialog.message)
            dialog.dismiss()

    p.on("dialog", on_dialog)
    yield p
    context.close()
    assert alerts == [], f"a page ran a script it was given: {alerts}"


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)


def test_the_console_in_a_browser(dsn: str, client: Client, workers: list[Worker], start_ui: type[UI],
                                  page: Page) -> None:
    start(workers, app, dsn)
    wait_for(lambda: "hostile" in client.workflows(), what="the worker registered its workflows")
    shop = client.submit("shop", {"order": 1042, "items": ["tea", "cups"]}, idempotency_key="order-1042")
    waiting = client.submit("approval", {"amount": 120})
    hostile = client.submit("hostile", {"html": "<script>alert('input')</script>"})
    wait_for(lambda: terminal(client, shop) and terminal(client, hostile), what="the failures")
    assert client.get_run(shop).state == "failed"
    wait_for(lambda: any(s.state == "waiting" for s in client.run_steps(waiting)), what="the wait")
    ui = start_ui(dsn, "--allow-actions")

    # The overview (test_the_overviews_numbers_are_the_databases_and_each_links_to_its_list has its numbers).
    page.goto(ui.url + "/")
    expect(page.locator("h1")).to_have_text("Overview")
    expect(page.locator('#workflows tr[data-workflow="approval"] td[data-col="running"]')).to_have_text("1")
    expect(page.locator('#workflows tr[data-workflow="shop"] td[data-col="dead"]')).to_have_text("1")

    # Filter the runs: failed ones only, then one idempotency key.
    page.click("nav >> text=Runs")
    expect(page.locator("#runs tbody tr")).to_have_count(3)
    page.select_option('select[name="state"]', "failed")
    page.click("form.filters button")
    expect(page).to_have_url(ui.url + "/runs?workflow=&state=failed&from=&until=&key=&id=")
    rows = page.locator("#runs tbody tr")
    expect(rows).to_have_count(2)
    assert sorted(rows.nth(i).get_attribute("data-run") or "" for i in range(2)) == sorted([str(shop), str(hostile)])
    page.fill('input[name="key"]', "order-1042")
    page.click("form.filters button")
    expect(rows).to_have_count(1)

    # The run with a failed step, its DAG coloured by state.
    page.click(f"a[href='/runs/{shop}']")
    expect(page.locator("h1")).to_contain_text("failed")
    nodes = page.locator("figure.dag svg g.node")
    steps = client.run_steps(shop)
    expect(nodes).to_have_count(len(steps))
    drawn = {nodes.nth(i).get_attribute("data-node"): nodes.nth(i).get_attribute("data-state")
             for i in range(len(steps))}
    assert drawn == {s.node: s.state for s in steps}
    assert drawn["charge"] == "discarded" and drawn["fetch"] == "completed"
    fills = {n: page.locator(f'figure.dag g.node[data-node="{n}"] path, '
                             f'figure.dag g.node[data-node="{n}"] polygon').first.evaluate(
                                 "e => getComputedStyle(e).fill") for n in ("fetch", "charge", "ship")}
    assert len(set(fills.values())) == 3, fills  # completed, discarded and cancelled: three colours
    expect(page.locator('#steps tr[data-node="charge"] pre.error')).to_contain_text("card declined")

    # Retry it from the page, with a reason; the worker picks it up and the run completes.
    row = page.locator('#steps tr[data-node="charge"]')
    row.locator('input[name="additional_attempts"]').fill("1")
    row.locator('input[name="reason"]').fill("the payment service is back")
    row.locator("form.retry button").click()
    expect(page.locator(".notice.ok")).to_contain_text("retried charge with 1 more attempts")
    wait_for(lambda: client.get_run(shop).state == "completed", what="the retried run completed")
    page.goto(f"{ui.url}/runs/{shop}")
    expect(page.locator("h1")).to_contain_text("completed")
    expect(nodes).to_have_count(len(steps))
    for i in range(len(steps)):
        expect(nodes.nth(i)).to_have_attribute("data-state", "completed")
    expect(page.locator("#audit")).to_contain_text("the payment service is back")
    child = next(s.child_run_id for s in client.run_steps(shop) if s.node == "invoice")
    page.click(f"#steps a[href='/runs/{child}']")
    expect(page.locator("dl.fields")).to_contain_text(str(shop))  # the child names its parent

    # A run that is not over follows itself (SPEC 16): signalled behind the page's back, its page shows the
    # wait completed and the run completed, without a reload (a mark set on the window survives).
    page.goto(f"{ui.url}/runs/{waiting}")
    expect(page.locator("#live")).to_have_count(1)
    page.evaluate("window.__notReloaded = true")
    client.signal(waiting, "approve", {"by": "the browser test"})
    expect(page.locator("h1")).to_contain_text("completed", timeout=15_000)
    expect(page.locator('#steps tr[data-node="approve"]')).to_have_attribute("data-state", "completed")
    expect(page.locator('figure.dag g.node[data-node="approve"]')).to_have_attribute("data-state", "completed")
    assert page.evaluate("window.__notReloaded") is True
    expect(page.locator("#live")).to_have_count(1)  # the page it started with; the fetched one had none

    # The dead letters: the hostile run's, its node name and error as text.
    page.click("nav >> text=Dead letters")
    dlq = page.locator("#dlq tbody tr")
    expect(dlq).to_have_count(1)
    expect(dlq.first.locator("td").nth(3)).to_have_text(HOSTILE_NODE)
    shot(page, "dead-letters")
    page.click(f"#dlq a[href='/runs/{hostile}']")
    expect(page.locator("#steps td.node").first).to_contain_text(HOSTILE_NODE)
    expect(page.locator("#steps pre.error").first).to_contain_text(HOSTILE_ERROR)
    expect(page.locator("figure.dag svg text").first).to_have_text(HOSTILE_NODE)
    assert page.locator("main script, main img").count() == 0
    time.sleep(0.2)  # a script that ran would have raised its alert by now (the fixture checks)


TOSSED = "tossed-by-the-attacker-page-0123456789"


def attacker(console_url: str, run: object) -> Iterator[str]:
    """A page on another port of 127.0.0.1 that sets the console's CSRF cookie
    (cookies do not keep ports apart) and posts the console's cancel form with
    the same value as its token: the double submit the console trusted."""
    body = f"""<!doctype html><title>win a prize</title>
<form id="f" method="post" action="{console_url}/runs/{run}/cancel">
<input name="csrf" value="{TOSSED}"><input name="reason" value="tossed"></form>
<script>
document.cookie = "cyclone_ui_csrf={TOSSED}; path=/";
document.getElementById("f").submit();
</script>""".encode()

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_of_another_port_cannot_cancel_a_run_by_tossing_the_csrf_cookie(
        dsn: str, client: Client, start_ui: type[UI], page: Page) -> None:
    for name, definition in app.definitions():
        client.define_workflow(name, definition)
    run = client.submit("approval", {"amount": 120})
    ui = start_ui(dsn, "--allow-actions")
    for evil in attacker(ui.url, run):
        assert evil.rsplit(":", 1)[1] != ui.url.rsplit(":", 1)[1]
        page.goto(evil)  # a fresh browser: no console cookie yet
        page.wait_for_url(f"{ui.url}/runs/{run}/cancel")
        expect(page.locator("h1")).to_have_text("Error 403")
        expect(page.locator(".error-line")).to_contain_text("another origin")
        cookies = {c["name"]: c["value"] for c in page.context.cookies(ui.url)}
        assert cookies["cyclone_ui_csrf"] == TOSSED  # the toss worked; it bought nothing
    assert client.get_run(run).state == "running" and client.audit(run) == []

    # The console's own form, in the same browser (the tossed cookie still set), cancels it.
    page.goto(f"{ui.url}/runs/{run}")
    form = page.locator(f'form[action="/runs/{run}/cancel"]')
    form.locator('input[name="reason"]').fill("a real cancel")
    form.locator("button").click()
    expect(page.locator(".notice.ok")).to_have_text("cancelled")
    assert client.get_run(run).state == "cancelled"
    assert [(a.action, a.reason) for a in client.audit(run)] == [("cancel", "a real cancel")]


def test_rerun_from_a_node_in_the_browser_lands_on_the_new_run(dsn: str, client: Client, start_ui: type[UI],
                                                                page: Page) -> None:
    """SPEC 17: a finished run's Rerun form, its node picked from the select, confirmed; the browser follows
    the redirect to the new run, whose page names the original."""
    for name, definition in app.definitions():
        client.define_workflow(name, definition)
    run = client.submit("approval", {"amount": 120})
    client.cancel(run, "changed their mind")
    ui = start_ui(dsn, "--allow-actions")
    page.goto(f"{ui.url}/runs/{run}")
    form = page.locator(f'form[action="/runs/{run}/rerun"]')
    form.locator('select[name="from_node"]').select_option("approve")
    form.locator('input[name="reason"]').fill("asked again")
    form.locator("button").click()
    expect(page.locator("#rerun-of a")).to_have_attribute("href", f"/runs/{run}")
    [new] = [r.id for r in client.list_runs(workflow="approval") if r.id != run]
    assert page.url == f"{ui.url}/runs/{new}"
    expect(page.locator("#audit")).to_contain_text("asked again")
    assert [(a.action, a.node) for a in client.audit(new)] == [("rerun", "approve")]


# -- issue 36: the overview, a live run, its timeline, the audited signal, the actions offered -------------

PIPE = {"nodes": [{"name": "fetch"}, {"name": "charge", "deps": ["fetch"], "max_attempts": 3},
                  {"name": "ship", "deps": ["charge"]}]}
FRAGILE = {"nodes": [{"name": "fetch"}, {"name": "charge", "deps": ["fetch"], "max_attempts": 1}]}
GATE = {"nodes": [{"name": "ask"}, {"name": "approve", "kind": "wait", "signal": "approve", "deps": ["ask"]},
                  {"name": "go", "deps": ["approve"]}]}
SLOW = {"nodes": [{"name": "crunch"}]}
HAND = "billing-1"  # the test is the worker: it claims, completes and fails steps by hand


def claim(client: Client, workflow: str, node: str) -> ClaimedStep:
    """The due step of ``node`` of ``workflow`` (one run of it is due at a time here)."""
    [step] = client.claim(HAND, [node], 1, 600.0, [workflow])
    return step


def finish(client: Client, workflow: str, *nodes: str, fail: str | None = None) -> None:
    """Claim and complete each node in turn (``fail``: fail it instead, to a dead letter)."""
    for node in nodes:
        c = claim(client, workflow, node)
        if node == fail:
            client.fail(c.step_id, HAND, c.lease_generation, f"RuntimeError: {node} refused", "error")
        else:
            client.complete(c.step_id, HAND, c.lease_generation, {"node": node})


def sql_value(dsn: str, query: str, *params: Any) -> Any:
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def cell(page: Page, workflow: str, col: str) -> Any:
    return page.locator(f'#workflows tr[data-workflow="{workflow}"] td[data-col="{col}"] a.count, '
                        f'#workflows tr[data-workflow="{workflow}"] td[data-col="{col}"] > a').first


def test_the_overviews_numbers_are_the_databases_and_each_links_to_its_list(
        dsn: str, client: Client, start_ui: type[UI], browser: Browser) -> None:
    """The overview in human terms (issue 36, 1): each workflow's live runs, the runs that ended in the last
    hour by how they ended (sparklines by minute of finishing, from the engine's own data: a run created
    before the hour that ends in it counts; one archived counts as one in the live table), dead letters with
    the newest errors, the registry's workers, the
    limits' buckets (the default one named), the next schedule slots in the browser's time zone; each number
    equal to SQL's and a link to the list of exactly those rows."""
    for name, definition in (("pipe", PIPE), ("fragile", FRAGILE), ("gate", GATE), ("slow", SLOW)):
        client.define_workflow(name, definition)
    client.define_limit("stripe", concurrency=2)
    client.submit("slow", {})  # created more than an hour before it ends: in the hour's numbers by its end
    client.advance_time(3600)
    client.schedule("nightly", "0 3 * * *", "pipe", timezone="Europe/Berlin")
    for minute in range(0, 36, 3):  # a run every 3 minutes of the last hour, by the engine's clock
        client.submit("pipe", {"n": minute})
        finish(client, "pipe", "fetch", "charge", "ship")
        if minute % 9 == 0:
            client.submit("fragile", {"n": minute})
            finish(client, "fragile", "fetch", "charge", fail="charge")
        if minute % 12 == 0:
            gated = client.submit("gate", {"n": minute})
            finish(client, "gate", "ask")
            if minute == 12:
                client.pause(gated)
        client.advance_time(180)
    finish(client, "slow", "crunch")
    client.archive()  # the runs finished so far move to their day's table: counted all the same
    cancelled = client.submit("pipe", {"n": "late"})
    client.cancel(cancelled, "not needed")
    client.submit("pipe", {"n": "now"})
    held = claim(client, "pipe", "fetch")  # running, held by the registered worker
    client.register_worker(HAND, {"handlers": ["fetch", "charge", "ship"], "host": "h1", "pid": 1})
    ui = start_ui(dsn)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Kolkata")
    page = context.new_page()
    try:
        page.goto(ui.url + "/")
        expect(page.locator("h1")).to_have_text("Overview")
        count = "SELECT count(*)::int FROM cyclone.cyclone_v_runs WHERE workflow = %s AND state = %s"
        since = sql_value(dsn, "SELECT date_trunc('minute', cyclone.now()) - interval '59 minutes'")
        hour = count + " AND finished_at >= %s"
        for wf in ("pipe", "fragile", "gate", "slow"):
            for col, state in (("running", "running"), ("paused", "paused")):
                expect(cell(page, wf, col)).to_have_text(str(sql_value(dsn, count, wf, state)))
            for state in ("completed", "failed", "cancelled"):
                expect(cell(page, wf, f"hour_{state}")).to_have_text(str(sql_value(dsn, hour, wf, state, since)))
            dead = sql_value(dsn, "SELECT count(*)::int FROM cyclone.cyclone_v_dlq WHERE workflow = %s", wf)
            expect(cell(page, wf, "dead")).to_have_text(str(dead))
        assert cell(page, "pipe", "hour_completed").inner_text() == "12"
        assert cell(page, "pipe", "hour_cancelled").inner_text() == "1"
        assert cell(page, "slow", "hour_completed").inner_text() == "1"  # created before the hour, ended in it
        assert cell(page, "fragile", "hour_failed").inner_text() == "4"
        assert cell(page, "gate", "paused").inner_text() == "1"
        # The sparkline of fragile's failures: one bar a minute that had one end, each titled with its count.
        minutes = sql_value(dsn, "SELECT count(DISTINCT date_trunc('minute', finished_at))::int FROM "
                                 "cyclone.cyclone_v_runs WHERE workflow = 'fragile' AND state = 'failed'")
        bars = page.locator('#workflows tr[data-workflow="fragile"] svg.spark-failed a')
        expect(bars).to_have_count(minutes)
        dlq = sql_value(dsn, "SELECT count(*)::int FROM cyclone.cyclone_v_dlq")
        expect(page.locator('#totals [data-total="dead"] strong')).to_have_text(str(dlq))
        expect(page.locator("#dead-letters tbody tr")).to_have_count(min(dlq, 5))
        expect(page.locator("#dead-letters tbody tr").first).to_contain_text("RuntimeError: charge refused")
        worker = page.locator(f'#workers tr[data-worker="{HAND}"] td')
        expect(worker.nth(1)).to_have_text("yes")
        expect(worker.nth(2)).to_have_text("fetch, charge, ship")
        expect(worker.nth(3)).to_have_text("1")
        expect(page.locator('#limits tr[data-limit="stripe"] td').nth(1)).to_have_text("default")
        # The next slot in the browser's zone (Asia/Kolkata, +05:30), from the UTC the page carries.
        [nightly] = client.schedules("nightly")
        local = nightly.next_fire_at.astimezone(ZoneInfo("Asia/Kolkata")).strftime("%Y-%m-%d %H:%M:%S")
        expect(page.locator('#schedules tr[data-schedule="nightly"] time')).to_have_text(f"{local} UTC+05:30")
        shot(page, "overview")

        # Each number is its list: fragile's failures of the hour, then one minute's bar, then the dead letters.
        cell(page, "fragile", "hour_failed").click()
        expect(page.locator("h1")).to_have_text("Runs")
        expect(page.locator("#runs tbody tr")).to_have_count(4)
        expect(page.locator("#runs tbody tr .state")).to_have_text(["failed"] * 4)
        expect(page.locator("#runs td.failure").first).to_contain_text("charge")
        page.go_back()
        title = bars.first.locator("title").text_content() or ""
        n = int(title.split()[0])
        bars.first.click()
        expect(page.locator("#runs tbody tr")).to_have_count(n)
        ended = page.locator("#runs tbody tr td").nth(4).inner_text()
        assert ended[11:16] == re.search(r"ended (\d\d:\d\d)", title)[1]  # type: ignore[index]
        page.go_back()
        page.locator('#totals [data-total="dead"]').click()
        expect(page.locator("#dlq tbody tr")).to_have_count(dlq)
        page.go_back()
        page.locator('#limits tr[data-limit="stripe"] a').click()
        expect(page.locator("#limits tbody tr")).to_have_count(1)
    finally:
        context.close()
    client.complete(held.step_id, HAND, held.lease_generation, None)


def test_a_running_runs_page_follows_a_step_that_completes_with_its_timeline_and_actions(
        dsn: str, client: Client, start_ui: type[UI], page: Page) -> None:
    """A run's page while it runs (issue 36, 2): the timeline draws each attempt of charge (two failed, a mark
    at each error's time from cyclone_step_errors; the third running, a bar); when charge completes under the
    page, its row, its node in the picture and its lane say so without a reload, and once the run is over
    the page stops offering Cancel and Pause and offers Rerun."""
    client.define_workflow("pipe", PIPE)
    run = client.submit("pipe", {"order": 1042})
    finish(client, "pipe", "fetch")
    client.advance_time(4)
    for _ in range(2):
        c = claim(client, "pipe", "charge")
        client.advance_time(3)
        assert client.fail(c.step_id, HAND, c.lease_generation, "TimeoutError: the bank", "timeout", 0) == "available"
        client.advance_time(5)
    charge = claim(client, "pipe", "charge")  # the third attempt, running
    client.advance_time(6)
    ui = start_ui(dsn, "--allow-actions")
    page.goto(f"{ui.url}/runs/{run}")
    lane = page.locator('#timeline tr[data-lane="charge"]')
    expect(lane).to_have_attribute("data-lane-state", "running")
    marks = lane.locator("line.mark")
    expect(marks).to_have_count(2)
    times = [sql_value(dsn, "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') FROM "
                            "cyclone.cyclone_step_errors WHERE run_id = %s ORDER BY id OFFSET %s LIMIT 1", run, i)
             for i in range(2)]
    assert [marks.nth(i).locator("title").text_content() for i in range(2)] == [
        f"attempt {i + 1} failed at {t} UTC (timeout)" for i, t in enumerate(times)]
    bar = lane.locator("rect.bar")
    expect(bar).to_have_attribute("data-attempt", "3")
    xs = [float(marks.nth(i).get_attribute("x1") or 0) for i in range(2)] + [float(bar.get_attribute("x") or 0)]
    assert xs == sorted(xs) and xs[0] < xs[1] < xs[2], xs  # first failure, second, then the running attempt
    expect(page.locator('#timeline tr[data-lane="fetch"] rect.bar')).to_have_class(re.compile("step-completed"))
    expect(page.locator('#timeline tr[data-lane="ship"] rect.bar')).to_have_count(0)
    expect(page.locator('#steps tr[data-node="ship"] .why')).to_have_text("waiting for dependency charge")
    expect(page.locator(f'form[action="/runs/{run}/cancel"]')).to_have_count(1)
    shot(page, "run")

    page.evaluate("window.__notReloaded = true")
    client.complete(charge.step_id, HAND, charge.lease_generation, {"charged": 42})
    expect(page.locator('#steps tr[data-node="charge"]')).to_have_attribute("data-state", "completed", timeout=15_000)
    expect(page.locator('figure.dag g.node[data-node="charge"]')).to_have_attribute("data-state", "completed")
    expect(lane).to_have_attribute("data-lane-state", "completed")
    expect(lane.locator("rect.bar")).to_have_class(re.compile("step-completed"))
    expect(page.locator('#steps tr[data-node="ship"]')).to_have_attribute("data-state", "available")
    finish(client, "pipe", "ship")
    expect(page.locator("h1")).to_contain_text("completed", timeout=15_000)
    expect(page.locator(f'form[action="/runs/{run}/cancel"]')).to_have_count(0)
    expect(page.locator(f'form[action="/runs/{run}/pause"]')).to_have_count(0)
    expect(page.locator(f'form[action="/runs/{run}/rerun"]')).to_have_count(1)
    assert page.evaluate("window.__notReloaded") is True


def test_a_signal_is_in_the_audit_trail_with_its_size_and_who_sent_it(
        dsn: str, client: Client, start_ui: type[UI], page: Page) -> None:
    """Issue 36, 3: a signal sent from the page and one sent by SQL are audit rows the page words as
    ``signal approve (N bytes)`` by whom, N the engine's payload_bytes; the payload's content is not shown."""
    client.define_workflow("gate", GATE)
    run = client.submit("gate", {"amount": 120})
    finish(client, "gate", "ask")
    client.signal(run, "early", None)  # no wait node of that name: refused (false), not audited
    ui = start_ui(dsn, "--allow-actions")
    page.goto(f"{ui.url}/runs/{run}")
    expect(page.locator("#audit")).to_have_count(0)
    form = page.locator(f'form[action="/runs/{run}/signal"]')
    expect(form.locator('input[name="name"]')).to_have_value("approve")  # the one signal awaited
    form.locator('textarea[name="payload"]').fill('{"by": "ann", "secret": "hunter2"}')
    form.locator("button").click()
    expect(page.locator(".notice.ok")).to_have_text("signal approve delivered")
    row = page.locator('#audit tr[data-action="signal"]')
    expect(row).to_have_count(1)
    size, actor = sql_value(dsn, "SELECT ((detail->>'payload_bytes')::int, actor) FROM cyclone.cyclone_v_audit "
                                 "WHERE run_id = %s", run)
    size = int(size)
    assert actor.startswith(getpass.getuser() + " via ") and actor.endswith(" from cyclone-ui")  # who, from where
    expect(row.locator("td.what")).to_have_text(f"signal approve ({size} bytes)")
    expect(row.locator("td").nth(3)).to_have_text(actor)
    expect(page.locator("#audit")).not_to_contain_text("hunter2")
    # Once approved there is nothing left to signal: the form is gone.
    expect(form).to_have_count(0)


def test_the_run_page_offers_only_the_actions_that_can_apply(
        dsn: str, client: Client, start_ui: type[UI], page: Page) -> None:
    """Issue 36, 3: the engine refuses an action that cannot apply; the page does not offer it. Retry all
    needs a dead letter (and a run that was not cancelled), cancel a live run, pause a running one, resume a
    paused one, a signal a wait node still to complete, rerun a finished run."""
    for name, definition in (("pipe", PIPE), ("fragile", FRAGILE), ("gate", GATE)):
        client.define_workflow(name, definition)
    completed = client.submit("pipe", {})
    finish(client, "pipe", "fetch", "charge", "ship")
    failed = client.submit("fragile", {})
    finish(client, "fragile", "fetch", "charge", fail="charge")
    gate = client.submit("gate", {})
    finish(client, "gate", "ask")
    paused = client.submit("pipe", {})
    client.pause(paused)
    running = client.submit("pipe", {})  # no wait node: nothing to signal
    cancelled = client.submit("gate", {})
    client.cancel(cancelled)
    expected = {
        completed: {"rerun"},
        failed: {"retry-all", "rerun", "retry"},
        gate: {"cancel", "pause", "signal"},
        paused: {"cancel", "resume"},
        running: {"cancel", "pause"},
        cancelled: {"rerun"},
    }
    ui = start_ui(dsn, "--allow-actions")
    for run, actions in expected.items():
        page.goto(f"{ui.url}/runs/{run}")
        offered = page.locator(f'form[action^="/runs/{run}/"]').evaluate_all(
            "forms => forms.map(f => f.getAttribute('action').split('/').pop())")
        assert set(offered) == actions, (client.get_run(run).state, offered)
    page.goto(f"{ui.url}/runs/{completed}")
    expect(page.locator("section.actions")).not_to_contain_text("Retry all")
    page.goto(f"{ui.url}/runs/{failed}")
    expect(page.locator(f'form[action="/runs/{failed}/retry-all"] button')).to_have_text("Retry all (1)")
