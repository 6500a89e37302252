"""The web console in a real browser: Playwright driving headless Chromium
(Debian's, /usr/bin/chromium, installed by scripts/bootstrap.sh) against a
real ``cyclone ui`` on a real database, with a real worker.

Open the overview, filter the runs, open a run with a failed step, see its
DAG (one SVG node per step, coloured by state), retry the step from the page
with a reason, and see the run complete once the worker picks it up; watch a
waiting run's page follow it to its end without a reload; a run
whose node name and error hold ``<script>`` shows them as text. The test
saves screenshots of the overview, the run page and the dead letters into
``.cyclone/screenshots/`` (ignored); ``make screenshots`` copies them to
``docs/console/``.

And the attack of issue 30 (finding 4): a page served from another port of
127.0.0.1 sets the console's CSRF cookie with ``document.cookie`` and posts
the cancel form with the same value; the run must keep running, and the
console's own form still cancels it.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from apps.console import HOSTILE_ERROR, HOSTILE_NODE, app
from helpers import start, terminal, wait_for
from playwright.sync_api import Browser, Page, expect, sync_playwright
from ui import UI, start_ui  # noqa: F401  (the fixture)

from cyclone_py import Worker
from cyclone_py.client import Client

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

    # The overview.
    page.goto(ui.url + "/")
    expect(page.locator("h1")).to_have_text("Overview")
    expect(page.locator('[data-metric="cyclone_runs"]')).to_contain_text("approval")
    expect(page.locator('[data-metric="cyclone_dlq_steps"]')).to_contain_text("shop")
    shot(page, "overview")

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
    shot(page, "run")

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
