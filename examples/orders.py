"""An order-fulfilment App: retries, a signal, a contained side branch, a child run, a map and a condition.

    charge ──┬── approval (wait for signal "approved", at most 1 hour) ──┐
             ├── invoice  (child run of make_invoice) ───────────────────┤
             ├── pack     (a map: one item per order line) ──────────────┼── ship
             ├── gift_wrap (only when the order is a gift) ──────────────┘
             └── loyalty ── points_email   (cancel_branch: a loyalty failure
                                            cancels this branch only)

``pack`` runs once per line of the order (``ctx.item``), in parallel, and its
output is the list of the packed lines; ``gift_wrap`` runs only for an input
with ``"gift": true`` and is skipped otherwise, and ``ship``
(``on_dep_skipped="run"``) goes on either way.

``charge`` fails its first attempt (a flaky card processor) and succeeds on
the retry; ``loyalty`` raises ``Permanent`` for customers without a loyalty
account, which discards it and cancels ``points_email`` while the rest of the
run completes.

Run a worker for it with ``cyclone worker --app examples.orders:app``.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from cyclone_py import App, Permanent, Workflow
from cyclone_py.context import StepContext

# -- the child workflow ---------------------------------------------------

make_invoice = Workflow("make_invoice")


@make_invoice.step()
def render_invoice(ctx: StepContext) -> Any:
    order = ctx.input["order_id"]
    return {"invoice_no": f"INV-{order}", "amount": ctx.input["amount"]}


@make_invoice.step(deps=[render_invoice])
def file_invoice(ctx: StepContext) -> Any:
    return {"filed": ctx.deps["render_invoice"]["invoice_no"]}


# -- the order workflow ---------------------------------------------------

order_fulfilment = Workflow("order_fulfilment", max_attempts=10)


@order_fulfilment.step(max_attempts=5, timeout=timedelta(seconds=30))
def charge(ctx: StepContext) -> Any:
    if ctx.attempt == 1 and ctx.input.get("flaky_processor", True):
        raise ConnectionError("card processor timed out")  # transient: retried with backoff
    ctx.check_cancelled()
    return {"charge_id": f"ch_{random.randrange(10**8):08d}", "amount": ctx.input["amount"],
            "lines": ctx.input.get("lines", [])}


order_fulfilment.wait("approval", signal="approved", deps=[charge], max_wait=timedelta(hours=1))
order_fulfilment.child("invoice", make_invoice, deps=[charge], max_wait=timedelta(minutes=10))


@order_fulfilment.map(over="deps.charge.lines", deps=[charge])
def pack(ctx: StepContext) -> Any:
    line = ctx.item
    return {"line": ctx.item_index, "sku": line["sku"], "boxes": -(-int(line["qty"]) // 6)}


@order_fulfilment.step(deps=[charge], when={"input": {"gift": True}})
def gift_wrap(ctx: StepContext) -> Any:
    return {"wrapped_by": "elves"}


@order_fulfilment.step(deps=[charge], max_attempts=3)
def loyalty(ctx: StepContext) -> Any:
    if not ctx.input.get("loyalty_account"):
        raise Permanent("customer has no loyalty account")
    return {"points": int(ctx.input["amount"])}


@order_fulfilment.step(deps=[loyalty], on_dep_failure="cancel_branch")
def points_email(ctx: StepContext) -> Any:
    return {"sent_to": ctx.input.get("email")}


@order_fulfilment.step(deps=["approval", "invoice", pack, gift_wrap], priority=-1, on_dep_skipped="run")
def ship(ctx: StepContext) -> Any:
    out = {
        "order_id": ctx.input["order_id"],
        "approved_by": (ctx.deps["approval"] or {}).get("by"),
        "invoice": ctx.deps["invoice"]["file_invoice"]["filed"],
    }
    if ctx.deps["pack"]:
        out["boxes"] = sum(p["boxes"] for p in ctx.deps["pack"])
    if "gift_wrap" in ctx.deps:
        out["gift_wrapped"] = True
    return out


app = App(order_fulfilment, make_invoice)
