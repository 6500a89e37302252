"""The web console's pages and actions: a Starlette application over a
:class:`cyclone_py.client.Client`.

Every read and every action is one client call (the same SQL functions the
CLI calls); no rule about states is decided here. Pages are rendered on the
server by Jinja2 with autoescaping on, so node names, errors and payloads are
text wherever they appear; the DAG picture comes from :mod:`.graph`.

Security (docs/console.md):

- a token, when the console has one (always on a non-loopback address), is
  required on every page: ``Authorization: Bearer``, the ``cyclone_ui_token``
  cookie, or ``?token=`` once (answered by a redirect that sets the cookie);
- without a token, only a loopback ``Host`` is answered (no DNS rebinding);
- actions exist only with ``allow_actions``; each is a POST that must come
  from the console's own origin (``Origin``, else ``Sec-Fetch-Site``) and
  whose form carries the CSRF token: an HMAC, under a secret of this process,
  of the ``cyclone_ui_csrf`` cookie's random value and the actor, so a cookie
  another page sets (cookies do not keep ports apart) is worth nothing;
- the actor named to the audit trail is the token's name, or the user a
  trusted proxy names in ``proxy_user_header``, or the console's own user;
- request bodies are bounded (``MAX_BODY``), every field is bounded, and a
  bad value is a 400 page with one line; so is every page (the steps of a run
  and its error history in pages, each error cut, the DAG bounded: graph.py);
- an error of the client is a page with its one line and a status that fits
  (``status_of``), an unexpected one a 500 page (logged without the query
  string: a ``?token=`` is never logged, server.py).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib.resources
import ipaddress
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any
from urllib.parse import urlencode, urlsplit
from uuid import UUID

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cyclone_py import errors
from cyclone_py.bulk import chosen, retry_each
from cyclone_py.client import Client, Cursor, Page
from cyclone_py.console.graph import GraphNode, Layouts, condition_label
from cyclone_py.console.overview import LIVE_CAP, MINUTES, NEWEST_DEAD, SPARK_HEIGHT, form_time, utc_iso, window
from cyclone_py.console.overview import build as build_overview
from cyclone_py.console.timeline import build as build_timeline
from cyclone_py.formatting import explain_text, fmt_attempts, fmt_duration, fmt_step, fmt_time
from cyclone_py.vocabulary import DISCARD_KINDS, LIVE_RUN_STATES, RUN_STATES, TERMINAL_STEP_STATES

#: Bytes a request body may have (a signal's payload is the largest field).
MAX_BODY = 1024 * 1024
#: Characters of a text field (a reason, a name, a filter).
MAX_FIELD = 2000
#: Dead letters one bulk retry takes.
MAX_SELECTED = 500
#: Rows of a list page.
PAGE_SIZE = 50
#: Characters of a payload shown before it is folded, and at most.
FOLD_CHARS = 2000
SHOW_CHARS = 100_000
#: Characters of the run's error its page shows: its end (a traceback's last lines).
ERROR_CHARS = 10_000
#: Characters of each error in a list (the step table, the error history), and
#: of each step's payload in the step table (the error's page shows it whole).
LIST_ERROR_CHARS = 2_000
STEP_SHOW_CHARS = 10_000
#: Steps, and errors of the error history, on one page of a run.
STEP_PAGE = 50
ERROR_PAGE = 50
#: Operator actions a run page lists (the newest).
AUDIT_SHOWN = 100
#: Failed attempts the timeline marks on a step's lane (its newest).
TIMELINE_MARKS = 10
#: Characters of an event's payload in the list of events (compact JSON, then cut).
EVENT_PAYLOAD_CHARS = 300
#: Seconds between two updates of the overview (console.js fetches it again and replaces its numbers).
REFRESH_SECONDS = 5
#: The runs list's quick time ranges: the runs created in the last ...
TIME_RANGES = (("15 minutes", timedelta(minutes=15)), ("hour", timedelta(hours=1)), ("day", timedelta(days=1)),
               ("week", timedelta(days=7)))

TOKEN_COOKIE = "cyclone_ui_token"
CSRF_COOKIE = "cyclone_ui_csrf"
CSRF_FIELD = "csrf"

#: The console's two static files, served to anyone (no token): they are the
#: package's own, the same for every console, and the login page needs them.
STATIC = {"console.css": "text/css; charset=utf-8", "console.js": "text/javascript; charset=utf-8"}

logger = logging.getLogger(__name__)

#: The actions and the SQL function each one calls.
ACTION_FUNCTIONS = {
    "retry": "retry",
    "retry-all": "retry_all",
    "cancel": "cancel",
    "pause": "pause",
    "resume": "resume",
    "signal": "signal",
    "rerun": "rerun",
    "pause-schedule": "pause_schedule",
    "resume-schedule": "resume_schedule",
}

#: A client error's status. UndecodableValue: 502, the answer of a gateway whose
#: upstream (the database) gave a value it cannot use; the request was fine.
_STATUS = ((errors.NotFound, 404), (errors.WrongState, 409), (errors.InvalidArgument, 400),
           (errors.PermissionDenied, 403), (errors.DatabaseUnavailable, 503), (errors.UndecodableValue, 502))

_CSP = ("default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


class BadRequest(Exception):
    """A value of the request the console refuses (400, one line)."""


class BodyTooLarge(Exception):
    """A streamed request body went over ``MAX_BODY``."""


class Refused(Exception):
    """A request the console refuses before any call: ``status`` and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Settings:
    """How one console runs."""

    #: Actions (POST) are served only with this on.
    allow_actions: bool = False
    #: secret -> name; empty: no token (a loopback bind only).
    tokens: Mapping[str, str] = field(default_factory=dict)
    #: A header a trusted proxy names the user in (the actor of an action).
    proxy_user_header: str | None = None
    #: The actor without a token or a proxy (the user who started the console).
    local_actor: str = "console"
    page_size: int = PAGE_SIZE
    refresh_seconds: int = REFRESH_SECONDS
    #: The key CSRF tokens are signed with; empty: a random one per process
    #: (a restarted console asks for a reload before an action).
    secret: bytes = b""


