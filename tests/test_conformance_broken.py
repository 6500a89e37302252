"""The conformance kit (SPEC 18, docs/conformance.md): each scenario fails against a worker broken for it
(tests/apps/broken_worker.py), so that no scenario passes whatever the worker does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_conformance import kit, verdicts

from cyclone_py.conformance import SCENARIOS

BROKEN = Path(__file__).resolve().parent / "apps" / "broken_worker.py"

pytestmark = pytest.mark.slow

# Each scenario, and the defect that must fail it.
BROKEN_FOR = {
    "registry": "no_registry",
    "results": "no_deps",
    "retries": "no_backoff",
    "permanent": "no_permanent",
    "heartbeats": "no_heartbeat",
    "timeout": "no_timeout",
    "signal": "no_deps",
    "cancel": "ignores_cancel",
    "deadline": "no_tick",
    "sigkill": "no_tick",
    "sigstop": "dies_on_refusal",
    "sigterm": "no_release",
    "map": "no_item",
    "snooze": "no_snooze",
}


def test_every_scenario_has_a_broken_worker() -> None:
    assert sorted(BROKEN_FOR) == sorted(s.name for s in SCENARIOS)


@pytest.mark.parametrize("scenario", sorted(BROKEN_FOR))
def test_a_worker_broken_for_a_scenario_fails_it(dsn: str, template_db: str, scenario: str) -> None:
    result = kit(dsn, template_db, "--only", scenario, "--", sys.executable, str(BROKEN), BROKEN_FOR[scenario])
    assert result.returncode == 1, result.stdout + result.stderr
    assert verdicts(result.stdout) == {scenario: "FAIL"}, result.stdout
    assert "1 scenario(s) failed" in result.stderr
