"""The chaos soak's knob: ``--scale`` (or ``CYCLONE_CHAOS_SCALE``).

Scale 1 (the default) is sized to finish inside ``make test`` in well under two
minutes; ``pytest tests/chaos --scale 10`` runs ten times the runs for ten
times as long. The option is registered here, so it is known when pytest is
pointed at tests/chaos; the environment variable works from anywhere.
"""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--scale", action="store", type=float, default=None, dest="chaos_scale",
        help="chaos soak size multiplier (default: CYCLONE_CHAOS_SCALE or 1)",
    )


@pytest.fixture
def chaos_scale(request: pytest.FixtureRequest) -> float:
    value = request.config.getoption("chaos_scale", default=None)
    if value is None:
        value = float(os.environ.get("CYCLONE_CHAOS_SCALE", "1"))
    if value <= 0:
        raise pytest.UsageError("--scale must be positive")
    return float(value)
