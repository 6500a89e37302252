"""The web console over HTTP, against a real ``cyclone ui`` process on a real
database (httpx as the browser; tests/test_console_browser.py drives Chromium).

- actions are refused without --allow-actions, without the CSRF token or with
  a wrong one, and with the cyclone_client role (the engine's one-line error);
  with them, each action is the SQL function's and the audit names the actor;
- a token is required on a non-loopback bind (generated and printed), or
  whenever CYCLONE_UI_TOKEN names one; its name is the actor; a trusted proxy's
  header names the actor instead;
- without a token only a loopback Host is answered;
- hostile input: HTML in every field and filter comes back escaped; oversized
  bodies, fields and selections, malformed query strings, cursors, run ids,
  times and JSON are one-line 400s (413 for a body), never a 500;
- without Graphviz's dot the run page lists the steps and says why there is no
  picture.
"""

from __future__ import annotations

import html
import re
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from apps.console import HOSTILE_ERROR, HOSTILE_NODE, app
from psycopg import conninfo, sql
from ui import UI, start_ui  # noqa: F401  (the fixture)

from cyclone_py.client import Client
from cyclone_py.console.overview import form_time
from cyclone_py.formatting import fmt_duration

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def define(client: Client) -> None:
    for name, definition in app.definitions():
        client.define_workflow(name, definition)


def run_to(client: Client, workflow: str, fail_node: str | None = None, error: str = "boom") -> uuid.UUID:
    """Submit a run and work its steps by hand: each claimed step completes,
    ``fail_node`` fails (discarded: one attempt)."""
    run = client.submit(workflow, {"note": "<i>input</i>"})
    for _ in range(10):
        steps = [s for s in client.claim("w1", None, 10, 30.0) if s.run_id == run]
        if not steps:
            break
        for s in steps:
            if s.node == fail_node:
                client.fail(s.step_id, "w1", s.lease_generation, error, "error")
            else:
                client.complete(s.step_id, "w1", s.lease_generation, {"ok": "<b>done</b>"})
    return run


@pytest.fixture
def failed(client: Client) -> uuid.UUID:
    """A shop run whose charge is a dead letter."""
    define(client)
    run = run_to(client, "shop", "charge", "card declined <script>alert(1)</script>")
    assert client.get_run(run).state == "failed"
    return run


def http(ui: UI, **kw: Any) -> httpx.Client:
    return httpx.Client(base_url=ui.url, follow_redirects=False, timeout=20, **kw)


def csrf_of(page: httpx.Response) -> str:
    m = CSRF.search(page.text)
    assert m, "the page has no action form"
    return m[1]


def refused(response: httpx.Response, status: int, words: str) -> None:
    assert response.status_code == status, (response.status_code, response.text[:500])
    m = re.search(r'<p class="(?:error-line|notice) refused"[^>]*>(.*?)</p>', response.text, re.DOTALL)
    assert m, response.text[:500]
    assert "\n" not in m[1].strip() and words in html.unescape(m[1]), m[1]


# -- actions ----------------------------------------------------------------------


def test_actions_are_refused_without_allow_actions(dsn: str, client: Client, failed: uuid.UUID,
                                                   start_ui: type[UI]) -> None:
    ui = start_ui(dsn)
    assert "(read-only)" in ui.lines[-1]
    with http(ui) as h:
        page = h.get(f"/runs/{failed}")
        assert page.status_code == 200 and "charge" in page.text
        assert "<form method=\"post\"" not in page.text and "Retry" not in page.text
        token = page.cookies.get("cyclone_ui_csrf") or h.cookies.get("cyclone_ui_csrf")
        for path, data in [(f"/runs/{failed}/retry", {"node": "charge"}), (f"/runs/{failed}/cancel", {}),
                           ("/dead-letters/retry", {"step": f"{failed}:charge"}), ("/schedules/pause", {"name": "x"})]:
            refused(h.post(path, data={**data, "csrf": token or ""}), 403, "actions are off")
    assert client.get_run(failed).state == "failed" and client.audit(failed) == []


def test_actions_need_the_csrf_token_of_the_cookie(dsn: str, client: Client, failed: uuid.UUID,
                                                   start_ui: type[UI]) -> None:
    ui = start_ui(dsn, "--allow-actions")
    with http(ui) as h:
        token = csrf_of(h.get(f"/runs/{failed}"))
        data = {"node": "charge", "reason": "r"}
        refused(h.post(f"/runs/{failed}/retry", data=data), 403, "CSRF token is missing or wrong")
        refused(h.post(f"/runs/{failed}/retry", data={**data, "csrf": token[::-1]}), 403, "CSRF")
    with http(ui) as other:  # a page of another browser: its own cookie, not this token
        other.get("/")
        refused(other.post(f"/runs/{failed}/retry", data={**data, "csrf": token}), 403, "CSRF")
    assert client.get_run(failed).state == "failed" and client.audit(failed) == []


def test_a_tossed_csrf_cookie_is_worth_nothing(dsn: str, client: Client, failed: uuid.UUID,
                                               start_ui: type[UI]) -> None:
    """Issue 30, finding 4: a page of another port of the host set the
    ``cyclone_ui_csrf`` cookie (cookies do not keep ports apart) and posted the
    same value as the form's token, and the run was cancelled. The token is
    now an HMAC of the cookie's value under the console's secret: a value a
    page chose has no token but the one only the console can make."""
    ui = start_ui(dsn, "--allow-actions")
    chosen = "tossed-by-another-port-" + "x" * 20
    with http(ui, cookies={"cyclone_ui_csrf": chosen}) as h:
        page = h.get(f"/runs/{failed}")
        assert page.status_code == 200 and "set-cookie" not in page.headers  # the tossed value is kept...
        token = csrf_of(page)
        assert token != chosen
        for forged in (chosen, "", token[:-1]):
            refused(h.post(f"/runs/{failed}/retry", data={"csrf": forged, "node": "charge"}), 403, "CSRF")
    assert client.audit(failed) == []
    with http(ui, cookies={"cyclone_ui_csrf": chosen}) as h:  # ...and only its signed token acts
        assert h.post(f"/runs/{failed}/retry", data={"csrf": token, "node": "charge"}).status_code == 200
    assert [a.action for a in client.audit(failed)] == ["retry"]