@dataclass
class Ctx:
    """One request as a page sees it."""

    request: Request
    form: FormData | None
    actor: str
    csrf: str
    notice: str | None = None
    notice_ok: bool = True


# -- values from a request ------------------------------------------------------


def text(value: str | None, what: str, *, limit: int = MAX_FIELD) -> str | None:
    """A bounded text field; None when missing or blank."""
    if value is None:
        return None
    value = value.strip()
    if len(value) > limit:
        raise BadRequest(f"{what} is {len(value)} characters long (at most {limit})")
    if "\x00" in value:  # PostgreSQL text cannot hold it: refused here, not by the driver
        raise BadRequest(f"{what} contains a NUL character")
    return value or None


def integer(value: str | None, what: str, *, low: int, high: int, default: int) -> int:
    if value is None or not value.strip():
        return default
    try:
        n = int(value.strip())
    except ValueError:
        raise BadRequest(f"{what} is not a whole number: {value[:40]!r}") from None
    if not low <= n <= high:
        raise BadRequest(f"{what} must be between {low} and {high}, not {n}")
    return n


def moment(value: str | None, what: str) -> datetime | None:
    """An ISO time (a browser's ``datetime-local`` value is UTC)."""
    value = text(value, what, limit=64)
    if value is None:
        return None
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise BadRequest(f"{what} is not a time (YYYY-MM-DDTHH:MM): {value[:40]!r}") from None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def run_id(value: str) -> UUID:
    try:
        return UUID(value)
    except ValueError:
        raise BadRequest(f"not a run id: {value[:40]!r}") from None


def encode_cursor(cursor: Cursor | None) -> str | None:
    return None if cursor is None else f"{cursor[0].isoformat()}~{cursor[1]}"


def decode_cursor(value: str | None, *, numeric: bool) -> Cursor | None:
    value = text(value, "the page cursor", limit=120)
    if value is None:
        return None
    at, _, key = value.partition("~")
    try:
        when = datetime.fromisoformat(at)
        ident: Any = int(key) if numeric else UUID(key)
    except ValueError:
        raise BadRequest(f"not a page cursor: {value[:60]!r}") from None
    if when.tzinfo is None:
        raise BadRequest(f"not a page cursor: {value[:60]!r}")
    return when, ident


# -- formatting -------------------------------------------------------------------


