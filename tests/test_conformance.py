"""The conformance kit (SPEC 18, docs/conformance.md): ``cyclone conformance`` passes against the Python
worker and the TypeScript one (each scenario against a worker broken for it: test_conformance_broken.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cyclone_py.conformance import SCENARIOS, worker_url

ROOT = Path(__file__).resolve().parent.parent
CYCLONE = ROOT / ".venv" / "bin" / "cyclone"
TYPESCRIPT = ROOT / "clients" / "typescript" / "dist" / "conformance.js"
PYTHON_WORKER = [str(CYCLONE), "worker", "--app", "cyclone_py.conformance_app:app", "--concurrency", "2",
                 "--lease-ttl", "2", "--poll-interval", "0.2", "--shutdown-grace", "1"]

pytestmark = pytest.mark.slow


def kit(dsn: str, template: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CYCLONE), "--dsn", dsn, "conformance", "--template", template, *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def verdicts(out: str) -> dict[str, str]:
    return {line.split()[1]: line.split()[0] for line in out.splitlines() if line.startswith(("ok ", "FAIL "))}


def test_the_python_worker_passes_every_scenario(dsn: str, template_db: str) -> None:
    result = kit(dsn, template_db, "--", *PYTHON_WORKER)
    assert result.returncode == 0, result.stdout + result.stderr
    assert verdicts(result.stdout) == {s.name: "ok" for s in SCENARIOS}, result.stdout


def test_the_typescript_worker_passes_every_scenario(dsn: str, template_db: str) -> None:
    node = shutil.which("node")
    assert node is not None and TYPESCRIPT.is_file(), "make test builds clients/typescript first"
    result = kit(dsn, template_db, "--", node, str(TYPESCRIPT))
    assert result.returncode == 0, result.stdout + result.stderr
    assert verdicts(result.stdout) == {s.name: "ok" for s in SCENARIOS}, result.stdout


def test_the_kit_lists_its_scenarios_and_refuses_an_unknown_one(dsn: str) -> None:
    listed = subprocess.run([str(CYCLONE), "conformance", "--list"], capture_output=True, text=True, check=True)
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [s.name for s in SCENARIOS]
    bad = subprocess.run([str(CYCLONE), "--dsn", dsn, "conformance", "--only", "nope", "--", "true"],
                         capture_output=True, text=True)
    assert (bad.returncode, bad.stderr.strip()) == (1, "cyclone: no scenario nope (cyclone conformance --list)")
    none = subprocess.run([str(CYCLONE), "--dsn", dsn, "conformance"], capture_output=True, text=True)
    assert none.returncode == 1 and "give the worker's command after --" in none.stderr


def test_the_worker_gets_its_database_as_a_url() -> None:
    assert worker_url("host=/run/pg port=5432 user=ada dbname=kit") == "postgresql://ada@/kit?host=%2Frun%2Fpg&port=5432"
    assert worker_url("host=db.example port=6543 user=ada password=p@ss dbname=kit") == (
        "postgresql://ada:p%40ss@db.example:6543/kit")
