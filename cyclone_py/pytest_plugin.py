"""The pytest plugin (entry point ``pytest11``): a scratch Cyclone database per test.

Fixtures:

- ``cyclone_dsn`` (session): the server the scratch databases are made on,
  resolved like the CLI's: ``--cyclone-dsn``, else ``CYCLONE_DSN``, else
  ``DATABASE_URL``, else the embedded cluster (started if need be).
- ``cyclone_template`` (session): a :class:`~cyclone_py.testing.Template` on
  that server, the engine deployed once by sqitch, then your schema loaded by
  the ``pytest_cyclone_setup_template(dsn)`` hook; dropped at the end.
- ``cyclone_app``: the App under test. Define it in your ``conftest.py``.
- ``cyclone_env``: an :class:`~cyclone_py.testing.Env` for ``cyclone_app`` on a
  fresh copy of the template, dropped after the test: it sees no other test's
  runs and its clock is its own.

When the role cannot create databases, or sqitch is missing, the fixtures
fail in one line; they never fall back to the database the DSN names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NoReturn

import pytest

from cyclone_py import db, errors
from cyclone_py.testing import Env, Template
from cyclone_py.workflow import App, Workflow

__all__ = ["Hooks"]


class Hooks:
    """The plugin's hook; implement it as a plain function in a ``conftest.py``."""

    @pytest.hookspec
    def pytest_cyclone_setup_template(self, dsn: str) -> None:
        """Load the application's own schema into the test template (``dsn``
        names it), after the engine is deployed and before any test copies it:
        tables a test writes in the same transaction as its ``submit``, say."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(Hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cyclone")
    group.addoption(
        "--cyclone-dsn",
        default=None,
        metavar="DSN",
        help="Server (and role, which must be allowed to create databases) for the cyclone_env "
        "scratch databases. Default: CYCLONE_DSN, DATABASE_URL, else the embedded cluster.",
    )


@pytest.fixture(scope="session")
def cyclone_dsn(pytestconfig: pytest.Config) -> str:
    """The server the scratch databases are made on, resolved like the CLI's DSN."""
    try:
        return db.resolve_dsn(pytestconfig.getoption("cyclone_dsn"), start=True)
    except (errors.CycloneError, db.EmbeddedDBError) as exc:
        problem = str(exc)
    _stop(problem)


@pytest.fixture(scope="session")
def cyclone_template(pytestconfig: pytest.Config, cyclone_dsn: str) -> Iterator[Template]:
    """The engine (and your schema) deployed once per session, to copy."""

    def setup(dsn: str) -> None:
        pytestconfig.hook.pytest_cyclone_setup_template(dsn=dsn)

    try:
        template = Template.deploy(cyclone_dsn, setup=setup)
    except (errors.CycloneError, db.EmbeddedDBError) as exc:
        problem = str(exc)
    else:
        try:
            yield template
        finally:
            template.drop()
        return
    _stop(problem)


def _stop(problem: str) -> NoReturn:
    """Fail the test in one line (outside the ``except``: no chained traceback)."""
    pytest.fail(f"cyclone_env: {problem}", pytrace=False)


@pytest.fixture
def cyclone_app() -> App | Workflow:
    """Override in your conftest.py: the App (or Workflow) ``cyclone_env`` runs."""
    pytest.fail("cyclone_env: define a `cyclone_app` fixture returning your App (in conftest.py)", pytrace=False)


@pytest.fixture
def cyclone_env(cyclone_template: Template, cyclone_app: App | Workflow) -> Iterator[Env]:
    """An Env for ``cyclone_app`` on a scratch database, dropped after the test."""
    env = Env.scratch(cyclone_template, cyclone_app)
    try:
        yield env
    finally:
        env.close()
