"""The README's "Use Cyclone in your own project", run as written.

Builds the wheel from a copy of the checkout, installs it into a fresh venv in
``tmp_path``, and runs the README's commands from a folder outside the
checkout against a fresh, empty database of the embedded cluster: deploy with
``cyclone migrate``, a worker for the README's ``myapp.py`` in the background,
``cyclone submit --wait`` until the run completed, ``pytest`` over the README's
test files (the installed plugin's ``cyclone_env``). Then ``migrate --verify``,
``--status`` and ``--revert --yes`` from the same folder.

What differs from the README, so that the test needs no network: the build
runs without isolation (``--no-isolation``: setuptools and wheel come from the
test extra), and the wheel is installed with ``--no-deps`` by the project
venv's pip into the new venv, whose dependencies (psycopg, click) come from
the project venv's site-packages through a ``.pth`` file (which adds the
folder, not the checkout: the editable install's hook there is not run).
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cyclone_py import db

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Use Cyclone in your own project"
COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", ".cyclone", "build", "dist", "*.egg-info", "__pycache__",
                                     ".pytest_cache", ".hypothesis", "results")

pytestmark = pytest.mark.install


def fenced(markdown: str, lang: str) -> list[str]:
    """The bodies of the ```lang blocks of ``markdown``."""
    return re.findall(rf"^```{lang}\n(.*?)^```", markdown, flags=re.S | re.M)


def readme_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start:end if end >= 0 else None]


def readme_commands() -> list[list[str]]:
    (block,) = fenced(readme_section(), "sh")
    return [words for line in block.splitlines() if (words := shlex.split(line, comments=True))]


def readme_app() -> str:
    """``myapp.py``: the README's first Python block (section "In Python")."""
    return fenced((ROOT / "README.md").read_text(), "python")[0]


@pytest.fixture
def fresh_db(embedded_db: db.EmbeddedCluster) -> Iterator[str]:
    """An empty database (no schema); named so that a killed session's copy is dropped later."""
    name = f"cyclone_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        yield embedded_db.create_database(name)
    finally:
        embedded_db.drop_database(name)


class Shell:
    """Runs the README's commands: ``cyclone`` of the new venv; ``python -m build``
    and ``pip`` of the project venv, offline (see the module docstring)."""

    def __init__(self, tmp: Path, dsn: str) -> None:
        self.src = tmp / "cyclone"  # "/path/to/cyclone"
        self.venv = tmp / "venv"
        self.work = tmp / "service"  # the working directory: outside the checkout
        self.dsn = dsn
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("PYTHONPATH", "CYCLONE_DSN", "DATABASE_URL", "CYCLONE_ROOT", "CYCLONE_HOME")}
        self.env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{self.env.get('PATH', '')}"
        self.worker: subprocess.Popen[str] | None = None
        self.worker_log = tmp / "worker.log"
        self.outputs: dict[str, subprocess.CompletedProcess[str]] = {}

    def run(self, words: list[str]) -> None:
        background = words[-1] == "&"
        words = [self.dsn if w == "$DSN" else w for w in (words[:-1] if background else words)]
        match words:
            case ["python", "-m", "build", *rest]:
                rest = [str(self.src) if w == "/path/to/cyclone" else w for w in rest]
                self.check([sys.executable, "-m", "build", "--no-isolation", *rest])
            case ["pip", "install", pattern]:
                (wheel,) = glob.glob(str(self.work / pattern))
                self.check([sys.executable, "-m", "pip", "--python", str(self.venv / "bin" / "python"),
                            "install", "--no-deps", "--no-index", "--quiet", wheel])
            case [assignment] if assignment.startswith("DSN="):
                pass  # your own database: here, a fresh one of the embedded cluster (see run())
            case ["pytest", *rest]:
                for body in fenced(readme_section(), "python"):  # "# conftest.py", "# test_greet.py"
                    name = body.splitlines()[0].removeprefix("# ").strip()
                    (self.work / name).write_text(body)
                self.outputs["pytest"] = self.check([str(self.venv / "bin" / "python"), "-m", "pytest", "-q",
                                                     "-p", "no:cacheprovider", *rest])
            case ["cyclone", "workflows"]:
                # The worker defines the app's workflows when it starts.
                self.until_ok(words, lambda out: "greet" in out)
            case ["cyclone", *_] if background:
                assert self.worker is None
                with open(self.worker_log, "w") as log:
                    self.worker = subprocess.Popen(self.cyclone(*words[1:]), cwd=self.work, env=self.env,
                                                   stdout=log, stderr=subprocess.STDOUT, text=True)
            case ["cyclone", command, *rest]:
                self.outputs[command] = self.check(self.cyclone(command, *rest))
            case _:
                raise AssertionError(f"the test does not know how to run {shlex.join(words)!r} from the README")

    def cyclone(self, *args: str) -> list[str]:
        return [str(self.venv / "bin" / "cyclone"), *args]

    def check(self, cmd: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(cmd, cwd=self.work, env=self.env, capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, f"{shlex.join(cmd)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}" + (
            f"\nworker log:\n{self.worker_log.read_text()}" if self.worker_log.exists() else "")
        return proc

    def until_ok(self, words: list[str], done: Callable[[str], bool], timeout: float = 30) -> None:
        cmd = self.cyclone(*words[1:])
        deadline = time.monotonic() + timeout
        while True:
            proc = self.check(cmd)
            if done(proc.stdout):
                return
            assert self.worker is None or self.worker.poll() is None, self.worker_log.read_text()
            assert time.monotonic() < deadline, f"{shlex.join(words)} never showed what the README says"
            time.sleep(0.2)

    def stop_worker(self) -> None:
        if self.worker is not None and self.worker.poll() is None:
            self.worker.send_signal(signal.SIGTERM)
            try:
                self.worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                self.worker.wait()


def test_the_readme_commands_run_from_a_wheel_installed_outside_the_checkout(tmp_path: Path, fresh_db: str) -> None:
    shell = Shell(tmp_path, fresh_db)
    shutil.copytree(ROOT, shell.src, symlinks=True, ignore=COPY_IGNORE)
    shell.work.mkdir()
    (shell.work / "myapp.py").write_text(readme_app())
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(shell.venv)], check=True)
    (site,) = (shell.venv / "lib").glob("python*/site-packages")
    (site / "project-venv-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    commands = readme_commands()
    assert commands[-2][:2] == ["cyclone", "submit"] and "--wait" in commands[-2]
    assert commands[-1][0] == "pytest"
    try:
        for words in commands:
            shell.run(words)
        check_the_installed_package(shell)
        submitted = shell.outputs["submit"]
        assert "completed" in submitted.stdout + submitted.stderr, submitted
        assert "1 passed" in shell.outputs["pytest"].stdout, shell.outputs["pytest"].stdout

        # The other ways in to the packaged sqitch project, from the same folder.
        assert "Verify successful" in shell.check(shell.cyclone("migrate", "--verify", "--dsn", fresh_db)).stdout
        assert "Nothing to deploy" in shell.check(shell.cyclone("migrate", "--status", "--dsn", fresh_db)).stdout
    finally:
        shell.stop_worker()
    shell.check(shell.cyclone("migrate", "--revert", "--yes", "--dsn", fresh_db))
    status = subprocess.run(shell.cyclone("migrate", "--status", "--dsn", fresh_db), cwd=shell.work, env=shell.env,
                            capture_output=True, text=True)
    assert status.returncode == 1 and "nothing is deployed" in status.stderr


def check_the_installed_package(shell: Shell) -> None:
    """The venv imports the wheel (not the checkout), which carries the sqitch project
    (plan, conf, deploy, revert and verify scripts, the same bytes as the checkout's;
    no pgTAP tests) and deploys from it."""
    script = "import cyclone_py, cyclone_py.db as d; print(cyclone_py.__file__); print(d.sqitch_project())"
    probe = shell.check([str(shell.venv / "bin" / "python"), "-c", script])
    module, project = (Path(line) for line in probe.stdout.split())
    assert module.is_relative_to(shell.venv) and project.is_relative_to(shell.venv), probe.stdout
    assert project == module.parent / "sqitch"

    (wheel,) = (shell.work / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        carried = {name.removeprefix("cyclone_py/sqitch/") for name in zf.namelist()
                   if name.startswith("cyclone_py/sqitch/")}
    expected = {"sqitch.plan", "sqitch.conf"} | {
        str(p.relative_to(ROOT)) for d in ("deploy", "revert", "verify") for p in (ROOT / "sql" / d).glob("*.sql")}
    assert carried == expected
    assert all((project / name).read_bytes() == (ROOT / name).read_bytes() for name in expected)
    # And the router's project (cyclone shards init), from router/.
    router = Path(shell.check([str(shell.venv / "bin" / "python"), "-c",
                               "import cyclone_py.db as d; print(d.router_project())"]).stdout.strip())
    assert router == module.parent / "router_sqitch"
    with zipfile.ZipFile(wheel) as zf:
        carried = {name.removeprefix("cyclone_py/router_sqitch/") for name in zf.namelist()
                   if name.startswith("cyclone_py/router_sqitch/")}
    source = ROOT / "router"
    expected = {"sqitch.plan", "sqitch.conf"} | {
        str(p.relative_to(source)) for d in ("deploy", "revert", "verify") for p in (source / "sql" / d).glob("*.sql")}
    assert carried == expected
    assert all((router / name).read_bytes() == (source / name).read_bytes() for name in expected)
    # The web console's templates and static files ride in the wheel too (cyclone ui).
    with zipfile.ZipFile(wheel) as zf:
        console = {name for name in zf.namelist() if name.startswith("cyclone_py/console/")}
    files = {str(p.relative_to(ROOT)) for p in (ROOT / "cyclone_py" / "console").rglob("*")
             if p.is_file() and "__pycache__" not in p.parts}
    assert console == files
    assert list((shell.work / "dist").glob("*.tar.gz")), "python -m build makes an sdist, and the wheel from it"
