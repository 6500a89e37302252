"""Imports in cyclone_py only go down, and only the client and db.py use the driver.

Each module has a layer; a module may import only modules of lower layers
(at module level, inside a function, or under TYPE_CHECKING alike). A new
module must be given a layer here. A subpackage (``cyclone_py/console/``,
``cyclone_py/cli/``) is one module here: its files' imports together,
imports among them allowed. See docs/architecture.md.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "cyclone_py"

LAYERS: dict[str, int] = {
    # the vocabulary and plain values; db.py resolves DSNs and runs the embedded cluster
    "vocabulary": 0,
    "durations": 0,
    "tracing": 0,
    "errors": 0,
    "db": 0,
    "logs": 0,
    "version": 0,  # the package's release  # the log formats (of the command's worker): no cyclone_py import
    # how the faces print times and durations (the CLI, cyclone top, the console)
    "formatting": 1,
    # the handler's context and the schedule declarations, then the definitions (plain data)
    "context": 1,
    "schedule": 1,
    "limit": 1,
    "workflow": 2,
    # the one module with SQL; loading an app by MODULE:ATTR (definitions only)
    "client": 3,
    "loader": 3,
    "conformance_app": 3,  # the conformance kit's workflows and the Python worker's handlers for them
    # running steps: execution primitives and the worker's machinery (threads, the event loop, its metrics)
    "execution": 4,
    "runtime": 4,
    "aio": 4,
    "metrics": 4,
    "top": 4,  # cyclone top's frame: rich tables of metrics() rows (the client's Metric)
    "progress": 4,  # ctx.progress throttled per step, sent from a thread of its own
    "shards": 4,  # setting up a sharded deployment: sqitch deploys (db) and configuring through the client
    "bulk": 4,  # operator actions over many dead letters: chosen by pages of the client, one retry() each
    "reporter": 5,
    "listener": 5,
    "exporter": 5,  # cyclone exporter: metrics() as a Prometheus collector, served by metrics.serve
    "console": 5,  # cyclone ui: the web console's pages over the client (a package: app, graph, server)
    # the worker, and the test harness beside it (which does not import the worker)
    "worker": 6,
    "testing": 6,
    "conformance": 6,  # the conformance kit: a worker under test, judged through the client
    # the faces: the command (a package: a module per command group), the pytest plugin
    "cli": 7,
    "pytest_plugin": 7,
    "__init__": 8,
}

DRIVER_MODULES = {"client", "db"}  # the only ones that may import psycopg


def _modules() -> list[str]:
    files = {p.stem for p in PACKAGE.glob("*.py")}
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    return sorted(files | packages)


def _sources(module: str) -> list[Path]:
    folder = PACKAGE / module
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [PACKAGE / f"{module}.py"]


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(cyclone_py modules, other top-level packages) that ``module`` imports."""
    ours: set[str] = set()
    others: set[str] = set()
    nodes = [node for path in _sources(module) for node in ast.walk(ast.parse(path.read_text()))]
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "cyclone_py":
                    ours.add(parts[1] if len(parts) > 1 else "__init__")
                else:
                    others.add(parts[0])
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{module}: use absolute imports"
            parts = (node.module or "").split(".")
            if parts[0] != "cyclone_py":
                others.add(parts[0])
            elif len(parts) > 1:
                ours.add(parts[1])
            else:  # from cyclone_py import errors, db
                ours.update(alias.name for alias in node.names)
    ours.discard(module)
    return ours, others


def test_every_module_has_a_layer() -> None:
    assert set(_modules()) == set(LAYERS)


@pytest.mark.parametrize("module", _modules())
def test_imports_only_go_down(module: str) -> None:
    ours, _ = _imports(module)
    upward = sorted(m for m in ours if LAYERS.get(m, 99) >= LAYERS[module])
    assert not upward, f"cyclone_py.{module} (layer {LAYERS[module]}) imports {upward}"


@pytest.mark.parametrize("module", _modules())
def test_only_the_client_and_db_import_the_driver(module: str) -> None:
    _, others = _imports(module)
    if module not in DRIVER_MODULES:
        assert not others & {"psycopg", "psycopg_pool"}, f"cyclone_py.{module} imports psycopg"
