"""Release hygiene (issue 36): the license, the changelog, the package's metadata, and a wheel that builds
without a warning and carries what the package needs (the console's templates and static files)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest

from cyclone_py import __version__

ROOT = Path(__file__).resolve().parent.parent


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_the_license_is_apache_2_and_the_metadata_says_so() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n                           Version 2.0, January 2004")
    assert "END OF TERMS AND CONDITIONS" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert (project["license"], project["license-files"]) == ("Apache-2.0", ["LICENSE"])
    assert project["requires-python"] == ">=3.11"
    assert set(project["urls"]) >= {"Homepage", "Source", "Changelog"}
    assert not [c for c in project["classifiers"] if c.startswith("License ::")], "the SPDX expression says it"


def test_the_changelog_has_a_section_per_release_newest_first() -> None:
    """Every release from 0.1.0 (untagged) through the plan's tags to the package's own, each saying what
    changed, what the upgrade does and what an operator must do."""
    tags = re.findall(r"^@v(\d+\.\d+\.\d+)\b", (ROOT / "sqitch.plan").read_text(), re.M)
    releases = sorted({"0.1.0", *tags, __version__}, key=_version_key, reverse=True)
    text = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## (\d+\.\d+\.\d+)\b", text, re.M)
    assert headings == releases
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    for section in sections:
        version = section.split()[0]
        for part in ("**What changed", "**Upgrade.**", "**Operators.**"):
            assert part in section, f"{version}: no {part}"


@pytest.mark.slow
def test_the_wheel_builds_without_a_warning_and_carries_the_console(tmp_path: Path) -> None:
    """`python -m build` printed ten setuptools warnings about the folders of data files (issue 36). Built
    here from a copy of what the wheel is made of, without isolation (the test extra has the build
    system's setuptools), with byte-compiling allowed so that no warning is the environment's."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "sqitch.plan", "sqitch.conf"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "tests")
    for folder in ("cyclone_py", "sql", "router"):
        shutil.copytree(ROOT / folder, src / folder, symlinks=True, ignore=ignore)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    build = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                            str(tmp_path / "dist"), str(src)], capture_output=True, text=True, env=env, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    output = build.stdout + build.stderr
    assert not [line for line in output.splitlines() if re.search(r"warn", line, re.I)], output

    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = HeaderParser().parsestr(zf.read(f"cyclone_py-{__version__}.dist-info/METADATA").decode())
    console = {str(p.relative_to(ROOT)) for p in (ROOT / "cyclone_py" / "console").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert console <= names
    assert {n for n in console if "/templates/" in n} and {n for n in console if "/static/" in n}
    assert f"cyclone_py-{__version__}.dist-info/licenses/LICENSE" in names
    assert "cyclone_py/sqitch/sqitch.plan" in names and "cyclone_py/py.typed" in names
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["Requires-Python"] == ">=3.11"
    assert any(url.startswith("Changelog, ") for url in metadata.get_all("Project-URL", []))
    assert "Typing :: Typed" in metadata.get_all("Classifier", [])
