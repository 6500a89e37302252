"""Loading an App by its ``MODULE:ATTR`` path (``cyclone worker --app``)."""

from __future__ import annotations

import importlib
import traceback
from pathlib import Path
from typing import Any

from cyclone_py.workflow import App, as_app

__all__ = ["AppImportError", "AppLoadError", "load_app"]


class AppLoadError(ValueError):
    """``MODULE:ATTR`` could not be loaded; the message says why."""


class AppImportError(AppLoadError):
    """The module raised while it was imported; the message names the file and line."""


def load_app(spec: str) -> App:
    """Import ``MODULE:ATTR`` (ATTR an App or a Workflow; dotted paths allowed).

    Raises :class:`AppLoadError`: a bad spec, a missing attribute, an object
    that is no App or Workflow, or an exception while importing the module
    (named with the file and line it came from)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise AppLoadError(f"expected MODULE:ATTR, got {spec!r}")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        what = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        raise AppImportError(f"{_where(exc)}{type(exc).__name__}: {what}") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AppLoadError(f"module {module_name!r} has no attribute {attr!r}") from None
    try:
        return as_app(obj)
    except TypeError as exc:
        raise AppLoadError(str(exc)) from exc


def _where(exc: Exception) -> str:
    """``file.py, line N: `` of the frame an import failed in (the last one
    outside the import machinery), or of the syntax error."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}, line {exc.lineno}: "
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename != __file__ and "importlib" not in Path(f.filename).parts
              and not f.filename.startswith("<frozen")]
    if not frames:
        return ""
    last = frames[-1]
    return f"{last.filename}, line {last.lineno}: "