def test_a_csrf_token_is_good_only_for_the_actor_it_was_made_for(dsn: str, client: Client, failed: uuid.UUID,
                                                                  start_ui: type[UI]) -> None:
    """Bob has a token of his own: his cookie and form token, tossed into
    Alice's browser, do not act as Alice."""
    alice, bob = "alice-secret-token-0001", "bob-secret-token-00002"
    ui = start_ui(dsn, "--allow-actions", env={"CYCLONE_UI_TOKEN": f"alice:{alice},bob:{bob}"})
    with http(ui, headers={"Authorization": f"Bearer {bob}"}) as h:
        page = h.get(f"/runs/{failed}")
        nonce, token = h.cookies["cyclone_ui_csrf"], csrf_of(page)
    with http(ui, headers={"Authorization": f"Bearer {alice}"}, cookies={"cyclone_ui_csrf": nonce}) as h:
        refused(h.post(f"/runs/{failed}/retry", data={"csrf": token, "node": "charge"}), 403, "CSRF")
    with http(ui, headers={"Authorization": f"Bearer {bob}"}, cookies={"cyclone_ui_csrf": nonce}) as h:
        assert h.post(f"/runs/{failed}/retry", data={"csrf": token, "node": "charge"}).status_code == 200
    assert [a.actor.split(" via ")[0] for a in client.audit(failed)] == ["bob"]