def last_line(value: str | None) -> str:
    """An error's last non-blank line (a traceback's exception), for a list."""
    lines = [line for line in (value or "").splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


@dataclass(frozen=True)
class Payload:
    """A JSON value as a page shows it: pretty, folded past ``FOLD_CHARS``,
    cut past ``SHOW_CHARS``."""

    text: str
    folded: bool
    cut: int

    @classmethod
    def of(cls, value: Any, chars: int = SHOW_CHARS) -> Payload:
        full = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
        cut = max(0, len(full) - chars)
        return cls(full[:chars], len(full) > FOLD_CHARS, cut)


@dataclass(frozen=True)
class ErrorText:
    """An error as a page shows it: its last ``chars`` characters, and how
    many came before (``length``: the whole error's, when a read already cut
    it: client.error_history)."""

    text: str
    cut: int

    @classmethod
    def of(cls, value: str | None, chars: int = ERROR_CHARS, length: int | None = None) -> ErrorText:
        full = value or ""
        shown = full[len(full) - chars:] if len(full) > chars else full
        return cls(shown, max(length or 0, len(full)) - len(shown))


def compact(value: Any, chars: int = EVENT_PAYLOAD_CHARS) -> str:
    """A JSON value on one line, cut to ``chars`` characters (with an ellipsis)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return text if len(text) <= chars else text[:chars - 1] + "…"


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("cyclone_py.console", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    # Times in UTC without a Z (the pages say UTC), durations in full; an empty cell for none.
    env.filters["time"] = partial(fmt_time, empty="", zulu=False)
    env.filters["delta"] = partial(fmt_duration, empty="", full=True)
    env.filters["glance"] = partial(fmt_duration, empty="")  # a duration at a glance: 4m05s
    env.filters["step"] = lambda s: fmt_step(s.node, s.item_index)  # a step row as the faces name it
    # A step's attempt as the CLI says it: 2/5, or 6 of 5 (reopened) after a retry without more attempts.
    env.filters["attempts"] = lambda s: fmt_attempts(s.attempt, s.max_attempts)
    env.filters["payload"] = Payload.of
    env.filters["compact"] = compact
    env.filters["error_text"] = ErrorText.of
    env.globals["error_chars"] = ERROR_CHARS
    env.globals["list_error_chars"] = LIST_ERROR_CHARS
    env.globals["step_show_chars"] = STEP_SHOW_CHARS
    env.globals["show_chars"] = SHOW_CHARS
    env.filters["last_line"] = last_line
    env.filters["iso"] = utc_iso
    env.filters["form_time"] = form_time
    env.filters["hm"] = lambda at: at.astimezone(UTC).strftime("%H:%M")
    env.globals["run_states"] = RUN_STATES
    env.globals["discard_kinds"] = DISCARD_KINDS
    return env


# -- the application ------------------------------------------------------------


class Console:
    """The pages and actions over one client."""

    def __init__(self, client: Client, settings: Settings, layouts: Layouts | None = None) -> None:
        self.client = client
        self.settings = settings
        self.layouts = layouts if layouts is not None else Layouts()
        self.env = _environment()

    # -- plumbing ------------------------------------------------------------

    def page(self, ctx: Ctx, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        body = self.env.get_template(template).render(
            ctx=ctx, csrf_field=CSRF_FIELD, actions=self.settings.allow_actions, **values)
        return HTMLResponse(body, status_code=status)

    def error_page(self, ctx: Ctx, status: int, message: str) -> HTMLResponse:
        return self.page(ctx, "error.html", status, message=" ".join(message.split()), code=status)

    def can(self) -> set[str]:
        """The actions this console offers: all of them with ``allow_actions``,
        less those the database role may not execute."""
        if not self.settings.allow_actions:
            return set()
        allowed = self.client.executable(sorted(set(ACTION_FUNCTIONS.values())))
        return {a for a, fn in ACTION_FUNCTIONS.items() if fn in allowed}

    def acting(self, ctx: Ctx) -> Client:
        return self.client.acting_as(ctx.actor)

    # -- reads ---------------------------------------------------------------

    def overview(self, ctx: Ctx) -> Response:
        """What the engine is doing, in numbers that each link to their list
        (overview.py): bounded whatever the history (``overview_gauges``: each
        workflow's live runs up to ``LIVE_CAP``, the rest through partial
        indexes; the runs that finished in the last hour through the archive
        queue and the day tables' finish-time index)."""
        now = self.client.now()
        since, until = window(now)
        shown = build_overview(now, self.client.overview_gauges(LIVE_CAP),
                               self.client.finished_per_minute(since, until), self.client.workers(),
                               self.client.lease_holders(), self.client.limits(), self.client.schedules(),
                               self.client.dead_letters(limit=NEWEST_DEAD).rows)
        return self.page(ctx, "overview.html", o=shown, live_seconds=self.settings.refresh_seconds,
                         spark_height=SPARK_HEIGHT, minutes=MINUTES, live_cap=LIVE_CAP)

    def runs(self, ctx: Ctx) -> Response:
        q = ctx.request.query_params
        filters = {
            "workflow": text(q.get("workflow"), "the workflow", limit=200),
            "state": text(q.get("state"), "the state", limit=20),
            "from": text(q.get("from"), "the start of the range", limit=64),
            "until": text(q.get("until"), "the end of the range", limit=64),
            "key": text(q.get("key"), "the idempotency key", limit=1000),
            "id": text(q.get("id"), "the run id", limit=36),
            "ended_from": text(q.get("ended_from"), "the start of the end-time range", limit=64),
            "ended_until": text(q.get("ended_until"), "the end of the end-time range", limit=64),
        }
        after = decode_cursor(q.get("after"), numeric=False)
        ended = (moment(filters["ended_from"], "the start of the end-time range"),
                 moment(filters["ended_until"], "the end of the end-time range"))
        page: Page[Any]
        if ended[0] is None and ended[1] is None:
            page = self.client.runs_page(
                workflow=filters["workflow"], state=filters["state"],
                created_from=moment(filters["from"], "the start of the range"),
                created_until=moment(filters["until"], "the end of the range"),
                idempotency_key=filters["key"], id_prefix=filters["id"], after=after, limit=self.settings.page_size)
        else:
            # The runs that ended in a range (the overview's last hour and its minutes): cyclone.finished_runs,
            # newest end first, read where finished runs are listed by their end (a window of at most a day).
            if ended[0] is None or ended[1] is None:
                raise BadRequest("an end-time range needs both ended_from and ended_until")
            if any(filters[k] for k in ("from", "until", "key", "id")):
                raise BadRequest("an end-time range goes with the workflow and state filters only")
            page = self.client.finished_runs_page(ended[0], ended[1], workflow=filters["workflow"],
                                                  state=filters["state"], after=after,
                                                  limit=self.settings.page_size)
        shown = {k: v for k, v in filters.items() if v}
        more = None if page.next is None else "/runs?" + urlencode({**shown, "after": encode_cursor(page.next)})
        now = self.client.now()
        # The failing step of the page's failed runs: one read of their discarded steps, each error cut by
        # the database (none when the page has no failed run).
        failures = self.client.run_failures([r.id for r in page.rows if r.state == "failed"], chars=LIST_ERROR_CHARS)
        ranges = [(label, "/runs?" + urlencode({**{k: v for k, v in shown.items()
                                                   if k not in ("from", "until", "ended_from", "ended_until")},
                                                 "from": form_time(now - span)}))
                  for label, span in TIME_RANGES]
        return self.page(ctx, "runs.html", page=page, filters=filters, next_url=more,
                         first_url="/runs?" + urlencode(shown), paged="after" in q,
                         workflows=sorted(self.client.workflows()), now=now, failures=failures, ranges=ranges)

    def run(self, ctx: Ctx, status: int = 200) -> Response:
        """A run's page, bounded whatever the run: its DAG from the steps'
        outline (no payloads) and only when small enough (graph.py); its steps
        ``STEP_PAGE`` at a time (``?steps=N``, with their payloads and
        errors cut); its error history newest first, ``ERROR_PAGE`` at a time
        (``?errors=CURSOR``), each error cut to its end, linked to its own page."""
        rid = run_id(ctx.request.path_params["run_id"])
        q = ctx.request.query_params
        row = self.client.get_run_row(rid)
        run = self.client.get_run(rid)
        outline = self.client.step_outline(rid)
        pages = max(1, -(-len(outline) // STEP_PAGE))
        number = integer(q.get("steps"), "the page of steps", low=1, high=pages, default=1)
        first = (number - 1) * STEP_PAGE
        shown = outline[first:first + STEP_PAGE]
        steps = self.client.run_steps(rid, [s.id for s in shown]) if shown else []
        now = self.client.now()
        waiting = [s for s in steps if s.state not in TERMINAL_STEP_STATES and s.state != "running"]
        why = self.client.explain_steps([s.id for s in waiting]) if waiting else {}
        # The CLI's words (formatting.explain_text), without its commands: the page offers the actions.
        explained = {s.id: (why[s.id], explain_text(why[s.id], s, now=now, workflow=row.workflow, commands=False))
                     for s in waiting if s.id in why}
        timeline = build_timeline(steps, self.client.failed_attempts(rid, [s.id for s in steps],
                                                                     per_step=TIMELINE_MARKS),
                                  start=row.started_at or row.created_at, end=row.finished_at, now=now,
                                  first_row=first)
        live = row.state in LIVE_RUN_STATES
        links = {}
        for i, s in enumerate(outline):
            if s.item_index is not None:
                continue  # a map's item: the picture draws its map, one node (SPEC 16)
            on = i // STEP_PAGE + 1
            links[s.node] = (f"/runs/{s.child_run_id}" if s.child_run_id is not None
                             else f"#step-{i}" if on == number else f"/runs/{rid}?steps={on}#step-{i}")
        nodes = [s for s in outline if s.item_index is None]
        items: dict[str, list[str]] = {}
        for s in outline:
            if s.item_index is not None:
                items.setdefault(s.node, []).append(s.state)
        notes = {node: f"{sum(1 for st in states if st in TERMINAL_STEP_STATES):,} of {len(states):,} items done"
                 for node, states in items.items()}
        picture = self.layouts.picture([GraphNode(s.node, s.kind, s.deps, condition_label(s.spec)) for s in nodes],
                                       {s.node: s.state for s in nodes}, links, notes)
        before = decode_cursor(q.get("errors"), numeric=True)
        history = self.client.error_history(rid, before=before, limit=ERROR_PAGE, chars=LIST_ERROR_CHARS)
        audit = self.client.audit(rid)
        older_errors = None if history.next is None else f"/runs/{rid}?" + urlencode(
            {"errors": encode_cursor(history.next)}) + "#errors"
        return self.page(
            ctx, "run.html", status, row=row, run=run, steps=steps, first=first, now=now, explained=explained,
            picture=picture, count=len(outline), pages=pages, number=number, history=history,
            older_errors=older_errors, errors_paged=before is not None, audit=audit[-AUDIT_SHOWN:],
            audit_cut=max(0, len(audit) - AUDIT_SHOWN), can=self.can(), live=live, timeline=timeline,
            left=None if row.deadline_at is None else row.deadline_at - now, nodes=[s.node for s in nodes],
            # What can apply (the engine refuses the rest; the page does not offer it): a retry needs a dead
            # letter and a run that was not cancelled, a signal a wait node still to complete (cyclone.signal).
            dead_letters=sum(1 for s in outline if s.state == "discarded") if row.state != "cancelled" else 0,
            signals=self.client.awaited_signals(rid) if live and self.settings.allow_actions else [],
        )

    def error(self, ctx: Ctx) -> Response:
        """One error of a run's history, whole (its last ``SHOW_CHARS``
        characters: the engine keeps at most 65,536)."""
        rid = run_id(ctx.request.path_params["run_id"])
        ident = integer(ctx.request.path_params["error_id"], "the error id", low=1, high=2**63 - 2, default=0)
        page = self.client.error_history(rid, before=(datetime.now(UTC), ident + 1), limit=1, chars=SHOW_CHARS)
        if not page.rows or page.rows[0].id != ident:
            raise Refused(404, f"run {rid} has no error {ident}")
        return self.page(ctx, "error_view.html", rid=rid, e=page.rows[0])

    def dead_letters(self, ctx: Ctx, status: int = 200, results: Sequence[Any] = ()) -> Response:
        q = ctx.request.query_params
        filters = {"workflow": text(q.get("workflow"), "the workflow", limit=200),
                   "kind": text(q.get("kind"), "the error kind", limit=20)}
        page = self.client.dead_letters(workflow=filters["workflow"], error_kind=filters["kind"],
                                        after=decode_cursor(q.get("after"), numeric=True),
                                        limit=self.settings.page_size)
        shown = {k: v for k, v in filters.items() if v}
        more = None if page.next is None else "/dead-letters?" + urlencode(
            {**shown, "after": encode_cursor(page.next)})
        return self.page(ctx, "dead_letters.html", status, page=page, filters=filters, next_url=more,
                         first_url="/dead-letters?" + urlencode(shown), paged="after" in q,
                         workflows=sorted(self.client.workflows()), can=self.can(), results=results)

    def schedules(self, ctx: Ctx, status: int = 200) -> Response:
        """Every schedule, or one (``?name=``: the overview's links)."""
        name = text(ctx.request.query_params.get("name"), "the schedule name", limit=200)
        return self.page(ctx, "schedules.html", status, schedules=self.client.schedules(name), can=self.can(),
                         name=name)

    def limits(self, ctx: Ctx) -> Response:
        """Every limit's buckets, or one limit's (``?name=``: the overview's links)."""
        name = text(ctx.request.query_params.get("name"), "the limit name", limit=200)
        return self.page(ctx, "limits.html", limits=self.client.limits(name), name=name)

    def events(self, ctx: Ctx) -> Response:
        """The kept events (SPEC 17), newest first, the newest ``page_size``
        (of one key with ``?key=``); each payload on one line, cut."""
        key = text(ctx.request.query_params.get("key"), "the event key", limit=1000)
        limit = self.settings.page_size
        return self.page(ctx, "events.html", events=self.client.events(key, limit=limit), key=key, limit=limit)

    # -- actions -----------------------------------------------------------------

    def _field(self, ctx: Ctx, name: str, what: str, *, limit: int = MAX_FIELD) -> str | None:
        assert ctx.form is not None
        value = ctx.form.get(name)
        if value is not None and not isinstance(value, str):
            raise BadRequest(f"{what} must be text")
        return text(value, what, limit=limit)

    def run_action(self, ctx: Ctx) -> Response:
        rid = run_id(ctx.request.path_params["run_id"])
        action = ctx.request.path_params["action"]
        if action not in ACTION_FUNCTIONS or action.endswith("-schedule"):
            raise Refused(404, f"no action {action[:40]!r}")
        client = self.acting(ctx)
        reason = self._field(ctx, "reason", "the reason")
        try:
            if action == "rerun":  # a new run: its page is where the operator goes next
                from_node = self._field(ctx, "from_node", "the node to rerun from", limit=200)
                new = client.rerun(rid, from_node, reason)
                return RedirectResponse(f"/runs/{new}", status_code=303)
            if action == "retry":
                node = self._field(ctx, "node", "the node", limit=200)
                if node is None:
                    raise BadRequest("retry needs the node")
                assert ctx.form is not None
                more = integer(ctx.form.get("additional_attempts"), "additional attempts",  # type: ignore[arg-type]
                               low=0, high=1000, default=0)
                client.retry(rid, node, more, reason)
                ctx.notice = f"retried {node}" + (f" with {more} more attempts" if more else "")
            elif action == "retry-all":
                ctx.notice = f"retried {client.retry_all(rid, reason)} dead letters"
            elif action == "cancel":
                ctx.notice = "cancelled" if client.cancel(rid, reason) else "not cancelled: the run is over"
            elif action == "pause":
                ctx.notice = "paused" if client.pause(rid) else "not paused"
            elif action == "resume":
                ctx.notice = "resumed" if client.resume(rid) else "not resumed"
            elif action == "signal":
                name = self._field(ctx, "name", "the signal name", limit=200)
                if name is None:
                    raise BadRequest("a signal needs a name")
                raw = self._field(ctx, "payload", "the payload", limit=MAX_BODY)
                try:
                    payload = None if raw is None else json.loads(raw)
                except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
                    raise BadRequest(f"the payload is not JSON: {exc}") from None
                delivered = client.signal(rid, name, payload)
                ctx.notice = f"signal {name} " + ("delivered" if delivered else "kept until its wait node is reached")
        except errors.CycloneError as exc:
            ctx.notice, ctx.notice_ok = exc.message, False
            return self.run(ctx, status_of(exc))
        return self.run(ctx)

    def retry_dead_letters(self, ctx: Ctx) -> Response:
        assert ctx.form is not None
        picked = ctx.form.getlist("step")
        if not picked:
            raise BadRequest("no dead letter selected")
        if len(picked) > MAX_SELECTED:
            raise BadRequest(f"{len(picked)} dead letters selected (at most {MAX_SELECTED} at once)")
        reason = self._field(ctx, "reason", "the reason")
        more = integer(ctx.form.get("additional_attempts"), "additional attempts",  # type: ignore[arg-type]
                       low=0, high=1000, default=0)
        targets = []
        for value in picked:
            if not isinstance(value, str) or ":" not in value:
                raise BadRequest("a selected dead letter is RUN_ID:NODE")
            rid, _, node = value.partition(":")
            targets.append((run_id(rid), text(node, "the node", limit=200) or ""))
        # bulk.py's loop, as cyclone dlq retry's: one retry a step (a map's items picked twice are one retry of
        # their map), each refusal kept with its row; a database gone or a role without the grant is the page's.
        retried = retry_each(self.acting(ctx), chosen(targets), additional_attempts=more, reason=reason)
        results = [(r.target.run_id, r.target.node, r.ok, "retried" if r.error is None else r.error.message)
                   for r in retried]
        done = sum(1 for r in results if r[2])
        ctx.notice = f"retried {done} of {len(results)}"
        ctx.notice_ok = done == len(results)
        return self.dead_letters(ctx, results=results)

    def schedule_action(self, ctx: Ctx) -> Response:
        action = ctx.request.path_params["action"]
        if action not in ("pause", "resume"):
            raise Refused(404, f"no action {action[:40]!r}")
        name = self._field(ctx, "name", "the schedule name", limit=200)
        if name is None:
            raise BadRequest("which schedule?")
        client = self.acting(ctx)
        try:
            done = client.pause_schedule(name) if action == "pause" else client.resume_schedule(name)
        except errors.CycloneError as exc:
            ctx.notice, ctx.notice_ok = exc.message, False
            return self.schedules(ctx, status_of(exc))
        ctx.notice = f"{action}d {name}" if done else f"{name} was not {action}d (missing, or already so)"
        ctx.notice_ok = done
        return self.schedules(ctx)


def status_of(exc: errors.CycloneError) -> int:
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return 500


# -- the request path: limits, authentication, CSRF -----------------------------


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is 413, declared or streamed;
    and the headers every answer carries (CSP, no framing, a referrer only to
    the console itself: ``no-referrer`` made a browser send ``Origin: null``
    with the console's own forms, which the origin check must refuse)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = self.limit + 1
                if declared > self.limit:
                    await PlainTextResponse(f"the body is over {self.limit} bytes", 413)(scope, receive, send)
                    return
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge(f"the body is over {self.limit} bytes")
            return message

        async def headed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(b"content-security-policy", _CSP.encode()), (b"x-frame-options", b"DENY"),
                            (b"referrer-policy", b"same-origin"), (b"x-content-type-options", b"nosniff"),
                            (b"cache-control", b"no-store")]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, bounded, headed)


def _is_loopback_host(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host[1:].split("]", 1)[0]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _origin(url: str) -> tuple[str, str, int] | None:
    """An origin as (scheme, host, port), the port made explicit; None when
    it is no http(s) origin (``null``, garbage)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return parts.scheme.lower(), parts.hostname.lower(), port or (443 if parts.scheme.lower() == "https" else 80)


def cross_origin(request: Request, trust_forwarded_host: bool) -> str | None:
    """Why a state-changing request may not act, or None: its ``Origin`` must
    be the console's own (the scheme it is served on and the ``Host`` asked
    for; ``X-Forwarded-Host`` instead behind a trusted proxy). Without
    ``Origin``, or with ``Origin: null`` (a browser's privacy settings, but a
    sandboxed frame's too), ``Sec-Fetch-Site`` must say ``same-origin``, and
    must be there for a ``null``. A request with neither header is no
    browser's (browsers send ``Origin`` with every POST): it is left to the
    CSRF token."""
    host = (request.headers.get("x-forwarded-host") if trust_forwarded_host else None) \
        or request.headers.get("host", "")
    own = f"{request.url.scheme}://{host.split(',')[0].strip()}"
    sent = request.headers.get("origin")
    site = request.headers.get("sec-fetch-site")
    if sent is not None and sent.strip() != "null":
        if _origin(sent) is None or _origin(sent) != _origin(own):
            return (f"refused: this form was sent by a page of {sent[:100]!r}, not of this console ({own[:100]}); "
                    "a page of another origin (another port too) may not act here")
        return None
    if site is not None and site.strip().lower() != "same-origin":
        return (f"refused: this form was sent from {site[:40]!r} (Sec-Fetch-Site), not from this console's "
                "own pages: a page of another origin (another port too) may not act here")
    if site is None and sent is not None:
        return "refused: this form was sent by a page of no origin ('null'), not of this console"
    return None


def csrf_signer(secret: bytes) -> Callable[[str, str], str]:
    """The form token of a cookie value and an actor: HMAC-SHA256 under
    ``secret``, so only this console can make one, and a token is good only
    with the cookie value and the actor it was made for."""

    def sign(nonce: str, actor: str) -> str:
        mac = hmac.new(secret, b"cyclone-ui-csrf\0" + nonce.encode() + b"\0" + actor.encode(), hashlib.sha256)
        return base64.urlsafe_b64encode(mac.digest()).decode().rstrip("=")

    return sign


def create_app(client: Client, settings: Settings, layouts: Layouts | None = None) -> Starlette:
    """The console as an ASGI application."""
    console = Console(client, settings, layouts)
    tokens = dict(settings.tokens)
    sign = csrf_signer(settings.secret or secrets.token_bytes(32))
    static = {name: (importlib.resources.files("cyclone_py.console").joinpath("static", name).read_bytes(), kind)
              for name, kind in STATIC.items()}

    def token_name(presented: str | None) -> str | None:
        if not presented:
            return None
        found = None
        for secret, name in tokens.items():
            if hmac.compare_digest(secret.encode(), presented.encode()):
                found = name
        return found

    def view(handler: Callable[[Ctx], Response], *, action: bool = False) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            nonce = request.cookies.get(CSRF_COOKIE) or ""
            fresh = not 32 <= len(nonce) <= 64
            if fresh:
                nonce = secrets.token_urlsafe(32)
            ctx = Ctx(request, None, settings.local_actor, "")
            try:
                response = await guarded(request, ctx, nonce, handler, action)
            except Refused as exc:
                response = console.error_page(ctx, exc.status, str(exc))
            except BadRequest as exc:
                response = console.error_page(ctx, 400, str(exc))
            except Exception:  # noqa: BLE001  (a page, never a traceback; the log has it, without the query)
                logger.exception("console: %s %s failed", request.method, request.url.path)
                response = console.error_page(ctx, 500, "the console failed to answer this page (its log says why)")
            if fresh:
                response.set_cookie(CSRF_COOKIE, nonce, httponly=True, samesite="strict")
            return response

        return endpoint

    async def guarded(request: Request, ctx: Ctx, nonce: str, handler: Callable[[Ctx], Response],
                      action: bool) -> Response:
        if tokens:
            query_token = request.query_params.get("token")
            if query_token is not None and request.method == "GET":
                if token_name(query_token) is None:
                    raise Refused(401, "wrong token")
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                target = request.url.path + ("?" + urlencode(rest) if rest else "")
                response = RedirectResponse(target, status_code=303)
                response.set_cookie(TOKEN_COOKIE, query_token, httponly=True, samesite="strict")
                return response
            auth = request.headers.get("authorization", "")
            presented = auth[7:].strip() if auth.lower().startswith("bearer ") else request.cookies.get(TOKEN_COOKIE)
            name = token_name(presented)
            if name is None:
                message = "a token is required (open the URL cyclone ui printed)" if not presented else "wrong token"
                return console.page(ctx, "login.html", 401, message=message)
            ctx.actor = name
        elif not _is_loopback_host(request.headers.get("host", "")):
            raise Refused(403, "this console answers only on a loopback address without a token")
        if settings.proxy_user_header:
            user = request.headers.get(settings.proxy_user_header)
            if not user or not user.strip():
                raise Refused(401, f"the proxy named no user ({settings.proxy_user_header})")
            ctx.actor = user.strip()[:200]
        ctx.csrf = sign(nonce, ctx.actor)
        if request.method == "POST":
            if not action:
                raise Refused(405, "this page takes no POST")
            if not settings.allow_actions:
                raise Refused(403, "actions are off: start cyclone ui with --allow-actions")
            why = cross_origin(request, bool(settings.proxy_user_header))
            if why is not None:
                raise Refused(403, why)
            try:
                ctx.form = await request.form(max_files=0, max_fields=MAX_SELECTED + 10, max_part_size=MAX_BODY)
            except BodyTooLarge as exc:
                raise Refused(413, str(exc)) from None
            except Exception as exc:  # the multipart parser's own errors, of any kind
                raise BadRequest(f"the form could not be read: {exc}") from None
            sent = ctx.form.get(CSRF_FIELD)
            # The token made for this cookie's value and this actor: a cookie set by
            # another page (another port of this host can) has no token that goes with it.
            if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), ctx.csrf.encode()):
                raise Refused(403, "the form's CSRF token is missing or wrong: reload the page and try again")
        try:
            return await run_in_threadpool(handler, ctx)
        except errors.CycloneError as exc:
            return console.error_page(ctx, status_of(exc), exc.message)

    async def login(request: Request) -> Response:
        ctx = Ctx(request, None, settings.local_actor, "")
        why = cross_origin(request, bool(settings.proxy_user_header))
        if why is not None:  # no logging a browser in with a token another page chose
            return console.error_page(ctx, 403, why)
        try:
            form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
        except Exception:
            return console.page(ctx, "login.html", 400, message="the form could not be read")
        presented = form.get("token")
        if not isinstance(presented, str) or token_name(presented.strip()) is None:
            return console.page(ctx, "login.html", 401, message="wrong token")
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(TOKEN_COOKIE, presented.strip(), httponly=True, samesite="strict")
        return response

    async def static_file(request: Request) -> Response:
        found = static.get(request.path_params["name"])
        if found is None:
            return PlainTextResponse("not found", 404)
        return Response(found[0], media_type=found[1])

    routes = [
        Route("/", view(console.overview)),
        Route("/runs", view(console.runs)),
        Route("/runs/{run_id}", view(console.run)),
        Route("/runs/{run_id}/errors/{error_id}", view(console.error)),
        Route("/runs/{run_id}/{action}", view(console.run_action, action=True), methods=["POST"]),
        Route("/dead-letters", view(console.dead_letters)),
        Route("/dead-letters/retry", view(console.retry_dead_letters, action=True), methods=["POST"]),
        Route("/schedules", view(console.schedules)),
        Route("/schedules/{action}", view(console.schedule_action, action=True), methods=["POST"]),
        Route("/limits", view(console.limits)),
        Route("/events", view(console.events)),
        Route("/login", login, methods=["POST"]),
        Route("/static/{name}", static_file),
    ]
    app = Starlette(routes=routes)
    app.state.console = console
    app.add_middleware(BodyLimit)
    return app
