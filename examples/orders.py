"""An order-fulfilment App: retries, a signal, a contained side branch, a child run.

    charge ──┬── approval (wait for signal "approved", at most 1 hour) ──┐
             ├── invoice  (child run of make_invoice) ───────────────────┴── ship
             └── loyalty ── points_email   (cancel_branch: a loyalty failure
                                            cancels this branch only)

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
    return {"charge_id": f"ch_{random.randrange(10**8):08d}", "amount": ctx.input["amount"]}


order_fulfilment.wait("approval", signal="approved", deps=[charge], max_wait=timedelta(hours=1))
order_fulfilment.child("invoice", make_invoice, deps=[charge], max_wait=timedelta(minutes=10))


@order_fulfilment.step(deps=[charge], max_attempts=3)
def loyalty(ctx: StepContext) -> Any:
    if not ctx.input.get("loyalty_account"):
        raise Permanent("customer has no loyalty account")
    return {"points": int(ctx.input["amount"])}


@order_fulfilment.step(deps=[loyalty], on_dep_failure="cancel_branch")
def points_email(ctx: StepContext) -> Any:
    return {"sent_to": ctx.input.get("email")}


@order_fulfilment.step(deps=["approval", "invoice"], priority=-1)
def ship(ctx: StepContext) -> Any:
    return {
        "order_id": ctx.input["order_id"],
        "approved_by": (ctx.deps["approval"] or {}).get("by"),
        "invoice": ctx.deps["invoice"]["file_invoice"]["filed"],
    }


app = App(order_fulfilment, make_invoice)
