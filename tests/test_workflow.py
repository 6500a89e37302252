"""Workflow definitions: SPEC section 4 JSON, registration rules, the App."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from cyclone_py import App, Workflow
from cyclone_py.client import Client
from cyclone_py.context import StepContext
from cyclone_py.loader import load_app
from cyclone_py.workflow import as_app, format_interval


def test_definition_is_the_spec_json() -> None:
    invoice = Workflow("make_invoice")
    wf = Workflow("orders", max_attempts=25)

    @wf.step(max_attempts=5, timeout=timedelta(seconds=30))
    def charge(ctx: StepContext) -> Any:
        return None

    wf.wait("approval", signal="approved", deps=["charge"], max_wait=timedelta(hours=1))
    wf.child("invoice", invoice, deps=[charge], max_wait=600)

    @wf.step(deps=["approval", "invoice"], on_dep_failure="cancel_branch", priority=-1)
    def ship(ctx: StepContext) -> Any:
        return None

    assert wf.definition() == {
        "max_attempts": 25,
        "nodes": [
            {"name": "charge", "kind": "task", "handler": "charge", "deps": [],
             "max_attempts": 5, "timeout": "30 seconds"},
            {"name": "approval", "kind": "wait", "signal": "approved", "deps": ["charge"],
             "max_wait": "1 hour"},
            {"name": "invoice", "kind": "child", "workflow": "make_invoice", "deps": ["charge"],
             "max_wait": "10 minutes"},
            {"name": "ship", "kind": "task", "handler": "ship", "deps": ["approval", "invoice"],
             "priority": -1, "on_dep_failure": "cancel_branch"},
        ],
    }
    app = App(wf)
    assert set(app.workflows) == {"orders", "make_invoice"}  # object children come along
    assert app.handler_names() == ["charge", "ship"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(seconds=30), "30 seconds"),
        (1, "1 second"),
        (3600, "1 hour"),
        (7200.0, "2 hours"),
        (timedelta(days=1), "1 day"),
        (90, "90 seconds"),
        (0.25, "0.25 seconds"),
        (timedelta(milliseconds=1500), "1.5 seconds"),
        ("5 minutes", "5 minutes"),
    ],
)
def test_format_interval(value: Any, text: str) -> None:
    assert format_interval(value) == text


def test_duplicates_are_refused() -> None:
    wf = Workflow("w")

    @wf.step()
    def a(ctx: StepContext) -> None: ...

    with pytest.raises(ValueError, match="node named 'a'"):
        wf.step(name="a", handler="other")(lambda ctx: None)
    with pytest.raises(ValueError, match="handler named 'a'"):
        wf.step(name="b", handler="a")(lambda ctx: None)
    wf.step(name="c", handler="a")(a)  # the same function under two nodes is fine
    with pytest.raises(ValueError, match="node named 'c'"):
        wf.wait("c")
    with pytest.raises(ValueError, match="different workflow"):
        App(wf, Workflow("w"))


def test_load_app_and_as_app() -> None:
    app = load_app("apps.basic:app")
    assert "basic" in app
    single = load_app("apps.basic:basic")
    assert list(single.workflows) == ["basic"]
    with pytest.raises(ValueError):
        load_app("apps.basic")
    with pytest.raises(TypeError):
        as_app(object())  # type: ignore[arg-type]


def test_register_defines_children_first(dsn: str) -> None:
    child = Workflow("child_wf")
    child.step(name="c")(lambda ctx: 1)
    parent = Workflow("parent_wf")
    parent.child("kid", child)
    definitions = App(parent).definitions()
    assert [name for name, _ in definitions] == ["child_wf", "parent_wf"]
    assert parent.definitions() == definitions
    with Client(dsn) as client:
        for name, definition in definitions:
            client.define_workflow(name, definition)
        assert set(client.workflows()) == {"child_wf", "parent_wf"}
