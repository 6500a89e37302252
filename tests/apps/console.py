"""Workflows the web console's tests show: a shop whose charge fails on its
first attempt (retried from the page), with a child run; an approval waiting
for a signal; and a hostile one whose node name and error are HTML."""

from __future__ import annotations

from typing import Any

from cyclone_py import App, Workflow
from cyclone_py.context import StepContext

HOSTILE_NODE = '<script>alert("node")</script>'
HOSTILE_ERROR = "<script>alert('error')</script><img src=x onerror=alert(1)>"

invoice = Workflow("invoice")


@invoice.step()
def render(ctx: StepContext) -> Any:
    return {"pdf": "invoice.pdf"}


shop = Workflow("shop", max_attempts=1)


@shop.step()
def fetch(ctx: StepContext) -> Any:
    return {"items": 3}


@shop.step(deps=[fetch])
def charge(ctx: StepContext) -> Any:
    if ctx.attempt == 1:
        raise RuntimeError("card declined: the payment service answered 502")
    return {"charged": 42}


@shop.step(deps=[charge])
def ship(ctx: StepContext) -> Any:
    return {"tracking": "XY123"}


shop.child("invoice", invoice, deps=[charge])

approval = Workflow("approval")


@approval.step()
def request(ctx: StepContext) -> Any:
    return {"asked": True}


approval.wait("approve", deps=[request])


@approval.step(deps=["approve"])
def done(ctx: StepContext) -> Any:
    return {"ok": True}


hostile = Workflow("hostile", max_attempts=1)


@hostile.step(name=HOSTILE_NODE, handler="hostile_work")
def hostile_work(ctx: StepContext) -> Any:
    raise RuntimeError(HOSTILE_ERROR)


app = App(shop, approval, hostile)