def test_a_form_from_another_origin_is_refused_with_a_page_that_says_why(dsn: str, client: Client,
                                                                          start_ui: type[UI]) -> None:
    """Every POST is checked against the console's own origin: ``Origin``
    (another port is another origin), else ``Sec-Fetch-Site``; with the right
    CSRF token still."""
    define(client)
    run = run_to(client, "approval")
    ui = start_ui(dsn, "--allow-actions")
    port = ui.url.rsplit(":", 1)[1]
    with http(ui) as h:
        token = csrf_of(h.get(f"/runs/{run}"))
        for headers, words in [
            ({"Origin": "http://127.0.0.1:1"}, "'http://127.0.0.1:1', not of this console (http://127.0.0.1:" + port),
            ({"Origin": f"http://localhost:{port}"}, "another origin"),
            ({"Origin": f"https://127.0.0.1:{port}"}, "another origin"),
            ({"Origin": "null"}, "no origin ('null')"),
            ({"Origin": "null", "Sec-Fetch-Site": "cross-site"}, "'cross-site' (Sec-Fetch-Site)"),
            ({"Sec-Fetch-Site": "same-site"}, "'same-site' (Sec-Fetch-Site)"),
            ({"Sec-Fetch-Site": "cross-site"}, "'cross-site' (Sec-Fetch-Site)"),
            ({"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-origin"}, "another origin"),
        ]:
            refused(h.post(f"/runs/{run}/pause", data={"csrf": token}, headers=headers), 403, words)
        assert client.get_run(run).state == "running" and client.audit(run) == []
        assert h.post(f"/runs/{run}/pause", data={"csrf": token},
                      headers={"Origin": f"http://127.0.0.1:{port}"}).status_code == 200
        assert h.post(f"/runs/{run}/resume", data={"csrf": token},
                      headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200
        assert h.post(f"/runs/{run}/pause", data={"csrf": token},
                      headers={"Origin": "null", "Sec-Fetch-Site": "same-origin"}).status_code == 200
        assert h.get(f"/runs/{run}").headers["referrer-policy"] == "same-origin"  # Origin: null otherwise
    assert [a.action for a in client.audit(run)] == ["pause", "resume", "pause"]


def test_behind_a_trusted_proxy_the_origin_is_the_forwarded_host(dsn: str, client: Client,
                                                                 start_ui: type[UI]) -> None:
    define(client)
    run = run_to(client, "approval")
    ui = start_ui(dsn, "--allow-actions", "--proxy-user-header", "X-Forwarded-User")
    proxied = {"X-Forwarded-User": "carol", "X-Forwarded-Host": "console.example", "X-Forwarded-Proto": "https"}
    with http(ui, headers=proxied) as h:
        token = csrf_of(h.get(f"/runs/{run}"))
        refused(h.post(f"/runs/{run}/pause", data={"csrf": token}, headers={"Origin": "https://evil.example"}),
                403, "not of this console (https://console.example)")
        assert h.post(f"/runs/{run}/pause", data={"csrf": token},
                      headers={"Origin": "https://console.example"}).status_code == 200
    assert [a.actor.split(" via ")[0] for a in client.audit(run)] == ["carol"]


def test_a_login_form_from_another_origin_is_refused(dsn: str, start_ui: type[UI]) -> None:
    secret = "the-only-token-of-this-console"
    ui = start_ui(dsn, env={"CYCLONE_UI_TOKEN": secret})
    with http(ui) as h:
        refused(h.post("/login", data={"token": secret}, headers={"Origin": "http://127.0.0.1:1"}), 403,
                "another origin")
        assert "cyclone_ui_token" not in h.cookies
        assert h.post("/login", data={"token": secret}).status_code == 303


def test_each_action_calls_its_function_and_names_the_actor(dsn: str, client: Client, failed: uuid.UUID,
                                                            start_ui: type[UI]) -> None:
    ui = start_ui(dsn, "--allow-actions")
    role = client._value("SELECT session_user")
    with http(ui) as h:
        page = h.get(f"/runs/{failed}")
        token = csrf_of(page)
        assert f'action="/runs/{failed}/retry"' in page.text
        done = h.post(f"/runs/{failed}/retry", data={"csrf": token, "node": "charge", "additional_attempts": "2",
                                                     "reason": "card <b>fixed</b>"})
        assert done.status_code == 200 and "retried charge with 2 more attempts" in done.text
        assert "card &lt;b&gt;fixed&lt;/b&gt;" in done.text
        [step] = [s for s in client.run_steps(failed) if s.node == "charge"]
        assert (step.state, step.max_attempts) == ("available", 3)
        again = h.post(f"/runs/{failed}/retry", data={"csrf": token, "node": "charge"})
        assert again.status_code == 409 and "is not discarded" in again.text  # the engine's own words

        other = run_to(client, "approval")
        assert h.post(f"/runs/{other}/pause", data={"csrf": token}).status_code == 200
        assert client.get_run(other).state == "paused"
        assert h.post(f"/runs/{other}/resume", data={"csrf": token}).status_code == 200
        sent = h.post(f"/runs/{other}/signal", data={"csrf": token, "name": "approve", "payload": '{"by": "<u>"}'})
        assert sent.status_code == 200 and "signal approve delivered" in sent.text
        assert [s.state for s in client.run_steps(other) if s.node == "approve"] == ["completed"]
        bad = h.post(f"/runs/{other}/signal", data={"csrf": token, "name": "approve", "payload": "{nope"})
        refused(bad, 400, "the payload is not JSON")
        third = client.submit("approval")
        assert h.post(f"/runs/{third}/cancel", data={"csrf": token, "reason": "dup"}).status_code == 200
        assert client.get_run(third).state == "cancelled"
        gone = h.post(f"/runs/{uuid.uuid4()}/cancel", data={"csrf": token})
        assert gone.status_code == 404 and "not found" in gone.text
    actor = f"{__import__('getpass').getuser()} via {role} from cyclone-ui"  # who, the role, from where
    assert [(a.action, a.reason, a.actor) for a in client.audit(failed)] == [("retry", "card <b>fixed</b>", actor)]
    # The console's signal is audited with who sent it and its payload's size (issue 36).
    assert [(a.action, a.node, a.actor) for a in client.audit(other)] == [
        ("pause", None, actor), ("resume", None, actor), ("signal", "approve", actor)]
    detail = client.audit(other)[-1].detail
    assert list(detail) == ["payload_bytes"] and detail["payload_bytes"] > 0
    assert [(a.action, a.reason) for a in client.audit(third)] == [("cancel", "dup")]


def test_bulk_retry_of_dead_letters_is_one_retry_per_step_with_a_result_per_row(
        dsn: str, client: Client, failed: uuid.UUID, start_ui: type[UI]) -> None:
    second = run_to(client, "shop", "charge")
    ui = start_ui(dsn, "--allow-actions")
    with http(ui) as h:
        page = h.get("/dead-letters")
        assert page.text.count('name="step"') == 2
        token = csrf_of(page)
        missing = uuid.uuid4()
        done = h.post("/dead-letters/retry", data={
            "csrf": token, "reason": "bulk", "additional_attempts": "1",
            "step": [f"{failed}:charge", f"{second}:charge", f"{missing}:charge"]})
        assert done.status_code == 200 and "retried 2 of 3" in done.text
        rows = re.findall(r'<tr class="(ok|refused)">.*?<td>([^<]*)</td><td>([^<]*)</td></tr>',
                          done.text, re.DOTALL)
        assert [(r[0], r[2]) for r in rows] == [("ok", "retried"), ("ok", "retried"),
                                                ("refused", f"run {missing} not found")]
        # bulk.py's loop, as cyclone dlq retry's: a step picked twice (a map's items share its node) is one retry.
        third = run_to(client, "shop", "charge")
        once = h.post("/dead-letters/retry", data={"csrf": token, "step": [f"{third}:charge"] * 2})
        assert once.status_code == 200 and "retried 1 of 1" in once.text
        assert [a.action for a in client.audit(third)] == ["retry"]
        refused(h.post("/dead-letters/retry", data={"csrf": token}), 400, "no dead letter selected")
        refused(h.post("/dead-letters/retry", data={"csrf": token, "step": "nonsense"}), 400, "RUN_ID:NODE")
        many = {"csrf": token, "step": [f"{failed}:n{i}" for i in range(501)]}
        refused(h.post("/dead-letters/retry", data=many), 400, "at most 500")
    assert [a.reason for a in client.audit(failed)] == ["bulk"]
    assert [a.reason for a in client.audit(second)] == ["bulk"]


def test_a_step_past_its_maximum_reads_as_reopened_as_in_the_cli(dsn: str, client: Client, failed: uuid.UUID,
                                                                  start_ui: type[UI]) -> None:
    """Issue 36: a retry without additional attempts gives a step that used them all one more execution and
    keeps its max_attempts; the pages said 2 / 1, the CLI says 2 of 1 (reopened) (formatting.fmt_attempts)."""
    client.retry(failed, "charge")
    [step] = [s for s in client.claim("w1", None, 10, 30.0) if s.run_id == failed]
    client.fail(step.step_id, "w1", step.lease_generation, "declined again", "error")
    ui = start_ui(dsn)
    with http(ui) as h:
        run_page, letters = h.get(f"/runs/{failed}").text, h.get("/dead-letters").text
    for page in (run_page, letters):
        assert "<td>2 of 1 (reopened)</td>" in page and "2 / 1" not in page
    assert "<td>1/1</td>" in run_page  # fetch, within its maximum


@pytest.fixture
def client_role(dsn: str) -> Iterator[str]:
    """The DSN of a fresh LOGIN role in cyclone_client."""
    role = f"cyc_ui_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(sql.SQL("CREATE ROLE {} LOGIN IN ROLE cyclone_client").format(sql.Identifier(role)))
    yield conninfo.make_conninfo(dsn, user=role)
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
        c.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_the_client_role_is_offered_and_allowed_only_its_actions(
        client_role: str, client: Client, failed: uuid.UUID, start_ui: type[UI]) -> None:
    ui = start_ui(client_role, "--allow-actions")
    with http(ui) as h:
        page = h.get(f"/runs/{failed}")
        assert page.status_code == 200 and "charge" in page.text and "card declined" in page.text
        assert "/retry" not in page.text and "/cancel" not in page.text
        token = csrf_of(h.get(f"/runs/{run_to(client, 'approval')}"))  # signal is a client's
        refused(h.post(f"/runs/{failed}/retry", data={"csrf": token, "node": "charge"}), 403, "permission denied")
        refused(h.post(f"/runs/{failed}/cancel", data={"csrf": token}), 403, "permission denied")
        assert h.get("/dead-letters").text.count('name="step"') == 0
    assert client.audit(failed) == []


# -- tokens, hosts, proxies ---------------------------------------------------------


def test_a_non_loopback_bind_requires_the_printed_token(dsn: str, client: Client, failed: uuid.UUID,
                                                        start_ui: type[UI]) -> None:
    ui = start_ui(dsn, "--allow-actions", listen="0.0.0.0:0")
    printed = "\n".join(ui.lines)
    m = re.search(r"token for (\S+): (\S+)", printed)
    assert m, printed
    name, token = m[1], m[2]
    assert f"?token={token}" in printed
    with http(ui) as h:
        refused_page = h.get("/")
        assert refused_page.status_code == 401 and "a token is required" in refused_page.text
        assert h.get(f"/runs/{failed}").status_code == 401
        assert h.get("/", headers={"Authorization": "Bearer wrong-token-of-some-length"}).status_code == 401
        assert h.get("/?token=nope").status_code == 401
        assert h.get("/", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        # ?token= once: a redirect that drops it from the URL and sets the cookie.
        hop = h.get(f"/runs?token={token}&state=failed")
        assert hop.status_code == 303 and hop.headers["location"] == "/runs?state=failed"
        assert h.get("/runs?state=failed").status_code == 200
        post = h.post(f"/runs/{failed}/cancel", data={"csrf": csrf_of(h.get(f"/runs/{failed}"))})
        assert post.status_code == 200 and "not cancelled: the run is over" in post.text  # cancel() said false
    with http(ui) as stranger:
        assert stranger.post(f"/runs/{failed}/cancel", data={"csrf": "x" * 40}).status_code == 401
        login = stranger.post("/login", data={"token": token})
        assert login.status_code == 303 and stranger.get("/").status_code == 200
        assert stranger.post("/login", data={"token": "wrong"}).status_code == 401
    assert name


def test_cyclone_ui_token_names_the_actor_and_a_trusted_proxy_header_does_too(
        dsn: str, client: Client, failed: uuid.UUID, start_ui: type[UI]) -> None:
    secret = "s3cret-token-of-alice"
    ui = start_ui(dsn, "--allow-actions", env={"CYCLONE_UI_TOKEN": f"alice:{secret},bob:another-long-secret"})
    assert secret not in "\n".join(ui.lines)
    role = client._value("SELECT session_user")
    with http(ui, headers={"Authorization": f"Bearer {secret}"}) as h:
        token = csrf_of(h.get(f"/runs/{failed}"))
        assert h.post(f"/runs/{failed}/retry", data={"csrf": token, "node": "charge"}).status_code == 200
    assert [a.actor for a in client.audit(failed)] == [f"alice via {role} from cyclone-ui"]

    ui2 = start_ui(dsn, "--allow-actions", "--proxy-user-header", "X-Forwarded-User")
    other = client.submit("approval")
    with http(ui2) as h:
        refused(h.get("/"), 401, "the proxy named no user (X-Forwarded-User)")
        h.headers["X-Forwarded-User"] = "carol@example"
        token = csrf_of(h.get(f"/runs/{other}"))
        assert h.post(f"/runs/{other}/pause", data={"csrf": token}).status_code == 200
    assert [a.actor for a in client.audit(other)] == [f"carol@example via {role} from cyclone-ui"]


def test_the_token_is_never_logged(dsn: str, start_ui: type[UI]) -> None:
    """Issue 30, finding 9: at ``--log-level debug`` uvicorn's access log wrote
    each request's URL, ``?token=SECRET`` and all."""
    secret = "a-token-that-must-not-be-logged"
    ui = start_ui(dsn, "--log-level", "debug", env={"CYCLONE_UI_TOKEN": f"dana:{secret}"})
    with http(ui) as h:
        assert h.get(f"/?token={secret}").status_code == 303
        assert h.get(f"/runs?state=failed&token={secret}&workflow=x").status_code == 303
        assert h.get("/?token=wrong-token-also-secret").status_code == 401
        assert h.get("/runs?state=failed").status_code == 200
    time.sleep(0.3)
    ui.stop()
    log = "\n".join(ui.output)
    assert '"GET /runs?state=failed HTTP/1.1" 200' in log, log[-2000:]  # the access log is on
    assert "GET /?token=[redacted] HTTP/1.1" in log and "&token=[redacted]&workflow=x" in log
    assert secret not in log and "wrong-token-also-secret" not in log


def test_static_files_are_the_packages_two_served_to_anyone(dsn: str, start_ui: type[UI]) -> None:
    """``/static`` is outside the token's gate: the login page needs its
    stylesheet. What it serves is a fixed list, the package's two files (the
    same for every console, nothing of this one's), nothing else under it."""
    from cyclone_py.console import app as console_app

    static = Path(console_app.__file__).parent / "static"
    assert sorted(p.name for p in static.iterdir()) == sorted(console_app.STATIC) == ["console.css", "console.js"]
    secret = "a-token-for-the-pages-only"
    ui = start_ui(dsn, env={"CYCLONE_UI_TOKEN": secret})
    with http(ui) as h:
        login = h.get("/")
        assert login.status_code == 401 and 'href="/static/console.css"' in login.text
        for name, kind in console_app.STATIC.items():
            got = h.get(f"/static/{name}")
            assert got.status_code == 200 and got.headers["content-type"] == kind
            assert got.content == (static / name).read_bytes() and secret.encode() not in got.content
        for path in ("/static/", "/static/app.py", "/static/..%2fapp.py", "/static/..%2f..%2fapp.py",
                     "/static/console.css/x", "/static/CONSOLE.CSS", "/static/templates"):
            assert h.get(path).status_code == 404, path


@pytest.mark.parametrize("value, message", [
    ("short", "shorter than 16"), (",", "names no token"), ("a:0123456789abcdef,b:0123456789abcdef", "given twice")])
def test_a_bad_cyclone_ui_token_is_one_line(dsn: str, value: str, message: str) -> None:
    from click.testing import CliRunner

    from cyclone_py import cli

    result = CliRunner().invoke(cli.main, ["--dsn", dsn, "ui"], env={"CYCLONE_UI_TOKEN": value})
    assert result.exit_code == 1 and message in result.output and len(result.output.strip().splitlines()) == 1


def test_without_a_token_only_a_loopback_host_is_answered(dsn: str, start_ui: type[UI]) -> None:
    ui = start_ui(dsn)
    with http(ui) as h:
        assert h.get("/", headers={"Host": "localhost"}).status_code == 200
        assert h.get("/", headers={"Host": "[::1]:8600"}).status_code == 200
        refused(h.get("/", headers={"Host": "evil.example:8600"}), 403, "only on a loopback address")


# -- hostile input ------------------------------------------------------------------------


def test_hostile_names_errors_payloads_and_filters_come_back_as_text(dsn: str, client: Client,
                                                                     start_ui: type[UI]) -> None:
    define(client)
    run = run_to(client, "hostile", HOSTILE_NODE, HOSTILE_ERROR)
    ui = start_ui(dsn, "--allow-actions")
    with http(ui) as h:
        for path in [f"/runs/{run}", "/dead-letters", "/runs?workflow=<script>x</script>",
                     "/dead-letters?workflow=%3Cscript%3Ey%3C/script%3E"]:
            page = h.get(path)
            assert page.status_code == 200, path
            assert page.text.count("<script") == 1, path  # the console's own script tag, nothing else
            assert "<img" not in page.text, path
        page = h.get(f"/runs/{run}")
        assert html.escape(HOSTILE_NODE, quote=False) in page.text or "&lt;script&gt;alert(" in page.text
        assert "&lt;img src=x onerror=alert(1)&gt;" in page.text
        assert "&lt;i&gt;input&lt;/i&gt;" in page.text
        assert page.headers["content-security-policy"].startswith("default-src 'none'")
        assert page.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize("path, words", [
    ("/runs?after=garbage", "not a page cursor"),
    ("/runs?after=2026-01-01T00:00:00~not-a-uuid", "not a page cursor"),
    ("/dead-letters?after=2026-01-01T00:00:00%2B00:00~abc", "not a page cursor"),
    ("/runs?state=%3Cb%3E", "unknown run state"),
    ("/runs?from=yesterday", "is not a time"),
    ("/runs?id=zz", "hex digits"),
    ("/runs?id=ab%00", "contains a NUL character"),
    ("/runs?workflow=" + "w" * 300, "at most 200"),
    ("/dead-letters?kind=%ff%fe", "unknown error kind"),
    ("/runs/not-a-uuid", "not a run id"),
    ("/runs?workflow=a%00b", "contains a NUL character"),
    ("/dead-letters?workflow=%00", "contains a NUL character"),
    ("/runs?key=%00", "contains a NUL character"),
])
def test_malformed_query_strings_are_one_line_400s(dsn: str, client: Client, start_ui: type[UI],
                                                   path: str, words: str) -> None:
    ui = start_ui(dsn)
    with http(ui) as h:
        refused(h.get(path), 400, words)


def test_oversized_bodies_and_fields_are_refused(dsn: str, client: Client, failed: uuid.UUID,
                                                 start_ui: type[UI]) -> None:
    ui = start_ui(dsn, "--allow-actions")
    with http(ui) as h:
        token = csrf_of(h.get(f"/runs/{failed}"))
        huge = h.post(f"/runs/{failed}/signal", data={"csrf": token, "name": "x", "payload": "1" * (2 * 1024 * 1024)})
        assert huge.status_code == 413
        refused(h.post(f"/runs/{failed}/retry", data={"csrf": token, "node": "charge", "reason": "r" * 3000}),
                400, "at most 2000")
        refused(h.post(f"/runs/{failed}/retry", data={"csrf": token, "node": "charge", "additional_attempts": "1e9"}),
                400, "not a whole number")
        refused(h.post(f"/runs/{failed}/retry", data={"csrf": token, "node": "charge", "additional_attempts": "5000"}),
                400, "between 0 and 1000")
        refused(h.post(f"/runs/{failed}/explode", data={"csrf": token}), 404, "no action")
        assert h.post("/runs", data={"csrf": token}).status_code == 405
    assert client.audit(failed) == []


def test_without_dot_the_run_page_lists_the_steps_with_a_hint(dsn: str, client: Client, failed: uuid.UUID,
                                                              start_ui: type[UI]) -> None:
    import sys
    from pathlib import Path

    ui = start_ui(dsn, env={"PATH": str(Path(sys.executable).parent)})
    with http(ui) as h:
        page = h.get(f"/runs/{failed}")
    assert page.status_code == 200 and "<figure class=\"dag\"" not in page.text
    assert 'id="no-dot"' in page.text and "dot</code> is not installed" in page.text
    assert all(f'data-node="{n}"' in page.text for n in ("fetch", "charge", "ship", "invoice"))


def test_a_run_page_says_why_each_waiting_step_waits_and_folds_big_payloads(
        dsn: str, client: Client, start_ui: type[UI]) -> None:
    define(client)
    waiting = run_to(client, "approval")
    big = client.submit("shop", {"blob": "y" * 300_000})
    ui = start_ui(dsn)
    with http(ui) as h:
        page = h.get(f"/runs/{waiting}").text
        start = page.index('<tr id="step-1" data-node="approve"')
        row = page[start:page.index("</tr>", start)]
        # explain_step in the CLI's words (formatting.explain_text), not its reason code (issue 36)
        assert '<div class="why" data-reason="waiting_signal">waiting for signal &#39;approve&#39;</div>' in row
        large = h.get(f"/runs/{big}")
    assert large.status_code == 200
    # The run's input once (its steps' is the same), folded, cut at 100,000 characters.
    assert large.text.count("more characters not shown") == 1 and len(large.text) < 120_000
    assert '<details class="payload"><summary>input (100000 characters)' in large.text


def test_retry_all_schedules_and_limits(dsn: str, client: Client, failed: uuid.UUID, start_ui: type[UI]) -> None:
    client.schedule("nightly <b>", "0 3 * * *", "shop", timezone="Europe/Berlin")
    client.define_limit("api", concurrency=2)
    ui = start_ui(dsn, "--allow-actions")
    with http(ui) as h:
        page = h.get(f"/runs/{failed}")
        token = csrf_of(page)
        done = h.post(f"/runs/{failed}/retry-all", data={"csrf": token, "reason": "all of them"})
        assert done.status_code == 200 and "retried 1 dead letters" in done.text
        schedules = h.get("/schedules")
        assert "nightly &lt;b&gt;" in schedules.text and "Europe/Berlin" in schedules.text
        assert 'action="/schedules/pause"' in schedules.text
        paused = h.post("/schedules/pause", data={"csrf": token, "name": "nightly <b>"})
        assert paused.status_code == 200 and "paused nightly &lt;b&gt;" in paused.text
        assert [s.paused for s in client.schedules()] == [True]
        assert 'action="/schedules/resume"' in paused.text
        again = h.post("/schedules/pause", data={"csrf": token, "name": "nightly <b>"})
        assert "was not paused (missing, or already so)" in html.unescape(again.text)
        assert h.post("/schedules/resume", data={"csrf": token, "name": "nightly <b>"}).status_code == 200
        assert [s.paused for s in client.schedules()] == [False]
        refused(h.post("/schedules/stop", data={"csrf": token, "name": "x"}), 404, "no action")
        limits = h.get("/limits").text
        assert '<tr data-limit="api">' in limits
        overview = h.get("/").text
        assert "nightly &lt;b&gt;" in overview and '<tr data-limit="api">' in overview
    assert [(a.action, a.reason) for a in client.audit(failed)] == [("retry", "all of them")]


def test_hostile_signal_payloads_are_one_line_400s_and_deliver_nothing(
        dsn: str, client: Client, start_ui: type[UI]) -> None:
    """JSON that Python parses but PostgreSQL's jsonb does not take (a NUL
    escape, a number past a double), and JSON nested past the parser's depth:
    the engine's or the parser's one line, never a 500, and the wait node still
    waits."""
    define(client)
    run = run_to(client, "approval")
    ui = start_ui(dsn, "--allow-actions")
    with http(ui) as h:
        token = csrf_of(h.get(f"/runs/{run}"))
        for payload, words in [('{"a": "\\u0000"}', "unsupported Unicode escape sequence"),
                               ("1e999999", "invalid input syntax for type json"),
                               ("[" * 100_000, "the payload is not JSON"),
                               ("NaN", "invalid input syntax for type json")]:
            refused(h.post(f"/runs/{run}/signal", data={"csrf": token, "name": "approve", "payload": payload}),
                    400, words)
        refused(h.post(f"/runs/{run}/signal", data={"csrf": token, "name": "app\x00rove"}), 400,
                "contains a NUL character")
        assert h.get("/").status_code == 200  # the console still answers
    assert [s.state for s in client.run_steps(run) if s.node == "approve"] == ["waiting"]


def test_a_huge_error_is_shown_by_its_end_and_bounded(dsn: str, client: Client, start_ui: type[UI]) -> None:
    """A handler's error of 2,000,000 characters is stored cut to 64,000 and a
    marker (the engine keeps a text over 65,536 characters by its first and
    last 32,000): the run page shows the run's error by its last 10,000
    characters, and the step's and the error history's by their last 2,000,
    each saying how many came before; the history's links to the error's own
    page, which shows it whole."""
    define(client)
    error = "<script>alert('start')</script>" + "E" * 2_000_000 + "\nRuntimeError: the <b>last</b> line"
    run = run_to(client, "shop", "charge", error)
    stored = client.get_run(run).error
    assert stored is not None and 64_000 < len(stored) <= 65_536 and stored.startswith("<script>alert('start')")
    ui = start_ui(dsn)
    with http(ui) as h:
        page = h.get(f"/runs/{run}")
        dead = h.get("/dead-letters")
        [(link, eid)] = set(re.findall(r'<a class="whole" href="(/runs/[^/]+/errors/(\d+))">', page.text))
        whole = h.get(link)
        assert h.get(f"/runs/{run}/errors/{int(eid) + 1}").status_code == 404
        refused(h.get(f"/runs/{run}/errors/x"), 400, "the error id is not a whole number")
        refused(h.get(f"/runs/{uuid.uuid4()}/errors/{eid}"), 404, "has no error")
    assert page.status_code == 200 and len(page.text) < 30_000, len(page.text)
    assert page.text.count(f"… {len(stored) - 10_000} earlier characters not shown") == 1
    assert page.text.count(f"… {len(stored) - 2_000} earlier characters not shown") == 2
    assert page.text.count("RuntimeError: the &lt;b&gt;last&lt;/b&gt; line") == 3
    assert "alert('start')" not in page.text and page.text.count("<script") == 1
    assert dead.status_code == 200 and len(dead.text) < 60_000
    assert whole.status_code == 200 and "earlier characters not shown" not in whole.text
    assert stored in html.unescape(whole.text) and whole.text.count("<script") == 1


def test_a_value_too_deep_to_decode_is_an_error_page_and_the_rest_answers(
        dsn: str, client: Client, conn: psycopg.Connection[tuple[object, ...]], start_ui: type[UI]) -> None:
    """A value stored before the engine bounded JSON's depth (issue 30, finding
    1: a run page was a bare 500): the client's one line, naming the run and
    the column, with 502 (the database gave what the console cannot read; the
    request was fine); every other page answers."""
    define(client)
    run = run_to(client, "approval")
    deep = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"
    conn.execute("UPDATE cyclone.cyclone_runs SET input = %s::jsonb WHERE id = %s", (deep, run))
    ui = start_ui(dsn)
    with http(ui) as h:
        refused(h.get(f"/runs/{run}"), 502, f"cannot read the input of run {run}: it is nested deeper than")
        for path in ("/", "/runs", "/dead-letters", f"/runs?id={str(run)[:8]}"):
            assert h.get(path).status_code == 200, path


def test_html_in_the_names_of_workflows_nodes_limits_schedules_and_workers_comes_back_as_text(
        dsn: str, client: Client, start_ui: type[UI]) -> None:
    """Every page that shows a name the engine stores as given: the workflow's,
    its nodes' (a dot label's quotes and brackets too), a limit's, a
    schedule's, a signal's, a worker's, an input's keys."""
    wf = '<img src=x onerror=alert("wf")>'
    node = 'a"] ; x [label=<<b>evil</b>>] ; "\\'
    client.define_limit("<b>lim</b>", concurrency=1)
    client.define_workflow(wf, {"limits": [{"name": "<b>lim</b>", "key": "<k>"}], "nodes": [
        {"name": node}, {"name": "<i>wait</i>", "kind": "wait", "signal": "<s>sig</s>", "deps": [node]},
        {"name": "n2", "deps": [node]}]})
    client.schedule("<script>s</script>", "@daily", wf, input={"<x>": "</script>"})
    run = client.submit(wf, {"<k>": "<svg onload=alert(1)>"})
    [c] = client.claim("<b>worker</b>", limit=1, lease_ttl=30)
    client.complete(c.step_id, "<b>worker</b>", c.lease_generation, {"<o>": "<svg onload=alert(2)>"})
    [c] = client.claim("<b>worker</b>", limit=1, lease_ttl=30)  # n2: running
    ui = start_ui(dsn)
    with http(ui) as h:
        for path in ["/", "/runs", f"/runs/{run}", "/dead-letters", "/schedules", "/limits",
                     "/runs?workflow=" + wf]:
            page = h.get(path)
            assert page.status_code == 200, path
            text = page.text
            assert text.count("<script") == 1 and "<img" not in text and "<svg onload" not in text, path
            assert "<b>" not in text and "<i>wait" not in text and "<s>sig" not in text, path
        assert "&lt;img src=x onerror=alert(&#34;wf&#34;)&gt;" in h.get("/runs").text
        assert "&lt;b&gt;lim&lt;/b&gt;" in h.get("/limits").text
        assert "&lt;script&gt;s&lt;/script&gt;" in h.get("/schedules").text
        assert "&lt;b&gt;worker&lt;/b&gt;" in h.get("/").text


def test_a_run_page_draws_a_map_once_and_lists_its_items(dsn: str, client: Client, start_ui: type[UI]) -> None:
    """SPEC 16: a map node is one node of the picture, titled with its items' count; its items are steps
    ``node[index]``; a waiting run's page carries the marker its script follows it by; progress is shown."""
    client.define_workflow("fan", {"nodes": [{"name": "each", "kind": "map", "over": "input.items"}]})
    run = client.submit("fan", {"items": ["a", "b", "c"]})
    (first, *_) = sorted(client.claim("w1", None, 10, 30.0), key=lambda s: s.item_index or 0)
    assert client.progress(first.step_id, "w1", first.lease_generation, {"done": 1})
    client.complete(first.step_id, "w1", first.lease_generation, "A")
    ui = start_ui(dsn)
    with http(ui) as h:
        page = h.get(f"/runs/{run}")
    assert page.status_code == 200, page.text
    assert page.text.count('data-node="each" data-state=') == 1 + 1 + 3  # the picture's node; the map's row and 3 items
    assert "each: waiting (1 of 3 items done)" in page.text
    assert "each[0]" in page.text and "each[2]" in page.text
    assert 'id="live"' in page.text
    assert re.search(r"progress <code>\{(&#34;|\")done(&#34;|\"): 1\}</code>", page.text), "the progress"


# -- coordination (SPEC 17) -----------------------------------------------------------------


def test_the_events_page_lists_the_kept_events_newest_first_escaped_and_cut(
        dsn: str, client: Client, start_ui: type[UI]) -> None:
    client.emit_event("order:<b>1</b>", {"note": "<script>alert('payload')</script>", "rest": "y" * 5000})
    client.emit_event("other & more", None)
    ui = start_ui(dsn)
    with http(ui) as h:
        page = h.get("/events")
        one = h.get("/events", params={"key": "order:<b>1</b>"})
        none = h.get("/events?key=nosuch")
        refused(h.get("/events?key=a%00b"), 400, "contains a NUL character")
    assert page.status_code == 200 and '<a href="/events">Events</a>' in page.text
    rows = re.findall(r"<tr><td><a href=\"([^\"]*)\">([^<]*)</a></td><td>[^<]*</td><td>(.*?)</td></tr>", page.text)
    assert [(link, html.unescape(key)) for link, key, _ in rows] == [
        ("/events?key=other+%26+more", "other & more"), ("/events?key=order%3A%3Cb%3E1%3C%2Fb%3E", "order:<b>1</b>")]
    payload = html.unescape(rows[1][2])
    assert payload.startswith('<code>{"note":"<script>alert(') and payload.endswith("yyy…</code>")
    assert len(payload) == len("<code></code>") + 300
    assert rows[0][2] == ""  # no payload
    assert page.text.count("<script") == 1 and "<b>" not in page.text
    assert one.status_code == 200 and one.text.count('<tr><td><a href="/events?key=') == 1
    assert "&lt;script&gt;alert(&#39;payload&#39;)&lt;/script&gt;" in one.text
    assert none.status_code == 200 and "No events of this key." in none.text


PAY = {"nodes": [{"name": "paid", "kind": "event", "key": "order:{input.n}"},
                 {"name": "ship", "deps": ["paid"], "when": {"deps": {"paid": {"ok": True}}}}]}
FOLLOW = {"nodes": [{"name": "export_done", "kind": "await", "run": "input.run"}]}


def test_a_run_page_shows_event_keys_awaited_runs_their_reasons_conditions_and_the_rerun_of(
        dsn: str, client: Client, start_ui: type[UI]) -> None:
    client.define_workflow("pay", PAY)
    client.define_workflow("follow", FOLLOW)
    pay = client.submit("pay", {"n": "<i>1</i>"})
    follow = client.submit("follow", {"run": str(pay)})
    ui = start_ui(dsn)
    with http(ui) as h:
        paying, following = h.get(f"/runs/{pay}").text, h.get(f"/runs/{follow}").text
        client.cancel(pay)
        again = client.rerun(pay)
        rerun = h.get(f"/runs/{again}").text
    row = paying[paying.index('<tr id="step-0" data-node="paid"'):]
    row = row[:row.index("</tr>")]
    assert '<div class="muted event-key">key order:&lt;i&gt;1&lt;/i&gt;</div>' in row
    assert ('<div class="why" data-reason="waiting_event">waits for an event of key '
            '&#39;order:&lt;i&gt;1&lt;/i&gt;&#39;</div>') in row
    # The condition on the edge into ship, and the event and await nodes drawn as themselves.
    edge = re.search(r'<g id="edge1" class="edge">.*?</g>', paying, re.DOTALL)
    assert edge and ">when deps.paid.ok = true</text>" in edge[0]
    assert ">(event)</text>" in paying and ">(await)</text>" in following
    row = following[following.index('<tr id="step-0" data-node="export_done"'):]
    row = row[:row.index("</tr>")]
    link = f'<a class="run-id" href="/runs/{pay}">{pay}</a>'
    assert f'<div class="awaits">awaits {link}</div>' in row
    assert f'<div class="why" data-reason="waiting_run"><a href="/runs/{pay}">waits for run {pay} to end</a>' in row
    assert f'<dt>rerun of</dt><dd id="rerun-of">{link}</dd>' in rerun
    assert "rerun of" not in paying


def test_rerun_is_offered_on_a_finished_runs_page_only_with_actions_and_redirects_to_the_new_run(
        dsn: str, client: Client, failed: uuid.UUID, start_ui: type[UI]) -> None:
    live = run_to(client, "approval")
    role = client._value("SELECT session_user")
    read_only = start_ui(dsn)
    with http(read_only) as h:
        assert 'action="/runs/' not in h.get(f"/runs/{failed}").text
        token = h.cookies.get("cyclone_ui_csrf") or ""
        refused(h.post(f"/runs/{failed}/rerun", data={"csrf": token}), 403, "actions are off")
    ui = start_ui(dsn, "--allow-actions")
    with http(ui) as h:
        page = h.get(f"/runs/{failed}")
        token = csrf_of(page)
        form = re.search(rf'<form method="post" action="/runs/{failed}/rerun".*?</form>', page.text, re.DOTALL)
        assert form, "the rerun form"
        assert re.findall(r'<option value="([^"]*)">', form[0]) == ["", "fetch", "charge", "ship", "invoice"]
        assert f'action="/runs/{live}/rerun"' not in h.get(f"/runs/{live}").text  # not on a live run
        refused(h.post(f"/runs/{failed}/rerun", data={"from_node": "charge"}), 403, "CSRF token is missing")
        refused(h.post(f"/runs/{live}/rerun", data={"csrf": token}), 409, "only a completed, failed or cancelled run")
        refused(h.post(f"/runs/{failed}/rerun", data={"csrf": token, "from_node": "nosuch"}), 404, "has no node")
        done = h.post(f"/runs/{failed}/rerun", data={"csrf": token, "from_node": "charge", "reason": "<b>fixed</b>"})
        assert done.status_code == 303
        new = uuid.UUID(done.headers["location"].removeprefix("/runs/"))
        shown = h.get(done.headers["location"])
    assert shown.status_code == 200 and f'<dd id="rerun-of"><a class="run-id" href="/runs/{failed}">' in shown.text
    assert client.get_run_row(new).rerun_of == failed
    assert {s.node: s.state for s in client.steps(new)}["fetch"] == "completed"
    assert {s.node: s.state for s in client.steps(new)}["charge"] == "available"
    actor = f"{__import__('getpass').getuser()} via {role} from cyclone-ui"  # who, the role, from where
    assert [(a.action, a.node, a.reason, a.actor) for a in client.audit(new)] == [
        ("rerun", "charge", "<b>fixed</b>", actor)]
    assert len(client.list_runs(workflow="shop")) == 2 and client.audit(failed) == []


# -- issue 36: the runs list's duration, failing step and time ranges; the overview's links; the audit in words -


def test_the_runs_list_shows_each_runs_duration_and_failing_step_and_offers_time_ranges(
        dsn: str, client: Client, failed: uuid.UUID, start_ui: type[UI]) -> None:
    live = run_to(client, "approval")
    ui = start_ui(dsn)
    with http(ui) as h:
        page = h.get("/runs").text
        ranges = re.findall(r'<a href="(/runs\?from=[^"]+)">(15 minutes|hour|day|week)</a>', page)
        of_shop = h.get("/runs?workflow=shop&state=failed").text
        hour = h.get(html.unescape(ranges[1][0])).text
    row = page[page.index(f'<tr data-run="{failed}">'):]
    row = row[:row.index("</tr>")]
    finished = client.get_run_row(failed)
    assert finished.finished_at is not None and finished.started_at is not None
    took = finished.finished_at - finished.started_at
    assert f'<td class="num took">{fmt_duration(took)}</td>' in row
    # The failing step (get_run's), its kind and its error's last line, escaped; linked to the run's steps.
    assert f'<a href="/runs/{failed}#steps"><strong>charge</strong></a> <span class="muted">(error)</span>' in row
    assert "card declined &lt;script&gt;alert(1)&lt;/script&gt;" in row and "<script>alert" not in page
    row = page[page.index(f'<tr data-run="{live}">'):]
    assert '<span class="muted" title="so far">' in row[:row.index("</tr>")]  # a live run: its time so far
    assert [label for _, label in ranges] == ["15 minutes", "hour", "day", "week"]
    assert f'data-run="{failed}"' in of_shop and f'data-run="{live}"' not in of_shop
    assert f'data-run="{failed}"' in hour and f'data-run="{live}"' in hour


def test_the_runs_list_by_end_time_lists_the_runs_that_ended_in_a_range_newest_end_first(
        dsn: str, client: Client, start_ui: type[UI]) -> None:
    """The list behind the overview's last hour and each of its bars (issue 36): the runs that ended in a
    range (cyclone.finished_runs), whenever they were created, newest end first; the range needs both ends,
    goes with the workflow and state filters only, and is at most a day (the engine's 22023, one line)."""
    define(client)
    early = run_to(client, "shop", "charge")  # created, and failed, now
    client.advance_time(7200)
    since = client.now()
    late = client.submit("approval")
    client.advance_time(60)
    client.cancel(late, "no longer needed")
    until = client.now() + timedelta(seconds=1)
    ended = {"ended_from": form_time(since), "ended_until": form_time(until)}
    ui = start_ui(dsn)
    with http(ui) as h:
        hour = h.get("/runs", params=ended).text
        failed = h.get("/runs", params={**ended, "ended_from": form_time(since - timedelta(hours=3)),
                                        "state": "failed"}).text
        refused(h.get("/runs", params={"ended_from": ended["ended_from"]}), 400, "needs both")
        refused(h.get("/runs", params={**ended, "key": "k"}), 400, "workflow and state filters only")
        refused(h.get("/runs", params={**ended, "ended_from": form_time(since - timedelta(days=2))}), 400,
                "at most a day")
    assert f'data-run="{late}"' in hour and f'data-run="{early}"' not in hour
    assert "Ended from" in hour
    assert f'data-run="{early}"' in failed and f'data-run="{late}"' not in failed


def test_the_limits_and_schedules_of_the_overviews_links_and_the_default_bucket_by_name(
        dsn: str, client: Client, start_ui: type[UI]) -> None:
    client.define_limit("api <b>", concurrency=2)
    client.define_limit("other", concurrency=1)
    define(client)
    client.schedule("nightly", "0 3 * * *", "shop", timezone="Europe/Berlin")
    client.schedule("hourly", "0 * * * *", "shop")
    ui = start_ui(dsn)
    with http(ui) as h:
        overview = h.get("/").text
        [link] = re.findall(r'<a href="(/limits\?name=[^"]+)">api &lt;b&gt;</a>', overview)
        one = h.get(html.unescape(link)).text
        schedules = h.get("/schedules?name=nightly").text
    assert one.count("<tr data-limit=") == 1 and "<h1>Limits: api &lt;b&gt;</h1>" in one
    # No empty bucket cell: the bucket '' is named.
    assert '<span class="default-bucket"' in one and "<td></td>" not in one
    assert schedules.count("<tr data-schedule=") == 1 and 'data-schedule="nightly"' in schedules
    [nightly] = client.schedules("nightly")
    at = nightly.next_fire_at.astimezone(UTC)
    # The slot in UTC for the browser to show in its own zone (console.js), on both pages.
    stamp = f'<time datetime="{at:%Y-%m-%dT%H:%M:%SZ}" data-local>{at:%Y-%m-%d %H:%M:%S} UTC</time>'
    assert stamp in schedules and stamp in overview


def test_the_audit_trail_words_a_signal_and_a_rerun(dsn: str, client: Client, start_ui: type[UI]) -> None:
    client.define_workflow("gate", {"nodes": [{"name": "<i>ask</i>", "kind": "wait", "signal": "<b>ok</b>"}]})
    run = client.submit("gate", {})
    assert client.signal(run, "<b>ok</b>", {"note": "<script>alert('payload')</script>"})
    again = client.rerun(run, reason="once more")
    ui = start_ui(dsn)
    with http(ui) as h:
        page = h.get(f"/runs/{run}").text
        rerun = h.get(f"/runs/{again}").text
    [(size,)] = [(a.detail["payload_bytes"],) for a in client.audit(run)]
    role = client._value("SELECT session_user")
    assert ('<td class="what">signal <strong class="signal">&lt;b&gt;ok&lt;/b&gt;</strong> '
            f'({size} bytes)</td><td></td><td>{role} from cyclone</td>') in page  # sent by the Python client
    trail = page[page.index('<table class="list" id="audit">'):]
    assert "alert(" not in trail[:trail.index("</table>")]  # a signal's payload is never in the trail
    assert (f'<td class="what">rerun of <a class="run-id" href="/runs/{run}">{run}</a></td>'
            f'<td>once more</td>') in rerun
