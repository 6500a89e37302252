"""Loading an App by its ``MODULE:ATTR`` path (``cyclone worker --app``)."""

from __future__ import annotations

import importlib
from typing import Any

from cyclone_py.workflow import App, as_app

__all__ = ["load_app"]


def load_app(spec: str) -> App:
    """Import ``MODULE:ATTR`` (ATTR an App or a Workflow; dotted paths allowed)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"expected MODULE:ATTR, got {spec!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"module {module_name!r} has no attribute {attr!r}") from None
    return as_app(obj)
