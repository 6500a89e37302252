"""The documentation keeps up with the code it documents."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from cyclone_py import Client, errors

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _client_section() -> str:
    text = (DOCS / "python.md").read_text()
    return text[text.index("## The client"):text.index("\n## ", text.index("## The client") + 1)]


def test_every_public_client_method_is_documented() -> None:
    section = _client_section()
    documented = set(re.findall(r"`(\w+)[`(]", section))
    public = {name for name, _ in inspect.getmembers(Client, inspect.isfunction) if not name.startswith("_")}
    assert public - documented == set()


def test_every_client_exception_is_documented() -> None:
    section = _client_section()
    for cls in (errors.NotFound, errors.WrongState, errors.InvalidArgument, errors.PermissionDenied,
                errors.DatabaseUnavailable):
        assert f"`{cls.__name__}`" in section, cls.__name__


def test_the_console_page_shows_the_committed_screenshots() -> None:
    """docs/console.md links the screenshots `make screenshots` copies from the
    browser test's ignored folder; each one is committed."""
    text = (DOCS / "console.md").read_text()
    shown = re.findall(r"!\[[^\]]*\]\((console/[\w-]+\.png)\)", text)
    assert sorted(shown) == ["console/dead-letters.png", "console/overview.png", "console/run.png"]
    assert all((DOCS / name).is_file() for name in shown)
