"""The chaos soak's knobs: ``--scale`` (or ``CYCLONE_CHAOS_SCALE``),
``--soak-minutes`` (or ``CYCLONE_SOAK_MINUTES``) and ``--soak-report``
(or ``CYCLONE_SOAK_REPORT``).

Scale 1 (the default) is the size ``make test`` runs: about 20 s of chaos and
a drain, well under a minute. ``pytest tests/chaos --scale 10`` makes the chaos
ten times as long; ``--soak-minutes 30`` sets its length outright (it wins over
``--scale``). ``--soak-report PATH`` writes the soak's report as JSON (it is
printed either way; ``-s`` shows it). The options are registered here, so they
are known when pytest is pointed at tests/chaos; the environment variables work
from anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--scale", action="store", type=float, default=None, dest="chaos_scale",
        help="chaos soak size multiplier (default: CYCLONE_CHAOS_SCALE or 1)",
    )
    parser.addoption(
        "--soak-minutes", action="store", type=float, default=None, dest="soak_minutes",
        help="how long the chaos soak's chaos lasts, in minutes (default: CYCLONE_SOAK_MINUTES, else by --scale)",
    )
    parser.addoption(
        "--soak-report", action="store", default=None, dest="soak_report",
        help="write the chaos soak's report to this JSON file (default: CYCLONE_SOAK_REPORT)",
    )


@pytest.fixture
def chaos_scale(request: pytest.FixtureRequest) -> float:
    value = request.config.getoption("chaos_scale", default=None)
    if value is None:
        value = float(os.environ.get("CYCLONE_CHAOS_SCALE", "1"))
    if value <= 0:
        raise pytest.UsageError("--scale must be positive")
    return float(value)


@pytest.fixture
def chaos_seconds(request: pytest.FixtureRequest, chaos_scale: float) -> float:
    """How long the soak's chaos lasts: ``--soak-minutes``, else 20 s x scale."""
    minutes = request.config.getoption("soak_minutes", default=None)
    if minutes is None and os.environ.get("CYCLONE_SOAK_MINUTES"):
        minutes = float(os.environ["CYCLONE_SOAK_MINUTES"])
    if minutes is None:
        return 20.0 * chaos_scale
    if minutes <= 0:
        raise pytest.UsageError("--soak-minutes must be positive")
    return 60.0 * float(minutes)


@pytest.fixture
def soak_report(request: pytest.FixtureRequest) -> Path | None:
    value = request.config.getoption("soak_report", default=None) or os.environ.get("CYCLONE_SOAK_REPORT")
    return Path(value) if value else None
